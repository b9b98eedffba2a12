//! A virtual DGT e-board with a DGT 3000 clock behind a pty, and the human-handling generator.
pub mod clock;
pub mod pgn;
pub mod pty;
pub mod scenario;
pub mod virtual_board;
