//! The pure session driven like a board with a clock, for the `session_*` tests: sensor
//! messages and clock readings in at a stepped time, every event kept. White's time is on
//! the left display; Black's side of the lever is down before the game (White's clock runs).
//!
//! After every input the `Moves` property must equal what a client following `MovePlayed`
//! and `MoveRetracted` since the last `GameStarted` has seen.

#![allow(dead_code)]

use eboard_core::board::{Orientation, Placement};
use eboard_core::board_input::BoardInput;
use eboard_core::session::Command;
use eboard_core::session::{Event, Input, Session, SessionConfig};
use eboard_core::vocab::CommandError;
use eboard_sim::feed::clock_reading;
use eboard_sim::rig::Rig;
use eboard_sim::{BoardOptions, Noise};
use shakmaty::{Chess, Piece, Position, Square};

pub struct Clocked {
    pub session: Session,
    /// Milliseconds: the time given to the session with each input.
    pub now: u64,
    pub orientation: Orientation,
    pub lever_left_down: bool,
    pub left_ms: u64,
    pub right_ms: u64,
    pub events: Vec<Event>,
}

impl Clocked {
    /// 5 minutes each, time 1 s; nothing fed yet.
    pub fn new(config: SessionConfig, orientation: Orientation) -> Clocked {
        Clocked {
            session: Session::new(config),
            now: 1_000,
            orientation,
            lever_left_down: false,
            left_ms: 300_000,
            right_ms: 300_000,
            events: Vec::new(),
        }
    }

    /// One input at the current time; returns (and keeps) its events.
    pub fn feed(&mut self, input: Input) -> Vec<Event> {
        let events = self
            .session
            .handle(input, self.now)
            .expect("board input is never refused");
        self.events.extend(events.iter().cloned());
        // The view kept up to date in place is the one a rebuild from scratch gives.
        assert_eq!(
            *self.session.view(),
            self.session.fresh_view(),
            "the view updated in place vs rebuilt"
        );
        // The Moves property always shows what a client following the signals has seen.
        if let Some(start) = self
            .events
            .iter()
            .rposition(|e| matches!(e, Event::GameStarted { .. }))
        {
            let seen = played_in(&self.events[start..]);
            assert_eq!(self.session.view().moves, seen, "Moves property vs signals");
        }
        events
    }

    /// The clock's current reading.
    pub fn clock(&mut self) -> Vec<Event> {
        let times = clock_reading(self.left_ms, self.right_ms, self.lever_left_down);
        self.feed(Input::Board(BoardInput::Clock(times)))
    }

    /// The running side loses a second, then the lever flips and the clock reports.
    pub fn press(&mut self) -> Vec<Event> {
        if self.lever_left_down {
            self.right_ms -= 1_000;
        } else {
            self.left_ms -= 1_000;
        }
        self.lever_left_down = !self.lever_left_down;
        self.clock()
    }

    /// A board dump of `placement`.
    pub fn dump(&mut self, placement: &Placement) -> Vec<Event> {
        let wire = placement.to_wire(self.orientation);
        self.feed(Input::Board(BoardInput::Scan(Box::new(wire))))
    }

    /// A field update: `content` now stands on `square` (None: lifted).
    pub fn field(&mut self, square: Square, content: Option<Piece>) -> Vec<Event> {
        let field = self.orientation.field_of_square(square);
        self.feed(Input::Board(BoardInput::Square {
            index: field,
            content,
        }))
    }

    /// `ms` pass, then a tick.
    pub fn wait(&mut self, ms: u64) -> Vec<Event> {
        self.now += ms;
        self.feed(Input::Tick)
    }

    /// The moves as a client following MovePlayed and MoveRetracted sees them.
    pub fn played(&self) -> Vec<String> {
        played_in(&self.events)
    }
}

/// PGN movetext without its comments (clock stamps and the like), spaces folded.
pub fn without_comments(movetext: &str) -> String {
    let mut text = String::new();
    let mut depth = 0;
    for c in movetext.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ if depth == 0 => text.push(c),
            _ => {}
        }
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The board after `sans` played from the start position.
pub fn placement_after(sans: &[&str]) -> Placement {
    let mut pos = Chess::default();
    for san in sans {
        let mv = san
            .parse::<shakmaty::san::San>()
            .unwrap()
            .to_move(&pos)
            .unwrap();
        pos.play_unchecked(mv);
    }
    Placement::from_board(pos.board())
}

/// The accusations among `events`: illegal placements and completed illegal moves.
pub fn accusations(events: &[Event]) -> Vec<&Event> {
    events
        .iter()
        .filter(|e| {
            matches!(
                e,
                Event::IllegalPlacement { .. } | Event::IllegalMoveCompleted { .. }
            )
        })
        .collect()
}

/// A simulated board with noisy hands and a session named `name`; with the events of its
/// start, taken.
pub fn noisy_rig(name: &str, seed: u64) -> (Rig, Vec<Event>) {
    let mut rig = Rig::new(
        BoardOptions::default(),
        SessionConfig {
            name: name.into(),
            ..SessionConfig::default()
        },
        seed,
        Noise::Noisy,
    );
    let start = rig.take_events();
    (rig, start)
}

/// The arbiter's `ResolveGap` with these UCI moves.
pub fn resolve_gap(rig: &mut Rig, ucis: &[&str]) -> Result<(), CommandError> {
    rig.command(Command::ResolveGap(
        ucis.iter().map(|m| m.to_string()).collect(),
    ))
}

/// The moves as a client following MovePlayed and MoveRetracted sees them; plies count from 1
/// and only the last ply is ever retracted.
pub fn played_in(events: &[Event]) -> Vec<String> {
    let mut moves = Vec::new();
    for e in events {
        match e {
            Event::MovePlayed { ply, san, .. } => {
                assert_eq!(*ply as usize, moves.len() + 1, "plies count from 1");
                moves.push(san.clone());
            }
            Event::MoveRetracted { ply, .. } => {
                assert_eq!(*ply as usize, moves.len(), "the last ply is retracted");
                moves.pop();
            }
            _ => {}
        }
    }
    moves
}

/// The `Gap` property holds each of `parts` (a story listed, the question asked).
pub fn assert_gap_lists(gap: &str, parts: &[&str]) {
    for part in parts {
        assert!(gap.contains(part), "{part:?} not in the gap: {gap}");
    }
}
