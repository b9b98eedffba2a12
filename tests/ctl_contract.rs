//! eboardctl end to end against the D-Bus contract: the real binary, a private bus, and a
//! stand-in that serves the contract's API exactly (tests/ctl_support/contract.rs). Covers
//! list, status, pgn (re-parsed), --json (parsed), every arbiter verb with its error path,
//! the daemon-not-running message, and watch in line, JSON and full-screen (tmux) modes.

mod common;
mod ctl_support;

use common::Bus;
use ctl_support::contract::{Daemon, path_of};
use ctl_support::{Tmux, Watch, ctl, require_tmux};
use serde_json::Value;
use shakmaty::fen::Fen;
use shakmaty::{EnPassantMode, Position};

async fn setup() -> (tempfile::TempDir, Bus, Daemon) {
    let dir = tempfile::tempdir().expect("temp dir");
    let bus = Bus::start(dir.path()).await;
    let daemon = Daemon::start(
        &bus.address,
        &[("board-1", "/dev/ttyACM0"), ("board 2", "/dev/ttyUSB1")],
    )
    .await;
    (dir, bus, daemon)
}

fn json(out: &str) -> Value {
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

/// Plays a PGN's movetext from its start (or its FEN tag) and returns the final FEN and the
/// SAN moves: a re-parse (`pgn-reader`, through `sim::pgn`) that fails on any move the PGN
/// got wrong.
fn replay_pgn(pgn: &str) -> (String, Vec<String>) {
    let games = eboard_sim::parse_games(pgn);
    let game = games.first().expect("the PGN holds a game");
    let mut pos = game.start_position().expect("FEN tag position");
    for m in game
        .moves()
        .unwrap_or_else(|e| panic!("the PGN's moves do not replay: {e:#}"))
    {
        pos.play_unchecked(m);
    }
    (
        Fen::from_position(&pos, EnPassantMode::Legal).to_string(),
        game.sans.clone(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_status_and_pgn() {
    let (_dir, bus, daemon) = setup().await;
    for san in ["e4", "e5", "Nf3", "Nc6"] {
        daemon.play("board-1", san).await;
    }
    let a = bus.address.as_str();

    let out = ctl(a, &["list"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{out:?}");
    assert!(lines[0].starts_with("board 2 "), "{out:?}");
    assert!(lines[1].starts_with("board-1 "), "{out:?}");
    for field in ["/dev/ttyACM0", "connected", "playing", "4 half-moves"] {
        assert!(lines[1].contains(field), "{field} missing: {out:?}");
    }

    let out = ctl(a, &["status", "board-1"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    for expected in [
        "board-1 (board_1)  port /dev/ttyACM0  connected",
        "8 │ ♜ · ♝ ♛ ♚ ♝ ♞ ♜ │",
        "3 │ · · · · · ♘ · · │",
        "White Anna  0:05:00  (running)",
        "Black Ben  0:05:00",
        "To move  white",
        "Moves  1. e4 e5 2. Nf3 Nc6",
        "Claims  none",
        "Illegal moves  white 0, black 0",
        "Result  *",
    ] {
        assert!(
            out.stdout.contains(expected),
            "{expected:?} missing:\n{}",
            out.stdout
        );
    }

    // By object id too, and a name with a space.
    let out = ctl(a, &["status", "board_2"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.starts_with("board 2 (board_2)"), "{out:?}");

    let out = ctl(a, &["--json", "status", "board-1"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let v = json(&out.stdout);
    assert_eq!(v["Name"], "board-1");
    assert_eq!(v["Id"], "board_1");
    assert_eq!(v["Path"], path_of("board-1"));
    assert_eq!(v["Moves"], serde_json::json!(["e4", "e5", "Nf3", "Nc6"]));
    assert_eq!(
        v["IllegalMoves"],
        serde_json::json!({"white": 0, "black": 0})
    );
    assert_eq!(v["Claims"], serde_json::json!([]));
    assert_eq!(v["WhiteTimeMs"], 300_000);
    assert_eq!(v["Turn"], "white");
    let fen = v["Fen"].as_str().expect("Fen").to_owned();

    let out = ctl(a, &["--json", "list"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let all = json(&out.stdout);
    assert_eq!(all.as_array().map(Vec::len), Some(2));

    let out = ctl(a, &["pgn", "board-1"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("[White \"Anna\"]"), "{out:?}");
    let (final_fen, moves) = replay_pgn(&out.stdout);
    assert_eq!(moves, vec!["e4", "e5", "Nf3", "Nc6"]);
    assert_eq!(final_fen, fen);

    let out = ctl(a, &["status", "board-9"]).await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .contains("no board \"board-9\"; boards: board 2, board-1"),
        "{out:?}"
    );
}

/// Runs a verb that the daemon must refuse with `error`.
async fn refused(address: &str, args: &[&str], error: &str) {
    let out = ctl(address, args).await;
    assert_eq!(out.code, 1, "{args:?}: {out:?}");
    assert!(
        out.stderr
            .contains(&format!("org.eboardd.Bridge1.Error.{error}: ")),
        "{args:?}: {out:?}"
    );
    assert!(out.stdout.is_empty(), "{args:?}: {out:?}");
}

/// Runs a verb that must succeed.
async fn accepted(address: &str, args: &[&str]) -> String {
    let out = ctl(address, args).await;
    assert_eq!(out.code, 0, "{args:?}: {out:?}");
    out.stdout
}

async fn status_json(address: &str, board: &str) -> Value {
    let out = ctl(address, &["--json", "status", board]).await;
    assert_eq!(out.code, 0, "{out:?}");
    json(&out.stdout)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arbiter_verbs_and_their_errors() {
    let (_dir, bus, daemon) = setup().await;
    let a = bus.address.as_str();

    refused(a, &["takeback", "board-1"], "NothingToTakeBack").await;
    daemon.play("board-1", "e4").await;
    let said = accepted(a, &["takeback", "board-1"]).await;
    assert_eq!(said.trim(), "board-1: last move taken back");
    assert_eq!(
        status_json(a, "board-1").await["Moves"],
        serde_json::json!([])
    );

    refused(a, &["set-position", "board-1", "not a fen"], "InvalidFen").await;
    let fen = "8/8/8/4k3/8/8/4P3/4K3 w - - 0 40";
    // The FEN's fields may come as separate words.
    let words: Vec<&str> = fen.split(' ').collect();
    let mut args = vec!["set-position", "board-1"];
    args.extend(&words);
    accepted(a, &args).await;
    assert_eq!(status_json(a, "board-1").await["Fen"], fen);

    refused(a, &["tags", "board-1", "Bad Key=x"], "InvalidArgument").await;
    refused(
        a,
        &["tags", "board-1", "White=say \"hi\""],
        "InvalidArgument",
    )
    .await;
    accepted(a, &["tags", "board-1", "White=Carla", "Round=3"]).await;
    let pgn = ctl(a, &["pgn", "board-1"]).await.stdout;
    assert!(pgn.contains("[White \"Carla\"]"), "{pgn}");
    assert!(pgn.contains("[Round \"3\"]"), "{pgn}");
    // Not KEY=VALUE: bad usage, caught before the daemon is asked.
    let out = ctl(a, &["tags", "board-1", "White"]).await;
    assert_eq!(out.code, 2, "{out:?}");

    refused(a, &["rules", "board-1", "bullet"], "InvalidArgument").await;
    accepted(a, &["rules", "board-1", "blitz"]).await;
    assert_eq!(status_json(a, "board-1").await["Rules"], "blitz");

    refused(
        a,
        &["accept-claim", "board-1", "white", "threefold-repetition"],
        "ClaimNotAvailable",
    )
    .await;
    daemon
        .offer_claim("board-1", "white", "fifty-moves", "e2e3")
        .await;
    let text = ctl(a, &["status", "board-1"]).await.stdout;
    assert!(
        text.contains("Claim  white may claim fifty-moves (e2e3)"),
        "{text}"
    );
    // The detail is part of the claim: without it, it is not the available claim.
    refused(
        a,
        &["accept-claim", "board-1", "white", "fifty-moves"],
        "ClaimNotAvailable",
    )
    .await;
    accepted(
        a,
        &["accept-claim", "board-1", "white", "fifty-moves", "e2e3"],
    )
    .await;
    let v = status_json(a, "board-1").await;
    assert_eq!(v["Result"], "1/2-1/2");
    assert_eq!(v["Termination"], "claim");

    let said = accepted(a, &["new-game", "board-1"]).await;
    assert_eq!(said.trim(), "board-1: new game started");
    assert_eq!(status_json(a, "board-1").await["State"], "playing");

    refused(a, &["adjudicate", "board-1", "2-0"], "InvalidArgument").await;
    accepted(
        a,
        &[
            "adjudicate",
            "board-1",
            "1-0",
            "Black",
            "left",
            "the",
            "hall",
        ],
    )
    .await;
    let text = ctl(a, &["status", "board-1"]).await.stdout;
    assert!(text.contains("Result  1-0 (adjudication)"), "{text}");
    let pgn = ctl(a, &["pgn", "board-1"]).await.stdout;
    assert!(pgn.contains("Black left the hall"), "{pgn}");

    // A verb on a board that does not exist.
    let out = ctl(a, &["new-game", "board-9"]).await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("no board \"board-9\""), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_daemon_is_named_as_such() {
    let dir = tempfile::tempdir().expect("temp dir");
    let bus = Bus::start(dir.path()).await;
    for args in [
        vec!["list"],
        vec!["status", "board-1"],
        vec!["new-game", "board-1"],
        vec!["watch"],
    ] {
        let out = ctl(&bus.address, &args).await;
        assert_eq!(out.code, 1, "{args:?}: {out:?}");
        assert!(
            out.stderr.contains("eboardd is not running on the bus at"),
            "{args:?}: {out:?}"
        );
    }
    // An unreachable bus is also exit 1, with the reason.
    let gone = format!("unix:path={}/nothing-here", dir.path().display());
    let out = ctl(&gone, &["list"]).await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("cannot reach the bus at"), "{out:?}");
    // A malformed --bus is bad usage.
    let out = ctl("sytem", &["list"]).await;
    assert_eq!(out.code, 2, "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_prints_one_line_per_event() {
    let (_dir, bus, daemon) = setup().await;
    let mut w = Watch::spawn(&bus.address, &["watch"]);
    // The snapshot comes in name order: "board 2" sorts before "board-1".
    w.until("board-1's first line", |l| {
        l.contains(" board-1 board: playing")
    })
    .await;
    assert!(
        w.seen[0].contains(" board 2 board: playing, 0 half-moves, /dev/ttyUSB1 connected"),
        "{:#?}",
        w.seen
    );

    daemon.play("board-1", "e4").await;
    w.until("the move", |l| {
        l.contains(" board-1 MovePlayed 1. e4 (e2e4) white 0:05:00 black 0:05:00")
    })
    .await;
    daemon
        .illegal_placement(
            "board-1",
            "Ke8-e6",
            "rnbq1bnr/pppppppp/4k3/8/4P3/8/PPPP1PPP/RNBQKBNR",
        )
        .await;
    w.until("the illegal placement", |l| {
        l.contains(" board-1 IllegalPlacement black to move: Ke8-e6")
    })
    .await;
    daemon.complete_illegal("board-1").await;
    w.until("the completed illegal move", |l| {
        l.contains(" board-1 IllegalMoveCompleted black #1: Ke8-e6")
    })
    .await;
    daemon.flag("board 2", "white").await;
    w.until("the flag", |l| l.contains(" board 2 FlagFell white"))
        .await;
    w.until("the end", |l| {
        l.contains(" board 2 GameEnded 0-1 time-forfeit")
    })
    .await;
    daemon.add("board-3", "/dev/ttyACM3").await;
    w.until("the new board", |l| l.contains(" board-3 board: playing"))
        .await;
    // Every line is one line: property changes too (Pgn is summarised, never multi-line).
    assert!(
        w.seen
            .iter()
            .any(|l| l.contains(" board-1 changed ") && l.contains("Pgn=<")),
        "{:#?}",
        w.seen
    );
    assert_eq!(w.interrupt().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_json_follows_only_the_boards_asked_for() {
    let (_dir, bus, daemon) = setup().await;
    let mut w = Watch::spawn(&bus.address, &["--json", "watch", "board-1"]);
    let first = json(&w.until("the snapshot", |l| l.contains("\"Board\"")).await);
    assert_eq!(first["board"], "board-1");
    assert_eq!(first["properties"]["Port"], "/dev/ttyACM0");

    daemon.play("board 2", "d4").await;
    daemon.play("board-1", "c4").await;
    let line = w.until("the move", |l| l.contains("\"MovePlayed\"")).await;
    let v = json(&line);
    assert_eq!(v["board"], "board-1");
    assert_eq!(v["path"], path_of("board-1"));
    assert_eq!(v["ply"], 1);
    assert_eq!(v["san"], "c4");
    assert_eq!(v["uci"], "c2c4");
    assert_eq!(v["white_ms"], 300_000);
    assert!(v["time_ms"].as_u64().is_some());
    let changed = json(
        &w.until("the Moves change", |l| l.contains("\"Moves\""))
            .await,
    );
    assert_eq!(changed["event"], "PropertiesChanged");
    assert_eq!(changed["changed"]["Moves"], serde_json::json!(["c4"]));
    // Nothing about board 2 was printed, and every line was JSON.
    for l in &w.seen {
        let v = json(l);
        assert_ne!(v["board"], "board 2", "{l}");
    }

    // Asking for a board that does not exist is an error, not an endless wait.
    let out = ctl(&bus.address, &["watch", "board-9"]).await;
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(w.interrupt().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_full_screen_shows_moves_and_alerts() {
    if !require_tmux() {
        return;
    }
    let (dir, bus, daemon) = setup().await;
    let command = vec![
        ctl_support::eboardctl().to_owned(),
        "--bus".to_owned(),
        bus.address.clone(),
        "watch".to_owned(),
    ];
    let tmux = Tmux::start(dir.path(), 100, 50, &command).await;
    tmux.until("both panels", |s| {
        // The stand-in boards report a battery: it comes before the rules in a panel's title.
        s.contains("board-1 · bat 87% · playing") && s.contains("board 2 · bat 87% · playing")
    })
    .await;

    for san in ["e4", "e5", "Nf3"] {
        daemon.play("board-1", san).await;
    }
    let screen = tmux
        .until("the moves", |s| s.contains("1. e4 e5 2. Nf3"))
        .await;
    assert!(screen.contains("♔ Anna"), "{screen}");
    assert!(screen.contains("♚ Ben"), "{screen}");
    assert!(
        screen.contains("eboardctl watch · bus at unix:"),
        "{screen}"
    );

    daemon
        .illegal_placement(
            "board-1",
            "Ke8-e6",
            "rnbq1bnr/pppp1ppp/4k3/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R",
        )
        .await;
    tmux.until("the illegal placement alert", |s| {
        s.contains("ATTENTION: board-1") && s.contains("ILLEGAL PLACEMENT, black to")
    })
    .await;
    daemon.complete_illegal("board-1").await;
    tmux.until("the illegal move alert", |s| {
        s.contains("ILLEGAL MOVE by black (#1):") && s.contains("illegal moves W 0 · B 1")
    })
    .await;
    // The alert is drawn on red so it is seen across the hall: SGR 41, or colour 1 of the
    // 256-colour palette (the same red; crossterm writes the named colours that way).
    let coloured = tmux.capture(true).await;
    let alert = coloured
        .lines()
        .find(|l| l.contains("ILLEGAL MOVE by black"))
        .expect("alert line");
    assert!(
        alert.contains("41m") || alert.contains(";41") || alert.contains("48;5;1m"),
        "{alert:?}"
    );

    daemon
        .offer_claim("board 2", "black", "threefold-repetition", "")
        .await;
    tmux.until("the claim", |s| {
        s.contains("CLAIM black: threefold-repetition")
    })
    .await;
    daemon.flag("board 2", "white").await;
    tmux.until("the flag", |s| {
        s.contains("FLAG: white's time is up") && s.contains("RESULT 0-1 (time-forfeit)")
    })
    .await;

    // Ctrl-C leaves the full-screen view.
    tmux.send_keys("C-c").await;
    tmux.until("the view to close", |s| !s.contains("eboardctl watch ·"))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_survives_a_daemon_restart() {
    let (_dir, bus, daemon) = setup().await;
    let mut w = Watch::spawn(&bus.address, &["watch", "board-1"]);
    w.until("the board", |l| l.contains(" board-1 board: playing"))
        .await;

    daemon
        .conn
        .release_name(ctl_support::contract::BUS_NAME)
        .await
        .expect("release the name");
    drop(daemon);
    w.until("the stop", |l| l.ends_with(" eboardd stopped"))
        .await;

    let daemon = Daemon::start(&bus.address, &[("board-1", "/dev/ttyACM0")]).await;
    w.until("the start", |l| l.ends_with(" eboardd started"))
        .await;
    w.until("the board again", |l| l.contains(" board-1 board: playing"))
        .await;
    daemon.play("board-1", "g3").await;
    w.until("a move after the restart", |l| {
        l.contains(" board-1 MovePlayed 1. g3 (g2g3)")
    })
    .await;
    assert_eq!(w.interrupt().await, 0);
}

/// The stand-in's introspection of both interfaces equals the shipped XML, member for member
/// and type for type (as `daemon_introspection` checks eboardd), so every eboardctl test here
/// runs against the contract as shipped — including its newer members.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stand_in_matches_shipped_xml() {
    use common::xml::interface_members;
    use eboard_core::contract::{BOARD_INTERFACE, MANAGER_INTERFACE, MANAGER_PATH};
    let (_dir, bus, _daemon) = setup().await;
    let conn = bus.client().await;
    for (path, iface) in [
        (MANAGER_PATH.to_owned(), MANAGER_INTERFACE),
        (path_of("board-1"), BOARD_INTERFACE),
    ] {
        let live = zbus::fdo::IntrospectableProxy::builder(&conn)
            .destination(eboard_core::contract::BUS_NAME)
            .path(path.clone())
            .build()
            .await
            .expect("introspectable proxy")
            .introspect()
            .await
            .expect("introspect the stand-in");
        let file = format!("{}/dbus/{iface}.xml", env!("CARGO_MANIFEST_DIR"));
        let file = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{file}: {e}"));
        let live = interface_members(&live, iface).expect("the stand-in has the interface");
        let shipped = interface_members(&file, iface).expect("the file has the interface");
        assert!(!shipped.is_empty());
        assert_eq!(
            live, shipped,
            "{iface}: stand-in (left) vs shipped XML (right)"
        );
    }
}

#[test]
fn stand_in_errors_are_the_contract_names() {
    use ctl_support::contract::{BoardError, ErrorName};
    use zbus::DBusError;
    for name in ErrorName::ALL {
        let err = BoardError::of(name, "m".into());
        assert_eq!(err.name().as_str(), name.name());
    }
}

/// The contract's newer board methods through eboardctl, each with its error path, and the
/// manager's AddBoard/RemoveBoard, against the stand-in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn newer_verbs_and_their_errors() {
    let (_dir, bus, daemon) = setup().await;
    let a = bus.address.as_str();

    // ResolveGap: refused while no gap is open, and for a move that is not legal.
    refused(a, &["resolve", "board-1", "e2e4"], "InvalidArgument").await;
    daemon
        .open_gap("board-1", "reading the board's memory")
        .await;
    assert_eq!(
        status_json(a, "board-1").await["Gap"],
        "reading the board's memory"
    );
    refused(a, &["resolve", "board-1", "e2e5"], "InvalidArgument").await;
    accepted(a, &["resolve", "board-1", "e2e4", "e7e5"]).await;
    let v = status_json(a, "board-1").await;
    assert_eq!(v["Moves"], serde_json::json!(["e4", "e5"]));
    assert_eq!(v["Gap"], "");

    // RejectClaim: an unknown kind, and a claim that is in fact available, are refused; an
    // incorrect claim gives the opponent two minutes (fide-2023).
    refused(
        a,
        &["reject-claim", "board-1", "white", "perpetual"],
        "InvalidArgument",
    )
    .await;
    daemon
        .offer_claim("board-1", "white", "threefold-repetition", "")
        .await;
    refused(
        a,
        &["reject-claim", "board-1", "white", "threefold-repetition"],
        "InvalidArgument",
    )
    .await;
    accepted(a, &["reject-claim", "board-1", "black", "fifty-moves"]).await;
    assert_eq!(status_json(a, "board-1").await["WhiteTimeMs"], 420_000);

    // ShowClockMessage: too long for a clock, then shown.
    refused(
        a,
        &["clock-message", "board-1", "much too long"],
        "InvalidArgument",
    )
    .await;
    accepted(a, &["clock-message", "board-1", "B1"]).await;
    let board = daemon.board("board-1").await;
    assert_eq!(board.get().await.clock_messages, vec!["B1".to_owned()]);
    drop(board);

    // AddBoard / RemoveBoard on the manager.
    let conn = bus.client().await;
    async fn call<B>(conn: &zbus::Connection, method: &str, arg: B) -> zbus::Result<zbus::Message>
    where
        B: serde::Serialize + zbus::zvariant::Type,
    {
        conn.call_method(
            Some(eboard_core::contract::BUS_NAME),
            eboard_core::contract::MANAGER_PATH,
            Some(eboard_core::contract::MANAGER_INTERFACE),
            method,
            &(arg,),
        )
        .await
    }
    let bad = call(&conn, "AddBoard", "ttyS9")
        .await
        .expect_err("relative");
    assert!(bad.to_string().contains("InvalidArgument"), "{bad}");
    let reply = call(&conn, "AddBoard", "/dev/ttyS9").await.expect("added");
    let path: zbus::OwnedObjectPath = reply.body().deserialize().expect("a path");
    assert_eq!(path.as_str(), path_of("ttyS9"));
    let listed = accepted(a, &["list"]).await;
    assert!(listed.contains("ttyS9"), "{listed}");
    let object = zbus::ObjectPath::try_from(path.as_str().to_owned()).unwrap();
    call(&conn, "RemoveBoard", &object).await.expect("removed");
    let listed = accepted(a, &["list"]).await;
    assert!(!listed.contains("ttyS9"), "{listed}");
    let again = call(&conn, "RemoveBoard", &object).await.expect_err("gone");
    assert!(again.to_string().contains("InvalidArgument"), "{again}");
}

/// Text from outside never steers the terminal: a board name with a clear-screen and a
/// window-title sequence and a `White` tag with a colour code are shown escaped (`\u001b`) by
/// `list`, `status`, `pgn` and `watch` (lines, and the full screen in tmux); the JSON forms
/// still read back as the very strings.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_characters_from_outside_are_escaped_on_the_terminal() {
    use std::collections::HashMap;
    const NAME: &str = "ev\u{1b}[2J\u{1b}]0;pwned\u{7}";
    let dir = tempfile::tempdir().expect("temp dir");
    let bus = Bus::start(dir.path()).await;
    let _daemon = Daemon::start(&bus.address, &[(NAME, "/dev/ttyACM0")]).await;
    let path = path_of(NAME);
    let id = path.rsplit('/').next().unwrap().to_owned();
    let conn = bus.client().await;
    let board = eboardd::cli::client::BoardProxy::builder(&conn)
        .destination(ctl_support::contract::BUS_NAME)
        .path(path.as_str())
        .build()
        .await
        .unwrap();
    board
        .set_tags(HashMap::from([("White", "\u{1b}[31mRed\u{9b}0m")]))
        .await
        .unwrap();
    let a = bus.address.as_str();
    let clean = |what: &str, text: &str| {
        assert!(
            !text.contains(['\u{1b}', '\u{7}', '\u{9b}']),
            "{what} prints control characters: {text:?}"
        );
    };

    let out = ctl(a, &["list"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    clean("list", &out.stdout);
    assert!(
        out.stdout.contains("ev\\u001b[2J\\u001b]0;pwned\\u0007"),
        "{}",
        out.stdout
    );
    let out = ctl(a, &["status", &id]).await;
    assert_eq!(out.code, 0, "{out:?}");
    clean("status", &out.stdout);
    assert!(
        out.stdout.contains("\\u001b[31mRed\\u009b0m"),
        "{}",
        out.stdout
    );
    let out = ctl(a, &["pgn", &id]).await;
    assert_eq!(out.code, 0, "{out:?}");
    clean("pgn", &out.stdout);
    assert!(
        out.stdout.contains("[White \"\\u001b[31mRed\\u009b0m\"]"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.lines().count() > 3, "the PGN keeps its lines");
    let out = ctl(a, &["--json", "status", &id]).await;
    clean("status --json", &out.stdout);
    assert_eq!(
        json(&out.stdout)["Name"],
        NAME,
        "JSON carries the very string"
    );

    let mut w = Watch::spawn(a, &["watch"]);
    let line = w
        .until("the board's line", |l| l.contains("board: playing"))
        .await;
    clean("watch", &line);
    assert!(line.contains("ev\\u001b[2J"), "{line}");
    let mut w = Watch::spawn(a, &["--json", "watch"]);
    let line = w
        .until("the board's JSON line", |l| l.contains("playing"))
        .await;
    clean("watch --json", &line);

    if !require_tmux() {
        return;
    }
    let command = vec![
        ctl_support::eboardctl().to_owned(),
        "--bus".to_owned(),
        bus.address.clone(),
        "watch".to_owned(),
    ];
    let tmux = Tmux::start(dir.path(), 100, 40, &command).await;
    let screen = tmux
        .until("the panel", |s| s.contains("ev\\u001b[2J"))
        .await;
    assert!(screen.contains("\\u001b[31mRed"), "{screen}");
}
