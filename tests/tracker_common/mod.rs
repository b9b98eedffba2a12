//! Shared helpers of the tracker tests and benchmark: corpus games, a test rig feeding a
//! tracker like a board would, and replaying human handling through it.
#![allow(dead_code)]

pub mod faults;
pub mod hall;
pub mod hand;

use eboard_core::board::{Orientation, Placement};
use eboard_core::tracker::{Tracker, TrackerEvent};
use eboard_core::vocab::OrientationSetting;
use eboard_sim::handling::{Handling, SensorStep};
use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Move, Piece, Position, Square};

pub const CORPUS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/corpus/twic1599.pgn"
);

/// The games of a PGN file as move lists from the start position, read with `pgn-reader`
/// (`sim::pgn`). A game stops at the first move that is not legal (scores that continue
/// after mate).
pub fn games(pgn: &str) -> Vec<Vec<Move>> {
    eboard_sim::parse_games(pgn)
        .iter()
        .map(|game| {
            let mut pos = Chess::default();
            let mut moves = Vec::new();
            for text in &game.sans {
                let Ok(san) = SanPlus::from_ascii(text.as_bytes()) else {
                    break;
                };
                let Ok(m) = san.san.to_move(&pos) else {
                    break;
                };
                pos.play_unchecked(m);
                moves.push(m);
            }
            moves
        })
        .collect()
}

pub fn corpus_games() -> Vec<Vec<Move>> {
    let text = std::fs::read_to_string(CORPUS).expect("corpus readable");
    games(&text)
}

pub fn position(fen: &str) -> Chess {
    fen.parse::<Fen>()
        .expect("valid FEN")
        .into_position(CastlingMode::Standard)
        .expect("legal position")
}

pub fn uci(pos: &Chess, text: &str) -> Move {
    UciMove::from_ascii(text.as_bytes())
        .expect("uci text")
        .to_move(pos)
        .expect("legal uci move")
}

pub fn piece(c: char) -> Piece {
    Piece::from_char(c).expect("piece char")
}

pub fn sq(name: &str) -> Square {
    name.parse().expect("square name")
}

/// A tracker fed like a board would feed it, with a running clock.
pub struct Rig {
    pub tracker: Tracker,
    pub orientation: Orientation,
    pub now: u64,
    pub events: Vec<TrackerEvent>,
    /// The physical board (normal orientation squares).
    pub board: shakmaty::Board,
    /// Tick the tracker while time passes, as the daemon does; off: time passes only
    /// between inputs (a caller that never ticks).
    pub ticks: bool,
}

impl Rig {
    /// A tracker at `pos` with a board dump showing `pos`'s placement.
    pub fn new(pos: Chess, setting: OrientationSetting, orientation: Orientation) -> Rig {
        let board = pos.board().clone();
        let mut rig = Rig {
            tracker: Tracker::new(pos, setting),
            orientation,
            now: 1000,
            events: Vec::new(),
            board,
            ticks: true,
        };
        rig.dump();
        rig
    }

    pub fn at(fen: &str) -> Rig {
        Rig::new(
            position(fen),
            OrientationSetting::Normal,
            Orientation::Normal,
        )
    }

    pub fn dump(&mut self) -> Vec<TrackerEvent> {
        let wire = Placement::from_board(&self.board).to_wire(self.orientation);
        let ev = self.tracker.on_board_dump(&wire, self.now);
        self.events.extend(ev.clone());
        ev
    }

    fn field(&mut self, square: Square, content: Option<Piece>) -> Vec<TrackerEvent> {
        self.now += 1;
        match content {
            Some(p) => self.board.set_piece_at(square, p),
            None => {
                self.board.discard_piece_at(square);
            }
        }
        let field = self.orientation.field_of_square(square);
        let ev = self.tracker.on_field_update(field, content, self.now);
        self.events.extend(ev.clone());
        ev
    }

    pub fn lift(&mut self, square: &str) -> Vec<TrackerEvent> {
        self.field(sq(square), None)
    }

