//! End to end below the daemon: corpus games played by the simulator with human handling, on
//! a real pty, read by the project's serial side (tokio-serial on the slave path, 9600 8N1),
//! decoded and reconstructed by the tracker — exact, for a normal and a reversed board, with
//! and without a clock.
//!
//! Board time is stepped (infinite speed), so no test waits on the wall clock; the bytes read
//! from the port are timestamped with the board time the simulator wrote them at (its tap),
//! after checking that the port delivered exactly those bytes.

mod sim_support;

use std::time::Duration;

use eboardd::board::Orientation;
use eboardd::protocol::{ClockTimes, Decoder, Message};
use eboardd::sim::{
    BoardOptions, ClockPresence, Noise, Pace, PgnGame, ScenarioOptions, SimBoard, SimOptions,
    parse_games, play_game,
};
use eboardd::tracker::{Tracker, TrackerEvent};
use eboardd::vocab::OrientationSetting;
use shakmaty::{CastlingMode, Chess};
use sim_support::attach;

struct Outcome {
    uci: Vec<String>,
    illegal_reports: usize,
    in_sync: bool,
    corrections: u32,
}

/// How the bytes read are handed to the tracker.
#[derive(Clone, Copy)]
struct Run {
    orientation: Orientation,
    clock: bool,
    pace: Pace,
    /// Also tick the tracker when it asks to be woken ([`Tracker::next_wakeup`]) between two
    /// readings, as the daemon does; otherwise only at the readings (the harder case: every
    /// deadline is noticed late, by the next change).
    wakeups: bool,
}

