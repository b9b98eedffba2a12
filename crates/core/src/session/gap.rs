//! The session's side of a gap: from the moment nothing is read (link down, daemon not
//! running, a frame lost on the line) until the board is explained again — the transitions
//! of the recovery machine ([`super::recovery`], where its states are listed).
//!
//! While a gap is open the tracker and the arbiter are not fed: the board's changes and the
//! clock's readings are held here, so nothing that happened unseen can become an illegal
//! placement, a press without a move (7.5.3) or a "stood" illegal move. The first whole board
//! after the gap decides:
//!
//! 1. the board shows the known position (or a start position, or no game is on): closed;
//! 2. otherwise the board's memory is asked for ([`BoardRequest::ReadMemory`]) and, at once
//!    and while the memory is on its way (a real board needs seconds to send it), the legal
//!    sequences to the board are searched ([`crate::gap::search`]): at that first board, at
//!    every clock press and at every settled reading while the gap stays open (a still board
//!    is not required: play goes on in a time scramble). The clock's times after the gap
//!    drop the sequence lengths they contradict ([`crate::gap::clock`]);
//! 3. the memory, when it comes in time, is replayed ([`crate::gap::memory`]) and then the
//!    board as read now must follow from it (a few plies made meanwhile are searched or
//!    followed on top); otherwise it is not used and the search goes on;
//! 4. one sequence is published (marked as recovered in the PGN); several wait for the
//!    arbiter (`ResolveGap`, the moves from the last known position as the scoresheets have
//!    them, the gap's and any since) while play going on meanwhile is followed from each of
//!    them; none continues from the board in a new segment, with a comment.
//!
//! Then the tracker gets the board as it stands and play goes on: an illegal move made right
//! after a gap is caught as ever.
//!
//! The live side ([`Recovery::Asking`]): the tracker reads every change and re-derives the
//! moves from its readings itself; when they leave several stories for a board that stands
//! still, `Gap` lists them here and `ResolveGap` picks one.

use shakmaty::{Board, Chess, Color, Move, Position};

use super::gap_search::pawns_forward;
use super::recovery::{Cause, Finding, Gap, Memory, Recovery, Stage, plies};
use super::{Event, Fact, Session};
use crate::arbiter::clock::Display;
use crate::board::{Orientation, Placement};
use crate::board_input::{BoardInput, MemoryEvent, SquareContent};
use crate::gap::{clock, memory};
use crate::tracker::ILLEGAL_SETTLE_MS;
use crate::vocab::Millis;

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

/// What the shell is asked to send to the board (see [`Session::poll_request`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoardRequest {
    /// DGT_SEND_EE_MOVES (0x49): the board's memory. A shell that cannot write (listen-only)
    /// answers with [`super::Input::MemoryUnavailable`].
    ReadMemory,
    /// DGT_SEND_BRD (0x42): a whole board.
    SendBoard,
}

/// The recovery state of one session and the requests it has for the board.
#[derive(Debug, Clone, Default)]
pub(super) struct GapState {
    pub(super) state: Recovery,
    requests: Vec<BoardRequest>,
}

impl GapState {
    /// A gap is open: the board is held back from the tracker.
    pub(super) fn is_open(&self) -> bool {
        self.state.gap().is_some()
    }

    /// The `Gap` property.
    pub(super) fn text(&self) -> String {
        self.state.text()
    }

    pub(super) fn take_request(&mut self) -> Option<BoardRequest> {
        (!self.requests.is_empty()).then(|| self.requests.remove(0))
    }

    pub(super) fn sensed(&self) -> Option<[SquareContent; 64]> {
        self.state.gap().and_then(|g| g.sensed)
    }

    pub(super) fn cause(&self) -> &'static str {
        self.state.gap().map_or("", |g| g.cause.text())
    }

    pub(super) fn stage_mut(&mut self) -> Option<&mut Stage> {
        self.state.gap_mut().map(|g| &mut g.stage)
    }

    /// The memory's state, while a gap is open.
    pub(super) fn memory_mut(&mut self) -> Option<&mut Memory> {
        self.state.gap_mut().map(|g| &mut g.memory)
    }

    /// Record what a search found (while searching).
    pub(super) fn found(&mut self, what: Finding) {
        if let Some(Stage::Search { finding, .. }) = self.stage_mut() {
            *finding = what;
        }
    }
}

impl Session {
    /// The next thing the shell should send to the board for the gap logic, if any.
    pub fn poll_request(&mut self) -> Option<BoardRequest> {
        self.gap.take_request()
    }

