//! A press the clock's first reading after a gap already holds, and the clock's sides across a
//! restart. After a restart (or an unplug) the clock's lever is unknown: its first reading is a
//! fresh start, not a press. At bullet
//! pace the next mover can move and press before that reading comes, and the reading then
//! holds his press unseen. Taken as still awaited, his press made the opponent's press
//! (read within a quarter second of the opponent's move) look like his own, overtaken; the
//! clock's sides, unknown after the restart, were learnt from it the wrong way round, and
//! every later press was the other player's — the last one of the game a "press without a
//! move" (7.5.3). Found by the bench's fast bullet scrambles (0.1–0.3 s a ply, kills).
//!
//! The sides learnt before a restart are now journalled and kept (a clock is not turned round
//! mid-game); the press held by the first reading still completes its move, and a game killed
//! before its sides were learnt still learns them after the restart as above.

mod session_support;

use eboard_core::dgt::{Decoder, Message};
use eboard_core::session::SessionConfig;
use eboard_sim::rig::Rig;
use eboard_sim::scramble::{Pace, play_game};
use eboard_sim::{BoardOptions, ClockSetup, ClockSide, Noise, parse_games};
use session_support::accusations;
use shakmaty::Move;
use shakmaty::san::San;

/// The moves of `sans` from `rig`'s game as played so far.
fn moves(rig: &Rig, sans: &str) -> Vec<Move> {
    let mut pos = rig.played.clone();
    sans.split_whitespace()
        .map(|s| {
            let m = s.parse::<San>().unwrap().to_move(&pos).unwrap();
            shakmaty::Position::play_unchecked(&mut pos, m);
            m
        })
        .collect()
}

fn play_quick(rig: &mut Rig, sans: &str, ms: u64) {
    for m in moves(rig, sans) {
        rig.play_quick(m, ms);
    }
}

/// The times (ms) at which the session received a clock reading, from a tapped line.
fn clock_readings(line: &[(u64, Vec<u8>)]) -> Vec<u64> {
    let mut decoder = Decoder::new();
    let mut at = Vec::new();
    for (t, bytes) in line {
        for m in decoder.feed(bytes) {
            if matches!(m, Message::ClockTimes(_)) {
                at.push(*t);
            }
        }
    }
    at
}

/// Eleven plies on a clock whose sides are learnt (`auto`: a restart forgets them), the
/// daemon killed for the last three and down `down_ms` more (the board keeps its memory,
/// which closes the gap), then Black's reply in `reply_ms` and White's in 150 ms, both before the clock's display
/// changed its second: the first reading after the restart comes with Black's press. Then
/// bullet plies, the last one slow, and the game stops. Returns the rig and when Black's
/// move was reported and his press made, against the first clock reading after the restart.
fn restart_then_quick_replies(down_ms: u64, reply_ms: u64) -> (Rig, u64, u64, u64) {
    let mut rig = Rig::new(
        BoardOptions::default(),
        SessionConfig {
            name: "restart-press".into(),
            ..SessionConfig::default()
        },
        7,
        Noise::Clean,
    );
    rig.take_events();
    play_quick(&mut rig, "d4 d5 Bf4 c5 e3 cxd4 exd4 Nc6", 250);
    rig.kill();
    play_quick(&mut rig, "c3 Bf5 Nd2", 250);
    rig.advance(down_ms);
    rig.restart();
    rig.tap_line();
    rig.advance(30);
    assert_eq!(rig.session().view().gap, "", "the memory closes the gap");
    assert_eq!(rig.session().view().moves.len(), 11);
    let black_pressed_at = rig.now() + 20 + 2 * (reply_ms / 3);
    play_quick(&mut rig, "e6", reply_ms);
    play_quick(&mut rig, "Ngf3", 150);
    let reported = rig
        .published
        .iter()
        .find(|(ply, _)| *ply == 12)
        .map(|&(_, at)| at)
        .expect("Black's move is reported");
    let first_reading = clock_readings(&rig.take_line())
        .first()
        .copied()
        .expect("a clock reading after the restart");
    play_quick(&mut rig, "Nge7 Be2 Ng6 Bg3 h5 h4", 200);
    // The last ply is slower: its press comes well after its move is reported.
    play_quick(&mut rig, "Bd6", 2_400);
    rig.advance(5_000);
    (rig, reported, black_pressed_at, first_reading)
}

