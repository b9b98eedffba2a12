//! `eboardctl livechess` as LiveChess's clients use it, against the real eboardd with
//! simulated boards on a private bus: every object's keys are the contract's (section 8),
//! the feed follows moves, clocks and the sensed placement, `setup` restarts the game and
//! `flip` shows in `flipped` (with `--allow-setup`; without, both are refused and the game
//! untouched), bad requests are named errors on a connection that stays open,
//! pages from foreign origins are refused at the handshake, and the REST side shows a round
//! set by `eboardctl pairings`.

mod common;
mod ctl_support;
mod livechess_support;

use common::rig::moves;
use ctl_support::ctl;
use livechess_support::*;
use serde_json::{Value, json};

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_calls_feeds_and_errors_follow_the_contract() {
    let rig = Rig::start(2, &["--allow-setup"]).await;
    let boards = rig.livechess.wait_active(2).await;
    let mut ws = rig.program().await;

    // eboards: table order (both connected), the keys exact, the id echoed as a number.
    let answer = ws.call(1, "eboards", Value::Null).await;
    assert_keys("call answer", &answer, CALL);
    assert_eq!(answer["response"], "call");
    assert!(answer["id"].is_u64() && answer["id"] == 1, "{answer}");
    assert!(answer["time"].is_u64());
    let list = answer["param"].as_array().expect("an array");
    assert_eq!(list.len(), 2);
    for b in list {
        check_eboard(b);
        assert_eq!(b["state"], "ACTIVE");
        assert_eq!(b["battery"], Value::Null);
        assert_eq!(b["flipped"], false);
    }
    assert_eq!(list[0]["source"], "lc1", "table 1 first: {boards}");
    let serial = list[0]["serialnr"].as_str().unwrap().to_owned();
    assert!(!serial.is_empty());

    // sources.
    let sources = ws.call(2, "sources", Value::Null).await;
    for s in sources["param"].as_array().unwrap() {
        assert_keys("sources entry", s, SOURCE);
        assert_eq!(s["type"], "serial");
        assert_eq!(s["active"], true);
    }

    // Errors keep the connection open, with the request's id.
    let cases = [
        ("{not json", Value::Null, "not JSON"),
        (r#"{"id":30,"call":"dance"}"#, json!(30), "unknown call"),
        (
            r#"{"id":31,"call":"subscribe","param":{"feed":"eboardevent","id":9,"param":{"serialnr":"nope"}}}"#,
            json!(31),
            "no board with serial number",
        ),
        (
            r#"{"id":32,"call":"call","param":{"id":9,"method":"setup","param":{"fen":"x"}}}"#,
            json!(32),
            "no feed 9",
        ),
        (
            r#"{"id":33,"call":"unsubscribe","param":{"id":9}}"#,
            json!(33),
            "no feed 9",
        ),
    ];
    for (text, id, words) in cases {
        let err = ws.request(text, &id).await;
        assert_keys("error", &err, CALL);
        assert_eq!(err["response"], "error", "{text}");
        assert_keys("error param", &err["param"], &["message"]);
        let message = err["param"]["message"].as_str().unwrap();
        assert!(message.contains(words), "{text}: {message}");
    }
    // A request longer than one read of the socket (4 KiB) is still read whole.
    let long = format!(
        r#"{{"id":34,"call":"dance","param":"{}"}}"#,
        "x".repeat(20_000)
    );
    let err = ws.request(&long, &json!(34)).await;
    assert_eq!(err["response"], "error", "{err}");
    let message = err["param"]["message"].as_str().unwrap();
    assert!(message.contains("unknown call"), "{message}");

    // subscribe as the lichess connector does: null, then at once the whole state.
    let sub = ws.subscribe(3, 1, &serial).await;
    assert_eq!(sub["response"], "call", "{sub}");
    assert_eq!(sub["param"], Value::Null);
    let first = ws.next_feed().await;
    assert_keys("feed message", &first, CALL);
    assert_eq!(first["id"], 1);
    let event = &first["param"];
    assert_keys("EVENT", event, EVENT);
    assert_keys("CLOCK", &event["clock"], CLOCK);
    assert_eq!(event["serialnr"], serial.as_str());
    assert_eq!(event["start"], START);
    assert_eq!(event["san"], json!([]));
    assert_eq!(event["board"], START.split(' ').next().unwrap());

    // Moves on the board reach the feed; later messages leave out what did not change.
    let mut sc = rig.scenario(0);
    sc.run(&[moves(&["e4", "e5", "Nf3"])]).await.expect("moves");
    let seen = ws
        .feed_until("the three moves", |m| {
            m["param"]["san"] == json!(["e4", "e5", "Nf3"])
        })
        .await;
    for m in &seen {
        let e = &m["param"];
        for k in ["serialnr", "flipped"] {
            assert!(e.get(k).is_some(), "{k} in every message: {e}");
        }
        for k in livechess_support::keys(e) {
            assert!(EVENT.contains(&k.as_str()), "unknown key {k}: {e}");
        }
        if let Some(clock) = e.get("clock").filter(|c| !c.is_null()) {
            assert_keys("CLOCK", clock, CLOCK);
        }
    }
    assert!(
        seen.iter().any(|m| m["param"].get("board").is_none()),
        "some message leaves out the unchanged board"
    );
    // `san` goes out only when the moves changed: each list is one move longer.
    let lists: Vec<&Value> = seen.iter().filter_map(|m| m["param"].get("san")).collect();
    assert!(
        lists.windows(2).all(|w| w[0] != w[1]),
        "a list sent twice: {lists:?}"
    );
    // Black's clock runs after White's Nf3 and its press: the clock follows.
    ws.feed_until("black's clock running", |m| {
        m["param"]["clock"]["run"] == false
    })
    .await;

    // A lifted piece shows in `board`, `match` follows InSync, and both come back when the
    // piece is put back.
    let sim = &rig.sims[0];
    sim.lift(shakmaty::Square::B8).await.expect("lift");
    let lifted = ws
        .feed_until("the lifted knight", |m| {
            m["param"]["board"] == "r1bqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R"
        })
        .await;
    // `match` goes out when it changes: with the lifted knight or just after.
    if !lifted.iter().any(|m| m["param"]["match"] == false) {
        ws.feed_until("match false", |m| m["param"]["match"] == false)
            .await;
    }
    let knight = shakmaty::Piece::from_char('n').unwrap();
    sim.place(shakmaty::Square::B8, knight)
        .await
        .expect("put back");
    let back = ws
        .feed_until("the knight back", |m| m["param"]["match"] == true)
        .await;
    let last_board = back.iter().rev().find_map(|m| m["param"]["board"].as_str());
    assert_eq!(
        last_board,
        Some("rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R")
    );

    // flip shows in flipped; board stays from White's side.
    let flip = ws.call_method(4, "flip", json!({"flip": true})).await;
    assert_eq!(flip["response"], "call", "{flip}");
    let flipped = ws
        .feed_until("flipped", |m| m["param"]["flipped"] == true)
        .await;
    assert!(flipped.last().unwrap()["param"].get("board").is_none());
    let listed = ws.call(5, "eboards", Value::Null).await;
    assert_eq!(listed["param"][0]["flipped"], true);

    // setup restarts the game from the FEN: start = FEN, san = [].
    let fen = "4k3/8/8/8/8/8/8/4K2R w K - 0 1";
    let setup = ws.call_method(6, "setup", json!({"fen": fen})).await;
    assert_eq!(setup["response"], "call", "{setup}");
    let restarted = ws
        .feed_until("the game from the FEN", |m| m["param"]["start"] == fen)
        .await;
    let e = &restarted.last().unwrap()["param"];
    assert_eq!(e["san"], json!([]));
    assert_eq!(e["match"], false, "the pieces do not stand as the FEN says");
    // A FEN the daemon refuses is an error with its message; the connection stays open.
    let bad = ws.call_method(7, "setup", json!({"fen": "8/8 w"})).await;
    assert_eq!(bad["response"], "error", "{bad}");
    assert!(
        bad["param"]["message"]
            .as_str()
            .unwrap()
            .contains("InvalidFen"),
        "{bad}"
    );

    // unsubscribe: null, and no more feed for it.
    let unsub = ws.call(8, "unsubscribe", json!({"id": 1})).await;
    assert_eq!(unsub["param"], Value::Null, "{unsub}");
    let again = ws.call(9, "eboards", Value::Null).await;
    assert_eq!(again["id"], 9);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_from_foreign_origins_are_refused_at_the_handshake() {
    let rig = Rig::start(1, &["--allow-origin", "http://127.0.0.1:9"]).await;
    for origin in [
        "https://lichess.org",
        "https://www.chess.com",
        "http://127.0.0.1:9",
    ] {
        let mut ws = rig
            .livechess
            .connect(Some(origin))
            .await
            .unwrap_or_else(|s| panic!("{origin} refused with {s}"));
        assert_eq!(ws.call(1, "eboards", Value::Null).await["response"], "call");
    }
    for origin in [
        "https://evil.example",
        "http://127.0.0.1:10",
        "null",
        "https://lichess.org.evil",
    ] {
        let refused = rig.livechess.connect(Some(origin)).await;
        assert_eq!(refused.err(), Some(403), "{origin}");
    }
    // The WebSocket path without an upgrade, and unknown paths: 404 with a message.
    for path in [
        "/api/v1.0",
        "/api/v1.0/nothing",
        "/",
        "/api/v1.0/tournament/x",
    ] {
        let (status, body) = rig.livechess.get(path).await;
        assert_eq!(status, 404, "{path}");
        assert_keys("404", &body, &["message"]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_side_shows_the_round_set_by_pairings() {
    let rig = Rig::start(2, &[]).await;
    let listed = rig.livechess.wait_active(2).await;
    let pairings = rig.dir.path().join("round.csv");
    std::fs::write(
        &pairings,
        "board,white,black,round,event,date,white_fide_id\n\
         1,\"Carlsen, Magnus\",\"Nepomniachtchi, Ian\",3,City Open,2026.12.01,1503014\n\
         2,\"Ding, Liren\",Gukesh,3,City Open,2026.12.01,\n",
    )
    .unwrap();
    let out = ctl(&rig.bus.address, &["pairings", pairings.to_str().unwrap()]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let mut sc = rig.scenario(0);
    sc.run(&[moves(&["d4", "d5", "c4", "e6"])])
        .await
        .expect("moves");

    // /eboards.
    for b in listed.as_array().unwrap() {
        check_eboard(b);
    }
    // /tournaments: one, named after the Event, with the highest round.
    let list = within_tags(
        &rig,
        |v| v[0]["description"] == "City Open",
        "/api/v1.0/tournaments",
    )
    .await;
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_keys(
        "tournaments entry",
        &list[0],
        &["uuid", "description", "rounds"],
    );
    assert_eq!(list[0]["rounds"], 3);
    let uuid = list[0]["uuid"].as_str().unwrap().to_owned();

    let t = rig
        .livechess
        .json(&format!("/api/v1.0/tournament/{uuid}"))
        .await;
    assert_keys(
        "tournament",
        &t,
        &[
            "uuid",
            "name",
            "description",
            "location",
            "country",
            "rounds",
            "eboards",
        ],
    );
    assert_eq!(t["uuid"], uuid.as_str());
    assert_eq!(t["name"], "City Open");
    assert_eq!(t["rounds"], 3);
    assert_eq!(
        t["eboards"],
        json!([listed[0]["serialnr"], listed[1]["serialnr"]]),
        "eboards[k] is table k+1"
    );

    // Round 3 is index 2; indices before it hold no game now, past it are 404.
    let round = rig
        .livechess
        .json(&format!("/api/v1.0/round/{uuid}/2"))
        .await;
    assert_keys("round", &round, &["nr", "date", "pairings"]);
    assert_eq!(round["nr"], 3);
    assert_eq!(round["date"], "2026.12.01");
    let pairings = round["pairings"].as_array().unwrap();
    assert_eq!(pairings.len(), 2);
    for (i, p) in pairings.iter().enumerate() {
        assert_keys(
            "pairing",
            p,
            &["nr", "uuid", "white", "black", "live", "result"],
        );
        assert_eq!(p["nr"], i as u64 + 1);
        assert_keys("PLAYER", &p["white"], PLAYER);
        assert_keys("PLAYER", &p["black"], PLAYER);
        assert_eq!(p["result"], Value::Null);
    }
    assert_eq!(pairings[0]["white"]["lname"], "Carlsen");
    assert_eq!(pairings[0]["white"]["fname"], "Magnus");
    assert_eq!(pairings[0]["white"]["fideid"], "1503014");
    assert_eq!(pairings[0]["black"]["lname"], "Nepomniachtchi");
    assert_eq!(pairings[1]["black"]["lname"], "Gukesh");
    assert_eq!(pairings[1]["black"]["fname"], Value::Null);
    assert_eq!(pairings[0]["live"], true);
    assert_eq!(
        rig.livechess
            .json(&format!("/api/v1.0/round/{uuid}/0"))
            .await["pairings"],
        json!([])
    );
    let (status, body) = rig
        .livechess
        .get(&format!("/api/v1.0/round/{uuid}/3"))
        .await;
    assert_eq!(status, 404, "{body}");

    // The game of table 1: final moves with the mover's seconds from %clk.
    let game_path = format!("/api/v1.0/game/{}", pairings[0]["uuid"].as_str().unwrap());
    let game = within_tags(
        &rig,
        |g| g["moves"].as_array().unwrap().len() == 4,
        &game_path,
    )
    .await;
    assert_keys(
        "game",
        &game,
        &["chess960", "result", "comment", "clock", "moves"],
    );
    assert_eq!(game["chess960"], 518);
    assert_eq!(game["result"], Value::Null);
    assert_keys("CLOCK", &game["clock"], CLOCK);
    let moves: Vec<&str> = game["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    for (m, san) in moves.iter().zip(["d4", "d5", "c4", "e6"]) {
        let (s, secs) = m
            .split_once(' ')
            .unwrap_or_else(|| panic!("SAN and seconds: {m}"));
        assert_eq!(s, san);
        assert!(secs.parse::<u64>().is_ok(), "{m}");
    }
    let (status, _) = rig
        .livechess
        .get("/api/v1.0/game/00000000-0000-0000-0000-000000000000")
        .await;
    assert_eq!(status, 404);
}

/// GETs `path` until `pred` holds (the bridge follows the bus a moment later).
async fn within_tags(rig: &Rig, pred: impl Fn(&Value) -> bool, path: &str) -> Value {
    common::within(common::WAIT * 3, path, async {
        loop {
            let v = rig.livechess.json(path).await;
            if pred(&v) {
                return v;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_connection_holds_a_bounded_number_of_feeds() {
    let rig = Rig::start(1, &[]).await;
    let boards = rig.livechess.wait_active(1).await;
    let serial = boards[0]["serialnr"].as_str().unwrap().to_owned();
    let mut ws = rig.program().await;
    for feed in 0..1024u64 {
        let answer = ws.subscribe(10_000 + feed, feed, &serial).await;
        assert_eq!(answer["response"], "call", "feed {feed}: {answer}");
    }
    // The 1025th is refused with words, and the connection stays open and answers.
    let refused = ws.subscribe(20_000, 5_000, &serial).await;
    assert_eq!(refused["response"], "error", "{refused}");
    let message = refused["param"]["message"].as_str().unwrap();
    assert!(message.contains("at most 1024 feeds"), "{message}");
    // Subscribing again under a feed id it holds replaces that feed, so is not refused.
    let again = ws.subscribe(20_001, 7, &serial).await;
    assert_eq!(again["response"], "call", "{again}");
    let answer = ws.call(20_002, "eboards", Value::Null).await;
    assert_eq!(answer["response"], "call", "{answer}");
}

/// Without `--allow-setup` (as `eboardd-livechess.service` runs), `setup` and `flip` are
/// refused with an error that says so, and the game goes on untouched: the bus policy is the
/// only way to steer a board.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_allow_setup_setup_and_flip_are_refused_and_the_game_untouched() {
    let rig = Rig::start(1, &[]).await;
    let boards = rig.livechess.wait_active(1).await;
    let serial = boards[0]["serialnr"].as_str().unwrap().to_owned();
    let mut ws = rig.program().await;
    let sub = ws.subscribe(1, 1, &serial).await;
    assert_eq!(sub["response"], "call", "{sub}");
    let mut sc = rig.scenario(0);
    sc.run(&[moves(&["e4", "e5"])]).await.expect("moves");
    ws.feed_until("the two moves", |m| {
        m["param"]["san"] == json!(["e4", "e5"])
    })
    .await;
    let on_the_bus = || async {
        let b = common::proxies::board(&rig.conn, "lc1").await;
        (b.moves().await.unwrap(), b.fen().await.unwrap())
    };
    let before = on_the_bus().await;
    assert_eq!(before.0, ["e4", "e5"]);

    let fen = "4k3/8/8/8/8/8/8/4K2R w K - 0 1";
    for (id, method, param) in [
        (2, "setup", json!({"fen": fen})),
        (3, "flip", json!({"flip": true})),
    ] {
        let refused = ws.call_method(id, method, param).await;
        assert_eq!(refused["response"], "error", "{refused}");
        let message = refused["param"]["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("{method} is off"))
                && message.contains("untouched")
                && message.contains("--allow-setup"),
            "{message}"
        );
    }
    // The game is as it was: the same moves and start on the bus, and in what the bridge says.
    let listed = ws.call(4, "eboards", Value::Null).await;
    assert_eq!(listed["param"][0]["flipped"], false, "{listed}");
    assert_eq!(on_the_bus().await, before);
    sc.run(&[moves(&["Nf3"])]).await.expect("a move after");
    let after = ws
        .feed_until("the game going on", |m| {
            m["param"]["san"] == json!(["e4", "e5", "Nf3"])
        })
        .await;
    for m in &after {
        assert_ne!(m["param"]["start"], fen, "the game was not restarted: {m}");
        assert_ne!(
            m["param"]["flipped"], true,
            "the board was not flipped: {m}"
        );
    }
}

/// A Millennium ChessLink board in the hall, key by key in every object of section 8 that
/// names a board: it is an EBOARD like a DGT board (`serialnr` its name, as it reports no
/// serial number; `source` its port's file name; `battery` and `clock` null: it has neither),
/// a `sources` entry, a feed whose `clock` is null and whose `san` follows its moves, a seat
/// in the tournament and its round, and a game with no clock and its moves as bare SAN (no
/// `%clk` to give seconds from).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chesslink_board_is_listed_key_by_key_without_clock_or_battery() {
    let (rig, cl) = Rig::start_with_chesslink(&[]).await;
    let placement = START.split(' ').next().unwrap();
    let cl_port = rig.dir.path().join("cl").display().to_string();
    // Both boards up, the ChessLink board's pieces read.
    let listed = within_tags(
        &rig,
        |v| {
            v.as_array().is_some_and(|l| {
                l.len() == 2
                    && l.iter().all(|b| b["state"] == "ACTIVE")
                    && l[1]["board"] == placement
                    && !l[0]["clock"].is_null()
            })
        },
        "/api/v1.0/eboards",
    )
    .await;
    let want = json!({
        "serialnr": "cl",
        "source": "cl",
        "state": "ACTIVE",
        "battery": null,
        "comment": null,
        "board": placement,
        "flipped": false,
        "clock": null,
    });
    check_eboard(&listed[1]);
    assert_eq!(listed[1], want, "REST eboards, table 2");
    assert_eq!(listed[0]["source"], "lc1", "the DGT board at table 1 first");

    let mut ws = rig.program().await;
    let answer = ws.call(1, "eboards", Value::Null).await;
    assert_eq!(answer["response"], "call", "{answer}");
    let list = answer["param"].as_array().expect("an array");
    assert_eq!(list.len(), 2);
    check_eboard(&list[1]);
    assert_eq!(list[1], want, "WebSocket eboards, table 2");

    let sources = ws.call(2, "sources", Value::Null).await;
    let entry = sources["param"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "cl")
        .cloned()
        .unwrap_or_else(|| panic!("no source for cl: {sources}"));
    assert_keys("sources entry", &entry, SOURCE);
    assert_eq!(entry["type"], "serial");
    assert_eq!(entry["device"], cl_port.as_str());
    assert_eq!(entry["present"], true);
    assert_eq!(entry["active"], true);
    assert!(
        entry["status"]
            .as_str()
            .is_some_and(|s| s.starts_with("connected, ")),
        "{entry}"
    );

    // The feed: the whole state at once, no clock; then the moves made on the board.
    let sub = ws.subscribe(3, 1, "cl").await;
    assert_eq!(sub["response"], "call", "{sub}");
    let first = ws.next_feed().await;
    let event = &first["param"];
    assert_keys("EVENT", event, EVENT);
    assert_eq!(
        *event,
        json!({
            "serialnr": "cl",
            "flipped": false,
            "board": placement,
            "clock": null,
            "start": START,
            "san": [],
            "match": true,
        })
    );
    let game = eboard_sim::parse_games("1. e4 e5 2. Nf3 Nc6 *").remove(0);
    cl.play_game(&game, 3, eboard_sim::Noise::Clean)
        .await
        .expect("the moves on the ChessLink board");
    let seen = ws
        .feed_until("the four moves", |m| {
            m["param"]["san"] == json!(["e4", "e5", "Nf3", "Nc6"])
        })
        .await;
    for m in &seen {
        let e = &m["param"];
        assert_eq!(e["serialnr"], "cl", "{e}");
        for k in keys(e) {
            assert!(EVENT.contains(&k.as_str()), "unknown key {k}: {e}");
        }
        if let Some(clock) = e.get("clock") {
            assert_eq!(*clock, Value::Null, "no clock, ever: {e}");
        }
    }
    let after = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R";
    let listed = within_tags(&rig, |v| v[1]["board"] == after, "/api/v1.0/eboards").await;
    assert_eq!(
        listed[1],
        json!({"serialnr": "cl", "source": "cl", "state": "ACTIVE", "battery": null,
               "comment": null, "board": after, "flipped": false, "clock": null})
    );

    // The REST side: its seat at table 2, its pairing live, its game without a clock.
    let pairings = rig.dir.path().join("round.csv");
    std::fs::write(
        &pairings,
        "board,white,black,round,event,date\n\
         1,\"Carlsen, Magnus\",\"Caruana, Fabiano\",1,Club Night,2026.12.05\n\
         2,\"Polgar, Judit\",\"Short, Nigel\",1,Club Night,2026.12.05\n",
    )
    .unwrap();
    let out = ctl(&rig.bus.address, &["pairings", pairings.to_str().unwrap()]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let list = within_tags(
        &rig,
        |v| v[0]["description"] == "Club Night",
        "/api/v1.0/tournaments",
    )
    .await;
    let uuid = list[0]["uuid"].as_str().unwrap().to_owned();
    let t = rig
        .livechess
        .json(&format!("/api/v1.0/tournament/{uuid}"))
        .await;
    assert_eq!(t["eboards"], json!([listed_serial(&rig, 0).await, "cl"]));
    let round = rig
        .livechess
        .json(&format!("/api/v1.0/round/{uuid}/0"))
        .await;
    let pairing = &round["pairings"][1];
    assert_keys(
        "pairing",
        pairing,
        &["nr", "uuid", "white", "black", "live", "result"],
    );
    assert_eq!(pairing["nr"], 2);
    assert_eq!(pairing["live"], true);
    assert_eq!(pairing["result"], Value::Null);
    assert_eq!(pairing["white"]["lname"], "Polgar");
    let game_path = format!("/api/v1.0/game/{}", pairing["uuid"].as_str().unwrap());
    let game = within_tags(
        &rig,
        |g| g["moves"].as_array().is_some_and(|m| m.len() == 4),
        &game_path,
    )
    .await;
    assert_eq!(
        game,
        json!({"chess960": 518, "result": null, "comment": null, "clock": null,
               "moves": ["e4", "e5", "Nf3", "Nc6"]})
    );
    cl.shutdown().await;
}

/// The `serialnr` the bridge lists for table `i + 1`.
async fn listed_serial(rig: &Rig, i: usize) -> Value {
    rig.livechess.json("/api/v1.0/eboards").await[i]["serialnr"].clone()
}
