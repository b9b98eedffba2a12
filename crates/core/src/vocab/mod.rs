//! The shared words of eboardd: time on the caller's clock, the settings a board plays by
//! (rules, edition, variant, clock side, orientation) and the words of a game (player,
//! result, termination, claim kind, a `Round` tag's round and board), plus the core's reasons
//! for refusing a command.
//!
//! A leaf: it depends on nothing else in the crate, so every core module (tracker, arbiter,
//! game, session, gap, patch) can use it without an import cycle. Every word is a small
//! `Copy` enum that displays, parses ([`std::str::FromStr`], failing with [`UnknownWord`],
//! which names the accepted words) and (de)serialises as exactly the string of the contract,
//! so journals and PGN written before these types existed read and write identically.
//! Strings are parsed into these types once, at the edges (D-Bus, configuration, journal);
//! inside, `match`es over them are exhaustive, so a new word cannot be silently mishandled.

#[macro_use]
mod words;
mod excerpt;
mod game;
mod refused;
mod round;
mod settings;
pub mod termination_serde;

pub use excerpt::{EXCERPT_CHARS, excerpt};
pub use game::{ClaimKind, GameResult, Player, Termination};
pub use refused::CommandError;
pub use round::{RoundBoard, parse_round};
pub use settings::{
    ClockPeriods, Edition, OrientationSetting, ProtocolSetting, Rules, Variant, WhiteDisplay,
};
pub use words::UnknownWord;

/// Milliseconds on the caller's monotonic clock. Only differences matter: the core never
/// reads a clock, time is an argument.
pub type Millis = u64;
