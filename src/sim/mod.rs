//! A virtual DGT board + clock (behind a pty) and the human-handling generator.
pub mod handling;