fn assert_exact_and_nobody_accused(rig: &Rig) {
    let view = rig.session().view();
    assert_eq!(view.moves, rig.played_san, "every ply recorded");
    let events = rig.journal().to_vec();
    let accused = accusations(&events);
    assert!(accused.is_empty(), "nobody is accused: {accused:?}");
    assert_eq!(view.illegal_moves.white + view.illegal_moves.black, 0);
    // Black pressed last: the clock's sides were learnt the right way round.
    assert_eq!(view.clock_running, "white", "the clock's sides");
}

#[test]
fn a_press_made_before_its_move_is_reported_and_held_by_the_first_reading_after_a_restart_teaches_nothing()
 {
    let (rig, reported, pressed, first_reading) = restart_then_quick_replies(300, 150);
    assert!(
        pressed <= first_reading && first_reading < reported,
        "the case: Black pressed ({pressed}), the first reading ({first_reading}), then his \
         move reported ({reported})"
    );
    assert_exact_and_nobody_accused(&rig);
}

#[test]
fn a_press_of_a_reported_move_held_by_the_first_reading_after_a_restart_teaches_nothing() {
    let (rig, reported, pressed, first_reading) = restart_then_quick_replies(700, 900);
    assert!(
        reported < pressed && pressed <= first_reading,
        "the case: Black's move reported ({reported}), his press ({pressed}), then the first \
         reading ({first_reading})"
    );
    assert_exact_and_nobody_accused(&rig);
}

/// The case the bench found (`benches/gap_soak.rs`, the fast bullet rows, game 19: corpus
/// game 247 on a 3+2 clock): a kill after ply 29, the first reading after the restart held
/// Black's press of ...Qf6, the clock's sides were learnt the wrong way round, and the
/// game's last press (Black's, after ...Qxg8) was White's "press without a move" (7.5.3).
#[test]
fn fast_bullet_scramble_corpus_game_247_with_a_kill_accuses_no_one() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/corpus/twic1599.pgn"
    ))
    .expect("the corpus");
    let games: Vec<_> = parse_games(&text)
        .into_iter()
        .filter(|g| g.moves().is_ok_and(|m| m.len() >= 30) && g.tag("FEN").is_none())
        .collect();
    let moves = games[247].moves().expect("a corpus game");
    let mut rig = Rig::new(
        BoardOptions {
            clock_setup: ClockSetup {
                base_ms: 180_000,
                increment_ms: 2_000,
            },
            ..BoardOptions::default()
        },
        SessionConfig {
            name: "scramble-19".into(),
            ..SessionConfig::default()
        },
        20,
        Noise::Noisy,
    );
    let f = play_game(&mut rig, &moves[..80], &Pace::bullet_fast(), 1_019);
    assert_eq!(f.kills, 1, "the case: one kill");
    assert_eq!((f.games_exact, f.lost, f.wrong), (1, 0, 0), "{f:?}");
    let events = rig.journal().to_vec();
    let accused = accusations(&events);
    assert!(accused.is_empty(), "nobody is accused: {accused:?}");
    assert_eq!(f.false_accusations, 0);
}

/// Each move's clock stamps in the record: (White's time, Black's time).
fn stamps(rig: &Rig) -> Vec<(Option<u64>, Option<u64>)> {
    rig.session()
        .game()
        .current_moves()
        .iter()
        .map(|m| (m.white_ms, m.black_ms))
        .collect()
}

