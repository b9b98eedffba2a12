//! One client cannot take a bridge's long-lived places from the others, through real sockets
//! against the real `eboardctl serve` and `eboardctl livechess`:
//!
//! - a runaway program opens 100 event streams (every one `serve` has) and a 101st: that
//!   one is refused, yet an overlay page on the same host and a tablet on another address
//!   each still get a stream (each taking the place of one of the program's oldest), and
//!   the program's reconnect is refused while it holds more than its part;
//! - a program opens 64 LiveChess WebSockets from 127.0.0.1 (its bound) and a 65th, which
//!   is refused; lichess's connector (a page from `https://lichess.org`, from 127.0.0.1
//!   too) still gets in and is served;
//! - four programs fill every LiveChess WebSocket: the connector still gets in, the oldest
//!   socket of one program is closed with 1013 (try again later) and the others work on.

mod common;
mod livechess_support;
mod web_support;

use std::time::Duration;

use common::{WAIT, within};
use eboardd::bridge::livechess::server::SOCKETS_PER_CLIENT;
use livechess_support::{LiveChess, Ws};
use serde_json::{Value, json};
use web_support::Serve;

/// `serve`'s default bound on event streams.
const STREAMS: usize = 100;
/// `livechess`'s bound on WebSockets in all.
const SOCKETS: usize = 256;

const RUNAWAY: &str = "runaway-script/0.1";
const LICHESS: &str = "https://lichess.org";
const BROWSER: &str = "Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0 Safari/537.36";

/// An HTTP client that says it is `agent`, from `local` (an address on the loopback).
fn client(agent: &str, local: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .user_agent(agent)
        .local_address(local.parse::<std::net::IpAddr>().unwrap())
        .build()
        .unwrap()
}

/// Opens `/api/events` as `client`: the status, and the open answer when 200.
async fn open_stream(serve: &Serve, client: &reqwest::Client) -> (u16, Option<reqwest::Response>) {
    let res = within(
        WAIT,
        "an event stream's answer",
        client.get(serve.url("/api/events")).send(),
    )
    .await
    .expect("an answer");
    let status = res.status().as_u16();
    (status, (status == 200).then_some(res))
}

/// Reads a stream until it ends (its place taken) or `WAIT` × 3 passes; true when it ended.
async fn ends(res: &mut reqwest::Response) -> bool {
    tokio::time::timeout(WAIT * 3, async {
        while let Ok(Some(_)) = res.chunk().await {}
    })
    .await
    .is_ok()
}

