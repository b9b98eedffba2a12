//! eboardd's pure core: everything between the serial bytes and the events, with no I/O.
//!
//! ```text
//! serial bytes ─► link::Driver (dgt) ─► BoardInput ─► Session ─► Event ─► (the shells: D-Bus, journal, PGN, bridges)
//!                 (framing, resync)     (chess terms)  tracker + clock + arbiter + game + recovery
//! ```
//!
//! Nothing here reads a file, a socket or the OS clock, spawns a task or logs: time is always
//! passed in as a value and every outcome is returned as a value (events, requests to the
//! board, facts for the log), so every rule and every move-reconstruction case is a plain unit
//! test. This crate depends on chess and data crates only — the compiler keeps it pure.

pub mod arbiter;
pub mod board;
pub mod board_input;
pub mod capture;
pub mod chesslink;
pub mod clock_tags;
pub mod contract;
pub mod dgt;
pub mod event;
pub mod game;
pub mod gap;
pub mod identity;
pub mod link;
pub mod patch;
pub mod pgn;
pub mod session;
pub mod tracker;
pub mod vocab;
