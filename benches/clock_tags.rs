//! What the clock tags of the broadcast PGN (`WhiteClock`, `BlackClock`, `ReferenceTime`) cost
//! per board: the extra rewrites of the `Pgn` text — each one a live file (plus its round
//! folder copies) rewritten, a relay `pgn` message and a lichess push candidate — per minute
//! of a blitz and a classical game, against the same game without the tags; the pushes per
//! minute with the broadcaster's pacing (at most one a second); and the CPU the tags add per
//! clock reading and per extra rewrite, scaled to 200 boards.
//!
//! The games run through the simulator's in-memory rig (virtual board + DGT 3000 + the real
//! session), twice with the same seed and the same hands: once with the wall clock told (the
//! daemon's case: tags), once without (no tags). The classical game has what makes the tags
//! change between moves: the first period running out after move 40 (the next period added),
//! the arbiter pausing the clock for two minutes, and an arbiter's correction of +2 min.
//!
//! `cargo bench --bench clock_tags` (figures in BENCHMARKS.md).

use std::hint::black_box;
use std::time::Instant;

use eboard_core::arbiter::ArbiterConfig;
use eboard_core::arbiter::timecontrol::TimeControl;
use eboard_core::clock_tags::{ClockReading, ClockTagger};
use eboard_core::session::SessionConfig;
use eboard_sim::rig::Rig;
use eboard_sim::{BoardOptions, ClockSetup, ClockSide, Noise};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shakmaty::{Color, Position};

/// The broadcaster's least time between pushes.
const PUSH_INTERVAL_MS: u64 = 1_000;
/// How often the outputs look at the text (the writer, the relay and the broadcaster all
/// react within this to a change).
const STEP_MS: u64 = 100;

/// What happens to the clock besides the moves, at a ply.
#[derive(Clone, Copy)]
enum Incident {
    /// The arbiter stops the clock for this long, then starts it again.
    Pause(u64),
    /// The arbiter adds this much to the player not to move.
    Correction(u64),
}

struct Plan {
    name: &'static str,
    clock: ClockSetup,
    control: Option<&'static str>,
    plies: usize,
    /// Thinking time per move (ms), by colour: a range.
    think: [(u64, u64); 2],
    /// A longer think at this ply (the first period running out after move 40).
    long_think: Option<(usize, u64)>,
    incidents: Vec<(usize, Incident)>,
}

/// One rig's run: the times (ms) at which the `Pgn` text changed, and the board minutes.
struct Run {
    changes: Vec<u64>,
    minutes: f64,
}

fn run(plan: &Plan, tags: bool, seed: u64) -> Run {
    let control: Option<TimeControl> = plan.control.map(|c| c.parse().unwrap());
    let mut rig = Rig::new(
        BoardOptions {
            clock_setup: plan.clock,
            time_control: control.clone(),
            clock_steady_flag: control.is_some(),
            ..BoardOptions::default()
        },
        SessionConfig {
            name: "bench".into(),
            arbiter: ArbiterConfig {
                time_control: control,
                ..ArbiterConfig::default()
            },
            ..SessionConfig::default()
        },
        seed,
        Noise::Clean,
    );
    if tags {
        rig.set_wall_clock(1_800_000_000_000);
    }
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut changes = Vec::new();
    let mut last = rig.session().view().pgn.clone();
    let start = rig.now();
    let mut wait = |rig: &mut Rig, ms: u64, changes: &mut Vec<u64>| {
        let end = rig.now() + ms;
        while rig.now() < end {
            rig.advance(STEP_MS.min(end - rig.now()));
            let pgn = &rig.session().view().pgn;
            if *pgn != last {
                last = pgn.clone();
                changes.push(rig.now());
            }
        }
    };
    for ply in 0..plan.plies {
        let mover = rig.played.turn();
        let (lo, hi) = plan.think[usize::from(mover == Color::Black)];
        let think = match plan.long_think {
            Some((at, ms)) if at == ply => ms,
            _ => rng.random_range(lo..=hi),
        };
        wait(&mut rig, think, &mut changes);
        for (_, incident) in plan.incidents.iter().filter(|(at, _)| *at == ply) {
            let now = rig.now();
            match *incident {
                Incident::Pause(ms) => {
                    rig.board.clock_mut().toggle_running(now);
                    wait(&mut rig, ms, &mut changes);
                    let now = rig.now();
                    rig.board.clock_mut().toggle_running(now);
                }
                Incident::Correction(ms) => {
                    let opponent = rig.side_of(!mover);
                    let running = rig.side_of(mover);
                    let clock = rig.board.clock_mut();
                    let (mut left, mut right) = (
                        clock.remaining(ClockSide::Left, now),
                        clock.remaining(ClockSide::Right, now),
                    );
                    match opponent {
                        ClockSide::Left => left += ms,
                        ClockSide::Right => right += ms,
                    }
                    clock.set_and_run(left, right, Some(running), now);
                }
            }
            wait(&mut rig, 2_000, &mut changes);
        }
        // A legal move that does not end the game (the bench wants the clock, not a mate).
        let legal = rig.played.legal_moves();
        let ongoing: Vec<_> = legal
            .iter()
            .filter(|m| {
                let mut p = rig.played.clone();
                p.play_unchecked(**m);
                !p.is_game_over()
            })
            .copied()
            .collect();
        let Some(m) = ongoing
            .get(rng.random_range(0..ongoing.len().max(1)))
            .copied()
        else {
            break;
        };
        rig.play_quick(m, 600);
        wait(&mut rig, 0, &mut changes);
    }
    wait(&mut rig, 3_000, &mut changes);
    let minutes = (rig.now() - start) as f64 / 60_000.0;
    assert!(
        rig.session().view().result == "*",
        "{}: the game ended ({}), the bench wants a game in play",
        plan.name,
        rig.session().view().termination
    );
    Run { changes, minutes }
}

