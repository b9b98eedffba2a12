//! Each board → host message against bytes written out by hand from the protocol fact sheet,
//! and the decoder's resynchronisation over each kind of damage.

#[allow(dead_code)] // only the decoder's accounting
#[path = "../fuzz/properties.rs"]
mod properties;

use eboard_core::dgt::*;
use shakmaty::{Color, Piece, Role};

fn decode(bytes: &[u8]) -> (Vec<Message>, DecoderStats) {
    Decoder::decode_all(bytes)
}

/// Decodes to exactly one message, and encoding that message gives back the same bytes.
fn one(bytes: &[u8]) -> Message {
    let (messages, stats) = decode(bytes);
    assert_eq!(messages.len(), 1, "{bytes:02x?} -> {messages:?} {stats:?}");
    assert_eq!(stats.skipped_bytes, 0);
    assert_eq!(
        messages[0].to_bytes(),
        bytes,
        "re-encoding {:?}",
        messages[0]
    );
    messages.into_iter().next().unwrap()
}

fn piece(color: Color, role: Role) -> FieldContent {
    Some(Piece { color, role })
}

fn t(hours: u8, minutes: u8, seconds: u8) -> DisplayTime {
    DisplayTime {
        hours,
        minutes,
        seconds,
    }
}

#[test]
fn board_dump() {
    // Start position, normal orientation: black rooks at 0 and 7, white king at 60.
    let mut bytes = vec![0x86, 0x00, 0x43];
    bytes.extend_from_slice(&[0x08, 0x09, 0x0A, 0x0C, 0x0B, 0x0A, 0x09, 0x08]);
    bytes.extend_from_slice(&[0x07; 8]);
    bytes.extend_from_slice(&[0x00; 32]);
    bytes.extend_from_slice(&[0x01; 8]);
    bytes.extend_from_slice(&[0x02, 0x03, 0x04, 0x06, 0x05, 0x04, 0x03, 0x02]);
    let Message::BoardDump(fields) = one(&bytes) else {
        panic!("not a dump")
    };
    assert_eq!(fields[0], piece(Color::Black, Role::Rook));
    assert_eq!(fields[3], piece(Color::Black, Role::Queen));
    assert_eq!(fields[4], piece(Color::Black, Role::King));
    assert_eq!(fields[8], piece(Color::Black, Role::Pawn));
    assert_eq!(fields[35], None);
    assert_eq!(fields[48], piece(Color::White, Role::Pawn));
    assert_eq!(fields[57], piece(Color::White, Role::Knight));
    assert_eq!(fields[58], piece(Color::White, Role::Bishop));
    assert_eq!(fields[59], piece(Color::White, Role::Queen));
    assert_eq!(fields[60], piece(Color::White, Role::King));
}

#[test]
fn board_dump_with_magic_and_unknown_codes() {
    let mut bytes = vec![0x86, 0x00, 0x43];
    bytes.extend_from_slice(&[0x0D, 0x0E, 0x0F, 0x10, 0x7F]);
    bytes.extend_from_slice(&[0x00; 59]);
    let (messages, stats) = decode(&bytes);
    assert_eq!(messages, vec![Message::BoardDump(Box::new([None; 64]))]);
    assert_eq!(stats.unknown_piece_codes, 5);
    assert_eq!(stats.skipped_bytes, 0);
}

#[test]
fn field_update() {
    assert_eq!(
        one(&[0x8E, 0x00, 0x05, 0x24, 0x01]),
        Message::FieldUpdate {
            field: 36,
            content: piece(Color::White, Role::Pawn)
        }
    );
    assert_eq!(
        one(&[0x8E, 0x00, 0x05, 0x3F, 0x00]),
        Message::FieldUpdate {
            field: 63,
            content: None
        }
    );
    // A magic piece is an empty field, counted.
    let (messages, stats) = decode(&[0x8E, 0x00, 0x05, 0x10, 0x0E]);
    assert_eq!(
        messages,
        vec![Message::FieldUpdate {
            field: 16,
            content: None
        }]
    );
    assert_eq!(stats.unknown_piece_codes, 1);
}

#[test]
fn field_update_with_impossible_field_is_dropped() {
    let (messages, stats) = decode(&[0x8E, 0x00, 0x05, 0x40, 0x01]);
    assert!(messages.is_empty());
    assert_eq!(stats.bad_payloads, 1);
    assert_eq!(stats.dropped_frames, 1);
    assert_eq!(stats.skipped_bytes, 5);
}

