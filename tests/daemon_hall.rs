//! The hall's hand (the second model, `tracker_common/hand.rs`: replies from 0 ms to 2 s,
//! victim or capturer first, castling in four orders, slides set down on the way, j'adoube,
//! a knocked piece put back, late presses or no clock) played in real time on simulated
//! boards behind ptys, one game per board side by side, through the `eboardd` binary on a
//! private bus. Whenever the board has stood still 2.5 s, D-Bus `Moves` must be the game so
//! far, or `Gap` must say what the arbiter is asked (a record behind the board in silence is
//! the defect this soak counts); at the end every game is exact, in sync, and nobody was
//! accused.

mod common;
#[path = "tracker_common/hand.rs"]
mod hand;

use std::time::Duration;

use common::events::{Ev, Event, Events};
use common::proxies;
use common::rig::{port_args, sim_ports, wait_moves};
use common::sim::{corpus_games, sim_board};
use common::{Setup, WAIT, within};
use eboardd::board::Orientation;
use eboardd::sim::handling::SensorStep;
use eboardd::sim::scenario::side_of;
use eboardd::sim::{BoardOptions, ClockPresence, PgnGame, SimHandle};
use hand::{HallGame, STILL_MS, script};
use shakmaty::san::San;
use shakmaty::{Chess, Move, Position};

/// One board of the soak: its game and how the hall plays it.
struct Table {
    id: String,
    game: PgnGame,
    hall: HallGame,
}

/// What one board's game came to at its still boards.
#[derive(Debug, Default)]
struct Seen {
    checks: usize,
    /// Still boards at which `Moves` was not the game so far and `Gap` said so.
    asked: usize,
    /// Still boards at which `Moves` was not the game so far and nothing was said.
    silent: Vec<String>,
}

fn moves_of(game: &PgnGame) -> Vec<Move> {
    let mut pos = Chess::default();
    game.sans
        .iter()
        .map(|text| {
            let m = text
                .parse::<San>()
                .ok()
                .and_then(|san| san.to_move(&pos).ok())
                .unwrap_or_else(|| panic!("corpus move {text}"));
            pos.play_unchecked(m);
            m
        })
        .collect()
}

/// Play `table`'s game on `sim` with the hall's hand, checking the record at each still board.
async fn play(conn: &zbus::Connection, sim: &SimHandle, table: &Table) -> Seen {
    let moves = moves_of(&table.game);
    let mut pos = Chess::default();
    let mut seen = Seen::default();
    for (ply, p) in script(&moves, &table.hall).into_iter().enumerate() {
        let mover = side_of(sim, pos.turn());
        for step in &p.steps {
            match *step {
                SensorStep::Lift(sq) => drop(sim.lift(sq).await.unwrap()),
                SensorStep::Place(sq, piece) => drop(sim.place(sq, piece).await.unwrap()),
                SensorStep::Pause(ms) => sim.sleep(ms).await,
                SensorStep::Press => drop(sim.press_lever(mover).await.unwrap()),
            }
        }
        pos.play_unchecked(p.mv);
        if p.still_after {
            sim.sleep(STILL_MS).await;
            seen.checks += 1;
            let board = proxies::fresh(conn, &table.id).await;
            let record = board.moves().await.unwrap();
            let so_far = &table.game.sans[..=ply];
            if record != so_far {
                let gap = board.gap().await.unwrap();
                if gap.is_empty() {
                    seen.silent.push(format!(
                        "ply {}: Moves ends {:?}, the game {:?}",
                        ply + 1,
                        record.iter().rev().take(3).collect::<Vec<_>>(),
                        so_far.iter().rev().take(3).collect::<Vec<_>>()
                    ));
                } else {
                    seen.asked += 1;
                }
            }
        }
    }
    seen
}

async fn soak(tables: Vec<Table>) {
    let dir = tempfile::tempdir().unwrap();
    let mut sims = Vec::new();
    for t in &tables {
        let board = BoardOptions {
            orientation: t.hall.orientation,
            clock: if t.hall.clock {
                ClockPresence::Present
            } else {
                ClockPresence::Absent
            },
            ..BoardOptions::default()
        };
        // Real time: the daemon reads the hand's pauses as a hall's boards send them.
        sims.push(sim_board(dir.path(), &t.id, 1.0, board).await);
    }
    let ports = sim_ports(&sims);
    let s = Setup::start_in(dir, &port_args(&ports)).await;
    let mut events = Vec::new();
    for t in &tables {
        events.push(Events::start(&s.conn, &t.id).await);
    }
    for (sim, e) in sims.iter().zip(events.iter_mut()) {
        sim.wait_for_update_mode(WAIT)
            .await
            .expect("the daemon puts the board in update mode");
        e.next_signal("GameStarted").await;
    }
    let runs = tables
        .iter()
        .zip(&sims)
        .map(|(t, sim)| play(&s.conn, sim, t));
    let seen = within(
        Duration::from_secs(600),
        "the hall's games",
        futures_util::future::join_all(runs),
    )
    .await;
    let mut report = Vec::new();
    for ((t, e), seen) in tables.iter().zip(&events).zip(&seen) {
        let what = format!(
            "board {} (seed {}, clock {}, {:?})",
            t.id, t.hall.seed, t.hall.clock, t.hall.orientation
        );
        within(Duration::from_secs(30), &what, wait_moves(e, &t.game.sans)).await;
        let board = proxies::fresh(&s.conn, &t.id).await;
        assert_eq!(board.moves().await.unwrap(), t.game.sans, "{what}");
        assert!(board.in_sync().await.unwrap(), "{what}");
        assert_eq!(board.gap().await.unwrap(), "", "{what}");
        let accused: Vec<Ev> = e
            .all()
            .into_iter()
            .filter(|ev| {
                matches!(
                    ev,
                    Ev::Signal(Event::IllegalPlacement { .. } | Event::IllegalMoveCompleted { .. })
                )
            })
            .collect();
        assert!(accused.is_empty(), "{what}: {accused:?}");
        assert!(
            seen.silent.is_empty(),
            "{what}: behind in silence: {:?}",
            seen.silent
        );
        assert!(
            seen.checks > 0,
            "{what}: the board stood still at the end at least"
        );
        report.push(format!(
            "{what}: {} plies, {} still boards, {} asked",
            t.game.sans.len(),
            seen.checks,
            seen.asked
        ));
    }
    println!("{}", report.join("\n"));
}

/// Six boards, one game each: with a clock and without, either way round.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_halls_hand_in_real_time_through_the_daemon_every_game_exact_never_silent() {
    let games = corpus_games(60, 30..=70);
    let tables: Vec<Table> = (0..6)
        .map(|i| Table {
            id: format!("hall{i}"),
            game: games[i * 9 + 3].clone(),
            hall: HallGame {
                seed: 0x5eed_0000 + i as u64,
                clock: i % 2 == 0,
                orientation: if i % 3 == 1 {
                    Orientation::Reversed
                } else {
                    Orientation::Normal
                },
                trace: None,
                reply_ms: None,
            },
        })
        .collect();
    soak(tables).await;
}
