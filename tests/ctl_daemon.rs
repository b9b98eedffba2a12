//! eboardctl against the real eboardd: a private bus, the daemon binary, and the simulator
//! (a virtual DGT board + clock on a pseudo-terminal, moved by human-like handling).

mod common;
mod ctl_support;

use std::time::Duration;

use common::rig::{SimRig as Rig, moves};
use ctl_support::{Tmux, WAIT, Watch, ctl, require_tmux};
use eboard_sim::Step;
use serde_json::Value;
use shakmaty::Square;

fn json(out: &str) -> Value {
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

/// Polls `eboardctl --json status board` until `pred` holds; returns that status.
async fn status_until(
    address: &str,
    board: &str,
    what: &str,
    pred: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let out = ctl(address, &["--json", "status", board]).await;
        assert_eq!(out.code, 0, "{out:?}");
        let v = json(&out.stdout);
        if pred(&v) {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}; last status: {v:#}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_status_and_json_from_eboardd() {
    let rig = Rig::start(&["dgt.1"], &["--port", "/nonexistent/ttyACM9"]).await;
    let a = rig.address();

    // The board answers the handshake: connected, identified, in the start position.
    let v = status_until(a, "dgt.1", "the handshake", |v| {
        v["Connected"] == true && v["FirmwareVersion"] == "3.10"
    })
    .await;
    assert_eq!(v["Id"], "dgt_1");
    assert_eq!(v["Path"], "/org/eboardd/Bridge1/Board/dgt_1");
    assert_eq!(v["Port"], rig.ports[0]);
    assert!(
        v["SerialNumber"].as_str().is_some_and(|s| !s.is_empty()),
        "{v:#}"
    );
    for key in [
        "Fen",
        "Placement",
        "Moves",
        "Pgn",
        "Claims",
        "IllegalMoves",
        "Result",
    ] {
        assert!(v.get(key).is_some(), "{key} missing: {v:#}");
    }

    let out = ctl(a, &["list"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{out:?}");
    let words: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(
        words[..3],
        ["dgt.1", rig.ports[0].as_str(), "connected"],
        "{out:?}"
    );
    let words: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(
        words[..3],
        ["ttyACM9", "/nonexistent/ttyACM9", "disconnected"],
        "{out:?}"
    );

    let out = ctl(a, &["--json", "list"]).await;
    assert_eq!(
        json(&out.stdout).as_array().map(Vec::len),
        Some(2),
        "{out:?}"
    );

    let out = ctl(a, &["status", "ttyACM9"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout
            .starts_with("ttyACM9 (ttyACM9)  port /nonexistent/ttyACM9  DISCONNECTED"),
        "{out:?}"
    );
    assert!(
        out.stdout.contains("Illegal moves  white 0, black 0"),
        "{out:?}"
    );

    let out = ctl(a, &["pgn", "dgt_1"]).await;
    assert_eq!(out.code, 0, "{out:?}");

    let out = ctl(a, &["status", "nope"]).await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("boards: dgt.1, ttyACM9"), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_lines_follow_eboardd_boards() {
    let rig = Rig::start(&["dgt.1"], &[]).await;
    let a = rig.address();
    status_until(a, "dgt_1", "the handshake", |v| v["Connected"] == true).await;

    let mut w = Watch::spawn(a, &["watch"]);
    w.until("the board", |l| l.contains(" dgt.1 board: ")).await;
    // Pull the cable: the view says the board is gone from the line.
    rig.sims[0].unplug().await.expect("unplug");
    w.until("the disconnection", |l| {
        l.contains(" dgt.1 changed ") && l.contains("Connected=no")
    })
    .await;
    rig.sims[0].replug().await.expect("replug");
    w.until("the reconnection", |l| {
        l.contains(" dgt.1 changed ") && l.contains("Connected=yes")
    })
    .await;
    assert_eq!(w.interrupt().await, 0);
}

/// Every arbiter verb on the real daemon, with its error path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arbiter_verbs_on_eboardd() {
    let rig = Rig::start(&["dgt.1"], &[]).await;
    let a = rig.address();
    status_until(a, "dgt_1", "the start position", |v| {
        v["State"] == "playing"
    })
    .await;

    let refused = async |args: &[&str], error: &str| {
        let out = ctl(a, args).await;
        assert_eq!(out.code, 1, "{args:?}: {out:?}");
        assert!(
            out.stderr
                .contains(&format!("org.eboardd.Bridge1.Error.{error}: ")),
            "{args:?}: {out:?}"
        );
    };
    let accepted = async |args: &[&str]| {
        let out = ctl(a, args).await;
        assert_eq!(out.code, 0, "{args:?}: {out:?}");
    };

    refused(&["takeback", "dgt.1"], "NothingToTakeBack").await;
    refused(&["set-position", "dgt.1", "no/such/fen"], "InvalidFen").await;
    refused(&["tags", "dgt.1", "Bad Key=1"], "InvalidArgument").await;
    refused(&["rules", "dgt.1", "bullet"], "InvalidArgument").await;
    refused(
        &["accept-claim", "dgt.1", "white", "threefold-repetition"],
        "ClaimNotAvailable",
    )
    .await;
    refused(&["adjudicate", "dgt.1", "2-0"], "InvalidArgument").await;

    accepted(&["tags", "dgt.1", "White=Anna", "Black=Ben", "Round=3"]).await;
    accepted(&["rules", "dgt.1", "blitz"]).await;
    let v = status_until(a, "dgt.1", "the rules", |v| v["Rules"] == "blitz").await;
    assert!(
        v["Pgn"]
            .as_str()
            .is_some_and(|p| p.contains("[White \"Anna\"]")),
        "{v:#}"
    );

    let mut scenario = rig.scenario(0, 7);
    scenario.run(&[moves(&["e4"])]).await.expect("e4");
    status_until(a, "dgt.1", "e4", |v| {
        v["Moves"] == serde_json::json!(["e4"])
    })
    .await;
    accepted(&["takeback", "dgt.1"]).await;
    status_until(a, "dgt.1", "the takeback", |v| {
        v["Moves"] == serde_json::json!([])
    })
    .await;

    let fen = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1";
    accepted(&["set-position", "dgt.1", fen]).await;
    status_until(a, "dgt.1", "the set position", |v| v["Fen"] == fen).await;
    accepted(&["new-game", "dgt.1"]).await;
    accepted(&["adjudicate", "dgt.1", "1-0", "Black", "left", "the", "hall"]).await;
    let v = status_until(a, "dgt.1", "the adjudication", |v| v["Result"] == "1-0").await;
    assert_eq!(v["Termination"], "adjudication");
}

/// A game on the simulated board seen through eboardctl: `watch --json` gets every
/// MovePlayed and the IllegalMoveCompleted, `status` the counts and the sensed board, `pgn`
/// re-parses to the moves played, with clock times; the full-screen watch in tmux shows the
/// moves and the alert.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simulated_game_seen_by_eboardctl() {
    let rig = Rig::start(&["sim-board"], &[]).await;
    let a = rig.address();
    status_until(a, "sim_board", "the start position", |v| {
        v["State"] == "playing" && v["ClockConnected"] == true
    })
    .await;
    let mut w = Watch::spawn(a, &["--json", "watch", "sim-board"]);
    w.until("the snapshot", |l| l.contains("\"Board\"")).await;
    let tmux_dir = tempfile::tempdir().expect("temp dir");
    let tmux = if require_tmux() {
        let command = vec![
            ctl_support::eboardctl().to_owned(),
            "--bus".to_owned(),
            a.to_owned(),
            "watch".to_owned(),
        ];
        let tmux = Tmux::start(tmux_dir.path(), 100, 40, &command).await;
        // The title names the board's model once the board has said it (`sim-board · dgt ·
        // playing`); before, only the name and the state.
        tmux.until("the panel", |s| {
            s.lines()
                .any(|l| l.contains("sim-board · ") && l.contains(" · playing"))
        })
        .await;
        Some(tmux)
    } else {
        None // the full-screen part only; the rest of the test runs
    };

    let sans = [
        "e4", "c5", "Nf3", "d6", "d4", "cxd4", "Nxd4", "Nf6", "Nc3", "a6",
    ];
    let mut scenario = rig.scenario(0, 7);
    scenario.run(&[moves(&sans)]).await.expect("moves");
    for (i, san) in sans.iter().enumerate() {
        let line = w
            .until(&format!("MovePlayed {san}"), |l| {
                l.contains("\"MovePlayed\"")
            })
            .await;
        let v = json(&line);
        assert_eq!(v["ply"], i + 1, "{line}");
        assert_eq!(v["san"], *san, "{line}");
    }
    if let Some(tmux) = &tmux {
        tmux.until("the moves", |s| s.contains("5. Nc3 a6")).await;
    }

    // White's bishop from f1 to a5: no legal move does that. Then the clock is pressed.
    scenario
        .run(&[Step::IllegalPlacement {
            from: Square::F1,
            to: Square::A5,
        }])
        .await
        .expect("illegal placement");
    w.until("the illegal placement", |l| {
        l.contains("\"IllegalPlacement\"")
    })
    .await;
    let text = ctl(a, &["status", "sim-board"]).await.stdout;
    assert!(text.contains("PENDING ILLEGAL PLACEMENT"), "{text}");
    assert!(text.contains("on the board now"), "{text}");
    if let Some(tmux) = &tmux {
        tmux.until("the alert", |s| {
            s.contains("ATTENTION: sim-board") && s.contains("ILLEGAL PLACEMENT")
        })
        .await;
    }
    scenario
        .run(&[Step::PressClock])
        .await
        .expect("clock press");
    let line = w
        .until("the completed illegal move", |l| {
            l.contains("\"IllegalMoveCompleted\"")
        })
        .await;
    assert_eq!(json(&line)["player"], "white");
    let v = status_until(a, "sim-board", "the count", |v| {
        v["IllegalMoves"]["white"] == 1
    })
    .await;
    assert_eq!(v["Moves"].as_array().map(Vec::len), Some(sans.len()));
    if let Some(tmux) = &tmux {
        tmux.until("the illegal-move alert", |s| {
            s.contains("ILLEGAL MOVE by white (#1)") && s.contains("illegal moves W 1 · B 0")
        })
        .await;
        tmux.send_keys("C-c").await;
    }

    let out = ctl(a, &["pgn", "sim-board"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains("[%clk "),
        "clock times in the PGN: {out:?}"
    );
    let mut pos = shakmaty::Chess::default();
    let played = pgn_moves(&out.stdout);
    for san in &played {
        let m = san
            .parse::<shakmaty::san::San>()
            .unwrap_or_else(|e| panic!("{san}: {e}"))
            .to_move(&pos)
            .unwrap_or_else(|e| panic!("{san}: {e}"));
        shakmaty::Position::play_unchecked(&mut pos, m);
    }
    assert_eq!(played, sans);
    assert_eq!(w.interrupt().await, 0);
    rig.sims[0].shutdown().await;
}

/// The SAN moves of a PGN's movetext (every segment in order), read with `pgn-reader`
/// through `sim::pgn`.
fn pgn_moves(pgn: &str) -> Vec<String> {
    eboard_sim::parse_games(pgn)
        .into_iter()
        .flat_map(|g| g.sans)
        .collect()
}
