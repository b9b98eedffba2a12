//! The serial link of one board as a pure state machine, the shape quinn-proto gives a
//! connection: bytes, port events and requests go in with the time as an argument
//! (`now: Millis`); what to write, when to open or close the port, what to feed the
//! `Session` and when to be woken next come out. No I/O, no async, no OS clock: the
//! daemon's board task (`daemon/board.rs`) only opens the port, moves bytes both ways and
//! sleeps until [`Link::poll_timeout`], so probe, handshake, watchdog, reconnect backoff,
//! listen-only and the clock channel's one command in flight are unit tests that drive
//! minutes of link time in microseconds.
//!
//! - `machine`: the [`Link`] and its timing constants;
//! - `idle_tick`: when a session waiting on nothing is ticked anyway ([`IdleTick`]), the one
//!   rule the daemon's link, the simulator's rig and `eboardctl decode` follow;
//! - `output`: what it asks and tells ([`Output`], [`Fact`], [`Lost`], [`ClockRefusal`]);
//! - `driver`: the board protocols ([`Protocol`], [`Driver`]) and their serial line
//!   ([`LineSettings`]); the DGT one lives in `crate::dgt::driver`.

mod driver;
mod idle_tick;
mod machine;
mod output;

pub use crate::dgt::driver::{Reader, handshake, probe};
pub use driver::{Driver, LineSettings, LineStats, Parity, Protocol};
pub use idle_tick::{IDLE_TICK_MS, IdleTick, QUIET_TICK_MS};
pub use machine::{
    BACKOFF_MAX_MS, BACKOFF_MIN_MS, BATTERY_POLL_MS, CONFIRM_ASK_MS, HANDSHAKE_GAP_MS,
    LOST_AFTER_MS, Link, OPEN_SETTLE_MS, PROBE_AFTER_MS, SessionTimer, TICK_MS, TICK_SLOTS,
};
pub use output::{ClockRefusal, Fact, Lost, Output};