#[test]
fn clock_times() {
    // Right 1:02:03 with flag fallen, left 0:59:30 with time-per-move and flag shown;
    // running, left side pressed down, battery low, right display running.
    let message = one(&[0x8D, 0x00, 0x0A, 0x11, 0x02, 0x03, 0x60, 0x59, 0x30, 0x17]);
    assert_eq!(
        message,
        Message::ClockTimes(ClockReading {
            right: t(1, 2, 3),
            right_flags: DisplayFlags {
                flag_fallen: true,
                time_per_move: false,
                flag_shown: false
            },
            left: t(0, 59, 30),
            left_flags: DisplayFlags {
                flag_fallen: false,
                time_per_move: true,
                flag_shown: true
            },
            status: ClockStatus {
                running: true,
                lever_left_down: true,
                battery_low: true,
                left_running: false,
                right_running: true,
                connected: true,
            },
        })
    );
}

#[test]
fn clock_status_bits() {
    let status = |byte: u8| {
        let Message::ClockTimes(c) = one(&[0x8D, 0x00, 0x0A, 0x00, 0x01, 0x00, 0, 0, 0, byte])
        else {
            panic!("not times")
        };
        c.status
    };
    // Bit 3 = LEFT display running, bit 4 = RIGHT display running (the real DGT 3000).
    assert!(status(0x09).left_running && !status(0x09).right_running);
    assert!(status(0x13).right_running && !status(0x13).left_running);
    assert!(status(0x13).lever_left_down);
    assert!(!status(0x01).battery_low && status(0x04).battery_low);
    assert!(status(0x00).connected && !status(0x20).connected);
    assert!(!status(0x00).running);
}

#[test]
fn clock_times_with_impossible_bcd_are_dropped() {
    for payload in [
        [0x00, 0x60, 0x00, 0x00, 0x00, 0x00, 0x01], // 60 minutes
        [0x00, 0x00, 0x5A, 0x00, 0x00, 0x00, 0x01], // seconds digit A
        [0x0B, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01], // 11 hours
        [0x00, 0x00, 0x00, 0x00, 0x00, 0x7F, 0x01],
    ] {
        let mut bytes = vec![0x8D, 0x00, 0x0A];
        bytes.extend_from_slice(&payload);
        // A good field update behind it survives.
        bytes.extend_from_slice(&[0x8E, 0x00, 0x05, 0x01, 0x02]);
        let (messages, stats) = decode(&bytes);
        assert_eq!(
            messages,
            vec![Message::FieldUpdate {
                field: 1,
                content: piece(Color::White, Role::Rook)
            }],
            "{payload:02x?}"
        );
        assert_eq!(stats.bad_payloads, 1);
        assert_eq!(stats.skipped_bytes, 10);
    }
}

#[test]
fn disconnected_clock_keeps_the_news_and_zeroes_invalid_times() {
    let (messages, stats) = decode(&[0x8D, 0x00, 0x0A, 0x0F, 0x7F, 0x7F, 0x0F, 0x7F, 0x7F, 0x20]);
    assert_eq!(
        messages,
        vec![Message::ClockTimes(ClockReading {
            status: ClockStatus {
                connected: false,
                ..ClockStatus::default()
            },
            ..ClockReading::default()
        })]
    );
    assert_eq!(stats.zeroed_clock_times, 1);
}

#[test]
fn clock_empty() {
    assert_eq!(
        one(&[0x8D, 0x00, 0x0A, 0, 0, 0, 0, 0, 0, 0]),
        Message::ClockEmpty
    );
}

