//! The real board + DGT 3000 captures decode completely, whatever the read sizes, and agree
//! with the figures in the captures' README.

#[path = "../../../tests/captures/mod.rs"]
mod captures;

use eboard_core::dgt::{ClockReading, Decoder, DecoderStats, DisplayTime, Message};

fn decode_in_chunks(bytes: &[u8], size: usize) -> (Vec<Message>, DecoderStats, usize) {
    let mut decoder = Decoder::new();
    let mut messages = Vec::new();
    for chunk in bytes.chunks(size) {
        messages.extend(decoder.feed(chunk));
    }
    (messages, decoder.stats(), decoder.pending_len())
}

fn t(hours: u8, minutes: u8, seconds: u8) -> DisplayTime {
    DisplayTime {
        hours,
        minutes,
        seconds,
    }
}

struct Expected {
    bytes: usize,
    dumps: usize,
    clocks: usize,
    fields: usize,
    first: (DisplayTime, DisplayTime, u8),
    last: (DisplayTime, DisplayTime, u8),
    /// Clock-message pairs in which exactly one display counted down.
    one_side_running_pairs: usize,
}

fn clock_times(messages: &[Message]) -> Vec<ClockReading> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::ClockTimes(c) => Some(*c),
            _ => None,
        })
        .collect()
}

fn check_capture(name: u32, want: Expected) {
    let bytes = captures::bytes(name);
    assert_eq!(bytes.len(), want.bytes, "capture {name} size");

    let (reference, _, _) = decode_in_chunks(&bytes, bytes.len());
    for size in 1..=64 {
        let (messages, stats, pending) = decode_in_chunks(&bytes, size);
        assert_eq!(stats.skipped_bytes, 0, "capture {name}, chunks of {size}");
        assert_eq!(stats.dropped_frames, 0, "capture {name}, chunks of {size}");
        assert_eq!(stats.unknown_ids, 0);
        assert_eq!(stats.unknown_piece_codes, 0);
        assert_eq!(pending, 0, "capture {name} ends on a frame boundary");
        assert_eq!(stats.message_bytes, bytes.len() as u64);
        assert_eq!(stats.messages, messages.len() as u64);
        assert_eq!(messages, reference, "capture {name}, chunks of {size}");
    }

    let count = |pred: fn(&Message) -> bool| reference.iter().filter(|m| pred(m)).count();
    assert_eq!(count(|m| matches!(m, Message::BoardDump(_))), want.dumps);
    assert_eq!(count(|m| matches!(m, Message::ClockTimes(_))), want.clocks);
    assert_eq!(
        count(|m| matches!(m, Message::FieldUpdate { .. })),
        want.fields
    );
    assert_eq!(
        reference.len(),
        want.dumps + want.clocks + want.fields,
        "nothing else in capture {name}"
    );

    let clocks = clock_times(&reference);
    let reading = |c: &ClockReading| (c.right, c.left, c.status.to_byte());
    assert_eq!(reading(&clocks[0]), want.first, "first clock of {name}");
    assert_eq!(
        reading(clocks.last().expect("clock messages")),
        want.last,
        "last clock of {name}"
    );

    // Which display really ran: the one whose time went down while the other stood still.
    // The decoded status must say the same, and the lever must lean the matching way.
    let mut pairs = 0;
    for pair in clocks.windows(2) {
        let (before, after) = (pair[0], pair[1]);
        let left_down = after.left.as_millis() < before.left.as_millis();
        let right_down = after.right.as_millis() < before.right.as_millis();
        let left_same = after.left == before.left;
        let right_same = after.right == before.right;
        if left_down && right_same {
            assert!(
                after.status.running && after.status.left_running,
                "{after:?}"
            );
            assert!(!after.status.right_running, "{after:?}");
            assert!(!after.status.lever_left_down, "{after:?}");
            pairs += 1;
        } else if right_down && left_same {
            assert!(
                after.status.running && after.status.right_running,
                "{after:?}"
            );
            assert!(!after.status.left_running, "{after:?}");
            assert!(after.status.lever_left_down, "{after:?}");
            pairs += 1;
        }
        assert!(after.status.connected);
        // 3+2 blitz: the Fischer indicator is on for both sides throughout.
        assert!(after.left_flags.time_per_move && after.right_flags.time_per_move);
    }
    assert_eq!(pairs, want.one_side_running_pairs, "capture {name}");

    // Encoding what was decoded gives back the board's bytes exactly.
    let mut again = Vec::with_capacity(bytes.len());
    for message in &reference {
        message.encode(&mut again);
    }
    assert_eq!(again, bytes, "re-encoded capture {name}");
}

/// What each shared capture decodes to, counted once by hand.
fn expected_captures() -> [(u32, Expected); 2] {
    [
        (
            1,
            Expected {
                bytes: 3952,
                dumps: 1,
                clocks: 323,
                fields: 131,
                first: (t(0, 3, 2), t(0, 3, 2), 0x08),
                last: (t(0, 1, 46), t(0, 1, 49), 0x12),
                one_side_running_pairs: 263,
            },
        ),
        (
            2,
            Expected {
                bytes: 6977,
                dumps: 1,
                clocks: 578,
                fields: 226,
                first: (t(0, 3, 2), t(0, 3, 2), 0x12),
                last: (t(0, 0, 35), t(0, 0, 46), 0x13),
                one_side_running_pairs: 478,
            },
        ),
    ]
}

#[test]
fn each_capture_decodes_to_its_counted_messages() {
    for (name, expected) in expected_captures() {
        check_capture(name, expected);
    }
}

#[test]
fn capture_1_starts_with_the_start_position_and_white_on_the_left() {
    let bytes = captures::bytes(1);
    let (messages, _) = Decoder::decode_all(&bytes);
    let Some(Message::BoardDump(fields)) = messages.first() else {
        panic!("capture 1 starts with a board dump");
    };
    let start = shakmaty::Board::default();
    for (index, content) in fields.iter().enumerate() {
        let rank = 7 - index / 8;
        let file = index % 8;
        let square = shakmaty::Square::from_coords(
            shakmaty::File::new(file as u32),
            shakmaty::Rank::new(rank as u32),
        );
        assert_eq!(*content, start.piece_at(square), "field {index}");
    }
    // White's clock runs on the left display at first: status 0x09 = running + bit 3.
    let clocks = clock_times(&messages);
    let first_running = clocks
        .iter()
        .find(|c| c.status.running)
        .expect("the clock starts");
    assert!(first_running.status.left_running);
}
