//! The properties the fuzzers check, in one file that both runners compile: the cargo-fuzz
//! targets (`fuzz_targets/*.rs`, nightly + libFuzzer) and the bounded, deterministic loop on
//! stable (`tests/fuzz_stable.rs`, part of `cargo test --all-targets`). Each property takes the
//! raw fuzz input and panics when it does not hold, so the two runners cannot drift apart.
//!
//! Input layout (both): the first byte chooses the read size, the rest is the byte stream.

use eboardd::protocol::{CommandDecoder, Decoder, Message, parse_command};

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
    let stats = decoder.stats();
    assert_eq!(
        stats.bytes_in,
        stats.message_bytes + stats.skipped_bytes + decoder.pending_len() as u64
    );
    assert_eq!(
        stats.dropped_frames,
        stats.truncated_frames + stats.bad_lengths + stats.bad_payloads
    );

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
