//! The Millennium ChessLink wire codec (eONE, Exclusive with the ChessLink module, The King
//! Performance): line settings, framing and check characters, commands, replies and the
//! resynchronising decoder. Pure: bytes in, values out.
//!
//! ```text
//! host ── Command::encode ──► "W0203" + check ──► board
//! host ◄── Decoder (resync, parity, check) ◄── "v0103" "s…64 squares…" "w0203" + checks ── board
//! ```
//!
//! - [`line`](mod@line) — 38400 baud, 7 data bits, odd parity, 1 stop bit; the parity bit made by the
//!   host in bit 7 (8N1 port, the default) or by the UART (7O1); the block check (XOR of the
//!   7-bit characters as two upper-case hex digits).
//! - [`message`] — [`Command`] (version, status, LEDs, LEDs off, reset, option write/read)
//!   and [`Reply`] with their exact characters.
//! - [`decoder`] — [`Decoder`] (a board's replies) and [`CommandDecoder`] (a host's commands,
//!   for a simulated board), counting every dropped frame in [`DecoderStats`].
//! - [`squares`] — the 64 status characters as `Option<Piece>` and the two square orders
//!   ([`WireOrder`]); [`leds`] — the 81 corner LEDs and the `L` pattern.
//! - [`driver`] — the link's ChessLink driver ([`driver::ChessLink`]): handshake, probe,
//!   polling, statuses into the core's board input.
//! - [`settings`] — the option bytes (report mode, scan time, …) and what a driver writes at
//!   start ([`StartupSettings`]).
//!
//! The board has no clock and identifies every piece. Its option bytes survive power-off,
//! so whatever another program left (a report after every scan, a switched-off check) is
//! undone by writing [`StartupSettings`] after every connect.

pub mod decoder;
pub mod driver;
pub mod leds;
pub mod line;
pub mod message;
pub mod settings;
pub mod squares;

pub use decoder::{CommandDecoder, Decoder, DecoderStats, ParityCheck};
pub use leds::LedPattern;
pub use line::{LineSettings, ParityBy};
pub use message::{Command, Reply, Version};
pub use settings::{AutoReport, StartupSettings};
pub use squares::{Scan, WireOrder};

#[cfg(test)]
mod tests;
