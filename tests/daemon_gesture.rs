//! The result gesture never reaches a broadcast output, through the `eboardd` binary: a
//! board without a clock on the simulator's pty, a private bus. After 1. d3 d6 2. Kd2 Kd7
//! 3. Ke3 Ke6, White's king steps to e4 (a legal move) and Black's joins it on d5: the game
//! ends 1-0 by the gesture and `Ke4` is in no `Pgn` value announced and in no reading of the
//! live PGN file, while `MovePlayed` showed it and `MoveRetracted` withdrew it. A real Ke4
//! (the black king stays where it is) stays, and reaches `Pgn` once the gesture window has
//! passed.

mod common;

use common::events::{Ev, Event, Events, FileReadings, sans_of};
use common::sim::sim_board;
use common::{Setup, WAIT, within};
use eboard_sim::{BoardOptions, ClockPresence, SimHandle};
use shakmaty::{Piece, Square};

/// The SAN moves of the PGN's games in order (comments, numbers and results dropped).
fn moves_in(pgn: &str) -> Vec<String> {
    eboard_sim::parse_games(pgn)
        .into_iter()
        .flat_map(|g| g.sans)
        .collect()
}

/// Every `Pgn` value announced so far.
fn pgn_values(all: &[Ev]) -> Vec<String> {
    all.iter()
        .filter_map(|e| match e {
            Ev::Changed(_, values) => values
                .get("Pgn")
                .and_then(|v| String::try_from(v.try_clone().ok()?).ok()),
            _ => None,
        })
        .collect()
}

async fn lift(sim: &SimHandle, sq: Square) {
    sim.lift(sq).await.expect("lift");
    sim.sleep(80).await;
}

async fn place(sim: &SimHandle, sq: Square, piece: char, rest_ms: u64) {
    sim.place(sq, Piece::from_char(piece).expect("piece"))
        .await
        .expect("place");
    sim.sleep(rest_ms).await;
}

/// A daemon on a clock-less simulated board named `id`, the start position read, a reader
/// of the live PGN file after every signal, and 1. d3 d6 2. Kd2 Kd7 3. Ke3 Ke6 played.
struct Game {
    sim: SimHandle,
    _setup: Setup,
    events: Events,
    files: FileReadings,
}

impl Game {
    async fn kings_forward(id: &str) -> Game {
        let dir = tempfile::tempdir().unwrap();
        let board = BoardOptions {
            clock: ClockPresence::Absent,
            ..BoardOptions::default()
        };
        let sim = sim_board(dir.path(), id, 1.0, board).await;
        let port = sim.path().display().to_string();
        let setup = Setup::start_in(dir, &["--port", &port]).await;
        let live = setup.dir.path().join(format!("state/pgn/live/{id}.pgn"));
        let mut events = Events::start(&setup.conn, id).await;
        sim.wait_for_update_mode(WAIT).await.expect("update mode");
        events.next_signal("GameStarted").await;
        let files = FileReadings::start(&setup.conn, id, live);
        use Square::*;
        within(std::time::Duration::from_secs(60), "the opening", async {
            for (from, to, piece) in [
                (D2, D3, 'P'),
                (D7, D6, 'p'),
                (E1, D2, 'K'),
                (E8, D7, 'k'),
                (D2, E3, 'K'),
                (D7, E6, 'k'),
            ] {
                lift(&sim, from).await;
                place(&sim, to, piece, 700).await;
            }
        })
        .await;
        let want = ["d3", "d6", "Kd2", "Kd7", "Ke3", "Ke6"];
        events
            .wait_until("the opening in Pgn", |all| {
                pgn_values(all).iter().any(|p| moves_in(p) == want)
            })
            .await;
        Game {
            sim,
            _setup: setup,
            events,
            files,
        }
    }

    /// Every broadcast text seen: the `Pgn` values and the live file's readings.
    fn broadcast(&self) -> Vec<String> {
        let mut all = pgn_values(&self.events.all());
        all.extend(self.files.texts());
        all
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gesture_s_king_move_never_reaches_the_pgn_or_the_live_file() {
    let mut game = Game::kings_forward("ges").await;
    let sim = &game.sim;
    // White's king to e4 (legal); Black thinks, lifts his king, holds it, sets it on d5.
    lift(sim, Square::E3).await;
    place(sim, Square::E4, 'K', 900).await;
    lift(sim, Square::E6).await;
    sim.sleep(1_200).await;
    place(sim, Square::D5, 'k', 100).await;
    let ended = game.events.next_signal("GameEnded").await;
    assert!(
        matches!(&ended, Event::GameEnded { result, termination }
            if result.as_str() == "1-0" && termination.as_str() == "result-gesture"),
        "{ended:?}"
    );
    let all = game.events.all();
    assert!(
        all.iter()
            .any(|e| matches!(e, Ev::Signal(Event::MovePlayed { san, .. }) if san == "Ke4")),
        "MovePlayed showed Ke4: {}",
        game.events.describe()
    );
    assert!(
        all.iter()
            .any(|e| matches!(e, Ev::Signal(Event::MoveRetracted { ply: 7, .. }))),
        "MoveRetracted withdrew it"
    );
    assert_eq!(sans_of(&all), ["d3", "d6", "Kd2", "Kd7", "Ke3", "Ke6"]);
    // The last Pgn has the result; the live file follows it.
    game.events
        .wait_until("the result in Pgn", |all| {
            pgn_values(all)
                .last()
                .is_some_and(|p| p.contains("[Result \"1-0\"]"))
        })
        .await;
    game.files.stop();
    let texts = game.broadcast();
    assert!(!game.files.texts().is_empty(), "the live file was read");
    for text in &texts {
        assert!(
            !moves_in(text).iter().any(|m| m == "Ke4"),
            "Ke4 reached a broadcast output:\n{text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_king_move_to_e4_stays_and_becomes_final() {
    let game = Game::kings_forward("kmv").await;
    let sim = &game.sim;
    lift(sim, Square::E3).await;
    place(sim, Square::E4, 'K', 100).await;
    let want = ["d3", "d6", "Kd2", "Kd7", "Ke3", "Ke6", "Ke4"];
    // Black leaves his king on e6: Ke4 is final once the gesture window has passed.
    game.events
        .wait_until("Ke4 in Pgn", |all| {
            pgn_values(all).iter().any(|p| moves_in(p) == want)
        })
        .await;
    assert_eq!(sans_of(&game.events.all()), want);
    // And Black's reply follows it as any move does.
    lift(sim, Square::E6).await;
    place(sim, Square::F6, 'k', 100).await;
    game.events
        .wait_until("Kf6 played", |all| {
            sans_of(all).last().is_some_and(|m| m == "Kf6")
        })
        .await;
    game.files.stop();
}
