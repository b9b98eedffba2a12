//! Hostile input at the web bridge's two network boundaries, through the real parts: a
//! Debian `mosquitto` that anyone may publish to, and `eboardctl serve --mqtt` on top of it.
//!
//! - the broker: messages a neighbour on the hall's broker can publish (a newline in a
//!   member, arguments of the wrong type, `board` in a payload, made-up boards past the
//!   bound, oversized payloads, bad topics, a resent first event) are refused and counted in
//!   `/api/health`, and the live event stream goes on carrying the good events;
//! - the same messages to `eboardctl watch --mqtt --json`: only the good events are shown;
//! - HTTP: hostile paths, methods, headers and `Last-Event-ID` values get plain answers (a
//!   reset snapshot for every id that cannot be replayed), and the bridge and its open
//!   streams live on.

mod common;
mod ctl_support;
mod relay_support;
mod web_support;

use std::time::Duration;

use common::within;
use relay_support::{Broker, WAIT, publish};
use serde_json::{Value, json};
use web_support::{Serve, Sse, SseEvent, raw, raw_with};

const PREFIX: &str = "hall";
const BOARD: &str = "rig-a/board_1";

fn topic(rest: &str) -> String {
    format!("{PREFIX}/{rest}")
}

fn msg(rest: &str, payload: impl Into<Vec<u8>>, retain: bool) -> (String, Vec<u8>, bool) {
    (topic(rest), payload.into(), retain)
}

fn json_msg(rest: &str, v: Value) -> (String, Vec<u8>, bool) {
    msg(rest, v.to_string(), false)
}

fn moved(seq: u64, ply: u64, san: &str) -> Value {
    json!({"seq": seq, "run": "r1", "member": "MovePlayed", "ply": ply, "san": san,
        "uci": "e2e4", "fen": "8/8/8/8/8/8/8/8 w - - 0 1", "white_ms": 1000, "black_ms": 2000})
}

/// A broker holding one rig's board (as a relay leaves it).
async fn broker_with_a_board(dir: &std::path::Path) -> Broker {
    let broker = Broker::start(dir).await;
    publish(
        broker.port,
        &[
            msg("rig-a/status", "online", true),
            msg("rig-a/run", "r1", true),
            msg(
                "rig-a/board_1/state",
                json!({"Name": "board-1", "Number": 1, "State": "playing", "Moves": [],
                    "Connected": true, "Pgn": "*"})
                .to_string(),
                true,
            ),
        ],
    )
    .await;
    broker
}

/// [`broker_with_a_board`], and the bridge serving it.
async fn hall(dir: &std::path::Path, extra: &[&str]) -> (Broker, Serve) {
    let broker = broker_with_a_board(dir).await;
    let url = broker.url();
    let mut args = vec!["--mqtt", url.as_str(), "--prefix", PREFIX];
    args.extend_from_slice(extra);
    let serve = Serve::start("session", &args).await;
    until_json(&serve, "/api/boards", "the board on the bridge", |v| {
        v.as_array()
            .is_some_and(|a| a.iter().any(|b| b["Id"] == BOARD))
    })
    .await;
    (broker, serve)
}

