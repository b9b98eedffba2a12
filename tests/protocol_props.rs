//! Property tests of the protocol layer: encode/decode are inverse, garbage costs only the
//! messages it hits, arbitrary input never panics and every byte is accounted for.

mod clock_strategies;
#[allow(dead_code)] // only the decoder's accounting
#[path = "../fuzz/properties.rs"]
mod properties;

use clock_strategies::clock_times;
use eboard_core::dgt::*;
use proptest::prelude::*;
use shakmaty::{Color, Piece, Role};

fn field_content() -> impl Strategy<Value = FieldContent> {
    prop_oneof![
        2 => Just(None),
        5 => (any::<bool>(), 0..6usize).prop_map(|(white, role)| {
            let role = [Role::Pawn, Role::Rook, Role::Knight, Role::Bishop, Role::King, Role::Queen][role];
            let color = if white { Color::White } else { Color::Black };
            Some(Piece { color, role })
        }),
    ]
}

fn display_time() -> impl Strategy<Value = DisplayTime> {
    (0..=9u8, 0..=59u8, 0..=59u8).prop_map(|(hours, minutes, seconds)| DisplayTime {
        hours,
        minutes,
        seconds,
    })
}

/// Text a board sends (and the decoder delivers): printable ASCII; other bytes are delivered
/// as `?` (see `protocol_messages`), so they are not a message's text.
fn ascii(len: impl Into<prop::collection::SizeRange>) -> impl Strategy<Value = String> {
    prop::collection::vec(0x20u8..0x7F, len).prop_map(|v| v.into_iter().map(char::from).collect())
}

/// A trademark: printable ASCII in lines ended by CR LF, as real boards send it.
fn lines(len: impl Into<prop::collection::SizeRange>) -> impl Strategy<Value = String> {
    let byte = prop_oneof![8 => 0x20u8..0x7F, 1 => Just(b'\r'), 1 => Just(b'\n')];
    prop::collection::vec(byte, len).prop_map(|v| v.into_iter().map(char::from).collect())
}

fn ee_event() -> impl Strategy<Value = EeEvent> {
    prop_oneof![
        4 => (0..64u8, field_content(), any::<bool>())
            .prop_map(|(field, content, quick)| EeEvent::Field { field, content, quick }),
        2 => (any::<bool>(), display_time()).prop_map(|(left, time)| EeEvent::Time { left, time }),
        1 => prop::sample::select(vec![
            EeEvent::PowerUp,
            EeEvent::Eof,
            EeEvent::FourRows,
            EeEvent::EmptyBoard,
            EeEvent::Downloaded,
            EeEvent::BeginPos,
            EeEvent::BeginPosRotated,
            EeEvent::StartTag,
            EeEvent::WatchdogAction,
            EeEvent::Nop,
        ]),
    ]
}

/// Every message the decoder can produce.
fn message() -> impl Strategy<Value = Message> {
    prop_oneof![
        1 => prop::collection::vec(field_content(), 64).prop_map(|v| {
            let fields: [FieldContent; 64] = v.try_into().expect("64 fields");
            Message::BoardDump(Box::new(fields))
        }),
        8 => (0..64u8, field_content())
            .prop_map(|(field, content)| Message::FieldUpdate { field, content }),
        8 => clock_times(display_time)
            // The all-zero reading is ClockEmpty on the wire.
            .prop_filter("all-zero payload", |c| c.payload() != [0; 7])
            .prop_map(Message::ClockTimes),
        2 => any::<[u8; 4]>().prop_map(|bytes| Message::ClockAck(ClockAck { bytes })),
        1 => Just(Message::ClockEmpty),
        1 => (0..128u8, 0..128u8).prop_map(|(major, minor)| Message::Version { major, minor }),
        1 => prop_oneof![ascii(5), ascii(9)].prop_map(Message::SerialNumber),
        1 => ascii(10).prop_map(Message::LongSerialNumber),
        1 => lines(0..=40).prop_map(Message::Trademark),
        1 => (0..16384u16).prop_map(Message::BusAddress),
        1 => (
            0..128u8,
            prop::option::of((0..127u8, 0..128u8)),
            (0..128u8, 0..128u8),
            (0..128u8, 0..128u8, 0..128u8),
            any::<(bool, bool)>(),
        )
            .prop_map(|(percent, time_left, on_time, standby, (charging, discharging))| {
                Message::BatteryStatus(BatteryStatus {
                    percent,
                    time_left,
                    on_time,
                    standby,
                    charging,
                    discharging,
                })
            }),
        1 => prop::collection::vec(ee_event(), 0..40).prop_map(Message::EeMoves),
    ]
}

