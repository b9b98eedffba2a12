//! Gap soak through the daemon: simulated DGT boards + clocks on ptys, the `eboardd` binary,
//! a private `dbus-daemon`; corpus games at blitz pace (0.5–1.1 s a ply, 3+2 clock), bullet
//! pace (0.2–0.5 s a ply, 1+1) and fast bullet (0.1–0.3 s a ply, 1+1: a kill leaves a dozen
//! plies unseen), the plug pulled for 1–1.6 s now and then while the players
//! play on (the board loses power: its memory has nothing for the gap), and the daemon killed
//! (-9) in the middle of the games and started again a second or so later (the boards keep
//! their memory). An arbiter at every board answers `ResolveGap` from the scoresheet 3 s after
//! the `Gap` property says it waits for him. No illegal move is ever made.
//!
//! Figures per pace: games, plies, unplugs, kills (board-games hit), gap plies (made while
//! unplugged or while the daemon was down), recovered (gap plies in the final record of a
//! fault no `ResolveGap` was needed for), by the arbiter, asked (`ResolveGap` calls accepted),
//! lost (plies of the game played missing or wrong in the final `Moves`), false accusations
//! (`IllegalPlacement` / `IllegalMoveCompleted` signals), and the longest stall: from the
//! moment the board showed a ply (its last piece set down; for a gap ply, the moment the
//! board could be read again: replugged, or the restarted daemon connected to it) to the
//! first `MovePlayed` of that ply and move at the benchmark's D-Bus client.
//!
//! ```text
//! cargo bench --bench gap_soak_daemon          # 6 boards (2 blitz, 2 bullet, 2 fast), 300 s
//! EBOARDD_GAPD_BOARDS=4 EBOARDD_GAPD_SECS=120 EBOARDD_GAPD_SEED=7 cargo bench --bench gap_soak_daemon
//! ```
//!
//! The arbiter answers when `Gap` asks for him (several sequences explain the board, or none
//! of up to 6 plies does: it grew too long before the board was read).
//! `EBOARDD_GAPD_ARBITER=steps-in` makes him also answer, unasked, any gap that says no
//! legal sequence explains the board (counted apart; the daemon asks for him there now).
//! `EBOARDD_GAPD_KEEP=1` keeps the temporary directory (the daemons' logs, the state) after
//! a run that passed; after a failed run it is always kept.
//!
//! Without `--bench` (as under `cargo test --all-targets`) or with `--test`: a smoke run of
//! 2 boards (one game at blitz pace, two at bullet pace, an unplug on each, one kill). Both
//! exit 1 after the figures on any ply lost or any false accusation, and when the run could
//! not be made (no `dbus-daemon` is an error, not a skip); a smoke run also when it had no
//! unplug or no kill.

#[allow(dead_code)] // the players here are this benchmark's own
#[path = "../daemon_load/parts.rs"]
mod parts;

mod arbiter;
mod conductor;
mod player;
mod state;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use tokio::sync::Notify;

use eboard_sim::ClockSetup;
use eboard_sim::scramble::Pace;

use conductor::{Conductor, Schedule};
use parts::{client, hall, harness, procs};
use player::{Game, Plan};
use state::{Figures, Shared, Speed};

struct Config {
    boards: usize,
    secs: u64,
    seed: u64,
    smoke: bool,
    /// The arbiter also resolves gaps no legal sequence explains (he was not asked).
    step_in: bool,
}

impl Config {
    fn from_env_and_args() -> anyhow::Result<Config> {
        let seed = harness::env_num("EBOARDD_GAPD_SEED", 1)?;
        let step_in = match std::env::var("EBOARDD_GAPD_ARBITER").as_deref() {
            Ok("steps-in") => true,
            Err(_) | Ok("asked") => false,
            Ok(v) => anyhow::bail!("EBOARDD_GAPD_ARBITER={v:?}: want asked or steps-in"),
        };
        if harness::smoke_run() {
            return Ok(Config {
                boards: 2,
                secs: 600,
                seed,
                smoke: true,
                step_in,
            });
        }
        let boards = harness::env_num("EBOARDD_GAPD_BOARDS", 6)? as usize;
        anyhow::ensure!((1..=200).contains(&boards), "EBOARDD_GAPD_BOARDS: 1..=200");
        Ok(Config {
            boards,
            secs: harness::env_num("EBOARDD_GAPD_SECS", 300)?,
            seed,
            smoke: false,
            step_in,
        })
    }

    /// Board `i`'s pace: blitz, bullet and fast bullet in turn (the smoke run's two boards:
    /// blitz and bullet).
    fn speed(i: usize) -> Speed {
        match i % 3 {
            0 => Speed::Blitz,
            1 => Speed::Bullet,
            _ => Speed::Fast,
        }
    }
}

