//! The session's side of a gap: from the moment nothing is read (link down, daemon not
//! running, a frame lost on the line) until the board is explained again.
//!
//! While a gap is open the tracker and the arbiter are not fed: the board's changes and the
//! clock's readings are held here, so nothing that happened unseen can become an illegal
//! placement, a press without a move (7.5.3) or a "stood" illegal move. The first whole board
//! after the gap decides:
//!
//! 1. the board shows the known position (or a start position, or no game is on): closed;
//! 2. otherwise the board's memory is asked for ([`BoardRequest::ReadMemory`]) and replayed
//!    ([`crate::gap::memory`]); the moves are published in order with their clock times;
//! 3. without usable memory, once the board stands still, the legal sequences are searched
//!    ([`crate::gap::search`]): one is published (marked as recovered in the PGN); several
//!    wait for the arbiter (`ResolveGap`) while play going on meanwhile is followed from each
//!    of them; none continues from the board in a new segment, with a comment.
//!
//! Then the tracker gets the board as it stands and play goes on: an illegal move made right
//! after a gap is caught as ever.

use shakmaty::uci::UciMove;
use shakmaty::{Board, Chess, Color, Move, Position};

use super::{Event, Session};
use crate::arbiter::clock::Display;
use crate::board::{Orientation, Placement};
use crate::gap::{memory, search};
use crate::protocol::{ClockTimes, EeEvent, FieldContent, Message};
use crate::tracker::{ILLEGAL_SETTLE_MS, Tracker};
use crate::vocab::{CommandError, Millis};

/// How long the board's memory may take to arrive (a real board needs about 8 s at 9600
/// baud) before the search is used instead.
pub const MEMORY_WAIT_MS: Millis = 20_000;
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

/// Why nothing was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum Cause {
    #[default]
    Disconnected,
    NotRunning,
    LineLoss,
}

impl Cause {
    fn text(self) -> &'static str {
        match self {
            Cause::Disconnected => "while the board was disconnected",
            Cause::NotRunning => "while eboardd was not running",
            Cause::LineLoss => "while bytes were lost on the line",
        }
    }
}

/// One story the arbiter may choose, followed on as play goes on.
#[derive(Debug, Clone)]
struct Candidate {
    moves: Vec<Move>,
    /// A tracker standing after `moves`, fed the board since.
    shadow: Tracker,
}

#[derive(Debug, Clone, Default)]
enum Phase {
    #[default]
    Closed,
    /// Nothing read yet: waiting for a whole board.
    Unread,
    /// The board changed: its memory was asked for at this time.
    Memory { asked: Millis },
    /// Searching once the board stands still; `tried`: the board change last searched.
    Search { tried: Option<Millis> },
    /// Several stories: waiting for `ResolveGap`.
    Arbiter {
        target: [FieldContent; 64],
        candidates: Vec<Candidate>,
    },
}

/// The gap state of one session (see the module documentation).
#[derive(Debug, Clone, Default)]
pub(super) struct GapState {
    phase: Phase,
    cause: Cause,
    /// The board as last read while the gap is open (wire order), once a whole board came.
    sensed: Option<[FieldContent; 64]>,
    last_change: Millis,
    /// The clock's latest reading, held back from the arbiter while the gap is open.
    clock: Option<ClockTimes>,
    text: String,
    requests: Vec<BoardRequest>,
    /// Each side's last time the board's memory logged before the gap (white, black).
    earlier: [Option<u64>; 2],
    /// When the link came back (while a whole board is awaited), and whether one was asked
    /// for again since.
    link_up_at: Option<Millis>,
    asked_again: bool,
}

impl GapState {
    pub(super) fn is_open(&self) -> bool {
        !matches!(self.phase, Phase::Closed)
    }

    /// The `Gap` property.
    pub(super) fn text(&self) -> &str {
        &self.text
    }

