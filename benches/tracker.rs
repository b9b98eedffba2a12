//! Sensor events per second through the tracker: corpus games played with noisy human
//! handling (slides, capture orders, touches, adjustments, clock presses), every field update
//! and press fed to a fresh tracker per game. Also prints the corrections rate.

#[path = "../tests/tracker_common/mod.rs"]
mod tracker_common;

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use eboard_core::board::{Orientation, Placement};
use eboard_core::tracker::Tracker;
use eboard_core::vocab::OrientationSetting;
use eboard_sim::handling::{Handling, Noise, SensorStep};
use shakmaty::{Chess, Position};

/// One input to the tracker, precomputed so the benchmark measures the tracker only.
#[derive(Clone, Copy)]
enum Input {
    Field(u8, Option<shakmaty::Piece>, u64),
    Press(u64),
}

fn inputs(games: &[Vec<shakmaty::Move>]) -> Vec<Vec<Input>> {
    games
        .iter()
        .enumerate()
        .map(|(i, game)| {
            let mut hands = Handling::new(i as u64, Noise::Noisy);
            let mut pos = Chess::default();
            let mut now = 0;
            let mut out = Vec::new();
            for &mv in game {
                for step in hands.steps(&pos, mv) {
                    now += 1;
                    match step {
                        SensorStep::Lift(sq) => out.push(Input::Field(
                            Orientation::Normal.field_of_square(sq),
                            None,
                            now,
                        )),
                        SensorStep::Place(sq, p) => out.push(Input::Field(
                            Orientation::Normal.field_of_square(sq),
                            Some(p),
                            now,
                        )),
                        SensorStep::Pause(ms) => now += ms,
                        SensorStep::Press => out.push(Input::Press(now)),
                    }
                }
                pos.play_unchecked(mv);
            }
            out
        })
        .collect()
}

/// Replay every game; returns (plies, corrections).
fn run(games: &[Vec<Input>], start: &[Option<shakmaty::Piece>; 64]) -> (usize, u32) {
    let mut plies = 0;
    let mut corrections = 0;
    for game in games {
        let mut t = Tracker::new(Chess::default(), OrientationSetting::Auto);
        black_box(t.on_board_dump(start, 0));
        for input in game {
            let ev = match *input {
                Input::Field(f, c, now) => t.on_field_update(f, c, now),
                Input::Press(now) => t.on_clock_press(now),
            };
            black_box(ev);
        }
        plies += t.moves().len();
        corrections += t.corrections();
    }
    (plies, corrections)
}

fn bench(c: &mut Criterion) {
    let games = tracker_common::corpus_games();
    let games = &games[..games.len().min(200)];
    let feeds = inputs(games);
    let events: usize = feeds
        .iter()
        .map(|g| g.iter().filter(|i| matches!(i, Input::Field(..))).count())
        .sum();
    let start = Placement::from_board(Chess::default().board()).to_wire(Orientation::Normal);
    let (plies, corrections) = run(&feeds, &start);
    let want: usize = games.iter().map(Vec::len).sum();
    assert_eq!(plies, want, "every ply reconstructed");
    println!(
        "{} games, {plies} plies, {events} field updates; {corrections} corrections = {:.1} per 1,000 plies",
        games.len(),
        corrections as f64 * 1000.0 / plies as f64
    );
    let mut group = c.benchmark_group("tracker");
    group.throughput(Throughput::Elements(events as u64));
    group.sample_size(10);
    group.bench_function("noisy corpus field updates", |b| {
        b.iter(|| run(black_box(&feeds), &start))
    });
    group.finish();
}

/// The whole corpus at a quick pace without a clock (the next move's first change 0–250 ms
/// after the move's last), with and without the reply overlapping the move, on a normal and
/// a reversed board: exact games, games ending in sync with a game not played, games with
/// an illegal placement reported on the way, corrections per 1,000 plies.
fn quick_unclocked(_: &mut Criterion) {
    let games = tracker_common::corpus_games();
    for overlap in [0.0, 0.05, 0.3] {
        let (mut runs, mut exact, mut wrong_in_sync, mut accused) = (0, 0, 0, 0);
        let (mut plies, mut corrections) = (0usize, 0u64);
        for (i, game) in games.iter().enumerate() {
            for seed in [1u64, 2] {
                let rig = tracker_common::replay_quick_unclocked(i, game, seed, (0, 250), overlap);
                let want: Vec<String> = game
                    .iter()
                    .map(|m| shakmaty::uci::UciMove::from_standard(*m).to_string())
                    .collect();
                runs += 1;
                plies += game.len();
                corrections += u64::from(rig.tracker.corrections());
                if rig.game_uci() == want {
                    exact += 1;
                } else if rig.tracker.in_sync() {
                    wrong_in_sync += 1;
                }
                accused += usize::from(!tracker_common::illegal(&rig.events).is_empty());
            }
        }
        println!(
            "quick, no clock, overlap {:.0}%: {exact} of {runs} games exact, {wrong_in_sync} in sync with a game not played, {accused} with an illegal placement reported, {:.1} corrections per 1,000 plies",
            overlap * 100.0,
            corrections as f64 * 1000.0 / plies as f64
        );
    }
}

