//! Gaps in what was read from a board: the moves made while nothing was read (link down,
//! daemon not running, bytes lost on the line), recovered without ever accusing a player.
//!
//! Two pure tools, used by the session's gap state (`session/gap.rs`):
//! - [`memory`]: the board's own EEPROM log (DGT_MSG_EE_MOVES) replayed through a copy of the
//!   tracker from the last position the daemon knew, with the clock times of its time tags;
//! - [`search`] (the tracker's [`crate::tracker::sequences`]): without usable memory, the
//!   legal sequences (at most [`search::MAX_PLIES`]) from the last known position to the
//!   board, shortest first. Exactly one is published;
//!   several wait for the arbiter; none continues from the board;
//! - [`clock`]: what the clock's times after the gap allow (how many plies, with an
//!   increment), so the search drops the stories the clock contradicts;
//! - [`proof`]: whether the search's single sequence is the gap's story — only when the
//!   clock bounds the plies made and no other length it allows reaches the board; else the
//!   memory or the arbiter decides.
//!
//! Pure: no I/O, no clock; time comes in as milliseconds.

pub mod clock;
pub mod memory;
pub mod proof;
pub mod search;