/// Pushes of one board's changes with the broadcaster's pacing: a change goes as soon as the
/// last push is a second old; changes meanwhile ride with it.
fn pushes(changes: &[u64]) -> usize {
    let mut count = 0;
    let mut last_push: Option<u64> = None;
    let mut pending_since: Option<u64> = None;
    let mut i = 0;
    let end = changes.last().copied().unwrap_or(0) + 2 * PUSH_INTERVAL_MS;
    let mut t = changes.first().copied().unwrap_or(end);
    while t <= end {
        while i < changes.len() && changes[i] <= t {
            pending_since.get_or_insert(changes[i]);
            i += 1;
        }
        if pending_since.is_some() && last_push.is_none_or(|p| t >= p + PUSH_INTERVAL_MS) {
            count += 1;
            last_push = Some(t);
            pending_since = None;
        }
        t += STEP_MS;
    }
    count
}

fn report(plan: &Plan) {
    let seed = 41;
    let started = Instant::now();
    let with = run(plan, true, seed);
    let without = run(plan, false, seed);
    let per_min = |n: usize| n as f64 / with.minutes;
    let extra = with.changes.len().saturating_sub(without.changes.len());
    let push_with = pushes(&with.changes);
    let push_without = pushes(&without.changes);
    println!(
        "{:<34} {:>6.1} min  Pgn changes {:>4} vs {:>4} without tags: +{:.2}/min (file writes, relay \
         messages); pushes {:>4} vs {:>4}: +{:.2}/min  [{:.1} s]",
        plan.name,
        with.minutes,
        with.changes.len(),
        without.changes.len(),
        per_min(extra),
        push_with,
        push_without,
        per_min(push_with.saturating_sub(push_without)),
        started.elapsed().as_secs_f64()
    );
}

/// CPU: the tagger's look at one reading, and one PGN text rendered with the tags.
fn cpu() {
    let mut tagger = ClockTagger::default();
    let n = 2_000_000u64;
    let t = Instant::now();
    for k in 0..n {
        let reading = ClockReading {
            white_ms: 5_400_000 - k % 1_000 * 1_000,
            black_ms: 5_400_000,
            running: Some(Color::White),
            at: k % 1_000 * 1_000,
        };
        black_box(tagger.observe(
            black_box(Some(reading)),
            Some(1_800_000_000_000),
            false,
            reading.at,
        ));
    }
    let per_reading_ns = t.elapsed().as_nanos() as f64 / n as f64;
    // A 60-move game's text with and without the tags: what an extra rewrite renders.
    let mut rig = Rig::new(
        BoardOptions::default(),
        SessionConfig::default(),
        3,
        Noise::Clean,
    );
    rig.set_wall_clock(1_800_000_000_000);
    let mut rng = SmallRng::seed_from_u64(3);
    for _ in 0..60 {
        let legal = rig.played.legal_moves();
        let ongoing: Vec<_> = legal
            .iter()
            .filter(|m| {
                let mut p = rig.played.clone();
                p.play_unchecked(**m);
                !p.is_game_over()
            })
            .copied()
            .collect();
        if ongoing.is_empty() {
            break;
        }
        let m = ongoing[rng.random_range(0..ongoing.len())];
        rig.advance(2_000);
        rig.play_quick(m, 600);
    }
    rig.advance(3_000);
    let game = rig.session().game().clone();
    let tags = eboard_core::clock_tags::ClockTags {
        white_ms: 3_000_000,
        black_ms: 2_900_000,
        reference: Some((Color::White, 1_800_000_000_000)),
    };
    let reps = 2_000;
    let t = Instant::now();
    for _ in 0..reps {
        black_box(game.pgn_final_with_clock(0, Some(black_box(&tags))));
    }
    let render_us = t.elapsed().as_secs_f64() * 1e6 / f64::from(reps);
    // 200 boards, a reading a second each, and (classical, the worst figure above) about one
    // extra rewrite a minute each.
    let boards = 200.0;
    let share = (boards * per_reading_ns * 1e-9) + (boards / 60.0 * render_us * 1e-6);
    println!(
        "CPU: {per_reading_ns:.0} ns per clock reading looked at, {render_us:.1} µs per PGN text \
         rendered with the tags ({} plies); 200 boards at a reading a second and an extra \
         rewrite a minute: {:.4} % of a core",
        game.ply_count(),
        share * 100.0
    );
}

fn main() {
    let blitz = Plan {
        name: "blitz 3+2, 80 plies",
        clock: ClockSetup {
            base_ms: 180_000,
            increment_ms: 2_000,
        },
        control: None,
        plies: 80,
        think: [(1_000, 4_000), (1_000, 4_000)],
        long_think: None,
        incidents: vec![],
    };
    let classical = Plan {
        name: "classical 40/90+30:30+30, 90 plies",
        clock: ClockSetup::default(),
        control: Some("40/5400+30:1800+30"),
        plies: 90,
        // White spends his period by move 40 and runs it out thinking on move 41; the next
        // period is added to both sides between moves.
        think: [(130_000, 150_000), (60_000, 110_000)],
        long_think: Some((80, 1_200_000)),
        incidents: vec![
            (30, Incident::Pause(120_000)),
            (50, Incident::Correction(120_000)),
        ],
    };
    for plan in [&blitz, &classical] {
        report(plan);
    }
    cpu();
}
