//! The session's outputs besides its events: the board's properties re-rendered after every
//! input, and the game record journalled as a snapshot or a patch when it changed.

use super::*;
use crate::clock_tags::{ClockReading, ClockTags};

impl Session {
    /// After a command changed the record's position, make the tracker follow it.
    pub(super) fn follow_record_on_board(&mut self, _was_finished: bool) {
        if self.tracker.position() != self.arbiter.position() {
            let _ = self.tracker.set_position(self.arbiter.position().clone());
        }
    }

    /// Journal the game record whenever it changed, after the events of the same input (a
    /// `GameStarted` resets the record on restore, so the record must follow it). Clock
    /// stamps alone do not count (see [`RecordSignature`]): they ride with the next record,
    /// which saves a synced write per clock press.
    ///
    /// A new game (and the first change after a restore) gets a whole snapshot; every other
    /// change a [`Patch`] from the record as journalled, checked by applying it: if it does
    /// not rebuild the record exactly, a snapshot is journalled instead.
    pub(super) fn journal_snapshot(&mut self, out: &mut Vec<Event>) {
        let signature = RecordSignature::of(self.arbiter.game(), self.arbiter.position());
        let game_started = out.iter().any(|e| matches!(e, Event::GameStarted { .. }));
        if self.journalled == signature && !game_started {
            return;
        }
        self.journalled = signature;
        if !self.started {
            return;
        }
        let game = self.arbiter.game();
        let patched = match self.journalled_game.as_mut() {
            Some(base) if !game_started => {
                let patch = patch::diff(base, game);
                (patch.apply(base).is_ok() && base == game).then_some(patch)
            }
            _ => None,
        };
        out.push(Event::Record(match patched {
            Some(patch) => RecordFact::Patch { patch },
            None => {
                self.journalled_game = Some(game.clone());
                RecordFact::Snapshot { game: game.clone() }
            }
        }));
    }

    /// The clock as the clock tags may show it: connected, both times known, heard since the
    /// link came up (a restored session's clock is not, so a reading from before a restart is
    /// never shown as current), and no gap open (its readings wait for the gap's end: what
    /// the clock model holds meanwhile is from before it).
    fn clock_reading(&self) -> Option<ClockReading> {
        let clock = self.arbiter.clock();
        if !self.link_up || !self.clock_live || self.recovery.is_open() || !clock.has_times() {
            return None;
        }
        Some(ClockReading {
            white_ms: self.arbiter.white_ms(),
            black_ms: self.arbiter.black_ms(),
            running: clock.running(),
            at: clock.last_reading_at()?,
        })
    }

    pub(super) fn refresh_view(&mut self) {
        // The PGN text and the SAN list are the costly parts of the view: rebuild them only
        // when the record changed, not on every tick and clock reading.
        let pending = self.pending_plies();
        let clock_tags = self.clock_tags.observe(
            self.clock_reading(),
            self.wall_offset_ms,
            pending > 0,
            self.last_now,
        );
        let mut text_signature =
            TextSignature::of(self.arbiter.game(), self.arbiter.position(), pending);
        text_signature.clock_tags = clock_tags;
        let (pgn, moves) = if self.view_text.as_ref() == Some(&text_signature) {
            (
                std::mem::take(&mut self.view.pgn),
                std::mem::take(&mut self.view.moves),
            )
        } else {
            self.view_text = Some(text_signature);
            // `Pgn` is a broadcast output: final moves only. `Moves` follows `MovePlayed`.
            (
                self.arbiter
                    .game()
                    .pgn_final_with_clock(pending, clock_tags.as_ref()),
                self.arbiter.game().san_moves(),
            )
        };
        let placement = match self.recovery.placement(self) {
            Some(sensed) => sensed,
            None => self.view_texts.placement(self.tracker.placement()),
        };
        let fen = self.view_texts.fen(self.arbiter.position());
        let arbiter = &self.arbiter;
        let in_sync = fen.split_whitespace().next() == Some(placement.as_str());
        let state = if !self.started {
            "waiting"
        } else if arbiter.is_finished() {
            "finished"
        } else {
            "playing"
        };
        self.view = BoardProps {
            name: self.config.name.clone(),
            number: self.config.number,
            variant: self.config.variant.to_string(),
            port: self.config.port.clone(),
            connected: self.link_up,
            serial_number: self.identity.serial_number().to_owned(),
            firmware_version: self.identity.firmware_version().to_owned(),
            board_model: self
                .identity
                .model()
                .map_or_else(String::new, |m| m.to_string()),
            battery: self.identity.battery().into(),
            // Empty without a clock: a model named once stays unknown while none reports.
            clock_model: if arbiter.clock_connected() {
                self.identity
                    .clock_model()
                    .map_or_else(String::new, |m| m.contract_name().to_owned())
            } else {
                String::new()
            },
            rules: self.arbiter.config().rules.to_string(),
            edition: self.arbiter.config().edition.to_string(),
            state: state.into(),
            turn: color_name(arbiter.position().turn()).into(),
            moves,
            pgn,
            clock_connected: arbiter.clock_connected(),
            white_time_ms: arbiter.white_ms(),
            black_time_ms: arbiter.black_ms(),
            clock_running: arbiter.clock_running().into(),
            claims: arbiter
                .claims()
                .into_iter()
                .map(|(player, kind, detail)| Claim {
                    player: player.to_string(),
                    kind: kind.to_string(),
                    detail,
                })
                .collect(),
            pending_illegal: arbiter.pending_illegal().into(),
            illegal_moves: arbiter.illegal_counts().into(),
            gap: self.recovery.text(),
            result: arbiter.result().to_string(),
            termination: arbiter
                .termination()
                .map_or_else(String::new, |t| t.to_string()),
            fen,
            placement,
            in_sync,
        };
    }
}

