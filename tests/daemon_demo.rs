//! End-to-end: `eboardd --demo` plays its game through the whole pipeline on a private bus
//! it starts itself, prints the events a client receives, and exits 0.

mod common;

use std::process::Stdio;
use std::time::Duration;

use common::{die_with_parent, eboardd, within};
use tokio::process::Command;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_plays_a_game_and_exits_0() {
    let mut cmd = Command::new(eboardd());
    cmd.arg("--demo")
        // No session bus: the demo must start its own.
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    die_with_parent(&mut cmd);
    let child = cmd.spawn().unwrap();
    let out = within(
        Duration::from_secs(180),
        "the demo",
        child.wait_with_output(),
    )
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    for needle in [
        "a private bus",
        "GameStarted",
        "MovePlayed",
        "IllegalPlacement",
        "AcceptClaim",
        "threefold-repetition",
        "GameEnded 1-0 (result-gesture)",
        "GameEnded 1/2-1/2 (claim)",
    ] {
        assert!(
            stdout.contains(needle),
            "{needle:?} missing from:\n{stdout}"
        );
    }
    // The illegal placement is reported before the move that follows it.
    let alert = stdout.find("IllegalPlacement").unwrap();
    assert!(stdout[alert..].contains("MovePlayed"));

    // The last screen is clean: the players show the result after the last move is shown,
    // the PGN has one comment per move (`%clk` first), and the simulator's own end is no
    // warning.
    let gesture = stdout
        .find("players: result gesture")
        .expect("the gesture line");
    let first_game_end = stdout.find("GameEnded 1-0").unwrap();
    assert!(
        !stdout[gesture..first_game_end].contains("MovePlayed"),
        "a move shown after the players' gesture:\n{stdout}"
    );
    let new_game = stdout
        .find("--- a new game")
        .expect("the second game's line");
    assert!(
        first_game_end < new_game,
        "the second game announced before the first ended:\n{stdout}"
    );
    let pgn = &stdout[stdout.find("[Event").expect("the PGN")..];
    let flat = pgn.replace('\n', " ");
    assert!(!flat.contains("} {"), "two comments side by side:\n{pgn}");
    assert!(flat.contains("{[%clk "), "{pgn}");
    for line in stdout.lines().chain(stderr.lines()) {
        assert!(
            !line.contains("WARN") && !line.contains("board lost"),
            "a warning on the demo's screen: {line}\n{stderr}"
        );
    }
}