    pub fn place(&mut self, square: &str, p: char) -> Vec<TrackerEvent> {
        self.field(sq(square), Some(piece(p)))
    }

    pub fn press(&mut self) -> Vec<TrackerEvent> {
        self.now += 100;
        let ev = self.tracker.on_clock_press(self.now);
        self.events.extend(ev.clone());
        ev
    }

    /// A press by a known player (the clock's sides known).
    pub fn press_by(&mut self, presser: shakmaty::Color) -> Vec<TrackerEvent> {
        self.now += 100;
        let ev = self.tracker.on_clock_press_by(self.now, Some(presser));
        self.events.extend(ev.clone());
        ev
    }

    pub fn wait(&mut self, ms: u64) -> Vec<TrackerEvent> {
        self.now += ms;
        let ev = self.tracker.on_tick(self.now);
        self.events.extend(ev.clone());
        ev
    }

    /// Let `ms` pass as the daemon does: a tick whenever the tracker asked to be woken
    /// within that time, and one at its end.
    pub fn pass(&mut self, ms: u64) -> Vec<TrackerEvent> {
        let end = self.now + ms;
        if !self.ticks {
            self.now = end;
            return Vec::new();
        }
        let mut out = Vec::new();
        while let Some(at) = self
            .tracker
            .next_wakeup()
            .filter(|&t| t > self.now && t < end)
        {
            self.now = at;
            out.extend(self.tracker.on_tick(at));
        }
        self.now = end;
        out.extend(self.tracker.on_tick(end));
        self.events.extend(out.clone());
        out
    }

    /// Feed handling steps; returns the events they caused.
    pub fn steps(&mut self, steps: &[SensorStep]) -> Vec<TrackerEvent> {
        let mut out = Vec::new();
        for step in steps {
            match *step {
                SensorStep::Lift(s) => out.extend(self.field(s, None)),
                SensorStep::Place(s, p) => out.extend(self.field(s, Some(p))),
                SensorStep::Pause(ms) => out.extend(self.pass(ms)),
                SensorStep::Press => {
                    let ev = self.tracker.on_clock_press(self.now);
                    self.events.extend(ev.clone());
                    out.extend(ev);
                }
            }
        }
        out
    }

    /// Play a move with the given handling.
    pub fn handle(&mut self, hands: &mut Handling, mv: Move) -> Vec<TrackerEvent> {
        let pos = self.tracker.position().clone();
        let steps = hands.steps(&pos, mv);
        self.steps(&steps)
    }

    /// UCI of every move the tracker holds now.
    pub fn game_uci(&self) -> Vec<String> {
        self.tracker
            .moves()
            .iter()
            .map(|m| UciMove::from_move(*m, CastlingMode::Standard).to_string())
            .collect()
    }
}

/// A move in UCI (standard castling notation, e1g1).
pub fn uci_of(mv: &Move) -> String {
    UciMove::from_move(*mv, CastlingMode::Standard).to_string()
}

/// What `pick` finds in each event that has it.
fn picked<T>(events: &[TrackerEvent], pick: impl Fn(&TrackerEvent) -> Option<T>) -> Vec<T> {
    events.iter().filter_map(pick).collect()
}

/// UCI texts of the MovePlayed events.
pub fn played(events: &[TrackerEvent]) -> Vec<String> {
    picked(events, |e| match e {
        TrackerEvent::MovePlayed { mv } => Some(uci_of(mv)),
        _ => None,
    })
}

pub fn retracted(events: &[TrackerEvent]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, TrackerEvent::MoveRetracted { .. }))
        .count()
}

pub fn illegal(events: &[TrackerEvent]) -> Vec<String> {
    picked(events, |e| match e {
        TrackerEvent::IllegalPlacement { description, .. } => Some(description.clone()),
        _ => None,
    })
}

