//! End-to-end games: the crate's simulator on ptys → the `eboardd` binary → a private bus →
//! a zbus client checking signals and properties.
//!
//! Each test waits for the daemon's `GameStarted` before the players move, as people wait
//! for the arbiter's go: a move made before the daemon's first board dump leaves it no start
//! position to follow.

mod common;

use std::time::Duration;

use common::events::{Ev, Event, Events, sans_of};
use common::proxies::{self, BoardProxy};
use common::rig::{quick, ready_to_play, sans, wait_moves};
use common::sim::{corpus_games, sim_board};
use common::{Daemon, Setup, WAIT, code, wait_property, within};
use eboard_core::board::Orientation;
use eboard_core::vocab::{GameResult, Player, Termination};
use eboard_sim::{Action, BoardOptions, ClockSetup, ClockSide, Scenario, SimHandle, Step};
use shakmaty::{Board, Square};

/// Board time per wall time for whole games: hands still move in distinct steps.
const SPEED: f64 = 25.0;

/// The board's properties as the daemon has them now (see `proxies::fresh`).
async fn now<'a>(conn: &zbus::Connection, b: &BoardProxy<'_>) -> BoardProxy<'a> {
    let path = b.inner().path().to_string();
    let id = path.rsplit('/').next().unwrap_or_default().to_owned();
    proxies::fresh(conn, &id).await
}

async fn ready(sim: &SimHandle) {
    sim.wait_for_update_mode(WAIT)
        .await
        .expect("the daemon puts the board in update mode");
}

