//! The pure per-board state machine: tracker + clock + arbiter + game, time passed in.
//!
//! The daemon feeds every board input (what the board's driver read, in chess terms: see
//! `board_input`) and every operator command into
//! [`Session::handle`] with the current time in milliseconds, publishes the returned
//! [`Event`]s (after journalling them) and re-reads [`Session::view`] to announce property
//! changes. A session rebuilt with [`Session::restore`] from the journalled events is
//! indistinguishable from the one that produced them.

mod clock_confirm;
mod command;
mod dating;
mod fact;
mod illegal;
mod input;
mod recovery_host;
mod restore;
mod result_gesture;
pub mod signal;
mod view;

use shakmaty::{Chess, Color, Move, Position};

use crate::arbiter::timecontrol::TimeControl;
use crate::arbiter::{Arbiter, Ruling, color_name, fen_of, parse_fen_in, unexchanged_promotion};
use crate::board_input::{BoardInput, ClockReading};
use crate::contract::{BoardProps, Claim};
use crate::game::Game;
use crate::patch;
use crate::recovery::{Cause, Recovery};
use crate::tracker::gesture;
use crate::tracker::{Tracker, TrackerEvent};
use crate::vocab::{CommandError, GameResult, Millis, Termination, Variant, WhiteDisplay};

pub use crate::event::{Event, RecordFact, is_journalled};
pub use crate::fact::{Fact, Level};
pub use crate::recovery::{
    BoardRequest, FEWER_PIECES_SETTLED_MS, MEMORY_GRACE_MS, MEMORY_WAIT_MS, STILL_ASK_MS,
    UNREACHABLE_SETTLE_MS,
};
pub use clock_confirm::{FLAG_WAIT_MS, HOLD_LIMIT_MS, STOP_WAIT_MS};
pub use input::{Command, Input, SessionConfig};
use view::{RecordSignature, TextSignature};

/// One board's game state machine (see the module documentation).
#[derive(Debug, Clone)]
pub struct Session {
    /// The board's settings but the arbiter's, which its arbiter holds (each held once).
    config: SessionConfig<()>,
    tracker: Tracker,
    arbiter: Arbiter,
    /// A game has begun on this board (start position seen, or an operator command).
    started: bool,
    /// What the board says it is: `SerialNumber`, `FirmwareVersion`, `BoardModel`,
    /// `ClockModel`, `Battery` (see `identity`).
    identity: crate::identity::Identity,
    /// Lever position of the last valid clock reading: a change is a press.
    lever_left_down: Option<bool>,
    /// A completed illegal move whose position still stands on the board: if the opponent
    /// presses with it standing, he moved on without claiming and the illegal move stands.
    standing_illegal: Option<(Color, String)>,
    /// The board the completed illegal move left (before the opponent's reply).
    illegal_board: Option<shakmaty::Board>,
    /// The game record as last journalled, to emit a record only when it changed.
    journalled: RecordSignature,
    /// The record as the journal has it, which the next patch is computed from (`None`:
    /// the next record is a whole snapshot).
    journalled_game: Option<Game>,
    /// The clock side as last journalled (see [`RecordFact::ClockSide`]).
    journalled_side: Option<WhiteDisplay>,
    /// The record the view's PGN text and move list were rendered from.
    view_text: Option<TextSignature>,
    /// The view's FEN and placement texts with what they were written from (see
    /// `session/view.rs`): most inputs change neither.
    view_texts: view::TextCache,
    /// The clock has been heard since the serial link last came up (see [`Input::Link`]):
    /// only then can its silence mean a flag fell.
    clock_live: bool,
    /// The way back when the record and the board part (see `crate::recovery`).
    recovery: Recovery,
    /// Both kings on the centre squares since then, showing this result (the result
    /// gesture, decided after [`gesture::GESTURE_HOLD_MS`]).
    gesture: Option<(Millis, GameResult)>,
    /// The record's last move is a king's step onto a centre square that may still be the
    /// gesture's first half: it is kept out of the broadcast outputs (see
    /// [`Session::pending_plies`]) until it is final (see [`gesture::FirstHalf`]).
    gesture_first: Option<gesture::FirstHalf>,
    /// The serial link is up (the last [`Input::Link`]); shown as `Connected`.
    link_up: bool,
    /// The board's properties, re-rendered after every input.
    view: BoardProps,
    /// What the log should tell, until the shell drains it (see `session/fact.rs`).
    facts: Vec<Fact>,
    /// The gate that holds a decisive clock reading (and what the board reports after it)
    /// until the clock confirms it (see `session/clock_confirm.rs`).
    confirm: clock_confirm::ClockConfirm,
    /// Events of inputs replayed from behind a held reading when the input that released
    /// them was a refused command: returned with the next input's.
    deferred: Vec<Event>,
    /// The clock reading the broadcast PGN's clock tags show (see `crate::clock_tags`).
    clock_tags: crate::clock_tags::ClockTagger,
    /// Wall-clock Unix milliseconds less session time, as the shell last said
    /// ([`Session::set_wall_clock`]); `None` until it does: no clock tags then.
    wall_offset_ms: Option<i64>,
    /// The time of the input being handled (for what the view waits on).
    last_now: Millis,
    /// The day new games are dated with (see `session/dating.rs`).
    dating: dating::Dating,
}

