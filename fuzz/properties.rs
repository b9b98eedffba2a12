//! The properties the fuzzers check, in one file that both runners compile: the cargo-fuzz
//! targets (`fuzz_targets/*.rs`, nightly + libFuzzer) and the bounded, deterministic loop on
//! stable (`tests/fuzz_stable.rs`, part of `cargo test --all-targets`). Each property takes the
//! raw fuzz input and panics when it does not hold, so the two runners cannot drift apart.
//!
//! Input layout (all): the first byte chooses the read size, the rest is the byte stream.

use std::borrow::Cow;

use eboardd::contract::{BOARD_PROPERTIES, BoardProps};
use eboardd::daemon::dbus::{
    holds_only_dbus_text, is_dbus_text, property_value, sendable, signal_body,
};
use eboardd::protocol::{CommandDecoder, Decoder, Message, parse_command};
use eboardd::session::{Event, Input, Session, SessionConfig};

/// Every byte `decoder` has read is in a message, skipped or still pending, and every dropped
/// frame was dropped for one counted reason (the protocol tests check this too).
pub fn assert_accounted(decoder: &Decoder) {
    let s = decoder.stats();
    assert_eq!(
        s.bytes_in,
        s.message_bytes + s.skipped_bytes + decoder.pending_len() as u64,
        "{s:?}"
    );
    assert_eq!(
        s.dropped_frames,
        s.truncated_frames + s.bad_lengths + s.bad_payloads
    );
}

/// The board → host decoder on any bytes in any read sizes (1..=64): no panic, every byte
/// accounted for in its counters, the same result whatever the chunking, and every decoded
/// message re-encodes to a frame that decodes to itself.
pub fn decoder(data: &[u8]) {
    let Some((&split, stream)) = data.split_first() else {
        return;
    };
    let chunk = usize::from(split % 64) + 1;

    let mut decoder = Decoder::new();
    let mut messages: Vec<Message> = Vec::new();
    for part in stream.chunks(chunk) {
        messages.extend(decoder.feed(part));
    }
    assert_accounted(&decoder);
    let stats = decoder.stats();

    let (whole, whole_stats) = Decoder::decode_all(stream);
    assert_eq!(whole, messages, "result depends on the chunking");
    assert_eq!(whole_stats, stats);

    for message in messages {
        let (again, again_stats) = Decoder::decode_all(&message.to_bytes());
        assert_eq!(again_stats.skipped_bytes, 0);
        assert_eq!(again, [message]);
    }
}

/// The host → board command parser the board simulator uses, in read sizes 1..=16: no panic,
/// every byte ends up in a command, a rejection or the pending buffer, and parsed commands
/// re-encode to a frame that parses to the same command.
pub fn commands(data: &[u8]) {
    let Some((&split, stream)) = data.split_first() else {
        return;
    };
    let chunk = usize::from(split % 16) + 1;
    let mut decoder = CommandDecoder::new();
    let mut consumed = 0;
    for part in stream.chunks(chunk) {
        decoder.push(part);
        while let Some(item) = decoder.next_command() {
            consumed += match item {
                Ok(command) => {
                    let bytes = command.to_bytes();
                    assert_eq!(parse_command(&bytes), Ok((command, bytes.len())));
                    bytes.len()
                }
                Err(rejected) => rejected.bytes.len(),
            };
        }
        assert!(decoder.pending_len() <= 34);
    }
    assert_eq!(consumed + decoder.pending_len(), stream.len());
}

/// Board bytes through the whole path a board's input takes to the bus, as the daemon's board
/// task drives it: the decoder, the session (link up, each message, a tick per read, a lost
/// frame when one was cut, then time for everything to settle) and the publication — every
/// signal's arguments and body and every property as the D-Bus layer renders it hold only
/// D-Bus strings (valid UTF-8, no NUL) without the last check having to fix anything, and the
/// board's own texts (serial number, firmware version) have no control character. No panic.
pub fn session(data: &[u8]) {
    let Some((&split, stream)) = data.split_first() else {
        return;
    };
    let chunk = usize::from(split % 64) + 1;
    let mut session = Session::new(SessionConfig {
        name: "fuzz".into(),
        port: "/dev/fuzz".into(),
        ..SessionConfig::default()
    });
    let mut decoder = Decoder::new();
    let mut now = 0;
    let feed = |session: &mut Session, input: Input, now: u64| {
        let events = session.handle(input, now).unwrap_or_default();
        published(&events, session.view());
    };
    feed(&mut session, Input::Link(true), now);
    for part in stream.chunks(chunk) {
        // A read of `chunk` bytes at 9600 baud takes about a millisecond per byte.
        now += chunk as u64;
        let dropped = decoder.stats().dropped_frames;
        let messages: Vec<Message> = decoder.feed(part).collect();
        if decoder.stats().dropped_frames > dropped {
            feed(&mut session, Input::LineLoss, now);
        }
        for message in messages {
            feed(&mut session, Input::Board(message), now);
        }
        feed(&mut session, Input::Tick, now);
    }
    feed(&mut session, Input::Tick, now + 10_000);
}

/// What the D-Bus layer would send for `events` and `view` passes D-Bus's rules for strings.
fn published(events: &[Event], view: &BoardProps) {
    for event in events {
        let Some((member, args)) = event.signal_args() else {
            continue;
        };
        for (name, value) in &args {
            if let Some(text) = value.as_str() {
                assert!(is_dbus_text(text), "{member}.{name} = {text:?}");
            }
        }
        let body = signal_body(event).unwrap_or_else(|| panic!("{member} has no body"));
        assert!(body.fields().iter().all(holds_only_dbus_text), "{member}");
    }
    for p in BOARD_PROPERTIES {
        let value = property_value(view, p.name).expect("a contract property");
        assert!(holds_only_dbus_text(&value), "{} = {value:?}", p.name);
    }
    assert!(
        matches!(sendable(view), Cow::Borrowed(_)),
        "the last check had to fix {view:?}"
    );
    for (name, text) in [
        ("SerialNumber", &view.serial_number),
        ("FirmwareVersion", &view.firmware_version),
    ] {
        assert!(!text.chars().any(char::is_control), "{name} = {text:?}");
    }
}
