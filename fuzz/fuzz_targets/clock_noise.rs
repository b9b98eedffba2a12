//! Fuzz the clock's noise: up to four BWTIME frames of any payload placed between the frames
//! of a recorded game never change its record (`properties::clock_noise`, which the stable
//! loop `tests/fuzz_stable.rs` runs too).
#![no_main]

#[path = "../properties.rs"]
mod properties;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| properties::clock_noise(data));
