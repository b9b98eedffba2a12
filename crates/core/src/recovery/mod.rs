//! The recovery: one board's way back from "the record and the board part" to a record that
//! explains the board, recovered without ever accusing a player. A machine of its own
//! ([`Recovery`]): the session holds one, feeds it what it must see
//! ([`Recovery::handle_message`], [`Recovery::handle_tick`], …), asks it when it next needs
//! time to pass ([`Recovery::next_wakeup`]) and what the board should be asked
//! ([`Recovery::poll_request`]). Its states are in `state.rs`, every transition between them
//! in `machine.rs` (the table in ARCHITECTURE.md, "Recovery").
//!
//! Whatever parted the record from the board, recovery explains the board from the last
//! position the record is sure of, through what was read since, and asks the arbiter only
//! when that leaves several answers:
//!
//! - nothing was read (link down, daemon not running, a frame lost): a gap, the board held
//!   back from the tracker and the arbiter (nothing that happened unseen can become an
//!   illegal placement, a press without a move or a "stood" illegal move), searched when
//!   read, the board's memory asked for;
//! - the board was read all along but its still board is explained by several stories the
//!   readings cannot tell apart: the tracker still fed (the next move usually settles it),
//!   the stories listed for `ResolveGap` meanwhile.
//!
//! The tools it uses, pure and separately tested:
//! - [`memory`]: the board's own EEPROM log (DGT_MSG_EE_MOVES) replayed through a copy of the
//!   tracker from the last position the daemon knew, with the clock times of its time tags;
//! - the search ([`crate::tracker::sequences`]): without usable memory, the legal sequences
//!   from the last known position to the board, shortest first. Exactly one (proven) is
//!   published; several wait for the arbiter; none continues from the board;
//! - [`clock`]: what the clock's times after the gap allow (how many plies, with an
//!   increment), so the search drops the stories the clock contradicts;
//! - [`proof`]: whether the search's single sequence is the gap's story — only when the
//!   clock bounds the plies made and no other length it allows reaches the board; else the
//!   memory or the arbiter decides.
//!
//! The recovery drives the game only through [`Host`], what the session lends it for a
//! transition: its tracker and arbiter, and the session's own way of applying what they say.
//! Pure: no I/O, no clock; time comes in as milliseconds.

pub mod clock;
mod evidence;
mod machine;
pub mod memory;
mod play;
pub mod proof;
mod reading;
mod reads;
mod resolve;
mod state;

use crate::arbiter::{Arbiter, Ruling};
use crate::board_input::ClockReading;
use crate::event::Event;
use crate::fact::Fact;
use crate::tracker::{ILLEGAL_SETTLE_MS, Tracker, TrackerEvent};
use crate::vocab::Millis;

pub use machine::Recovery;
pub use state::Cause;

/// How long the board's memory may take to arrive (a real board needs about 8 s at 9600
/// baud) before the search is used instead.
pub const MEMORY_WAIT_MS: Millis = 20_000;
/// How long after asking for the memory a single sequence found by the search waits for it
/// (the memory has the press times); past this the search's answer is published.
pub const MEMORY_GRACE_MS: Millis = 600;
/// A reading that stood this long is a position (a piece put down, not one in hand), as for
/// the tracker: a sequence found on it may be published. So may one found at a clock press
/// (the mover says the move is done); one found on any other reading (the first board after
/// the link is back may catch a piece in hand) waits for one of those.
pub const SETTLED_MS: Millis = ILLEGAL_SETTLE_MS;
/// A reading with fewer pieces than the known position may be a capture made in the gap, or
/// a piece held in hand: a 6-ply story of captures can explain a lifted knight. Such a
/// reading counts as a position only after standing this long (or at a press).
pub const FEWER_PIECES_SETTLED_MS: Millis = 3_000;
/// How long a board no legal sequence explains must stand still before play continues from
/// it (a piece held in hand is not a position).
pub const UNREACHABLE_SETTLE_MS: Millis = 10_000;
/// After the link is back, a whole board is asked for again if none came in this time...
pub const DUMP_AGAIN_MS: Millis = 3_000;
/// ...and without one after this long (a listen-only link cannot ask), the board's changes
/// are followed from what was known, as before the gap.
pub const DUMP_GIVE_UP_MS: Millis = 10_000;
/// How long a board the tracker holds several stories for must stand still before `Gap`
/// says so and lists them for the arbiter.
pub const STILL_ASK_MS: Millis = 2_000;

/// What the shell is asked to send to the board (see [`Recovery::poll_request`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoardRequest {
    /// DGT_SEND_EE_MOVES (0x49): the board's memory. A shell that cannot write (listen-only)
    /// answers with the session's `Input::MemoryUnavailable`.
    ReadMemory,
    /// DGT_SEND_BRD (0x42): a whole board.
    SendBoard,
}

/// What the session lends the recovery for one transition: the tracker and the arbiter it
/// reads and moves on, and the session's own way of applying what they report (so a move the
/// recovery publishes is announced, ruled on and journalled as any other).
pub trait Host {
    fn tracker(&self) -> &Tracker;
    fn tracker_mut(&mut self) -> &mut Tracker;
    fn arbiter(&self) -> &Arbiter;
    fn arbiter_mut(&mut self) -> &mut Arbiter;
    /// A game is on (begun and not finished): only then is anything recovered.
    fn game_on(&self) -> bool;
    /// The clock's witness is not used (the configuration's `gap_without_clock_witness`).
    fn without_clock_witness(&self) -> bool;
    /// The board's way round is learnt, not configured: the arbiter's moves may turn it.
    fn orientation_learnt(&self) -> bool;
    /// Apply what the tracker reported (moves, retractions, placements).
    fn apply_tracker(&mut self, events: Vec<TrackerEvent>, now: Millis, out: &mut Vec<Event>);
    /// Apply what the arbiter ruled.
    fn apply_arbiter(&mut self, rulings: Vec<Ruling>, out: &mut Vec<Event>);
    /// A gap closed: the clock is read afresh from `reading` (the one held back, if any);
    /// the lever's last position is forgotten, so it is no press.
    fn clock_after_gap(
        &mut self,
        reading: Option<&ClockReading>,
        now: Millis,
        out: &mut Vec<Event>,
    );
    /// A gap opened (or began again): what is read from now on is held back, so nothing
    /// read before it stands as an illegal move the opponent moved on from.
    fn hold_back(&mut self);
    /// Tell the log.
    fn report(&mut self, fact: Fact);
}
