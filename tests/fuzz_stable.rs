//! The cargo-fuzz properties (`fuzz/properties.rs`) on stable Rust, bounded and deterministic,
//! as part of `cargo test --all-targets`: libFuzzer needs nightly, which CI does not have, and
//! a fuzz target that is never run checks nothing. The clock-noise property replays a recorded
//! game per case, so it runs fewer cases.
//!
//! Each property runs on its seeds first (the real captures for the decoder and the session,
//! with a hostile device's text for the latter, every command the host sends for the command
//! parser, each in several read sizes), then on thousands of inputs
//! that proptest derives from them (windows of the seeds with bytes flipped, inserted and cut)
//! and on plain noise. The random source has a fixed seed, so a run is repeatable; a failing
//! input is shrunk by proptest and printed.

#[path = "../fuzz/properties.rs"]
mod properties;

use std::path::PathBuf;

use eboard_core::dgt::{
    AsciiBeep, ClockCommand, ClockText, Command, DisplayTime, RunSide, SetAndRun, XlDisplay,
    parse_command,
};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

/// Generated inputs per property (on top of the seeds).
const CASES: u32 = 4_000;

/// The board → host byte streams of the shared captures.
fn capture_seeds() -> Vec<Vec<u8>> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/captures"));
    let mut seeds: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("the captures {}: {e}", dir.display()))
        .map(|entry| entry.expect("capture dir entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "inbytes"))
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("capture text");
            let chunks = eboard_core::capture::parse(&text)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            chunks.into_iter().flat_map(|c| c.bytes).collect()
        })
        .collect();
    seeds.sort();
    assert!(seeds.len() >= 2, "the shared captures are missing");
    seeds
}

/// Every kind of command the host sends, as bytes.
fn command_seeds() -> Vec<Vec<u8>> {
    let time = DisplayTime {
        hours: 1,
        minutes: 29,
        seconds: 59,
    };
    let clock = [
        ClockCommand::Ascii {
            text: ClockText::new("eboardd "),
            beep: AsciiBeep::NONE,
        },
        ClockCommand::Display(XlDisplay {
            digits: [0x3F, 0x06, 0x5B, 0x4F, 0x66, 0x6D],
            icons: 0x12,
            beep: true,
        }),
        ClockCommand::Icons {
            icons: [1, 2, 3, 4],
            special: 0x40,
        },
        ClockCommand::End,
        ClockCommand::SetAndRun(SetAndRun {
            left: time,
            right: time,
            left_counts_up: false,
            right_counts_up: true,
            run: RunSide::Left,
            switch_on_lever: true,
        }),
        ClockCommand::Beep { units: 3 },
        ClockCommand::Version,
        ClockCommand::Button,
    ];
    // Every one-byte command there is, found by the parser itself.
    let plain: Vec<Command> = (0..=u8::MAX)
        .filter_map(|b| parse_command(&[b]).ok())
        .map(|(command, _)| command)
        .collect();
    assert!(plain.len() >= 13, "{plain:?}");
    let commands: Vec<Command> = plain
        .into_iter()
        .chain(clock.into_iter().map(Command::Clock))
        .collect();
    let all: Vec<u8> = commands.iter().flat_map(Command::to_bytes).collect();
    let mut seeds: Vec<Vec<u8>> = commands.iter().map(Command::to_bytes).collect();
    seeds.push(all);
    seeds
}

/// The property on each seed in every read size the first byte can choose.
fn run_seeds(property: fn(&[u8]), seeds: &[Vec<u8>], splits: u8) {
    for seed in seeds {
        for split in 0..splits {
            let mut input = vec![split];
            input.extend_from_slice(seed);
            property(&input);
        }
    }
}

/// Inputs derived from the seeds: a read-size byte, a window of one seed, then up to eight
/// edits (flip a byte, insert one, cut one); and plain noise, one case in five.
fn inputs(seeds: Vec<Vec<u8>>) -> impl Strategy<Value = Vec<u8>> {
    let count = seeds.len();
    let mutated = (
        any::<u8>(),
        0..count,
        any::<prop::sample::Index>(),
        0usize..600,
        vec((0u8..3, any::<prop::sample::Index>(), any::<u8>()), 0..8),
    )
        .prop_map(move |(split, which, start, len, edits)| {
            let seed = &seeds[which];
            let start = start.index(seed.len().max(1)).min(seed.len());
            let end = (start + len).min(seed.len());
            let mut bytes = seed[start..end].to_vec();
            for (kind, at, byte) in edits {
                match kind {
                    0 if !bytes.is_empty() => {
                        let i = at.index(bytes.len());
                        bytes[i] = byte;
                    }
                    1 => {
                        let i = at.index(bytes.len() + 1);
                        bytes.insert(i, byte);
                    }
                    2 if !bytes.is_empty() => {
                        let i = at.index(bytes.len());
                        bytes.remove(i);
                    }
                    _ => {}
                }
            }
            bytes.insert(0, split);
            bytes
        });
    prop_oneof![4 => mutated, 1 => vec(any::<u8>(), 0..400)]
}

