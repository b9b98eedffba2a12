//! End-to-end load benchmark of the `eboardd` binary with real parts: every board a simulated
//! DGT board + clock behind its own pty, the daemon built from this crate, a private
//! `dbus-daemon`, and one zbus client subscribed to every signal of the bridge.
//!
//! For each board count it measures
//! - the latency from the sensor update that completes a move on the pty to the matching
//!   `MovePlayed` (board, game, ply, uci) at the client: p50 / p90 / p99 / max;
//! - the daemon's CPU (utime + stime from `/proc/<pid>/stat`) over the playing time, its
//!   busiest 5-second window, and its peak RSS (`VmHWM`), plus the bus daemon's CPU;
//! - lost, wrong and extra moves: every move played against the `MovePlayed` received.
//!
//! ```text
//! cargo bench --bench daemon_load                       # 50 and 200 boards, 90 s each
//! EBOARDD_BENCH_BOARDS=200 EBOARDD_BENCH_SECS=120 cargo bench --bench daemon_load
//! cargo bench --bench daemon_load -- --test             # a few seconds' smoke run
//! ```
//!
//! Settings (environment): `EBOARDD_BENCH_BOARDS` (comma-separated board counts, default
//! `50,200`), `EBOARDD_BENCH_SECS` (playing time per configuration, default 90),
//! `EBOARDD_BENCH_THINK_MS` (thinking time per move, `lo-hi` ms, default `1000-8000`),
//! `EBOARDD_BENCH_HAND_MS` and `EBOARDD_BENCH_PRESS_MS` (each hand movement, default
//! `150-450`, and the press after the move, default `200-600`: `0-200`, `50-150` and `50-150`
//! make a blitz hall, about a move a second per board), `EBOARDD_BENCH_DAEMON` (the daemon
//! binary to run instead of the one built with the bench: another build, for a side-by-side
//! comparison), `EBOARDD_BENCH_NOISE` (`noisy`, the default, or `clean`: the minimal lift and
//! place, without the noisy hands' slides, adjustments and hesitation),
//! `EBOARDD_BENCH_DIR` (where the daemon's state directory is made, default the system's
//! temporary directory; a tmpfs such as `/dev/shm` takes the disk's sync latency out),
//! `EBOARDD_BENCH_ROUNDS` (`on`, `off` or `both`: the boards get `Round` tags from a
//! configuration file, `1.<n>` so that every move also writes the round folder
//! `round-1/game-<n>.pgn` + `games.pgn`, or plain `1`; `both` runs each board count with
//! round folders off, then on, for the comparison; unset: `--port` boards, no tags).
//! Without `--bench` on the command line (as under `cargo test --all-targets`), or with
//! `--test`, it does a smoke run of 2 boards for 3 s. It never fails on a figure: the numbers
//! are printed, not asserted. It does fail (exit 1, each move named) on any lost, wrong or
//! extra move, a board whose final `Moves` property disagrees with its last game, or a smoke
//! run in which no move was played: those are not figures but the daemon losing the game.

mod client;
mod driver;
mod hall;
mod harness;
mod procs;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context as _;

use tokio::sync::Notify;

use eboard_sim::{Pace, PgnGame};

use driver::{Expected, Style};
use hall::Hall;
use harness::percentile;
use procs::{clock_ticks_per_second, cpu_ticks, status_value, thread_cpu_ticks};

/// The daemon's threads whose CPU is printed apart: the name the thread has, and what it
/// is called in the figures.
const THREADS: [(&str, &str); 3] = [
    ("tokio-rt-worker", "the runtime's workers"),
    ("journal-writer", "the journal writer"),
    ("pgn-writer", "the PGN writer"),
];

/// Window of the busiest-CPU figure.
const CPU_WINDOW: Duration = Duration::from_secs(5);

struct Config {
    boards: Vec<usize>,
    /// Round folders per run (`None`: `--port` boards without tags).
    rounds: Vec<Option<bool>>,
    secs: u64,
    style: Style,
    smoke: bool,
}

