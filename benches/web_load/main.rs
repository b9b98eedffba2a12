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
mod measure;
#[allow(dead_code)]
#[path = "../daemon_load/procs.rs"]
mod procs;
mod standin;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use measure::{Bridge, Config, Links, Seen, Stage, Wording};

fn main() {
    harness::main("web_load", || Config::from_env_and_args(1000, ""), run);
}

async fn run(config: Config) -> anyhow::Result<()> {
    let stage = Stage::start(config.boards).await?;
    let max_clients = (config.clients + 10).to_string();
    let bridge = Bridge::start(
        &stage.bus,
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--max-clients",
            &max_clients,
        ],
        "listening on ",
    )
    .await?;
    let base = bridge.listening.clone();

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
    let wording = Wording {
        name: "web_load",
        clients: "SSE clients",
        delay: "D-Bus MovePlayed -> SSE event",
        ended: "dropped",
        ready: "connect",
    };
    measure::measure(&config, &stage, bridge, wording, |links| {
        client(http.clone(), format!("{base}/api/events"), links)
    })
    .await
}

/// One SSE client: reads the stream until told to stop, timing every `MovePlayed`.
async fn client(http: reqwest::Client, url: String, links: Links) -> Seen {
    let mut seen = Seen::default();
    let Ok(mut res) = http.get(&url).send().await else {
        seen.ended_early = true;
        return seen;
    };
    let _ = links.ready.send(()).await;
    let stopped = links.stop.notified();
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
            if let Some(sent) = links.emitted.lock().unwrap().get(&key) {
                seen.delays_us
                    .push(now.saturating_duration_since(*sent).as_micros() as u64);
            }
            seen.moves += 1;
            links.received.fetch_add(1, Ordering::Relaxed);
            links.news.notify_waiters();
        }
        buf.drain(..start);
    }
}
