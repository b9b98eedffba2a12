//! The properties the fuzzers check, in one file that both runners compile: the cargo-fuzz
//! targets (`fuzz_targets/*.rs`, nightly + libFuzzer) and the bounded, deterministic loop on
//! stable (`tests/fuzz_stable.rs`, part of `cargo test --all-targets`). Each property takes the
//! raw fuzz input and panics when it does not hold, so the two runners cannot drift apart.
//!
//! Input layout (all): the first byte chooses the read size, the rest is the byte stream.

use std::borrow::Cow;

use eboard_core::contract::{BOARD_PROPERTIES, BoardProps};
use eboard_core::dgt::{CommandDecoder, Decoder, Message, parse_command};
use eboard_core::session::{Event, Input, Session, SessionConfig};
use eboard_sim::{BoardOptions, ClockSetup, Noise};
use eboardd::daemon::dbus::{
    SignalBody, holds_only_dbus_text, is_dbus_text, property_value, sendable,
};

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
        let dropped = decoder.stats().lost_frames();
        let messages: Vec<Message> = decoder.feed(part).collect();
        if decoder.stats().lost_frames() > dropped {
            feed(&mut session, Input::LineLoss, now);
        }
        for input in messages.into_iter().filter_map(Message::into_board_input) {
            feed(&mut session, Input::Board(input), now);
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
        let body = SignalBody::of(event).unwrap_or_else(|| panic!("{member} has no body"));
        assert!(body.sends_only_dbus_text().expect("a message"), "{member}");
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

/// One game as the board's serial bytes, with the time each read came: a clocked game (20 s
/// each, no increment) with thinks and a time scramble, ending with White's real flag fall.
struct Recorded {
    reads: Vec<(u64, Vec<u8>)>,
    /// Indices of the reads that end with a clock frame (where noise may follow).
    after_clock: Vec<usize>,
}

fn recorded_game() -> &'static Recorded {
    use eboard_sim::rig::Rig;
    static GAME: std::sync::OnceLock<Recorded> = std::sync::OnceLock::new();
    GAME.get_or_init(|| {
        let opts = BoardOptions {
            clock_setup: ClockSetup {
                base_ms: 20_000,
                increment_ms: 0,
            },
            ..BoardOptions::default()
        };
        let mut rig = Rig::new(opts, SessionConfig::default(), 3, Noise::Clean);
        // Recorded from a connection on: the start-up's whole board is in the recording.
        rig.disconnect();
        rig.tap_line();
        rig.connect();
        rig.advance(1_000);
        let moves = [
            "e4", "e5", "Nf3", "Nc6", "Bc4", "Bc5", "c3", "Nf6", "d3", "d6", "O-O", "O-O", "h3",
            "h6",
        ];
        for (i, san) in moves.iter().enumerate() {
            rig.advance(if i < 8 { 2_000 } else { 200 });
            rig.play(san).expect("a legal move");
        }
        // White thinks until his flag falls, and a while after.
        rig.advance(25_000);
        let reads = rig.take_line();
        let after_clock = reads
            .iter()
            .enumerate()
            .filter(|(_, (_, bytes))| bytes.len() >= 10 && bytes[bytes.len() - 10] == 0x8D)
            .map(|(i, _)| i)
            .collect();
        Recorded { reads, after_clock }
    })
}

/// The record that matters: the moves with their press stamps, the result and its reason,
/// the illegal-move counts, and the decisive signals in order.
type Outcome = (Vec<(String, Option<u64>)>, String, Vec<String>);

