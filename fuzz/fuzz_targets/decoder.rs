//! Fuzz the board → host decoder: any bytes, any chunking. The property (no panic, every byte
//! accounted for, independent of the chunking, decoded messages re-encode to themselves) is
//! `properties::decoder`, which the stable loop `tests/fuzz_stable.rs` runs too.
#![no_main]

#[path = "../properties.rs"]
mod properties;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| properties::decoder(data));