impl Config {
    fn from_env_and_args() -> anyhow::Result<Config> {
        if harness::smoke_run() {
            return Ok(Config {
                boards: vec![2],
                rounds: vec![None],
                secs: 3,
                style: Style::smoke(),
                smoke: true,
            });
        }
        let boards = match std::env::var("EBOARDD_BENCH_BOARDS") {
            Ok(v) => v
                .split(',')
                .map(|n| n.trim().parse::<usize>())
                .collect::<Result<Vec<_>, _>>()
                .with_context(|| format!("EBOARDD_BENCH_BOARDS={v:?}: want e.g. 50,200"))?,
            Err(_) => vec![50, 200],
        };
        anyhow::ensure!(
            boards.iter().all(|&n| (1..=999).contains(&n)),
            "board counts must be 1..=999"
        );
        let secs = harness::env_num("EBOARDD_BENCH_SECS", 90)?;
        let mut pace = Pace::human();
        for (name, range) in [
            ("EBOARDD_BENCH_THINK_MS", &mut pace.think_ms),
            ("EBOARDD_BENCH_HAND_MS", &mut pace.hand_ms),
            ("EBOARDD_BENCH_PRESS_MS", &mut pace.press_ms),
        ] {
            if let Ok(v) = std::env::var(name) {
                *range = v
                    .split_once('-')
                    .and_then(|(a, b)| Some((a.trim().parse().ok()?, b.trim().parse().ok()?)))
                    .with_context(|| format!("{name}={v:?}: want lo-hi"))?;
            }
        }
        let rounds = match std::env::var("EBOARDD_BENCH_ROUNDS").as_deref() {
            Err(_) => vec![None],
            Ok("on") => vec![Some(true)],
            Ok("off") => vec![Some(false)],
            Ok("both") => vec![Some(false), Some(true)],
            Ok(v) => anyhow::bail!("EBOARDD_BENCH_ROUNDS={v:?}: want on, off or both"),
        };
        let mut style = Style::bench(pace);
        match std::env::var("EBOARDD_BENCH_NOISE").as_deref() {
            Err(_) | Ok("noisy") => {}
            Ok("clean") => style.noise = eboard_sim::Noise::Clean,
            Ok(v) => anyhow::bail!("EBOARDD_BENCH_NOISE={v:?}: want noisy or clean"),
        }
        Ok(Config {
            boards,
            rounds,
            secs,
            style,
            smoke: false,
        })
    }
}

fn main() {
    harness::main("daemon_load", Config::from_env_and_args, run);
}

async fn run(config: Config) -> anyhow::Result<()> {
    let games = Arc::new(harness::corpus_games()?);
    println!(
        "daemon_load: {} corpus games; {} mode; {} s per configuration; think {:?} ms, hand {:?} ms, press {:?} ms; {:?} handling",
        games.len(),
        if config.smoke { "smoke" } else { "bench" },
        config.secs,
        config.style.pace.think_ms,
        config.style.pace.hand_ms,
        config.style.pace.press_ms,
        config.style.noise,
    );
    let binary = harness::binary_under_test("EBOARDD_BENCH_DAEMON", env!("CARGO_BIN_EXE_eboardd"));
    println!("daemon_load: daemon under test {}", binary.display());
    for &boards in &config.boards {
        for &rounds in &config.rounds {
            if let Some(on) = rounds {
                println!(
                    "daemon_load: round folders {}",
                    if on { "on" } else { "off" }
                );
            }
            let report = run_one(boards, rounds, &config, games.clone()).await?;
            report.print();
            report.check(config.smoke)?;
        }
    }
    Ok(())
}

/// Figures of one configuration.
struct Report {
    boards: usize,
    secs: f64,
    moves_played: usize,
    /// From just before the final sensor update was asked of the simulator (upper bound).
    latencies_us: Vec<u64>,
    /// From the simulator's confirmation that it queued the update (lower bound).
    latencies_after_us: Vec<u64>,
    /// The slowest moves: (latency µs, seconds into the play, board, game, ply).
    slowest: Vec<(u64, f64, usize, u32, u32)>,
    lost: usize,
    wrong: usize,
    extra: usize,
    /// Each lost, wrong or extra move and each `Moves` mismatch, named.
    mistakes: Vec<String>,
    provisional: usize,
    retractions: u32,
    before_reach: usize,
    moves_property_mismatch: usize,
    player_errors: Vec<String>,
    daemon_cpu_pct: f64,
    daemon_peak_window_pct: f64,
    /// CPU of the daemon's threads over the play, by name ([`THREADS`]): the runtime's workers
    /// (the board tasks, the bus), the journal writer, the PGN writer (live files, finished
    /// games, round folders).
    thread_cpu_pct: Vec<f64>,
    daemon_startup_cpu_s: f64,
    bus_cpu_pct: f64,
    vm_hwm_kib: u64,
    vm_rss_kib: u64,
    threads: u64,
    properties_changed: u64,
    /// CPU of this process (the simulated boards and the client) over the play.
    own_cpu_pct: f64,
    /// `/proc/loadavg` before and after the play: the machine may be shared.
    load_before: String,
    load_after: String,
    /// Bytes in the daemon's state directory (journals, PGN files) at the end.
    state_bytes: u64,
    shutdown: Option<Duration>,
    exit: String,
    complaints: Vec<String>,
}

