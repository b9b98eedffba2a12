//! Fuzz the host → board command parser the board simulator uses: no panic, every byte ends
//! up in a command, a rejection or the pending buffer, and parsed commands re-encode to a
//! frame that parses to the same command.
#![no_main]

use eboardd::protocol::{CommandDecoder, parse_command};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
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
});
