//! A virtual board and one board's [`Session`] wired together in memory, byte for byte, with
//! stepped time: the pure test bench of gaps. The link can drop (data only, the board stays
//! powered), the board can lose power (unplugged), the daemon can die and come back (a new
//! session restored from the journal it wrote), junk can cut frames on the line — and players
//! go on moving throughout, by hand as [`Handling`] moves pieces.
//!
//! What the shell does in the daemon is done here in a few lines: the start-up commands on
//! every connection, the session's requests sent to the board (0x49, 0x42), ticks as the
//! daemon gives them ([`Ticks`]), `Link` and `LineLoss` inputs. No I/O, no clock: tests and the soak benchmark
//! run hours of play in seconds.

use shakmaty::san::San;
use std::collections::VecDeque;

use shakmaty::{Chess, Color, Move, Position};

use super::clock::ClockSide;
use super::handling::{Handling, Noise, SensorStep};
use super::virtual_board::{BoardOptions, VirtualBoard};
use eboard_core::dgt::{ClockCommand, Command, Decoder, Message};
use eboard_core::link::IdleTick;
use eboard_core::session::{
    BoardRequest, Command as SessionCommand, Event, Input, Session, SessionConfig,
};
use eboard_core::vocab::CommandError;

/// How often the session gets a tick while it wants the periodic tick, and how often at
/// least: the daemon's board task's own paces.
pub use eboard_core::link::{IDLE_TICK_MS, QUIET_TICK_MS, TICK_MS};

/// When the rig ticks its session (see `Session::wants_ticks`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Ticks {
    /// As the daemon's board task does: at the session's own deadline
    /// (`Session::next_wakeup`), every [`TICK_MS`] while it wants the periodic tick, and the
    /// daemon's idle tick ([`IdleTick`]: with the first bytes [`IDLE_TICK_MS`] or more after
    /// the last tick, and at least once every [`QUIET_TICK_MS`] while the line is up,
    /// [`IDLE_TICK_MS`] while it is down).
    #[default]
    AsTheDaemon,
    /// Every [`TICK_MS`] and at every deadline, whatever the session wants (the daemon
    /// before it asked): the reference [`Ticks::AsNeeded`] is held to.
    Always,
    /// Only at the session's deadlines and while it wants the periodic tick, without the
    /// daemon's once-a-second tick: a rule missing from `wants_ticks` and `next_wakeup`
    /// then shows as a difference from [`Ticks::Always`].
    AsNeeded,
}

/// The board, the line and the session (see the module documentation).
pub struct Rig {
    pub board: VirtualBoard,
    session: Option<Session>,
    config: SessionConfig,
    decoder: Decoder,
    /// Everything the sessions reported, oldest first (what the journal holds).
    journal: Vec<Event>,
    /// Events since the last [`Rig::take_events`].
    fresh: Vec<Event>,
    now: u64,
    /// Bytes flow between board and session.
    link_up: bool,
    /// The session has been told the link is up.
    told_up: bool,
    next_tick: u64,
    /// When the session was last ticked, and so when its idle tick is due.
    idle: IdleTick,
    ticks: Ticks,
    /// The ticks given so far (see [`Ticks`]).
    pub ticks_given: u64,
    /// Cut the next chunk the board sends with a junk byte (a frame is lost).
    cut_next: bool,
    /// Cut the board's next memory dump off after this many bytes (the cable went).
    cut_dump: Option<usize>,
    hands: Handling,
    /// The game as the players play it (the truth the session should reach).
    pub played: Chess,
    pub played_san: Vec<String>,
    /// The moves of `played`, in order (what a scoresheet holds).
    pub played_moves: Vec<Move>,
    /// Frames the session's decoder dropped (junk cut them), each a `LineLoss`.
    pub lost_frames: u64,
    /// When the board first showed each ply played (its number, the time).
    pub shown: Vec<(u32, u64)>,
    /// When each `MovePlayed` was reported (its ply, the time).
    pub published: Vec<(u32, u64)>,
    /// The line's pace in bytes per second (None: as fast as the board sends), the bytes
    /// on their way and the credit of the current step.
    line_rate: Option<u64>,
    line: VecDeque<u8>,
    line_credit: u64,
    /// What the session received from the board, with the time (see [`Rig::tap_line`]).
    tap: Option<Vec<(u64, Vec<u8>)>>,
}