    pub(super) fn take_request(&mut self) -> Option<BoardRequest> {
        (!self.requests.is_empty()).then(|| self.requests.remove(0))
    }
}

impl Session {
    /// The next thing the shell should send to the board for the gap logic, if any.
    pub fn poll_request(&mut self) -> Option<BoardRequest> {
        self.gap.take_request()
    }

    fn game_on(&self) -> bool {
        self.started && !self.arbiter.is_finished()
    }

    fn orientation(&self) -> Orientation {
        self.tracker.orientation().unwrap_or(Orientation::Normal)
    }

    fn board_of(&self, fields: &[FieldContent; 64]) -> Board {
        Placement::from_wire(fields, self.orientation()).to_board()
    }

    /// The placement the view shows while the gap holds the board back.
    pub(super) fn gap_placement(&self) -> Option<String> {
        if !self.gap.is_open() {
            return None;
        }
        self.gap
            .sensed
            .as_ref()
            .map(|f| Placement::from_wire(f, self.orientation()).board_fen())
    }

    /// Nothing will be read for a while (`cause`): from now on the board is held back.
    pub(super) fn gap_unread(&mut self, cause: Cause) {
        if !self.game_on() {
            return;
        }
        if !self.gap.is_open() {
            self.gap.cause = cause;
        }
        self.gap.phase = Phase::Unread;
        self.gap.link_up_at = None;
        self.gap.sensed = None;
        self.gap.text.clear();
        self.standing_illegal = None;
    }

    /// The link is back: a whole board is awaited from now.
    pub(super) fn gap_link_up(&mut self, now: Millis) {
        self.gap.link_up_at = Some(now);
        self.gap.asked_again = false;
    }

    /// A frame was lost on the line: what the board reports next may not follow from what was
    /// read, so a whole board is asked for and decides.
    pub(super) fn gap_line_loss(&mut self, now: Millis) {
        if self.game_on() && !self.gap.is_open() {
            self.gap_unread(Cause::LineLoss);
            self.gap_link_up(now);
            self.gap.requests.push(BoardRequest::SendBoard);
        }
    }

    /// A board message while the gap is open. Returns false when the message is not the
    /// gap's business (identification and the like: the normal path takes it).
    pub(super) fn gap_message(
        &mut self,
        message: &Message,
        now: Millis,
        out: &mut Vec<Event>,
    ) -> bool {
        if !self.gap.is_open() {
            return false;
        }
        match message {
            Message::ClockTimes(times) => {
                let pressed = times.status.connected
                    && self.gap.clock.as_ref().is_some_and(|c| {
                        c.status.connected
                            && c.status.lever_left_down != times.status.lever_left_down
                    });
                if pressed && let Phase::Arbiter { candidates, .. } = &mut self.gap.phase {
                    for c in candidates {
                        let _ = c.shadow.on_clock_press(now);
                    }
                }
                self.gap.clock = Some(*times);
            }
            Message::FieldUpdate { field, content } => {
                let Some(sensed) = self.gap.sensed.as_mut() else {
                    // Before a whole board: the next dump supersedes it.
                    return true;
                };
                if let Some(slot) = sensed.get_mut(usize::from(*field))
                    && *slot != *content
                {
                    *slot = *content;
                    self.gap.last_change = now;
                    if let Phase::Arbiter { candidates, .. } = &mut self.gap.phase {
                        for c in candidates {
                            let _ = c.shadow.on_field_update(*field, *content, now);
                        }
                    }
                }
            }
            Message::BoardDump(fields) => {
                let first = self.gap.sensed.is_none();
                if self.gap.sensed.as_ref() != Some(fields) {
                    self.gap.last_change = now;
                }
                self.gap.sensed = Some(**fields);
                if let Phase::Arbiter { candidates, .. } = &mut self.gap.phase {
                    for c in candidates {
                        let _ = c.shadow.on_board_dump(fields, now);
                    }
                }
                if first && matches!(self.gap.phase, Phase::Unread) {
                    self.gap_board_read(now, out);
                }
            }
            Message::EeMoves(log) => {
                if matches!(self.gap.phase, Phase::Memory { .. }) {
                    self.gap_memory(log, now, out);
                }
            }
            _ => return false,
        }
        true
    }