impl Session {
    /// A session for a board with no game yet.
    pub fn new(config: SessionConfig) -> Self {
        let tags = game_tags(&config, config.arbiter.time_control.as_ref());
        let (config, arbiter_config) = config.split();
        let mut tracker = Tracker::new(Chess::default(), config.orientation);
        tracker.set_variant(config.variant);
        let arbiter = Arbiter::new(arbiter_config, Chess::default(), tags);
        let identity = crate::identity::Identity::new(
            crate::identity::Identity::is_bluetooth_port(&config.port),
        );
        let dating = dating::Dating::for_config(&config);
        let mut s = Session {
            config,
            tracker,
            arbiter,
            started: false,
            identity,
            lever_left_down: None,
            standing_illegal: None,
            illegal_board: None,
            journalled: RecordSignature::default(),
            journalled_game: None,
            journalled_side: None,
            view_text: None,
            view_texts: view::TextCache::default(),
            clock_live: true,
            recovery: Recovery::default(),
            gesture: None,
            gesture_first: None,
            link_up: false,
            view: BoardProps::default(),
            facts: Vec::new(),
            confirm: clock_confirm::ClockConfirm::default(),
            deferred: Vec::new(),
            clock_tags: Default::default(),
            wall_offset_ms: None,
            last_now: 0,
            dating,
        };
        s.journalled = RecordSignature::of(s.arbiter.game(), s.arbiter.position());
        s.refresh_view();
        s
    }

    /// Feed one input at time `now`; returns the events it caused, or why a command was refused.
    ///
    /// A decisive clock reading is held until the clock confirms it, and the board input after
    /// it waits with it (see `session/clock_confirm.rs`): the events of an input may then come
    /// with a later one's, each input still acted on at its own time. When a command that
    /// released such waiting input is refused, that input's events come with the next call.
    pub fn handle(&mut self, input: Input, now: Millis) -> Result<Vec<Event>, CommandError> {
        let mut out = std::mem::take(&mut self.deferred);
        let mut refused = None;
        let admitted = self.confirm.admit(input, now);
        for (times, why) in self.confirm.take_dropped() {
            let reading = times.payload().map(|b| format!("{b:02x}")).join(" ");
            self.report(Fact::ClockReadingDropped { reading, why });
        }
        for (input, at) in admitted {
            if let Err(e) = self.step(input, at, &mut out) {
                refused = Some(e);
            }
        }
        match refused {
            None => Ok(out),
            Some(e) => {
                self.deferred = out;
                Err(e)
            }
        }
    }

    /// Clock readings dropped as noise or left unconfirmed, and held readings confirmed, since
    /// this session began (see `session/clock_confirm.rs`).
    pub fn clock_readings_filtered(&self) -> (u64, u64) {
        self.confirm.counts()
    }

