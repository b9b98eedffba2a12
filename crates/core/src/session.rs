//! The pure per-board state machine: tracker + clock + arbiter + game, time passed in.
//!
//! The daemon feeds every decoded serial message and every operator command into
//! [`Session::handle`] with the current time in milliseconds, publishes the returned
//! [`Event`]s (after journalling them) and re-reads [`Session::view`] to announce property
//! changes. A session rebuilt with [`Session::restore`] from the journalled events is
//! indistinguishable from the one that produced them.

mod fact;
mod gap;
mod recovery;
pub mod signal;

use serde::{Deserialize, Serialize};

use shakmaty::{Chess, Color, Move, Position};

use crate::arbiter::{
    Arbiter, ArbiterConfig, Ruling, color_name, fen_of, parse_fen_in, unexchanged_promotion,
};
use crate::contract::{BoardProps, Claim};
use crate::game::Game;
use crate::patch;
use crate::protocol::{ClockTimes, Message};
use crate::tracker::gesture;
use crate::tracker::{Tracker, TrackerEvent};
use crate::vocab::{
    ClaimKind, CommandError, Edition, GameResult, Millis, OrientationSetting, Player, Rules,
    Termination, Variant, WhiteDisplay,
};

pub use crate::event::{Event, RecordFact, is_journalled};
pub use fact::{Fact, Level};
pub use gap::{
    BoardRequest, FEWER_PIECES_SETTLED_MS, MEMORY_GRACE_MS, MEMORY_WAIT_MS, UNREACHABLE_SETTLE_MS,
};
pub use recovery::STILL_ASK_MS;

/// Everything a session needs to know about its board, from the configuration.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SessionConfig {
    /// The board's name (PGN "Board" tag, the `Name` property).
    pub name: String,
    /// Where the board is plugged in (the `Port` property). The session never opens it: it
    /// only shows it, like the name.
    #[serde(default)]
    pub port: String,
    pub rules: Rules,
    pub edition: Edition,
    pub guidelines_iii: bool,
    pub white_display: WhiteDisplay,
    pub orientation: OrientationSetting,
    /// PGN TimeControl-style periods, e.g. `40/5400+30:1800+30` (stored as that string).
    pub time_control: Option<crate::arbiter::timecontrol::TimeControl>,
    /// Tags for every game on this board (Event, Round, White, Black, ...).
    pub tags: Vec<(String, String)>,
    /// The table number (`number` in the configuration; 0: none).
    #[serde(default)]
    pub number: u32,
    #[serde(default)]
    pub variant: Variant,
    /// For measuring only (`benches/gap_soak`: how often a gap needs the arbiter without
    /// the clock's witness): the gap search ignores the clock's times after a gap. Never
    /// set from a configuration file.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gap_without_clock_witness: bool,
}

/// What the session is fed.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// A decoded message from the board (or the clock behind it).
    Board(Message),
    /// An operator command (a D-Bus method call).
    Command(Command),
    /// Nothing happened; lets time-based logic (a settled illegal placement, flag fall while
    /// the clock is silent) run.
    Tick,
    /// The serial link came up (`true`) or was lost (`false`). While it is down, a silent
    /// clock says nothing about the players' time, so no flag can fall by silence; and what
    /// happens on the board meanwhile is a gap (see `session/gap.rs`), never an illegal move.
    Link(bool),
    /// A frame was lost on the line (bytes that could not be decoded cut a message): the
    /// next whole board decides whether anything was missed. The session asks for one
    /// ([`BoardRequest::SendBoard`]).
    LineLoss,
    /// The board cannot be asked for its memory ([`BoardRequest::ReadMemory`]; a listen-only
    /// link): the gap is resolved without it.
    MemoryUnavailable,
}

