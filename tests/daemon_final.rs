//! Broadcast outputs carry final moves only (contract section 2): a game with slides, a
//! slider set down on the way and moved on, and a rook-first castling, played on the
//! simulator's pty into the `eboardd` binary. After every signal the live PGN file is read,
//! and every `Pgn` value announced is kept: none of them ever holds a move that is later
//! retracted, while `MovePlayed`/`MoveRetracted` show the correction.

mod common;

use common::events::{Ev, Event, Events, FileReadings, sans_of};
use common::sim::sim_board;
use common::{Setup, WAIT, within};
use eboard_sim::{BoardOptions, ClockSide, SimHandle};
use shakmaty::{Color, Piece, Square};

/// The SAN moves of the PGN's games (segments) in order, read with `pgn-reader` through
/// `sim::pgn` (comments, move numbers and results dropped).
fn moves_in(pgn: &str) -> Vec<String> {
    eboard_sim::parse_games(pgn)
        .into_iter()
        .flat_map(|g| g.sans)
        .collect()
}

struct Hands<'a> {
    sim: &'a SimHandle,
}

impl Hands<'_> {
    fn side(&self, color: Color) -> ClockSide {
        match color {
            Color::White => self.sim.options().white_display,
            Color::Black => self.sim.options().white_display.other(),
        }
    }

    async fn lift(&self, sq: Square) {
        self.sim.lift(sq).await.expect("lift");
        self.sim.sleep(40).await;
    }

    async fn place(&self, sq: Square, piece: char, rest_ms: u64) {
        self.sim
            .place(sq, Piece::from_char(piece).expect("piece"))
            .await
            .expect("place");
        self.sim.sleep(rest_ms).await;
    }

    async fn press(&self, color: Color) {
        self.sim.press_lever(self.side(color)).await.expect("press");
        self.sim.sleep(300).await;
    }

    /// Lift + place + press.
    async fn play(&self, from: Square, to: Square, piece: char, color: Color) {
        self.lift(from).await;
        self.place(to, piece, 150).await;
        self.press(color).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_live_pgn_never_holds_a_move_that_is_later_retracted() {
    let dir = tempfile::tempdir().unwrap();
    let sim = sim_board(dir.path(), "fin", 1.0, BoardOptions::default()).await;
    let port = sim.path().display().to_string();
    let s = Setup::start_in(dir, &["--port", &port]).await;
    let live = s.dir.path().join("state/pgn/live/fin.pgn");
    let mut events = Events::start(&s.conn, "fin").await;
    sim.wait_for_update_mode(WAIT).await.expect("update mode");
    events.next_signal("GameStarted").await;

    // Read the live PGN after every signal while the game is played.
    let readings = FileReadings::start(&s.conn, "fin", live.clone());

    let h = Hands { sim: &sim };
    use Color::{Black, White};
    use Square::*;
    within(std::time::Duration::from_secs(60), "the game", async {
        // Black starts White's clock.
        h.press(Black).await;
        // 1. e4, the pawn slid over e3.
        h.lift(E2).await;
        h.place(E3, 'P', 60).await;
        h.lift(E3).await;
        h.place(E4, 'P', 150).await;
        h.press(White).await;
        h.play(E7, E5, 'p', Black).await;
        h.play(G1, F3, 'N', White).await;
        h.play(B8, C6, 'n', Black).await;
        // 3. Bc4, the bishop set down on d3 for longer than any dwell, then moved on: Bd3
        // is published and corrected, before it was ever final.
        h.lift(F1).await;
        h.place(E2, 'B', 60).await;
        h.lift(E2).await;
        h.place(D3, 'B', 900).await;
        h.lift(D3).await;
        h.place(C4, 'B', 400).await;
        h.press(White).await;
        h.play(G8, F6, 'n', Black).await;
        // 4. O-O, rook first.
        h.lift(H1).await;
        h.place(F1, 'R', 120).await;
        h.lift(E1).await;
        h.place(G1, 'K', 150).await;
        h.press(White).await;
        // 4... Be7, slid from f8 (d6 is empty: held until the press).
        h.lift(F8).await;
        h.place(E7, 'b', 100).await;
        h.press(Black).await;
    })
    .await;

    let want: Vec<String> = ["e4", "e5", "Nf3", "Nc6", "Bc4", "Nf6", "O-O", "Be7"]
        .iter()
        .map(|m| m.to_string())
        .collect();
    events
        .wait_until("every move", |all| sans_of(all) == want)
        .await;
    // The last press makes Be7 final: the Pgn property gets the whole game...
    let full_pgn = |e: &Ev| match e {
        Ev::Changed(_, values) => values
            .get("Pgn")
            .and_then(|v| String::try_from(v.try_clone().ok()?).ok())
            .is_some_and(|pgn| moves_in(&pgn) == want),
        _ => false,
    };
    events
        .wait_until("the whole game in the Pgn property", |all| {
            all.iter().any(full_pgn)
        })
        .await;
    // ...and the live file, written in the same commit: once the daemon has announced
    // anything after it (the running clock), the file is there.
    let at = events.all().iter().position(full_pgn).expect("seen");
    events
        .wait_until("a signal after the whole game", |all| all.len() > at + 1)
        .await;
    let text = std::fs::read_to_string(&live).expect("live PGN");
    assert_eq!(moves_in(&text), want, "{text}");
    readings.stop();

    let all = events.all();
    let retracted = all
        .iter()
        .filter(|e| matches!(e, Ev::Signal(Event::MoveRetracted { .. })))
        .count();
    assert!(
        retracted >= 1,
        "the set-down bishop was published and corrected: {}",
        events.describe()
    );
    let mut pgns: Vec<String> = all
        .iter()
        .filter_map(|e| match e {
            Ev::Changed(_, values) => values
                .get("Pgn")
                .and_then(|v| String::try_from(v.try_clone().ok()?).ok()),
            _ => None,
        })
        .collect();
    let files = readings.texts();
    assert!(!files.is_empty(), "the live file was read");
    pgns.extend(files);
    pgns.push(text);
    for pgn in &pgns {
        let moves = moves_in(pgn);
        assert!(
            want.starts_with(&moves),
            "a broadcast output held moves that were not played: {moves:?}\n{pgn}"
        );
    }
}
