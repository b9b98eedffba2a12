//! Chess960 through a pty: a simulated board set up on 50 random Chess960 start positions,
//! eboardd serving it with `variant = "chess960"` on a private bus; every game starts from
//! the position set up and its moves — castling whenever it is legal, king-takes-rook UCI —
//! come out exact. (Both board orientations and every castling hand order are covered by the
//! session tests in `session_game.rs`.)

mod common;

use std::time::Duration;

use common::events::{Ev, Event, Events};
use common::proxies::fresh;
use common::sim::sim_board;
use common::{Bus, Daemon, WAIT, within};
use eboard_sim::{BoardOptions, ClockSetup, Noise, Pace, Scenario, ScenarioOptions, Step};
use rand::{Rng, SeedableRng};
use shakmaty::{CastlingMode, EnPassantMode, Position};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_chess960_start_positions_through_a_pty() {
    let dir = tempfile::tempdir().unwrap();
    let board = BoardOptions {
        clock_setup: ClockSetup {
            base_ms: 90 * 60_000,
            increment_ms: 30_000,
        },
        ..BoardOptions::default()
    };
    let sim = sim_board(dir.path(), "fr", 25.0, board).await;
    let config = dir.path().join("eboardd.toml");
    std::fs::write(
        &config,
        format!(
            "[[board]]\nname = \"fr\"\nport = \"{}\"\nvariant = \"chess960\"\n",
            dir.path().join("fr").display()
        ),
    )
    .unwrap();
    let bus = Bus::start(dir.path()).await;
    let mut daemon = Daemon::spawn(&bus, dir.path(), &["--config", config.to_str().unwrap()]);
    let conn = bus.client().await;
    daemon.wait_for_name(&conn).await;
    let mut events = Events::start(&conn, "fr").await;
    sim.wait_for_update_mode(WAIT).await.unwrap();
    let b = fresh(&conn, "fr").await;
    assert_eq!(b.variant().await.unwrap(), "chess960");

    let mut rng = rand::rngs::SmallRng::seed_from_u64(60);
    let mut scenario = Scenario::new(
        &sim,
        ScenarioOptions {
            pace: Pace::quick(),
            noise: Noise::Noisy,
            seed: 5,
            ..ScenarioOptions::default()
        },
    );
    let mut castled = 0;
    for game in 0..50 {
        let n = rng.random_range(0..960);
        let white = eboard_core::tracker::chess960::back_rank_of(n)
            .iter()
            .collect::<String>();
        let fen = format!(
            "{}/pppppppp/8/8/8/8/PPPPPPPP/{white} w - - 0 1",
            white.to_lowercase()
        );
        let setup = fen.parse::<shakmaty::fen::Fen>().unwrap().into_setup();
        let start = eboard_core::tracker::chess960::start_position(&setup.board).unwrap();
        let want_fen = shakmaty::fen::Fen::from_position(&start, EnPassantMode::Legal).to_string();
        scenario
            .step(&Step::SetUp {
                position: Box::new(start.clone()),
                clock: ClockSetup {
                    base_ms: 90 * 60_000,
                    increment_ms: 30_000,
                },
            })
            .await
            .unwrap();
        let started = events
            .next_matching(
                &format!("game {game}: GameStarted #{n}"),
                |e| matches!(e, Ev::Signal(Event::GameStarted { fen: f }) if *f == want_fen),
            )
            .await;
        drop(started);
        // A few moves, castling as soon as it is legal.
        let mut pos = start.clone();
        let mut sans = Vec::new();
        let mut ucis = Vec::new();
        for _ in 0..8 {
            let legal = pos.legal_moves();
            let castles: Vec<_> = legal.iter().filter(|m| m.is_castle()).copied().collect();
            let mv = if castles.is_empty() {
                legal[rng.random_range(0..legal.len())]
            } else {
                castled += 1;
                castles[rng.random_range(0..castles.len())]
            };
            sans.push(shakmaty::san::SanPlus::from_move(pos.clone(), mv).to_string());
            ucis.push(mv.to_uci(CastlingMode::Chess960).to_string());
            scenario.play_move(&mv).await.unwrap();
            pos.play_unchecked(mv);
            if pos.is_game_over() {
                break;
            }
        }
        within(WAIT, &format!("game {game} (#{n}): the moves"), async {
            while b.moves().await.unwrap() != sans {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await;
        // `Moves` is read on the same connection the signals come on, but the recorder takes
        // them off it in its own task: wait for it to have every move's `MovePlayed`.
        events
            .wait_until(
                &format!("game {game} (#{n}): a MovePlayed for each of {ucis:?}"),
                |all| {
                    let seen: Vec<&String> = all
                        .iter()
                        .rev()
                        .take_while(|e| !matches!(e, Ev::Signal(Event::GameStarted { .. })))
                        .filter_map(|e| match e {
                            Ev::Signal(Event::MovePlayed { uci, .. }) => Some(uci),
                            _ => None,
                        })
                        .collect();
                    ucis.iter().all(|u| seen.contains(&u))
                },
            )
            .await;
        let pgn = b.pgn().await.unwrap();
        assert!(
            pgn.contains("[Variant \"Chess960\"]") && pgn.contains(&want_fen),
            "{pgn}"
        );
    }
    assert!(castled >= 5, "castling was played ({castled} times)");
    sim.shutdown().await;
}