impl Report {
    /// Fails naming every move lost, wrong or extra (and each `Moves` property that disagrees),
    /// and a smoke run that played nothing.
    fn check(&self, smoke: bool) -> anyhow::Result<()> {
        anyhow::ensure!(
            !smoke || self.moves_played > 0,
            "{} boards: no move was played, so nothing was checked",
            self.boards
        );
        if self.mistakes.is_empty() {
            return Ok(());
        }
        anyhow::bail!(
            "{} boards: {} lost, {} wrong, {} extra moves, {} Moves property mismatches:\n  {}",
            self.boards,
            self.lost,
            self.wrong,
            self.extra,
            self.moves_property_mismatch,
            self.mistakes.join("\n  ")
        )
    }

    fn percentile(&self, p: f64) -> f64 {
        percentile(&self.latencies_us, p)
    }

    fn print(&self) {
        let n = self.latencies_us.len();
        let mean = if n == 0 {
            f64::NAN
        } else {
            self.latencies_us.iter().sum::<u64>() as f64 / n as f64 / 1000.0
        };
        println!();
        println!("== {} boards, {:.0} s of play ==", self.boards, self.secs);
        println!(
            "moves played {}  | MovePlayed matched {}  lost {}  wrong {}  extra {}  | provisional MovePlayed replaced {}  MoveRetracted {}  | final Moves property mismatches {}",
            self.moves_played,
            n,
            self.lost,
            self.wrong,
            self.extra,
            self.provisional,
            self.retractions,
            self.moves_property_mismatch
        );
        println!(
            "latency last sensor update -> MovePlayed at client (ms): p50 {:.2}  p90 {:.2}  p99 {:.2}  max {:.2}  mean {:.2}",
            self.percentile(50.0),
            self.percentile(90.0),
            self.percentile(99.0),
            self.percentile(100.0),
            mean
        );
        println!(
            "  (from the simulator's confirmation instead: p50 {:.2}  p99 {:.2}  max {:.2})",
            percentile(&self.latencies_after_us, 50.0),
            percentile(&self.latencies_after_us, 99.0),
            percentile(&self.latencies_after_us, 100.0),
        );
        let slow: Vec<String> = self
            .slowest
            .iter()
            .map(|(us, t, b, g, p)| {
                format!(
                    "{:.1} ms @{t:.1}s b{b:03} g{g} ply {p}",
                    *us as f64 / 1000.0
                )
            })
            .collect();
        println!("  slowest: {}", slow.join("; "));
        if self.before_reach > 0 {
            println!(
                "moves published before their final sensor update: {}",
                self.before_reach
            );
        }
        println!(
            "eboardd CPU over the play: {:.2}% of one core (busiest {} s: {:.2}%); start-up CPU {:.2} s",
            self.daemon_cpu_pct,
            CPU_WINDOW.as_secs(),
            self.daemon_peak_window_pct,
            self.daemon_startup_cpu_s
        );
        let threads: Vec<String> = THREADS
            .iter()
            .zip(&self.thread_cpu_pct)
            .map(|((_, what), pct)| format!("{what} {pct:.2}%"))
            .collect();
        println!("  of which {}", threads.join(", "));
        println!(
            "eboardd memory: peak RSS (VmHWM) {:.1} MiB, RSS at end {:.1} MiB, {} threads",
            self.vm_hwm_kib as f64 / 1024.0,
            self.vm_rss_kib as f64 / 1024.0,
            self.threads
        );
        println!(
            "dbus-daemon CPU over the play: {:.2}%; PropertiesChanged received {} ({:.1}/s)",
            self.bus_cpu_pct,
            self.properties_changed,
            self.properties_changed as f64 / self.secs
        );
        println!(
            "benchmark process (simulators + client) CPU: {:.2}%; load average before {} / after {}",
            self.own_cpu_pct, self.load_before, self.load_after
        );
        println!(
            "state directory at the end: {:.1} MiB",
            self.state_bytes as f64 / (1024.0 * 1024.0)
        );
        match self.shutdown {
            Some(d) => println!("SIGTERM -> exit {} in {} ms", self.exit, d.as_millis()),
            None => println!("shutdown: {}", self.exit),
        }
        if !self.player_errors.is_empty() {
            println!("player errors ({}):", self.player_errors.len());
            for e in self.player_errors.iter().take(10) {
                println!("  {e}");
            }
        }
        if !self.complaints.is_empty() {
            println!("eboardd WARN/ERROR lines: {}", self.complaints.len());
            for c in self.complaints.iter().take(10) {
                println!("  {c}");
            }
        }
    }
}

