//! Fuzz the board → host decoder: any bytes, any chunking. It must not panic, must account
//! for every byte, must not depend on how the input was split, and whatever it decodes must
//! re-encode to a frame that decodes to the same message.
#![no_main]

use eboardd::protocol::{Decoder, Message};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The first byte chooses the read size, the rest is the stream.
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
});
