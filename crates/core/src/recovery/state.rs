//! The recovery's states: what each knows, what the `Gap` property says in each and when
//! each needs time to pass. Pure data; the transitions between them are `machine.rs`'s.

use shakmaty::{Chess, Color, Move};

use super::{
    DUMP_AGAIN_MS, DUMP_GIVE_UP_MS, MEMORY_GRACE_MS, MEMORY_WAIT_MS, UNREACHABLE_SETTLE_MS, clock,
    proof,
};
use crate::board_input::{ClockReading, SquareContent};
use crate::tracker::Tracker;
use crate::tracker::sequences as search;
use crate::vocab::Millis;

/// Why nothing was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    Disconnected,
    NotRunning,
    LineLoss,
}

impl Cause {
    pub(super) fn text(self) -> &'static str {
        match self {
            Cause::Disconnected => "while the board was disconnected",
            Cause::NotRunning => "while eboardd was not running",
            Cause::LineLoss => "while bytes were lost on the line",
        }
    }
}

/// One board's recovery state (see the module documentation).
#[derive(Debug, Clone, Default)]
pub(super) enum State {
    #[default]
    Closed,
    /// Nothing was read for a while: the board is held back until it is explained.
    Gap(Box<Gap>),
    /// The board is read live, but several stories explain its still board.
    Asking(Asking),
    /// A gap closed (at this time) on a first board that was the known position with one
    /// move's pieces lifted: read live, the move begun being the tracker's. The gap is kept,
    /// its board read on: when no move comes of it and the board stands still, the pieces
    /// were taken during the gap (moves that came back to the known position but for what
    /// they captured), and it opens again.
    Begun(Box<Gap>, Millis),
    /// A gap closed (at this time) on a first board that was the known position itself: read
    /// live, the clock too, until the first move. Moves made during the gap may have come
    /// back to it (a repetition no reading tells): when the board then stands still out of
    /// sync, or the tracker judges it illegal, the gap opens again (the board's memory has
    /// what was made).
    Watched(Box<Gap>, Millis),
}

/// A gap: what is held back from the tracker and the arbiter while it is open.
#[derive(Debug, Clone)]
pub(super) struct Gap {
    pub(super) cause: Cause,
    /// The board as last read (wire order), once a whole board came.
    pub(super) sensed: Option<[SquareContent; 64]>,
    /// When `sensed` last changed.
    pub(super) last_change: Millis,
    /// The colour of the piece last set down, and when.
    pub(super) last_set_down: Option<(Color, Millis)>,
    /// The first whole board read after the gap (wire order): it stood on the table.
    pub(super) first_read: Option<[SquareContent; 64]>,
    /// The clock as last read before the gap.
    pub(super) clock_before: Option<clock::Reading>,
    /// The clock's latest reading since, held back from the arbiter, and when it came.
    pub(super) clock: Option<(ClockReading, Millis)>,
    /// The board's memory, asked for once per gap (searching or choosing meanwhile).
    pub(super) memory: Memory,
    pub(super) stage: Stage,
    /// The record's ply count and the side to move when the gap began: the clock's witness
    /// counts the plies since then, those published meanwhile too.
    pub(super) start: (usize, Color),
}

/// Where a gap stands.
#[derive(Debug, Clone)]
pub(super) enum Stage {
    /// Nothing read yet: waiting for a whole board.
    Unread {
        /// When the link came back (`None`: still down), and whether a whole board was
        /// asked for again since.
        link_up: Option<(Millis, bool)>,
    },
    /// Searching the legal sequences to the board at every press and settled reading.
    Search {
        /// The board change last searched on a position.
        tried: Option<Millis>,
        /// The board change the last search on a position ran on.
        trusted_at: Option<Millis>,
        finding: Finding,
    },
    /// Several stories: waiting for `ResolveGap`, each followed on as play goes on.
    Choose {
        /// The board the stories lead to (wire order).
        target: [SquareContent; 64],
        candidates: Vec<Candidate>,
        /// How many sequences the search found (more than listed), or `None`: too many to
        /// count (the search gave up).
        total: Option<u64>,
        /// The stories as the arbiter reads them (SAN and UCI), at most
        /// [`search::MAX_LISTED`].
        listed: Vec<String>,
        /// A single story that is not proven ([`proof::Verdict`]): why it is asked about.
        doubt: Option<proof::Verdict>,
    },
}

/// The board's memory, asked for once per gap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Memory {
    /// Not asked, or its answer came (or will not come).
    Settled,
    /// Asked at this time; `held_unique`: the search found one sequence on a position and
    /// waits for the memory's press times (see [`MEMORY_GRACE_MS`]).
    Asked { at: Millis, held_unique: bool },
}