/// White's time on the clock's right half. `auto` learns that at White's first press and
/// swaps the stamps taken on the provisional left. A restart forgot it: learnt again at the
/// next press, every stamp of the game was swapped again, those from before the restart too,
/// each player's time shown as his opponent's. The side is journalled and kept, so the
/// stamps before the restart stand and the later ones are the right way round.
#[test]
fn a_restart_keeps_the_clock_sides_learnt_and_the_stamps_before_it() {
    let mut rig = Rig::new(
        BoardOptions {
            white_display: ClockSide::Right,
            ..BoardOptions::default()
        },
        SessionConfig {
            name: "restart-sides".into(),
            ..SessionConfig::default()
        },
        7,
        Noise::Clean,
    );
    rig.take_events();
    // White thinks 4 s a move, Black 1 s: White's time is the lower from his second move on.
    let think = |rig: &mut Rig, san: &str| {
        let white = shakmaty::Position::turn(&rig.played) == shakmaty::Color::White;
        rig.advance(if white { 4_000 } else { 1_000 });
        rig.play(san).unwrap();
    };
    for san in ["e4", "e5", "Nf3", "Nc6", "Bb5"] {
        think(&mut rig, san);
    }
    rig.advance(1_000);
    let before = stamps(&rig);
    assert_eq!(before.len(), 5);
    let (w, b) = before[4];
    assert!(
        w < b,
        "the sides were learnt the right way round: {before:?}"
    );
    rig.kill();
    rig.advance(500);
    rig.restart();
    rig.advance(1_000);
    for san in ["a6", "Ba4", "Nf6", "O-O"] {
        think(&mut rig, san);
    }
    rig.advance(2_000);
    let after = stamps(&rig);
    assert_eq!(
        rig.session().view().moves,
        rig.played_san,
        "every ply recorded"
    );
    assert_eq!(
        after[..5],
        before[..],
        "the stamps before the restart stand"
    );
    let (w, b) = after[8];
    assert!(
        w < b,
        "White's time, 4 s a move, is still White's: {after:?}"
    );
    let side = rig.journal().iter().find_map(|e| match e {
        eboard_core::session::Event::Record(eboard_core::session::RecordFact::ClockSide {
            white_display,
        }) => Some(*white_display),
        _ => None,
    });
    assert_eq!(
        side.map(|s| s.as_str()),
        Some("right"),
        "the side is journalled"
    );
    assert!(accusations(rig.journal()).is_empty());
}

/// The press of the last move a gap published, still to come when the gap closes. White's
/// Nd2 was made while the daemon was down and not pressed yet: the board's memory gives it,
/// White's clock still runs in the first reading after the restart, and Black answers ...e6 on
/// the board before White's press (a reply made the moment the move was). The gap's close
/// dropped the press it awaited, so White's press, read with White to move in the record,
/// completed nothing and stood as a press without a move (7.5.3) for a legal game (corpus
/// game 777 at bullet pace, found by a soak). The first reading after the gap decides it, as
/// at a connection: his own time runs, his press is to come.
#[test]
fn a_press_still_to_come_when_a_gap_closes_completes_the_gaps_last_move() {
    use eboard_sim::handling::SensorStep::{Lift, Place};
    use shakmaty::{Color, Piece, Role, Square};
    let mut rig = Rig::new(
        BoardOptions::default(),
        SessionConfig {
            name: "gap-press-to-come".into(),
            ..SessionConfig::default()
        },
        7,
        Noise::Clean,
    );
    rig.take_events();
    play_quick(&mut rig, "d4 d5 Bf4 c5 e3 cxd4 exd4 Nc6", 250);
    rig.kill();
    play_quick(&mut rig, "c3 Bf5", 250);
    let nd2 = moves(&rig, "Nd2")[0];
    let knight = Piece {
        color: Color::White,
        role: Role::Knight,
    };
    rig.play_steps(nd2, &[Lift(Square::B1), Place(Square::D2, knight)]);
    rig.advance(300);
    rig.restart();
    // The first clock reading after the restart, with White's time running.
    rig.advance(1_200);
    assert_eq!(rig.session().view().gap, "", "the memory closes the gap");
    assert_eq!(rig.session().view().moves.len(), 11);
    assert_eq!(rig.session().view().clock_running, "white", "the case");
    let e6 = moves(&rig, "e6")[0];
    let pawn = Piece {
        color: Color::Black,
        role: Role::Pawn,
    };
    rig.play_steps(e6, &[Lift(Square::E7), Place(Square::E6, pawn)]);
    rig.advance(60);
    let white = rig.side_of(Color::White);
    let now = rig.now();
    rig.board.press_lever(white, now);
    rig.advance(120);
    let black = rig.side_of(Color::Black);
    let now = rig.now();
    rig.board.press_lever(black, now);
    // White thinks past the grace a late move report has to explain a press.
    rig.advance(3_000);
    play_quick(&mut rig, "Ngf3 Nge7 Be2 Ng6", 400);
    rig.advance(5_000);
    assert_exact_and_nobody_accused(&rig);
}