/// Operator commands: the mutating methods of the contract's `org.eboardd.Bridge1.Board`.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    NewGame,
    SetPosition(String),
    SetTags(Vec<(String, String)>),
    SetRules(Rules),
    TakeBack,
    AcceptClaim {
        player: Player,
        kind: ClaimKind,
        detail: String,
    },
    Adjudicate {
        result: GameResult,
        reason: String,
    },
    /// The moves made during a gap, in UCI, as the arbiter knows them; none: continue from
    /// the board in a new segment.
    ResolveGap(Vec<String>),
    /// Show a text on the board's clock for a few seconds. The serial link writes it (the
    /// board task handles it before the session; see `protocol::clock_channel`).
    ShowClockMessage(String),
    /// 9.5: a player's incorrect repetition or fifty-move claim (see `arbiter::rejected`).
    RejectClaim {
        player: Player,
        kind: ClaimKind,
        detail: String,
    },
}

/// The commands whose arguments are contract words, from the strings a caller sent: the
/// edge (the D-Bus layer) parses them here, once, with the contract's refusals.
impl Command {
    /// `SetRules(rules)`; an unknown rule set is an invalid argument.
    pub fn set_rules(rules: &str) -> Result<Command, CommandError> {
        rules.parse().map(Command::SetRules).map_err(|_| {
            CommandError::InvalidArgument(format!(
                "`{rules}` is not a rule set; use standard, rapid or blitz"
            ))
        })
    }

    /// `AcceptClaim(player, kind, detail)`; a player or kind that does not exist names no
    /// claim in `Claims`, so it is refused as not available.
    pub fn accept_claim(player: &str, kind: &str, detail: String) -> Result<Command, CommandError> {
        let unavailable = |e: crate::vocab::UnknownWord| {
            CommandError::ClaimNotAvailable(format!(
                "{e}; the Claims property lists the claims that can be accepted"
            ))
        };
        Ok(Command::AcceptClaim {
            player: player.parse().map_err(unavailable)?,
            kind: kind.parse().map_err(unavailable)?,
            detail,
        })
    }

    /// `RejectClaim(player, kind, detail)`; an unknown player or kind is an invalid argument.
    pub fn reject_claim(player: &str, kind: &str, detail: String) -> Result<Command, CommandError> {
        let player = player.parse().map_err(|_| {
            CommandError::InvalidArgument(format!("`{player}` is not white or black"))
        })?;
        let kind = kind.parse().map_err(|_| {
            CommandError::InvalidArgument(format!(
                "`{kind}` is not a claim 9.5 penalises; an incorrect claim is a \
                 threefold-repetition or fifty-moves claim"
            ))
        })?;
        Ok(Command::RejectClaim {
            player,
            kind,
            detail,
        })
    }

    /// `Adjudicate(result, reason)`; a string that is no result is an invalid argument (and
    /// so is `*`, which the arbiter refuses).
    pub fn adjudicate(result: &str, reason: String) -> Result<Command, CommandError> {
        let result = result.parse().map_err(|_| {
            CommandError::InvalidArgument(format!(
                "`{result}` is not a result; use 1-0, 0-1 or 1/2-1/2"
            ))
        })?;
        Ok(Command::Adjudicate { result, reason })
    }
}

/// One board's game state machine (see the module documentation).
#[derive(Debug, Clone)]
pub struct Session {
    config: SessionConfig,
    tracker: Tracker,
    arbiter: Arbiter,
    /// A game has begun on this board (start position seen, or an operator command).
    started: bool,
    serial_number: String,
    firmware_version: String,
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
    /// The record the view's PGN text and move list were rendered from.
    view_text: Option<TextSignature>,
    /// The clock has been heard since the serial link last came up (see [`Input::Link`]):
    /// only then can its silence mean a flag fell.
    clock_live: bool,
    /// Moves made while nothing was read (see `session/gap.rs`).
    gap: gap::GapState,
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
}

