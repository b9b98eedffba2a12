//! Fuzz the path of a board's bytes to the bus: decoder, session, publication. The property
//! (no panic; every signal argument and rendered property is a D-Bus string that the last
//! check need not fix; the board's texts are printable) is `properties::session`, which the
//! stable loop `tests/fuzz_stable.rs` runs too.
#![no_main]

#[path = "../properties.rs"]
mod properties;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| properties::session(data));