    /// One input the clock gate let through, at the time it happened.
    fn step(
        &mut self,
        input: Input,
        now: Millis,
        out: &mut Vec<Event>,
    ) -> Result<(), CommandError> {
        self.last_now = now;
        match input {
            Input::Board(message) => {
                if self.identity.on_input(&message) && self.identity.turns_itself() {
                    self.tracker.board_turns_itself();
                }
                if !self.with_recovery(|r, s| r.handle_message(s, &message, now, out)) {
                    self.on_message(message, now, out)
                }
            }
            Input::Command(command) => self.on_command(command, now, out)?,
            // While a gap is open, time is the recovery's.
            Input::Tick if self.recovery.is_open() => {
                self.with_recovery(|r, s| r.handle_tick(s, now, out));
            }
            Input::LineLoss => self.with_recovery(|r, s| r.handle_line_loss(s, now)),
            Input::MemoryUnavailable => self.with_recovery(|r, s| r.handle_no_memory(s, now, out)),
            Input::Tick => {
                let tracked = self.tracker.on_tick(now);
                self.apply_tracker(tracked, now, out);
                if self.clock_live && !self.recovery.holds_clock() {
                    self.arbiter
                        .set_moves_undecided(self.tracker.stories_open());
                    let ruled = self.arbiter.tick(now);
                    self.apply_arbiter(ruled, out);
                }
            }
            Input::Link(up) => {
                // Down: nothing is heard. Up: the clock's silence only counts again once it
                // has spoken. Either way the lever may have moved while nobody was listening,
                // so the next reading is a fresh start, not a press.
                self.clock_live = false;
                self.lever_left_down = None;
                self.link_up = up;
                if up {
                    self.identity.link_up();
                    self.recovery.handle_link_up(now);
                } else {
                    // Another clock may be on the cable when the link is back: the next
                    // handshake asks its version again.
                    self.identity.link_down();
                    self.with_recovery(|r, s| r.handle_unread(s, Cause::Disconnected, Some(now)));
                }
            }
        }
        self.with_recovery(|r, s| r.poll_live_stories(s, now, out));
        self.watch_gesture_first(now);
        self.check_gesture(now, out);
        self.journal_snapshot(out);
        self.journal_clock_side(out);
        self.refresh_view();
        Ok(())
    }

    /// The wall clock (Unix milliseconds) at session time `now`: the shell says it before its
    /// inputs, so the clock tags' `ReferenceTime` is the instant a reading came in (a wall
    /// clock set meanwhile, as NTP does at a Raspberry Pi's boot, is followed).
    pub fn set_wall_clock(&mut self, unix_ms: u64, now: Millis) {
        let offset = i128::from(unix_ms) - i128::from(now);
        self.wall_offset_ms = i64::try_from(offset).ok();
    }

    /// The board's port is a Bluetooth serial link (an rfcomm device, which the shell
    /// finds by resolving the configured path): the board is named a Bluetooth board at once.
    pub fn set_bluetooth_port(&mut self, bluetooth: bool) {
        self.identity.set_bluetooth_port(bluetooth);
        self.refresh_view();
    }

    /// What the board has said about itself (model, battery).
    pub fn identity(&self) -> &crate::identity::Identity {
        &self.identity
    }

    /// The next thing the shell should send to the board for the recovery, if any.
    pub fn poll_request(&mut self) -> Option<BoardRequest> {
        self.recovery.poll_request()
    }

    /// The current state as the board's D-Bus properties show it.
    pub fn view(&self) -> &BoardProps {
        &self.view
    }

    /// The game record.
    pub fn game(&self) -> &Game {
        self.arbiter.game()
    }

    /// The configuration this session runs with (rules and edition as last set): its own
    /// settings with its arbiter's.
    pub fn config(&self) -> SessionConfig {
        self.config.with_arbiter(self.arbiter.config().clone())
    }

    /// The board orientation the tracker detected (`None`: not known yet).
    pub fn detected_orientation(&self) -> Option<crate::board::Orientation> {
        self.tracker.orientation()
    }

    /// How many provisional moves the tracker has replaced so far (retract + play).
    pub fn corrections(&self) -> u32 {
        self.tracker.corrections()
    }

