//! A proptest strategy for the clock's readings, shared by the protocol's property tests and
//! the arbiter's robustness test: a whole reading (flags and status any) from a strategy for
//! its displays (the protocol tests draw valid displays, the arbiter's test garbage ones too).

use eboard_core::dgt::message::{ClockReading, ClockStatus, DisplayFlags, DisplayTime};
use proptest::prelude::*;

fn display_flags() -> impl Strategy<Value = DisplayFlags> {
    any::<(bool, bool, bool)>().prop_map(|(flag_fallen, time_per_move, flag_shown)| DisplayFlags {
        flag_fallen,
        time_per_move,
        flag_shown,
    })
}

fn clock_status() -> impl Strategy<Value = ClockStatus> {
    any::<[bool; 6]>().prop_map(|b| ClockStatus {
        running: b[0],
        lever_left_down: b[1],
        battery_low: b[2],
        left_running: b[3],
        right_running: b[4],
        connected: b[5],
    })
}

/// A reading whose two displays are drawn from `display`.
pub fn clock_times<D>(display: impl Fn() -> D) -> impl Strategy<Value = ClockReading>
where
    D: Strategy<Value = DisplayTime>,
{
    (
        display(),
        display_flags(),
        display(),
        display_flags(),
        clock_status(),
    )
        .prop_map(
            |(right, right_flags, left, left_flags, status)| ClockReading {
                right,
                right_flags,
                left,
                left_flags,
                status,
            },
        )
}
