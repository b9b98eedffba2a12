//! Missed reads on real games (two plies arriving in one board dump), boards set up
//! mid-game on a turned-round board, and arbitrary sensor garbage (never a panic).

mod tracker_common;

use eboard_core::board::{Orientation, Placement};
use eboard_core::tracker::{Tracker, TrackerEvent};
use eboard_core::vocab::OrientationSetting;
use eboard_sim::handling::{Handling, Noise};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shakmaty::{Chess, Position};
use tracker_common::*;

/// How many two-ply sequences lead from `pos` to the board of `target`.
fn two_ply_explanations(pos: &Chess, target: &shakmaty::Board) -> usize {
    let mut n = 0;
    for m1 in pos.legal_moves() {
        let mut p1 = pos.clone();
        p1.play_unchecked(m1);
        for m2 in p1.legal_moves() {
            let mut p2 = p1.clone();
            p2.play_unchecked(m2);
            if p2.board() == target {
                n += 1;
            }
        }
    }
    n
}

#[test]
fn corpus_games_with_two_plies_read_at_once() {
    let games = corpus_games();
    let (mut inferred, mut ambiguous_skipped) = (0, 0);
    for (i, game) in games.iter().enumerate() {
        let mut rig = Rig::new(
            Chess::default(),
            OrientationSetting::Auto,
            Orientation::Normal,
        );
        let mut hands = Handling::new(i as u64, Noise::Noisy).with_clock(true);
        let mut rng = SmallRng::seed_from_u64(i as u64);
        let mut ply = 0;
        while ply < game.len() {
            let pos = rig.tracker.position().clone();
            if ply + 1 < game.len() && rng.random_bool(0.07) {
                let mut target = pos.clone();
                target.play_unchecked(game[ply]);
                target.play_unchecked(game[ply + 1]);
                if two_ply_explanations(&pos, target.board()) == 1 {
                    // Both moves happen while nothing is read; then a dump arrives.
                    rig.board = target.board().clone();
                    rig.now += 3000;
                    let mut ev = rig.dump();
                    // A recapture on the same square by the same kind of piece only empties
                    // squares: it is accepted once the board has settled.
                    ev.extend(rig.wait(eboard_core::tracker::ILLEGAL_SETTLE_MS));
                    // The second mover's clock press (the first one's was read as well, but
                    // the board showed nothing yet). Until a press, the second move would be
                    // open to correction by its player.
                    rig.press();
                    let uci_of = |m| shakmaty::uci::UciMove::from_standard(m).to_string();
                    assert_eq!(
                        played(&ev),
                        [uci_of(game[ply]), uci_of(game[ply + 1])],
                        "game {i} ply {ply}"
                    );
                    inferred += 1;
                    ply += 2;
                    continue;
                }
                ambiguous_skipped += 1;
            }
            rig.handle(&mut hands, game[ply]);
            ply += 1;
        }
        assert_eq!(rig.tracker.moves(), &game[..], "game {i}");
    }
    println!("{inferred} two-ply jumps inferred, {ambiguous_skipped} ambiguous ones avoided");
    assert!(inferred > 100);
}

#[test]
fn mid_game_position_on_a_turned_board_is_recognised() {
    let pos = position("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3");
    let mut rig = Rig::new(pos, OrientationSetting::Auto, Orientation::Reversed);
    assert!(rig.tracker.in_sync());
    assert_eq!(rig.tracker.orientation(), Some(Orientation::Reversed));
    rig.lift("f1");
    rig.place("b5", 'B');
    // The bishop's line goes on to a6: held for the dwell.
    rig.wait(eboard_core::tracker::DWELL_MS);
    assert_eq!(rig.game_uci(), ["f1b5"]);
}

#[test]
fn arbitrary_sensor_input_never_panics() {
    let mut rng = SmallRng::seed_from_u64(99);
    let pieces: Vec<Option<shakmaty::Piece>> = std::iter::once(None)
        .chain("PNBRQKpnbrqk".chars().map(shakmaty::Piece::from_char))
        .collect();
    for round in 0..20 {
        let setting = [
            OrientationSetting::Auto,
            OrientationSetting::Normal,
            OrientationSetting::Reversed,
        ][round % 3];
        let mut t = Tracker::new(Chess::default(), setting);
        let start = Placement::start().to_wire(Orientation::Normal);
        t.on_board_dump(&start, 0);
        let mut now = 0;
        for _ in 0..3000 {
            now += rng.random_range(0..400);
            let ev = match rng.random_range(0..100) {
                0 => t.on_clock_press(now),
                1 => t.on_tick(now),
                2 => {
                    let fields: [Option<shakmaty::Piece>; 64] =
                        std::array::from_fn(|_| pieces[rng.random_range(0..pieces.len())]);
                    t.on_board_dump(&fields, now)
                }
                3 => t.take_back(1).unwrap_or_default(),
                4 => t
                    .adopt_placement(shakmaty::Color::White)
                    .unwrap_or_default(),
                _ => t.on_field_update(
                    rng.random_range(0..70),
                    pieces[rng.random_range(0..pieces.len())],
                    now,
                ),
            };
            for e in ev {
                if let TrackerEvent::MovePlayed { mv, .. } = e {
                    // Whatever it published is a legal move of the game it keeps.
                    assert!(t.moves().contains(&mv));
                }
            }
        }
        // Back to the start position: always a clean game again.
        t.on_board_dump(&start, now + 1);
        assert!(t.in_sync() || t.orientation() == Some(Orientation::Reversed));
    }
}