    /// When the session next needs an [`Input::Tick`] if nothing else arrives (a held move's
    /// dwell, a move becoming final, a placement settling, the recovery's deadlines: the
    /// memory awaited, a board settling in a gap, a still board to ask about, a held clock
    /// reading's deadline), quinn-proto style: the caller
    /// sleeps until then instead of polling fast. `None`: nothing waits on time.
    pub fn next_wakeup(&self) -> Option<Millis> {
        // While a clock reading is held, every tick waits behind it: only its deadline counts.
        if self.confirm.holding() {
            return self.confirm.deadline();
        }
        let gesture = [
            self.gesture_first
                .as_ref()
                .and_then(gesture::FirstHalf::final_at),
            self.gesture
                .map(|(since, _)| since.saturating_add(gesture::GESTURE_HOLD_MS)),
        ];
        // The arbiter is ticked only while the clock is live and not held back (`step`):
        // its deadline counts only then, or a deadline no tick clears would spin the shell.
        let arbiter = (self.clock_live && !self.recovery.holds_clock())
            .then(|| self.arbiter.next_wakeup())
            .flatten();
        gesture
            .into_iter()
            .flatten()
            .chain(self.tracker.next_wakeup())
            .chain(self.recovery.next_wakeup(self))
            .chain(arbiter)
            .min()
    }

    /// Whether the session wants the shell's periodic tick (`link::TICK_MS`) besides its
    /// [`Session::next_wakeup`]: while a rule that is judged at each tick rather than at a
    /// deadline of its own waits (the arbiter's press grace, a period's control, the clock's
    /// move counter), a gap is open, or a clock reading is held. Otherwise a tick changes
    /// nothing (every other rule that waits on time has its deadline in `next_wakeup`), so
    /// an idle board is not woken ten times a second. The shell still ticks now and then
    /// (with a read `link::IDLE_TICK_MS` after the last tick, by its timer after
    /// `link::QUIET_TICK_MS`), so a rule missing here would run late, never not at all.
    pub fn wants_ticks(&self) -> bool {
        self.confirm.holding()
            || self.recovery.is_open()
            || (self.clock_live && self.arbiter.wants_ticks())
    }

    /// How many of the record's last moves are not final yet (contract section 2): they are
    /// in `Moves` and `MovePlayed`, but not in the `Pgn` text and the PGN files. A king's
    /// step onto a centre square that may still be the result gesture's first half is not
    /// final either, whatever the tracker says (the gesture would retract it).
    pub fn pending_plies(&self) -> usize {
        if self.arbiter.is_finished() {
            return 0;
        }
        let gesture = usize::from(self.gesture_first.is_some());
        self.tracker
            .pending_plies()
            .max(gesture)
            .min(self.arbiter.game().current_moves().len())
    }

    // ----- board input -----------------------------------------------------------------

    fn on_message(&mut self, message: BoardInput, now: Millis, out: &mut Vec<Event>) {
        match message {
            BoardInput::Scan(fields) => {
                let tracked = self.tracker.on_board_dump(&fields, now);
                self.apply_tracker(tracked, now, out);
            }
            BoardInput::Square { index, content } => {
                let tracked = self.tracker.on_field_update(index, content, now);
                self.apply_tracker(tracked, now, out);
            }
            BoardInput::Clock(times) => {
                self.clock_live = true;
                self.on_clock(&times, now, out);
            }
            // What the board says about itself went to `identity` (see `step`); a memory
            // matters only to an open gap, which took it before this (see `crate::recovery`).
            BoardInput::Identity(_) | BoardInput::Battery(_) | BoardInput::Memory(_) => {}
        }
    }

    fn on_clock(&mut self, times: &ClockReading, now: Millis, out: &mut Vec<Event>) {
        if times.status.connected {
            let lever = times.status.lever_left_down;
            let pressed = self.lever_left_down.is_some_and(|before| before != lever);
            self.lever_left_down = Some(lever);
            if pressed {
                // A press ends a move: a king's step to the centre was no gesture.
                self.gesture_first = None;
                // The mover says the move is done: the tracker closes its correction window
                // (and may report an illegal placement that settled) before the arbiter ties
                // the press to what stands on the board.
                let presser = self.arbiter.presser(lever);
                let tracked = self.tracker.on_clock_press_by(now, presser);
                self.apply_tracker(tracked, now, out);
                if self.standing_illegal.is_some() {
                    self.illegal_move_stands(now, out);
                }
            }
        } else {
            self.lever_left_down = None;
        }
        self.arbiter
            .set_moves_undecided(self.tracker.stories_open());
        let ruled = self.arbiter.on_clock(times, now);
        self.apply_arbiter(ruled, out);
    }