#[test]
fn clock_acks() {
    // Version ack of a DGT 3000: (0x10, 0x09, 0x20, 0x00) = version 2.0.
    assert_eq!(
        one(&[0x8D, 0x00, 0x0A, 0x0A, 0x10, 0x09, 0x0A, 0x20, 0x00, 0x00]),
        Message::ClockAck(ClockAck {
            bytes: [0x10, 0x09, 0x20, 0x00]
        })
    );
    // Unsolicited button press: ack1 = 0x88 (bit 7 from P3 bit 5), ack3 = 0x35 (OK).
    assert_eq!(
        one(&[0x8D, 0x00, 0x0A, 0x0A, 0x10, 0x08, 0x2A, 0x05, 0x35, 0x00]),
        Message::ClockAck(ClockAck {
            bytes: [0x10, 0x88, 0x05, 0x35]
        })
    );
    // Every high bit: ack0 from P3 bit 4, ack2 from P0 bit 4, ack3 from P0 bit 5.
    assert_eq!(
        one(&[0x8D, 0x00, 0x0A, 0x3A, 0x7F, 0x7F, 0x3A, 0x7F, 0x7F, 0x00]),
        Message::ClockAck(ClockAck { bytes: [0xFF; 4] })
    );
    // Only one hours nibble marks the ack; the other bytes carry nothing and are not kept.
    let (messages, _) = decode(&[0x8D, 0x00, 0x0A, 0x00, 0x40, 0x00, 0x0A, 0x00, 0x00, 0x05]);
    assert_eq!(
        messages,
        vec![Message::ClockAck(ClockAck {
            bytes: [0x40, 0x00, 0x00, 0x00]
        })]
    );
}

#[test]
fn version_serials_address_trademark() {
    assert_eq!(
        one(&[0x93, 0x00, 0x05, 0x01, 0x02]),
        Message::Version { major: 1, minor: 2 }
    );
    assert_eq!(
        one(&[0x91, 0x00, 0x08, b'1', b'3', b'1', b'1', b'6']),
        Message::SerialNumber("13116".into())
    );
    // The 1998 form: 5 digits, a space, the storage version.
    assert_eq!(
        one(b"\x91\x00\x0c01025 1.0"),
        Message::SerialNumber("01025 1.0".into())
    );
    assert_eq!(
        one(b"\xa2\x00\x0d3000147740"),
        Message::LongSerialNumber("3000147740".into())
    );
    // Serial "01025" read as binary: 8 * 128 + 1.
    assert_eq!(
        one(&[0x90, 0x00, 0x05, 0x08, 0x01]),
        Message::BusAddress(1025)
    );
    let mut trademark = vec![0x92, 0x00, 3 + 16];
    trademark.extend_from_slice(b"Digital Game Tec");
    assert_eq!(
        one(&trademark),
        Message::Trademark("Digital Game Tec".into())
    );
    assert_eq!(one(&[0x92, 0x00, 0x03]), Message::Trademark(String::new()));
    // 256 characters of trademark is the most there is: length 259 = 0x02 0x03.
    let mut long = vec![0x92, 0x02, 0x03];
    long.extend(std::iter::repeat_n(b'x', 256));
    assert_eq!(one(&long), Message::Trademark("x".repeat(256)));
}

/// A board's text becomes printable ASCII before it goes anywhere: a NUL (which D-Bus
/// strings cannot hold: the bus would drop the daemon), an escape (which would steer a
/// terminal) or any other control byte is delivered as `?` and counted.
#[test]
fn text_from_a_board_is_printable_and_unprintable_bytes_are_counted() {
    let (messages, stats) = decode(&[0x91, 0x00, 0x08, 0x31, 0x32, 0x00, 0x34, 0x35]);
    assert_eq!(messages, [Message::SerialNumber("12?45".into())]);
    assert_eq!(stats.unprintable_text_bytes, 1);
    let long = b"\xa2\x00\x0d123\x00\x1b[2J\x7f9";
    let (messages, stats) = decode(long);
    assert_eq!(messages, [Message::LongSerialNumber("123??[2J?9".into())]);
    assert_eq!(stats.unprintable_text_bytes, 3);
    // The trademark has lines (CR LF) as real boards send it; other control bytes go.
    let mut trademark = vec![0x92, 0x00, 3 + 6];
    trademark.extend_from_slice(b"a\tb\r\n\x1b");
    let (messages, stats) = decode(&trademark);
    assert_eq!(messages, [Message::Trademark("a?b\r\n?".into())]);
    assert_eq!(stats.unprintable_text_bytes, 2);
    let (messages, stats) = decode(b"\x91\x00\x0812\r\n5");
    assert_eq!(messages, [Message::SerialNumber("12??5".into())]);
    assert_eq!(stats.unprintable_text_bytes, 2);
    // What a real board sends is kept as it is, and nothing is counted.
    let (_, stats) = decode(b"\x91\x00\x0c01025 1.0");
    assert_eq!(stats.unprintable_text_bytes, 0);
    // The encoder agrees: a control character goes out as `?` too.
    assert_eq!(
        Message::SerialNumber("1\u{1b}3".into()).to_bytes(),
        b"\x91\x00\x081?3  "
    );
}