/// `reads` through a decoder and a session as the daemon's board task feeds them (link up,
/// each read's messages at its time, a lost frame when one was cut, a tick every 100 ms).
fn outcome_of(reads: &[(u64, Vec<u8>)]) -> Outcome {
    let mut session = Session::new(SessionConfig {
        name: "fuzz".into(),
        ..SessionConfig::default()
    });
    let mut decoder = Decoder::new();
    let mut decisive = Vec::new();
    let mut feed = |session: &mut Session, input: Input, now: u64| {
        for e in session.handle(input, now).unwrap_or_default() {
            if matches!(
                e,
                Event::FlagFell { .. }
                    | Event::IllegalMoveCompleted { .. }
                    | Event::GameEnded { .. }
            ) {
                decisive.push(format!("{e:?}"));
            }
        }
    };
    feed(&mut session, Input::Link(true), 0);
    let mut tick = 0;
    let end = reads.last().map_or(0, |(at, _)| *at) + 3_000;
    let mut next = reads.iter().peekable();
    while tick <= end {
        while let Some((at, bytes)) = next.next_if(|(at, _)| *at <= tick) {
            let dropped = decoder.stats().lost_frames();
            let messages: Vec<Message> = decoder.feed(bytes).collect();
            if decoder.stats().lost_frames() > dropped {
                feed(&mut session, Input::LineLoss, *at);
            }
            for input in messages.into_iter().filter_map(Message::into_board_input) {
                feed(&mut session, Input::Board(input), *at);
            }
        }
        feed(&mut session, Input::Tick, tick);
        tick += 100;
    }
    let game = session.game();
    let moves = game
        .current_moves()
        .iter()
        .map(|m| (m.san.clone(), m.clk_ms))
        .collect();
    let result = format!(
        "{:?} {:?} {:?}",
        game.result, game.termination, game.illegal_moves
    );
    (moves, result, decisive)
}

/// How many of the clock's own frames the recorded game of [`clock_noise`] has (where noise
/// may be placed: slot `k` is right after the `k`-th).
pub fn clock_noise_slots() -> usize {
    recorded_game().after_clock.len()
}

/// One noisy clock frame never decides a game. The input places up to four garbled copies of
/// the clock's frames in a recorded game (nine bytes each: two for where, right after which of
/// the clock's own frames, then seven XORed into that frame's payload — one set bit is a
/// single-bit flip, any payload can be reached; bit 7 stays clear, as the board frames what
/// the clock sends), at least two of the clock's frames apart: the record (moves, press
/// stamps, result, illegal moves, the decisive signals) is the noise-free game's, whose real
/// flag fall is called.
pub fn clock_noise(data: &[u8]) {
    let game = recorded_game();
    static CLEAN: std::sync::OnceLock<Outcome> = std::sync::OnceLock::new();
    let clean = CLEAN.get_or_init(|| outcome_of(&game.reads));
    assert!(
        clean.0.len() == 14 && clean.2.iter().any(|e| e.starts_with("FlagFell")),
        "the recorded game has its 14 moves and ends on time: {clean:?}"
    );
    let slots = game.after_clock.len();
    let mut noise: Vec<(usize, [u8; 7])> = data
        .chunks_exact(9)
        .take(4)
        .map(|c| {
            let slot = usize::from(u16::from_le_bytes([c[0], c[1]])) % slots;
            // The clock's own last frame, garbled by the mask.
            let bytes = &game.reads[game.after_clock[slot]].1;
            let real = &bytes[bytes.len() - 7..];
            let mut payload = [0u8; 7];
            for ((p, mask), r) in payload.iter_mut().zip(&c[2..9]).zip(real) {
                *p = (r ^ mask) & 0x7F;
            }
            (slot, payload)
        })
        .collect();
    noise.sort_by_key(|(slot, _)| *slot);
    noise.dedup_by(|b, a| b.0 < a.0 + 2);
    let mut reads = game.reads.clone();
    for (slot, payload) in noise.iter().rev() {
        let at = game.after_clock[*slot];
        let time = reads[at].0;
        let mut frame = vec![0x8D, 0x00, 0x0A];
        frame.extend(payload);
        reads.insert(at + 1, (time, frame));
    }
    let noisy = outcome_of(&reads);
    assert_eq!(&noisy, clean, "noise {noise:?} changed the record");
}