impl Session {
    /// A session for a board with no game yet.
    pub fn new(config: SessionConfig) -> Self {
        let mut tracker = Tracker::new(Chess::default(), config.orientation);
        tracker.set_variant(config.variant);
        let arbiter = Arbiter::new(
            arbiter_config(&config),
            Chess::default(),
            game_tags(&config),
        );
        let mut s = Session {
            config,
            tracker,
            arbiter,
            started: false,
            serial_number: String::new(),
            firmware_version: String::new(),
            lever_left_down: None,
            standing_illegal: None,
            illegal_board: None,
            journalled: RecordSignature::default(),
            journalled_game: None,
            view_text: None,
            clock_live: true,
            gap: gap::GapState::default(),
            gesture: None,
            gesture_first: None,
            link_up: false,
            view: BoardProps::default(),
            facts: Vec::new(),
        };
        s.journalled = RecordSignature::of(s.arbiter.game(), s.arbiter.position());
        s.refresh_view();
        s
    }

    /// Rebuild a session from its journalled events (oldest first): the last game snapshot
    /// with the patches after it, and the last rules change win. Events that cannot be
    /// applied are skipped (a patch that does not fit, and the patches after it until the
    /// next snapshot).
    pub fn restore(config: SessionConfig, journal: &[Event]) -> Self {
        let mut s = Session::new(config);
        let mut cfg = arbiter_config(&s.config);
        let mut game = None;
        // A patch did not fit: the record is as of the patch before, until a snapshot.
        let mut patch_failed = false;
        for event in journal {
            match event {
                Event::GameStarted { fen } => {
                    s.started = true;
                    game = parse_fen_in(fen, s.config.variant == Variant::Chess960)
                        .ok()
                        .map(|pos| Game::new(&fen_of(&pos), game_tags(&s.config)));
                }
                Event::Record(RecordFact::Snapshot { game: g }) => {
                    s.started = true;
                    patch_failed = false;
                    game = Some(g.clone());
                }
                Event::Record(RecordFact::Patch { patch }) => {
                    if let Some(g) = game.as_mut().filter(|_| !patch_failed)
                        && let Err(e) = patch.apply(g)
                    {
                        s.report(Fact::PatchSkipped {
                            error: e.to_string(),
                        });
                        patch_failed = true;
                    }
                }
                Event::Record(RecordFact::Tags { tags }) => {
                    s.config.tags = tags.clone();
                    if let Some(g) = game.as_mut() {
                        g.tags = tags.clone();
                    }
                }
                Event::Record(RecordFact::Rules { rules, edition }) => {
                    cfg.rules = *rules;
                    cfg.edition = *edition;
                }
                _ => {}
            }
        }
        s.config.rules = cfg.rules;
        s.config.edition = cfg.edition;
        if let Some(game) = game {
            match Arbiter::restore(cfg.clone(), game) {
                Ok(arbiter) => {
                    s.tracker = Tracker::new(arbiter.position().clone(), s.config.orientation);
                    s.tracker.set_variant(s.config.variant);
                    s.arbiter = arbiter;
                }
                Err(reason) => {
                    s.report(Fact::RestoreFailed {
                        reason: reason.to_string(),
                    });
                    s.started = false;
                }
            }
        }
        s.journalled = RecordSignature::of(s.arbiter.game(), s.arbiter.position());
        // Whatever was played while eboardd was not running is a gap until the board is read.
        s.gap_unread(recovery::Cause::NotRunning, None);
        s.refresh_view();
        s
    }

    /// Feed one input at time `now`; returns the events it caused, or why a command was refused.
    pub fn handle(&mut self, input: Input, now: Millis) -> Result<Vec<Event>, CommandError> {
        let mut out = Vec::new();
        match input {
            Input::Board(message) => {
                if !self.gap_message(&message, now, &mut out) {
                    self.on_message(message, now, &mut out)
                }
            }
            Input::Command(command) => self.on_command(command, now, &mut out)?,
            Input::Tick if self.gap.is_open() => self.gap_tick(now, &mut out),
            Input::LineLoss => self.gap_line_loss(now),
            Input::MemoryUnavailable => self.gap_no_memory(now, &mut out),
            Input::Tick => {
                let tracked = self.tracker.on_tick(now);
                self.apply_tracker(tracked, now, &mut out);
                if self.clock_live {
                    let ruled = self.arbiter.tick(now);
                    self.apply_arbiter(ruled, &mut out);
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
                    self.gap_link_up(now);
                } else {
                    self.gap_unread(recovery::Cause::Disconnected, Some(now));
                }
            }
        }
        self.follow_live_stories(now);
        self.watch_gesture_first(now);
        self.check_gesture(now, &mut out);
        self.journal_snapshot(&mut out);
        self.refresh_view();
        Ok(out)
    }