async fn health(serve: &Serve) -> Value {
    serve.json("/api/health").await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_with_every_event_stream_does_not_lock_others_out() {
    let serve = Serve::start("session", &[]).await;
    let runaway = client(RUNAWAY, "127.0.0.1");
    let mut held = Vec::new();
    for _ in 0..STREAMS {
        let (status, res) = open_stream(&serve, &runaway).await;
        assert_eq!(status, 200, "a stream within the bound");
        held.push(res.unwrap());
    }
    let (status, _) = open_stream(&serve, &runaway).await;
    assert_eq!(
        status, 503,
        "one past the bound from the program that holds them all"
    );

    // An overlay page on the same host (another program there) gets in: the program's
    // oldest stream makes room, and ends.
    let overlay = client("Mozilla/5.0 obs-browser/31.0", "127.0.0.1");
    let (status, overlay_stream) = open_stream(&serve, &overlay).await;
    assert_eq!(status, 200, "the overlay is locked out");
    assert!(ends(&mut held[0]).await, "the program's oldest stream ends");
    // A tablet on another address gets in too.
    let tablet = client(BROWSER, "127.0.0.2");
    let (status, tablet_stream) = open_stream(&serve, &tablet).await;
    assert_eq!(status, 200, "the tablet is locked out");
    assert!(ends(&mut held[1]).await, "the program's next oldest ends");

    let h = health(&serve).await;
    assert_eq!(h["events"]["clients"], STREAMS, "{h}");
    assert_eq!(h["events"]["evicted"], 2, "{h}");
    // The program reconnecting is refused: it holds the most already.
    let (status, _) = open_stream(&serve, &runaway).await;
    assert_eq!(status, 503, "the program took a place back");
    // The newcomers keep theirs: two newcomers more from other clients take from the
    // program, never from them.
    let mut more = Vec::new();
    for n in 3..5 {
        let other = client(BROWSER, &format!("127.0.0.{n}"));
        let (status, res) = open_stream(&serve, &other).await;
        assert_eq!(status, 200);
        more.push(res.unwrap());
    }
    assert!(ends(&mut held[2]).await && ends(&mut held[3]).await);
    drop((overlay_stream, tablet_stream, more));
    let h = health(&serve).await;
    assert_eq!(h["events"]["evicted"], 4, "{h}");
    // The rest of the program's streams were never touched.
    drop(held.drain(..4));
    let h = within(WAIT, "the streams closed by the test to be let go", async {
        loop {
            let h = health(&serve).await;
            if h["events"]["clients"] == STREAMS - 4 {
                return h;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert_eq!(h["events"]["evicted"], 4, "{h}");
}

/// Opens `n` WebSockets as `agent` (no `Origin`: a program).
async fn program_sockets(lc: &LiveChess, agent: &str, n: usize) -> Vec<Ws> {
    let mut open = Vec::with_capacity(n);
    for _ in 0..n {
        open.push(
            lc.connect_as(None, Some(agent))
                .await
                .expect("a WebSocket within the bound"),
        );
    }
    open
}

/// lichess's board connector: a page from lichess.org in the player's browser, asking for
/// the boards first.
async fn connector(lc: &LiveChess) -> Ws {
    let mut ws = lc
        .connect_as(Some(LICHESS), Some(BROWSER))
        .await
        .expect("lichess's connector gets in");
    let answer = ws.call(1, "eboards", json!(null)).await;
    assert_eq!(answer["response"], "call", "{answer}");
    ws
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lichess_connector_gets_in_beside_a_program_at_its_bound() {
    let lc = LiveChess::start("session", &[]).await;
    let mut open = program_sockets(&lc, RUNAWAY, SOCKETS_PER_CLIENT).await;
    assert_eq!(
        lc.connect_as(None, Some(RUNAWAY)).await.err(),
        Some(503),
        "one past the program's bound"
    );
    let _lichess = connector(&lc).await;
    // The program's sockets are all served still.
    for ws in open.iter_mut() {
        let answer = ws.call(7, "eboards", json!(null)).await;
        assert_eq!(answer["response"], "call", "{answer}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lichess_connector_gets_in_when_programs_hold_every_websocket() {
    let lc = LiveChess::start("session", &[]).await;
    let programs = SOCKETS / SOCKETS_PER_CLIENT;
    let mut held = Vec::new();
    for p in 0..programs {
        held.push(program_sockets(&lc, &format!("tool-{p}"), SOCKETS_PER_CLIENT).await);
    }
    assert_eq!(
        lc.connect_as(None, Some("tool-0")).await.err(),
        Some(503),
        "the program is at its bound"
    );
    let mut lichess = connector(&lc).await;
    // The oldest socket of the first program (all hold as many; its oldest is the oldest)
    // was closed to make room, with "try again later".
    assert_eq!(held[0][0].close_code().await, Some(1013));
    for (p, sockets) in held.iter_mut().enumerate() {
        let skip = usize::from(p == 0);
        for ws in sockets.iter_mut().skip(skip) {
            let answer = ws.call(9, "eboards", json!(null)).await;
            assert_eq!(answer["response"], "call", "program {p}: {answer}");
        }
    }
    let answer = lichess.call(2, "eboards", json!(null)).await;
    assert_eq!(answer["response"], "call", "{answer}");
}