#[test]
fn battery_status() {
    assert_eq!(
        one(&[0xA0, 0x00, 0x0C, 87, 3, 15, 1, 20, 2, 4, 30, 0x02]),
        Message::BatteryStatus(BatteryStatus {
            percent: 87,
            time_left: Some((3, 15)),
            on_time: (1, 20),
            standby: (2, 4, 30),
            charging: false,
            discharging: true,
        })
    );
    assert_eq!(
        one(&[0xA0, 0x00, 0x0C, 100, 0x7F, 0x7F, 0, 5, 0, 0, 0, 0x01]),
        Message::BatteryStatus(BatteryStatus {
            percent: 100,
            time_left: None,
            on_time: (0, 5),
            standby: (0, 0, 0),
            charging: true,
            discharging: false,
        })
    );
}

#[test]
fn ee_moves() {
    // Header: 0x8F, total 3 + 9 = 12.
    let bytes = [
        0x8F, 0x00, 0x0C, 0x7F, 0x6A, 0x45, 60, 0x71, 0x02, 0x59, 0x6F, 0x6B,
    ];
    assert_eq!(
        one(&bytes),
        Message::EeMoves(vec![
            EeEvent::Nop,
            EeEvent::PowerUp,
            EeEvent::Field {
                field: 60,
                content: piece(Color::White, Role::King),
                quick: false
            },
            EeEvent::Time {
                left: true,
                time: t(1, 2, 59)
            },
            EeEvent::BeginPos,
            EeEvent::Eof,
        ])
    );
    // A full-size log (0x1F00 bytes) as the unsolicited one picochess saw.
    let mut big = vec![0x8F, 0x3E, 0x03];
    big.extend(std::iter::repeat_n(0x7F, 0x1F00 - 1));
    big.push(0x6B);
    let (messages, stats) = decode(&big);
    assert_eq!(stats.skipped_bytes, 0);
    let Some(Message::EeMoves(events)) = messages.first() else {
        panic!("no log")
    };
    assert_eq!(events.len(), 0x1F00);
    assert_eq!(events.last(), Some(&EeEvent::Eof));
}

#[test]
fn garbage_before_between_and_after_is_skipped_and_counted() {
    let update = [0x8E, 0x00, 0x05, 0x24, 0x01];
    let mut bytes = vec![0x00, 0x7F, 0x41];
    bytes.extend_from_slice(&update);
    bytes.extend_from_slice(&[0x12, 0x34]);
    bytes.extend_from_slice(&update);
    bytes.push(0x55);
    let (messages, stats) = decode(&bytes);
    assert_eq!(messages.len(), 2);
    assert_eq!(stats.skipped_bytes, 6);
    assert_eq!(stats.dropped_frames, 0);
    assert_eq!(stats.message_bytes, 10);
}

#[test]
fn unknown_ids_cost_only_themselves() {
    // 0x80 (DGT_NONE), a draughts dump id, and a bus reply id with their "payload".
    let mut bytes = vec![0x80, 0x94, 0x00, 0x35, 0x01, 0x02, 0xFF];
    bytes.extend_from_slice(&[0x93, 0x00, 0x05, 0x03, 0x01]);
    let (messages, stats) = decode(&bytes);
    assert_eq!(messages, vec![Message::Version { major: 3, minor: 1 }]);
    assert_eq!(stats.unknown_ids, 3);
    assert_eq!(stats.skipped_bytes, 7);
    assert_eq!(stats.dropped_frames, 0);
}

#[test]
fn impossible_lengths_cost_only_the_header() {
    for header in [
        [0x8E, 0x00, 0x06], // field update must be 5
        [0x8D, 0x00, 0x09], // clock must be 10
        [0x86, 0x01, 0x43], // dump must be 67
        [0x91, 0x00, 0x0A], // serial is 8 or 12
        [0x92, 0x02, 0x04], // trademark at most 259
        [0x8F, 0x7F, 0x7F], // far beyond the EEPROM
    ] {
        let mut bytes = header.to_vec();
        bytes.extend_from_slice(&[0x8E, 0x00, 0x05, 0x00, 0x00]);
        let (messages, stats) = decode(&bytes);
        assert_eq!(
            messages,
            vec![Message::FieldUpdate {
                field: 0,
                content: None
            }],
            "{header:02x?}"
        );
        assert_eq!(stats.bad_lengths, 1, "{header:02x?}");
        assert_eq!(stats.dropped_frames, 1);
        assert_eq!(stats.skipped_bytes, 3);
    }
}

