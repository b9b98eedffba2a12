//! The hall relay under load, real parts only: simulated DGT boards on ptys, the `eboardd`
//! binary on a private `dbus-daemon`, one `eboardctl relay` (the binary built with this
//! benchmark) publishing them all to a mosquitto of its own on a loopback port, a D-Bus
//! client and an MQTT subscriber in this process, each on its own thread.
//!
//! It measures
//! - messages per second the relay publishes (by topic kind) and their bytes;
//! - the delay from a `MovePlayed` signal reaching a D-Bus client to the matching `event`
//!   reaching an MQTT subscriber (board, ply, uci): p50 / p90 / p99 / max;
//! - the relay's CPU (utime + stime from `/proc/<pid>/stat`) over the play and its peak RSS
//!   (`VmHWM`); mosquitto's CPU;
//! - moves lost between the bus and the broker, `seq` gaps and repeats.
//!
//! ```text
//! cargo bench --bench relay_load                          # 200 boards, 60 s
//! RELAY_BENCH_BOARDS=50 RELAY_BENCH_SECS=30 cargo bench --bench relay_load
//! cargo bench --bench relay_load -- --test                # smoke run: 2 boards, 3 s
//! ```
//!
//! Without `--bench` on the command line (as under `cargo test --all-targets`), or with
//! `--test`, it does the smoke run. It prints figures and never fails on them; it fails only
//! when a part does not start.

#[allow(dead_code)]
#[path = "../daemon_load/client.rs"]
mod client;
#[allow(dead_code)]
#[path = "../daemon_load/driver.rs"]
mod driver;
#[path = "../daemon_load/harness.rs"]
mod harness;
mod mqtt;
#[allow(dead_code)]
#[path = "../daemon_load/procs.rs"]
mod procs;

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context as _;

use eboardd::sim::{ClockSetup, Noise, Pace, PgnGame};

use client::{Client, Log};
use driver::{Expected, Style};
use harness::percentile;
use procs::{Bus, Daemon, clock_ticks_per_second, cpu_ticks, status_value};

/// Time after the players stop for the last messages to arrive.
const DRAIN: Duration = Duration::from_secs(3);

struct Config {
    boards: usize,
    secs: u64,
    style: Style,
    smoke: bool,
}

fn config() -> anyhow::Result<Config> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let smoke = args.iter().any(|a| a == "--test") || !args.iter().any(|a| a == "--bench");
    let clock = ClockSetup {
        base_ms: 15 * 60_000,
        increment_ms: 10_000,
    };
    if smoke {
        return Ok(Config {
            boards: 2,
            secs: 3,
            style: Style {
                pace: Pace {
                    think_ms: (50, 150),
                    press_ms: (20, 50),
                    hand_ms: (20, 60),
                },
                noise: Noise::Clean,
                clock,
            },
            smoke,
        });
    }
    let num = |name: &str, default: u64| -> anyhow::Result<u64> {
        match std::env::var(name) {
            Ok(v) => v
                .trim()
                .parse()
                .with_context(|| format!("{name}={v:?}: want a number")),
            Err(_) => Ok(default),
        }
    };
    let boards = num("RELAY_BENCH_BOARDS", 200)? as usize;
    anyhow::ensure!((1..=999).contains(&boards), "RELAY_BENCH_BOARDS: 1..=999");
    Ok(Config {
        boards,
        secs: num("RELAY_BENCH_SECS", 60)?,
        style: Style {
            pace: Pace::human(),
            noise: Noise::Noisy,
            clock,
        },
        smoke,
    })
}

fn main() {
    harness::main("relay_load", config, run);
}

