//! `eboardctl` subcommands, one module each. The binary only parses arguments.
//!
//! The client talks to the daemon only through the D-Bus contract: board properties are read
//! in one `GetManagedObjects` call ([`client`]), converted once to plain values ([`crate::client::props`]) and
//! rendered by pure functions ([`render`], [`watch::screen`]) that are unit-tested without a
//! bus. Failures are [`CtlError`] values that carry their exit code.

pub mod broadcast;
pub mod client;
pub mod decode;
pub mod doctor;
pub mod escape;
pub mod list;
pub mod livechess;
pub mod pairings;
pub mod pgn;
pub mod relay;
pub mod render;
#[cfg(feature = "sim")]
pub mod replay;
pub mod serve;
#[cfg(feature = "sim")]
pub mod simulate;
#[cfg(feature = "sim")]
pub mod simulate_args;
#[cfg(feature = "sim")]
pub mod simulate_chesslink;
#[cfg(feature = "sim")]
pub mod simulate_end;
pub mod status;
pub mod verbs;
pub mod watch;

use std::io::Write;

use crate::cli::client::Client;
use crate::client::bus::{self, BusChoice};
use crate::client::error::CtlError;

/// Options every subcommand shares.
#[derive(Debug, Clone, Default)]
pub struct Globals {
    pub bus: BusChoice,
    pub json: bool,
}

/// The runtime of a long-running bridge (`serve`, `livechess`): two worker threads.
pub fn bridge_runtime() -> Result<tokio::runtime::Runtime, CtlError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CtlError::Other(format!("cannot start the async runtime: {e}")))
}

/// Connects to the bus the globals name.
pub async fn client(globals: &Globals) -> Result<Client, CtlError> {
    let conn = bus::connect(&globals.bus).await?;
    Ok(Client {
        conn,
        bus: globals.bus.to_string(),
    })
}

// ----- The one way eboardctl prints ------------------------------------------------------
//
// Every line eboardctl writes — results, progress, errors — goes through [`print_text`],
// [`print_line`], [`say`] or [`print_error`], which all pass it through
// [`escape::for_terminal`]: text from outside (board names, tags, serial numbers, names in a
// pairings file or a PGN, a path, a daemon's error message) can never steer the terminal. The
// full-screen `watch` is the one other writer: its frames are the view's own escape sequences,
// and the text in them is escaped before it reaches the view ([`escape::watch_event`]).
// `tests/ctl_bounds.rs` checks that no other printing is left in the client's sources.

/// Writes `text` and a newline to `out`, escaped for `lines`.
fn write_escaped(
    mut out: impl Write,
    text: &str,
    lines: escape::Lines,
) -> Result<(), std::io::Error> {
    let text = escape::for_terminal(text, lines);
    writeln!(out, "{text}").and_then(|()| out.flush())
}

/// Writes `text` and a newline to stdout, control characters that are not line breaks
/// escaped ([`escape::for_terminal`]): the last line of defence for whatever text from outside
/// a command prints. A closed pipe (`eboardctl pgn b | head`) is not an error worth reporting.
pub fn print_text(text: &str) -> Result<(), CtlError> {
    match write_escaped(std::io::stdout().lock(), text, escape::Lines::Keep) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(CtlError::Other(format!("writing to stdout: {e}"))),
    }
}

/// Writes one line to stdout with every control character escaped, line breaks too (one
/// event, one line); `false` when stdout is gone (the reader went away: nothing left to do).
pub fn print_line(text: &str) -> bool {
    write_escaped(std::io::stdout().lock(), text, escape::Lines::One).is_ok()
}

/// A progress line on stdout (`simulate`, `replay`): escaped like [`print_text`]; a closed
/// stdout does not stop the work it reports on.
pub fn say(text: &str) {
    let _ = print_text(text);
}

/// Writes `text` and a newline to stderr, escaped like [`print_text`]: how every error and
/// warning eboardctl shows is printed, since a daemon's message or a name in a file may hold
/// anything.
pub fn print_error(text: &str) {
    let _ = write_escaped(std::io::stderr().lock(), text, escape::Lines::Keep);
}

/// Writes one JSON value on one line to stdout.
pub fn print_json(value: &serde_json::Value) -> Result<(), CtlError> {
    print_text(&value.to_string())
}
