//! The recovery machine's transitions: every change of state is made in this file or in its
//! `gap.rs` (the gap's own steps once its first board is read), and the table below
//! (ARCHITECTURE.md, "Recovery", has the same) lists them all. The states are `state.rs`'s;
//! the session calls `handle_*` with what it reads and is told, `poll_*` for what the recovery
//! has for it, and [`Recovery::next_wakeup`] for its deadlines.
//!
//! ```text
//! Closed ── link down, restart, frame lost (game on) ────────────────▶ Gap(Unread)
//! Closed ── tracker holds several stories, board still STILL_ASK_MS ──▶ Asking
//! Asking ── the tracker settles them (a move, a retraction), ResolveGap ▶ Closed
//! Gap(Unread) ── first whole board: a start, no game ─────────────────▶ Closed
//! Gap(Unread) ── first whole board: the known position ───────────────▶ Watched
//! Gap(Unread) ── first whole board: one move begun ───────────────────▶ Begun
//! Begun ── a move, the board in sync ─────────────────────────────────▶ Closed
//! Begun ── neither, the board still STILL_ASK_MS ─────────────────────▶ Gap(Search)
//! Begun ── the tracker judges the board an illegal placement ─────────▶ Gap(Search)
//! Watched ── a move ──────────────────────────────────────────────────▶ Closed
//! Watched ── out of sync, the board still STILL_ASK_MS; an illegal
//!            placement (moves of the gap came back to the position) ──▶ Gap(Search)
//! Begun, Watched ── the game ended (a flag, an adjudication) ─────────▶ Closed
//! Gap(Unread) ── first whole board, anything else ────────────────────▶ Gap(Search), memory asked
//! Gap(Unread) ── no whole board DUMP_GIVE_UP_MS after the link is back ▶ Closed
//! Gap(Search) ── one sequence, on a position (press, settled), proven
//!                (the clock bounds the plies, no other count reaches it) ▶ Closed, published
//! Gap(Search) ── one sequence not proven, the memory answered or late ▶ Gap(Choose), one story
//! Gap(Search) ── the memory replayed and the board follows ───────────▶ Closed, or Search on
//! Gap(Search) ── several sequences / too many ────────────────────────▶ Gap(Choose)
//! Gap(Search) ── nothing reaches the board, still UNREACHABLE_SETTLE_MS ▶ Closed, new segment
//! Gap(Choose) ── ResolveGap ──────────────────────────────────────────▶ Closed, or Search on
//! Gap(*), Asking, Begun, Watched ── NewGame, SetPosition ─────────────▶ Closed (the board is
//!                                                                       read against the new root)
//! Gap(Search|Choose) ── TakeBack ─────────────────────────────────────▶ Gap(Search) from the
//!                                                                       position before
//! Asking, Begun, Watched ── TakeBack ─────────────────────────────────▶ Closed
//! ```

mod gap;

use shakmaty::Position;

use super::state::{Cause, Finding, Gap, Memory, Stage, State, plies};
use super::{
    BoardRequest, DUMP_AGAIN_MS, DUMP_GIVE_UP_MS, FEWER_PIECES_SETTLED_MS, Host, MEMORY_GRACE_MS,
    MEMORY_WAIT_MS, UNREACHABLE_SETTLE_MS, evidence, play, resolve,
};
use crate::board_input::BoardInput;
use crate::event::Event;
use crate::fact::Fact;
use crate::tracker::sequences as search;
use crate::vocab::{CommandError, Millis};

/// One board's recovery: its state and the requests it has for the board.
#[derive(Debug, Clone, Default)]
pub struct Recovery {
    pub(super) state: State,
    pub(super) requests: Vec<BoardRequest>,
}

impl Recovery {
    /// Record what a search found (while searching).
    fn found(&mut self, what: Finding) {
        if let Some(Stage::Search { finding, .. }) = self.state.stage_mut() {
            *finding = what;
        }
    }

    // ----- what the session tells it -----------------------------------------------------

    /// Nothing will be read for a while (`cause`, from `now` when known): from now on the
    /// board is held back (no game on: nothing is).
    pub fn handle_unread(&mut self, h: &mut dyn Host, cause: Cause, now: Option<Millis>) {
        if !h.game_on() {
            return;
        }
        match self.state.gap_mut() {
            // Already open: what is read next is still the gap's.
            Some(g) => {
                g.stage = Stage::Unread { link_up: None };
                g.memory = Memory::Settled;
                g.sensed = None;
                g.first_read = None;
            }
            None => {
                let clock_before = evidence::clock_before(h, now);
                let start = (h.tracker().moves().len(), h.tracker().position().turn());
                self.state = State::Gap(Box::new(Gap::new(cause, clock_before, start)));
            }
        }
        h.hold_back();
    }

