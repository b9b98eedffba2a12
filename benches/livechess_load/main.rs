//! Load benchmark of the LiveChess API (`eboardctl livechess`) with real parts: a private
//! `dbus-daemon`, the web bench's stand-in for eboardd publishing N boards as the contract
//! says (a move every 1–8 s per board, the running clock once a second), the bridge binary
//! built from this crate, and M WebSocket clients, each subscribed (`eboardevent`) to every
//! board — the load of an operator tool following the whole hall, well above the one board a
//! lichess or chess.com connector follows.
//!
//! It prints the bridge's CPU over the measured time and its RSS, and the delay from the
//! D-Bus signal (the moment the stand-in sent the move) to the feed message whose `san` first
//! holds it at each client: p50 / p90 / p99 / max over every (move, client); and moves lost
//! (every client must see every move).
//!
//! ```text
//! cargo bench --bench livechess_load                # 200 boards, 50 clients, 60 s
//! EBOARDD_BENCH_BOARDS=200 EBOARDD_BENCH_CLIENTS=50 EBOARDD_BENCH_SECS=60 cargo bench --bench livechess_load
//! cargo bench --bench livechess_load -- --test      # a few seconds' smoke run
//! ```
//!
//! Without `--bench` (as under `cargo test --all-targets`), or with `--test`, a smoke run of 5
//! boards and 3 clients for 3 s. It never fails on a figure; it fails (exit 1) when a client
//! lost a move, and on a smoke run in which no move was sent.

#[allow(dead_code)]
#[path = "../daemon_load/harness.rs"]
mod harness;
#[allow(dead_code)]
#[path = "../daemon_load/procs.rs"]
mod procs;
#[allow(dead_code)]
#[path = "../web_load/standin.rs"]
mod standin;

use std::collections::{HashMap, HashSet};
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;
use tokio_tungstenite::tungstenite::Message;

use harness::{env_num, percentile};
use procs::{Bus, clock_ticks_per_second, cpu_ticks, status_value};
use standin::{Emitted, StandIn};

struct Config {
    boards: usize,
    clients: usize,
    secs: u64,
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
        // The clients all come from this host, and the bridge takes at most
        // SOCKETS_PER_CLIENT WebSockets from one address.
        let most = eboardd::bridge::livechess::server::SOCKETS_PER_CLIENT;
        anyhow::ensure!(
            (1..=most).contains(&clients),
            "clients must be 1..={most} (the bridge's WebSockets per client address)"
        );
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
    harness::main("livechess_load", Config::from_env_and_args, run);
}

/// What one client saw.
#[derive(Default)]
struct Seen {
    delays_us: Vec<u64>,
    /// (board id, ply) of every move seen.
    moves: HashSet<(String, u64)>,
    ended_early: bool,
}

