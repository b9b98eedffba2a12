//! How long to hold a move whose hand may still be moving (the tracker's dwell): for each
//! dwell value, the corrections (retract + play seen by clients) per 1,000 plies and the
//! latency from a move's last sensor change to its `MovePlayed`, on the handling generator
//! (corpus games, several seeds) and over the two real captures.
//!
//! `cargo bench --bench dwell` prints the table that BENCHMARKS.md quotes. Time is simulated
//! exactly: the driver wakes the tracker when it asks (`Tracker::next_wakeup`), as the
//! daemon's board task does. The real captures carry no timestamps: their time is rebuilt from
//! the clock, which reports about once a second, by spreading the messages between two clock
//! readings evenly over that second.
//!
//! `EBOARDD_DWELL_GAMES=N` limits the generator to the first N corpus games (default: all);
//! under `cargo test` (no `--bench`) a short smoke run checks the driver.

#[path = "../tests/tracker_common/mod.rs"]
mod tracker_common;

use std::collections::HashMap;

use eboard_core::board::{Orientation, Placement};
use eboard_core::dgt::{Decoder, Message};
use eboard_core::tracker::{Tracker, TrackerEvent};
use eboard_core::vocab::OrientationSetting;
use eboard_sim::handling::{Handling, Noise, SensorStep};
use shakmaty::uci::UciMove;
use shakmaty::{Board, Chess, Move, Position};

const DWELLS: [u64; 6] = [0, 50, 100, 150, 250, 400];
const SEEDS: [u64; 3] = [1, 2, 4];

/// What one run measured.
#[derive(Default)]
struct Tally {
    plies: usize,
    corrections: u64,
    /// Games whose final move list is not the one played.
    wrong: usize,
    latencies: Vec<u64>,
}

impl Tally {
    fn add(&mut self, other: Tally) {
        self.plies += other.plies;
        self.corrections += other.corrections;
        self.wrong += other.wrong;
        self.latencies.extend(other.latencies);
    }

    fn per_1000(&self) -> f64 {
        self.corrections as f64 * 1000.0 / self.plies.max(1) as f64
    }

    fn percentile(&mut self, p: f64) -> u64 {
        if self.latencies.is_empty() {
            return 0;
        }
        self.latencies.sort_unstable();
        let i = ((self.latencies.len() - 1) as f64 * p).round() as usize;
        self.latencies[i]
    }
}

/// A tracker driven like the daemon drives it, with the bookkeeping for latencies.
struct Driver {
    tracker: Tracker,
    now: u64,
    /// When the sensed board last became each board it showed.
    became: HashMap<Board, u64>,
    /// The game as the events tell it, and the latency of each ply's last publication.
    shadow: Vec<Chess>,
    latency: Vec<Option<u64>>,
}

impl Driver {
    fn new(dwell: u64) -> Driver {
        Driver {
            tracker: Tracker::new(Chess::default(), OrientationSetting::Auto).with_dwell(dwell),
            now: 1_000,
            became: HashMap::new(),
            shadow: vec![Chess::default()],
            latency: Vec::new(),
        }
    }

    /// Let time pass until `t`, waking the tracker whenever it asked to be.
    fn advance(&mut self, t: u64) {
        while let Some(at) = self
            .tracker
            .next_wakeup()
            .filter(|&at| at > self.now && at <= t)
        {
            self.now = at;
            let ev = self.tracker.on_tick(at);
            self.events(ev);
        }
        self.now = self.now.max(t);
    }

    fn sensed_changed(&mut self) {
        let board = self.tracker.placement().to_board();
        self.became.insert(board, self.now);
    }

