//! Games played straight into a pure [`Session`], with no pty and no daemon: the sensor steps
//! of human handling and clock presses, in board time. For the journal's benchmark and its
//! crash tests, which need the records a real game produces, fast and reproducibly.

use shakmaty::{Chess, Move, Position};

use eboard_core::board::{Orientation, Placement};
use eboard_core::board_input::{BoardInput, ClockReading, ClockStatus, DisplayTime};
use eboard_core::session::{Event, Input, Session, SessionConfig};
use eboard_core::vocab::Millis;

use super::handling::{Handling, Noise, SensorStep};

/// A board with a clock (White's time on the left), played by seeded human hands.
pub struct Feeder {
    pub session: Session,
    pub now: Millis,
    position: Chess,
    hands: Handling,
    lever_left_down: bool,
    left_ms: u64,
    right_ms: u64,
}

impl Feeder {
    pub fn new(config: SessionConfig, seed: u64) -> Feeder {
        Feeder {
            session: Session::new(config),
            now: 1_000,
            position: Chess::default(),
            hands: Handling::new(seed, Noise::Noisy),
            lever_left_down: false,
            left_ms: 5_400_000,
            right_ms: 5_400_000,
        }
    }

    /// The clock is seen and the start position set up: the game begins.
    pub fn start(&mut self) -> Vec<Event> {
        let mut out = self.clock();
        let wire = Placement::start().to_wire(Orientation::Normal);
        out.extend(self.feed(Input::Board(BoardInput::Scan(Box::new(wire)))));
        out
    }

    /// The position of the game so far.
    pub fn position(&self) -> &Chess {
        &self.position
    }

    /// Play a legal move by hand and press the clock; returns the events.
    pub fn play(&mut self, mv: Move) -> Vec<Event> {
        let mut out = Vec::new();
        for step in self.hands.steps(&self.position, mv) {
            match step {
                SensorStep::Lift(sq) => out.extend(self.field(sq, None)),
                SensorStep::Place(sq, piece) => out.extend(self.field(sq, Some(piece))),
                SensorStep::Pause(ms) => {
                    self.now += ms;
                    out.extend(self.feed(Input::Tick));
                }
                SensorStep::Press => out.extend(self.press()),
            }
            self.now += 40;
        }
        self.position.play_unchecked(mv);
        out
    }

    fn feed(&mut self, input: Input) -> Vec<Event> {
        self.session.handle(input, self.now).unwrap_or_default()
    }

    fn field(&mut self, sq: shakmaty::Square, content: Option<shakmaty::Piece>) -> Vec<Event> {
        let field = Orientation::Normal.field_of_square(sq);
        self.feed(Input::Board(BoardInput::Square {
            index: field,
            content,
        }))
    }

    fn press(&mut self) -> Vec<Event> {
        // The running side spends a few seconds, then the lever flips.
        if self.lever_left_down {
            self.right_ms -= 3_000;
        } else {
            self.left_ms -= 3_000;
        }
        self.lever_left_down = !self.lever_left_down;
        self.clock()
    }

    fn clock(&mut self) -> Vec<Event> {
        let times = clock_reading(self.left_ms, self.right_ms, self.lever_left_down);
        self.feed(Input::Board(BoardInput::Clock(times)))
    }
}

/// A long game for storage figures: `plies` legal moves from the start, drawn by a seeded
/// generator that avoids captures, checks that end the game and the 75-move rule, so that no
/// rule of the Laws ends it early. Deterministic for a seed.
pub fn long_game(plies: usize, seed: u64) -> Vec<Move> {
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut pos = Chess::default();
    let mut moves = Vec::with_capacity(plies);
    while moves.len() < plies {
        let legal = pos.legal_moves();
        let fine: Vec<Move> = legal
            .iter()
            .copied()
            .filter(|m| {
                let mut after = pos.clone();
                after.play_unchecked(*m);
                !m.is_capture()
                    && !after.is_game_over()
                    && after.halfmoves() < 60
                    && !after.legal_moves().is_empty()
            })
            .collect();
        // Pawn moves keep the halfmove clock low; otherwise any quiet move.
        let pawn: Vec<Move> = fine
            .iter()
            .copied()
            .filter(|m| m.role() == shakmaty::Role::Pawn)
            .collect();
        let pool = if pos.halfmoves() > 40 && !pawn.is_empty() {
            &pawn
        } else if !fine.is_empty() {
            &fine
        } else {
            // Nothing quiet is left: take any legal move that keeps the game going.
            &legal
                .iter()
                .copied()
                .filter(|m| {
                    let mut after = pos.clone();
                    after.play_unchecked(*m);
                    !after.is_game_over()
                })
                .collect::<Vec<_>>()
        };
        if pool.is_empty() {
            break;
        }
        let mv = pool[rng.random_range(0..pool.len())];
        pos.play_unchecked(mv);
        moves.push(mv);
    }
    moves
}

/// A clock display showing `ms` (whole seconds, as a DGT 3000 reports them).
pub fn display_time(ms: u64) -> DisplayTime {
    let s = ms / 1000;
    DisplayTime {
        hours: (s / 3600) as u8,
        minutes: ((s / 60) % 60) as u8,
        seconds: (s % 60) as u8,
    }
}

/// A running clock's report: both displays, and which side the lever makes run.
pub fn clock_reading(left_ms: u64, right_ms: u64, lever_left_down: bool) -> ClockReading {
    ClockReading {
        left: display_time(left_ms),
        right: display_time(right_ms),
        status: ClockStatus {
            running: true,
            lever_left_down,
            left_running: !lever_left_down,
            right_running: lever_left_down,
            connected: true,
            ..ClockStatus::default()
        },
        ..ClockReading::default()
    }
}
