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

    /// Journal the clock side when it is learnt (see [`RecordFact::ClockSide`]), after the
    /// events of the same input: after a `GameStarted`, which forgets it on restore.
    pub(super) fn journal_clock_side(&mut self, out: &mut Vec<Event>) {
        let side = self.arbiter.learned_white_display();
        if side == self.journalled_side || !self.started {
            return;
        }
        self.journalled_side = side;
        if let Some(white_display) = side {
            out.push(Event::Record(RecordFact::ClockSide { white_display }));
        }
    }

    /// The clock as the clock tags may show it: connected, both times known, heard since the
    /// link came up (a restored session's clock is not, so a reading from before a restart is
    /// never shown as current), and no gap open (its readings wait for the gap's end: what
    /// the clock model holds meanwhile is from before it).
    fn clock_reading(&self) -> Option<ClockReading> {
        let clock = self.arbiter.clock();
        if !self.link_up || !self.clock_live || self.recovery.holds_clock() || !clock.has_times() {
            return None;
        }
        Some(ClockReading {
            white_ms: self.arbiter.white_ms(),
            black_ms: self.arbiter.black_ms(),
            running: clock.running(),
            at: clock.last_reading_at()?,
        })
    }

    /// Bring the view up to date after an input. The view is updated in place, field by
    /// field: a field is written only when its value differs, and the costly texts (the PGN,
    /// the SAN list, the FEN, the placement) are only rendered when what they are made of
    /// changed. Every field is still compared after every input, so the view is exactly the
    /// one a fresh rebuild would give (a unit test holds it to [`Session::fresh_view`]) and
    /// the publisher's comparison sees every property that changed.
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
        let sensed = self.recovery.placement(self);
        // Every field named (no `..`): a property added to the contract's table does not
        // compile until its value is given here.
        let BoardProps {
            name,
            number,
            variant,
            port,
            connected,
            serial_number,
            firmware_version,
            board_model,
            clock_model,
            battery,
            rules,
            edition,
            state,
            fen,
            placement,
            in_sync,
            turn,
            moves,
            pgn,
            clock_connected,
            white_time_ms,
            black_time_ms,
            clock_running,
            claims,
            pending_illegal,
            gap,
            illegal_moves,
            result,
            termination,
        } = &mut self.view;
        let arbiter = &self.arbiter;
        if self.view_text.as_ref() != Some(&text_signature) {
            self.view_text = Some(text_signature);
            let game = arbiter.game();
            // `Pgn` is a broadcast output: final moves only. `Moves` follows `MovePlayed`.
            // Written in place from what the cache kept of the last text: only the tags
            // and the moves it does not hold yet are written (`game::PgnText`).
            self.view_texts
                .pgn
                .write(pgn, game, pending, clock_tags.as_ref());
            set_moves(moves, game);
        }
        match sensed {
            Some(sensed) => set(placement, sensed),
            None => set_text(
                placement,
                self.view_texts.placement(self.tracker.placement()),
            ),
        }
        set_text(fen, self.view_texts.fen(arbiter.position()));
        set(
            in_sync,
            fen.split_whitespace().next() == Some(placement.as_str()),
        );
        set_text(
            state,
            if !self.started {
                "waiting"
            } else if arbiter.is_finished() {
                "finished"
            } else {
                "playing"
            },
        );
        set_text(name, &self.config.name);
        set(number, self.config.number);
        set_display(variant, self.config.variant);
        set_text(port, &self.config.port);
        set(connected, self.link_up);
        set_text(serial_number, self.identity.serial_number());
        set_text(firmware_version, self.identity.firmware_version());
        match self.identity.model() {
            Some(model) => set_display(board_model, model),
            None => set_text(board_model, ""),
        }
        set(battery, self.identity.battery().into());
        // Empty without a clock: a model named once stays unknown while none reports.
        match self.identity.clock_model() {
            Some(model) if arbiter.clock_connected() => {
                set_text(clock_model, model.contract_name());
            }
            _ => set_text(clock_model, ""),
        }
        set_display(rules, arbiter.config().rules);
        set_display(edition, arbiter.config().edition);
        set_text(turn, color_name(arbiter.position().turn()));
        set(clock_connected, arbiter.clock_connected());
        set(white_time_ms, arbiter.white_ms());
        set(black_time_ms, arbiter.black_ms());
        set_text(clock_running, arbiter.clock_running());
        set(claims, claims_of(arbiter));
        set_text(pending_illegal, arbiter.pending_illegal());
        set(illegal_moves, arbiter.illegal_counts().into());
        set(gap, self.recovery.text());
        set_display(result, arbiter.result());
        match arbiter.termination() {
            Some(t) => set_display(termination, t),
            None => set_text(termination, ""),
        }
    }

    /// The view built afresh from the session's state, every text rendered and every field
    /// written: what the view kept up to date in place must always equal (the session tests
    /// check it after every input).
    #[doc(hidden)]
    pub fn fresh_view(&self) -> BoardProps {
        let mut fresh = self.clone();
        fresh.view = BoardProps::default();
        fresh.view_text = None;
        fresh.view_texts = TextCache::default();
        fresh.refresh_view();
        fresh.view
    }
}