    fn events(&mut self, events: Vec<TrackerEvent>) {
        for e in events {
            match e {
                TrackerEvent::GameStarted { .. } => {
                    self.shadow = vec![Chess::default()];
                    self.latency.clear();
                }
                TrackerEvent::MovePlayed { mv, .. } => {
                    let mut next = self.shadow[self.shadow.len() - 1].clone();
                    next.play_unchecked(mv);
                    let lat = self.became.get(next.board()).map(|&t| self.now - t);
                    self.shadow.push(next);
                    let ply = self.shadow.len() - 2;
                    self.latency.truncate(ply);
                    self.latency.push(lat);
                }
                TrackerEvent::MoveRetracted { .. } if self.shadow.len() > 1 => {
                    self.shadow.pop();
                    self.latency.pop();
                }
                _ => {}
            }
        }
    }

    fn finish(mut self, want: &[String]) -> Tally {
        self.advance(self.now + 10_000);
        let got: Vec<String> = self
            .tracker
            .moves()
            .iter()
            .map(|m| UciMove::from_standard(*m).to_string())
            .collect();
        Tally {
            plies: want.len(),
            corrections: u64::from(self.tracker.corrections()),
            wrong: usize::from(got != want),
            latencies: self.latency.iter().flatten().copied().collect(),
        }
    }
}

fn uci_of(game: &[Move]) -> Vec<String> {
    game.iter()
        .map(|m| UciMove::from_standard(*m).to_string())
        .collect()
}

/// One corpus game with the generator's hands (the corpus test's seeding: no clock for
/// seeds divisible by three).
fn generator_game(index: usize, game: &[Move], seed: u64, dwell: u64) -> Tally {
    let mut d = Driver::new(dwell);
    let start = Placement::from_board(Chess::default().board()).to_wire(Orientation::Normal);
    let ev = d.tracker.on_board_dump(&start, d.now);
    d.sensed_changed();
    d.events(ev);
    let mut hands = Handling::new(seed * 1_000_003 + index as u64, Noise::Noisy)
        .with_clock(!seed.is_multiple_of(3));
    let mut truth = Chess::default();
    for &mv in game {
        for step in hands.steps(&truth, mv) {
            match step {
                SensorStep::Pause(ms) => d.advance(d.now + ms),
                SensorStep::Press => {
                    let ev = d.tracker.on_clock_press(d.now);
                    d.events(ev);
                }
                SensorStep::Lift(sq) | SensorStep::Place(sq, _) => {
                    // One scan reads one change: a few milliseconds apart at least.
                    d.advance(d.now + 2);
                    let content = match step {
                        SensorStep::Place(_, p) => Some(p),
                        _ => None,
                    };
                    let field = Orientation::Normal.field_of_square(sq);
                    let ev = d.tracker.on_field_update(field, content, d.now);
                    d.sensed_changed();
                    d.events(ev);
                }
            }
        }
        truth.play_unchecked(mv);
    }
    d.finish(&uci_of(game))
}

fn capture(n: u32) -> (Vec<u8>, Vec<String>) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/captures");
    let text = std::fs::read_to_string(format!("{dir}/{n}.inbytes")).expect("capture readable");
    let chunks = eboard_core::capture::parse(&text).expect("capture parses");
    let bytes = chunks.into_iter().flat_map(|c| c.bytes).collect();
    let uci = std::fs::read_to_string(format!("{dir}/{n}.uci")).expect("moves readable");
    let moves = uci
        .split_whitespace()
        .filter(|t| !t.ends_with('.') && *t != "*")
        .map(str::to_string)
        .collect();
    (bytes, moves)
}