    /// The current state as the board's D-Bus properties show it.
    pub fn view(&self) -> &BoardProps {
        &self.view
    }

    /// The game record.
    pub fn game(&self) -> &Game {
        self.arbiter.game()
    }

    /// The configuration this session runs with (rules and edition as last set).
    pub fn config(&self) -> &SessionConfig {
        &self.config
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
    /// memory awaited, a board settling in a gap, a still board to ask about), quinn-proto style: the caller
    /// sleeps until then instead of polling fast. `None`: nothing waits on time.
    pub fn next_wakeup(&self) -> Option<Millis> {
        let gesture = [
            self.gesture_first
                .as_ref()
                .and_then(gesture::FirstHalf::final_at),
            self.gesture
                .map(|(since, _)| since.saturating_add(gesture::GESTURE_HOLD_MS)),
        ];
        gesture
            .into_iter()
            .flatten()
            .chain(self.tracker.next_wakeup())
            .chain(self.recovery_wakeup())
            .min()
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

    fn on_message(&mut self, message: Message, now: Millis, out: &mut Vec<Event>) {
        match message {
            Message::BoardDump(fields) => {
                let tracked = self.tracker.on_board_dump(&fields, now);
                self.apply_tracker(tracked, now, out);
            }
            Message::FieldUpdate { field, content } => {
                let tracked = self.tracker.on_field_update(field, content, now);
                self.apply_tracker(tracked, now, out);
            }
            Message::ClockTimes(times) => {
                self.clock_live = true;
                self.on_clock(&times, now, out);
            }
            Message::SerialNumber(s) => {
                // The long serial number is more specific; keep it once known.
                if self.serial_number.len() <= s.len() {
                    self.serial_number = s;
                }
            }
            Message::LongSerialNumber(s) => self.serial_number = s,
            Message::Version { major, minor } => {
                self.firmware_version = format!("{major}.{minor:02}");
            }
            // Acks, identification and battery carry nothing for the game; an EEPROM log
            // matters only to an open gap, which took it before this (see `session/gap.rs`).
            Message::ClockAck(_)
            | Message::ClockEmpty
            | Message::BusAddress(_)
            | Message::Trademark(_)
            | Message::BatteryStatus(_)
            | Message::EeMoves(_) => {}
        }
    }

    fn on_clock(&mut self, times: &ClockTimes, now: Millis, out: &mut Vec<Event>) {
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
                let tracked = self.tracker.on_clock_press(now);
                self.apply_tracker(tracked, now, out);
                if self.standing_illegal.is_some() {
                    self.illegal_move_stands(now, out);
                }
            }
        } else {
            self.lever_left_down = None;
        }
        let ruled = self.arbiter.on_clock(times, now);
        self.apply_arbiter(ruled, out);
    }

