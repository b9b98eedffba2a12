//! A virtual DGT board + clock (behind a pty) and the human-handling generator.
pub mod clock;
pub mod handling;
pub mod pgn;
pub mod pty;
pub mod scenario;
pub mod virtual_board;
