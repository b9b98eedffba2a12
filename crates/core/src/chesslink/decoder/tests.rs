use shakmaty::Board;

use super::super::tests::every_reply;
use super::super::*;
use super::*;

/// Every reply kind, encoded one after the other, with the frames' byte ranges.
fn stream() -> (Vec<u8>, Vec<Reply>, Vec<std::ops::Range<usize>>) {
    let replies = every_reply();
    let mut bytes = Vec::new();
    let mut ranges = Vec::new();
    for reply in &replies {
        let start = bytes.len();
        bytes.extend(reply.encode(ParityBy::Host));
        ranges.push(start..bytes.len());
    }
    (bytes, replies, ranges)
}

fn balanced(stats: &DecoderStats, pending: usize) {
    assert_eq!(
        stats.bytes_in,
        stats.message_bytes + stats.skipped_bytes + pending as u64,
        "{stats:?}"
    );
}

#[test]
fn a_chunk_split_at_every_byte_decodes_the_same() {
    let (bytes, replies, _) = stream();
    for cut in 0..=bytes.len() {
        let mut decoder = Decoder::new();
        let mut got: Vec<Reply> = decoder.feed(&bytes[..cut]).collect();
        got.extend(decoder.feed(&bytes[cut..]));
        assert_eq!(got, replies, "cut at {cut}");
        assert_eq!(decoder.stats().dropped_frames, 0);
        balanced(&decoder.stats(), decoder.pending_len());
    }
    // And one byte at a time.
    let mut decoder = Decoder::new();
    let got: Vec<Reply> = bytes
        .iter()
        .flat_map(|b| decoder.feed(std::slice::from_ref(b)).collect::<Vec<_>>())
        .collect();
    assert_eq!(got, replies);
}

#[test]
fn a_wrong_parity_bit_anywhere_costs_exactly_its_frame() {
    let (bytes, replies, ranges) = stream();
    for (victim, range) in ranges.iter().enumerate() {
        for at in range.clone() {
            let mut bad = bytes.clone();
            bad[at] ^= 0x80;
            let (got, stats) = Decoder::decode_all(&bad, ParityCheck::Verify);
            let mut want = replies.clone();
            want.remove(victim);
            assert_eq!(got, want, "byte {at}");
            assert_eq!(stats.parity_errors, 1);
            if at == range.start {
                // The letter itself: the rest reads as garbage (a status's rooks are tried as
                // letters and fail at once).
                assert_eq!(stats.dropped_frames, stats.broken_frames);
                assert!(stats.dropped_frames <= 2, "byte {at}: {stats:?}");
            } else {
                assert_eq!(
                    (stats.dropped_frames, stats.broken_frames),
                    (1, 1),
                    "byte {at}"
                );
            }
            balanced(&stats, 0);
            // Ignoring parity, the frame is intact.
            let (got, _) = Decoder::decode_all(&bad, ParityCheck::Ignore);
            assert_eq!(got, replies);
        }
    }
}

#[test]
fn a_wrong_check_character_drops_the_frame() {
    let (bytes, replies, ranges) = stream();
    for (victim, range) in ranges.iter().enumerate() {
        for at in [range.end - 2, range.end - 1] {
            let mut bad = bytes.clone();
            // Another hex digit, with its parity: only the check is wrong.
            let digit = bad[at] & 0x7F;
            let other = if digit == b'0' { b'1' } else { b'0' };
            bad[at] = line::with_odd_parity(other);
            let (got, stats) = Decoder::decode_all(&bad, ParityCheck::Verify);
            let mut want = replies.clone();
            want.remove(victim);
            assert_eq!(got, want);
            assert_eq!((stats.dropped_frames, stats.bad_checks), (1, 1));
            balanced(&stats, 0);
        }
    }
}

#[test]
fn a_changed_square_with_good_parity_fails_the_check() {
    let scan = Scan::from_board(&Board::default(), WireOrder::H1First);
    let mut bytes = Reply::Status(scan).encode(ParityBy::Host);
    // A white pawn read as a black one: a valid piece character, a wrong check.
    bytes[9] = line::with_odd_parity(b'p');
    let (got, stats) = Decoder::decode_all(&bytes, ParityCheck::Verify);
    assert!(got.is_empty());
    assert_eq!(stats.bad_checks, 1);
    // A character that is no piece breaks the frame before its check.
    bytes[9] = line::with_odd_parity(b'O');
    let (got, stats) = Decoder::decode_all(&bytes, ParityCheck::Verify);
    assert!(got.is_empty());
    assert_eq!((stats.broken_frames, stats.bad_checks), (1, 0));
}