    /// Time passes while the gap is open: the memory's time-out, the search on a still board.
    pub(super) fn gap_tick(&mut self, now: Millis, out: &mut Vec<Event>) {
        match &mut self.gap.phase {
            Phase::Memory { asked } if now.saturating_sub(*asked) >= MEMORY_WAIT_MS => {
                tracing::info!("the board's memory did not come: searching the legal sequences");
                self.gap_search_phase();
            }
            Phase::Search { tried } => {
                let still = now.saturating_sub(self.gap.last_change);
                if still >= ILLEGAL_SETTLE_MS && *tried != Some(self.gap.last_change) {
                    *tried = Some(self.gap.last_change);
                    self.gap_search(now, out);
                } else if still >= UNREACHABLE_SETTLE_MS && *tried == Some(self.gap.last_change) {
                    // Searched, unreachable, and still standing: play continues from it.
                    self.gap_unreachable(now, out);
                }
            }
            Phase::Arbiter { candidates, .. } => {
                for c in candidates {
                    let _ = c.shadow.on_tick(now);
                }
            }
            Phase::Unread => {
                let Some(up) = self.gap.link_up_at else {
                    return;
                };
                let waited = now.saturating_sub(up);
                if waited >= DUMP_GIVE_UP_MS {
                    tracing::warn!(
                        "no whole board came after the link came back: following its changes from what was known"
                    );
                    self.close_gap(now, out);
                } else if waited >= DUMP_AGAIN_MS && !self.gap.asked_again {
                    self.gap.asked_again = true;
                    self.gap.requests.push(BoardRequest::SendBoard);
                }
            }
            _ => {}
        }
    }