/// What the last search told, as far as it did not end the gap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Finding {
    Nothing,
    /// One sequence, found on a board not yet known to be a position.
    Unique {
        plies: usize,
        line: String,
    },
    /// One sequence, on a position, that the evidence does not prove (more plies may have
    /// been made): the board's memory is awaited, then the arbiter is asked.
    Unproven {
        plies: usize,
        line: String,
    },
    /// No legal sequence within the search's reach.
    Unreachable,
    /// Nothing reaches the board and it is no playable position (a piece in hand).
    NoPosition,
}

/// One story the arbiter may choose, followed on as play goes on.
#[derive(Debug, Clone)]
pub(super) struct Candidate {
    pub(super) moves: Vec<Move>,
    /// A tracker standing after `moves`, fed the board since.
    pub(super) shadow: Tracker,
}

/// Several stories the tracker holds open for a still board it reads live.
#[derive(Debug, Clone)]
pub(super) struct Asking {
    /// The last position the record is sure of (before the stories part).
    pub(super) base: Chess,
    /// How many of the record's moves lead to `base`.
    pub(super) base_ply: usize,
    /// The stories from `base`, as the arbiter would give them to `ResolveGap`.
    pub(super) stories: Vec<Vec<Move>>,
}

impl State {
    pub(super) fn gap(&self) -> Option<&Gap> {
        match self {
            State::Gap(g) => Some(g),
            _ => None,
        }
    }

    pub(super) fn gap_mut(&mut self) -> Option<&mut Gap> {
        match self {
            State::Gap(g) => Some(g),
            _ => None,
        }
    }

    pub(super) fn stage_mut(&mut self) -> Option<&mut Stage> {
        self.gap_mut().map(|g| &mut g.stage)
    }

    pub(super) fn memory_mut(&mut self) -> Option<&mut Memory> {
        self.gap_mut().map(|g| &mut g.memory)
    }

    /// When a watched close (`Begun`, `Watched`) has stood still [`super::STILL_ASK_MS`]: since
    /// it closed, or since its board last changed.
    pub(super) fn watch_still_at(&self) -> Option<Millis> {
        match self {
            State::Begun(g, at) | State::Watched(g, at) => {
                Some((*at).max(g.last_change) + super::STILL_ASK_MS)
            }
            _ => None,
        }
    }

    /// The `Gap` property: derived from the state alone.
    pub(super) fn text(&self) -> String {
        match self {
            State::Closed | State::Begun(..) | State::Watched(..) => String::new(),
            State::Gap(g) => g.text(),
            State::Asking(a) => a.text(),
        }
    }
}

impl Gap {
    pub(super) fn new(
        cause: Cause,
        clock_before: Option<clock::Reading>,
        start: (usize, Color),
    ) -> Gap {
        Gap {
            start,
            cause,
            sensed: None,
            last_change: 0,
            last_set_down: None,
            first_read: None,
            clock_before,
            clock: None,
            memory: Memory::Settled,
            stage: Stage::Unread { link_up: None },
        }
    }

    /// A square read while the gap is open (`field` in wire order): whether it changed the
    /// board as sensed (nothing does before a whole board came).
    pub(super) fn set_square(&mut self, field: u8, content: SquareContent, now: Millis) -> bool {
        let Some(slot) = self
            .sensed
            .as_mut()
            .and_then(|s| s.get_mut(usize::from(field)))
        else {
            return false;
        };
        if *slot == content {
            return false;
        }
        *slot = content;
        self.last_change = now;
        if let Some(piece) = content {
            self.last_set_down = Some((piece.color, now));
        }
        true
    }

    /// A whole board read while the gap is open (or watched): a board that differs from the
    /// one sensed is a change.
    pub(super) fn set_board(&mut self, fields: &[SquareContent; 64], now: Millis) {
        if self.sensed.as_ref() != Some(fields) {
            self.last_change = now;
        }
        self.sensed = Some(*fields);
    }

