//! The hall's hand (the second model, `tracker_common/hand.rs`: replies from 0 ms to 2 s,
//! victim or capturer first, castling in four orders, slides set down on the way, j'adoube,
//! a knocked piece put back, late presses or no clock) played in real time on simulated
//! boards behind ptys, one game per board side by side, through the `eboardd` binary on a
//! private bus. Whenever the board has stood still 2.5 s, D-Bus `Moves` must be the game so
//! far, or `Gap` must say what the arbiter is asked (a record behind the board in silence is
//! the defect this soak counts); at the end every game is exact, in sync, and nobody was
//! accused.

mod common;
#[path = "tracker_common/faults.rs"]
mod faults;
#[path = "tracker_common/hand.rs"]
mod hand;

use std::time::Duration;

use common::events::{Ev, Event, Events};
use common::proxies;
use common::rig::{port_args, sim_ports, wait_moves};
use common::sim::{corpus_games, sim_board};
use common::{Daemon, Setup, WAIT, within};
use eboard_core::board::Orientation;
use eboard_sim::handling::SensorStep;
use eboard_sim::scenario::side_of;
use eboard_sim::{BoardOptions, ClockPresence, PgnGame, SimHandle};
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

// ----- bullet pace through unplugs and kills -------------------------------------------

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use eboard_sim::ClockSetup;
use shakmaty::CastlingMode;
use shakmaty::uci::UciMove;

/// How long after `Gap` first waits for him the arbiter answers from the scoresheet.
const ARBITER_AFTER: Duration = Duration::from_secs(3);

/// One board of the bullet soak, as its players, its arbiter and the checks share it.
struct Bullet {
    table: Table,
    /// The clock (`None`: no clock on this board).
    clock: Option<ClockSetup>,
    /// The game's UCI moves as played so far (the arbiter's scoresheet).
    played: Mutex<Vec<String>>,
    /// Still boards at which the record was behind and `Gap` said nothing, or the record
    /// was no game played.
    wrong: Mutex<Vec<String>>,
    /// Gaps the arbiter answered, and his answers refused.
    answers: Mutex<(usize, Vec<String>)>,
    /// Plies made while this board was unplugged.
    unseen: Mutex<usize>,
}

/// The daemon's state as the players and the arbiters see it.
struct Hall {
    up: AtomicBool,
    done: AtomicBool,
}

/// Play `b`'s game at bullet pace, the plug pulled as its fault plan says.
async fn play_bullet(conn: &zbus::Connection, sim: &SimHandle, b: &Bullet, hall: &Hall) {
    let moves = moves_of(&b.table.game);
    let plan: Vec<faults::FaultAt> = faults::plan(b.table.hall.seed, moves.len())
        .into_iter()
        .map(|f| faults::FaultAt {
            unseen: f.unseen.min(10),
            ..f
        })
        .collect();
    let plies = script(&moves, &b.table.hall);
    let mut pos = Chess::default();
    let mut unplugged_until = None;
    for (ply, p) in plies.iter().enumerate() {
        if let Some(f) = plan.iter().find(|f| f.ply == ply) {
            sim.unplug().await.unwrap();
            unplugged_until = Some(ply + f.unseen);
        }
        let mover = side_of(sim, pos.turn());
        for step in &p.steps {
            match *step {
                SensorStep::Lift(sq) => drop(sim.lift(sq).await.unwrap()),
                SensorStep::Place(sq, piece) => drop(sim.place(sq, piece).await.unwrap()),
                SensorStep::Pause(ms) => sim.sleep(ms).await,
                SensorStep::Press => drop(sim.press_lever(mover).await.unwrap()),
            }
        }
        b.played
            .lock()
            .unwrap()
            .push(UciMove::from_move(p.mv, CastlingMode::Standard).to_string());
        pos.play_unchecked(p.mv);
        if let Some(until) = unplugged_until {
            *b.unseen.lock().unwrap() += 1;
            if ply + 1 >= until {
                sim.replug().await.unwrap();
                unplugged_until = None;
            }
            continue;
        }
        if !p.still_after {
            continue;
        }
        sim.sleep(STILL_MS).await;
        if !hall.up.load(Ordering::SeqCst) {
            continue;
        }
        let board = proxies::fresh(conn, &b.table.id).await;
        let (Ok(record), Ok(gap)) = (board.moves().await, board.gap().await) else {
            continue;
        };
        let so_far = &b.table.game.sans[..=ply];
        if !so_far.starts_with(&record) {
            b.wrong.lock().unwrap().push(format!(
                "ply {}: the record is no game played: it ends {:?}, the game {:?} (gap {gap:?})",
                ply + 1,
                record.iter().rev().take(4).collect::<Vec<_>>(),
                so_far.iter().rev().take(4).collect::<Vec<_>>()
            ));
        } else if record != so_far && gap.is_empty() {
            b.wrong.lock().unwrap().push(format!(
                "ply {}: the record has {} plies and Gap says nothing",
                ply + 1,
                record.len()
            ));
        }
    }
    if unplugged_until.is_some() {
        sim.replug().await.unwrap();
    }
}