impl Rig {
    /// A powered board in the start position, connected to a fresh session.
    pub fn new(board: BoardOptions, config: SessionConfig, seed: u64, noise: Noise) -> Rig {
        let mut rig = Rig {
            board: VirtualBoard::new(board, 0),
            session: Some(Session::new(config.clone())),
            config,
            decoder: Decoder::new(),
            journal: Vec::new(),
            fresh: Vec::new(),
            now: 0,
            link_up: false,
            told_up: false,
            next_tick: 0,
            idle: IdleTick::default(),
            ticks: Ticks::default(),
            ticks_given: 0,
            cut_next: false,
            cut_dump: None,
            hands: Handling::new(seed, noise),
            played: Chess::default(),
            played_san: Vec::new(),
            played_moves: Vec::new(),
            lost_frames: 0,
            shown: Vec::new(),
            published: Vec::new(),
            line_rate: None,
            line: VecDeque::new(),
            line_credit: 0,
            tap: None,
        };
        rig.connect();
        rig.advance(1_000);
        rig
    }

    pub fn now(&self) -> u64 {
        self.now
    }

    /// Tick the session from now on as `ticks` says.
    pub fn set_ticks(&mut self, ticks: Ticks) {
        self.ticks = ticks;
    }

    /// The running session (panics while the daemon is "dead": a test error).
    pub fn session(&self) -> &Session {
        match &self.session {
            Some(s) => s,
            None => panic!("the daemon is not running"),
        }
    }

    /// What the running session has told its log since the last call (nothing while the
    /// daemon is "dead").
    pub fn facts(&mut self) -> Vec<eboard_core::session::Fact> {
        let mut out = Vec::new();
        if let Some(session) = self.session.as_mut() {
            while let Some(fact) = session.poll_fact() {
                out.push(fact);
            }
        }
        out
    }