    fn text(&self) -> String {
        let cause = self.cause.text();
        match &self.stage {
            // Nothing is known yet: maybe nothing happened.
            Stage::Unread { .. } => String::new(),
            Stage::Search { finding, .. } => match finding {
                Finding::Nothing if matches!(self.memory, Memory::Asked { .. }) => format!(
                    "moves were made {cause}: reading the board's memory and searching the legal sequences to the board"
                ),
                Finding::Nothing => {
                    format!("moves were made {cause}: searching the legal sequences to the board")
                }
                Finding::Unique { plies: n, line } => format!(
                    "moves were made {cause}: {} explain the board ({line}), once it shows a position",
                    plies(*n)
                ),
                Finding::Unproven { plies: n, line } => format!(
                    "moves were made {cause}: {} reach the board ({line}), but nothing shows that no more were made; reading the board's memory",
                    plies(*n)
                ),
                Finding::Unreachable => format!(
                    "moves were made {cause}: no legal sequence of up to {} plies reaches the board; waiting for the arbiter (ResolveGap), or for the board to stand still",
                    search::MAX_PLIES
                ),
                Finding::NoPosition => format!(
                    "moves were made {cause}: the board shows no playable position (pieces in hand, impossible material); waiting for it, or for the arbiter (ResolveGap)"
                ),
            },
            Stage::Choose { total: None, .. } => format!(
                "moves were made {cause}: too many sequences explain the board; waiting for the arbiter (ResolveGap)"
            ),
            Stage::Choose {
                listed,
                doubt: Some(doubt),
                ..
            } => {
                let why = match doubt {
                    proof::Verdict::Rivals => {
                        "another number of plies the clock allows reaches it too"
                    }
                    proof::Verdict::Begun => {
                        "fewer plies reach it with the next move begun (a piece may be in a hand)"
                    }
                    _ => {
                        "nothing bounds how many plies were made (the clock has no increment to count presses by, the board's memory does not cover the gap), and more than these may have been"
                    }
                };
                format!(
                    "moves were made {cause}: the shortest legal sequence reaches the board, but {why}: waiting for the arbiter (ResolveGap): {}",
                    listed.join("; ")
                )
            }
            Stage::Choose {
                total: Some(total),
                listed,
                ..
            } => {
                let more = if *total > listed.len() as u64 {
                    format!("; {} more", total - listed.len() as u64)
                } else {
                    String::new()
                };
                format!(
                    "{total} sequences explain the board: waiting for the arbiter (ResolveGap): {}{more}",
                    listed.join("; ")
                )
            }
        }
    }

    /// When the gap next needs time to pass (part of [`super::Recovery::next_wakeup`]);
    /// `settle_ms`: how long the board as sensed must stand to count as a position.
    pub(super) fn deadline(&self, settle_ms: Millis) -> Option<Millis> {
        let memory_due = match self.memory {
            Memory::Asked {
                at,
                held_unique: true,
            } => Some(at + MEMORY_GRACE_MS),
            Memory::Asked { at, .. } => Some(at + MEMORY_WAIT_MS),
            Memory::Settled => None,
        };
        let stage_due = match &self.stage {
            Stage::Unread {
                link_up: Some((up, asked_again)),
            } => Some(
                up + if *asked_again {
                    DUMP_GIVE_UP_MS
                } else {
                    DUMP_AGAIN_MS
                },
            ),
            Stage::Unread { link_up: None } => None,
            Stage::Search { tried, finding, .. } => {
                if *tried != Some(self.last_change) {
                    Some(self.last_change + settle_ms)
                } else if self.memory == Memory::Settled && *finding != Finding::NoPosition {
                    // Searched, and nothing reached it: play continues from it once it
                    // has stood this long (a board that is no position waits for a change).
                    Some(self.last_change + UNREACHABLE_SETTLE_MS)
                } else {
                    None
                }
            }
            Stage::Choose { candidates, .. } => candidates
                .iter()
                .filter_map(|c| c.shadow.next_wakeup())
                .min(),
        };
        [memory_due, stage_due].into_iter().flatten().min()
    }
}

impl Asking {
    fn text(&self) -> String {
        format!(
            "the board stood still and {} move orders explain it, which the board cannot tell apart: waiting for the next move, or for the arbiter (ResolveGap): {}",
            self.stories.len(),
            listed(&self.base, &self.stories).join("; ")
        )
    }
}

/// Stories from `base` as the arbiter reads them, numbered: SAN, and the UCI `ResolveGap`
/// takes (at most [`search::MAX_LISTED`]).
pub(super) fn listed(base: &Chess, stories: &[Vec<Move>]) -> Vec<String> {
    stories
        .iter()
        .take(search::MAX_LISTED)
        .enumerate()
        .map(|(i, s)| {
            format!(
                "{}) {} [{}]",
                i + 1,
                search::san_line(base, s),
                search::uci_line(s)
            )
        })
        .collect()
}

pub(super) fn plies(n: usize) -> String {
    if n == 1 {
        "1 ply".into()
    } else {
        format!("{n} plies")
    }
}