/// A pace of the hall benchmark: its name, the reply's range in ms (`None`: the hall's
/// mix), and how many games.
type HallPace = (&'static str, Option<(u64, u64)>, u64);

/// The second model of a hand (`tracker_common::hall`), thousands of games: what the
/// property test of `tests/tracker_hall.rs` checks on 1,000, with the figures: the hall's
/// mix of paces, then three paces alone, each with a clock and without, the board either way
/// round. Under `cargo test` (no `--bench`), a smoke run of a few games each.
fn hall_convergence(_: &mut Criterion) {
    let full = std::env::args().any(|a| a == "--bench");
    let paces: [HallPace; 4] = [
        ("mixed 0-2 s", None, 3_000),
        ("quick 0.08-0.25 s", Some((80, 250)), 1_000),
        ("blitz 0.25-2 s", Some((250, 2_000)), 1_000),
        ("calm 2-8 s", Some((2_000, 8_000)), 1_000),
    ];
    for (pace, reply_ms, count) in paces {
        for clock in [true, false] {
            hall_row(pace, reply_ms, clock, if full { count } else { 20 });
        }
    }
}

fn hall_row(pace: &str, reply_ms: Option<(u64, u64)>, clock: bool, count: u64) {
    use tracker_common::hall::{self, HallGame};
    let games = tracker_common::corpus_games();
    let (mut runs, mut plies, mut exact, mut wrong_in_sync, mut accused) = (0, 0, 0, 0, 0);
    let (mut corrections, mut questions, mut lost, mut silent) = (0u64, 0, 0, 0);
    let (mut played, mut finals) = (Vec::new(), Vec::new());
    for seed in 0..count {
        let index = (seed as usize * 7_919) % games.len();
        let orientation = if seed % 2 == 0 {
            Orientation::Normal
        } else {
            Orientation::Reversed
        };
        let game = &games[index];
        let run = hall::play(
            game,
            &HallGame {
                seed,
                clock,
                orientation,
                trace: None,
                reply_ms,
            },
        );
        runs += 1;
        plies += game.len();
        corrections += u64::from(run.rig.tracker.corrections());
        questions += run.open_questions;
        silent += run.silent_behind;
        let held = run.rig.tracker.moves();
        let common = held.iter().zip(game).take_while(|(a, b)| a == b).count();
        lost += game.len() - common;
        if common == game.len() && held.len() == game.len() {
            exact += 1;
        } else {
            println!("hall: game {index} seed {seed} clock {clock} ({pace}) not exact");
            wrong_in_sync += usize::from(run.rig.tracker.in_sync());
        }
        accused += usize::from(!tracker_common::illegal(&run.rig.events).is_empty());
        played.extend(run.to_played_ms);
        finals.extend(run.to_final_ms);
    }
    let pct = |v: &mut Vec<u64>, p: f64| {
        v.sort_unstable();
        v.get(((v.len() as f64 - 1.0) * p) as usize)
            .copied()
            .unwrap_or(0)
    };
    println!(
        "hall, {pace}, clock {clock}: {runs} games, {plies} plies, {exact} exact, {wrong_in_sync} in sync with a game not played, {accused} with an illegal placement, {:.1} corrections per 1,000 plies, {questions} questions (two stories open at a still board), {lost} plies lost, {silent} silent-behind episodes; last change to MovePlayed p50 {} ms p99 {} ms max {} ms; to final p50 {} ms p99 {} ms max {} ms",
        corrections as f64 * 1000.0 / plies as f64,
        pct(&mut played, 0.5),
        pct(&mut played, 0.99),
        pct(&mut played, 1.0),
        pct(&mut finals, 0.5),
        pct(&mut finals, 0.99),
        pct(&mut finals, 1.0),
    );
}

criterion_group!(benches, bench, quick_unclocked, hall_convergence);
criterion_main!(benches);
