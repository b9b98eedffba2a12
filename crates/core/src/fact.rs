//! What the session and its recovery did that the daemon's log should tell: reported as
//! values, never logged here. The core does no I/O; the board task drains these
//! (`Session::poll_fact`) after every input and writes them to its log at [`Fact::level`].
//! A module of its own, so the session and the recovery both report without naming each other.

use std::fmt;

/// How loud a [`Fact`] is in the daemon's log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Recovery going as designed.
    Info,
    /// Something the operator may want to look at: a record part dropped, an ambiguity.
    Warn,
}

/// One thing the session did or found, for the daemon's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fact {
    /// A journalled record patch did not apply on restore; later patches are skipped too.
    PatchSkipped { error: String },
    /// The journalled game could not be restored; the session starts empty.
    RestoreFailed { reason: String },
    /// An illegal move stands, but the board cannot be read as a position to go on from.
    IllegalMoveUnreadable { error: String },
    /// The board's memory did not come in time: the search decides.
    MemoryNotCome,
    /// No whole board came after the link came back: its changes are followed from what
    /// was known.
    NoWholeBoard,
    /// The board changed while it was not read (`cause`): its memory is asked for.
    ReadingMemory { cause: &'static str },
    /// The board now does not follow from the `plies` moves in its memory: searching instead.
    MemoryContradicted { plies: usize },
    /// The lever presses the board's memory logged are not those of the movers its `plies`
    /// moves read from the record's side to move have: the side to move was not that one.
    MemoryPressesContradict { plies: usize },
    /// `plies` moves recovered from the board's memory.
    RecoveredFromMemory { plies: usize },
    /// The board's memory has nothing for the gap (`why`): searching.
    MemoryEmpty { why: String },
    /// The only legal sequence to the board (`line`, SAN) was recovered.
    RecoveredUnique { line: String },
    /// The moves of a gap are ambiguous: the arbiter is asked (`gap`, the property's text).
    Ambiguous { gap: String },
    /// One sequence reaches the board after a gap, but nothing proves no more plies were
    /// made: the arbiter is asked (`gap`, the property's text).
    Unproven { gap: String },
    /// The arbiter's moves reached the board read the other way round: its way round, learnt
    /// after a restart, is turned.
    TurnedByArbiter,
    /// The gap search gave up (`gap`, the property's text).
    SearchGaveUp { gap: String },
    /// Play continues from the board in a new segment (`note`, the record's comment).
    NewSegment { note: String },
    /// The arbiter resolved the gap with `line` (SAN).
    ResolvedByArbiter { line: String },
    /// A still board that several move orders explain: the arbiter is asked (`gap`).
    StillBoardAsks { gap: String },
    /// Recovered move `k` was not read as itself; the rest is left to the board.
    ReplayMisread { k: usize },
    /// A clock reading was never acted on (`reading`, its payload bytes in hex; `why`): noise
    /// on the clock's cable, or a reading the clock did not confirm.
    ClockReadingDropped { reading: String, why: &'static str },
}

impl Fact {
    pub fn level(&self) -> Level {
        match self {
            Fact::MemoryNotCome
            | Fact::ReadingMemory { .. }
            | Fact::RecoveredFromMemory { .. }
            | Fact::MemoryEmpty { .. }
            | Fact::RecoveredUnique { .. }
            | Fact::ResolvedByArbiter { .. } => Level::Info,
            _ => Level::Warn,
        }
    }
}

impl fmt::Display for Fact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fact::PatchSkipped { error } => {
                write!(f, "journalled game record patch skipped: {error}")
            }
            Fact::RestoreFailed { reason } => {
                write!(f, "journalled game could not be restored; starting empty: {reason}")
            }
            Fact::IllegalMoveUnreadable { error } => write!(
                f,
                "an illegal move stands but the board cannot be read as a position: {error}"
            ),
            Fact::MemoryNotCome => f.write_str("the board's memory did not come: the search decides"),
            Fact::NoWholeBoard => f.write_str(
                "no whole board came after the link came back: following its changes from what was known",
            ),
            Fact::ReadingMemory { cause } => write!(
                f,
                "the board changed while it was not read ({cause}): reading its memory"
            ),
            Fact::MemoryContradicted { plies } => write!(
                f,
                "the board now does not follow from the {plies} moves in its memory: searching instead"
            ),
            Fact::MemoryPressesContradict { plies } => write!(
                f,
                "the clock presses in the board's memory are not those of the {plies} moves read from it: searching instead"
            ),
            Fact::RecoveredFromMemory { plies } => {
                write!(f, "{plies} moves recovered from the board's memory")
            }
            Fact::MemoryEmpty { why } => {
                write!(f, "the board's memory has nothing for the gap ({why}): searching")
            }
            Fact::RecoveredUnique { line } => {
                write!(f, "the only legal sequence to the board, recovered: {line}")
            }
            Fact::Ambiguous { gap } => write!(f, "moves made during a gap are ambiguous: {gap}"),
            Fact::SearchGaveUp { gap } => write!(f, "gap search gave up: {gap}"),
            Fact::TurnedByArbiter => f.write_str(
                "the arbiter's moves reach the board read the other way round: the board is turned",
            ),
            Fact::Unproven { gap } => {
                write!(f, "a gap's shortest sequence is not proven: {gap}")
            }
            Fact::NewSegment { note } => {
                write!(f, "play continues from the board in a new segment: {note}")
            }
            Fact::ResolvedByArbiter { line } => write!(f, "gap resolved by the arbiter: {line}"),
            Fact::StillBoardAsks { gap } => {
                write!(f, "the board stood still and is not explained: {gap}")
            }
            Fact::ReplayMisread { k } => write!(
                f,
                "recovered move {k} was not read as itself; the rest is left to the board"
            ),
            Fact::ClockReadingDropped { reading, why } => write!(
                f,
                "clock reading {reading} not acted on (noise on the clock's cable?): {why}"
            ),
        }
    }
}