    /// The link is back: a whole board is awaited from now.
    pub fn handle_link_up(&mut self, now: Millis) {
        if let Some(Stage::Unread { link_up }) = self.state.stage_mut() {
            *link_up = Some((now, false));
        }
    }

    /// A frame was lost on the line: what the board reports next may not follow from what
    /// was read, so a whole board is asked for and decides.
    pub fn handle_line_loss(&mut self, h: &mut dyn Host, now: Millis) {
        if h.game_on() && !self.is_open() {
            self.handle_unread(h, Cause::LineLoss, Some(now));
            self.handle_link_up(now);
            self.requests.push(BoardRequest::SendBoard);
        }
    }

    /// A board message while a gap is open. Returns false when the message is not the
    /// gap's business (no gap, identification and the like: the session takes it).
    pub fn handle_message(
        &mut self,
        h: &mut dyn Host,
        message: &BoardInput,
        now: Millis,
        out: &mut Vec<Event>,
    ) -> bool {
        let held = matches!(self.state, State::Begun(..));
        if let State::Begun(g, _) | State::Watched(g, _) = &mut self.state {
            // The board is read live, and kept as the gap would hold it for a search if it
            // opens again; a move begun holds the clock back (a gap is never an illegal move).
            match message {
                BoardInput::Clock(times) => {
                    g.clock = Some((*times, now));
                    return held;
                }
                BoardInput::Square { index, content } => {
                    g.set_square(*index, *content, now);
                }
                BoardInput::Scan(fields) => g.set_board(fields, now),
                _ => {}
            }
            return false;
        }
        let Some(g) = self.state.gap_mut() else {
            return false;
        };
        match message {
            BoardInput::Clock(times) => {
                let pressed = times.status.connected
                    && g.clock.as_ref().is_some_and(|(c, _)| {
                        c.status.connected
                            && c.status.lever_left_down != times.status.lever_left_down
                    });
                g.clock = Some((*times, now));
                match &mut g.stage {
                    Stage::Choose { candidates, .. } if pressed => {
                        for c in candidates {
                            let _ = c.shadow.on_clock_press(now);
                        }
                    }
                    // A press: the mover says the move is done; the board is a position.
                    Stage::Search { tried, .. } if pressed => {
                        *tried = Some(g.last_change);
                        self.search(h, now, out, true);
                    }
                    _ => {}
                }
            }
            BoardInput::Square {
                index: field,
                content,
            } => {
                // Before a whole board the next dump supersedes it.
                if g.set_square(*field, *content, now)
                    && let Stage::Choose { candidates, .. } = &mut g.stage
                {
                    for c in candidates {
                        let _ = c.shadow.on_field_update(*field, *content, now);
                    }
                }
            }
            BoardInput::Scan(fields) => {
                let first = g.sensed.is_none();
                g.set_board(fields, now);
                if let Stage::Choose { candidates, .. } = &mut g.stage {
                    for c in candidates {
                        let _ = c.shadow.on_board_dump(fields, now);
                    }
                }
                if first && matches!(g.stage, Stage::Unread { .. }) {
                    self.board_read(h, now, out);
                }
            }
            BoardInput::Memory(log) => {
                if let Some(memory) = self.state.memory_mut()
                    && let Memory::Asked { held_unique, .. } = *memory
                {
                    *memory = Memory::Settled;
                    self.memory_answered(h, log, held_unique, now, out);
                }
            }
            _ => return false,
        }
        true
    }

