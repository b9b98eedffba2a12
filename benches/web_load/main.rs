//! Load benchmark of the web bridge (`eboardctl serve`) with real parts: a private
//! `dbus-daemon`, a stand-in for eboardd that owns `org.eboardd.Bridge1` and publishes N
//! simulated boards exactly as the contract says (ObjectManager, properties, `MovePlayed` and
//! `PropertiesChanged` per move, the clock times once a second per board, as eboardd does),
//! the bridge binary built from this crate, and M Server-Sent-Event clients over HTTP.
//!
//! The stand-in isolates the bridge: eboardd's own cost is `daemon_load`'s business. Moves come
//! from the shared corpus at a human pace (a move every 1–8 s per board).
//!
//! It prints
//! - the bridge's CPU (utime + stime from `/proc/<pid>/stat`) over the measured time, and its
//!   RSS at the end and its peak (`VmHWM`);
//! - the delay from the D-Bus signal (the moment the stand-in has sent `MovePlayed`) to the
//!   SSE event at each client: p50 / p90 / p99 / max over every (move, client);
//! - moves lost: every client must see every move sent while it was connected (after the
//!   play, up to 20 s are given for the last ones to arrive).
//!
//! ```text
//! cargo bench --bench web_load                      # 200 boards, 50 clients, 60 s
//! EBOARDD_BENCH_BOARDS=200 EBOARDD_BENCH_CLIENTS=50 EBOARDD_BENCH_SECS=60 cargo bench --bench web_load
//! cargo bench --bench web_load -- --test            # a few seconds' smoke run
//! ```
//!
//! Without `--bench` on the command line (as under `cargo test --all-targets`), or with
//! `--test`, it does a smoke run of 5 boards and 3 clients for 3 s. It never fails on a figure;
//! it does fail (exit 1) when a client lost a move or was dropped, and on a smoke run in which
//! no move was sent.

#[allow(dead_code)] // web_load uses only part of it
#[path = "../daemon_load/harness.rs"]
mod harness;
#[allow(dead_code)]
#[path = "../daemon_load/procs.rs"]
mod procs;
mod standin;

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

use harness::{env_num, percentile};
use procs::{Bus, clock_ticks_per_second, cpu_ticks, status_value};
use standin::{Emitted, StandIn};

struct Config {
    boards: usize,
    clients: usize,
    secs: u64,
    /// Time between two moves of a board, ms (a range).
    think_ms: (u64, u64),
    smoke: bool,
}

impl Config {
    fn from_env_and_args() -> anyhow::Result<Config> {
        if harness::smoke_run() {
            return Ok(Config {
                boards: 5,
                clients: 3,
                secs: 3,
                think_ms: (200, 800),
                smoke: true,
            });
        }
        let boards = env_num("EBOARDD_BENCH_BOARDS", 200)? as usize;
        let clients = env_num("EBOARDD_BENCH_CLIENTS", 50)? as usize;
        anyhow::ensure!((1..=2000).contains(&boards), "boards must be 1..=2000");
        anyhow::ensure!((1..=1000).contains(&clients), "clients must be 1..=1000");
        Ok(Config {
            boards,
            clients,
            secs: env_num("EBOARDD_BENCH_SECS", 60)?,
            think_ms: (1000, 8000),
            smoke: false,
        })
    }
}

fn main() {
    harness::main("web_load", Config::from_env_and_args, run);
}

/// What one SSE client saw.
#[derive(Default)]
struct Seen {
    /// Delay per MovePlayed, in microseconds.
    delays_us: Vec<u64>,
    /// (board, ply) of every MovePlayed received.
    moves: Vec<(String, u64)>,
    ended_early: bool,
}

