//! eboardd: a DGT-style electronic chess board and its clock, published on D-Bus.
//!
//! The pipeline, pure in the middle:
//!
//! ```text
//! serial bytes ─► protocol::Decoder ─► Message ─► Session (pure) ─► Event ─► D-Bus / journal / PGN
//!                 (framing, resync)               tracker + clock           (async shell, thin)
//!                                                 + arbiter + game
//! ```
//!
//! Everything outside [`daemon`], [`sim`]'s pty driver and [`cli`] is deterministic and does no
//! I/O: time is always passed in as a value, so every rule and every move-reconstruction case
//! is a plain unit test. See `ARCHITECTURE.md` for the codemap and invariants.

pub mod arbiter;
pub mod board;
pub mod bridge;
pub mod bus_choice;
pub mod capture;
pub mod cli;
pub mod client;
pub mod contract;
pub mod daemon;
pub mod game;
pub mod gap;
pub mod link;
pub mod mqtt;
pub mod patch;
pub mod protocol;
pub mod session;
pub mod sim;
pub mod tracker;
pub mod vocab;
