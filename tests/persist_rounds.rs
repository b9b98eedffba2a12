//! Round folders end to end: three simulated boards on ptys, eboardd on a private bus, the
//! round's pairings set with `eboardctl pairings`, a few moves played on each board; the
//! daemon writes `round-<r>/game-<board>.pgn` + `games.pgn`, and the Lichess Broadcaster
//! app's upload rules (lichess-org/broadcaster `src/upload.ts`: every `*.pgn` under the
//! watched folder, recursively, sorted by the last number in the path; `games.pgn` only when
//! there is no other PGN file) upload the games in board order.

mod common;
mod ctl_support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::events::Events;
use common::sim::sim_board;
use common::{Bus, Daemon, WAIT, within};
use ctl_support::ctl;
use eboard_sim::{BoardOptions, ClockSetup, Noise, Pace, Scenario, ScenarioOptions, Step};

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// The last run of digits in a path (the Broadcaster's game id), 0 without one.
fn last_number(path: &Path) -> u64 {
    let s = path.to_string_lossy();
    let digits: String = s
        .trim_end_matches(|c: char| !c.is_ascii_digit())
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_digit())
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    digits.parse().unwrap_or(0)
}

/// What the Broadcaster uploads from `folder`, in order.
fn broadcaster_upload(folder: &Path) -> Vec<PathBuf> {
    let pgns: Vec<PathBuf> = files_under(folder)
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".pgn"))
        .collect();
    let mut singles: Vec<PathBuf> = pgns
        .iter()
        .filter(|p| p.file_name().is_none_or(|n| n != "games.pgn"))
        .cloned()
        .collect();
    if singles.is_empty() {
        return pgns;
    }
    singles.sort_by_key(|p| last_number(p));
    singles
}

fn tag(pgn: &str, name: &str) -> Vec<String> {
    let prefix = format!("[{name} \"");
    pgn.lines()
        .filter_map(|l| l.strip_prefix(&prefix)?.strip_suffix("\"]"))
        .map(str::to_string)
        .collect()
}