#[test]
fn a_truncated_frame_costs_only_itself() {
    let (bytes, replies, ranges) = stream();
    for (victim, range) in ranges.iter().enumerate() {
        // Cut the frame after each of its characters but the last.
        for keep in 1..range.len() {
            let mut cut = bytes[..range.start + keep].to_vec();
            cut.extend_from_slice(&bytes[range.end..]);
            let (got, stats) = Decoder::decode_all(&cut, ParityCheck::Verify);
            let mut want = replies.clone();
            want.remove(victim);
            let before = &got[..victim.min(got.len())];
            assert_eq!(before, &want[..victim], "reply {victim} cut to {keep}");
            if victim + 1 < replies.len() {
                assert_eq!(got, want, "reply {victim} cut to {keep}");
                assert_eq!(stats.dropped_frames, 1, "reply {victim} cut to {keep}");
            }
        }
    }
}

#[test]
fn garbage_between_messages_is_skipped() {
    let (bytes, replies, ranges) = stream();
    let junk: &[&[u8]] = &[
        b"\x00\xff\x13",
        // Letters with good parity followed by nonsense: false starts.
        &[line::with_odd_parity(b's'), line::with_odd_parity(b'K')],
        &[line::with_odd_parity(b'r'), line::with_odd_parity(b'0')],
        &[line::with_odd_parity(b'v')],
        b"hello, board",
    ];
    let mut noisy = Vec::new();
    for (i, range) in ranges.iter().enumerate() {
        noisy.extend_from_slice(junk[i % junk.len()]);
        noisy.extend_from_slice(&bytes[range.clone()]);
    }
    noisy.extend_from_slice(junk[0]);
    let (got, stats) = Decoder::decode_all(&noisy, ParityCheck::Verify);
    assert_eq!(got, replies);
    assert!(stats.dropped_frames > 0);
    assert_eq!(stats.skipped_bytes, (noisy.len() - bytes.len()) as u64);
    balanced(&stats, 0);
}

#[test]
fn a_status_that_lost_its_letter_yields_nothing_and_the_next_frame_is_found() {
    let scan = Scan::from_board(&Board::default(), WireOrder::H1First);
    let status = Reply::Status(scan).encode(ParityBy::Host);
    let read = Reply::Read {
        address: 1,
        value: 20,
    };
    let mut bytes = status[1..].to_vec();
    bytes.extend(read.encode(ParityBy::Host));
    let (got, stats) = Decoder::decode_all(&bytes, ParityCheck::Verify);
    assert_eq!(got, vec![read]);
    // The rooks' `r` are tried as letters and fail at once.
    assert_eq!(stats.broken_frames, 2);
    balanced(&stats, 0);
}

#[test]
fn a_partial_frame_waits_and_reset_drops_it() {
    let bytes = Reply::Version(Version { high: 2, low: 0 }).encode(ParityBy::Host);
    let mut decoder = Decoder::new();
    decoder.push(&bytes[..5]);
    assert_eq!(decoder.pending_len(), 5);
    balanced(&decoder.stats(), decoder.pending_len());
    decoder.reset();
    assert_eq!(decoder.pending_len(), 0);
    assert_eq!(decoder.stats().broken_frames, 1);
    balanced(&decoder.stats(), 0);
    decoder.push(&bytes);
    assert_eq!(
        decoder.next_message(),
        Some(Reply::Version(Version { high: 2, low: 0 }))
    );
}

#[test]
fn the_board_side_drops_bad_commands() {
    let good = Command::Write {
        address: 2,
        value: 3,
    };
    let mut bytes = good.encode(ParityBy::Host);
    let mut bad = bytes.clone();
    bad[3] ^= 0x80;
    bytes.extend(bad);
    bytes.extend(Command::Version.encode(ParityBy::Host));
    let (got, stats) = CommandDecoder::decode_all(&bytes, ParityCheck::Verify);
    assert_eq!(got, vec![good, Command::Version]);
    assert_eq!((stats.parity_errors, stats.dropped_frames), (1, 1));
    // Replies are no commands and commands no replies.
    let (none, _) = Decoder::decode_all(
        &Command::Version.encode(ParityBy::Host),
        ParityCheck::Verify,
    );
    assert!(none.is_empty());
}