/// Polls `path` until its JSON satisfies `pred`.
async fn until_json(serve: &Serve, path: &str, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
    within(WAIT, what, async {
        loop {
            let v = serve.json(path).await;
            if pred(&v) {
                return v;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
}

async fn next(sse: &mut Sse) -> SseEvent {
    within(WAIT, "the next event", sse.next())
        .await
        .expect("the stream is open")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_broker_messages_are_refused_counted_and_the_stream_lives() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (broker, serve) = hall(dir.path(), &["--max-boards", "5"]).await;
    let mut sse = serve.events("?snapshot=1", None).await;
    let snap = next(&mut sse).await;
    assert_eq!(snap.event, "Snapshot");
    assert_eq!(snap.data["boards"][0]["board"], BOARD);

    publish(
        broker.port,
        &[json_msg("rig-a/board_1/event", moved(1, 1, "e4"))],
    )
    .await;
    sse.until("the first move", |e| e.event == "MovePlayed")
        .await;

    let ev = "rig-a/board_1/event";
    let state = "rig-a/board_1/state";
    let mut bad_member = moved(2, 2, "e5");
    bad_member["member"] = json!("MovePlayed\nevent: Evil\ndata: {}");
    let mut bad_fen = moved(2, 2, "e5");
    bad_fen["fen"] = json!(5);
    let mut bad_ply = moved(2, 2, "e5");
    bad_ply["ply"] = json!("two");
    let mut no_seq = moved(2, 2, "e5");
    no_seq.as_object_mut().unwrap().remove("seq");
    let mut bad_run = moved(2, 2, "e5");
    bad_run["run"] = json!("two words");
    let mut hostile = vec![
        json_msg(ev, bad_member),
        json_msg(ev, bad_fen),
        json_msg(ev, bad_ply),
        json_msg(ev, json!({"seq": 2, "run": "r1", "member": "Explode"})),
        json_msg(ev, no_seq),
        json_msg(ev, bad_run),
        // The first event resent (QoS 1 at least once): shown once.
        json_msg(ev, moved(1, 1, "e4")),
        // Oversized, not JSON, bad words.
        msg(state, vec![b' '; 600 * 1024], false),
        json_msg(
            ev,
            json!({"seq": 2, "run": "r1", "member": "FlagFell", "player": "white",
                "pad": "x".repeat(20 * 1024)}),
        ),
        msg(state, "{not json", false),
        msg(ev, "[1]", false),
        msg("rig-a/status", "maybe", false),
        msg("rig-a/run", "two words", false),
        // Properties of the wrong type or not the contract's: refused one by one.
        json_msg(
            state,
            json!({"Name": "board-1", "Number": "seven", "Evil": "<script>"}),
        ),
        // Bad topics.
        msg("rig-a/bad-id/state", "{}", false),
        msg("rig-a/board_1/other", "{}", false),
        msg("rig-a/board_1/state/x", "{}", false),
        msg("$x/board_1/state", "{}", false),
        msg("rig-a/board_1", "{}", false),
    ];
    // Made-up boards past the bound of 5: four fit beside the real one, six do not, nor an
    // event for one more.
    for n in 0..10 {
        hostile.push(json_msg(
            &format!("rig-evil/b{n}/state"),
            json!({"Name": format!("fake {n}")}),
        ));
    }
    hostile.push(json_msg("rig-evil/b99/event", moved(1, 1, "e4")));
    // A good event whose payload names another board, then a last one to wait for.
    let mut elsewhere = moved(2, 2, "e5");
    elsewhere["board"] = json!("rig-b/elsewhere");
    hostile.push(json_msg(ev, elsewhere));
    hostile.push(json_msg(
        ev,
        json!({"seq": 3, "run": "r1", "member": "FlagFell", "player": "black"}),
    ));
    publish(broker.port, &hostile).await;

    let seen = sse
        .until("the last good event", |e| e.event == "FlagFell")
        .await;
    let known = [
        "MovePlayed",
        "FlagFell",
        "PropertiesChanged",
        "InterfacesAdded",
        "LastMove",
    ];
    for e in &seen {
        assert!(known.contains(&e.event.as_str()), "{e:?}");
        let board = e.data["board"].as_str().expect("a board");
        assert!(board == BOARD || board.starts_with("rig-evil/b"), "{e:?}");
    }
    let moves: Vec<&SseEvent> = seen.iter().filter(|e| e.event == "MovePlayed").collect();
    assert_eq!(moves.len(), 1, "only the good second move, once: {moves:?}");
    assert_eq!(
        moves[0].data["board"], BOARD,
        "the board comes from the topic"
    );
    assert_eq!(moves[0].data["ply"], 2);
    assert_eq!(
        seen.iter().filter(|e| e.event == "InterfacesAdded").count(),
        4
    );
    let renamed = seen
        .iter()
        .find(|e| e.event == "PropertiesChanged" && e.data["board"] == BOARD)
        .expect("the state's good property");
    assert_eq!(renamed.data["changed"], json!({"Name": "board-1"}));

    let want = json!({
        "bad-event": 4, "bad-seq": 1, "bad-run": 2, "over-bound": 7, "oversized": 2,
        "bad-topic": 5, "not-json": 2, "bad-status": 1, "bad-property": 1,
        "unknown-property": 1,
    });
    let health = until_json(&serve, "/api/health", "every refusal counted", |h| {
        h["broker"]["refused"] == 26
    })
    .await;
    let broker_health = &health["broker"];
    assert_eq!(broker_health["refused_by_reason"], want, "{health}");
    assert_eq!(broker_health["over_bound_by_rig"], json!({"rig-evil": 7}));
    assert_eq!(broker_health["max_boards"], 5);
    assert_eq!(broker_health["lost_events"], 0);
    assert_eq!(
        broker_health["rigs"]["rig-a"],
        json!({"online": true, "run": "r1"})
    );
    assert_eq!(
        broker_health["boards_by_rig"],
        json!({"rig-a": 1, "rig-evil": 4})
    );
    assert_eq!(health["source"], "broker");
    assert_eq!(health["source_up"], true);
    assert_eq!(health["boards"], 5);
    assert_eq!(
        health["events"]["refused"], 0,
        "nothing got as far as the writer"
    );
    assert_eq!(serve.json("/api/boards").await.as_array().unwrap().len(), 5);

    // The same stream carries what comes next, and the operator was told once.
    publish(broker.port, &[json_msg(ev, moved(4, 3, "Nf3"))]).await;
    sse.until("a move after all that", |e| {
        e.event == "MovePlayed" && e.data["ply"] == 3
    })
    .await;
    // Told in lines at most every few seconds, each with what is new since the last.
    within(WAIT, "the log lines about refusals", async {
        loop {
            let told: u64 = serve
                .log
                .lock()
                .unwrap()
                .iter()
                .filter_map(|l| {
                    l.split("refused ")
                        .nth(1)?
                        .split(' ')
                        .next()?
                        .parse::<u64>()
                        .ok()
                })
                .sum();
            if told == 26 {
                return;
            }
            assert!(told < 26, "told {told}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
}

/// The first SSE event block a request for `/api/events` with these header lines gets.
async fn first_event_with(serve: &Serve, headers: &[u8], query: &str) -> String {
    let addr = serve.base.trim_start_matches("http://").to_owned();
    let mut s = within(WAIT, "connect", tokio::net::TcpStream::connect(&addr))
        .await
        .unwrap();
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut req = format!("GET /api/events{query} HTTP/1.1\r\nHost: {addr}\r\n").into_bytes();
    req.extend_from_slice(headers);
    req.extend_from_slice(b"\r\n");
    s.write_all(&req).await.unwrap();
    let mut buf = Vec::new();
    within(WAIT, "the first event", async {
        loop {
            let mut chunk = [0u8; 4096];
            let n = s.read(&mut chunk).await.unwrap();
            assert!(n > 0, "closed: {}", String::from_utf8_lossy(&buf));
            buf.extend_from_slice(&chunk[..n]);
            let text = String::from_utf8_lossy(&buf).into_owned();
            // Only blocks already ended by their blank line (the last piece may be cut).
            let mut blocks: Vec<&str> = text.split("\n\n").collect();
            blocks.pop();
            if let Some(block) = blocks.into_iter().find(|b| b.contains("event:")) {
                return format!("{}\n{block}", text.lines().next().unwrap_or(""));
            }
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_http_requests_get_plain_answers_and_the_bridge_lives() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (broker, serve) = hall(dir.path(), &[]).await;
    // A stream held open through all of it.
    let mut held = serve.events("", None).await;

    let long = format!("/api/boards/{}", "a".repeat(8000));
    for path in [
        "/../../etc/passwd",
        "/static/..%2f..%2fCargo.toml",
        "/static/%2e%2e%2f%2e%2e%2fCargo.toml",
        "/pgn/..%2f..%2fetc%2fpasswd.pgn",
        "/api/boards/%00",
        "/api/boards/rig-a%2f..%2f..%2fx",
        long.as_str(),
        "//api//boards",
        "/api/events/../../x",
    ] {
        let (status, text) = raw(&serve.base, "GET", path).await;
        assert!([400, 404].contains(&status), "{path}: {status} {text}");
        assert!(
            !text.contains("[package]") && !text.contains("root:"),
            "{path}"
        );
    }
    for method in ["POST", "DELETE", "BREW", "CONNECT"] {
        let (status, text) = raw(&serve.base, method, "/api/boards").await;
        assert!([400, 405].contains(&status), "{method}: {text}");
    }
    // Headers: huge, many, not text, malformed. An answer of 4xx or a closed connection.
    let huge = format!("X-Big: {}\r\n", "a".repeat(256 * 1024));
    let many: String = (0..500).map(|i| format!("X-{i}: {i}\r\n")).collect();
    for headers in [
        huge.as_bytes(),
        many.as_bytes(),
        b"X-Bin: \xff\xfe\x01\r\n",
        b"no colon here\r\n",
        b"Content-Length: -1\r\n",
    ] {
        let (status, text) = raw_with(&serve.base, "GET", "/api/boards", headers).await;
        assert!(
            status == 0 || status == 200 || (400..500).contains(&status),
            "{status}: {}",
            &text[..text.len().min(200)]
        );
    }

    // Every Last-Event-ID that cannot be replayed exactly gets the whole state as a reset.
    let newest = serve.json("/api/health").await["events"]["last_id"]
        .as_u64()
        .expect("the newest id");
    let future = (newest + 1_000_000_000).to_string();
    let nines = "9".repeat(4000);
    let ids: Vec<&[u8]> = vec![
        b"yesterday",
        b"-1",
        b"0",
        b"1",
        b"18446744073709551615",
        b"18446744073709551616",
        b"1 2",
        b"\xff\xfe",
        future.as_bytes(),
        nines.as_bytes(),
    ];
    for id in ids {
        let mut header = b"Last-Event-ID: ".to_vec();
        header.extend_from_slice(id);
        header.extend_from_slice(b"\r\n");
        let first = first_event_with(&serve, &header, "").await;
        let shown = String::from_utf8_lossy(id);
        assert!(first.starts_with("HTTP/1.1 200"), "{shown}: {first}");
        assert!(first.contains("event: Snapshot"), "{shown}: {first}");
        assert!(first.contains(r#""reset":true"#), "{shown}: {first}");
        assert!(first.contains(BOARD), "{shown}: {first}");
    }
    let first = first_event_with(&serve, b"", "?last_event_id=abc&board=%0A%0D").await;
    assert!(first.contains(r#""reset":true"#), "{first}");
    let health = serve.json("/api/health").await;
    assert_eq!(health["events"]["resets"], 11, "{health}");

    // The bridge lives, and the held stream carries the next event.
    assert_eq!(serve.get("/api/boards").await.0, 200);
    publish(
        broker.port,
        &[json_msg("rig-a/board_1/event", moved(1, 1, "e4"))],
    )
    .await;
    held.until("the move on the stream held open", |e| {
        e.event == "MovePlayed"
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_from_a_hostile_broker_shows_only_the_contracts_events() {
    let dir = tempfile::tempdir().expect("temp dir");
    let broker = broker_with_a_board(dir.path()).await;
    let url = broker.url();
    let args = [
        "--json",
        "watch",
        "--mqtt",
        url.as_str(),
        "--prefix",
        PREFIX,
        "--max-boards",
        "2",
    ];
    let mut watch = ctl_support::Watch::spawn("session", &args);
    watch
        .until("the board", |l| {
            l.contains(r#""event":"Board""#) && l.contains(BOARD)
        })
        .await;
    let ev = "rig-a/board_1/event";
    let mut bad_member = moved(1, 1, "e4");
    bad_member["member"] = json!("MovePlayed\nevent: Evil");
    let mut bad_fen = moved(1, 1, "e4");
    bad_fen["fen"] = json!(5);
    let mut elsewhere = json!({"seq": 1, "run": "r1", "member": "FlagFell", "player": "white"});
    elsewhere["board"] = json!("rig-b/elsewhere");
    let mut hostile = vec![json_msg(ev, bad_member), json_msg(ev, bad_fen)];
    for n in 0..5 {
        hostile.push(json_msg(
            &format!("rig-evil/b{n}/state"),
            json!({"Name": format!("fake {n}")}),
        ));
    }
    hostile.push(json_msg(ev, elsewhere));
    hostile.push(json_msg(ev, moved(1, 1, "e4")));
    hostile.push(json_msg(
        ev,
        json!({"seq": 2, "run": "r1", "member": "FlagFell", "player": "black"}),
    ));
    publish(broker.port, &hostile).await;
    watch
        .until("the last good event", |l| l.contains(r#""player":"black""#))
        .await;
    let lines: Vec<Value> = watch
        .seen
        .iter()
        .map(|l| serde_json::from_str(l).expect("JSON lines"))
        .collect();
    let shown: Vec<(&str, &str)> = lines
        .iter()
        .filter(|l| l["event"] != "PropertiesChanged")
        .map(|l| {
            (
                l["event"].as_str().unwrap_or("?"),
                l["path"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            ("DaemonStarted", ""),
            ("Board", BOARD),
            ("Board", "rig-evil/b0"),
            ("FlagFell", BOARD),
            ("FlagFell", BOARD),
        ],
        "only the contract's events, the board from the topic, one made-up board within the \
         bound, the repeat of seq 1 dropped: {lines:#?}"
    );
    assert_eq!(watch.interrupt().await, 0);
}

/// A rig named like a path (`..`, `.`, or with `\`, `?` or `%` a browser reads as part of a
/// URL) is refused as a bad topic: its boards never reach the hall, so no board page link
/// can resolve outside `/board/`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rigs_named_like_paths_are_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (broker, serve) = hall(dir.path(), &[]).await;
    let rigs = ["..", ".", "a\\..", "a?b", "%2e%2e"];
    let mut hostile: Vec<(String, Vec<u8>, bool)> = Vec::new();
    for rig in rigs {
        hostile.push(msg(&format!("{rig}/status"), "online", true));
        hostile.push(json_msg(
            &format!("{rig}/etc/state"),
            json!({"Name": "passwd", "Number": 9}),
        ));
    }
    // A last good one to know the others were read.
    hostile.push(json_msg("rig-a/board_1/event", moved(1, 1, "e4")));
    publish(broker.port, &hostile).await;
    let health = until_json(&serve, "/api/health", "the rigs refused", |h| {
        h["broker"]["refused"] == 2 * rigs.len()
    })
    .await;
    assert_eq!(
        health["broker"]["refused_by_reason"],
        json!({"bad-topic": 2 * rigs.len()}),
        "{health}"
    );
    let boards = serve.json("/api/boards").await;
    let ids: Vec<&str> = boards
        .as_array()
        .expect("a list")
        .iter()
        .map(|b| b["Id"].as_str().expect("an id"))
        .collect();
    assert_eq!(ids, [BOARD], "only the real board");
    assert!(
        health["broker"]["rigs"]
            .as_object()
            .is_some_and(|r| r.keys().all(|k| k == "rig-a")),
        "{health}"
    );
}

/// The replay log is bounded in bytes, not only in events: a publisher on the broker sending
/// 400 states of 400 KB each (160 MB) leaves the bridge keeping at most 128 MiB of them, and
/// the bridge's memory stays within a small multiple of that bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn big_events_from_the_broker_are_kept_within_a_byte_bound() {
    const LOG_BYTES: u64 = 128 << 20;
    const STATES: u64 = 400;
    let dir = tempfile::tempdir().expect("temp dir");
    let (broker, serve) = hall(dir.path(), &[]).await;
    let before = serve.json("/api/health").await["events"]["last_id"]
        .as_u64()
        .expect("an id");
    for batch in 0..(STATES / 20) {
        let states: Vec<_> = (0..20)
            .map(|i| {
                let n = batch * 20 + i;
                let pgn = format!("[Event \"{n}\"]\n\n{}", "1. e4 ".repeat(400 * 1024 / 6));
                json_msg(
                    "rig-a/board_1/state",
                    json!({"Name": "board-1", "Number": 1, "Pgn": pgn}),
                )
            })
            .collect();
        publish(broker.port, &states).await;
    }
    let health = until_json(&serve, "/api/health", "every state read", |h| {
        h["events"]["last_id"].as_u64().unwrap_or(0) >= before + STATES
    })
    .await;
    let kept = health["events"]["kept"].as_u64().expect("events kept");
    let kept_bytes = health["events"]["kept_bytes"].as_u64().expect("bytes kept");
    assert!(kept_bytes <= LOG_BYTES, "{health}");
    assert!(kept < STATES, "the oldest big events were let go: {health}");
    assert!(kept_bytes > LOG_BYTES / 2, "the log is used: {health}");
    let status = std::fs::read_to_string(format!("/proc/{}/status", serve.pid())).unwrap();
    let rss_kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmRSS");
    // The log, the hall's current state and the allocator's slack (about 220 MB measured):
    // a guard against events held somewhere else without bound, with room for the allocator.
    assert!(
        rss_kb * 1024 < 3 * LOG_BYTES,
        "the bridge holds {rss_kb} kB for a log of at most {LOG_BYTES} bytes"
    );
    assert_eq!(health["broker"]["refused"], 0, "{health}");
}