    fn apply_tracker(&mut self, events: Vec<TrackerEvent>, now: Millis, out: &mut Vec<Event>) {
        for event in events {
            match event {
                TrackerEvent::GameStarted { .. } => {
                    // The start position the board shows (any of Chess960's on such a board).
                    self.start_game(self.tracker.position().clone(), out);
                }
                TrackerEvent::MovePlayed { mv, .. } => self.on_move(mv, now, out),
                TrackerEvent::MoveRetracted { .. } => {
                    let before = self.arbiter.game().ply_count();
                    let ruled = self.arbiter.on_retract(now);
                    if self.arbiter.game().ply_count() < before {
                        out.push(Event::MoveRetracted {
                            ply: before as u32,
                            fen: self.arbiter.fen(),
                        });
                    }
                    self.apply_arbiter(ruled, out);
                }
                TrackerEvent::IllegalPlacement { turn, description } => {
                    if !self.started || self.arbiter.is_finished() {
                        continue;
                    }
                    // Kings on the centre squares are the result gesture, not a mistake.
                    if self.gesture_on_board().is_some() {
                        continue;
                    }
                    // A board read on after a gap closed (on a move begun, on the known
                    // position) parted from the record during the gap, not by a hand: the gap
                    // opens again and searches.
                    if self.with_recovery(|r, s| r.reopen_watch(s, now, out)) {
                        continue;
                    }
                    // A board a few legal plies ahead is play, not a mistake.
                    if self.catch_up(now, out) {
                        continue;
                    }
                    let queen_move = self.unexchanged_promotion(turn);
                    let placement = self.tracker.placement().board_fen();
                    out.push(Event::IllegalPlacement {
                        player: turn.into(),
                        description: description.clone(),
                        placement,
                    });
                    let ruled =
                        self.arbiter
                            .on_illegal_placement(turn, &description, queen_move, now);
                    self.apply_arbiter(ruled, out);
                }
                TrackerEvent::IllegalPlacementCleared => {
                    let ruled = self.arbiter.on_illegal_cleared(now);
                    self.apply_arbiter(ruled, out);
                }
                TrackerEvent::InSync(in_sync) => {
                    if in_sync {
                        // The position was restored on the board: nothing stands any more.
                        self.standing_illegal = None;
                    }
                }
            }
        }
    }

    /// A board that has run ahead of the record by more plies than the tracker explains (it
    /// reads one or two) is caught up as a gap is: when exactly one legal sequence leads from
    /// the game position to the board, it is played. Returns whether it was; otherwise the
    /// placement is what the tracker says it is.
    fn catch_up(&mut self, now: Millis, out: &mut Vec<Event>) -> bool {
        use crate::tracker::sequences::{Outcome, explain};
        let board = self.tracker.placement().to_board();
        let Outcome::Unique(moves) = explain(self.tracker.position(), &board, None) else {
            return false;
        };
        if moves.len() < 3 {
            // One or two plies the tracker judged itself (a recapture it could not tell
            // from pieces in hand, a story it could not pick): nothing is guessed here.
            return false;
        }
        for mv in moves {
            let tracked = self.tracker.play_shown(mv);
            self.apply_tracker(tracked, now, out);
        }
        true
    }

    fn on_move(&mut self, mv: Move, now: Millis, out: &mut Vec<Event>) {
        if !self.started {
            // A game that began before eboardd saw a start position: take the board's game
            // as it is (the tracker only reports moves from its known position).
            self.started = true;
            out.push(Event::GameStarted {
                fen: self.arbiter.fen(),
            });
            self.date_new_game(out);
        }
        let before = self.arbiter.game().ply_count();
        let ruled = self.arbiter.on_move(mv, now);
        let ply = self.arbiter.game().ply_count();
        if ply > before {
            self.gesture_first = gesture::FirstHalf::watch(mv, ply);
        }
        if ply > before
            && let Some(record) = self.arbiter.game().current_moves().last()
        {
            out.push(Event::MovePlayed {
                ply: ply as u32,
                san: record.san.clone(),
                uci: record.uci.clone(),
                fen: self.arbiter.fen(),
                white_ms: self.arbiter.white_ms(),
                black_ms: self.arbiter.black_ms(),
            });
        }
        self.apply_arbiter(ruled, out);
    }

