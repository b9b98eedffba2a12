//! What the players, the arbiter and the conductor share: per board, the game being played
//! (each ply as the board came to show it), the faults it went through, the daemon's `Gap`
//! and `Connected` as last read; and the figures each finished game comes to.

use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

/// Why the daemon could not read a board for a while.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The board was unplugged (no power: its memory has nothing for the gap).
    Unplug,
    /// The daemon was killed (-9) and started again (the board kept its power and memory).
    Kill,
}

/// One fault a board went through during a game.
#[derive(Debug, Clone)]
pub struct Episode {
    pub fault: Fault,
    /// When the daemon could read the board again (replugged; the restarted daemon has it
    /// connected): the moment the gap's plies were there to be read.
    pub ended: Option<Instant>,
    /// The arbiter answered a `ResolveGap` while this was the board's latest fault.
    pub asked: bool,
}

/// One ply of the game, as it was made on the board.
#[derive(Debug, Clone)]
pub struct Ply {
    pub uci: String,
    /// Just before the last piece of the move was set down.
    pub placed: Instant,
    /// The fault (index in [`BoardState::episodes`]) during which it was made, if any.
    pub episode: Option<usize>,
    /// When it was made, a fault was under way, or the daemon's `Gap` was open, or the record
    /// did not have the last fault's plies yet: the daemon may hold it until the gap closes.
    pub in_gap: bool,
}

impl Ply {
    /// When the daemon could first see the ply: when it was made, or for a ply made during a
    /// fault, when that fault ended.
    pub fn shown(&self, episodes: &[Episode]) -> Option<Instant> {
        match self.episode {
            None => Some(self.placed),
            Some(e) => episodes.get(e).and_then(|e| e.ended),
        }
    }
}

/// One board's state.
#[derive(Debug, Default)]
pub struct BoardState {
    /// A game is in progress (not between games, not checking the record).
    pub playing: bool,
    pub unplugged: bool,
    /// The daemon's `Gap` property as last read ("" also while it could not be read).
    pub gap: String,
    /// The daemon's `Connected` property as last read.
    pub connected: bool,
    /// Plies in the daemon's `Moves` property as last read.
    pub recorded: usize,
    /// The plies of the current game, in order.
    pub plies: Vec<Ply>,
    /// The faults of the current game.
    pub episodes: Vec<Episode>,
    /// `ResolveGap` calls accepted / refused during the current game, and of the accepted
    /// those for a gap that did not wait for the arbiter (no legal sequence explained it).
    pub asked: u64,
    pub refused: u64,
    pub stepped_in: u64,
}

impl BoardState {
    /// The fault under way, if any.
    pub fn open_episode(&self) -> Option<usize> {
        self.episodes
            .iter()
            .rposition(|e| e.ended.is_none())
            .filter(|&i| i + 1 == self.episodes.len())
    }

    /// The record (as last read) has every ply of the last fault.
    pub fn caught_up(&self) -> bool {
        let last = self.episodes.len().checked_sub(1);
        self.plies
            .iter()
            .rposition(|p| last.is_some() && p.episode == last)
            .is_none_or(|n| self.recorded > n)
    }

    /// Nothing is wrong with this board now: no fault under way, the daemon has it connected,
    /// no gap open and the plies of the last fault in its record, and at least `plies_since`
    /// plies were made since the last fault ended. One fault at a time.
    pub fn quiet(&self, plies_since: usize) -> bool {
        let caught_up = self.caught_up();
        let since_last = match self.episodes.len() {
            0 => usize::MAX,
            n => self
                .plies
                .iter()
                .rev()
                .take_while(|p| p.episode.is_none_or(|e| e + 1 < n))
                .count(),
        };
        self.playing
            && caught_up
            && !self.unplugged
            && self.connected
            && self.gap.is_empty()
            && self.open_episode().is_none()
            && since_last >= plies_since
    }
}

/// Everything shared, behind one lock.
#[derive(Debug, Default)]
pub struct Hall {
    pub boards: Vec<BoardState>,
    /// The daemon is killed or not yet back with every board.
    pub daemon_down: bool,
    /// The conductor's time to kill has come: no new unplug until it has.
    pub kill_due: bool,
    /// Every player has stopped.
    pub finished: bool,
}