async fn wait_started(events: &mut Events) {
    events.next_signal("GameStarted").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corpus_games_with_clock_on_three_boards_one_reversed() {
    let dir = tempfile::tempdir().unwrap();
    let games = corpus_games(3, 40..=80);
    assert_eq!(games.len(), 3);
    let mut sims = Vec::new();
    for (i, name) in ["b1", "b2", "b3"].iter().enumerate() {
        let board = BoardOptions {
            orientation: if i == 1 {
                Orientation::Reversed
            } else {
                Orientation::Normal
            },
            clock_setup: ClockSetup {
                base_ms: 90 * 60_000,
                increment_ms: 30_000,
            },
            ..BoardOptions::default()
        };
        sims.push(sim_board(dir.path(), name, SPEED, board).await);
    }
    let ports: Vec<String> = sims
        .iter()
        .map(|s| s.path().display().to_string())
        .collect();
    let s = Setup::start_in(
        dir,
        &[
            "--port", &ports[0], "--port", &ports[1], "--port", &ports[2],
        ],
    )
    .await;
    let mut events = Vec::new();
    for id in ["b1", "b2", "b3"] {
        events.push(Events::start(&s.conn, id).await);
    }
    for sim in &sims {
        ready(sim).await;
    }
    for e in events.iter_mut() {
        wait_started(e).await;
    }
    let play = |i: usize| {
        let sim = &sims[i];
        let game = &games[i];
        async move {
            let mut sc = Scenario::new(sim, quick(i as u64 + 1));
            sc.play_game(game).await
        }
    };
    let (r0, r1, r2) = within(Duration::from_secs(120), "the games", async {
        tokio::join!(play(0), play(1), play(2))
    })
    .await;
    r0.unwrap();
    r1.unwrap();
    r2.unwrap();
    for (i, id) in ["b1", "b2", "b3"].iter().enumerate() {
        let want = games[i].sans.clone();
        wait_moves(&events[i], &want).await;
        let b = proxies::board(&s.conn, id).await;
        assert_eq!(
            now(&s.conn, &b).await.moves().await.unwrap(),
            want,
            "board {id}"
        );
        assert!(
            now(&s.conn, &b).await.clock_connected().await.unwrap(),
            "board {id}"
        );
        assert!(
            now(&s.conn, &b).await.in_sync().await.unwrap(),
            "board {id}"
        );
        let pgn = now(&s.conn, &b).await.pgn().await.unwrap();
        assert!(pgn.contains("[%clk "), "board {id}: {pgn}");
        // The daemon dates each game (UTC): a full `YYYY.MM.DD` Date tag, never `????.??.??`.
        let date = pgn
            .lines()
            .find_map(|l| l.strip_prefix("[Date \"")?.strip_suffix("\"]"))
            .unwrap_or_default();
        assert!(
            date.len() == 10 && date.chars().all(|c| c.is_ascii_digit() || c == '.'),
            "board {id}: Date tag {date:?}"
        );
        // Every MovePlayed extends the game by one ply (a provisional move the tracker
        // corrects is retracted first), and its clock stamps are plausible.
        let mut len = 0u32;
        for e in events[i].all() {
            match e {
                Ev::Signal(Event::MovePlayed {
                    ply,
                    white_ms,
                    black_ms,
                    ..
                }) => {
                    assert_eq!(ply, len + 1, "board {id}");
                    assert!(white_ms > 0 && black_ms > 0, "board {id}: ply {ply}");
                    len = ply;
                }
                Ev::Signal(Event::MoveRetracted { ply, .. }) => {
                    assert!(ply <= len, "board {id}: retracts ply {ply} of {len}");
                    len = ply - 1;
                }
                Ev::Signal(Event::GameStarted { .. }) => len = 0,
                _ => {}
            }
        }
        assert_eq!(len as usize, want.len(), "board {id}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn illegal_placement_alerted_before_the_press_then_completed() {
    let dir = tempfile::tempdir().unwrap();
    let sim = sim_board(dir.path(), "ill", 1.0, BoardOptions::default()).await;
    let port = sim.path().display().to_string();
    let s = Setup::start_in(dir, &["--port", &port]).await;
    let mut events = Events::start(&s.conn, "ill").await;
    ready_to_play(&sim, &mut events).await;
    let b = proxies::board(&s.conn, "ill").await;
    let mut sc = Scenario::new(&sim, quick(7));
    sc.run(&[Step::Moves(sans(&["e4", "e5"]))]).await.unwrap();
    wait_moves(&events, &sans(&["e4", "e5"])).await;

    // White's bishop jumps f1 → f3: no legal move does that.
    sc.step(&Step::IllegalPlacement {
        from: Square::F1,
        to: Square::F3,
    })
    .await
    .unwrap();
    let ev = events.next_signal("IllegalPlacement").await;
    assert!(
        matches!(
            &ev,
            Event::IllegalPlacement {
                player: Player::White,
                ..
            }
        ),
        "{ev:?}"
    );
    assert!(
        !now(&s.conn, &b)
            .await
            .pending_illegal()
            .await
            .unwrap()
            .is_empty()
    );
    assert!(!now(&s.conn, &b).await.in_sync().await.unwrap());
    assert!(
        !events
            .all()
            .iter()
            .any(|e| matches!(e, Ev::Signal(Event::IllegalMoveCompleted { .. }))),
        "the alert comes before the press"
    );

    sc.step(&Step::PressClock).await.unwrap();
    let ev = events.next_signal("IllegalMoveCompleted").await;
    assert!(
        matches!(
            &ev,
            Event::IllegalMoveCompleted {
                player: Player::White,
                count: 1,
                ..
            }
        ),
        "{ev:?}"
    );
    let mut im = b.receive_illegal_moves_changed().await;
    wait_property(&mut im, "IllegalMoves", |v| *v == (1, 0)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn threefold_claim_one_move_ahead_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let sim = sim_board(dir.path(), "rep", 1.0, BoardOptions::default()).await;
    let port = sim.path().display().to_string();
    let s = Setup::start_in(dir, &["--port", &port]).await;
    let mut events = Events::start(&s.conn, "rep").await;
    ready_to_play(&sim, &mut events).await;
    let b = proxies::board(&s.conn, "rep").await;
    let shuffle = sans(&["Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1"]);
    let mut sc = Scenario::new(&sim, quick(3));
    sc.run(&[Step::Moves(shuffle.clone())]).await.unwrap();
    wait_moves(&events, &shuffle).await;

    // Black's Ng8 would bring the start position the third time.
    let want = (
        "black".to_string(),
        "threefold-repetition".to_string(),
        "f6g8".to_string(),
    );
    let mut claims = b.receive_claims_changed().await;
    wait_property(&mut claims, "the threefold claim", |c| c.contains(&want)).await;
    let e = b
        .accept_claim("white", "threefold-repetition", "f6g8")
        .await
        .unwrap_err();
    assert_eq!(
        proxies::error_name(&e),
        "org.eboardd.Bridge1.Error.ClaimNotAvailable"
    );
    b.accept_claim(&want.0, &want.1, &want.2).await.unwrap();
    let ev = events.next_signal("GameEnded").await;
    assert_eq!(
        ev,
        Event::GameEnded {
            result: GameResult::Draw,
            termination: Termination::Claim
        }
    );
    assert_eq!(now(&s.conn, &b).await.result().await.unwrap(), "1/2-1/2");
    assert_eq!(now(&s.conn, &b).await.state().await.unwrap(), "finished");
}

fn short_clock() -> BoardOptions {
    BoardOptions {
        clock_setup: ClockSetup {
            base_ms: 20_000,
            increment_ms: 0,
        },
        ..BoardOptions::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flag_fall_with_mating_material_loses() {
    let (_s, sim, mut events) = rapid_on_a_short_clock("flag").await;
    ready_to_play(&sim, &mut events).await;
    let mut sc = Scenario::new(&sim, quick(5));
    sc.run(&[Step::Moves(sans(&["e4", "e5", "Nf3"])), Step::FlagFall])
        .await
        .unwrap();
    flag_then_end(
        &mut events,
        Player::Black,
        GameResult::WhiteWins,
        Termination::TimeForfeit,
    )
    .await;
}

/// A simulated board `id` with a short clock, served by a fresh daemon with rapid rules.
async fn rapid_on_a_short_clock(id: &str) -> (Setup, SimHandle, Events) {
    let dir = tempfile::tempdir().unwrap();
    let sim = sim_board(dir.path(), id, 10.0, short_clock()).await;
    let port = sim.path().display().to_string();
    let s = Setup::start_in(dir, &["--port", &port, "--rules", "rapid"]).await;
    let events = Events::start(&s.conn, id).await;
    (s, sim, events)
}

/// `flagged`'s flag falls, then the game ends with `result` by `termination`.
async fn flag_then_end(
    events: &mut Events,
    flagged: Player,
    result: GameResult,
    termination: Termination,
) {
    let flag = events.next_signal("FlagFell").await;
    assert_eq!(flag, Event::FlagFell { player: flagged });
    let ended = events.next_signal("GameEnded").await;
    assert_eq!(
        ended,
        Event::GameEnded {
            result,
            termination
        }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flag_fall_without_mating_material_is_a_draw() {
    let (s, sim, mut events) = rapid_on_a_short_clock("flag2").await;
    ready(&sim).await;
    let b = proxies::board(&s.conn, "flag2").await;
    // White has a queen, Black a bare king: White's flag falls, Black cannot mate.
    let fen = "8/8/4k3/8/8/8/4K3/7Q w - - 0 1";
    let setup: Board = fen.split(' ').next().unwrap().parse().unwrap();
    sim.act(Action::SetPosition(setup)).await.unwrap();
    b.set_position(fen).await.unwrap();
    wait_started(&mut events).await;
    // Black starts White's clock, which then runs out.
    sim.press_lever(ClockSide::Right).await.unwrap();
    let mut sc = Scenario::new(&sim, quick(9));
    sc.step(&Step::FlagFall).await.unwrap();
    flag_then_end(
        &mut events,
        Player::White,
        GameResult::Draw,
        Termination::FlagFallDraw,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn move_made_while_unplugged_is_inferred_after_replug() {
    let dir = tempfile::tempdir().unwrap();
    let sim = sim_board(dir.path(), "unp", 1.0, BoardOptions::default()).await;
    let port = sim.path().display().to_string();
    let s = Setup::start_in(dir, &["--port", &port]).await;
    let mut events = Events::start(&s.conn, "unp").await;
    ready_to_play(&sim, &mut events).await;
    let b = proxies::board(&s.conn, "unp").await;
    let mut sc = Scenario::new(&sim, quick(11));
    sc.run(&[Step::Moves(sans(&["e4", "e5"]))]).await.unwrap();
    wait_moves(&events, &sans(&["e4", "e5"])).await;

    sc.step(&Step::Unplug).await.unwrap();
    let mut connected = b.receive_connected_changed().await;
    wait_property(&mut connected, "Connected = false", |c| !*c).await;
    sc.step(&Step::Move("Nf3".into())).await.unwrap();
    sc.step(&Step::Replug).await.unwrap();
    wait_property(&mut connected, "Connected = true", |c| *c).await;
    wait_moves(&events, &sans(&["e4", "e5", "Nf3"])).await;
    assert_eq!(
        now(&s.conn, &b).await.moves().await.unwrap(),
        sans(&["e4", "e5", "Nf3"])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_mid_game_then_restore_and_continue() {
    let dir = tempfile::tempdir().unwrap();
    let sim = sim_board(dir.path(), "k9", 1.0, BoardOptions::default()).await;
    let port = sim.path().display().to_string();
    let mut s = Setup::start_in(dir, &["--port", &port]).await;
    let mut events = Events::start(&s.conn, "k9").await;
    ready_to_play(&sim, &mut events).await;
    let first = sans(&["d4", "Nf6", "c4", "e6", "Nc3", "Bb4"]);
    let mut sc = Scenario::new(&sim, quick(13));
    sc.run(&[Step::Moves(first.clone())]).await.unwrap();
    wait_moves(&events, &first).await;

    s.daemon.signal(nix::sys::signal::Signal::SIGKILL);
    let status = s.daemon.wait(WAIT).await;
    assert_eq!(code(status), 128 + 9);

    let mut again = Daemon::spawn(&s.bus, s.dir.path(), &["--port", &port]);
    again.wait_for_name(&s.conn).await;
    let b: BoardProxy<'_> = proxies::board(&s.conn, "k9").await;
    assert_eq!(
        now(&s.conn, &b).await.moves().await.unwrap(),
        first,
        "restored from the journal"
    );
    let events = Events::start(&s.conn, "k9").await;
    let mut connected = b.receive_connected_changed().await;
    wait_property(&mut connected, "Connected after restart", |c| *c).await;
    sc.run(&[Step::Moves(sans(&["e3", "O-O"]))]).await.unwrap();
    // The game goes on from ply 7 (a castling done rook first may show a provisional
    // rook move that is retracted and replaced).
    events
        .wait_until("plies 7 and 8", |all| sans_of(all) == sans(&["e3", "O-O"]))
        .await;
    let first_ply = events.all().iter().find_map(|e| match e {
        Ev::Signal(Event::MovePlayed { ply, .. }) => Some(*ply),
        _ => None,
    });
    assert_eq!(first_ply, Some(7));
    let mut all = first.clone();
    all.extend(sans(&["e3", "O-O"]));
    assert_eq!(now(&s.conn, &b).await.moves().await.unwrap(), all);
}