    /// The opponent pressed while the completed illegal move still stood on the board: he
    /// moved on without claiming (A.5.2). Play continues from the board as it stands.
    fn illegal_move_stands(&mut self, now: Millis, out: &mut Vec<Event>) {
        let Some((offender, description)) = self.standing_illegal.take() else {
            return;
        };
        if self.tracker.in_sync() || self.arbiter.is_finished() {
            return;
        }
        // The game goes on from the position the illegal move left, the opponent to move,
        // and his reply (what the board shows now) is the continuation's first move. Only
        // when no single move explains the board is it taken as it stands, offender to move.
        if let Some(board) = self.illegal_board.take()
            && self.continue_after_illegal(board, offender, &description, now, out)
        {
            return;
        }
        match self.tracker.adopt_placement(offender) {
            Ok(tracked) => {
                let ruled = self
                    .arbiter
                    .illegal_move_stands(self.tracker.position().clone(), &description);
                // No GameStarted: the game goes on (ply numbers and `Moves` continue); the
                // record opens a new segment from the board's position (see crate::game).
                self.apply_arbiter(ruled, out);
                // The tracker's own reports about the adoption (in sync again) need no relay.
                drop(tracked);
            }
            Err(e) => {
                self.report(Fact::IllegalMoveUnreadable {
                    error: e.to_string(),
                });
            }
        }
    }

    /// The illegal move stands: open the continuation from `board` (what the illegal move
    /// left) with the opponent of `offender` to move, then play his reply the board shows.
    /// Returns false, changing nothing, when the board is not that position plus one legal
    /// move.
    fn continue_after_illegal(
        &mut self,
        board: shakmaty::Board,
        offender: Color,
        description: &str,
        now: Millis,
        out: &mut Vec<Event>,
    ) -> bool {
        let mut trial = self.tracker.clone();
        if trial.adopt_board(board, !offender).is_err() {
            return false;
        }
        let Some(reply) = trial.move_shown() else {
            return false;
        };
        self.tracker = trial;
        let ruled = self
            .arbiter
            .illegal_move_stands(self.tracker.position().clone(), description);
        self.apply_arbiter(ruled, out);
        let tracked = self.tracker.play_shown(reply);
        self.apply_tracker(tracked, now, out);
        true
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
        use crate::gap::search::{Outcome, explain};
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
        let ruled = self.arbiter.new_game(start, game_tags(&self.config));
        out.push(Event::GameStarted {
            fen: self.arbiter.fen(),
        });
        self.apply_arbiter(ruled, out);
    }

    // ----- operator commands -----------------------------------------------------------

    fn on_command(
        &mut self,
        command: Command,
        now: Millis,
        out: &mut Vec<Event>,
    ) -> Result<(), CommandError> {
        match command {
            Command::NewGame => {
                let tracked = self.tracker.new_game();
                self.start_game(Chess::default(), out);
                self.apply_tracker(without_game_start(tracked), now, out);
                self.recovery_new_root(now, out);
            }
            Command::SetPosition(fen) => {
                let chess960 = self.config.variant == Variant::Chess960;
                let position = parse_fen_in(&fen, chess960).map_err(|reason| {
                    CommandError::InvalidFen(format!("not a playable FEN: {reason}"))
                })?;
                let tracked = self.tracker.set_position(position.clone());
                self.start_game(position, out);
                self.apply_tracker(without_game_start(tracked), now, out);
                self.recovery_new_root(now, out);
            }
            Command::SetTags(tags) => {
                // New values replace old ones of the same name; other tags stay.
                let mut merged = self.arbiter.game().tags.clone();
                for (name, value) in tags {
                    match merged.iter_mut().find(|(n, _)| *n == name) {
                        Some(slot) => slot.1 = value,
                        None => merged.push((name, value)),
                    }
                }
                self.arbiter.set_tags(merged.clone())?;
                self.config.tags = merged.clone();
                out.push(Event::Record(RecordFact::Tags { tags: merged }));
            }
            Command::SetRules(rules) => {
                self.arbiter.set_rules(rules);
                self.config.rules = rules;
                out.push(Event::Record(RecordFact::Rules {
                    rules: self.config.rules,
                    edition: self.config.edition,
                }));
            }
            Command::TakeBack => {
                let ply = self.arbiter.game().ply_count();
                let ruled = self.arbiter.take_back()?;
                // The board shows the old position until the players restore it: the
                // tracker follows the record, and InSync says what the board still shows.
                let _ = self.tracker.take_back(1);
                if self.tracker.position() != self.arbiter.position() {
                    let _ = self.tracker.set_position(self.arbiter.position().clone());
                }
                self.standing_illegal = None;
                out.push(Event::MoveRetracted {
                    ply: ply as u32,
                    fen: self.arbiter.fen(),
                });
                self.apply_arbiter(ruled, out);
                self.recovery_took_back(now, out);
            }
            Command::AcceptClaim {
                player,
                kind,
                detail,
            } => {
                let was_finished = self.arbiter.is_finished();
                let ruled = self.arbiter.accept_claim(player, kind, &detail)?;
                self.apply_arbiter(ruled, out);
                // A claim by an intended move (9.2 b, 9.3 b) plays it in the record.
                self.follow_record_on_board(was_finished);
            }
            Command::Adjudicate { result, reason } => {
                let ruled = self.arbiter.adjudicate(result, &reason)?;
                self.apply_arbiter(ruled, out);
            }
            Command::ResolveGap(moves) => self.resolve_gap(moves, now, out)?,
            Command::ShowClockMessage(_) => {
                return Err(CommandError::NoClock(
                    "this board has no serial link to show a clock message on".into(),
                ));
            }
            Command::RejectClaim {
                player,
                kind,
                detail,
            } => {
                let ruled = self.arbiter.reject_claim(player, kind, &detail)?;
                self.apply_arbiter(ruled, out);
            }
        }
        Ok(())
    }

