//! What the link machine asks of its shell and tells it: the [`Output`]s (open or close the
//! port, write these bytes, feed the session, answer a clock request, a fact for the log),
//! why a link was lost ([`Lost`]) and why a clock message was refused ([`ClockRefusal`]).

use std::fmt;
use std::io;

use crate::dgt::clock_channel::MessageError;
use crate::session::{BoardRequest, Input};
use crate::vocab::Millis;

/// One thing for the shell to do or know, in the order the machine produced them.
#[derive(Debug)]
pub enum Output {
    /// Open the port; answer with [`super::Link::on_opened`] or [`super::Link::on_open_failed`].
    Open,
    /// Close the port (the link is lost; the machine has forgotten it already).
    Close,
    /// Write these bytes to the port; a failure is [`super::Link::on_write_failed`].
    Write(Vec<u8>),
    /// Feed this to the board's `Session` at the time of the call that produced it.
    Session(Input),
    /// A clock message asked for with [`super::Link::show_clock_message`] is on the display
    /// (`Ok`) or could not be shown.
    Clock {
        request: u64,
        result: Result<(), MessageError>,
    },
    /// Something worth a line in the log (and, for some, in the recording).
    Fact(Fact),
}

/// What happened on the link, for the log. The machine decides what is worth saying and
/// how loudly (see [`Fact::OpenFailed`]); the shell only prints.
#[derive(Debug)]
pub enum Fact {
    /// The port is open (the handshake follows unless listen-only).
    PortOpened,
    /// The port could not be opened; `first` is true for the first failure in a row, so a
    /// board left unplugged is said once loudly and then quietly.
    OpenFailed { error: io::Error, first: bool },
    /// The board's first complete message since the port opened: it is connected.
    Answers,
    /// Bytes that are not part of a board message were skipped.
    Skipped(u64),
    /// The board's text (a serial number, its trademark) held this many bytes that are not
    /// printable ASCII; they are shown as `?` (see `dgt::DecoderStats`).
    UnprintableText(u64),
    /// A frame was cut on the line while connected: the whole board is read again.
    FrameLost,
    /// The session's request is sent to the board.
    Asking(BoardRequest),
    /// The link is lost; the port is closed and reopened after the backoff.
    Lost(Lost),
}

/// Why a link was closed.
#[derive(Debug)]
pub enum Lost {
    /// The device went away (a read of zero bytes).
    Eof,
    /// Reading or writing failed.
    Io(io::Error),
    /// Nothing was heard for this long, probes included (never when listen-only).
    Silent(Millis),
}

impl fmt::Display for Lost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Lost::Eof => f.write_str("the device went away (end of file)"),
            Lost::Io(e) => write!(f, "serial I/O error: {e}"),
            Lost::Silent(ms) => write!(f, "no answer for {:.1} s", *ms as f64 / 1000.0),
        }
    }
}

/// Why a clock message is not even queued.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClockRefusal {
    /// The link never writes, so nothing can reach the clock.
    #[error("the link is listen-only")]
    ListenOnly,
    /// No board answers on the link.
    #[error("the board is not connected")]
    NotConnected,
    /// The board answers but no clock reports through it.
    #[error("no clock reports through the board")]
    NoClock,
    /// The text cannot be shown on this clock.
    #[error(transparent)]
    Invalid(MessageError),
}