async fn run_game(game: &PgnGame, run: Run, seed: u64) -> Outcome {
    let Run {
        orientation,
        clock,
        pace,
        wakeups,
    } = run;
    let sim = SimBoard::spawn(SimOptions {
        board: BoardOptions {
            orientation,
            clock: if clock {
                ClockPresence::Present
            } else {
                ClockPresence::Absent
            },
            ..BoardOptions::default()
        },
        speed: f64::INFINITY,
        tap: true,
        ..SimOptions::default()
    })
    .await
    .unwrap();
    let mut tap = sim.take_tap().unwrap();
    // A daemon's start-up: reset, dump, updates with clock data on change.
    let collector = attach(&sim, &sim.path(), &[0x40, 0x42, 0x4B]).await;
    let opts = ScenarioOptions {
        pace,
        noise: Noise::Noisy,
        seed,
        press_clock: clock,
    };
    play_game(&sim, game, opts).await.unwrap();
    sim.sleep(3_000).await;
    let end = sim.now();
    let (chunks, _port) = collector.finish(Duration::from_millis(30)).await;
    assert_eq!(sim.snapshot().await.unwrap().dropped_bytes, 0);
    sim.shutdown().await;
    let mut written = Vec::new();
    while let Ok(chunk) = tap.try_recv() {
        written.push(chunk);
    }
    let read: Vec<u8> = chunks.concat();
    let sent: Vec<u8> = written.iter().flat_map(|(_, b)| b.clone()).collect();
    assert_eq!(read, sent, "the port delivers exactly what the board wrote");

    let mut tracker = Tracker::new(Chess::default(), OrientationSetting::Auto);
    let mut decoder = Decoder::new();
    let mut events = Vec::new();
    let mut last_clock: Option<ClockTimes> = None;
    // With EBOARDD_SIM_ONLY set, the tracker's events are printed with their board time.
    let trace = std::env::var_os("EBOARDD_SIM_ONLY").is_some();
    for (at, bytes) in &written {
        if wakeups {
            while let Some(wake) = tracker.next_wakeup().filter(|w| w < at) {
                events.extend(tracker.on_tick(wake));
            }
        }
        let seen = events.len();
        for message in decoder.feed(bytes).collect::<Vec<_>>() {
            if trace {
                println!("{at:>8} {message:?}");
            }
            match message {
                Message::BoardDump(fields) => events.extend(tracker.on_board_dump(&fields, *at)),
                Message::FieldUpdate { field, content } => {
                    events.extend(tracker.on_field_update(field, content, *at));
                }
                Message::ClockTimes(t) => {
                    if last_clock
                        .is_some_and(|l| l.status.lever_left_down != t.status.lever_left_down)
                    {
                        events.extend(tracker.on_clock_press(*at));
                    }
                    last_clock = Some(t);
                }
                _ => {}
            }
        }
        events.extend(tracker.on_tick(*at));
        if trace {
            for event in &events[seen..] {
                println!("{at:>8}   -> {event:?}");
            }
        }
    }
    events.extend(tracker.on_tick(end + 5_000));
    assert_eq!(decoder.stats().skipped_bytes, 0);
    assert_eq!(tracker.orientation(), Some(orientation));
    Outcome {
        uci: tracker
            .moves()
            .iter()
            .map(|m| m.to_uci(CastlingMode::Standard).to_string())
            .collect(),
        illegal_reports: events
            .iter()
            .filter(|e| matches!(e, TrackerEvent::IllegalPlacement { .. }))
            .count(),
        in_sync: tracker.in_sync(),
        corrections: tracker.corrections(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corpus_games_come_out_exact_through_the_pty() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/corpus/twic1599.pgn"
    ))
    .unwrap();
    let games = parse_games(&text);
    // A sample of the corpus, 40 games per configuration (about 20 s in a debug build, 8 s
    // in release); EBOARDD_SIM_GAMES=N plays N per configuration. Every configuration sees
    // different games.
    let per_config = std::env::var("EBOARDD_SIM_GAMES")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(40)
        .clamp(1, games.len() / 4);
    let stride = (games.len() / (per_config * 4)).max(1);
    // EBOARDD_SIM_ONLY=330,516 replays only those games of the sample (to look at a failure).
    let only: Option<Vec<usize>> = std::env::var("EBOARDD_SIM_ONLY").ok().map(|list| {
        list.split(',')
            .filter_map(|n| n.trim().parse().ok())
            .collect()
    });
    let configs = [
        (Orientation::Normal, true),
        (Orientation::Reversed, true),
        (Orientation::Normal, false),
        (Orientation::Reversed, false),
    ];
    let (mut plies, mut corrections, mut failures) = (0, 0, Vec::new());
    for (c, &(orientation, clock)) in configs.iter().enumerate() {
        for k in 0..per_config {
            let index = (k * configs.len() + c) * stride;
            if only.as_ref().is_some_and(|only| !only.contains(&index)) {
                continue;
            }
            let game = &games[index];
            let want: Vec<String> = game
                .moves()
                .unwrap()
                .iter()
                .map(|m| m.to_uci(CastlingMode::Standard).to_string())
                .collect();
            if only.is_some() {
                println!(
                    "game {index} ({orientation:?}, clock {clock}): {}",
                    want.join(" ")
                );
            }
            let run = Run {
                orientation,
                clock,
                pace: Pace::human(),
                wakeups: false,
            };
            let got = run_game(game, run, index as u64 + 1).await;
            plies += want.len();
            corrections += got.corrections;
            if got.uci != want || got.illegal_reports > 0 || !got.in_sync {
                failures.push(format!(
                    "game {index} ({orientation:?}, clock {clock}): {} of {} plies, first difference at {:?}, illegal reports {}, in sync {}",
                    got.uci.len(),
                    want.len(),
                    got.uci.iter().zip(&want).position(|(a, b)| a != b),
                    got.illegal_reports,
                    got.in_sync
                ));
            }
        }
    }
    println!(
        "{plies} plies through the pty, {} failures, {corrections} corrections",
        failures.len()
    );
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Without a clock at a quick pace (a ply every 0.2-0.5 s, hands at 40-120 ms a step): every
/// move is final from the board alone, and replies that come while the tracker still waits
/// on a move are resolved as soon as the board tells. Both with the tracker ticked only at
/// the readings and at its wakeups as the daemon does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quick_games_without_a_clock_come_out_exact() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/corpus/twic1599.pgn"
    ))
    .unwrap();
    let games = parse_games(&text);
    let count = std::env::var("EBOARDD_SIM_QUICK_GAMES")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(24)
        .clamp(1, games.len());
    let stride = (games.len() / count).max(1);
    let pace = Pace {
        think_ms: (150, 400),
        press_ms: (0, 0),
        hand_ms: (40, 120),
    };
    let (mut plies, mut failures) = (0, Vec::new());
    for k in 0..count {
        let index = k * stride + 1;
        let game = &games[index];
        let want: Vec<String> = game
            .moves()
            .unwrap()
            .iter()
            .map(|m| m.to_uci(CastlingMode::Standard).to_string())
            .collect();
        let run = Run {
            orientation: if k % 2 == 0 {
                Orientation::Normal
            } else {
                Orientation::Reversed
            },
            clock: false,
            pace,
            wakeups: k % 4 >= 2,
        };
        let got = run_game(game, run, index as u64 + 7).await;
        plies += want.len();
        if got.uci != want || got.illegal_reports > 0 || !got.in_sync {
            failures.push(format!(
                "game {index} ({:?}, wakeups {}): {} of {} plies, first difference at {:?}, illegal reports {}, in sync {}",
                run.orientation,
                run.wakeups,
                got.uci.len(),
                want.len(),
                got.uci.iter().zip(&want).position(|(a, b)| a != b),
                got.illegal_reports,
                got.in_sync
            ));
        }
    }
    println!(
        "{plies} plies at a quick pace without a clock, {} failures",
        failures.len()
    );
    assert!(failures.is_empty(), "{failures:#?}");
}
