//! The LiveChess API as the programs people already run read it, against the real eboardd
//! with simulated boards on a private bus:
//!
//! - a connector that takes the last SAN of every `san` list it receives as the newest move
//!   (as simple ones written against LiveChess do) and lichess's, which diffs each list
//!   against the last, both follow a 40-ply game exactly, with a clock (ticks) and without
//!   (lifted pieces), including moves the other side could make too (`O-O` after `O-O`,
//!   `Nxe5` after `Nxe5`);
//! - two boards reporting the same serial number and one reporting none are three boards:
//!   each has a `serialnr` of its own, the same after the bridge restarts, and `subscribe`
//!   and the REST side address exactly one board.

mod common;
mod livechess_support;

use std::time::Duration;

use common::WAIT;
use common::rig::{clean_scenario_paced, moves};
use eboard_sim::{BoardOptions, ClockPresence, Pace, Scenario, ScenarioOptions, Step};
use livechess_support::*;
use serde_json::{Value, json};
use shakmaty::san::SanPlus;
use shakmaty::{Chess, Position};

/// 40 plies. White's `O-O` (ply 11) is legal for Black next, and so is Black's last move
/// `Nxe5` for White: a list repeated after either is played again by a last-SAN client.
const GAME: [&str; 40] = [
    "e4", "e5", "Nf3", "Nc6", "Bc4", "Bc5", "c3", "Nf6", "d3", "d6", "O-O", "O-O", "h3", "h6",
    "Re1", "a6", "Bb3", "Ba7", "Nbd2", "Re8", "Nc4", "Be6", "a4", "Qd7", "Be3", "Bxe3", "fxe3",
    "Rad8", "Qc2", "Kh8", "Rad1", "b6", "Kh2", "Kg8", "Qe2", "Qc8", "Qf2", "Bd7", "Nfxe5", "Nxe5",
];

/// The moves of `GAME` after which the other side could play the same SAN.
const TWICE_LEGAL: [usize; 2] = [10, 39];

/// `san` played on `pos`, when legal there.
fn play(pos: &Chess, san: &str) -> Option<Chess> {
    let m = SanPlus::from_ascii(san.as_bytes())
        .ok()?
        .san
        .to_move(pos)
        .ok()?;
    pos.clone().play(m).ok()
}

/// A connector that takes the last element of each `san` list as the newest move and plays
/// it into its own game when legal (counting it as invalid otherwise).
#[derive(Default)]
struct LastSan {
    pos: Chess,
    played: Vec<String>,
    invalid: Vec<String>,
}

impl LastSan {
    fn feed(&mut self, event: &Value) {
        let Some(last) = event
            .get("san")
            .and_then(|s| s.as_array()?.last()?.as_str())
        else {
            return;
        };
        match play(&self.pos, last) {
            Some(next) => {
                self.pos = next;
                self.played.push(last.to_owned());
            }
            None => self.invalid.push(last.to_owned()),
        }
    }
}

/// lichess's connector: an identical list is ignored, a longer one plays the moves past the
/// last list.
#[derive(Default)]
struct Diffing {
    last: Vec<String>,
    played: usize,
}

impl Diffing {
    fn feed(&mut self, event: &Value) {
        let Some(list) = event.get("san").and_then(Value::as_array) else {
            return;
        };
        let list: Vec<String> = list
            .iter()
            .map(|s| s.as_str().unwrap().to_owned())
            .collect();
        if list == self.last {
            return;
        }
        let common = self
            .last
            .iter()
            .zip(&list)
            .take_while(|(a, b)| a == b)
            .count();
        self.played += list.len() - common;
        self.last = list;
    }
}

