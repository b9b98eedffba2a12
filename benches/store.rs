//! Storage benchmark: what the journal costs and how fast a restart is.
//!
//! 1. Journal bytes per ply of a real game (sensor steps and clock presses through the pure
//!    session, the records the daemon journals) at ply 10, 100 and 300: the whole file over
//!    the plies, and what the last ten plies added.
//! 2. Syncs per second of the journal writer with 200 boards at tournament pace (and at
//!    blitz pace and in a burst), with group commit (one `fdatasync` of the commit log per
//!    group) and without (one `fdatasync` per journal), on the file system of the
//!    temporary directory.
//! 3. Restart: 200 boards each with a 150-ply game in their journals; the `eboardd` binary
//!    is started on a private `dbus-daemon` and timed until every board is on the bus with
//!    its 150 moves.
//!
//! `cargo bench --bench store` (about two minutes); under `cargo test` (no `--bench`
//! argument) a short smoke run with small figures. `EBOARDD_BENCH_ONLY=restart` runs part 3
//! alone (three restarts in a row with `--bench`); `EBOARDD_BENCH_DAEMON=<path>` times another
//! build of the daemon.

#[path = "daemon_load/procs.rs"]
#[allow(dead_code)]
mod procs;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use eboard_core::session::{Event, SessionConfig, is_journalled};
use eboard_sim::feed::{Feeder, long_game};
use eboardd::daemon::health::Health;
use eboardd::daemon::journal::{Journal, journal_path};
use eboardd::daemon::writer::{Config, Outcome, Writer};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use zbus::OwnedVariant;

fn main() -> anyhow::Result<()> {
    let full = std::env::args().any(|a| a == "--bench");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    // `EBOARDD_BENCH_ONLY=restart`: the start-up figure alone (parts 1 and 2 take minutes).
    let restart_only = std::env::var("EBOARDD_BENCH_ONLY").is_ok_and(|v| v == "restart");
    if !restart_only {
        bytes_per_ply()?;
        let (boards, seconds) = if full { (200, 15) } else { (20, 2) };
        runtime.block_on(syncs_per_second(boards, seconds))?;
    }
    let (boards, plies) = if full { (200, 150) } else { (10, 30) };
    let runs = if full { 3 } else { 1 };
    for _ in 0..runs {
        runtime.block_on(restart(boards, plies))?;
    }
    Ok(())
}

/// The journalled records of a game of `plies` plies: one batch per input that caused any.
fn game_records(plies: usize, seed: u64) -> Vec<Vec<Event>> {
    let config = SessionConfig {
        name: "board-1".into(),
        tags: vec![
            ("Event".into(), "Storage Open".into()),
            ("White".into(), "Player, White".into()),
            ("Black".into(), "Player, Black".into()),
        ],
        ..SessionConfig::default()
    };
    let mut feeder = Feeder::new(config, seed);
    let mut batches = vec![journalled(feeder.start())];
    for mv in long_game(plies, seed) {
        batches.push(journalled(feeder.play(mv)));
    }
    let played = feeder.session.view().moves.len();
    assert_eq!(played, plies, "the generated game was played in full");
    batches.retain(|b| !b.is_empty());
    batches
}

fn journalled(events: Vec<Event>) -> Vec<Event> {
    events.into_iter().filter(is_journalled).collect()
}

fn bytes_per_ply() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = journal_path(dir.path(), "board_1");
    let (mut journal, _, _) = Journal::open(&path)?;
    let config = SessionConfig {
        name: "board-1".into(),
        ..SessionConfig::default()
    };
    let mut feeder = Feeder::new(config, 7);
    journal.append_all(&journalled(feeder.start()))?;
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let mut at = HashMap::new();
    at.insert(0, size(&path));
    for (i, mv) in long_game(300, 7).into_iter().enumerate() {
        journal.append_all(&journalled(feeder.play(mv)))?;
        at.insert(i + 1, size(&path));
    }
    assert_eq!(feeder.session.view().moves.len(), 300);
    println!("store: journal bytes per ply (one game, sensor steps + clock presses)");
    for ply in [10usize, 100, 300] {
        let whole = at[&ply] as f64 / ply as f64;
        let last_ten = (at[&ply] - at[&(ply - 10)]) as f64 / 10.0;
        println!(
            "store:   ply {ply:>3}: file {:>6} bytes = {whole:>5.0} bytes/ply; last 10 plies {last_ten:>4.0} bytes/ply",
            at[&ply]
        );
    }
    Ok(())
}