/// The FEN of the record's position and the placement text, each kept with what it was
/// written from and written again only when that changed: the view is rebuilt after every
/// input (ten ticks a second per board), and most inputs move nothing. The keys are the
/// whole values the texts are made of (the position's setup with its counters, the
/// placement), compared exactly, so a text is never stale.
#[derive(Debug, Clone, Default)]
pub(super) struct TextCache {
    fen: Option<(shakmaty::Setup, String)>,
    placement: Option<(crate::board::Placement, String)>,
}

impl TextCache {
    /// The FEN of `position` as the `Fen` property shows it ([`crate::arbiter::fen_of`]).
    pub(super) fn fen(&mut self, position: &Chess) -> String {
        let setup = position.to_setup(shakmaty::EnPassantMode::Legal);
        match &self.fen {
            Some((key, text)) if *key == setup => text.clone(),
            _ => {
                let text = crate::arbiter::fen_of(position);
                self.fen = Some((setup, text.clone()));
                text
            }
        }
    }

    /// The placement's board FEN.
    pub(super) fn placement(&mut self, placement: crate::board::Placement) -> String {
        match &self.placement {
            Some((key, text)) if *key == placement => text.clone(),
            _ => {
                let text = placement.board_fen();
                self.placement = Some((placement, text.clone()));
                text
            }
        }
    }
}

/// What the journal must hold of a game record, cheaply compared: every move, result,
/// penalty, decision, illegal-move count and comment — everything but the clock stamp of the
/// last press, which the next snapshot carries (a crash can lose a `%clk`, never a move).
/// Tags and rules are journalled as their own facts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct RecordSignature {
    plies: usize,
    /// The position reached (a correction replaces a move without changing the count).
    position: u64,
    segments: usize,
    result: GameResult,
    termination: Option<Termination>,
    penalties: usize,
    decisions: usize,
    illegal_moves: (u32, u32),
    comments: usize,
}

impl RecordSignature {
    pub(super) fn of(game: &Game, position: &Chess) -> Self {
        let segment = game.segments.last();
        let comments = segment.map_or(0, |s| {
            s.intro.len() + s.moves.last().map_or(0, |m| m.comments.len())
        });
        RecordSignature {
            plies: game.ply_count(),
            position: position
                .zobrist_hash::<shakmaty::zobrist::Zobrist64>(shakmaty::EnPassantMode::Legal)
                .0,
            segments: game.segments.len(),
            result: game.result,
            termination: game.termination,
            penalties: game.penalties.len(),
            decisions: game.decisions.len(),
            illegal_moves: game.illegal_moves,
            comments,
        }
    }
}

/// What the PGN text and move list depend on: the record, the last clock stamp and the tags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TextSignature {
    record: RecordSignature,
    /// Moves left out of the PGN text because they are not final yet.
    pending: usize,
    last_clk_ms: Option<u64>,
    /// A hash of the tags (no allocation per input).
    tags: u64,
    /// The clock tags as published (they change with the clock, not only with a move).
    clock_tags: Option<ClockTags>,
}

impl TextSignature {
    pub(super) fn of(game: &Game, position: &Chess, pending: usize) -> Self {
        TextSignature {
            record: RecordSignature::of(game, position),
            pending,
            last_clk_ms: game.current_moves().last().and_then(|m| m.clk_ms),
            tags: {
                use std::hash::{Hash, Hasher};
                let mut hasher = std::collections::hash_map::DefaultHasher::new();
                game.tags.hash(&mut hasher);
                hasher.finish()
            },
            clock_tags: None,
        }
    }
}