/// `property` on [`CASES`] inputs from [`inputs`], with a fixed random seed.
fn run_generated(property: fn(&[u8]), seeds: Vec<Vec<u8>>) {
    let config = Config {
        cases: CASES,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let ran = std::sync::atomic::AtomicU32::new(0);
    let result = runner.run(&inputs(seeds), |input| {
        ran.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        property(&input);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let ran = ran.into_inner();
    assert!(ran >= CASES, "only {ran} of {CASES} cases ran");
}

#[test]
fn decoder_property_holds_on_the_captures_in_every_read_size() {
    run_seeds(properties::decoder, &capture_seeds(), 64);
}

#[test]
fn decoder_property_holds_on_thousands_of_mutated_captures_and_noise() {
    run_generated(properties::decoder, capture_seeds());
}

/// The captures, and a board that answers with the text the hostile device sent: a
/// serial number and a long serial number with a NUL and an escape sequence in them.
fn session_seeds() -> Vec<Vec<u8>> {
    let mut seeds = capture_seeds();
    let hostile: Vec<u8> = [
        &[0x91, 0x00, 0x08, 0x31, 0x32, 0x00, 0x34, 0x35][..],
        b"\xa2\x00\x0d123\x00\x1b[2J78",
        b"\x92\x00\x08\x1b]0;\x07\x00",
    ]
    .concat();
    for seed in seeds.iter_mut().take(2) {
        let middle = seed.len() / 2;
        seed.splice(middle..middle, hostile.iter().copied());
    }
    seeds.push(hostile);
    seeds
}

#[test]
fn session_property_holds_on_the_captures_and_hostile_text() {
    run_seeds(properties::session, &session_seeds(), 8);
}

#[test]
fn session_property_holds_on_thousands_of_mutated_captures_and_noise() {
    run_generated(properties::session, session_seeds());
}

/// Noise for the clock property: every single-bit flip of the clock's frame (a one-bit mask),
/// after every fifth of the clock's frames over the recorded game (thinks, presses, the
/// scramble) and after each of its last five (the real flag fall).
fn clock_noise_seeds() -> Vec<Vec<u8>> {
    let slots = properties::clock_noise_slots();
    let mut chosen: Vec<usize> = (0..slots)
        .step_by(5)
        .chain(slots.saturating_sub(5)..slots)
        .collect();
    chosen.sort_unstable();
    chosen.dedup();
    let mut seeds = Vec::new();
    for slot in chosen {
        for byte in 0..7 {
            for bit in 0..7 {
                let mut seed = (slot as u16).to_le_bytes().to_vec();
                let mut mask = [0u8; 7];
                mask[byte] = 1 << bit;
                seed.extend(mask);
                seeds.push(seed);
            }
        }
    }
    seeds
}

#[test]
fn clock_noise_property_holds_for_every_single_bit_flip() {
    for seed in clock_noise_seeds() {
        properties::clock_noise(&seed);
    }
}

#[test]
fn clock_noise_property_holds_on_generated_noise_frames() {
    let config = Config {
        cases: 300,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let seeds = clock_noise_seeds();
    let count = seeds.len();
    let strategy = prop_oneof![
        1 => (0..count).prop_map(move |i| seeds[i].clone()),
        3 => vec(any::<u8>(), 9..37),
    ];
    if let Err(e) = runner.run(&strategy, |input| {
        properties::clock_noise(&input);
        Ok(())
    }) {
        panic!("{e}");
    }
}

#[test]
fn commands_property_holds_on_every_command_in_every_read_size() {
    run_seeds(properties::commands, &command_seeds(), 16);
}

#[test]
fn commands_property_holds_on_thousands_of_mutated_commands_and_noise() {
    run_generated(properties::commands, command_seeds());
}

/// The runner would let a broken property through if it did not call it or swallowed its
/// panic: a property that fails on one byte value must be caught and reported.
#[test]
fn a_failing_property_is_caught() {
    fn fails_on_0x2b(data: &[u8]) {
        assert!(!data.contains(&0x2B), "found 0x2B");
    }
    let caught = std::panic::catch_unwind(|| run_generated(fails_on_0x2b, command_seeds()));
    let message = caught.expect_err("the broken property passed");
    let text = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(text.contains("found 0x2B"), "{text}");
}