/// Follows the board's feed with both connectors until the diffing one holds all of
/// `expected` and `settle` has passed after that (clock ticks, which must not repeat a
/// move); returns them.
async fn follow(ws: &mut Ws, expected: &[String], settle: Duration) -> (LastSan, Diffing) {
    let mut last_san = LastSan::default();
    let mut diffing = Diffing::default();
    common::within(WAIT * 12, "the whole game in the feed", async {
        while diffing.last != expected {
            let msg = ws.next_feed().await;
            last_san.feed(&msg["param"]);
            diffing.feed(&msg["param"]);
        }
    })
    .await;
    let _ = tokio::time::timeout(settle, async {
        loop {
            let msg = ws.next_feed().await;
            last_san.feed(&msg["param"]);
            diffing.feed(&msg["param"]);
        }
    })
    .await;
    (last_san, diffing)
}

/// `GAME` as the daemon writes it (canonical SAN, with `+` and `#`).
fn canonical_game() -> Vec<String> {
    let mut pos = Chess::default();
    GAME.iter()
        .map(|san| {
            let m = SanPlus::from_ascii(san.as_bytes())
                .unwrap()
                .san
                .to_move(&pos)
                .unwrap_or_else(|e| panic!("{san} is not legal in the test game: {e}"));
            SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string()
        })
        .collect()
}

/// The steps playing `GAME`, with a pause (clock ticks) after each move the other side could
/// repeat.
fn game_steps() -> Vec<Step> {
    let mut steps = Vec::new();
    let mut from = 0;
    for at in TWICE_LEGAL {
        steps.push(moves(&GAME[from..=at]));
        steps.push(Step::Pause(2_500));
        from = at + 1;
    }
    steps
}

/// A paced, clean scenario on a board with or without a clock: slow enough that each move
/// reaches the feed before the next (a last-SAN connector misses a move otherwise).
fn scenario(sim: &eboard_sim::SimHandle, seed: u64, clock: bool) -> Scenario<'_> {
    let pace = Pace {
        think_ms: (300, 450),
        press_ms: (20, 40),
        hand_ms: (10, 30),
    };
    if clock {
        clean_scenario_paced(sim, seed, pace)
    } else {
        Scenario::new(
            sim,
            ScenarioOptions {
                pace,
                noise: eboard_sim::Noise::Clean,
                seed,
                press_clock: false,
            },
        )
    }
}

/// Subscribes feed 1 of a new connection to the board with `serialnr`; returns it after the
/// first message (the whole state of a board that has not started: no moves).
async fn subscribed(rig: &Rig, serialnr: &str) -> Ws {
    let mut ws = rig.program().await;
    let sub = ws.subscribe(1, 1, serialnr).await;
    assert_eq!(sub["response"], "call", "{sub}");
    let first = ws.next_feed().await;
    assert_eq!(first["param"]["san"], json!([]), "{first}");
    ws
}