/// A tracker at the start position, on a board standing as a corpus replay with `seed` has
/// it: normal for odd seeds, reversed for even ones.
fn rig_for_seed(seed: u64) -> Rig {
    let orientation = if seed.is_multiple_of(2) {
        Orientation::Reversed
    } else {
        Orientation::Normal
    };
    Rig::new(Chess::default(), OrientationSetting::Auto, orientation)
}

/// Noisy hands seeded with `seed`, pressing a clock after each move when `clock`.
fn noisy_hands(seed: u64, clock: bool) -> Handling {
    Handling::new(seed, eboard_sim::handling::Noise::Noisy).with_clock(clock)
}

/// Replay one corpus game the way the corpus property test does: noisy handling seeded from
/// `seed` and the game index, a reversed board for even seeds, no clock presses for seeds
/// divisible by three, and (with the clock only) a quick reply read together with the move
/// with probability `quick` per ply. Plies in
/// `trace` print their steps and the events each caused.
pub fn replay_game(
    index: usize,
    game: &[Move],
    seed: u64,
    quick: f64,
    trace: Option<std::ops::RangeInclusive<usize>>,
) -> Rig {
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};
    let mut rig = rig_for_seed(seed);
    let mut hands = noisy_hands(seed * 1_000_003 + index as u64, !seed.is_multiple_of(3));
    let mut rng = SmallRng::seed_from_u64(seed ^ ((index as u64) << 8));
    let mut truth = Chess::default();
    let mut ply = 0;
    while ply < game.len() {
        // Without a clock nothing ends a move's correction window, and a quick reply can be
        // read either way (a longer slide, or a move and a reply): quick replies only with
        // the clock.
        let quick = ply + 1 < game.len() && !seed.is_multiple_of(3) && rng.random_bool(quick);
        let steps = if quick {
            hands.quick_reply(&truth, game[ply], game[ply + 1])
        } else {
            hands.steps(&truth, game[ply])
        };
        let n = if quick { 2 } else { 1 };
        if trace.as_ref().is_some_and(|r| r.contains(&ply)) {
            println!("ply {ply}: {:?}", &game[ply..ply + n]);
            for s in &steps {
                let ev = rig.steps(&[*s]);
                if !matches!(s, SensorStep::Pause(_)) || !ev.is_empty() {
                    println!("   {s:?} -> {ev:?}");
                }
            }
        } else {
            rig.steps(&steps);
        }
        for m in &game[ply..ply + n] {
            truth.play_unchecked(*m);
        }
        ply += n;
    }
    rig.wait(5_000);
    rig
}

/// Replay one corpus game at a quick pace without a clock: the next move's first change
/// comes `reply_ms` (a range) after the move's last, and with probability `overlap` per ply
/// the reply's first lift is read before the move's last placement (see
/// `Handling::quick_reply`). Odd seeds play on a normal board, even seeds on a reversed one.
pub fn replay_quick_unclocked(
    index: usize,
    game: &[Move],
    seed: u64,
    reply_ms: (u64, u64),
    overlap: f64,
) -> Rig {
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};
    let mut rig = rig_for_seed(seed);
    let mut hands = noisy_hands(seed * 7_000_003 + index as u64, false);
    let mut rng = SmallRng::seed_from_u64(seed ^ ((index as u64) << 12) ^ 0x5eed);
    let mut truth = Chess::default();
    let mut ply = 0;
    while ply < game.len() {
        let quick = ply + 1 < game.len() && rng.random_bool(overlap);
        let mut steps = if quick {
            hands.quick_reply(&truth, game[ply], game[ply + 1])
        } else {
            hands.steps(&truth, game[ply])
        };
        // No thinking time: the move begins `reply_ms` after the one before it ended.
        if ply > 0
            && let Some(SensorStep::Pause(ms)) = steps.first_mut()
        {
            *ms = rng.random_range(reply_ms.0..=reply_ms.1);
        }
        rig.steps(&steps);
        let n = if quick { 2 } else { 1 };
        for m in &game[ply..ply + n] {
            truth.play_unchecked(*m);
        }
        ply += n;
    }
    rig.wait(5_000);
    rig
}