    /// What the board shows by the result gesture, if anything: the result, and whether the
    /// record's last move is the gesture's first king move (legal, so it was played).
    fn gesture_on_board(&self) -> Option<(GameResult, bool)> {
        let sensed = self.tracker.placement().to_board();
        // The last move a king's step onto a centre square: the gesture's first half, which
        // leaves the record (checked first, as the board after it matches too).
        // Only while the step is not final (see `gesture_first`): after a press it is a move
        // like any other, and a gesture then ends the game after it.
        let first_half = || {
            self.gesture_first.as_ref()?;
            let before = self.arbiter.previous_position()?;
            let last = self.arbiter.game().current_moves().last()?;
            let mv: shakmaty::uci::UciMove = last.uci.parse().ok()?;
            let mv = mv.to_move(before).ok()?;
            if !gesture::is_king_to_centre(mv.role(), mv.to()) || mv.is_capture() {
                return None;
            }
            gesture::gesture_result(&sensed, before.board())
        };
        if let Some(r) = first_half() {
            return Some((r, true));
        }
        gesture::gesture_result(&sensed, self.arbiter.position().board()).map(|r| (r, false))
    }

    /// Follow the record's last move while it may be the gesture's first half: it stays
    /// pending until a press (see [`Session::on_clock`]), a later move, or the other king
    /// standing away from the centre for the gesture window.
    fn watch_gesture_first(&mut self, now: Millis) {
        let ply = self.arbiter.game().ply_count();
        let other = self.arbiter.position().turn();
        let sensed = self.tracker.placement().to_board();
        if let Some(first) = self.gesture_first.as_mut()
            && (self.arbiter.is_finished() || !first.still_open(ply, &sensed, other, now))
        {
            self.gesture_first = None;
        }
    }

    /// The result gesture: decided once both kings have stood on the centre squares for
    /// [`gesture::GESTURE_HOLD_MS`]; a first king move that entered the record is retracted
    /// (the PGN ends at the position before the gesture).
    fn check_gesture(&mut self, now: Millis, out: &mut Vec<Event>) {
        if !self.started || self.arbiter.is_finished() {
            self.gesture = None;
            return;
        }
        let Some((result, retract)) = self.gesture_on_board() else {
            self.gesture = None;
            return;
        };
        let since = match self.gesture {
            Some((t, r)) if r == result => t,
            _ => {
                self.gesture = Some((now, result));
                now
            }
        };
        if now.saturating_sub(since) < gesture::GESTURE_HOLD_MS {
            return;
        }
        self.gesture = None;
        if retract {
            let ply = self.arbiter.game().ply_count();
            let ruled = self.arbiter.on_retract(now);
            out.push(Event::MoveRetracted {
                ply: ply as u32,
                fen: self.arbiter.fen(),
            });
            self.apply_arbiter(ruled, out);
        }
        if self.tracker.position() != self.arbiter.position() {
            let _ = self.tracker.set_position(self.arbiter.position().clone());
        }
        let ruled = self.arbiter.result_gesture(result);
        self.apply_arbiter(ruled, out);
    }