fn pace(speed: Speed) -> (Pace, ClockSetup) {
    match speed {
        Speed::Blitz => (
            Pace::blitz(),
            ClockSetup {
                base_ms: 3 * 60_000,
                increment_ms: 2_000,
            },
        ),
        Speed::Bullet => (
            Pace::bullet(),
            ClockSetup {
                base_ms: 60_000,
                increment_ms: 1_000,
            },
        ),
        Speed::Fast => (
            Pace::bullet_fast(),
            ClockSetup {
                base_ms: 60_000,
                increment_ms: 1_000,
            },
        ),
    }
}

fn main() {
    harness::main("gap_soak_daemon", Config::from_env_and_args, run);
}

async fn run(config: Config) -> anyhow::Result<()> {
    let corpus: Vec<Game> = harness::corpus_games()?
        .iter()
        .filter_map(|g| {
            Some(Game {
                title: g.title(),
                moves: g.moves().ok()?,
            })
        })
        .collect();
    let dir = tempfile::Builder::new()
        .prefix("eboardd-gapd-")
        .tempdir()
        .context("cannot create a temporary directory")?;
    println!(
        "gap_soak_daemon: {} mode, {} boards, seed {}, {} corpus games; state under {}",
        if config.smoke { "smoke" } else { "bench" },
        config.boards,
        config.seed,
        corpus.len(),
        dir.path().display()
    );
    let outcome = soak(&config, &corpus, dir.path().to_path_buf()).await;
    let failed = match &outcome {
        Ok(report) => {
            report.print(&config);
            report.check(&config).err()
        }
        Err(e) => Some(anyhow::anyhow!("{e:#}")),
    };
    match failed {
        None if std::env::var_os("EBOARDD_GAPD_KEEP").is_none() => Ok(()),
        None => {
            println!("gap_soak_daemon: kept {}", dir.keep().display());
            Ok(())
        }
        Some(e) => {
            let kept = dir.keep();
            Err(e.context(format!(
                "the daemon's logs and state are kept in {}",
                kept.display()
            )))
        }
    }
}

struct Report {
    secs: f64,
    by_speed: Vec<(Speed, Figures)>,
    daemon_kills: u64,
    player_errors: Vec<String>,
    complaints: Vec<String>,
    exit: String,
}

impl Report {
    fn total(&self) -> Figures {
        let mut t = Figures::default();
        for (_, f) in &self.by_speed {
            t.add(f);
        }
        t
    }

    fn print(&self, config: &Config) {
        println!();
        println!(
            "== gap soak through the daemon: {} boards, {:.0} s, seed {}, {} daemon kills, the arbiter {} ==",
            config.boards,
            self.secs,
            config.seed,
            self.daemon_kills,
            if config.step_in {
                "also steps in on a gap no legal sequence explains"
            } else {
                "answers only when asked"
            }
        );
        let total = self.total();
        for (name, f) in self
            .by_speed
            .iter()
            .map(|(s, f)| (s.name(), f))
            .chain([("total", &total)])
        {
            println!(
                "{name:>6}: games {} ({} exact, {} ended by the Laws, {} WRONG), plies {} ({:.2} s a ply), unplugs {}, kills {}, gap plies {}: recovered {}, by the arbiter {}; asked {} (of which unasked {}, refused {}); LOST {}; FALSE ACCUSATIONS {}",
                f.games,
                f.exact,
                f.ended_by_law,
                f.wrong,
                f.plies,
                f.ply_ms_total as f64 / 1000.0 / f.plies.max(1) as f64,
                f.unplugs,
                f.kills,
                f.gap_plies,
                f.recovered,
                f.by_arbiter,
                f.asked,
                f.stepped_in,
                f.refused,
                f.lost,
                f.false_accusations,
            );
            println!(
                "        longest stall {} ms ({}); in play with no gap open {} ms ({}); plies with no MovePlayed {}",
                f.stall.ms, f.stall.what, f.stall_play.ms, f.stall_play.what, f.unsignalled
            );
        }
        for m in &total.mistakes {
            println!("  {m}");
        }
        for e in &self.player_errors {
            println!("  player error: {e}");
        }
        println!("eboardd exit: {}", self.exit);
        if !self.complaints.is_empty() {
            println!("eboardd WARN/ERROR lines: {}", self.complaints.len());
            for c in self.complaints.iter().take(12) {
                println!("  {c}");
            }
        }
    }

    fn check(&self, config: &Config) -> anyhow::Result<()> {
        let t = self.total();
        let mut wrong = Vec::new();
        if t.lost > 0 {
            wrong.push(format!("{} plies lost", t.lost));
        }
        if t.wrong > 0 {
            wrong.push(format!("{} games recorded with a ply not played", t.wrong));
        }
        if t.false_accusations > 0 {
            wrong.push(format!("{} false accusations", t.false_accusations));
        }
        if !self.player_errors.is_empty() {
            wrong.push(format!("{} players failed", self.player_errors.len()));
        }
        if t.plies == 0 {
            wrong.push("no ply was played".into());
        }
        if config.smoke && (t.unplugs == 0 || t.kills == 0) {
            wrong.push(format!(
                "the smoke run had {} unplugs and {} kills (at least one of each wanted)",
                t.unplugs, t.kills
            ));
        }
        anyhow::ensure!(wrong.is_empty(), "{}", wrong.join(", "));
        Ok(())
    }
}