/// The shared [`Hall`].
#[derive(Debug, Default)]
pub struct Shared(Mutex<Hall>);

impl Shared {
    pub fn new(boards: usize) -> Shared {
        let mut hall = Hall::default();
        hall.boards.resize_with(boards, BoardState::default);
        Shared(Mutex::new(hall))
    }

    pub fn lock(&self) -> MutexGuard<'_, Hall> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The pace a board plays at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Speed {
    Blitz,
    Bullet,
    /// Bullet at 0.1–0.3 s a ply: a kill leaves a dozen plies unseen.
    Fast,
}

impl Speed {
    pub fn name(self) -> &'static str {
        match self {
            Speed::Blitz => "blitz",
            Speed::Bullet => "bullet",
            Speed::Fast => "fast",
        }
    }
}

/// The longest stall and where it was.
#[derive(Debug, Clone, Default)]
pub struct Stall {
    pub ms: u64,
    pub what: String,
}

impl Stall {
    fn keep_longer(&mut self, ms: u64, what: &str) {
        if !what.is_empty() && (ms > self.ms || self.what.is_empty()) {
            *self = Stall {
                ms,
                what: what.to_owned(),
            };
        }
    }
}

/// What games came to.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    pub games: u64,
    /// Games whose final record is the game played (or, ended by the Laws, its beginning).
    pub exact: u64,
    /// Games the Laws ended before the corpus game did (the record is its beginning).
    pub ended_by_law: u64,
    pub plies: u64,
    pub ply_ms_total: u64,
    pub unplugs: u64,
    /// Board-games hit by a daemon kill (one kill hits every board).
    pub kills: u64,
    /// Plies made while a board was unplugged or the daemon down.
    pub gap_plies: u64,
    /// Gap plies in the final record with no `ResolveGap` in their fault.
    pub recovered: u64,
    /// Gap plies in the final record of a fault the arbiter answered.
    pub by_arbiter: u64,
    /// `ResolveGap` calls accepted / refused; of the accepted, those unasked.
    pub asked: u64,
    pub refused: u64,
    pub stepped_in: u64,
    /// Plies played missing or wrong in the final `Moves`.
    pub lost: u64,
    /// Games whose final `Moves` holds a ply that was not played (a game not played).
    pub wrong: u64,
    /// Plies that never had a matching `MovePlayed` (the record got them otherwise).
    pub unsignalled: u64,
    pub false_accusations: u64,
    pub stall: Stall,
    /// The longest of plies made with no fault under way and no gap open.
    pub stall_play: Stall,
    pub mistakes: Vec<String>,
}

impl Figures {
    pub fn add(&mut self, o: &Figures) {
        self.games += o.games;
        self.exact += o.exact;
        self.ended_by_law += o.ended_by_law;
        self.plies += o.plies;
        self.ply_ms_total += o.ply_ms_total;
        self.unplugs += o.unplugs;
        self.kills += o.kills;
        self.gap_plies += o.gap_plies;
        self.recovered += o.recovered;
        self.by_arbiter += o.by_arbiter;
        self.asked += o.asked;
        self.refused += o.refused;
        self.stepped_in += o.stepped_in;
        self.lost += o.lost;
        self.wrong += o.wrong;
        self.unsignalled += o.unsignalled;
        self.false_accusations += o.false_accusations;
        self.stall.keep_longer(o.stall.ms, &o.stall.what);
        self.stall_play
            .keep_longer(o.stall_play.ms, &o.stall_play.what);
        self.mistakes.extend(o.mistakes.iter().cloned());
    }

    /// A ply (`what`) that waited `ms` to be published; `gap`: it was made during a fault or
    /// while a gap was open.
    pub fn note_stall(&mut self, ms: u64, what: &str, gap: bool) {
        self.stall.keep_longer(ms, what);
        if !gap {
            self.stall_play.keep_longer(ms, what);
        }
    }
}