    /// Time passes while a gap is open: the memory's time-out, the search on a still
    /// board, the whole board awaited. Returns false when no gap is open (the session's
    /// own tick then).
    pub fn handle_tick(&mut self, h: &mut dyn Host, now: Millis, out: &mut Vec<Event>) -> bool {
        if !self.is_open() {
            return false;
        }
        if let Some(memory) = self.state.memory_mut()
            && let Memory::Asked { at, held_unique } = *memory
        {
            let waited = now.saturating_sub(at);
            if waited >= MEMORY_WAIT_MS {
                *memory = Memory::Settled;
                h.report(Fact::MemoryNotCome);
                // A sequence the evidence does not prove waited for the memory: the search
                // runs again, and asks the arbiter.
                if matches!(
                    self.state.gap().map(|g| &g.stage),
                    Some(Stage::Search {
                        finding: Finding::Unproven { .. },
                        ..
                    })
                ) {
                    self.search_again(h, false, now, out);
                }
            }
            if held_unique && waited >= MEMORY_GRACE_MS {
                // The single sequence found has waited for the memory long enough.
                self.search_again(h, true, now, out);
                return true;
            }
        }
        let settle = evidence::settle_ms(h, self.state.gap());
        let Some(g) = self.state.gap_mut() else {
            return true;
        };
        let last_change = g.last_change;
        let memory = g.memory;
        match &mut g.stage {
            Stage::Search { tried, .. } => {
                let still = now.saturating_sub(last_change);
                if still >= settle && *tried != Some(last_change) {
                    *tried = Some(last_change);
                    self.search(h, now, out, true);
                } else if still >= UNREACHABLE_SETTLE_MS
                    && *tried == Some(last_change)
                    && memory == Memory::Settled
                {
                    // Searched, unreachable, and still standing: play continues from it.
                    self.unreachable(h, now, out);
                }
            }
            Stage::Choose { candidates, .. } => {
                for c in candidates {
                    let _ = c.shadow.on_tick(now);
                }
            }
            Stage::Unread {
                link_up: Some((up, asked_again)),
            } => {
                let waited = now.saturating_sub(*up);
                if waited >= DUMP_GIVE_UP_MS {
                    h.report(Fact::NoWholeBoard);
                    self.close(h, now, out);
                } else if waited >= DUMP_AGAIN_MS && !*asked_again {
                    *asked_again = true;
                    self.requests.push(BoardRequest::SendBoard);
                }
            }
            Stage::Unread { link_up: None } => {}
        }
        true
    }

    /// The shell cannot ask the board (listen-only): the search alone decides.
    pub fn handle_no_memory(&mut self, h: &mut dyn Host, now: Millis, out: &mut Vec<Event>) {
        if let Some(memory) = self.state.memory_mut()
            && let Memory::Asked { held_unique, .. } = *memory
        {
            *memory = Memory::Settled;
            self.search_again(h, held_unique, now, out);
        }
    }

    /// After every input while no gap is open: the tracker's open stories become a question
    /// for the arbiter once the board has stood still [`super::STILL_ASK_MS`], and the question
    /// goes as soon as the tracker has settled them (or holds others).
    pub fn poll_live_stories(&mut self, h: &mut dyn Host, now: Millis, out: &mut Vec<Event>) {
        let still = self.state.watch_still_at().is_some_and(|at| now >= at);
        if !h.game_on() && matches!(self.state, State::Begun(..) | State::Watched(..)) {
            // The game ended while the close was watched (a flag, an adjudication): what the
            // board shows after the end is no move of it, so nothing is searched again.
            self.end_watch(h, now, out);
            return;
        }
        if let State::Begun(g, _) = &self.state {
            let tracker = h.tracker();
            if tracker.in_sync() || tracker.moves().len() != g.start.0 {
                self.end_watch(h, now, out);
            } else if still {
                // No move came of it: pieces were taken during the gap (or the board moved on
                // from it), and it opens again to search.
                self.reopen_watch(h, now, out);
            }
        }
        if let State::Watched(g, _) = &self.state {
            let tracker = h.tracker();
            if tracker.moves().len() != g.start.0 {
                self.end_watch(h, now, out);
            } else if !tracker.in_sync() && still {
                // Nothing the tracker can take stands still on the known position's board:
                // moves of the gap came back to it, and the board went on from there.
                self.reopen_watch(h, now, out);
            }
        }
        if self.is_open() || matches!(self.state, State::Begun(..) | State::Watched(..)) {
            return;
        }
        let asking = resolve::ask_due(h)
            .filter(|&due| now >= due)
            .and_then(|_| resolve::live_stories(h));
        match (&self.state, asking) {
            (State::Asking(a), Some(b)) if a.base == b.base && a.stories == b.stories => {}
            (_, Some(b)) => {
                self.state = State::Asking(b);
                h.report(Fact::StillBoardAsks { gap: self.text() });
            }
            (State::Asking(_), None) => self.state = State::Closed,
            (_, None) => {}
        }
    }

    /// A watched close ends (`Begun`, `Watched` → `Closed`): the clock reading a move begun
    /// held back is the arbiter's now.
    fn end_watch(&mut self, h: &mut dyn Host, now: Millis, out: &mut Vec<Event>) {
        if let State::Begun(g, _) = std::mem::replace(&mut self.state, State::Closed) {
            let held = g.clock.map(|(times, _)| times);
            h.clock_after_gap(held.as_ref(), now, out);
        }
    }