/// The arbiter at `b`: once `Gap` has waited for him [`ARBITER_AFTER`], he answers with the
/// moves from the record's last one, from the scoresheet.
async fn arbiter(conn: &zbus::Connection, b: &Bullet, hall: &Hall) {
    let mut since: Option<Instant> = None;
    while !hall.done.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(250)).await;
        if !hall.up.load(Ordering::SeqCst) {
            since = None;
            continue;
        }
        let board = proxies::fresh(conn, &b.table.id).await;
        let Ok(gap) = board.gap().await else {
            continue;
        };
        if !gap.contains("waiting for the arbiter") {
            since = None;
            continue;
        }
        if since.get_or_insert_with(Instant::now).elapsed() < ARBITER_AFTER {
            continue;
        }
        since = None;
        let Ok(record) = board.moves().await else {
            continue;
        };
        let moves: Vec<String> = {
            let played = b.played.lock().unwrap();
            played[record.len().min(played.len())..].to_vec()
        };
        let answer = board.resolve_gap(&moves).await;
        let mut answers = b.answers.lock().unwrap();
        match answer {
            Ok(()) => answers.0 += 1,
            Err(e) => answers.1.push(proxies::error_message(&e)),
        }
    }
}

/// Kill -9 the daemon at each of `at` (from the start) for `down`, while the players play
/// on, and start it again on the same state.
async fn conduct(
    daemon: &mut Daemon,
    s: (&common::Bus, &std::path::Path, &zbus::Connection),
    args: &[&str],
    hall: &Hall,
    at: &[Duration],
    down: Duration,
) -> usize {
    let (bus, dir, conn) = s;
    let start = Instant::now();
    let mut kills = 0;
    for &when in at {
        tokio::time::sleep(when.saturating_sub(start.elapsed())).await;
        if hall.done.load(Ordering::SeqCst) {
            break;
        }
        hall.up.store(false, Ordering::SeqCst);
        daemon.kill9().await;
        kills += 1;
        tokio::time::sleep(down).await;
        *daemon = Daemon::spawn(bus, dir, args);
        daemon.wait_for_name(conn).await;
        hall.up.store(true, Ordering::SeqCst);
    }
    kills
}