    /// After a command changed the record's position, make the tracker follow it.
    fn follow_record_on_board(&mut self, _was_finished: bool) {
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
    fn journal_snapshot(&mut self, out: &mut Vec<Event>) {
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

    fn refresh_view(&mut self) {
        // The PGN text and the SAN list are the costly parts of the view: rebuild them only
        // when the record changed, not on every tick and clock reading.
        let pending = self.pending_plies();
        let text_signature =
            TextSignature::of(self.arbiter.game(), self.arbiter.position(), pending);
        let (pgn, moves) = if self.view_text.as_ref() == Some(&text_signature) {
            (
                std::mem::take(&mut self.view.pgn),
                std::mem::take(&mut self.view.moves),
            )
        } else {
            self.view_text = Some(text_signature);
            // `Pgn` is a broadcast output: final moves only. `Moves` follows `MovePlayed`.
            (
                self.arbiter.game().pgn_final(pending),
                self.arbiter.game().san_moves(),
            )
        };
        let arbiter = &self.arbiter;
        let placement = self
            .gap_placement()
            .unwrap_or_else(|| self.tracker.placement().board_fen());
        let fen = arbiter.fen();
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
            serial_number: self.serial_number.clone(),
            firmware_version: self.firmware_version.clone(),
            rules: self.config.rules.to_string(),
            edition: self.config.edition.to_string(),
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
            gap: self.gap.text(),
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

/// What the journal must hold of a game record, cheaply compared: every move, result,
/// penalty, decision, illegal-move count and comment — everything but the clock stamp of the
/// last press, which the next snapshot carries (a crash can lose a `%clk`, never a move).
/// Tags and rules are journalled as their own facts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct RecordSignature {
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
    fn of(game: &Game, position: &Chess) -> Self {
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
struct TextSignature {
    record: RecordSignature,
    /// Moves left out of the PGN text because they are not final yet.
    pending: usize,
    last_clk_ms: Option<u64>,
    /// A hash of the tags (no allocation per input).
    tags: u64,
}

impl TextSignature {
    fn of(game: &Game, position: &Chess, pending: usize) -> Self {
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
        }
    }
}

/// The tracker's own game-start report after an operator command is already announced.
fn without_game_start(events: Vec<TrackerEvent>) -> Vec<TrackerEvent> {
    events
        .into_iter()
        .filter(|e| !matches!(e, TrackerEvent::GameStarted { .. }))
        .collect()
}

fn arbiter_config(config: &SessionConfig) -> ArbiterConfig {
    ArbiterConfig {
        rules: config.rules,
        edition: config.edition,
        guidelines_iii: config.guidelines_iii,
        white_display: config.white_display,
        time_control: config.time_control.clone(),
    }
}

/// The configured tags plus the board's name as the PGN `Board` tag.
fn game_tags(config: &SessionConfig) -> Vec<(String, String)> {
    let mut tags = config.tags.clone();
    if !config.name.is_empty() && !tags.iter().any(|(n, _)| n == "Board") {
        tags.push(("Board".into(), config.name.clone()));
    }
    if config.variant == Variant::Chess960 && !tags.iter().any(|(n, _)| n == "Variant") {
        tags.push(("Variant".into(), "Chess960".into()));
    }
    if let Some(tc) = &config.time_control
        && !tags.iter().any(|(n, _)| n == "TimeControl")
    {
        tags.push(("TimeControl".into(), tc.to_string()));
    }
    tags
}