    fn apply_arbiter(&mut self, rulings: Vec<Ruling>, out: &mut Vec<Event>) {
        for ruling in rulings {
            match ruling {
                Ruling::Publish(event) => {
                    match &event {
                        Event::IllegalMoveCompleted {
                            player,
                            description,
                            ..
                        } => {
                            self.standing_illegal = Some(((*player).into(), description.clone()));
                            self.illegal_board = Some(self.tracker.placement().to_board());
                            // A press with no move, or a 7.5.2 promotion that stands as a
                            // queen, leaves no illegal position on the board.
                            if self.tracker.in_sync()
                                || self.tracker.position() != self.arbiter.position()
                            {
                                self.standing_illegal = None;
                            }
                        }
                        // The game ended on its last move: nothing can correct it any more.
                        Event::GameEnded { .. } => self.tracker.make_final(),
                        _ => {}
                    }
                    out.push(event);
                }
                Ruling::PromotionStands { san, uci } => {
                    // 7.5.2: the tracker takes the position with the queen as the game's.
                    let _ = self.tracker.set_position(self.arbiter.position().clone());
                    out.push(Event::MovePlayed {
                        ply: self.arbiter.game().ply_count() as u32,
                        san,
                        uci,
                        fen: self.arbiter.fen(),
                        white_ms: self.arbiter.white_ms(),
                        black_ms: self.arbiter.black_ms(),
                    });
                }
            }
        }
    }

    /// 7.5.2: the queen promotion the sensed board shows but for the pawn left on the
    /// last rank (only when `turn` is the side to move).
    fn unexchanged_promotion(&self, turn: Color) -> Option<Move> {
        let pos = self.arbiter.position();
        (pos.turn() == turn)
            .then(|| unexchanged_promotion(pos, &self.tracker.placement().to_board()))
            .flatten()
    }

    fn start_game(&mut self, start: Chess, out: &mut Vec<Event>) {
        self.started = true;
        self.standing_illegal = None;
        let ruled = self.arbiter.new_game(
            start,
            game_tags(&self.config, self.arbiter.config().time_control.as_ref()),
        );
        out.push(Event::GameStarted {
            fen: self.arbiter.fen(),
        });
        self.date_new_game(out);
        self.apply_arbiter(ruled, out);
    }

    // ----- operator commands -----------------------------------------------------------
}

/// The tracker's own game-start report after an operator command is already announced.
fn without_game_start(events: Vec<TrackerEvent>) -> Vec<TrackerEvent> {
    events
        .into_iter()
        .filter(|e| !matches!(e, TrackerEvent::GameStarted { .. }))
        .collect()
}

/// The configured tags plus the board's name as the PGN `Board` tag. The record's own tags
/// (`game::RECORD_TAGS`: `PlyCount`, `Termination`, `Variant`…) are never taken from the
/// configuration, whatever let one through (the configuration reader refuses them): the game
/// writes them, `Variant` from the board's own setting.
fn game_tags<A>(
    config: &SessionConfig<A>,
    time_control: Option<&TimeControl>,
) -> Vec<(String, String)> {
    let mut tags: Vec<(String, String)> = config
        .tags
        .iter()
        .filter(|(n, _)| !crate::game::RECORD_TAGS.contains(&n.as_str()))
        .cloned()
        .collect();
    if !config.name.is_empty() && !tags.iter().any(|(n, _)| n == "Board") {
        tags.push(("Board".into(), config.name.clone()));
    }
    if config.variant == Variant::Chess960 && !tags.iter().any(|(n, _)| n == "Variant") {
        tags.push(("Variant".into(), "Chess960".into()));
    }
    if let Some(tc) = time_control
        && !tags.iter().any(|(n, _)| n == "TimeControl")
    {
        tags.push(("TimeControl".into(), tc.to_string()));
    }
    tags
}
