//! A simulated Millennium ChessLink board (eONE-like): the same games as on the DGT board,
//! played on a board that names every piece, has 81 LEDs and no clock.
//!
//! - [`board::MillenniumBoard`] — the pure state machine: pieces, option bytes (report
//!   mode, scan time, …, kept across power cycles as in the board's EEPROM), LEDs and the
//!   log of every LED state, scans every 2.048 ms × the scan time, replies after
//!   [`MillenniumOptions::reply_delay_ms`]. It reads the host's commands with the core's
//!   [`CommandDecoder`](eboard_core::chesslink::CommandDecoder) (a command with a wrong
//!   parity bit or check gets no reply, as on the real board) and sends every reply and
//!   report with its parity bits and check.
//! - [`pty`] — [`ChessLinkSim::spawn`] puts it behind a pseudo-terminal with the DGT
//!   simulator's port, link and time base: unplug and replug, stepped or scaled time, a tap
//!   of everything written. [`ChessLinkHandle::hand`] carries out the DGT simulator's
//!   hands ([`Handling`](crate::handling::Handling) sensor steps), so the same games and
//!   the same human noise play on both families.
//!
//! Report modes (option byte 02) as the maker describes them: after every scan (the
//! default: about 24 reports a second until a host changes it), off (only on `S`), every
//! N × 4.096 ms, on any change, or on a change read the same on 2–5 scans in a row.

pub mod board;
pub mod pty;

pub use board::{MillenniumBoard, MillenniumOptions, MillenniumStats, RESET_MS};
pub use pty::{
    ChessLinkAction, ChessLinkHandle, ChessLinkSim, ChessLinkSimOptions, ChessLinkSnapshot,
};

#[cfg(test)]
mod codec_props;
#[cfg(test)]
mod pty_tests;