fn decode_chunked(bytes: &[u8], chunk: usize) -> (Vec<Message>, Decoder) {
    let mut decoder = Decoder::new();
    let mut out = Vec::new();
    for part in bytes.chunks(chunk.max(1)) {
        out.extend(decoder.feed(part));
    }
    (out, decoder)
}

fn assert_accounted(decoder: &Decoder) {
    properties::assert_accounted(decoder);
    assert!(decoder.pending_len() <= wire::MAX_FRAME_LEN);
}

proptest! {
    #[test]
    fn encode_then_decode_is_identity(m in message(), chunk in 1..80usize) {
        let bytes = m.to_bytes();
        let (decoded, decoder) = decode_chunked(&bytes, chunk);
        prop_assert_eq!(decoded, vec![m]);
        prop_assert_eq!(decoder.stats().skipped_bytes, 0);
        prop_assert_eq!(decoder.pending_len(), 0);
    }

    #[test]
    fn garbage_costs_only_the_messages_it_hits(
        messages in prop::collection::vec(message(), 1..16),
        splices in prop::collection::vec(
            (any::<prop::sample::Index>(), prop::collection::vec(any::<u8>(), 1..24)),
            0..6,
        ),
        chunk in 1..64usize,
    ) {
        // Lay the messages out, then pick splice points anywhere in the clean stream.
        let mut spans = Vec::new();
        let mut clean = Vec::new();
        for m in &messages {
            let start = clean.len();
            m.encode(&mut clean);
            spans.push(start..clean.len());
        }
        let mut points: Vec<(usize, Vec<u8>)> = splices
            .into_iter()
            .map(|(at, garbage)| (at.index(clean.len() + 1), garbage))
            .collect();
        points.sort_by_key(|(at, _)| *at);
        // A message is hit when garbage lands strictly inside its bytes.
        let hit: Vec<bool> = spans
            .iter()
            .map(|s| points.iter().any(|(at, _)| s.start < *at && *at < s.end))
            .collect();

        let mut dirty = Vec::new();
        // Where each message starts in the dirty stream (garbage at a boundary goes first).
        let mut dirty_start = vec![0; messages.len()];
        let mut next_point = 0;
        for (i, &byte) in clean.iter().enumerate() {
            while next_point < points.len() && points[next_point].0 == i {
                dirty.extend_from_slice(&points[next_point].1);
                next_point += 1;
            }
            if let Some(m) = spans.iter().position(|s| s.start == i) {
                dirty_start[m] = dirty.len();
            }
            dirty.push(byte);
        }
        for (_, garbage) in &points[next_point..] {
            dirty.extend_from_slice(garbage);
        }

        // Expected: each intact message as it is; each damaged stretch between intact messages
        // decodes on its own, unaffected by what came before or after.
        let mut expected = Vec::new();
        let mut region_start = 0;
        let intact_end = |m: usize| dirty_start[m] + (spans[m].end - spans[m].start);
        for (m, message) in messages.iter().enumerate() {
            if hit[m] {
                continue;
            }
            expected.extend(Decoder::decode_all(&dirty[region_start..dirty_start[m]]).0);
            expected.push(message.clone());
            region_start = intact_end(m);
        }
        expected.extend(Decoder::decode_all(&dirty[region_start..]).0);

        let (decoded, decoder) = decode_chunked(&dirty, chunk);
        prop_assert_eq!(&decoded, &expected);
        assert_accounted(&decoder);

        // And in plain words: every message the garbage missed comes out, in order.
        let mut rest = decoded.iter();
        for (m, message) in messages.iter().enumerate() {
            if !hit[m] {
                prop_assert!(rest.any(|d| d == message), "lost intact message {}", m);
            }
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(
        bytes in prop::collection::vec(any::<u8>(), 0..2048),
        chunk in 1..128usize,
    ) {
        let (decoded, decoder) = decode_chunked(&bytes, chunk);
        assert_accounted(&decoder);
        prop_assert_eq!(decoder.stats().messages, decoded.len() as u64);
        // Whatever was decoded re-encodes to something that decodes to the same message.
        for m in decoded {
            let (again, _) = Decoder::decode_all(&m.to_bytes());
            prop_assert_eq!(again, vec![m]);
        }
    }

    #[test]
    fn header_heavy_bytes_never_panic(
        bytes in prop::collection::vec(
            prop_oneof![
                prop::sample::select(vec![0x86u8, 0x8D, 0x8E, 0x8F, 0x91, 0x92, 0xA0, 0xA2]),
                0u8..0x80,
            ],
            0..1024,
        ),
        chunk in 1..16usize,
    ) {
        let (_, decoder) = decode_chunked(&bytes, chunk);
        assert_accounted(&decoder);
    }
}

fn clock_command() -> impl Strategy<Value = ClockCommand> {
    let set_and_run = (
        display_time(),
        display_time(),
        any::<(bool, bool, bool)>(),
        prop::sample::select(vec![RunSide::Left, RunSide::Right, RunSide::Paused]),
    )
        .prop_map(|(left, right, (lu, ru, lever), run)| {
            ClockCommand::SetAndRun(SetAndRun {
                left,
                right,
                left_counts_up: lu,
                right_counts_up: ru,
                run,
                switch_on_lever: lever,
            })
        });
    prop_oneof![
        (prop::collection::vec(0x20u8..0x7F, 8), 0..16u8).prop_map(|(text, beep)| {
            let text: [u8; 8] = text.try_into().expect("8 characters");
            ClockCommand::Ascii {
                text: ClockText::from_bytes(text).expect("printable"),
                beep: AsciiBeep::new(beep),
            }
        }),
        (
            prop::collection::vec(0u8..0x80, 6),
            0u8..0x40,
            any::<bool>()
        )
            .prop_map(|(digits, icons, beep)| ClockCommand::Display(XlDisplay {
                digits: digits.try_into().expect("6 digits"),
                icons,
                beep,
            })),
        (prop::collection::vec(0u8..0x80, 4), 0u8..0x80).prop_map(|(icons, special)| {
            ClockCommand::Icons {
                icons: icons.try_into().expect("4 icon bytes"),
                special,
            }
        }),
        Just(ClockCommand::End),
        set_and_run,
        any::<u8>().prop_map(|units| ClockCommand::Beep { units }),
        Just(ClockCommand::Version),
        Just(ClockCommand::Button),
        "[ -~]{11}".prop_map(|text| ClockCommand::RevelationText {
            text: RevelationText::new(&text)
        }),
    ]
}

fn command() -> impl Strategy<Value = Command> {
    prop_oneof![
        prop::sample::select(vec![
            Command::Reset,
            Command::SendClock,
            Command::SendBoard,
            Command::Update,
            Command::UpdateBoard,
            Command::UpdateNice,
            Command::SerialNumber,
            Command::LongSerialNumber,
            Command::BusAddress,
            Command::Trademark,
            Command::Version,
            Command::BatteryStatus,
            Command::EeMoves,
        ]),
        clock_command().prop_map(Command::Clock),
    ]
}

proptest! {
    #[test]
    fn commands_parse_back(commands in prop::collection::vec(command(), 1..20), chunk in 1..20usize) {
        let mut bytes = Vec::new();
        for c in &commands {
            c.encode(&mut bytes);
        }
        let mut decoder = CommandDecoder::new();
        let mut got = Vec::new();
        for part in bytes.chunks(chunk) {
            decoder.push(part);
            while let Some(item) = decoder.next_command() {
                got.push(item);
            }
        }
        prop_assert_eq!(got, commands.into_iter().map(Ok).collect::<Vec<_>>());
        prop_assert_eq!(decoder.pending_len(), 0);
    }

    #[test]
    fn command_parser_never_panics(
        bytes in prop::collection::vec(
            prop_oneof![Just(0x2Bu8), Just(0x03), Just(0x00), Just(0x0B), any::<u8>()],
            0..512,
        ),
        chunk in 1..40usize,
    ) {
        let mut decoder = CommandDecoder::new();
        let mut consumed = 0;
        for part in bytes.chunks(chunk) {
            decoder.push(part);
            while let Some(item) = decoder.next_command() {
                consumed += match item {
                    Ok(c) => {
                        // What was parsed re-encodes to a frame that parses to it again.
                        let again = c.to_bytes();
                        prop_assert_eq!(parse_command(&again), Ok((c, again.len())));
                        again.len()
                    }
                    Err(rejected) => rejected.bytes.len(),
                };
            }
            prop_assert!(decoder.pending_len() <= 34);
        }
        // Every byte is either in a command, in a rejection, or still pending (a parsed
        // command re-encodes to as many bytes as it was parsed from).
        prop_assert_eq!(consumed + decoder.pending_len(), bytes.len());
    }
}