/// The arbiter's open claims as the `Claims` property lists them.
fn claims_of(arbiter: &Arbiter) -> Vec<Claim> {
    arbiter
        .claims()
        .into_iter()
        .map(|(player, kind, detail)| Claim {
            player: player.to_string(),
            kind: kind.to_string(),
            detail,
        })
        .collect()
}

/// Writes `value` into `field` when it differs (the field keeps its allocation otherwise).
fn set<T: PartialEq>(field: &mut T, value: T) {
    if *field != value {
        *field = value;
    }
}

/// Writes `value` into the text `field` when it differs, reusing the field's buffer.
fn set_text(field: &mut String, value: &str) {
    if field != value {
        field.clear();
        field.push_str(value);
    }
}

/// Writes `value`'s text into `field` when it differs, compared without formatting it into
/// a new string.
fn set_display(field: &mut String, value: impl std::fmt::Display) {
    use std::fmt::Write;
    let mut check = SameText {
        rest: field,
        same: true,
    };
    let _ = write!(check, "{value}");
    if check.same && check.rest.is_empty() {
        return;
    }
    field.clear();
    let _ = write!(field, "{value}");
}

/// A `fmt::Write` that checks what is written against a text, piece by piece.
struct SameText<'a> {
    rest: &'a str,
    same: bool,
}

impl std::fmt::Write for SameText<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        match self.rest.strip_prefix(s) {
            Some(rest) if self.same => self.rest = rest,
            _ => self.same = false,
        }
        Ok(())
    }
}

/// Makes `moves` the SAN of every move of `game`, all segments (the `Moves` property), in
/// place: the moves already there are compared, not copied again.
fn set_moves(moves: &mut Vec<String>, game: &Game) {
    let mut n = 0;
    for (i, m) in game.segments.iter().flat_map(|s| &s.moves).enumerate() {
        match moves.get_mut(i) {
            Some(shown) => set_text(shown, &m.san),
            None => moves.push(m.san.clone()),
        }
        n = i + 1;
    }
    moves.truncate(n);
}

/// The FEN of the record's position, the placement text and the PGN's movetext, each kept
/// with what it was written from and written again only when that changed: the view is
/// rebuilt after every input (every read, every tick), and most inputs move nothing.
/// The keys are the whole values the texts are made of (the position's setup with its
/// counters, the placement, the moves), compared exactly, so a text is never stale.
#[derive(Debug, Clone, Default)]
pub(super) struct TextCache {
    fen: Option<(shakmaty::Setup, String)>,
    placement: Option<(crate::board::Placement, String)>,
    /// The PGN text's movetext kept between renders, with the moves it was written from.
    pgn: crate::game::PgnText,
}

impl TextCache {
    /// The FEN of `position` as the `Fen` property shows it ([`crate::arbiter::fen_of`]).
    pub(super) fn fen(&mut self, position: &Chess) -> &str {
        let setup = position.to_setup(shakmaty::EnPassantMode::Legal);
        if self.fen.as_ref().is_none_or(|(key, _)| *key != setup) {
            self.fen = Some((setup, crate::arbiter::fen_of(position)));
        }
        self.fen.as_ref().map_or("", |(_, text)| text)
    }

    /// The placement's board FEN.
    pub(super) fn placement(&mut self, placement: crate::board::Placement) -> &str {
        if self
            .placement
            .as_ref()
            .is_none_or(|(key, _)| *key != placement)
        {
            let text = placement.board_fen();
            self.placement = Some((placement, text));
        }
        self.placement.as_ref().map_or("", |(_, text)| text)
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
