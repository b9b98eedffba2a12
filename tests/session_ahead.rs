//! A board that has run ahead of the record by more plies than the tracker reads (one or
//! two) is caught up as a gap is, when exactly one legal sequence leads to it: play, never
//! an illegal placement. A board no sequence reaches is still an illegal placement.

use eboard_core::board::{Orientation, Placement};
use eboard_core::session::{Event, SessionConfig};
use shakmaty::{Chess, Position};

mod session_support;

use session_support::{Clocked, placement_after};

/// A clock-less board "b1" that has shown the start position.
fn started() -> Clocked {
    let mut rig = Clocked::new(
        SessionConfig {
            name: "b1".into(),
            ..SessionConfig::default()
        },
        Orientation::Normal,
    );
    rig.dump(&Placement::start());
    rig
}

fn illegal_reports(rig: &Clocked) -> usize {
    rig.events
        .iter()
        .filter(|e| matches!(e, Event::IllegalPlacement { .. }))
        .count()
}

#[test]
fn a_board_three_plies_ahead_is_caught_up() {
    let mut rig = started();
    // 1. e4 d5 2. exd5: only this order reaches the board (the capture needs d5 first).
    rig.dump(&placement_after(&["e4", "d5", "exd5"]));
    rig.wait(3_000);
    assert_eq!(illegal_reports(&rig), 0, "{:?}", rig.events);
    assert_eq!(rig.session.view().moves, ["e4", "d5", "exd5"]);
    assert!(rig.session.view().in_sync);
    // Play goes on from there as usual.
    rig.dump(&placement_after(&["e4", "d5", "exd5", "Qxd5"]));
    rig.wait(100);
    assert_eq!(rig.session.view().moves, ["e4", "d5", "exd5", "Qxd5"]);
}

#[test]
fn a_board_four_plies_ahead_is_caught_up_from_a_game_in_progress() {
    let mut rig = started();
    rig.dump(&placement_after(&["e4"]));
    rig.wait(3_000);
    // 1... d5 2. exd5 Qxd5 3. Nc3: each capture needs the move before it.
    rig.dump(&placement_after(&["e4", "d5", "exd5", "Qxd5", "Nc3"]));
    rig.wait(3_000);
    assert_eq!(illegal_reports(&rig), 0, "{:?}", rig.events);
    assert_eq!(
        rig.session.view().moves,
        ["e4", "d5", "exd5", "Qxd5", "Nc3"]
    );
}

#[test]
fn a_board_no_legal_sequence_reaches_is_still_an_illegal_placement() {
    let mut rig = started();
    // The bishop on f1 jumps to f3 over its own pawns.
    let mut board = Chess::default().board().clone();
    let bishop = board.remove_piece_at(shakmaty::Square::F1).unwrap();
    board.set_piece_at(shakmaty::Square::F3, bishop);
    rig.dump(&Placement::from_board(&board));
    rig.wait(3_000);
    assert_eq!(illegal_reports(&rig), 1, "{:?}", rig.events);
    assert!(rig.session.view().moves.is_empty());
}