    /// The first whole board after the gap.
    fn gap_board_read(&mut self, now: Millis, out: &mut Vec<Event>) {
        let Some(fields) = self.gap.sensed else {
            return;
        };
        let mut board = self.board_of(&fields);
        let known = self.tracker.position().board().clone();
        if self.tracker.orientation().is_none() {
            // Not yet learnt (a restarted daemon): the reading closer to the known position
            // is the board's way round (a gap moves a few pieces, turning it moves them all).
            let mut turned = board.clone();
            turned.rotate_180();
            let off = |b: &Board| crate::tracker::search_diff(b, &known).count();
            if off(&turned) < off(&board) {
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
        // Only pieces lifted from the known position: a move in progress, the tracker's job.
        let lifted_only = (board.occupied() & !known.occupied()).is_empty()
            && board
                .occupied()
                .into_iter()
                .all(|sq| board.piece_at(sq) == known.piece_at(sq));
        if !self.game_on() || board == known || start || lifted_only {
            self.close_gap(now, out);
            return;
        }
        tracing::info!(
            cause = self.gap.cause.text(),
            "the board changed while it was not read: reading its memory"
        );
        self.gap.phase = Phase::Memory { asked: now };
        self.gap.text = format!(
            "moves were made {}: reading the board's memory",
            self.gap.cause.text()
        );
        self.gap.requests.push(BoardRequest::ReadMemory);
    }

    /// The shell cannot ask the board (listen-only): search instead.
    pub(super) fn gap_no_memory(&mut self) {
        if matches!(self.gap.phase, Phase::Memory { .. }) {
            self.gap_search_phase();
        }
    }

    fn gap_search_phase(&mut self) {
        self.gap.phase = Phase::Search { tried: None };
        self.gap.text = format!(
            "moves were made {}: searching the legal sequences to the board",
            self.gap.cause.text()
        );
    }

    fn gap_memory(&mut self, log: &[EeEvent], now: Millis, out: &mut Vec<Event>) {
        let Some(fields) = self.gap.sensed else {
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
                tracing::info!(plies = n, "moves recovered from the board's memory");
                let note = format!(
                    "{} made {}, read from the board's memory",
                    plies(n),
                    self.gap.cause.text()
                );
                let mut earlier = [None, None];
                for (i, display) in [Display::Left, Display::Right].into_iter().enumerate() {
                    let color = self.arbiter.clock().color_of(display);
                    earlier[usize::from(color == Color::Black)] = found.before[i];
                }
                self.gap.earlier = earlier;
                self.replay_moves(&found.moves, &stamps, now, out);
                self.arbiter.note(note);
                self.close_gap(now, out);
            }
            Ok(_) => self.gap_search_phase(),
            Err(why) => {
                tracing::info!(%why, "the board's memory has nothing for the gap: searching");
                self.gap_search_phase();
            }
        }
    }

    /// The side whose clock runs, from the held reading.
    fn clock_side(&self) -> Option<Color> {
        let t = self.gap.clock.as_ref()?;
        if !t.status.connected || !t.status.running {
            return None;
        }
        let display = if t.status.left_running != t.status.right_running {
            if t.status.left_running {
                Display::Left
            } else {
                Display::Right
            }
        } else if t.status.lever_left_down {
            Display::Right
        } else {
            Display::Left
        };
        Some(self.arbiter.clock().color_of(display))
    }

    fn gap_search(&mut self, now: Millis, out: &mut Vec<Event>) {
        let Some(fields) = self.gap.sensed else {
            return;
        };
        let board = self.board_of(&fields);
        let from = self.tracker.position().clone();
        match search::explain(&from, &board, self.clock_side()) {
            search::Outcome::Same => self.close_gap(now, out),
            search::Outcome::Unique(moves) => {
                tracing::info!(line = %search::san_line(&from, &moves), "the only legal sequence to the board: recovered");
                let note = format!(
                    "{} made {}, recovered: the only legal sequence to the board",
                    plies(moves.len()),
                    self.gap.cause.text()
                );
                self.replay_moves(&moves, &[], now, out);
                self.arbiter.note(note);
                self.close_gap(now, out);
            }
            search::Outcome::Several { sequences, total } => {
                let listed: Vec<String> = sequences
                    .iter()
                    .enumerate()
                    .map(|(i, s)| {
                        format!(
                            "{}) {} [{}]",
                            i + 1,
                            search::san_line(&from, s),
                            search::uci_line(s)
                        )
                    })
                    .collect();
                let more = if total > sequences.len() as u64 {
                    format!("; {} more", total - sequences.len() as u64)
                } else {
                    String::new()
                };
                self.gap.text = format!(
                    "{total} sequences explain the board: waiting for the arbiter (ResolveGap): {}{more}",
                    listed.join("; ")
                );
                tracing::warn!(gap = %self.gap.text, "moves made during a gap are ambiguous");
                let candidates = sequences
                    .into_iter()
                    .map(|moves| Candidate {
                        shadow: self.shadow_after(&moves, &fields, now),
                        moves,
                    })
                    .collect();
                self.gap.phase = Phase::Arbiter {
                    target: fields,
                    candidates,
                };
            }
            search::Outcome::GaveUp => {
                self.gap.text = format!(
                    "moves were made {}: too many sequences explain the board; waiting for the arbiter (ResolveGap)",
                    self.gap.cause.text()
                );
                tracing::warn!(gap = %self.gap.text, "gap search gave up");
                self.gap.phase = Phase::Arbiter {
                    target: fields,
                    candidates: Vec::new(),
                };
            }
            search::Outcome::Unreachable => {
                self.gap.text = format!(
                    "moves were made {}: no legal sequence of up to {} plies reaches the board; waiting for it to stand still",
                    self.gap.cause.text(),
                    search::MAX_PLIES
                );
            }
        }
    }

    /// A tracker after `moves`, reading `fields` as the board now.
    fn shadow_after(&self, moves: &[Move], fields: &[FieldContent; 64], now: Millis) -> Tracker {
        let mut shadow = self.tracker.clone();
        let o = self.orientation();
        for &m in moves {
            let mut next = shadow.position().clone();
            next.play_unchecked(m);
            let _ = shadow.on_board_dump(&Placement::from_board(next.board()).to_wire(o), now);
        }
        let _ = shadow.on_board_dump(fields, now);
        shadow
    }

    /// No legal sequence reaches the board and it stands still: continue from it.
    fn gap_unreachable(&mut self, now: Millis, out: &mut Vec<Event>) {
        let note = format!(
            "moves were made {} that no legal sequence of up to {} plies explains",
            self.gap.cause.text(),
            search::MAX_PLIES
        );
        if self.continue_from_board(&note, now, out) {
            self.close_gap(now, out);
        } else {
            self.gap.text = format!(
                "moves were made {}: the board shows no playable position (pieces in hand, impossible material); waiting for it, or for the arbiter (ResolveGap)",
                self.gap.cause.text()
            );
        }
    }

    /// Play continues from the board as it stands, in a new segment; no one is accused.
    /// Returns false when the board cannot be a position (pieces in hand: keep waiting).
    fn continue_from_board(&mut self, note: &str, now: Millis, out: &mut Vec<Event>) -> bool {
        let Some(fields) = self.gap.sensed else {
            return false;
        };
        let turn = self
            .clock_side()
            .unwrap_or_else(|| self.tracker.position().turn());
        let mut trial = self.tracker.clone();
        let _ = trial.on_board_dump(&fields, now);
        if trial.adopt_placement(turn).is_err() {
            return false;
        }
        let _ = self.tracker.on_board_dump(&fields, now);
        match self.tracker.adopt_placement(turn) {
            Ok(_) => {
                tracing::warn!(%note, "play continues from the board in a new segment");
                let ruled = self
                    .arbiter
                    .continue_after_gap(self.tracker.position().clone(), note);
                self.apply_arbiter(ruled, out);
                true
            }
            Err(_) => false,
        }
    }

    /// The arbiter says which moves were made during the gap (none: continue from the board).
    pub(super) fn resolve_gap(
        &mut self,
        moves: Vec<String>,
        now: Millis,
        out: &mut Vec<Event>,
    ) -> Result<(), CommandError> {
        let target = match &self.gap.phase {
            Phase::Arbiter { target, .. } => Some(*target),
            Phase::Memory { .. } | Phase::Search { .. } => self.gap.sensed,
            _ => None,
        };
        let Some(target) = target else {
            return Err(CommandError::InvalidArgument(
                "no gap is open on this board: there is nothing to resolve".into(),
            ));
        };
        if moves.is_empty() {
            let note = format!(
                "moves were made {}; the arbiter continued from the board",
                self.gap.cause.text()
            );
            if !self.continue_from_board(&note, now, out) {
                return Err(CommandError::InvalidArgument(
                    "the board shows no playable position (pieces in hand, a king missing): set the pieces, then resolve again".into(),
                ));
            }
            self.close_gap(now, out);
            return Ok(());
        }
        let from = self.tracker.position().clone();
        let mut pos = from.clone();
        let mut line = Vec::with_capacity(moves.len());
        for (i, text) in moves.iter().enumerate() {
            let m = text
                .parse::<UciMove>()
                .ok()
                .and_then(|u| u.to_move(&pos).ok())
                .ok_or_else(|| {
                    CommandError::InvalidArgument(format!(
                        "move {} `{text}` is not a legal UCI move in {}",
                        i + 1,
                        crate::arbiter::fen_of(&pos)
                    ))
                })?;
            pos.play_unchecked(m);
            line.push(m);
        }
        let target_board = self.board_of(&target);
        let now_board = self.gap.sensed.map(|f| self.board_of(&f));
        if *pos.board() != target_board && now_board.as_ref() != Some(pos.board()) {
            return Err(CommandError::InvalidArgument(format!(
                "{} lead from the last known position to {}, not to the board ({})",
                search::san_line(&from, &line),
                Placement::from_board(pos.board()).board_fen(),
                Placement::from_board(&target_board).board_fen()
            )));
        }
        // Play went on from the chosen story: its follower knows the moves since.
        let mut all = line.clone();
        if let Phase::Arbiter { candidates, .. } = &self.gap.phase
            && let Some(c) = candidates.iter().find(|c| c.moves == line)
        {
            let known = self.tracker.moves().len() + line.len();
            let followed = c.shadow.moves();
            if followed.len() > known
                && followed[..self.tracker.moves().len()] == *self.tracker.moves()
            {
                all.extend_from_slice(&followed[known..]);
            }
        }
        let note = format!(
            "{} made {}, as the arbiter resolved them",
            plies(line.len()),
            self.gap.cause.text()
        );
        tracing::info!(line = %search::san_line(&from, &all), "gap resolved by the arbiter");
        self.replay_moves(&line, &[], now, out);
        self.arbiter.note(note);
        self.replay_moves(&all[line.len()..], &[], now, out);
        let on_board = self.gap.sensed.map(|f| self.board_of(&f));
        if on_board.as_ref() == Some(self.tracker.position().board()) || on_board.is_none() {
            self.close_gap(now, out);
        } else {
            // Play went on in a way no follower read: search from the resolved position.
            self.gap.last_change = now;
            self.gap_search_phase();
        }
        Ok(())
    }

    /// Publish `moves` through the tracker, one whole board per move, as if the board had
    /// been read after each; `stamps[k]`: the mover's clock time after move k, if known.
    fn replay_moves(
        &mut self,
        moves: &[Move],
        stamps: &[Option<(Color, u64)>],
        now: Millis,
        out: &mut Vec<Event>,
    ) {
        let o = self.orientation();
        // Each side's time as last known: the mover's clock runs, the other's stands.
        let mut last = [
            self.arbiter.clock().known_time_ms(Color::White),
            self.arbiter.clock().known_time_ms(Color::Black),
        ];
        for (slot, logged) in last.iter_mut().zip(std::mem::take(&mut self.gap.earlier)) {
            *slot = slot.or(logged);
        }
        for (k, &m) in moves.iter().enumerate() {
            let mut next: Chess = self.tracker.position().clone();
            next.play_unchecked(m);
            let fields = Placement::from_board(next.board()).to_wire(o);
            let mut tracked = self.tracker.on_board_dump(&fields, now);
            // A recovered move is complete (play went on after it): never held.
            tracked.extend(self.tracker.release_held());
            let before = out.len();
            self.apply_tracker(tracked, now, out);
            if self.tracker.position() != &next {
                tracing::warn!(
                    k,
                    "a recovered move was not read as itself; the rest is left to the board"
                );
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
    fn close_gap(&mut self, now: Millis, out: &mut Vec<Event>) {
        let was_open = self.gap.is_open();
        self.gap.phase = Phase::Closed;
        self.gap.text.clear();
        self.gap.link_up_at = None;
        if !was_open {
            return;
        }
        if let Some(fields) = self.gap.sensed.take() {
            let tracked = self.tracker.on_board_dump(&fields, now);
            self.apply_tracker(tracked, now, out);
        }
        self.arbiter.after_gap();
        self.lever_left_down = None;
        if let Some(clock) = self.gap.clock.take() {
            self.clock_live = true;
            self.on_clock(&clock, now, out);
        }
    }
}

fn plies(n: usize) -> String {
    if n == 1 {
        "1 ply".into()
    } else {
        format!("{n} plies")
    }
}
