//! `eboardctl serve` against the real eboardd on a private bus with simulated boards: the JSON
//! matches the D-Bus properties, the event stream carries every move in order and replays
//! exactly what a reconnecting client missed, `/pgn/all.pgn` parses into every board's game
//! in table order, the bridge is read-only and bounded, and it follows eboardd restarting
//! and the bus going away without a restart of its own.

mod common;
mod web_support;

use std::time::Duration;

use common::rig::moves;
use common::{WAIT, within};
use serde_json::Value;
use web_support::{Rig, SseEvent, dbus_boards, raw, spawn_daemon};

fn is_move(e: &SseEvent, board: &str, ply: u64) -> bool {
    e.event == "MovePlayed" && e.data["board"] == board && e.data["ply"] == ply
}

/// `/api/boards` as a map id → properties (without the `Id` the bridge adds).
fn by_id(api: &Value) -> serde_json::Map<String, Value> {
    api.as_array()
        .expect("an array")
        .iter()
        .map(|b| {
            let mut props = b.as_object().unwrap().clone();
            let id = props.remove("Id").expect("Id").as_str().unwrap().to_owned();
            (id, Value::Object(props))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_matches_dbus_and_events_carry_every_move_in_order() {
    let rig = Rig::start(&["web.a", "web.b"], &[]).await;
    rig.wait_ready(&["web_a", "web_b"]).await;
    let mut all = rig.serve.events("", None).await;
    let mut only_b = rig.serve.events("?board=web_b", None).await;

    let sans = ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6"];
    let ucis = ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6"];
    rig.scenario(0).run(&[moves(&sans)]).await.expect("moves");
    let seen = all
        .until("the 6th move of web_a", |e| is_move(e, "web_a", 6))
        .await;
    let ids: Vec<u64> = seen.iter().map(|e| e.id).collect();
    assert!(
        ids.windows(2).all(|w| w[1] == w[0] + 1),
        "ids count up by one: {ids:?}"
    );
    let played: Vec<&SseEvent> = seen.iter().filter(|e| e.event == "MovePlayed").collect();
    assert_eq!(played.len(), 6, "{played:#?}");
    for (i, e) in played.iter().enumerate() {
        assert_eq!(e.data["board"], "web_a");
        assert_eq!(e.data["ply"], i as u64 + 1);
        assert_eq!(e.data["san"], sans[i]);
        assert_eq!(e.data["uci"], ucis[i]);
        assert!(
            e.data["fen"]
                .as_str()
                .is_some_and(|f| f.split(' ').count() == 6),
            "{e:?}"
        );
        assert!(e.data["white_ms"].as_u64().is_some() && e.data["black_ms"].as_u64().is_some());
    }
    // Property changes come as events too, with the changed values.
    assert!(seen.iter().any(|e| e.event == "PropertiesChanged"
        && e.data["board"] == "web_a"
        && e.data["changed"]["Moves"].as_array().is_some()));
    // The squares to mark follow the moves (the bridge's own event).
    all.until("the last move's squares", |e| {
        e.event == "LastMove" && e.data["uci"] == "a7a6" && e.data["from"] == "a7"
    })
    .await;

    // The filtered stream has only web_b's events.
    rig.scenario(1).run(&[moves(&["d4"])]).await.expect("move");
    let b_seen = only_b
        .until("web_b's move", |e| is_move(e, "web_b", 1))
        .await;
    assert!(
        b_seen
            .iter()
            .all(|e| e.data.get("board").is_none() || e.data["board"] == "web_b"),
        "{b_seen:#?}"
    );

    // The JSON is the D-Bus properties. Clocks change them every second, so compare when
    // two D-Bus reads around the bridge's answer agree.
    within(WAIT * 2, "the JSON to match D-Bus", async {
        loop {
            let before = dbus_boards(&rig.conn).await;
            let api = rig.serve.json("/api/boards").await;
            let after = dbus_boards(&rig.conn).await;
            if before == after && by_id(&api) == before {
                let one = rig.serve.json("/api/boards/web_a").await;
                if one["Moves"] == before["web_a"]["Moves"] {
                    assert_eq!(one["Id"], "web_a");
                    return;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    let before = dbus_boards(&rig.conn).await;
    assert_eq!(before["web_a"]["Moves"].as_array().unwrap().len(), 6);
    assert!(before["web_a"].get("IllegalMoves").is_some());

    let (status, body) = rig.serve.get("/api/boards/no_such_board").await;
    assert_eq!(status, 404, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert!(
        v["error"].as_str().unwrap().contains("no_such_board"),
        "{v}"
    );
    assert_eq!(v["boards"], serde_json::json!(["web_a", "web_b"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn last_event_id_replays_exactly_what_was_missed() {
    let rig = Rig::start(&["web.r"], &[]).await;
    rig.wait_ready(&["web_r"]).await;
    let mut all = rig.serve.events("", None).await;
    let mut first = rig.serve.events("", None).await;

    let mut sc = rig.scenario(0);
    sc.run(&[moves(&["e4", "e5"])]).await.expect("moves");
    let cut = first
        .until("the 2nd move", |e| is_move(e, "web_r", 2))
        .await
        .last()
        .unwrap()
        .id;
    drop(first);

    // Moves made while that client is away.
    sc.run(&[moves(&["Nf3", "Nc6", "Bb5"])])
        .await
        .expect("moves");
    let everything = all.until("the 5th move", |e| is_move(e, "web_r", 5)).await;
    let missed: Vec<SseEvent> = everything.into_iter().filter(|e| e.id > cut).collect();
    assert!(
        missed.iter().filter(|e| e.event == "MovePlayed").count() == 3,
        "{missed:#?}"
    );
    let last = missed.last().unwrap().id;

    let mut again = rig.serve.events("", Some(cut)).await;
    let replayed = again.until("the replay", |e| e.id >= last).await;
    assert_eq!(replayed, missed, "exactly the missed events, in order");

    // The same with the pages' options: no snapshot when the replay is exact.
    let mut page = rig.serve.events("?snapshot=1", Some(cut)).await;
    let first_ev = page.next().await.unwrap();
    assert_eq!(first_ev, missed[0]);
    // Without an id, the pages get the current state first, under the newest id.
    let mut fresh = rig.serve.events("?snapshot=1", None).await;
    let snap = fresh.next().await.unwrap();
    assert_eq!(snap.event, "Snapshot");
    assert!(snap.id >= last);
    let boards = snap.data["boards"].as_array().unwrap();
    assert_eq!(boards[0]["board"], "web_r");
    assert_eq!(boards[0]["last_move"]["uci"], "f1b5");

    assert_eq!(snap.data["reset"], false);

    // An id that cannot be replayed (no number, from an earlier run, in the future) gets the
    // whole state marked as a reset, also without `?snapshot=1`: a reconnect always gets the
    // truth.
    for id in ["yesterday", "1", &(last + 1_000_000).to_string()] {
        let mut req = reqwest::Client::new()
            .get(rig.serve.url("/api/events"))
            .header("Last-Event-ID", id)
            .send()
            .await
            .unwrap();
        assert_eq!(req.status().as_u16(), 200, "{id}");
        let mut body = Vec::new();
        let first = within(WAIT, "the reset snapshot", async {
            loop {
                body.extend_from_slice(&req.chunk().await.unwrap().expect("stream open"));
                let text = String::from_utf8_lossy(&body).into_owned();
                if let Some(block) = text.split("\n\n").find(|b| b.contains("event:")) {
                    return block.to_owned();
                }
            }
        })
        .await;
        assert!(first.contains("event: Snapshot"), "{id}: {first}");
        assert!(first.contains(r#""reset":true"#), "{id}: {first}");
        assert!(first.contains(r#""board":"web_r""#), "{id}: {first}");
    }
}

/// One game as pgn-reader reads it: its tags and its SAN moves.
/// The games of a PGN text, read with `pgn-reader` (through `sim::pgn`).
fn parse_pgn(text: &str) -> Vec<eboard_sim::PgnGame> {
    eboard_sim::parse_games(text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_pgn_parses_into_every_game_in_table_order() {
    // Ids in an order that differs from the start order.
    let rig = Rig::start(&["web.c3", "web.c1", "web.c2"], &[]).await;
    rig.wait_ready(&["web_c1", "web_c2", "web_c3"]).await;
    let games: [&[&str]; 3] = [&["e4", "c5", "Nf3"], &["d4", "Nf6"], &["c4"]];
    for (i, g) in games.iter().enumerate() {
        rig.scenario(i).run(&[moves(g)]).await.expect("moves");
    }
    // Wait until every game's PGN holds its moves (they are final once the clock is pressed).
    let boards = within(WAIT * 3, "every PGN to hold its moves", async {
        loop {
            let api = rig.serve.json("/api/boards").await;
            let complete = api.as_array().unwrap().iter().all(|b| {
                let n = b["Moves"].as_array().map_or(0, Vec::len);
                n > 0
                    && parse_pgn(b["Pgn"].as_str().unwrap_or(""))
                        .first()
                        .is_some_and(|g| g.sans.len() == n)
            });
            if complete {
                return api;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    // Table order: numbered boards by number, then by id.
    let mut expected: Vec<(u64, String, Vec<String>, String)> = boards
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            let n = b["Number"].as_u64().filter(|&n| n > 0).unwrap_or(u64::MAX);
            let moves = b["Moves"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m.as_str().unwrap().to_owned())
                .collect();
            (
                n,
                b["Id"].as_str().unwrap().to_owned(),
                moves,
                b["Name"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    expected.sort();
    let api_order: Vec<&str> = boards
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["Id"].as_str().unwrap())
        .collect();
    assert_eq!(
        api_order,
        expected.iter().map(|e| e.1.as_str()).collect::<Vec<_>>()
    );

    let res = reqwest::get(rig.serve.url("/pgn/all.pgn")).await.unwrap();
    assert_eq!(res.status().as_u16(), 200);
    assert!(
        res.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/x-chess-pgn")
    );
    let all = parse_pgn(&res.text().await.unwrap());
    assert_eq!(all.len(), 3, "{all:#?}");
    for (game, (_, id, moves, name)) in all.iter().zip(&expected) {
        let board_tag = game
            .tags
            .iter()
            .find(|(k, _)| k == "Board")
            .map(|(_, v)| v.as_str());
        assert_eq!(board_tag, Some(name.as_str()), "game of {id}: {game:?}");
        assert_eq!(&game.sans, moves, "game of {id}");
    }

    // One board's PGN is its Pgn property (which changes as the clock runs: compare when
    // two reads around it agree); an unknown one is a 404.
    within(WAIT * 2, "the board's PGN to be its Pgn property", async {
        loop {
            let (status, before) = rig.serve.get("/pgn/web_c2.pgn").await;
            assert_eq!(status, 200);
            let prop = rig.serve.json("/api/boards/web_c2").await["Pgn"]
                .as_str()
                .unwrap()
                .to_owned();
            let (_, after) = rig.serve.get("/pgn/web_c2.pgn").await;
            if before == after && before.trim_end() == prop.trim_end() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert_eq!(rig.serve.get("/pgn/web_c9.pgn").await.0, 404);
    assert_eq!(rig.serve.get("/pgn/web_c2.txt").await.0, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_fixed_paths_and_a_client_limit() {
    let rig = Rig::start(&["web.l"], &["--max-clients", "2"]).await;
    let base = rig.serve.base.clone();
    for method in ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"] {
        for path in [
            "/",
            "/api/boards",
            "/api/boards/web_l",
            "/api/events",
            "/pgn/all.pgn",
            "/nope",
        ] {
            let (status, text) = raw(&base, method, path).await;
            assert_eq!(status, 405, "{method} {path}: {text}");
            assert!(
                text.to_ascii_lowercase().contains("allow: get, head"),
                "{text}"
            );
            assert!(text.contains("read-only"), "{text}");
        }
    }
    let (status, text) = raw(&base, "HEAD", "/api/boards").await;
    assert_eq!(status, 200, "{text}");

    // Nothing outside the fixed set is served, however the path is spelt.
    for path in [
        "/static/../Cargo.toml",
        "/static/..%2f..%2fCargo.toml",
        "/static/%2e%2e/%2e%2e/etc/passwd",
        "/../../../../etc/passwd",
        "/static/app.js/../../Cargo.toml",
        "/static/",
        "/static/hall.html%00.js",
        "/board",
    ] {
        let (status, text) = raw(&base, "GET", path).await;
        assert_eq!(status, 404, "{path}: {text}");
        assert!(
            !text.contains("[package]") && !text.contains("root:"),
            "{path}: {text}"
        );
    }
    // The assets themselves are there.
    let (status, js) = rig.serve.get("/static/app.js").await;
    assert_eq!(status, 200);
    assert!(js.contains("EventSource"));

    // Two live streams are the limit; the third is refused clearly; a freed place is taken.
    let one = rig.serve.events("", None).await;
    let _two = rig.serve.events("", None).await;
    let res = reqwest::get(rig.serve.url("/api/events")).await.unwrap();
    assert_eq!(res.status().as_u16(), 503);
    assert!(res.headers().contains_key("retry-after"));
    let body = res.text().await.unwrap();
    assert!(
        body.contains("too many clients") && body.contains('2'),
        "{body}"
    );
    drop(one);
    within(WAIT, "a place to free up", async {
        loop {
            let res = reqwest::get(rig.serve.url("/api/events")).await.unwrap();
            if res.status().as_u16() == 200 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn follows_eboardd_restarting_and_the_bus_going_away() {
    let mut rig = Rig::start(&["web.f"], &[]).await;
    rig.wait_ready(&["web_f"]).await;
    let mut events = rig.serve.events("", None).await;

    rig.daemon.signal(nix::sys::signal::Signal::SIGTERM);
    rig.daemon.wait(WAIT).await;
    let down = events
        .until("SourceDown", |e| e.event == "SourceDown")
        .await;
    assert!(
        down.last().unwrap().data["reason"]
            .as_str()
            .unwrap()
            .contains("eboardd")
    );
    // The boards are still shown as last seen.
    let api = rig.serve.json("/api/boards").await;
    assert_eq!(api[0]["Id"], "web_f");

    rig.daemon = spawn_daemon(&rig.bus, rig.dir.path(), &rig.ports).await;
    events.until("SourceUp", |e| e.event == "SourceUp").await;
    rig.wait_connected("web_f").await;
    rig.scenario(0).run(&[moves(&["e4"])]).await.expect("move");
    events
        .until("a move after the restart", |e| is_move(e, "web_f", 1))
        .await;

    rig.bus.kill();
    let down = events
        .until("SourceDown for the bus", |e| e.event == "SourceDown")
        .await;
    let reason = down.last().unwrap().data["reason"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        reason.contains("lost") || reason.contains("reach"),
        "{reason}"
    );
    let (status, _) = rig.serve.get("/api/boards").await;
    assert_eq!(status, 200, "still serving without a bus");
    assert!(
        rig.serve
            .log
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("source down"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_port_in_use_is_a_clear_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = within(
        WAIT,
        "serve to give up",
        tokio::process::Command::new(env!("CARGO_BIN_EXE_eboardctl"))
            .args([
                "--bus",
                "unix:path=/nonexistent/bus",
                "serve",
                "--listen",
                &addr,
            ])
            .output(),
    )
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("cannot listen on {addr}")), "{err}");
    // A malformed address is bad usage.
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_eboardctl"))
        .args(["serve", "--listen", "localhost:http"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
