//! Fuzz the host → board command parser the board simulator uses. The property (no panic,
//! every byte in a command, a rejection or the pending buffer, parsed commands re-encode to
//! themselves) is `properties::commands`, which the stable loop `tests/fuzz_stable.rs` runs too.
#![no_main]

#[path = "../properties.rs"]
mod properties;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| properties::commands(data));