/// Total size of the files under `dir`.
fn tree_size(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => tree_size(&e.path()),
            Ok(_) => e.metadata().map_or(0, |m| m.len()),
            Err(_) => 0,
        })
        .sum()
}

/// The 1-, 5- and 15-minute load averages.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

async fn run_one(
    boards: usize,
    rounds: Option<bool>,
    config: &Config,
    games: Arc<Vec<PgnGame>>,
) -> anyhow::Result<Report> {
    let mut builder = tempfile::Builder::new();
    builder.prefix("eboardd-load-");
    let dir = match std::env::var_os("EBOARDD_BENCH_DIR") {
        Some(parent) => builder.tempdir_in(&parent).with_context(|| {
            format!(
                "cannot create a directory in EBOARDD_BENCH_DIR={}",
                Path::new(&parent).display()
            )
        })?,
        None => builder
            .tempdir()
            .context("cannot create a temporary directory")?,
    };
    println!(
        "daemon_load: {boards} boards, daemon state under {}, daemon pid follows",
        dir.path().display()
    );
    // Some boards stand the other way round, as they do in a real hall.
    let news = Arc::new(Notify::new());
    let reversed = |i| i % 5 == 4;
    let clock = config.style.clock;
    let mut hall = match rounds {
        None => Hall::start(dir.path(), boards, clock, reversed, news.clone()).await?,
        Some(_) => {
            Hall::start_with(dir.path(), boards, clock, reversed, news.clone(), rounds).await?
        }
    };
    let pid = hall.daemon.pid()?;
    println!("daemon_load: eboardd pid {pid}");
    let bus_pid = hall.bus.pid().context("dbus-daemon has exited")?;
    let tck = clock_ticks_per_second() as f64;
    let startup_cpu = cpu_ticks(pid)? as f64 / tck;

    // Play.
    let start = Instant::now();
    let stop_at = start + Duration::from_secs(config.secs);
    let cpu0 = cpu_ticks(pid)?;
    let threads0: Vec<u64> = THREADS
        .iter()
        .map(|(name, _)| thread_cpu_ticks(pid, name))
        .collect();
    let bus0 = cpu_ticks(bus_pid)?;
    let own_pid = std::process::id() as i32;
    let own0 = cpu_ticks(own_pid)?;
    let load_before = load_average();
    let expected: Arc<Mutex<Vec<Expected>>> = Arc::default();
    let players = hall.play(&games, config.style, stop_at, &expected);
    // The busiest window, sampled while the boards play.
    let mut peak_window = 0.0f64;
    let mut last = (Instant::now(), cpu0);
    while Instant::now() + CPU_WINDOW <= stop_at {
        tokio::time::sleep(CPU_WINDOW).await;
        let now = (Instant::now(), cpu_ticks(pid)?);
        let pct = (now.1 - last.1) as f64 / tck / (now.0 - last.0).as_secs_f64() * 100.0;
        peak_window = peak_window.max(pct);
        last = now;
    }
    tokio::time::sleep_until(stop_at.into()).await;
    let play_secs = start.elapsed().as_secs_f64();
    let cpu1 = cpu_ticks(pid)?;
    let threads1: Vec<u64> = THREADS
        .iter()
        .map(|(name, _)| thread_cpu_ticks(pid, name))
        .collect();
    let bus1 = cpu_ticks(bus_pid)?;
    let own1 = cpu_ticks(own_pid)?;
    let load_after = load_average();
    let results = hall::results(players).await;
    let expected = hall::played(&expected);
    hall::drain(&news, || {
        let received = hall.log.lock();
        hall::complete(&expected, |b| received.boards.get(b).map(|r| &r.moves))
    })
    .await;
    let vm_hwm = status_value(pid, "VmHWM").unwrap_or(0);
    let vm_rss = status_value(pid, "VmRSS").unwrap_or(0);
    let threads = status_value(pid, "Threads").unwrap_or(0);

    // The final Moves property of every board against the plies of its last game.
    let mut mismatch = 0;
    let mut mistakes = Vec::new();
    for (i, r) in results.iter().enumerate() {
        let path = format!("{}{i:03}", client::BOARD_PREFIX);
        let props = zbus::fdo::PropertiesProxy::builder(&hall.control)
            .destination("org.eboardd.Bridge1")
            .path(path)
            .build()
            .await?;
        let iface = zbus::names::InterfaceName::try_from("org.eboardd.Bridge1.Board")?;
        let moves = props.get(iface, "Moves").await?;
        let moves: Vec<String> = moves.try_into().context("Moves is not `as`")?;
        if moves.len() != r.plies_in_last_game {
            mismatch += 1;
            mistakes.push(format!(
                "board {i}: Moves has {} plies, its last game {}",
                moves.len(),
                r.plies_in_last_game
            ));
        }
    }

    let (shutdown, exit) = match hall.stop().await {
        Ok((status, took)) => (Some(took), status.to_string()),
        Err(e) => (None, format!("{e:#}")),
    };
    let complaints = hall.daemon.complaints();
    let state_bytes = tree_size(&dir.path().join("state"));

    let received = hall.log.lock();
    let tally = hall::tally("D-Bus", &expected, boards, |b| {
        received.boards.get(b).map(|r| &r.moves)
    });
    mistakes.extend(tally.mistakes);
    let mut report = Report {
        boards,
        secs: play_secs,
        moves_played: expected.len(),
        latencies_us: Vec::with_capacity(expected.len()),
        latencies_after_us: Vec::with_capacity(expected.len()),
        slowest: Vec::new(),
        lost: tally.lost,
        wrong: tally.wrong,
        extra: tally.extra,
        mistakes,
        provisional: tally.provisional,
        retractions: received.boards.iter().map(|b| b.retractions).sum(),
        before_reach: 0,
        moves_property_mismatch: mismatch,
        player_errors: results.iter().filter_map(|r| r.error.clone()).collect(),
        daemon_cpu_pct: (cpu1 - cpu0) as f64 / tck / play_secs * 100.0,
        daemon_peak_window_pct: peak_window,
        thread_cpu_pct: threads0
            .iter()
            .zip(&threads1)
            .map(|(t0, t1)| (t1 - t0) as f64 / tck / play_secs * 100.0)
            .collect(),
        daemon_startup_cpu_s: startup_cpu,
        bus_cpu_pct: (bus1 - bus0) as f64 / tck / play_secs * 100.0,
        own_cpu_pct: (own1 - own0) as f64 / tck / play_secs * 100.0,
        load_before,
        load_after,
        state_bytes,
        vm_hwm_kib: vm_hwm,
        vm_rss_kib: vm_rss,
        threads,
        properties_changed: received.boards.iter().map(|b| b.properties_changed).sum(),
        shutdown,
        exit,
        complaints,
    };
    for (e, at) in expected.iter().zip(&tally.arrived) {
        let Some(at) = at else { continue };
        // From the last time the board came to show the move before the signal arrived.
        match e.reached.iter().rev().find(|(asked, _)| asked <= at) {
            Some((asked, done)) => {
                let us = at.duration_since(*asked).as_micros() as u64;
                report.latencies_us.push(us);
                let into = asked.saturating_duration_since(start).as_secs_f64();
                report.slowest.push((us, into, e.board, e.game, e.ply));
                report
                    .latencies_after_us
                    .push(at.saturating_duration_since(*done).as_micros() as u64);
            }
            None => report.before_reach += 1,
        }
    }
    drop(received);
    report.latencies_us.sort_unstable();
    report.latencies_after_us.sort_unstable();
    report
        .slowest
        .sort_unstable_by_key(|s| std::cmp::Reverse(s.0));
    report.slowest.truncate(8);
    Ok(report)
}