async fn run(config: Config) -> anyhow::Result<()> {
    let dir = tempfile::tempdir().context("temp dir")?;
    let bus = Bus::start(dir.path()).await?;
    let emitted: Emitted = Arc::new(Mutex::new(HashMap::new()));
    let standin = StandIn::start(&bus.address, config.boards, emitted.clone()).await?;

    let mut cmd = Command::new(env!("CARGO_BIN_EXE_eboardctl"));
    cmd.args([
        "--bus",
        &bus.address,
        "livechess",
        "--listen",
        "127.0.0.1:0",
    ])
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .kill_on_drop(true);
    let mut bridge = cmd.spawn().context("cannot start eboardctl livechess")?;
    let pid = bridge.id().context("bridge pid")? as i32;
    let mut lines = BufReader::new(bridge.stderr.take().context("stderr")?).lines();
    let addr = tokio::time::timeout(Duration::from_secs(20), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(rest) = line.split("listening on ws://").nth(1) {
                return Some(rest.trim().trim_end_matches("/api/v1.0").to_owned());
            }
        }
        None
    })
    .await
    .context("the bridge did not say where it listens")?
    .context("the bridge exited before listening")?;
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });

    // Wait for the bridge to list every board; their serial numbers and board ids.
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    let boards: Vec<(String, String)> = loop {
        let listed = match http
            .get(format!("http://{addr}/api/v1.0/eboards"))
            .send()
            .await
        {
            Ok(r) => r.json::<Value>().await.ok(),
            Err(_) => None,
        };
        if let Some(list) = listed.as_ref().and_then(Value::as_array)
            && list.len() == config.boards
        {
            break list
                .iter()
                .map(|b| {
                    (
                        b["serialnr"].as_str().unwrap_or_default().to_owned(),
                        b["source"].as_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect();
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "the bridge did not list {} boards",
            config.boards
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let boards = Arc::new(boards);

    let mut tasks = Vec::new();
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::channel::<()>(config.clients);
    let stop = Arc::new(tokio::sync::Notify::new());
    let received = Arc::new(AtomicUsize::new(0));
    let news = Arc::new(tokio::sync::Notify::new());
    for _ in 0..config.clients {
        let url = format!("ws://{addr}/api/v1.0");
        let (emitted, ready, stop) = (emitted.clone(), ready_tx.clone(), stop.clone());
        let (received, news, boards) = (received.clone(), news.clone(), boards.clone());
        tasks.push(tokio::spawn(async move {
            client(url, boards, emitted, ready, stop, received, news).await
        }));
    }
    for _ in 0..config.clients {
        ready_rx
            .recv()
            .await
            .context("a client failed to subscribe")?;
    }

    let ticks = clock_ticks_per_second();
    let cpu0 = cpu_ticks(pid)?;
    let t0 = Instant::now();
    let played = standin
        .play(Duration::from_secs(config.secs), config.think_ms)
        .await?;
    let elapsed = t0.elapsed();
    let cpu1 = cpu_ticks(pid)?;
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
        "livechess_load{}: {} boards, {} WebSocket clients each subscribed to every board, {:.0} s: {} moves ({:.1}/s) + clock updates",
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
        "  D-Bus move -> feed san: p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms ({} samples)",
        pct(0.50),
        pct(0.90),
        pct(0.99),
        pct(1.0),
        delays.len()
    );
    println!("  moves lost at clients: {lost}; clients cut off: {ended}");
    anyhow::ensure!(
        !config.smoke || played > 0,
        "no move was sent, so nothing was checked"
    );
    anyhow::ensure!(
        lost == 0 && ended == 0,
        "{lost} moves lost at the clients, {ended} of {} clients cut off",
        config.clients
    );
    Ok(())
}

/// What a client reads of a message.
#[derive(serde::Deserialize)]
struct FeedMessage {
    response: String,
    id: Option<u64>,
    param: Option<FeedParam>,
}

#[derive(serde::Deserialize)]
struct FeedParam {
    #[serde(default)]
    san: Vec<serde::de::IgnoredAny>,
}

/// One client: subscribes feed k+1 to board k, then times every `san` that grows.
async fn client(
    url: String,
    boards: Arc<Vec<(String, String)>>,
    emitted: Emitted,
    ready: tokio::sync::mpsc::Sender<()>,
    stop: Arc<tokio::sync::Notify>,
    received: Arc<AtomicUsize>,
    news: Arc<tokio::sync::Notify>,
) -> Seen {
    let mut seen = Seen::default();
    let Ok((mut ws, _)) = tokio_tungstenite::connect_async(url.as_str()).await else {
        seen.ended_early = true;
        return seen;
    };
    for (k, (serialnr, _)) in boards.iter().enumerate() {
        let req = json!({"id": 100 + k, "call": "subscribe",
                         "param": {"feed": "eboardevent", "id": k + 1,
                                   "param": {"serialnr": serialnr}}});
        if ws
            .send(Message::Text(req.to_string().into()))
            .await
            .is_err()
        {
            seen.ended_early = true;
            return seen;
        }
    }
    let _ = ready.send(()).await;
    let mut plies: Vec<u64> = vec![0; boards.len()];
    let stopped = stop.notified();
    tokio::pin!(stopped);
    loop {
        let msg = tokio::select! {
            m = ws.next() => m,
            _ = &mut stopped => return seen,
        };
        let text = match msg {
            Some(Ok(Message::Text(t))) => t,
            Some(Ok(_)) => continue,
            _ => {
                seen.ended_early = true;
                return seen;
            }
        };
        let now = Instant::now();
        // Only what is timed is read: the feed id and the length of `san` (its entries are
        // skipped, not allocated), so the clients cost little beside the bridge.
        let Ok(msg) = serde_json::from_str::<FeedMessage>(text.as_str()) else {
            continue;
        };
        if msg.response != "feed" {
            continue;
        }
        let (Some(f), Some(param)) = (msg.id, msg.param) else {
            continue;
        };
        let Some(k) = (f as usize).checked_sub(1).filter(|&k| k < boards.len()) else {
            continue;
        };
        let n = param.san.len() as u64;
        let id = &boards[k].1;
        for ply in plies[k] + 1..=n {
            let key = (id.clone(), ply);
            let sent = emitted.lock().unwrap().get(&key).copied();
            if let Some(sent) = sent
                && seen.moves.insert(key)
            {
                seen.delays_us
                    .push(now.saturating_duration_since(sent).as_micros() as u64);
                received.fetch_add(1, Ordering::Relaxed);
            }
        }
        plies[k] = plies[k].max(n);
        news.notify_waiters();
    }
}
