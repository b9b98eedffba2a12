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
#[path = "../web_load/measure.rs"]
mod measure;
#[allow(dead_code)]
#[path = "../daemon_load/procs.rs"]
mod procs;
#[allow(dead_code)]
#[path = "../web_load/standin.rs"]
mod standin;

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use measure::{Bridge, Config, Links, Seen, Stage, Wording};

fn main() {
    // The clients all come from this host as one program, and the bridge takes at most
    // SOCKETS_PER_CLIENT WebSockets from one client (address, Origin, User-Agent).
    let most = eboardd::bridge::livechess::server::SOCKETS_PER_CLIENT;
    let why = " (the bridge's WebSockets per client)";
    harness::main(
        "livechess_load",
        || Config::from_env_and_args(most, why),
        run,
    );
}

async fn run(config: Config) -> anyhow::Result<()> {
    let stage = Stage::start(config.boards).await?;
    let bridge = Bridge::start(
        &stage.bus,
        &["livechess", "--listen", "127.0.0.1:0"],
        "listening on ws://",
    )
    .await?;
    let addr = bridge.listening.trim_end_matches("/api/v1.0").to_owned();

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

    let wording = Wording {
        name: "livechess_load",
        clients: "WebSocket clients each subscribed to every board",
        delay: "D-Bus move -> feed san",
        ended: "cut off",
        ready: "subscribe",
    };
    measure::measure(&config, &stage, bridge, wording, |links| {
        client(format!("ws://{addr}/api/v1.0"), boards.clone(), links)
    })
    .await
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
async fn client(url: String, boards: Arc<Vec<(String, String)>>, links: Links) -> Seen {
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
    let _ = links.ready.send(()).await;
    let mut plies: Vec<u64> = vec![0; boards.len()];
    // (board id, ply) of every move seen.
    let mut moves: HashSet<(String, u64)> = HashSet::new();
    let stopped = links.stop.notified();
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
            let sent = links.emitted.lock().unwrap().get(&key).copied();
            if let Some(sent) = sent
                && moves.insert(key)
            {
                seen.delays_us
                    .push(now.saturating_duration_since(sent).as_micros() as u64);
                seen.moves += 1;
                links.received.fetch_add(1, Ordering::Relaxed);
            }
        }
        plies[k] = plies[k].max(n);
        links.news.notify_waiters();
    }
}