#[test]
fn a_header_inside_a_payload_costs_only_the_interrupted_frame() {
    let clock = [0x8D, 0x00, 0x0A, 0x20, 0x03, 0x02, 0x20, 0x03, 0x02, 0x09];
    for cut in 1..clock.len() {
        let mut bytes = clock[..cut].to_vec();
        bytes.extend_from_slice(&clock);
        for size in 1..=bytes.len() {
            let mut decoder = Decoder::new();
            let mut messages = Vec::new();
            for chunk in bytes.chunks(size) {
                messages.extend(decoder.feed(chunk));
            }
            assert_eq!(messages.len(), 1, "cut at {cut}, chunks of {size}");
            assert_eq!(messages[0].to_bytes(), clock);
            let stats = decoder.stats();
            assert_eq!(stats.truncated_frames, 1, "cut at {cut}");
            assert_eq!(stats.dropped_frames, 1);
            assert_eq!(stats.skipped_bytes, cut as u64);
        }
    }
}

#[test]
fn truncated_frame_at_the_end_is_held_then_dropped_on_reset() {
    let mut decoder = Decoder::new();
    decoder.push(&[0x86, 0x00, 0x43, 1, 2, 3]);
    assert_eq!(decoder.next_message(), None);
    assert_eq!(decoder.pending_len(), 6);
    decoder.reset();
    assert_eq!(decoder.pending_len(), 0);
    let stats = decoder.stats();
    assert_eq!(stats.truncated_frames, 1);
    assert_eq!(stats.skipped_bytes, 6);
    assert_eq!(stats.bytes_in, 6);
}

#[test]
fn every_byte_is_accounted_for() {
    let mut bytes = Vec::new();
    for i in 0..2000u32 {
        bytes.push((i.wrapping_mul(2654435761) >> 13) as u8);
    }
    let mut decoder = Decoder::new();
    for chunk in bytes.chunks(7) {
        decoder.feed(chunk).for_each(drop);
    }
    properties::assert_accounted(&decoder);
}

#[test]
fn encode_keeps_framing_for_out_of_range_values() {
    let message = Message::ClockTimes(ClockReading {
        right: t(12, 75, 99),
        ..ClockReading::default()
    });
    let bytes = message.to_bytes();
    // (The derived default status says "no clock connected": bit 5.)
    assert_eq!(bytes, [0x8D, 0x00, 0x0A, 0x09, 0x59, 0x59, 0, 0, 0, 0x20]);
    let text = Message::SerialNumber("1€".into()).to_bytes();
    assert_eq!(text, b"\x91\x00\x081?   ");
    assert!(Message::Trademark("y".repeat(300)).to_bytes().len() == 259);
}

#[test]
fn feed_leaves_untaken_messages_queued() {
    let mut decoder = Decoder::new();
    let update = [0x8E, 0x00, 0x05, 0x24, 0x01];
    let mut bytes = update.to_vec();
    bytes.extend_from_slice(&update);
    bytes.extend_from_slice(&update);
    assert!(decoder.feed(&bytes).next().is_some());
    assert_eq!(decoder.queued(), 2);
    assert_eq!(decoder.feed(&[]).count(), 2);
    assert_eq!(decoder.next_message(), None);
}

#[test]
fn an_eeprom_log_without_valid_tags_is_empty_and_round_trips() {
    // Found by fuzzing: a log of nothing but broken tags decodes to no events, and that
    // message must encode to a frame that decodes to it again.
    let (messages, stats) = decode(&[0x8F, 0x00, 0x05, 0x7D, 0x41]);
    assert_eq!(messages, vec![Message::EeMoves(Vec::new())]);
    assert_eq!(stats.ee_skipped_bytes, 2);
    assert_eq!(messages[0].to_bytes(), [0x8F, 0x00, 0x03]);
    assert_eq!(one(&[0x8F, 0x00, 0x03]), Message::EeMoves(Vec::new()));
}

#[test]
fn a_reading_with_only_meaningless_bits_is_empty() {
    // Found by fuzzing: status bit 6 ("always 0") alone must not make a reading of 0:00:00
    // that re-encodes as an empty message.
    assert_eq!(
        decode(&[0x8D, 0x00, 0x0A, 0, 0, 0, 0, 0, 0, 0x40]).0,
        vec![Message::ClockEmpty]
    );
}