/// A real capture with its time rebuilt from the clock (see the module documentation).
fn capture_game(n: u32, dwell: u64) -> Tally {
    let (bytes, want) = capture(n);
    let (messages, _) = Decoder::decode_all(&bytes);
    // Times: clock reading k at k seconds; the messages after it spread over that second.
    let mut times = vec![0u64; messages.len()];
    let clock_at: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| matches!(m, Message::ClockTimes(_)))
        .map(|(i, _)| i)
        .collect();
    let mut k = 0u64;
    let mut i = 0;
    while i < messages.len() {
        let next = clock_at
            .iter()
            .copied()
            .find(|&c| c > i)
            .unwrap_or(messages.len());
        let span = (next - i) as u64;
        for (j, t) in times[i..next].iter_mut().enumerate() {
            *t = 1_000 + k * 1_000 + (j as u64 * 1_000) / span.max(1);
        }
        k += 1;
        i = next;
    }
    let mut d = Driver::new(dwell);
    let mut lever: Option<bool> = None;
    let trace = std::env::var_os("EBOARDD_DWELL_TRACE").is_some();
    let mut last_field = 0u64;
    let mut last_press = 0u64;
    for (m, &t) in messages.iter().zip(&times) {
        d.advance(t);
        if trace && matches!(m, Message::FieldUpdate { .. }) {
            let before = d.tracker.corrections();
            let gap = t - last_field;
            last_field = t;
            if let Message::FieldUpdate { field, content } = m {
                let ev = d.tracker.clone().on_field_update(*field, *content, d.now);
                if ev.iter().any(|e| {
                    matches!(
                        e,
                        TrackerEvent::MoveRetracted {
                            correction: true,
                            ..
                        }
                    )
                }) {
                    println!(
                        "capture {n} dwell {dwell}: correction {before}+1 at {t} ms, {gap} ms after the previous field update, last press at {last_press} ms: {ev:?}"
                    );
                }
            }
        }
        let ev = match m {
            Message::BoardDump(fields) => {
                let ev = d.tracker.on_board_dump(fields, d.now);
                d.sensed_changed();
                ev
            }
            Message::FieldUpdate { field, content } => {
                let ev = d.tracker.on_field_update(*field, *content, d.now);
                d.sensed_changed();
                ev
            }
            Message::ClockTimes(c) if c.status.connected => {
                let down = c.status.lever_left_down;
                let pressed = lever.is_some_and(|was| was != down);
                lever = Some(down);
                if pressed {
                    last_press = d.now;
                    d.tracker.on_clock_press(d.now)
                } else {
                    Vec::new()
                }
            }
            _ => Vec::new(),
        };
        d.events(ev);
    }
    d.finish(&want)
}

fn main() {
    let smoke = !std::env::args().any(|a| a == "--bench");
    let games = tracker_common::corpus_games();
    let limit = std::env::var("EBOARDD_DWELL_GAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if smoke { 20 } else { games.len() });
    let games = &games[..limit.min(games.len())];
    let seeds: &[u64] = if smoke { &SEEDS[..1] } else { &SEEDS };
    println!(
        "generator: {} corpus games x {} seeds; captures 1 and 2 (time rebuilt from the clock)",
        games.len(),
        seeds.len()
    );
    println!(
        "| dwell ms | generator corrections / 1,000 plies | p50 ms | p99 ms | captures corrections (/ 1,000) | p50 ms | p99 ms | wrong games |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for dwell in DWELLS {
        let mut gen_tally = Tally::default();
        for (i, game) in games.iter().enumerate() {
            for &seed in seeds {
                gen_tally.add(generator_game(i, game, seed, dwell));
            }
        }
        let mut cap = Tally::default();
        for n in [1, 2] {
            cap.add(capture_game(n, dwell));
        }
        let (g50, g99) = (gen_tally.percentile(0.5), gen_tally.percentile(0.99));
        let (c50, c99) = (cap.percentile(0.5), cap.percentile(0.99));
        println!(
            "| {dwell} | {:.1} | {g50} | {g99} | {} ({:.1}) | {c50} | {c99} | {} + {} |",
            gen_tally.per_1000(),
            cap.corrections,
            cap.per_1000(),
            gen_tally.wrong,
            cap.wrong
        );
        if smoke {
            assert_eq!(gen_tally.wrong + cap.wrong, 0, "every game reconstructed");
            assert!(!gen_tally.latencies.is_empty() && !cap.latencies.is_empty());
        }
    }
}