    /// When the recovery next needs [`super::Input::Tick`] (part of
    /// [`Session::next_wakeup`]).
    pub(super) fn recovery_wakeup(&self) -> Option<Millis> {
        match &self.gap.state {
            Recovery::Gap(g) => g.deadline(self.settle_ms()),
            Recovery::Asking(_) => None,
            Recovery::Closed => self.ask_due(),
        }
    }

    pub(super) fn game_on(&self) -> bool {
        self.started && !self.arbiter.is_finished()
    }

    pub(super) fn orientation(&self) -> Orientation {
        self.tracker.orientation().unwrap_or(Orientation::Normal)
    }

    pub(super) fn board_of(&self, fields: &[SquareContent; 64]) -> Board {
        Placement::from_wire(fields, self.orientation()).to_board()
    }

    /// The placement the view shows while the gap holds the board back.
    pub(super) fn gap_placement(&self) -> Option<String> {
        self.gap
            .sensed()
            .map(|f| Placement::from_wire(&f, self.orientation()).board_fen())
    }

    /// Nothing will be read for a while (`cause`, from `now` when known): from now on the
    /// board is held back.
    pub(super) fn gap_unread(&mut self, cause: Cause, now: Option<Millis>) {
        if !self.game_on() {
            return;
        }
        match self.gap.state.gap_mut() {
            // Already open: what is read next is still the gap's.
            Some(g) => {
                g.stage = Stage::Unread { link_up: None };
                g.memory = Memory::Settled;
                g.sensed = None;
                g.first_read = None;
            }
            None => {
                let c = self.arbiter.clock();
                let clock_before = match (
                    now,
                    c.known_time_ms(Color::White),
                    c.known_time_ms(Color::Black),
                ) {
                    (Some(at), Some(w), Some(b)) if c.connected() => Some(clock::Reading {
                        times: [w, b],
                        running: c.running().is_some(),
                        at,
                    }),
                    _ => None,
                };
                let start = (self.tracker.moves().len(), self.tracker.position().turn());
                self.gap.state = Recovery::Gap(Box::new(Gap::new(cause, clock_before, start)));
            }
        }
        self.standing_illegal = None;
    }

    /// The link is back: a whole board is awaited from now.
    pub(super) fn gap_link_up(&mut self, now: Millis) {
        if let Some(Stage::Unread { link_up }) = self.gap.stage_mut() {
            *link_up = Some((now, false));
        }
    }

    /// A frame was lost on the line: what the board reports next may not follow from what was
    /// read, so a whole board is asked for and decides.
    pub(super) fn gap_line_loss(&mut self, now: Millis) {
        if self.game_on() && !self.gap.is_open() {
            self.gap_unread(Cause::LineLoss, Some(now));
            self.gap_link_up(now);
            self.gap.requests.push(BoardRequest::SendBoard);
        }
    }