async fn syncs_per_second(boards: usize, seconds: u64) -> anyhow::Result<()> {
    let records = game_records(150, 11);
    println!(
        "store: journal syncs with {boards} boards, {seconds} s per run, in {}",
        std::env::temp_dir().display()
    );
    // Tournament pace: a ply per board every 30 s on average (a classical game's 80 plies
    // in 40 minutes of the players' time would be slower still); blitz: every 3 s; a burst:
    // every board about once a second (a round starting, a time scramble on every board).
    for (pace, mean_s) in [("tournament", 30.0), ("blitz", 3.0), ("burst", 1.0)] {
        for group in [false, true] {
            let dir = tempfile::tempdir_in(std::env::temp_dir())?;
            let games = dir.path().join("games");
            std::fs::create_dir_all(&games)?;
            let writer = Writer::start(
                &games,
                Config {
                    group,
                    ..Config::default()
                },
                Health::new(),
            )?;
            let mut tasks = Vec::new();
            let start = Instant::now();
            let end = start + Duration::from_secs(seconds);
            for b in 0..boards {
                let path = journal_path(dir.path(), &format!("b{b:03}"));
                let (journal, _, _) = Journal::open(&path)?;
                let key = writer.register(&format!("b{b:03}"), journal);
                let writer = writer.clone();
                let records = records.clone();
                tasks.push(tokio::spawn(async move {
                    let mut rng = SmallRng::seed_from_u64(b as u64);
                    let mut latencies = Vec::new();
                    // Each board is somewhere in its game already.
                    let mut next = rng.random_range(0..records.len());
                    // The first move comes after a random part of the mean interval.
                    let mut wait = rng.random_range(0.0..mean_s);
                    loop {
                        let at = Instant::now() + Duration::from_secs_f64(wait);
                        if at >= end {
                            break;
                        }
                        tokio::time::sleep_until(at.into()).await;
                        let t = Instant::now();
                        let outcome = writer.append(key, records[next].clone()).await;
                        assert_eq!(outcome, Outcome::Durable);
                        latencies.push(t.elapsed());
                        next = (next + 1) % records.len();
                        // Exponential gaps: moves arrive independently of each other.
                        let u: f64 = rng.random_range(f64::EPSILON..1.0);
                        wait = -u.ln() * mean_s;
                    }
                    latencies
                }));
            }
            let mut latencies = Vec::new();
            for t in tasks {
                latencies.extend(t.await?);
            }
            let elapsed = start.elapsed().as_secs_f64();
            latencies.sort();
            let p = |q: f64| {
                latencies
                    .get(((latencies.len() as f64 - 1.0) * q) as usize)
                    .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
            };
            let stats = writer.stats();
            let syncs = stats.syncs.load(Ordering::Relaxed);
            println!(
                "store:   {pace:>10} pace (a ply per board every {mean_s:>4.0} s), {:<28}: {:>6.1} appends/s, {:>6.1} syncs/s, append→durable p50 {:.2} ms p99 {:.2} ms",
                if group {
                    "group commit (commit log)"
                } else {
                    "no group commit (fdatasync)"
                },
                latencies.len() as f64 / elapsed,
                syncs as f64 / elapsed,
                p(0.5),
                p(0.99),
            );
        }
    }
    Ok(())
}

async fn restart(boards: usize, plies: usize) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    // One game's journal, copied for every board (the content does not matter to the time).
    let records = game_records(plies, 13);
    let template = dir.path().join("template");
    let path = journal_path(&template, "t");
    let (mut journal, _, _) = Journal::open(&path)?;
    for batch in &records {
        journal.append_all(batch)?;
    }
    drop(journal);
    let bytes = std::fs::read(&path)?;
    let mut ports = Vec::new();
    for b in 0..boards {
        let id = format!("b{b:03}");
        let target = journal_path(&dir.path().join("state"), &id);
        std::fs::create_dir_all(target.parent().context("games dir")?)?;
        std::fs::write(&target, &bytes)?;
        // A port that does not exist: the board is served from its journal, unplugged.
        ports.push(PathBuf::from(format!("/nonexistent/eboardd-bench/{id}")));
    }
    // `EBOARDD_BENCH_DAEMON`: another build of the daemon, for a side-by-side comparison.
    let binary = std::env::var_os("EBOARDD_BENCH_DAEMON").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_eboardd")),
        PathBuf::from,
    );
    let bus = procs::Bus::start(dir.path()).await?;
    let conn = zbus::connection::Builder::address(bus.address.as_str())
        .build()
        .await?;
    let start = Instant::now();
    let mut daemon = procs::Daemon::spawn(&binary, &bus, dir.path(), &ports)?;
    let om = zbus::fdo::ObjectManagerProxy::builder(&conn)
        .destination("org.eboardd.Bridge1")
        .path("/org/eboardd/Bridge1")
        .build()
        .await?;
    let dbus = zbus::fdo::DBusProxy::new(&conn).await?;
    let mut named = None;
    let done = loop {
        if let Some(status) = daemon.exited() {
            anyhow::bail!("eboardd exited ({status}); see {}", daemon.log.display());
        }
        anyhow::ensure!(
            start.elapsed() < Duration::from_secs(60),
            "not all boards restored within 60 s"
        );
        if named.is_none() {
            if dbus
                .name_has_owner("org.eboardd.Bridge1".try_into()?)
                .await?
            {
                named = Some(start.elapsed());
            } else {
                tokio::time::sleep(Duration::from_millis(5)).await;
                continue;
            }
        }
        let objects = om.get_managed_objects().await?;
        let full = objects
            .values()
            .filter_map(|ifaces| ifaces.get("org.eboardd.Bridge1.Board"))
            .filter(|props| moves_len(props.get("Moves")) == plies)
            .count();
        if full == boards {
            break start.elapsed();
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    let _ = daemon.terminate().await;
    println!(
        "store: restart of {boards} boards × {plies} plies ({} bytes of journal each): name owned after {:.0} ms, every board on the bus with its moves after {:.0} ms",
        bytes.len(),
        named.unwrap_or_default().as_secs_f64() * 1000.0,
        done.as_secs_f64() * 1000.0
    );
    Ok(())
}

fn moves_len(value: Option<&OwnedVariant>) -> usize {
    value
        .and_then(|v| Vec::<String>::try_from(v.try_clone().ok()?).ok())
        .map_or(0, |m| m.len())
}
