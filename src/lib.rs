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
//! the MQTT side and `eboardctl`. The core's modules are re-exported here under their own
//! names, so a shell names `crate::tracker` and a test `eboardd::tracker` as before. See
//! `ARCHITECTURE.md` for the codemap and invariants.

pub use eboard_core::{
    arbiter, board, board_input, capture, chesslink, clock_tags, contract, dgt, event, game, gap,
    identity, link, patch, pgn, session, tracker, vocab,
};
/// The simulated board (`crates/sim`), in builds with the `sim` feature (the default).
#[cfg(feature = "sim")]
pub use eboard_sim as sim;

pub mod bounded_read;
pub mod bridge;
pub mod bus_choice;
pub mod cli;
pub mod client;
pub mod daemon;
pub mod mqtt;
