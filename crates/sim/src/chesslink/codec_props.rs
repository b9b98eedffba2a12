//! Properties of the core's ChessLink decoder under random chunking, random noise between
//! frames and a damaged byte inside frames: nothing it yields is a board that was not sent.
//! (The property test lives here because the simulator crate has the property-test crate.)

use eboard_core::chesslink::{Decoder, ParityBy, ParityCheck, Reply, Scan, Version, WireOrder};
use proptest::prelude::*;
use shakmaty::{Board, Color, Role, Square};

/// A square's content from 0–12 (12 = empty).
fn content(code: u8) -> Option<shakmaty::Piece> {
    let code = code % 13;
    (code < 12).then(|| {
        let color = if code < 6 { Color::White } else { Color::Black };
        let role = Role::ALL[usize::from(code % 6)];
        shakmaty::Piece { color, role }
    })
}

fn reply_strategy() -> impl Strategy<Value = Reply> {
    prop_oneof![
        (any::<u8>(), any::<u8>()).prop_map(|(high, low)| Reply::Version(Version { high, low })),
        proptest::collection::vec(0u8..13, 64).prop_map(|codes| {
            let mut board = Board::empty();
            for (sq, &code) in Square::ALL.iter().zip(&codes) {
                if let Some(piece) = content(code) {
                    board.set_piece_at(*sq, piece);
                }
            }
            Reply::Status(Scan::from_board(&board, WireOrder::H1First))
        }),
        Just(Reply::LedsSet),
        Just(Reply::LedsOff),
        (any::<u8>(), any::<u8>()).prop_map(|(address, value)| Reply::Written { address, value }),
        (any::<u8>(), any::<u8>()).prop_map(|(address, value)| Reply::Read { address, value }),
    ]
}

/// Feed `bytes` in chunks of the given sizes (cycled), collecting every reply.
fn decode_chunked(
    bytes: &[u8],
    sizes: &[usize],
) -> (Vec<Reply>, eboard_core::chesslink::DecoderStats) {
    let mut decoder = Decoder::with_parity(ParityCheck::Verify);
    let mut got = Vec::new();
    let mut rest = bytes;
    let mut i = 0;
    while !rest.is_empty() {
        let n = sizes[i % sizes.len()].clamp(1, rest.len());
        got.extend(decoder.feed(&rest[..n]));
        rest = &rest[n..];
        i += 1;
    }
    let stats = decoder.stats();
    assert_eq!(
        stats.bytes_in,
        stats.message_bytes + stats.skipped_bytes + decoder.pending_len() as u64
    );
    (got, stats)
}

fn statuses(replies: &[Reply]) -> Vec<Scan> {
    replies
        .iter()
        .filter_map(|r| match r {
            Reply::Status(scan) => Some(*scan),
            _ => None,
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn any_chunking_yields_exactly_what_was_sent(
        replies in proptest::collection::vec(reply_strategy(), 1..12),
        sizes in proptest::collection::vec(1usize..80, 1..8),
    ) {
        let bytes: Vec<u8> = replies.iter().flat_map(|r| r.encode(ParityBy::Host)).collect();
        let (got, stats) = decode_chunked(&bytes, &sizes);
        prop_assert_eq!(got, replies);
        prop_assert_eq!(stats.dropped_frames, 0);
    }

    #[test]
    fn noise_between_frames_loses_no_frame_and_forges_no_board(
        frames in proptest::collection::vec(
            (reply_strategy(), proptest::collection::vec(any::<u8>(), 0..40)),
            1..10,
        ),
        sizes in proptest::collection::vec(1usize..80, 1..8),
    ) {
        let mut bytes = Vec::new();
        for (reply, noise) in &frames {
            bytes.extend_from_slice(noise);
            bytes.extend(reply.encode(ParityBy::Host));
        }
        let (got, _) = decode_chunked(&bytes, &sizes);
        let sent: Vec<Reply> = frames.iter().map(|(r, _)| *r).collect();
        // Every board yielded was sent.
        let sent_boards = statuses(&sent);
        for scan in statuses(&got) {
            prop_assert!(sent_boards.contains(&scan), "forged {scan:?}");
        }
        // Every frame sent is found, in order, among what was yielded.
        let mut it = got.iter();
        for reply in &sent {
            prop_assert!(it.any(|g| g == reply), "lost {reply:?}");
        }
    }

    #[test]
    fn a_damaged_byte_in_a_frame_costs_that_frame_and_never_makes_another_board(
        frames in proptest::collection::vec(
            (reply_strategy(), any::<Option<(prop::sample::Index, u8)>>()),
            1..10,
        ),
        sizes in proptest::collection::vec(1usize..80, 1..8),
    ) {
        let mut bytes = Vec::new();
        let mut intact = Vec::new();
        for (reply, damage) in &frames {
            let mut frame = reply.encode(ParityBy::Host);
            match damage {
                Some((at, byte)) if frame[at.index(frame.len())] != *byte => {
                    let i = at.index(frame.len());
                    frame[i] = *byte;
                }
                _ => intact.push(*reply),
            }
            bytes.extend(frame);
        }
        let (got, _) = decode_chunked(&bytes, &sizes);
        let sent_boards: Vec<Scan> = statuses(&frames.iter().map(|(r, _)| *r).collect::<Vec<_>>());
        for scan in statuses(&got) {
            prop_assert!(sent_boards.contains(&scan), "forged {scan:?}");
        }
        let mut it = got.iter();
        for reply in &intact {
            prop_assert!(it.any(|g| g == reply), "lost intact {reply:?}");
        }
    }
}
