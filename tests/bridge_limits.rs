//! Slow and idle clients cost the HTTP bridges nothing, through real sockets against the real
//! `eboardctl serve` and `eboardctl livechess`:
//!
//! - 2,000 connections held open — half silent, half with a request's headers sent part way —
//!   by a client, with the bridge at the usual 1,024 file handles: `/api/health` (and the
//!   LiveChess REST side) answers all the same, and every held connection is closed by the
//!   bridge (taken for a newcomer, or after the header-read timeout);
//! - the LiveChess WebSockets are bounded per client (one program from one address): the one
//!   past the bound gets 503 with a message, and the open ones work on.

mod common;
mod livechess_support;
mod web_support;

use std::time::Duration;

use common::{WAIT, within};
use eboardd::bridge::livechess::server::SOCKETS_PER_CLIENT;
use livechess_support::LiveChess;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::process::Command;
use web_support::Serve;

/// Connections the client holds.
const HELD: usize = 2_000;

/// The file handles the bridge is started with: the usual default soft limit, as its hard
/// limit too, so the bridge cannot raise it.
const BRIDGE_FILES: u64 = 1_024;

/// Raises this test's own soft limit on file handles to hold [`HELD`] connections.
fn raise_own_file_limit() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let want = HELD as u64 + 256;
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).expect("getrlimit");
    assert!(
        hard >= want,
        "this test holds {HELD} connections and needs {want} file handles; the hard limit is \
         {hard} (raise it, e.g. `ulimit -Hn {want}`)"
    );
    if soft < want {
        setrlimit(Resource::RLIMIT_NOFILE, want, hard).expect("setrlimit");
    }
}

/// Starts the bridge with [`BRIDGE_FILES`] file handles, soft and hard.
fn at_the_usual_file_limit(cmd: &mut Command) {
    // SAFETY: only setrlimit, async-signal-safe, runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            nix::sys::resource::setrlimit(
                nix::sys::resource::Resource::RLIMIT_NOFILE,
                BRIDGE_FILES,
                BRIDGE_FILES,
            )
            .map_err(std::io::Error::from)
        });
    }
}

/// Opens [`HELD`] connections to `addr`: every other one silent, the rest with a request's
/// first lines and no end of headers.
async fn hold(addr: &str) -> Vec<TcpStream> {
    let mut held = Vec::with_capacity(HELD);
    for n in 0..HELD {
        let mut s = within(WAIT, "a connection", TcpStream::connect(addr))
            .await
            .expect("connect");
        if n % 2 == 1 {
            s.write_all(b"GET /api/health HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                .await
                .expect("half a request");
        }
        held.push(s);
    }
    held
}

/// Waits until the bridge has closed every held connection (end of file or a reset).
async fn all_closed(held: Vec<TcpStream>) {
    let closing = held.into_iter().map(|mut s| async move {
        let mut buf = [0u8; 512];
        loop {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                // A 408 or similar before the close is fine.
                Ok(_) => {}
            }
        }
    });
    within(
        WAIT * 6,
        "the bridge to close every held connection",
        futures_util::future::join_all(closing),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_answers_health_while_2000_connections_are_held() {
    raise_own_file_limit();
    let serve = Serve::start_with("session", "127.0.0.1:0", &[], at_the_usual_file_limit).await;
    let addr = serve.base.trim_start_matches("http://").to_owned();
    let held = hold(&addr).await;
    let (status, body) = serve.get("/api/health").await;
    assert_eq!(status, 200, "{body}");
    let health: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(health["source"], "bus", "{health}");
    all_closed(held).await;
    // And the bridge serves on.
    assert_eq!(serve.get("/api/health").await.0, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn livechess_answers_while_2000_connections_are_held() {
    raise_own_file_limit();
    let lc = LiveChess::start_with("session", &[], at_the_usual_file_limit).await;
    let held = hold(&lc.addr).await;
    assert_eq!(lc.json("/api/v1.0/eboards").await, json!([]));
    let ws = lc.connect(None).await;
    assert!(ws.is_ok(), "the WebSocket opens: {:?}", ws.err());
    all_closed(held).await;
    assert_eq!(lc.json("/api/v1.0/eboards").await, json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn livechess_bounds_the_websockets_of_one_client() {
    let lc = LiveChess::start("session", &[]).await;
    let mut open = Vec::new();
    for _ in 0..SOCKETS_PER_CLIENT {
        open.push(
            lc.connect(None)
                .await
                .expect("a WebSocket within the bound"),
        );
    }
    let refused = lc.connect(None).await;
    assert_eq!(
        refused.err(),
        Some(503),
        "one past the bound from one client"
    );
    // The open ones are served, and closing one makes room.
    let answer = open[0].call(1, "eboards", json!(null)).await;
    assert_eq!(answer["response"], "call", "{answer}");
    drop(open.pop());
    within(WAIT, "room for one more", async {
        loop {
            if let Ok(ws) = lc.connect(None).await {
                return ws;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
}