#[test]
fn the_last_number_rule() {
    assert_eq!(last_number(Path::new("/x/round-3/game-12.pgn")), 12);
    assert_eq!(last_number(Path::new("/x/round-3/games.pgn")), 3);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("games.pgn"), "").unwrap();
    assert_eq!(
        broadcaster_upload(dir.path()).len(),
        1,
        "games.pgn alone is uploaded"
    );
    std::fs::write(dir.path().join("game-2.pgn"), "").unwrap();
    std::fs::write(dir.path().join("game-10.pgn"), "").unwrap();
    let up = broadcaster_upload(dir.path());
    let names: Vec<_> = up
        .iter()
        .map(|p| p.file_name().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["game-2.pgn", "game-10.pgn"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_simulated_round_is_uploaded_in_board_order() {
    let dir = tempfile::tempdir().unwrap();
    // Boards 10, 2 and 1 (the sort must be numeric, not by name or by start order).
    let tables = [(10u32, "hall-c"), (2, "hall-b"), (1, "hall-a")];
    let mut sims = Vec::new();
    let mut config = String::new();
    for (n, name) in tables {
        // A long game: no flag may fall while the test runs at 25 times real time.
        let board = BoardOptions {
            clock_setup: ClockSetup {
                base_ms: 90 * 60_000,
                increment_ms: 30_000,
            },
            ..BoardOptions::default()
        };
        sims.push(sim_board(dir.path(), name, 25.0, board).await);
        config.push_str(&format!(
            "[[board]]\nname = \"{name}\"\nport = \"{}\"\nnumber = {n}\n",
            dir.path().join(name).display()
        ));
    }
    let config_path = dir.path().join("eboardd.toml");
    std::fs::write(&config_path, config).unwrap();
    let bus = Bus::start(dir.path()).await;
    let mut daemon = Daemon::spawn(
        &bus,
        dir.path(),
        &["--config", config_path.to_str().unwrap()],
    );
    let conn = bus.client().await;
    daemon.wait_for_name(&conn).await;
    let mut events = Vec::new();
    for (_, name) in tables {
        events.push(Events::start(&conn, &name.replace('-', "_")).await);
    }
    let pairings = dir.path().join("round.csv");
    std::fs::write(
        &pairings,
        "board,white,black,round\n1,Øystein A,Black A,4\n2,White B,Black B,4\n10,White C,Black C,4\n",
    )
    .unwrap();
    let out = ctl(&bus.address, &["pairings", pairings.to_str().unwrap()]).await;
    assert_eq!(out.code, 0, "{out:?}");

    let lines = [["e4", "e5", "Nf3"], ["d4", "d5", "c4"], ["c4", "e5", "Nc3"]];
    for ((sim, line), events) in sims.iter().zip(lines).zip(events.iter_mut()) {
        sim.wait_for_update_mode(WAIT).await.unwrap();
        // The players move once the daemon has seen the start position.
        events.next_signal("GameStarted").await;
        let mut scenario = Scenario::new(
            sim,
            ScenarioOptions {
                pace: Pace::quick(),
                noise: Noise::Clean,
                seed: 3,
                ..ScenarioOptions::default()
            },
        );
        let moves = Step::Moves(line.iter().map(|m| m.to_string()).collect());
        scenario.run(&[moves]).await.unwrap();
    }

    let round = dir.path().join("state/pgn/round-4");
    let firsts = ["1. c4", "1. d4", "1. e4"]; // boards 1, 2, 10 played these
    within(WAIT * 2, "every board's round file with its moves", async {
        loop {
            let done = [1, 2, 10].iter().zip(firsts).all(|(b, first)| {
                std::fs::read_to_string(round.join(format!("game-{b}.pgn")))
                    .is_ok_and(|t| t.contains(first) && t.matches(". ").count() >= 2)
            });
            if done {
                break;
            }

            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    let uploaded = broadcaster_upload(&round);
    let names: Vec<String> = uploaded
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["game-1.pgn", "game-2.pgn", "game-10.pgn"]);
    let body: Vec<String> = uploaded
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    let body = body.join("\n\n");
    assert_eq!(tag(&body, "Round"), ["4.1", "4.2", "4.10"]);
    assert_eq!(tag(&body, "White"), ["Øystein A", "White B", "White C"]);
    // games.pgn holds the same games in the same order, for tools that read only it.
    // Its rebuild is coalesced (at most once a second): wait for it to take every game.
    let read_all = || std::fs::read_to_string(round.join("games.pgn")).unwrap_or_default();
    let _ = tokio::time::timeout(WAIT, async {
        while tag(&read_all(), "Round").len() < 3 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    let all = read_all();
    assert_eq!(tag(&all, "Round"), ["4.1", "4.2", "4.10"]);
    // The rebuild is coalesced (at most once per short window), never lost: games.pgn
    // catches up with every game file by itself, and after a stop holds every final state.
    let joined = || {
        [1, 2, 10]
            .iter()
            .map(|b| std::fs::read_to_string(round.join(format!("game-{b}.pgn"))).unwrap())
            .collect::<Vec<_>>()
            .join("\n")
    };
    within(WAIT, "games.pgn holding every game file", async {
        while std::fs::read_to_string(round.join("games.pgn")).unwrap() != joined() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    daemon.signal(nix::sys::signal::Signal::SIGTERM);
    assert_eq!(common::code(daemon.wait(WAIT).await), 0);
    assert_eq!(
        std::fs::read_to_string(round.join("games.pgn")).unwrap(),
        joined(),
        "games.pgn after the stop"
    );
    let leftovers: Vec<_> = files_under(&round)
        .into_iter()
        .filter(|p| !p.to_string_lossy().ends_with(".pgn"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    for sim in &sims {
        sim.shutdown().await;
    }
}
