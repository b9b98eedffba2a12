//! eboardd: a DGT-style electronic chess board and its clock, published on D-Bus.
//!
//! The pipeline, pure in the middle:
//!
//! ```text
//! serial bytes ─► dgt driver ─► BoardInput ─► Session (pure) ─► Event ─► D-Bus / journal / PGN
//!                 (framing, resync)               tracker + clock           (async shell, thin)
//!                                                 + arbiter + game
//! ```
//!
//! The pure middle is the `eboard-core` crate (`crates/core`), which depends on no runtime and
//! does no I/O; this crate is the shells around it: the daemon, the D-Bus client, the bridges,
//! the MQTT side and `eboardctl`. Each module has one path: the core's are named through the
//! core's crate (`eboard_core::tracker`), the simulator's through its own (`eboard_sim`), never
//! re-exported here. See `ARCHITECTURE.md` for the codemap and invariants.

pub mod bounded_read;
pub mod bridge;
pub mod bus_choice;
pub mod cli;
pub mod client;
pub mod daemon;
pub mod mqtt;