async fn run(config: Config) -> anyhow::Result<()> {
    let games: Arc<Vec<PgnGame>> = Arc::new(harness::corpus_games()?);
    let boards = config.boards;
    println!(
        "relay_load: {boards} boards, {} s of play, {} mode",
        config.secs,
        if config.smoke { "smoke" } else { "bench" }
    );
    let dir = tempfile::Builder::new()
        .prefix("eboardd-relay-load-")
        .tempdir()?;
    let broker = mqtt::Broker::start(dir.path()).await?;
    let bus = Bus::start(dir.path()).await?;

    let sims = harness::spawn_boards(dir.path(), boards, config.style.clock, |_| false).await?;
    let ports: Vec<PathBuf> = sims.iter().map(|s| s.path()).collect();
    let log = Log::new(boards);
    let mut dbus_client = Client::start(bus.address.clone(), log.clone()).await?;
    let got = mqtt::Shared::default();
    let mut subscriber =
        mqtt::Subscriber::start(broker.port, "bench/#".to_owned(), got.clone()).await?;

    let eboardd = PathBuf::from(env!("CARGO_BIN_EXE_eboardd"));
    let mut daemon = Daemon::spawn(&eboardd, &bus, dir.path(), &ports)?;
    let control = zbus::connection::Builder::address(bus.address.as_str())
        .build()
        .await?;
    procs::wait_for_name(
        &control,
        "org.eboardd.Bridge1",
        &mut daemon,
        Duration::from_secs(30),
    )
    .await?;
    for (i, sim) in sims.iter().enumerate() {
        sim.wait_for_update_mode(Duration::from_secs(60))
            .await
            .with_context(|| format!("board {i} never got the handshake"))?;
    }

    // The relay, once every board is there: its start-up (one state and PGN per board) is
    // measured apart from the play.
    let relay_log = dir.path().join("relay.log");
    let mut relay_cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_eboardctl"));
    relay_cmd
        .arg("--bus")
        .arg(&bus.address)
        .arg("relay")
        .arg("--mqtt")
        .arg(format!("mqtt://127.0.0.1:{}", broker.port))
        .arg("--rig")
        .arg("bench")
        .arg("--prefix")
        .arg("bench")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&relay_log)?)
        .kill_on_drop(true);
    let mut relay = relay_cmd.spawn().context("cannot start eboardctl relay")?;
    let relay_pid = relay.id().context("relay exited")? as i32;
    let started = Instant::now();
    loop {
        let states = got
            .lock()
            .arrivals
            .iter()
            .filter(|a| a.1 == "state")
            .count();
        if states >= boards {
            break;
        }
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(60),
            "the relay published {states} of {boards} states in 60 s; log: {}",
            std::fs::read_to_string(&relay_log).unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let startup = started.elapsed();
    let tck = clock_ticks_per_second() as f64;
    let relay_startup_cpu = cpu_ticks(relay_pid)? as f64 / tck;

    // Play.
    let start = Instant::now();
    let stop_at = start + Duration::from_secs(config.secs);
    let (relay0, broker0) = (
        cpu_ticks(relay_pid)?,
        cpu_ticks(broker.pid().context("mosquitto exited")?)?,
    );
    let expected: Arc<Mutex<Vec<Expected>>> = Arc::default();
    let players: Vec<_> = sims
        .iter()
        .enumerate()
        .map(|(i, sim)| {
            tokio::spawn(driver::play_board(
                i,
                sim.clone(),
                games.clone(),
                config.style,
                stop_at,
                log.clone(),
                expected.clone(),
            ))
        })
        .collect();
    tokio::time::sleep_until(stop_at.into()).await;
    let play_secs = start.elapsed().as_secs_f64();
    let (relay1, broker1) = (
        cpu_ticks(relay_pid)?,
        cpu_ticks(broker.pid().context("mosquitto exited")?)?,
    );
    for p in players {
        let _ = p.await;
    }
    tokio::time::sleep(DRAIN).await;
    let relay_hwm = status_value(relay_pid, "VmHWM").unwrap_or(0);
    let relay_rss = status_value(relay_pid, "VmRSS").unwrap_or(0);

    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(relay_pid),
        nix::sys::signal::Signal::SIGTERM,
    )?;
    let relay_exit = tokio::time::timeout(Duration::from_secs(10), relay.wait()).await;
    subscriber.stop();
    dbus_client.stop();
    let _ = daemon.terminate().await;
    for sim in &sims {
        sim.shutdown().await;
    }

    // Figures.
    let got = got.lock();
    let received = log.lock();
    let in_play = |at: &Instant| *at >= start && *at <= stop_at;
    let mut by_kind: std::collections::BTreeMap<&str, (u64, u64)> = Default::default();
    for (at, kind, bytes) in &got.arrivals {
        if in_play(at) {
            let e = by_kind.entry(kind).or_default();
            e.0 += 1;
            e.1 += *bytes as u64;
        }
    }
    let total: u64 = by_kind.values().map(|v| v.0).sum();
    let mut delays_us = Vec::new();
    let mut dbus_moves = 0usize;
    let mut unmatched = 0usize;
    for (i, board) in received.boards.iter().enumerate() {
        let id = format!("b{i:03}");
        let seen = got.moves.get(&id).map(Vec::as_slice).unwrap_or(&[]);
        for ((_, ply), arrivals) in &board.moves {
            for (uci, at) in arrivals {
                if !in_play(at) {
                    continue;
                }
                dbus_moves += 1;
                // The first MQTT event for that ply and move after the D-Bus signal.
                match seen
                    .iter()
                    .filter(|m| m.ply == *ply && m.uci == *uci && m.at >= *at)
                    .map(|m| m.at)
                    .min()
                {
                    Some(m) => delays_us.push(m.duration_since(*at).as_micros() as u64),
                    None => unmatched += 1,
                }
            }
        }
    }
    delays_us.sort_unstable();
    let moves_played = expected.lock().map(|e| e.len()).unwrap_or(0);
    println!();
    println!("== {boards} boards through one relay, {play_secs:.0} s of play ==");
    println!(
        "relay start-up: {} states + PGNs published in {:.2} s, {:.2} s CPU",
        boards,
        startup.as_secs_f64(),
        relay_startup_cpu
    );
    println!(
        "moves played {moves_played}; MovePlayed on D-Bus {dbus_moves}; on MQTT without a match {unmatched}; seq gaps {}; QoS 1 repeats {}",
        got.seq_gaps, got.repeats
    );
    println!(
        "messages published {:.1}/s ({} in {play_secs:.0} s):",
        total as f64 / play_secs,
        total
    );
    for (kind, (n, bytes)) in &by_kind {
        println!(
            "  {kind:<6} {:>8.1}/s  {:>8.1} kB/s  ({n} messages, {:.0} bytes each on average)",
            *n as f64 / play_secs,
            *bytes as f64 / play_secs / 1000.0,
            *bytes as f64 / (*n).max(1) as f64
        );
    }
    println!(
        "delay MovePlayed at a D-Bus client -> event at an MQTT subscriber (ms): p50 {:.2}  p90 {:.2}  p99 {:.2}  max {:.2}  ({} moves)",
        percentile(&delays_us, 50.0),
        percentile(&delays_us, 90.0),
        percentile(&delays_us, 99.0),
        percentile(&delays_us, 100.0),
        delays_us.len()
    );
    println!(
        "relay CPU over the play: {:.2}% of one core; peak RSS (VmHWM) {:.1} MiB, RSS at end {:.1} MiB",
        (relay1 - relay0) as f64 / tck / play_secs * 100.0,
        relay_hwm as f64 / 1024.0,
        relay_rss as f64 / 1024.0
    );
    println!(
        "mosquitto CPU over the play: {:.2}% of one core",
        (broker1 - broker0) as f64 / tck / play_secs * 100.0
    );
    match relay_exit {
        Ok(Ok(status)) => println!("relay SIGTERM -> {status}"),
        other => println!("relay did not stop cleanly: {other:?}"),
    }
    Ok(())
}