    /// The tracker judged the board an illegal placement while a gap that closed is watched
    /// (`Begun`, `Watched`): the board parted from the record during the gap, not by a
    /// player's hand (a gap is never an illegal move), so the gap opens again on the board as
    /// it stands and searches. Returns whether it did (false: nothing is watched, the
    /// judgement stands).
    pub fn reopen_watch(&mut self, h: &mut dyn Host, now: Millis, out: &mut Vec<Event>) -> bool {
        let (State::Begun(g, _) | State::Watched(g, _)) = std::mem::take(&mut self.state) else {
            return false;
        };
        self.state = State::Gap(g);
        h.hold_back();
        self.search_first_board(h, now, out, true);
        true
    }

    // ----- operator commands -------------------------------------------------------------

    /// `NewGame` or `SetPosition` was given: the record has a new root, the gap's moves
    /// belong to the game left behind. Recovery ends; the board as read is the tracker's
    /// (judged against the new position) and the held clock reading the arbiter's.
    pub fn handle_new_root(&mut self, h: &mut dyn Host, now: Millis, out: &mut Vec<Event>) {
        match &self.state {
            State::Gap(_) => self.close(h, now, out),
            State::Asking(_) | State::Begun(..) | State::Watched(..) => self.state = State::Closed,
            State::Closed => {}
        }
    }

    /// `TakeBack` was given: the record's last known position moved one ply back. A gap
    /// searches again from there (its candidates and memory were of the position taken
    /// back: the memory is not asked again); a gap still unread stays so; the tracker's
    /// live stories went with the move.
    pub fn handle_took_back(&mut self, h: &mut dyn Host, now: Millis, out: &mut Vec<Event>) {
        match &self.state {
            State::Gap(g) if matches!(g.stage, Stage::Unread { .. }) => {}
            State::Gap(_) => self.close_or_search_on(h, now, out, false),
            State::Asking(_) | State::Begun(..) | State::Watched(..) => self.state = State::Closed,
            State::Closed => {}
        }
    }

    /// `ResolveGap`: the arbiter says which moves were made during the gap (none: continue
    /// from the board), or which of the stories the tracker holds open is the game.
    pub fn handle_resolve(
        &mut self,
        h: &mut dyn Host,
        moves: &[String],
        now: Millis,
        out: &mut Vec<Event>,
    ) -> Result<(), CommandError> {
        let g = match &self.state {
            State::Closed | State::Begun(..) | State::Watched(..) => {
                return Err(CommandError::InvalidArgument(
                    "no gap is open on this board: there is nothing to resolve".into(),
                ));
            }
            State::Asking(asking) => {
                let Some(line) = resolve::asked_line(h, asking, moves) else {
                    return Err(CommandError::InvalidArgument(format!(
                        "`{}` is none of the move orders that explain the board; {}",
                        moves.join(" "),
                        self.text()
                    )));
                };
                let tracked = h.tracker_mut().take_story(&line);
                h.apply_tracker(tracked, now, out);
                self.state = State::Closed;
                return Ok(());
            }
            State::Gap(g) => g,
        };
        let target = resolve::target(g)?;
        if moves.is_empty() {
            // A board with a piece missing is a legal position, but it may be a piece in hand
            // (the arbiter answered as a player moved): continuing from it would leave the
            // piece out of the game, and its landing an illegal placement. Only a board that
            // stood still as long as any gap's reading of fewer pieces must is taken.
            if evidence::fewer_pieces(h, g)
                && now.saturating_sub(g.last_change) < FEWER_PIECES_SETTLED_MS
            {
                return Err(CommandError::InvalidArgument(
                    "the board shows no playable position yet (a piece in hand?): set the pieces, let the board stand still, then resolve again".into(),
                ));
            }
            let note = format!(
                "moves were made {}; the arbiter continued from the board",
                self.cause()
            );
            if !play::continue_from_board(h, self.state.gap(), &note, now, out) {
                return Err(CommandError::InvalidArgument(
                    "the board shows no playable position (pieces in hand, a king missing): set the pieces, then resolve again".into(),
                ));
            }
            self.close(h, now, out);
            return Ok(());
        }
        let from = h.tracker().position().clone();
        let (all, gap_len) = resolve::gap_line(h, g, &target, moves)?;
        let note = format!(
            "{} made {}, as the arbiter resolved them",
            plies(gap_len),
            self.cause()
        );
        h.report(Fact::ResolvedByArbiter {
            line: search::san_line(&from, &all),
        });
        play::replay_moves(h, &all[..gap_len], &[], [None, None], now, out);
        h.arbiter_mut().note(note);
        play::replay_moves(h, &all[gap_len..], &[], [None, None], now, out);
        self.close_or_search_on(h, now, out, false);
        Ok(())
    }
}