/// Four boards at bullet pace (replies 0–150 ms, the hall's hand), a 3+2, a 3+0, a 1+1 clock
/// and none; each board unplugged as its fault plan says with up to 10 plies made unseen,
/// and the daemon killed (-9) twice for 2.5 s in the middle of the games. The arbiter
/// answers what `Gap` asks from the scoresheet. Every game ends exact, in sync, nobody
/// accused, and no still board shows a record of a game not played or one behind in silence.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_bullet_pace_through_unplugs_and_kills_every_game_ends_exact() {
    let games = corpus_games(60, 36..=56);
    let clocks = [
        Some(ClockSetup::default()),
        Some(ClockSetup {
            base_ms: 180_000,
            increment_ms: 0,
        }),
        Some(ClockSetup {
            base_ms: 60_000,
            increment_ms: 1_000,
        }),
        None,
    ];
    let boards: Vec<Bullet> = clocks
        .into_iter()
        .enumerate()
        .map(|(i, clock)| Bullet {
            table: Table {
                id: format!("bullet{i}"),
                game: games[i * 11 + 5].clone(),
                hall: HallGame {
                    seed: 0xb011_e700 + i as u64,
                    clock: clock.is_some(),
                    orientation: if i == 1 {
                        Orientation::Reversed
                    } else {
                        Orientation::Normal
                    },
                    trace: None,
                    reply_ms: Some((0, 150)),
                },
            },
            clock,
            played: Mutex::new(Vec::new()),
            wrong: Mutex::new(Vec::new()),
            answers: Mutex::new((0, Vec::new())),
            unseen: Mutex::new(0),
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let mut sims = Vec::new();
    for b in &boards {
        let options = BoardOptions {
            orientation: b.table.hall.orientation,
            clock: if b.clock.is_some() {
                ClockPresence::Present
            } else {
                ClockPresence::Absent
            },
            clock_setup: b.clock.unwrap_or_default(),
            ..BoardOptions::default()
        };
        sims.push(sim_board(dir.path(), &b.table.id, 1.0, options).await);
    }
    let ports = sim_ports(&sims);
    let args = port_args(&ports);
    let s = Setup::start_in(dir, &args).await;
    let Setup {
        dir,
        bus,
        mut daemon,
        conn,
    } = s;
    let mut events = Vec::new();
    for b in &boards {
        events.push(Events::start(&conn, &b.table.id).await);
    }
    for (sim, e) in sims.iter().zip(events.iter_mut()) {
        sim.wait_for_update_mode(WAIT)
            .await
            .expect("the daemon puts the board in update mode");
        e.next_signal("GameStarted").await;
    }
    let hall = Arc::new(Hall {
        up: AtomicBool::new(true),
        done: AtomicBool::new(false),
    });
    let players = futures_util::future::join_all(
        boards
            .iter()
            .zip(&sims)
            .map(|(b, sim)| play_bullet(&conn, sim, b, &hall)),
    );
    let arbiters = futures_util::future::join_all(boards.iter().map(|b| arbiter(&conn, b, &hall)));
    // Twice in the middle of the games, down long enough for a dozen bullet plies.
    let kill_at = [Duration::from_secs(9), Duration::from_secs(24)];
    let kills = conduct(
        &mut daemon,
        (&bus, dir.path(), &conn),
        &args,
        &hall,
        &kill_at,
        Duration::from_millis(2_500),
    );
    let played_and_checked = async {
        let kills = futures_util::future::join(players, kills).await.1;
        // The players are done: the record comes level with each game (the arbiter
        // answering what is still asked), or the checks below say how it ended.
        for b in &boards {
            let _ = tokio::time::timeout(Duration::from_secs(60), async {
                loop {
                    let board = proxies::fresh(&conn, &b.table.id).await;
                    let level = board.moves().await.is_ok_and(|m| m == b.table.game.sans)
                        && board.gap().await.is_ok_and(|g| g.is_empty());
                    if level {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
            })
            .await;
        }
        hall.done.store(true, Ordering::SeqCst);
        kills
    };
    let (kills, _) = within(
        Duration::from_secs(600),
        "the bullet games",
        futures_util::future::join(played_and_checked, arbiters),
    )
    .await;
    assert_eq!(kills, 2, "both kills came while the games were on");
    let mut report = Vec::new();
    for (b, e) in boards.iter().zip(&events) {
        let what = format!(
            "board {} (seed {}, clock {:?}, {:?})",
            b.table.id, b.table.hall.seed, b.clock, b.table.hall.orientation
        );
        let board = proxies::fresh(&conn, &b.table.id).await;
        let answers = b.answers.lock().unwrap().clone();
        assert_eq!(
            board.moves().await.unwrap(),
            b.table.game.sans,
            "{what}: gap {:?}, the arbiter refused {:?}",
            board.gap().await,
            answers.1
        );
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
        let wrong = b.wrong.lock().unwrap();
        assert!(wrong.is_empty(), "{what}: {wrong:?}");
        report.push(format!(
            "{what}: {} plies, {} unplugged unseen, the arbiter answered {} ({} refused)",
            b.table.game.sans.len(),
            b.unseen.lock().unwrap(),
            answers.0,
            answers.1.len()
        ));
    }
    println!("{}", report.join("\n"));
    drop(daemon);
}
