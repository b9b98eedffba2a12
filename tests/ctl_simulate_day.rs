//! `eboardctl simulate` for a tournament day, against the real eboardd on a private bus: a
//! game ended with the result gesture (`--result-gesture`), and a Chess960 game from a PGN
//! file (`[Variant "Chess960"]` + `[FEN]`) with both castlings.

mod common;
mod ctl_support;

use std::process::Stdio;
use std::time::Duration;

use common::events::{Ev, Event, Events};
use common::proxies::fresh;
use common::{Bus, Daemon, die_with_parent, within};
use eboard_core::vocab::{GameResult, Termination};
use tokio::process::Command;

/// Starts `eboardctl simulate` with `args` on a link in `dir`; the child dies with the test.
fn simulate(dir: &std::path::Path, args: &[&str]) -> tokio::process::Child {
    let mut cmd = Command::new(ctl_support::eboardctl());
    cmd.arg("simulate")
        .arg("--link")
        .arg(dir.join("sim"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    die_with_parent(&mut cmd);
    cmd.spawn().expect("eboardctl simulate")
}

/// Writes `pgn` to `dir/<file>` and starts `eboardctl simulate` playing it at 25 times human
/// pace, with clean handling, exiting when done, and `extra` flags; returns once its link is
/// there.
async fn simulate_pgn(
    dir: &std::path::Path,
    file: &str,
    pgn: &str,
    extra: &[&str],
) -> tokio::process::Child {
    let path = dir.join(file);
    std::fs::write(&path, pgn).unwrap();
    let mut args = vec![
        "--pgn",
        path.to_str().unwrap(),
        "--speed",
        "25",
        "--clean",
        "--exit-when-done",
    ];
    args.extend_from_slice(extra);
    let sim = simulate(dir, &args);
    wait_for_link(&dir.join("sim")).await;
    sim
}

/// The simulator, done with its game, exits with success.
async fn exits_cleanly(mut sim: tokio::process::Child) {
    let status = within(Duration::from_secs(30), "simulate to exit", sim.wait()).await;
    assert!(status.unwrap().success());
}

async fn wait_for_link(path: &std::path::Path) {
    within(Duration::from_secs(15), "the simulator's link", async {
        while !path.exists() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simulate_ends_a_game_with_the_result_gesture() {
    let dir = tempfile::tempdir().unwrap();
    let sim = simulate_pgn(
        dir.path(),
        "g.pgn",
        "[Event \"t\"]\n\n1. Nf3 Nf6 2. g3 g6 3. Bg2 Bg7 0-1\n",
        &["--result-gesture"],
    )
    .await;
    let bus = Bus::start(dir.path()).await;
    let port = dir.path().join("sim").display().to_string();
    let mut daemon = Daemon::spawn(&bus, dir.path(), &["--port", &port]);
    let conn = bus.client().await;
    daemon.wait_for_name(&conn).await;
    let events = Events::start(&conn, "sim").await;
    let b = fresh(&conn, "sim").await;
    // Human pace: the game takes a while; wait on the game's state, not on a clock.
    within(Duration::from_secs(90), "the game to end", async {
        while b.state().await.unwrap() != "finished" {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await;
    // The recorder takes signals off the connection in its own task: it may not hold the
    // `GameEnded` yet when `State` already says finished.
    events
        .wait_until("the GameEnded signal", |all| {
            all.iter()
                .any(|e| matches!(e, Ev::Signal(Event::GameEnded { .. })))
        })
        .await;
    let ended: Vec<Ev> = events
        .all()
        .into_iter()
        .filter(|e| matches!(e, Ev::Signal(Event::GameEnded { .. })))
        .collect();
    assert!(
        matches!(
            ended.as_slice(),
            [Ev::Signal(Event::GameEnded {
                result: GameResult::BlackWins,
                termination: Termination::ResultGesture
            })]
        ),
        "{ended:?}"
    );
    assert_eq!(
        b.moves().await.unwrap(),
        ["Nf3", "Nf6", "g3", "g6", "Bg2", "Bg7"],
        "the kings' moves are not part of the game"
    );
    assert_eq!(b.termination().await.unwrap(), "result-gesture");
    exits_cleanly(sim).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simulate_plays_a_chess960_game() {
    let dir = tempfile::tempdir().unwrap();
    // A Chess960 start (rbbqnnkr): White castles king side with the king staying on g1.
    let sim = simulate_pgn(
        dir.path(),
        "fr.pgn",
        "[Event \"t\"]\n[Variant \"Chess960\"]\n[SetUp \"1\"]\n\
         [FEN \"rbbqnnkr/pppppppp/8/8/8/8/PPPPPPPP/RBBQNNKR w KQkq - 0 1\"]\n\n\
         1. Ng3 g6 2. O-O h6 3. b3 d6 *\n",
        &[],
    )
    .await;
    let bus = Bus::start(dir.path()).await;
    let config = dir.path().join("eboardd.toml");
    std::fs::write(
        &config,
        format!(
            "[[board]]\nname = \"sim\"\nport = \"{}\"\nvariant = \"chess960\"\n",
            dir.path().join("sim").display()
        ),
    )
    .unwrap();
    let mut daemon = Daemon::spawn(&bus, dir.path(), &["--config", config.to_str().unwrap()]);
    let conn = bus.client().await;
    daemon.wait_for_name(&conn).await;
    let b = fresh(&conn, "sim").await;
    let want = ["Ng3", "g6", "O-O", "h6", "b3", "d6"];
    within(Duration::from_secs(90), "the Chess960 game", async {
        while b.moves().await.unwrap() != want {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    let pgn = b.pgn().await.unwrap();
    assert!(pgn.contains("[Variant \"Chess960\"]"), "{pgn}");
    assert!(
        pgn.contains("[FEN \"rbbqnnkr/pppppppp/8/8/8/8/PPPPPPPP/RBBQNNKR w"),
        "{pgn}"
    );
    assert!(pgn.contains("O-O"), "{pgn}");
    exits_cleanly(sim).await;
}
