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
//! - every move played against the `MovePlayed` the D-Bus client got and the `event` the MQTT
//!   subscriber got (board, game, ply, uci): lost, wrong and extra moves; `seq` gaps and
//!   repeats.
//!
//! ```text
//! cargo bench --bench relay_load                          # 200 boards, 60 s
//! RELAY_BENCH_BOARDS=50 RELAY_BENCH_SECS=30 cargo bench --bench relay_load
//! cargo bench --bench relay_load -- --test                # smoke run: 2 boards, 3 s
//! ```
//!
//! Without `--bench` on the command line (as under `cargo test --all-targets`), or with
//! `--test`, it does the smoke run. It prints figures and never fails on them. It does fail
//! (exit 1, each move named) when a part does not start, on any move lost, wrong or extra on
//! D-Bus or on MQTT, on a `seq` gap, and on a smoke run in which no move was played: the relay
//! is subscribed before the first move (its first `state` of every board has come, and it
//! subscribes before it reads the boards), so every move played must come out of it.

mod mqtt;
#[allow(dead_code)] // the relay's benchmark makes no D-Bus calls of its own
#[path = "../daemon_load/parts.rs"]
mod parts;

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use tokio::sync::Notify;

use eboard_sim::{Pace, PgnGame};

use parts::{client, driver, hall, harness, procs};

use driver::{Expected, Style};
use hall::Hall;
use harness::{env_num, percentile, wait_until};
use procs::{clock_ticks_per_second, cpu_ticks, status_value};

struct Config {
    boards: usize,
    secs: u64,
    style: Style,
    smoke: bool,
}