    /// A board message while the gap is open. Returns false when the message is not the
    /// gap's business (identification and the like: the normal path takes it).
    pub(super) fn gap_message(
        &mut self,
        message: &BoardInput,
        now: Millis,
        out: &mut Vec<Event>,
    ) -> bool {
        let Some(g) = self.gap.state.gap_mut() else {
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
                        self.gap_search(now, out, true);
                    }
                    _ => {}
                }
            }
            BoardInput::Square {
                index: field,
                content,
            } => {
                let Some(sensed) = g.sensed.as_mut() else {
                    // Before a whole board: the next dump supersedes it.
                    return true;
                };
                if let Some(slot) = sensed.get_mut(usize::from(*field))
                    && *slot != *content
                {
                    *slot = *content;
                    g.last_change = now;
                    if let Stage::Choose { candidates, .. } = &mut g.stage {
                        for c in candidates {
                            let _ = c.shadow.on_field_update(*field, *content, now);
                        }
                    }
                }
            }
            BoardInput::Scan(fields) => {
                let first = g.sensed.is_none();
                if g.sensed.as_ref() != Some(fields) {
                    g.last_change = now;
                }
                g.sensed = Some(**fields);
                if let Stage::Choose { candidates, .. } = &mut g.stage {
                    for c in candidates {
                        let _ = c.shadow.on_board_dump(fields, now);
                    }
                }
                if first && matches!(g.stage, Stage::Unread { .. }) {
                    self.gap_board_read(now, out);
                }
            }
            BoardInput::Memory(log) => {
                if let Some(memory) = self.gap.memory_mut()
                    && let Memory::Asked { held_unique, .. } = *memory
                {
                    *memory = Memory::Settled;
                    self.gap_memory(log, held_unique, now, out);
                }
            }
            _ => return false,
        }
        true
    }

    /// Time passes while the gap is open: the memory's time-out, the search on a still board,
    /// the whole board awaited.
    pub(super) fn gap_tick(&mut self, now: Millis, out: &mut Vec<Event>) {
        if let Some(memory) = self.gap.memory_mut()
            && let Memory::Asked { at, held_unique } = *memory
        {
            let waited = now.saturating_sub(at);
            if waited >= MEMORY_WAIT_MS {
                *memory = Memory::Settled;
                self.report(Fact::MemoryNotCome);
                // A sequence the evidence does not prove waited for the memory: the search
                // runs again, and asks the arbiter.
                if matches!(
                    self.gap.state.gap().map(|g| &g.stage),
                    Some(Stage::Search {
                        finding: Finding::Unproven { .. },
                        ..
                    })
                ) {
                    self.gap_search_again(false, now, out);
                }
            }
            if held_unique && waited >= MEMORY_GRACE_MS {
                // The single sequence found has waited for the memory long enough.
                self.gap_search_again(true, now, out);
                return;
            }
        }
        let settle = self.settle_ms();
        let Some(g) = self.gap.state.gap_mut() else {
            return;
        };
        let last_change = g.last_change;
        let memory = g.memory;
        match &mut g.stage {
            Stage::Search { tried, .. } => {
                let still = now.saturating_sub(last_change);
                if still >= settle && *tried != Some(last_change) {
                    *tried = Some(last_change);
                    self.gap_search(now, out, true);
                } else if still >= UNREACHABLE_SETTLE_MS
                    && *tried == Some(last_change)
                    && memory == Memory::Settled
                {
                    // Searched, unreachable, and still standing: play continues from it.
                    self.gap_unreachable(now, out);
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
                    self.report(Fact::NoWholeBoard);
                    self.close_gap(now, out);
                } else if waited >= DUMP_AGAIN_MS && !*asked_again {
                    *asked_again = true;
                    self.gap.requests.push(BoardRequest::SendBoard);
                }
            }
            Stage::Unread { link_up: None } => {}
        }
    }

    /// The first whole board after the gap.
    fn gap_board_read(&mut self, now: Millis, out: &mut Vec<Event>) {
        let Some(fields) = self.gap.sensed() else {
            return;
        };
        if let Some(g) = self.gap.state.gap_mut() {
            g.first_read = Some(fields);
        }
        let mut board = self.board_of(&fields);
        let known = self.tracker.position().board().clone();
        if self.tracker.orientation().is_none() {
            // Not yet learnt (a restarted daemon): the reading closer to the known position
            // is the board's way round (a gap moves a few pieces, turning it moves them all).
            let mut turned = board.clone();
            turned.rotate_180();
            let off = |b: &Board| crate::tracker::search_diff(b, &known).count();
            // Pawns only go forward: a long gap (a dozen bullet plies while the daemon was
            // down) can leave the turned reading closer, never with its pawns going forward.
            let forward = (
                pawns_forward(&known, &turned),
                pawns_forward(&known, &board),
            );
            let reversed = match forward {
                (true, false) => true,
                (false, true) => false,
                _ => off(&turned) < off(&board),
            };
            if reversed {
                self.tracker.learn_orientation(Orientation::Reversed);
                board = turned;
            } else {
                self.tracker.learn_orientation(Orientation::Normal);
            }
        }
        let start = Placement::from_board(&board).is_start() || {
            let mut turned = board.clone();
            turned.rotate_180();
            Placement::from_board(&turned).is_start()
        };
        // Only pieces lifted from the known position: a move in progress, the tracker's job
        // (unless moves reach it: an exchange of captures on one square also leaves only
        // pieces missing).
        if !self.game_on() || start || self.move_in_progress(self.tracker.position(), &board) {
            self.close_gap(now, out);
            return;
        }
        self.report(Fact::ReadingMemory {
            cause: self.gap.cause(),
        });
        self.gap.requests.push(BoardRequest::ReadMemory);
        self.enter_search(
            None,
            Memory::Asked {
                at: now,
                held_unique: false,
            },
        );
        // Search at once: the first whole board may already tell (published once the board
        // proves a position: a press or a settled reading).
        self.gap_search(now, out, false);
    }

    /// The gap (open) searches from now: `tried`, the board change already searched.
    pub(super) fn enter_search(&mut self, tried: Option<Millis>, memory: Memory) {
        if let Some(g) = self.gap.state.gap_mut() {
            g.memory = memory;
            g.stage = Stage::Search {
                tried,
                trusted_at: None,
                finding: Finding::Nothing,
            };
        }
    }

    /// The shell cannot ask the board (listen-only): the search alone decides.
    pub(super) fn gap_no_memory(&mut self, now: Millis, out: &mut Vec<Event>) {
        if let Some(memory) = self.gap.memory_mut()
            && let Memory::Asked { held_unique, .. } = *memory
        {
            *memory = Memory::Settled;
            self.gap_search_again(held_unique, now, out);
        }
    }

    fn gap_memory(
        &mut self,
        log: &[MemoryEvent],
        held_unique: bool,
        now: Millis,
        out: &mut Vec<Event>,
    ) {
        let Some(fields) = self.gap.sensed() else {
            return;
        };
        match memory::recover(&self.tracker, log, &fields, now) {
            Ok(found) if !found.moves.is_empty() => {
                let first = self.tracker.position().turn();
                let stamps: Vec<Option<(Color, u64)>> = found
                    .presses
                    .iter()
                    .enumerate()
                    .map(|(k, p)| {
                        p.and_then(|(left, ms)| {
                            let display = if left { Display::Left } else { Display::Right };
                            let color = self.arbiter.clock().color_of(display);
                            (color == memory::mover(first, k)).then_some((color, ms))
                        })
                    })
                    .collect();
                let n = found.moves.len();
                // The memory was read a while ago (seconds at 9600 baud): the board now must
                // follow from its moves, or they are not used.
                let mut end = self.tracker.position().clone();
                for &m in &found.moves {
                    end.play_unchecked(m);
                }
                if !self.board_follows(&end, &self.board_of(&fields)) {
                    self.report(Fact::MemoryContradicted { plies: n });
                    self.gap_search_again(held_unique, now, out);
                    return;
                }
                self.report(Fact::RecoveredFromMemory { plies: n });
                let note = format!(
                    "{} made {}, read from the board's memory",
                    plies(n),
                    self.gap.cause()
                );
                let mut earlier = [None, None];
                for (i, display) in [Display::Left, Display::Right].into_iter().enumerate() {
                    let color = self.arbiter.clock().color_of(display);
                    earlier[usize::from(color == Color::Black)] = found.before[i];
                }
                self.replay_moves(&found.moves, &stamps, earlier, now, out);
                self.arbiter.note(note);
                self.close_or_search_on(now, out);
            }
            Ok(_) => self.gap_search_again(held_unique, now, out),
            Err(why) => {
                self.report(Fact::MemoryEmpty {
                    why: why.to_string(),
                });
                self.gap_search_again(held_unique, now, out);
            }
        }
    }

    /// The memory is not used: the search decides, now if it `held` a sequence for it on the
    /// board as it still stands, else at the next press or settled reading.
    pub(super) fn gap_search_again(&mut self, held: bool, now: Millis, out: &mut Vec<Event>) {
        let Some(g) = self.gap.state.gap_mut() else {
            return;
        };
        let last_change = g.last_change;
        if let Memory::Asked { held_unique, .. } = &mut g.memory {
            *held_unique = false;
        }
        if let Stage::Search {
            tried, trusted_at, ..
        } = &mut g.stage
        {
            if held && *trusted_at == Some(last_change) {
                self.gap_search(now, out, true);
            } else {
                *tried = None;
            }
        }
    }

    /// Moves were published up to the tracker's position: closed when the board now shows
    /// it (or the next move begun), else the gap goes on from there (plies made while the
    /// memory or the arbiter was awaited), searched at once. Pieces in hand that no one move
    /// takes up are plies on from there in the middle of a capture (Bc2 Bxc2 with Qxc2 under
    /// way), not a move the tracker could follow.
    pub(super) fn close_or_search_on(&mut self, now: Millis, out: &mut Vec<Event>) {
        let on_board = self.gap.sensed().map(|f| self.board_of(&f));
        let done = on_board
            .as_ref()
            .is_none_or(|b| self.one_move_begun(self.tracker.position(), b));
        if done {
            self.close_gap(now, out);
        } else {
            let last_change = self.gap.state.gap().map_or(0, |g| g.last_change);
            let settled = now.saturating_sub(last_change) >= self.settle_ms();
            self.enter_search(settled.then_some(last_change), Memory::Settled);
            self.gap_search(now, out, settled);
        }
    }

    // ----- the live side: several stories for a still board ----------------------------

    // ----- operator commands while a recovery is open -----------------------------------

    /// `NewGame` or `SetPosition` was given: the record has a new root, the gap's moves
    /// belong to the game left behind. Recovery ends; the board as read is the tracker's
    /// (judged against the new position) and the held clock reading the arbiter's.
    pub(super) fn recovery_new_root(&mut self, now: Millis, out: &mut Vec<Event>) {
        match &self.gap.state {
            Recovery::Gap(_) => self.close_gap(now, out),
            Recovery::Asking(_) => self.gap.state = Recovery::Closed,
            Recovery::Closed => {}
        }
    }

    /// `TakeBack` was given: the record's last known position moved one ply back. A gap
    /// searches again from there (its candidates and memory were of the position taken
    /// back: the memory is not asked again); a gap still unread stays so; the tracker's
    /// live stories went with the move.
    pub(super) fn recovery_took_back(&mut self, now: Millis, out: &mut Vec<Event>) {
        match &self.gap.state {
            Recovery::Gap(g) if matches!(g.stage, Stage::Unread { .. }) => {}
            Recovery::Gap(_) => self.close_or_search_on(now, out),
            Recovery::Asking(_) => self.gap.state = Recovery::Closed,
            Recovery::Closed => {}
        }
    }

    /// Publish `moves` through the tracker, one whole board per move, as if the board had
    /// been read after each; `stamps[k]`: the mover's clock time after move k, if known;
    /// `earlier`: each side's last time the board's memory logged before the gap.
    pub(super) fn replay_moves(
        &mut self,
        moves: &[Move],
        stamps: &[Option<(Color, u64)>],
        earlier: [Option<u64>; 2],
        now: Millis,
        out: &mut Vec<Event>,
    ) {
        let o = self.orientation();
        // Each side's time as last known: the mover's clock runs, the other's stands.
        let mut last = [
            self.arbiter.clock().known_time_ms(Color::White),
            self.arbiter.clock().known_time_ms(Color::Black),
        ];
        for (slot, logged) in last.iter_mut().zip(earlier) {
            *slot = slot.or(logged);
        }
        for (k, &m) in moves.iter().enumerate() {
            let mut next: Chess = self.tracker.position().clone();
            next.play_unchecked(m);
            let fields = Placement::from_board(next.board()).to_wire(o);
            let before_move = self.tracker.position().clone();
            let mut tracked = self.tracker.on_board_dump(&fields, now);
            // A recovered move is complete (play went on after it): never held.
            tracked.extend(self.tracker.release_held());
            if self.tracker.position() == &before_move {
                // Not read as a move of the game: the move an operator's takeback just
                // removed, which the tracker does not read again from the board alone.
                tracked.extend(self.tracker.play_shown(m));
            }
            let before = out.len();
            self.apply_tracker(tracked, now, out);
            if self.tracker.position() != &next {
                self.report(Fact::ReplayMisread { k });
                return;
            }
            if let Some(Some((color, ms))) = stamps.get(k) {
                self.arbiter.recovered_press(*color, *ms);
                last[usize::from(*color == Color::Black)] = Some(*ms);
            }
            if stamps.is_empty() {
                continue;
            }
            for e in &mut out[before..] {
                if let Event::MovePlayed {
                    white_ms, black_ms, ..
                } = e
                {
                    if let Some(ms) = last[0] {
                        *white_ms = ms;
                    }
                    if let Some(ms) = last[1] {
                        *black_ms = ms;
                    }
                }
            }
        }
    }

    /// The gap is over: the tracker reads the board as it stands, the arbiter the clock.
    pub(super) fn close_gap(&mut self, now: Millis, out: &mut Vec<Event>) {
        if !self.gap.is_open() {
            return;
        }
        let Recovery::Gap(g) = std::mem::take(&mut self.gap.state) else {
            return;
        };
        if let Some(fields) = g.sensed {
            let tracked = self.tracker.on_board_dump(&fields, now);
            self.apply_tracker(tracked, now, out);
        }
        self.arbiter.after_gap();
        self.lever_left_down = None;
        if let Some((clock, _)) = g.clock {
            self.clock_live = true;
            self.on_clock(&clock, now, out);
        }
    }
}

/// `board` is `known` or `known` with pieces lifted: at most a move in progress.
pub(super) fn lifted_only(known: &Board, board: &Board) -> bool {
    (board.occupied() & !known.occupied()).is_empty()
        && board
            .occupied()
            .into_iter()
            .all(|sq| board.piece_at(sq) == known.piece_at(sq))
}