async fn soak(config: &Config, corpus: &[Game], dir: PathBuf) -> anyhow::Result<Report> {
    anyhow::ensure!(corpus.len() >= 3, "too few corpus games");
    let news = Arc::new(Notify::new());
    let (_, first_clock) = pace(Speed::Blitz);
    // Boards 2, 5, ... stand the other way round, as some do in a real hall.
    let mut hall =
        hall::Hall::start(&dir, config.boards, first_clock, |i| i % 3 == 2, news).await?;
    let start = Instant::now();
    let stop_at = start + Duration::from_secs(config.secs);
    let shared = Arc::new(Shared::new(config.boards));
    // The smoke run's games: the shortest of the corpus, one at blitz pace, two at bullet.
    let mut shortest: Vec<&Game> = corpus.iter().collect();
    shortest.sort_by_key(|g| g.moves.len());
    let watchers_stop = Arc::new(Notify::new());
    let mut watchers = Vec::new();
    let mut players = Vec::new();
    for i in 0..config.boards {
        let speed = Config::speed(i);
        let (pace, clock) = pace(speed);
        watchers.push(tokio::spawn(arbiter::watch(
            hall.control.clone(),
            shared.clone(),
            i,
            Duration::from_millis(pace.arbiter_after_ms),
            config.step_in,
            watchers_stop.clone(),
        )));
        let games: Vec<Game> = if config.smoke {
            match speed {
                Speed::Blitz => vec![shortest[0].clone()],
                Speed::Bullet => vec![shortest[1].clone(), shortest[2].clone()],
                Speed::Fast => vec![shortest[3].clone()],
            }
        } else {
            (0..200)
                .map(|n| corpus[(i * 7 + n) % corpus.len()].clone())
                .collect()
        };
        let plan = Plan {
            index: i,
            speed,
            pace,
            clock,
            seed: config.seed.wrapping_mul(1000) + i as u64,
            games,
            stop_at,
            forced_unplugs: if config.smoke { vec![6] } else { Vec::new() },
        };
        players.push(tokio::spawn(player::play(
            plan,
            hall.sims[i].clone(),
            hall.log.clone(),
            hall.control.clone(),
            shared.clone(),
        )));
    }
    let mut conductor = Conductor {
        daemon: &mut hall.daemon,
        binary: PathBuf::from(env!("CARGO_BIN_EXE_eboardd")),
        dir: dir.clone(),
        ports: hall.sims.iter().map(|s| s.path()).collect(),
        kills: 0,
        old_logs: Vec::new(),
    };
    let schedule = Schedule {
        every_ms: if config.smoke {
            (8_000, 8_000)
        } else {
            (30_000, 60_000)
        },
        down_ms: (1_000, 1_600),
        most: if config.smoke { 1 } else { u64::MAX },
        seed: config.seed,
    };
    let players_done = async {
        let mut outcomes = Vec::new();
        for p in players {
            outcomes.push(p.await);
        }
        shared.lock().finished = true;
        outcomes
    };
    let (conducted, outcomes) = tokio::join!(
        conductor.run(schedule, &hall.bus, &hall.control, shared.clone(), stop_at),
        players_done
    );
    let secs = start.elapsed().as_secs_f64();
    watchers_stop.notify_waiters();
    for w in watchers {
        let _ = w.await;
    }
    let mut player_errors = Vec::new();
    if let Err(e) = conducted {
        player_errors.push(format!("the conductor: {e:#}"));
    }
    let mut by_speed = vec![
        (Speed::Blitz, Figures::default()),
        (Speed::Bullet, Figures::default()),
        (Speed::Fast, Figures::default()),
    ];
    {
        let signals = hall.log.lock();
        for (i, outcome) in outcomes.into_iter().enumerate() {
            let speed = Config::speed(i);
            let slot = &mut by_speed
                .iter_mut()
                .find(|(s, _)| *s == speed)
                .expect("both speeds")
                .1;
            match outcome {
                Ok(o) => {
                    slot.add(&o.figures);
                    player_errors.extend(o.error);
                }
                Err(e) => player_errors.push(format!("board {i}: player task failed: {e}")),
            }
            slot.false_accusations += signals.boards.get(i).map_or(0, |b| b.accusations);
        }
    }
    by_speed.retain(|(_, f)| f.games > 0 || f.false_accusations > 0);
    let daemon_kills = conductor.kills;
    let old_logs = conductor.old_logs;
    let exit = match hall.stop().await {
        Ok((status, took)) => format!("{status} in {} ms after SIGTERM", took.as_millis()),
        Err(e) => format!("{e:#}"),
    };
    Ok(Report {
        secs,
        by_speed,
        daemon_kills,
        player_errors,
        complaints: conductor::complaints(&old_logs, &hall.daemon),
        exit,
    })
}