fn config() -> anyhow::Result<Config> {
    if harness::smoke_run() {
        return Ok(Config {
            boards: 2,
            secs: 3,
            style: Style::smoke(),
            smoke: true,
        });
    }
    let boards = env_num("RELAY_BENCH_BOARDS", 200)? as usize;
    anyhow::ensure!((1..=999).contains(&boards), "RELAY_BENCH_BOARDS: 1..=999");
    Ok(Config {
        boards,
        secs: env_num("RELAY_BENCH_SECS", 60)?,
        style: Style::bench(Pace::human()),
        smoke: false,
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
    // One piece of news for both listeners: a wait may be on either, or on both.
    let news = Arc::new(Notify::new());
    let broker = mqtt::Broker::start(dir.path()).await?;
    let mut hall = Hall::start(
        dir.path(),
        boards,
        config.style.clock,
        |_| false,
        news.clone(),
    )
    .await?;
    let got = mqtt::Shared::new(news.clone());
    let mut subscriber =
        mqtt::Subscriber::start(broker.port, "bench/#".to_owned(), got.clone()).await?;

    // The relay, once every board is there: its start-up (one state and PGN per board) is
    // measured apart from the play. It subscribes to the bus before it reads the boards, so
    // once every board's first state is out, no move made after can pass it by.
    let relay_log = dir.path().join("relay.log");
    let mut relay_cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_eboardctl"));
    relay_cmd
        .arg("--bus")
        .arg(&hall.bus.address)
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
    procs::die_with_parent(&mut relay_cmd);
    let mut relay = relay_cmd.spawn().context("cannot start eboardctl relay")?;
    let relay_pid = relay.id().context("relay exited")? as i32;
    let started = Instant::now();
    let all_states = wait_until(&news, Duration::from_secs(60), || {
        got.lock().states.len() >= boards
    })
    .await;
    anyhow::ensure!(
        all_states,
        "the relay published {} of {boards} states in 60 s; log: {}",
        got.lock().states.len(),
        std::fs::read_to_string(&relay_log).unwrap_or_default()
    );
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
    let players = hall.play(&games, config.style, stop_at, &expected);
    tokio::time::sleep_until(stop_at.into()).await;
    let play_secs = start.elapsed().as_secs_f64();
    let (relay1, broker1) = (
        cpu_ticks(relay_pid)?,
        cpu_ticks(broker.pid().context("mosquitto exited")?)?,
    );
    let results = hall::results(players).await;
    let expected = hall::played(&expected);
    // Until every move played is on D-Bus and on MQTT (or the drain's limit).
    hall::drain(&news, || {
        let on_bus = {
            let received = hall.log.lock();
            hall::complete(&expected, |b| received.boards.get(b).map(|r| &r.moves))
        };
        let got = got.lock();
        on_bus && hall::complete(&expected, |b| mqtt_moves(&got, b))
    })
    .await;
    let relay_hwm = status_value(relay_pid, "VmHWM").unwrap_or(0);
    let relay_rss = status_value(relay_pid, "VmRSS").unwrap_or(0);

    let relay_exit =
        procs::spawn::terminate(&mut relay, "eboardctl relay", Duration::from_secs(10)).await;
    subscriber.stop();
    let _ = hall.stop().await;

    // Figures.
    let got = got.lock();
    let received = hall.log.lock();
    let on_bus = hall::tally("D-Bus", &expected, boards, |b| {
        received.boards.get(b).map(|r| &r.moves)
    });
    let on_mqtt = hall::tally("MQTT", &expected, boards, |b| mqtt_moves(&got, b));
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
    let mut noted_before = 0usize;
    for (i, board) in received.boards.iter().enumerate() {
        let seen = mqtt_moves(&got, i);
        for (key, arrivals) in &board.moves {
            let events = seen.and_then(|m| m.get(key)).map_or(&[][..], Vec::as_slice);
            for (uci, at) in arrivals {
                if !in_play(at) {
                    continue;
                }
                dbus_moves += 1;
                // The first MQTT event for that game, ply and move after the D-Bus signal.
                match events
                    .iter()
                    .filter(|(u, m)| u == uci && m >= at)
                    .map(|(_, m)| *m)
                    .min()
                {
                    Some(m) => delays_us.push(m.duration_since(*at).as_micros() as u64),
                    // The MQTT copy was noted before the D-Bus client's thread noted the
                    // signal: two threads' timestamps, not a loss (the tally counts those).
                    None if events.iter().any(|(u, _)| u == uci) => noted_before += 1,
                    None => {}
                }
            }
        }
    }
    delays_us.sort_unstable();
    println!();
    println!("== {boards} boards through one relay, {play_secs:.0} s of play ==");
    println!(
        "relay start-up: {} states + PGNs published in {:.2} s, {:.2} s CPU",
        boards,
        startup.as_secs_f64(),
        relay_startup_cpu
    );
    println!(
        "moves played {}; on D-Bus lost {} wrong {} extra {} (provisional replaced {}); on MQTT lost {} wrong {} extra {}; seq gaps {}; QoS 1 repeats {}",
        expected.len(),
        on_bus.lost,
        on_bus.wrong,
        on_bus.extra,
        on_bus.provisional,
        on_mqtt.lost,
        on_mqtt.wrong,
        on_mqtt.extra,
        got.seq_gaps,
        got.repeats
    );
    println!(
        "MovePlayed on D-Bus during the play {dbus_moves}; its MQTT event noted before the D-Bus client noted the signal {noted_before}"
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
        Ok(status) => println!("relay SIGTERM -> {status}"),
        Err(e) => println!("relay did not stop cleanly: {e:#}"),
    }
    let player_errors: Vec<&String> = results.iter().filter_map(|r| r.error.as_ref()).collect();
    for e in player_errors.iter().take(10) {
        println!("player error: {e}");
    }

    anyhow::ensure!(
        !config.smoke || !expected.is_empty(),
        "{boards} boards: no move was played, so nothing was checked"
    );
    let mut mistakes = on_bus.mistakes;
    mistakes.extend(on_mqtt.mistakes);
    if got.seq_gaps > 0 {
        mistakes.push(format!("MQTT: {} seq gaps", got.seq_gaps));
    }
    anyhow::ensure!(
        mistakes.is_empty(),
        "{boards} boards: {} moves played, {} mistakes:\n  {}",
        expected.len(),
        mistakes.len(),
        mistakes.join("\n  ")
    );
    Ok(())
}

/// The `MovePlayed` events the subscriber got from board `i`.
fn mqtt_moves(got: &mqtt::Got, i: usize) -> Option<&client::Moves> {
    got.boards.get(&format!("b{i:03}")).map(|b| &b.moves)
}