async fn run(config: Config) -> anyhow::Result<()> {
    let dir = tempfile::tempdir().context("temp dir")?;
    let bus = Bus::start(dir.path()).await?;
    let emitted: Emitted = Arc::new(Mutex::new(HashMap::new()));
    let standin = StandIn::start(&bus.address, config.boards, emitted.clone()).await?;

    // The bridge under test.
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_eboardctl"));
    cmd.args(["--bus", &bus.address, "serve", "--listen", "127.0.0.1:0"])
        .args(["--max-clients", &(config.clients + 10).to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut bridge = cmd.spawn().context("cannot start eboardctl serve")?;
    let pid = bridge.id().context("bridge pid")? as i32;
    let mut lines = BufReader::new(bridge.stderr.take().context("stderr")?).lines();
    let base = tokio::time::timeout(Duration::from_secs(20), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(rest) = line.split("listening on ").nth(1) {
                return Some(rest.trim().to_owned());
            }
        }
        None
    })
    .await
    .context("the bridge did not say where it listens")?
    .context("the bridge exited before listening")?;
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });

    // Wait for the bridge to show every board.
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let n = http
            .get(format!("{base}/api/boards"))
            .send()
            .await
            .ok()
            .and_then(|r| {
                if r.status().is_success() {
                    Some(r)
                } else {
                    None
                }
            });
        let count = match n {
            Some(r) => r
                .json::<serde_json::Value>()
                .await
                .ok()
                .and_then(|v| v.as_array().map(Vec::len)),
            None => None,
        };
        if count == Some(config.boards) {
            break;
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "the bridge did not show {} boards",
            config.boards
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // The clients, connected before the boards start moving.
    let mut tasks = Vec::new();
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::channel::<()>(config.clients);
    let stop = Arc::new(tokio::sync::Notify::new());
    let received = Arc::new(AtomicUsize::new(0));
    let news = Arc::new(tokio::sync::Notify::new());
    for _ in 0..config.clients {
        let url = format!("{base}/api/events");
        let emitted = emitted.clone();
        let ready = ready_tx.clone();
        let stop = stop.clone();
        let http = http.clone();
        let received = received.clone();
        let news = news.clone();
        tasks.push(tokio::spawn(async move {
            client(http, url, emitted, ready, stop, received, news).await
        }));
    }
    for _ in 0..config.clients {
        ready_rx
            .recv()
            .await
            .context("a client failed to connect")?;
    }

    let ticks = clock_ticks_per_second();
    let cpu0 = cpu_ticks(pid)?;
    let t0 = Instant::now();
    let played = standin
        .play(Duration::from_secs(config.secs), config.think_ms)
        .await?;
    let elapsed = t0.elapsed();
    let cpu1 = cpu_ticks(pid)?;
    // Time for the last events to arrive: until every client has every move, at most 20 s.
    harness::wait_until(&news, Duration::from_secs(20), || {
        received.load(Ordering::Relaxed) >= played * config.clients
    })
    .await;
    stop.notify_waiters();
    let rss = status_value(pid, "VmRSS").unwrap_or(0);
    let hwm = status_value(pid, "VmHWM").unwrap_or(0);
    let mut seen = Vec::new();
    for t in tasks {
        seen.push(t.await.context("client task")?);
    }
    let _ = bridge.start_kill();

    let mut delays: Vec<u64> = seen
        .iter()
        .flat_map(|s| s.delays_us.iter().copied())
        .collect();
    delays.sort_unstable();
    let pct = |p: f64| percentile(&delays, p * 100.0);
    let lost: usize = seen
        .iter()
        .map(|s| played.saturating_sub(s.moves.len()))
        .sum();
    let ended = seen.iter().filter(|s| s.ended_early).count();
    let cpu_pct = (cpu1 - cpu0) as f64 / ticks as f64 / elapsed.as_secs_f64() * 100.0;
    println!(
        "web_load{}: {} boards, {} SSE clients, {:.0} s: {} moves ({:.1}/s) + clock updates",
        if config.smoke { " (smoke run)" } else { "" },
        config.boards,
        config.clients,
        elapsed.as_secs_f64(),
        played,
        played as f64 / elapsed.as_secs_f64()
    );
    println!(
        "  bridge CPU {cpu_pct:.1}% of one core; RSS {:.1} MiB at the end, peak {:.1} MiB",
        rss as f64 / 1024.0,
        hwm as f64 / 1024.0
    );
    println!(
        "  D-Bus MovePlayed -> SSE event: p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms ({} samples)",
        pct(0.50),
        pct(0.90),
        pct(0.99),
        pct(1.0),
        delays.len()
    );
    println!("  moves lost at clients: {lost}; clients dropped: {ended}");
    anyhow::ensure!(
        !config.smoke || played > 0,
        "no move was sent, so nothing was checked"
    );
    anyhow::ensure!(
        lost == 0 && ended == 0,
        "{lost} moves lost at the clients, {ended} of {} clients dropped",
        config.clients
    );
    Ok(())
}

/// One SSE client: reads the stream until told to stop, timing every `MovePlayed`.
async fn client(
    http: reqwest::Client,
    url: String,
    emitted: Emitted,
    ready: tokio::sync::mpsc::Sender<()>,
    stop: Arc<tokio::sync::Notify>,
    received: Arc<AtomicUsize>,
    news: Arc<tokio::sync::Notify>,
) -> Seen {
    let mut seen = Seen::default();
    let Ok(mut res) = http.get(&url).send().await else {
        seen.ended_early = true;
        return seen;
    };
    let _ = ready.send(()).await;
    let stopped = stop.notified();
    tokio::pin!(stopped);
    let mut buf: Vec<u8> = Vec::new();
    loop {
        let chunk = tokio::select! {
            c = res.chunk() => c,
            _ = &mut stopped => return seen,
        };
        let chunk = match chunk {
            Ok(Some(c)) => c,
            _ => {
                seen.ended_early = true;
                return seen;
            }
        };
        let now = Instant::now();
        buf.extend_from_slice(&chunk);
        // Every complete block in the buffer, then one drain (not one per block).
        let mut start = 0;
        while let Some(len) = buf[start..].windows(2).position(|w| w == b"\n\n") {
            let block = &buf[start..start + len];
            start += len + 2;
            // Only moves are timed; the rest is skipped without decoding.
            let Some(at) = block.windows(18).position(|w| w == b"event: MovePlayed\n") else {
                continue;
            };
            let Some(data) = std::str::from_utf8(&block[at..])
                .ok()
                .and_then(|t| t.lines().find_map(|l| l.strip_prefix("data:")))
            else {
                continue;
            };
            let Ok(v) = serde_json::from_str::<serde_json::Value>(data.trim()) else {
                continue;
            };
            let key = (
                v["board"].as_str().unwrap_or_default().to_owned(),
                v["ply"].as_u64().unwrap_or(0),
            );
            if let Some(sent) = emitted.lock().unwrap().get(&key) {
                seen.delays_us
                    .push(now.saturating_duration_since(*sent).as_micros() as u64);
            }
            seen.moves.push(key);
            received.fetch_add(1, Ordering::Relaxed);
            news.notify_waiters();
        }
        buf.drain(..start);
    }
}