/// Waits until `eboards` lists every board ACTIVE, its pieces read, and with the serial
/// numbers `want` (in that order); returns the list.
async fn eboards_with(rig: &Rig, want: &[&str]) -> Vec<Value> {
    common::within(WAIT * 3, "every board active with its serialnr", async {
        loop {
            let boards = rig.livechess.json("/api/v1.0/eboards").await;
            let list = boards.as_array().unwrap().clone();
            let serials: Vec<&str> = list.iter().filter_map(|b| b["serialnr"].as_str()).collect();
            if serials == want
                && list
                    .iter()
                    .all(|b| b["state"] == "ACTIVE" && b["board"] != "8/8/8/8/8/8/8/8")
            {
                return list;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn last_san_and_diffing_connectors_follow_games_with_and_without_a_clock() {
    // Board 1 has a clock, board 2 none.
    let rig = Rig::start_with(2, &[], |i| BoardOptions {
        clock: if i == 0 {
            ClockPresence::Present
        } else {
            ClockPresence::Absent
        },
        ..own_serial(i)
    })
    .await;
    let list = eboards_with(&rig, &["20001", "20002"]).await;
    assert!(!list[0]["clock"].is_null() && list[1]["clock"].is_null());
    let mut with_clock = subscribed(&rig, "20001").await;
    let mut without = subscribed(&rig, "20002").await;
    let expected = canonical_game();
    let steps = game_steps();
    let mut clocked = scenario(&rig.sims[0], 34, true);
    let mut plain = scenario(&rig.sims[1], 35, false);
    let settle = Duration::from_millis(2_500);
    let (played_clocked, played_plain, followed_clocked, followed_plain) = tokio::join!(
        clocked.run(&steps),
        plain.run(&steps),
        follow(&mut with_clock, &expected, settle),
        follow(&mut without, &expected, settle),
    );
    played_clocked.expect("the game on the board with a clock");
    played_plain.expect("the game on the board without a clock");
    for (what, (last_san, diffing)) in [
        ("with a clock", followed_clocked),
        ("without a clock", followed_plain),
    ] {
        assert_eq!(
            last_san.invalid,
            Vec::<String>::new(),
            "{what}: invalid moves"
        );
        assert_eq!(
            last_san.played, expected,
            "{what}: the last-SAN connector's game"
        );
        assert_eq!(
            diffing.last, expected,
            "{what}: the diffing connector's game"
        );
        assert_eq!(diffing.played, expected.len(), "{what}: every move once");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boards_with_the_same_serial_number_or_none_are_told_apart() {
    // lc1 and lc2 report the same serial number (the simulator's), lc3 none.
    let rig = Rig::start_with(3, &[], |i| match i {
        2 => BoardOptions {
            serial: String::new(),
            long_serial: String::new(),
            ..BoardOptions::default()
        },
        _ => BoardOptions::default(),
    })
    .await;
    let want = ["13116", "13116-lc2", "lc3"];
    let listed = eboards_with(&rig, &want).await;
    let sources: Vec<&str> = listed
        .iter()
        .map(|b| b["source"].as_str().unwrap())
        .collect();
    assert_eq!(sources, ["lc1", "lc2", "lc3"]);

    // Each serialnr subscribes to its own board: a move on lc2 reaches feed 2 only.
    let mut ws = rig.program().await;
    for (feed, serialnr) in (1u64..).zip(want) {
        let sub = ws.subscribe(10 + feed, feed, serialnr).await;
        assert_eq!(sub["response"], "call", "{sub}");
    }
    rig.scenario(1)
        .run(&[moves(&["e4"])])
        .await
        .expect("e4 on lc2");
    let seen = ws
        .feed_until("e4 in feed 2", |m| {
            m["id"] == 2 && m["param"]["san"] == json!(["e4"])
        })
        .await;
    for m in ws.feeds.iter().chain(&seen) {
        let serialnr = want[m["id"].as_u64().unwrap() as usize - 1];
        assert_eq!(m["param"]["serialnr"], serialnr, "{m}");
        if m["id"] != 2 {
            assert!(
                m["param"].get("san").is_none_or(|s| *s == json!([])),
                "a move on lc2 in another feed: {m}"
            );
        }
    }

    // The REST side: the tournament's tables name the same three.
    let tournaments = rig.livechess.json("/api/v1.0/tournaments").await;
    let uuid = tournaments[0]["uuid"].as_str().unwrap();
    let tournament = rig
        .livechess
        .json(&format!("/api/v1.0/tournament/{uuid}"))
        .await;
    assert_eq!(tournament["eboards"], json!(want));

    // A bridge started again names them the same.
    let again = LiveChess::start(&rig.bus.address, &[]).await;
    let serials = common::within(WAIT, "the second bridge's boards", async {
        loop {
            let boards = again.json("/api/v1.0/eboards").await;
            let serials: Vec<String> = boards
                .as_array()
                .unwrap()
                .iter()
                .map(|b| b["serialnr"].as_str().unwrap().to_owned())
                .collect();
            if serials.len() == want.len() {
                return serials;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert_eq!(serials, want);
}