    /// The events reported since the last call.
    pub fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.fresh)
    }

    /// Everything the sessions ever reported.
    pub fn journal(&self) -> &[Event] {
        &self.journal
    }

    /// Let `ms` of board time pass, moving bytes and ticks as they fall due.
    pub fn advance(&mut self, ms: u64) {
        let end = self.now + ms;
        while self.now < end {
            self.now = (self.now + 10).min(end);
            self.pump();
        }
    }

    /// Play one move (SAN) by hand, then press the clock.
    pub fn play(&mut self, san: &str) -> anyhow::Result<()> {
        let m = san
            .parse::<San>()
            .map_err(|e| anyhow::anyhow!("{san}: {e}"))?
            .to_move(&self.played)
            .map_err(|e| anyhow::anyhow!("{san}: {e}"))?;
        self.play_move(m);
        Ok(())
    }

    /// Play a legal move of the played game by hand, then press the clock.
    pub fn play_move(&mut self, m: Move) {
        let mover = self.played.turn();
        let steps = self.hands.steps(&self.played, m);
        let side = self.side_of(mover);
        let mut pressed = false;
        for step in steps {
            match step {
                SensorStep::Lift(sq) => self.board.lift(sq, self.now),
                SensorStep::Place(sq, piece) => self.board.place(sq, piece, self.now),
                SensorStep::Pause(ms) => self.advance(ms),
                SensorStep::Press => {
                    self.board.press_lever(side, self.now);
                    pressed = true;
                }
            }
            self.advance(30);
        }
        if !pressed {
            self.advance(300);
            self.board.press_lever(side, self.now);
        }
        self.advance(200);
        self.note_played(m);
    }

    /// Play a legal move of the played game with sensor steps of the caller's own hand model,
    /// exactly as given: no pause but the steps' own, the clock pressed only at their
    /// `Press` (by the mover).
    pub fn play_steps(&mut self, m: Move, steps: &[SensorStep]) {
        self.hand(steps);
        self.note_played(m);
    }

    /// Sensor steps of the player to move (part of a move played with [`Rig::play_steps`]),
    /// exactly as given.
    pub fn hand(&mut self, steps: &[SensorStep]) {
        let side = self.side_of(self.played.turn());
        for step in steps {
            match *step {
                SensorStep::Lift(sq) => self.board.lift(sq, self.now),
                SensorStep::Place(sq, piece) => self.board.place(sq, piece, self.now),
                SensorStep::Pause(ms) => self.advance(ms),
                SensorStep::Press => self.board.press_lever(side, self.now),
            }
        }
    }

    fn note_played(&mut self, m: Move) {
        let san = shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut self.played, m);
        self.played_san.push(san.to_string());
        self.played_moves.push(m);
    }

    /// Play a legal move with quick, clean hands in `ms` in all (a time scramble): the
    /// pieces that leave are lifted, those that arrive are put down a third of the way in,
    /// the clock is pressed two thirds in.
    pub fn play_quick(&mut self, m: Move, ms: u64) {
        let before = self.played.board().clone();
        let mut after = self.played.clone();
        after.play_unchecked(m);
        let after = after.board().clone();
        let side = self.side_of(self.played.turn());
        let changed = eboard_core::tracker::search_diff(&before, &after);
        for sq in changed {
            if before.piece_at(sq).is_some() {
                self.board.lift(sq, self.now);
                self.advance(10);
            }
        }
        self.advance(ms / 3);
        for sq in changed {
            if let Some(piece) = after.piece_at(sq) {
                self.board.place(sq, piece, self.now);
                self.advance(10);
            }
        }
        self.note_played(m);
        self.shown.push((self.played_san.len() as u32, self.now));
        self.advance(ms / 3);
        self.board.press_lever(side, self.now);
        self.advance(ms / 3);
    }

    /// Pace the line from the board at `bytes_per_s` (960 for 9600 baud), or not at all:
    /// what the board sends queues behind a long answer, as on a real serial line.
    pub fn pace_line(&mut self, bytes_per_s: Option<u64>) {
        self.line_rate = bytes_per_s;
    }

    /// The longest time a ply the board showed (by [`Rig::play_quick`]) waited for its
    /// `MovePlayed`, and the plies never published (the record stalls).
    pub fn stalls(&self) -> (u64, Vec<u32>) {
        let mut longest = 0;
        let mut missing = Vec::new();
        for &(ply, shown) in &self.shown {
            match self
                .published
                .iter()
                .find(|&&(p, at)| p == ply && at >= shown.saturating_sub(1_000))
            {
                Some(&(_, at)) => longest = longest.max(at.saturating_sub(shown)),
                None => missing.push(ply),
            }
        }
        (longest, missing)
    }

    /// The players set up the start position for a new game.
    pub fn new_game(&mut self) {
        let now = self.now;
        self.board.set_position(&shakmaty::Board::default(), now);
        self.played = Chess::default();
        self.played_san.clear();
        self.played_moves.clear();
        self.shown.clear();
        self.published.clear();
        self.advance(2_000);
    }

    /// The daemon is running.
    pub fn running(&self) -> bool {
        self.session.is_some()
    }

    /// Tell the session the wall clock (Unix ms) at the rig's time now, as the daemon does
    /// before each input: without it the session writes no clock tags (see
    /// `eboard_core::clock_tags`). The offset holds until the session is restarted.
    pub fn set_wall_clock(&mut self, unix_ms: u64) {
        let now = self.now;
        if let Some(session) = self.session.as_mut() {
            session.set_wall_clock(unix_ms, now);
        }
    }

    /// Which side of the clock a colour sits at.
    pub fn side_of(&self, color: Color) -> ClockSide {
        let white = self.board.options().white_display;
        if color == Color::White {
            white
        } else {
            white.other()
        }
    }

    /// Feed an operator command to the session.
    pub fn command(&mut self, command: SessionCommand) -> Result<(), CommandError> {
        let now = self.now;
        let session = self
            .session
            .as_mut()
            .ok_or_else(|| CommandError::InvalidArgument("the daemon is not running".into()))?;
        let events = session.handle(Input::Command(command), now)?;
        self.record(events);
        self.serve_requests();
        Ok(())
    }

    /// The data link drops; the board keeps its power (and its memory).
    pub fn disconnect(&mut self) {
        self.link_up = false;
        self.told_up = false;
        self.input(Input::Link(false));
    }

    /// The plug is pulled: no link and no power.
    pub fn unplug(&mut self) {
        self.disconnect();
        self.board.power_off(self.now);
    }

    /// The plug goes back in: power, then the daemon's start-up commands.
    pub fn replug(&mut self) {
        self.board.power_cycle(self.now);
        self.connect();
    }

    /// The daemon dies (kill -9): its session is gone, the journal stays.
    pub fn kill(&mut self) {
        self.session = None;
        self.link_up = false;
        self.told_up = false;
    }

    /// The daemon starts again: a session restored from the journal, then the start-up.
    pub fn restart(&mut self) {
        self.session = Some(Session::restore(self.config.clone(), &self.journal));
        self.decoder = Decoder::new();
        self.connect();
    }

    /// The link (re)connects: the start-up commands go out as the daemon sends them.
    pub fn connect(&mut self) {
        self.link_up = true;
        // The daemon's order: the whole board first, so a gap ends at that reading.
        for command in [
            Command::UpdateNice,
            Command::SendBoard,
            Command::SerialNumber,
            Command::Version,
            Command::Clock(ClockCommand::Version),
        ] {
            self.board.receive(&command.to_bytes(), self.now);
        }
    }

    /// The next chunk the board sends is cut by a junk byte with bit 7 set: its frame is
    /// lost, as on a noisy line.
    pub fn cut_next_frame(&mut self) {
        self.cut_next = true;
    }

    /// The board's next EE_MOVES answer stops after `bytes` bytes of its frame.
    pub fn cut_next_memory_dump(&mut self, bytes: usize) {
        self.cut_dump = Some(bytes);
    }

    /// From now on, keep every chunk of bytes the session receives from the board, with the
    /// time it came (a recording to replay elsewhere: a fuzz property's game).
    pub fn tap_line(&mut self) {
        self.tap = Some(Vec::new());
    }

    /// The bytes recorded since [`Rig::tap_line`], oldest first.
    pub fn take_line(&mut self) -> Vec<(u64, Vec<u8>)> {
        self.tap.take().unwrap_or_default()
    }

    /// Junk on the line, as the session's decoder receives it.
    pub fn junk(&mut self, bytes: &[u8]) {
        self.receive(bytes);
    }

    fn input(&mut self, input: Input) {
        let now = self.now;
        if let Some(session) = self.session.as_mut()
            && let Ok(events) = session.handle(input, now)
        {
            self.record(events);
        }
    }

    fn record(&mut self, events: Vec<Event>) {
        for e in &events {
            if let Event::MovePlayed { ply, .. } = e {
                self.published.push((*ply, self.now));
            }
        }
        self.journal.extend(events.iter().cloned());
        self.fresh.extend(events);
    }

    fn receive(&mut self, bytes: &[u8]) {
        if self.session.is_none() {
            return;
        }
        let dropped = self.decoder.stats().lost_frames();
        let messages: Vec<Message> = self.decoder.feed(bytes).collect();
        if !messages.is_empty() && !self.told_up {
            self.told_up = true;
            self.input(Input::Link(true));
        }
        if self.decoder.stats().lost_frames() > dropped && self.told_up {
            self.lost_frames += 1;
            self.input(Input::LineLoss);
        }
        for input in messages.into_iter().filter_map(Message::into_board_input) {
            self.input(Input::Board(input));
        }
        self.serve_requests();
    }

    fn serve_requests(&mut self) {
        let now = self.now;
        let Some(session) = self.session.as_mut() else {
            return;
        };
        while let Some(request) = session.poll_request() {
            if self.link_up {
                let command = match request {
                    BoardRequest::ReadMemory => Command::EeMoves,
                    BoardRequest::SendBoard => Command::SendBoard,
                };
                self.board.receive(&command.to_bytes(), now);
            }
        }
    }

    fn pump(&mut self) {
        let mut bytes = self.board.poll(self.now);
        if self.cut_next && bytes.len() >= 3 {
            self.cut_next = false;
            bytes.insert(2, 0xFF);
        }
        if let Some(keep) = self.cut_dump
            && let Some(at) = bytes.iter().position(|&b| b == 0x8F)
        {
            self.cut_dump = None;
            bytes.truncate(at + keep);
        }
        if let Some(rate) = self.line_rate {
            // 10 ms steps: `rate` bytes a second, the fraction carried over.
            if self.link_up {
                self.line.extend(bytes);
            } else {
                self.line.clear();
            }
            self.line_credit += rate * 10;
            let n = ((self.line_credit / 1000) as usize).min(self.line.len());
            self.line_credit %= 1000;
            bytes = self.line.drain(..n).collect();
        }
        let heard = self.link_up && !bytes.is_empty();
        if heard {
            if let Some(tap) = self.tap.as_mut() {
                tap.push((self.now, bytes.clone()));
            }
            self.receive(&bytes);
        }
        let on_grid = self.now >= self.next_tick;
        if on_grid {
            self.next_tick = self.now + TICK_MS;
        }
        if self.tick_due(on_grid, heard) {
            self.idle.ticked(self.now);
            self.ticks_given += 1;
            self.input(Input::Tick);
            self.serve_requests();
        }
    }

    /// Whether the session is ticked now (see [`Ticks`]); `heard`: bytes reached it now.
    fn tick_due(&self, on_grid: bool, heard: bool) -> bool {
        let Some(session) = self.session.as_ref() else {
            return false;
        };
        let deadline = session.next_wakeup().is_some_and(|w| w <= self.now);
        let wanted = on_grid && session.wants_ticks();
        match self.ticks {
            Ticks::Always => on_grid || deadline,
            Ticks::AsNeeded => wanted || deadline,
            Ticks::AsTheDaemon => {
                wanted
                    || deadline
                    || self.now >= self.idle.timer_due(self.link_up)
                    || (heard && self.idle.read_brings_tick(self.now))
            }
        }
    }
}
