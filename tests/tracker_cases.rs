//! One test per move-reconstruction case: what the sensors report, in the orders they report
//! it, and exactly which events the tracker gives for it.

mod tracker_common;

use eboard_core::board::{Orientation, Placement};
use eboard_core::tracker::{ILLEGAL_SETTLE_MS, Tracker, TrackerEvent};
use eboard_core::vocab::OrientationSetting;
use shakmaty::{Chess, Color, Position};
use tracker_common::*;

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

fn moves_of(rig: &Rig) -> Vec<String> {
    rig.game_uci()
}

#[test]
fn lift_then_place_publishes_at_once() {
    let mut rig = Rig::at(START);
    assert_eq!(rig.lift("e2"), vec![TrackerEvent::InSync(false)]);
    let ev = rig.place("e4", 'P');
    assert_eq!(played(&ev), ["e2e4"]);
    assert!(matches!(&ev[0], TrackerEvent::MovePlayed { .. }));
    assert_eq!(ev.last(), Some(&TrackerEvent::InSync(true)));
    assert!(rig.tracker.in_sync());
    assert_eq!(rig.tracker.position().turn(), Color::Black);
}

#[test]
fn new_square_reported_before_old_one_empties() {
    let mut rig = Rig::at(START);
    assert!(played(&rig.place("f3", 'N')).is_empty());
    assert_eq!(played(&rig.lift("g1")), ["g1f3"]);
}

const CAPTURE: &str = "4k3/8/8/4n3/8/2B5/8/4K3 w - - 0 1";

#[test]
fn capture_victim_removed_first() {
    let mut rig = Rig::at(CAPTURE);
    rig.lift("e5");
    rig.lift("c3");
    assert_eq!(played(&rig.place("e5", 'B')), ["c3e5"]);
}

#[test]
fn capture_victim_removed_after_attacker_lifted() {
    let mut rig = Rig::at(CAPTURE);
    rig.lift("c3");
    rig.lift("e5");
    assert_eq!(played(&rig.place("e5", 'B')), ["c3e5"]);
}

#[test]
fn capture_victim_replaced_in_one_update() {
    let mut rig = Rig::at(CAPTURE);
    rig.lift("c3");
    let ev = rig.place("e5", 'B');
    assert_eq!(played(&ev), ["c3e5"]);
    assert!(matches!(&ev[0], TrackerEvent::MovePlayed { .. }));
}

#[test]
fn capture_new_square_before_old_one_empties() {
    let mut rig = Rig::at(CAPTURE);
    assert!(played(&rig.place("e5", 'B')).is_empty());
    assert_eq!(played(&rig.lift("c3")), ["c3e5"]);
}

#[test]
fn captured_piece_touching_a_neighbour_is_noise() {
    // The capture-1 pattern: knight d5 lifted, bishop e7 lifted, knight on e7, then the
    // bishop shows on e6 and vanishes.
    let mut rig = Rig::at("4k3/4b3/8/3N4/8/8/8/4K3 w - - 0 1");
    rig.lift("d5");
    rig.lift("e7");
    assert_eq!(played(&rig.place("e7", 'N')), ["d5e7"]);
    let ev = rig.place("e6", 'b');
    assert_eq!(ev, vec![TrackerEvent::InSync(false)]);
    assert!(rig.wait(2 * ILLEGAL_SETTLE_MS).is_empty(), "not illegal");
    assert_eq!(rig.lift("e6"), vec![TrackerEvent::InSync(true)]);
    assert_eq!(moves_of(&rig), ["d5e7"]);
    assert_eq!(retracted(&rig.events), 0);
}

const CASTLE: &str = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1";

#[test]
fn castling_king_first() {
    let mut rig = Rig::at(CASTLE);
    rig.lift("e1");
    assert!(played(&rig.place("g1", 'K')).is_empty());
    rig.lift("h1");
    let ev = rig.place("f1", 'R');
    assert_eq!(played(&ev), ["e1g1"]);
    assert!(matches!(&ev[0], TrackerEvent::MovePlayed { .. }));
    assert_eq!(rig.tracker.corrections(), 0);
}

#[test]
fn castling_king_dragged_over_f1_is_held_not_corrected() {
    let mut rig = Rig::at(CASTLE);
    rig.lift("e1");
    // Kf1 is legal, but the king is one step towards g1 while O-O is legal: held.
    assert!(played(&rig.place("f1", 'K')).is_empty());
    assert_eq!(rig.tracker.held().map(|m| m.to()), Some(sq("f1")));
    rig.lift("f1");
    rig.place("g1", 'K');
    rig.lift("h1");
    let ev = rig.place("f1", 'R');
    assert_eq!(played(&ev), ["e1g1"]);
    assert_eq!(retracted(&rig.events), 0);
    assert_eq!(moves_of(&rig), ["e1g1"]);
    assert_eq!(rig.tracker.corrections(), 0);
}

#[test]
fn castling_rook_first_is_held_until_the_king_completes_it() {
    let mut rig = Rig::at(CASTLE);
    rig.lift("a1");
    // The rook's half alone is a legal move, but its king and the right stand: held.
    assert!(played(&rig.place("d1", 'R')).is_empty());
    rig.lift("e1");
    let ev = rig.place("c1", 'K');
    assert_eq!(played(&ev), ["e1c1"]);
    assert_eq!(retracted(&rig.events), 0);
    assert_eq!(moves_of(&rig), ["e1c1"]);
    assert_eq!(rig.tracker.corrections(), 0);
}

#[test]
fn castling_both_lifted_either_placed_first() {
    for (first, second) in [(("g1", 'K'), ("f1", 'R')), (("f1", 'R'), ("g1", 'K'))] {
        let mut rig = Rig::at(CASTLE);
        rig.lift("h1");
        rig.lift("e1");
        rig.place(first.0, first.1);
        assert_eq!(played(&rig.place(second.0, second.1)), ["e1g1"]);
        assert_eq!(moves_of(&rig), ["e1g1"]);
    }
}

#[test]
fn black_castles_queenside() {
    let mut rig = Rig::at("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R b KQkq - 0 1");
    rig.lift("e8");
    rig.lift("a8");
    rig.place("c8", 'k');
    assert_eq!(played(&rig.place("d8", 'r')), ["e8c8"]);
}

const EP: &str = "4k3/8/8/8/pP6/8/8/4K3 b - b3 0 1";

#[test]
fn en_passant_in_any_order() {
    let orders: [&[(&str, Option<char>)]; 4] = [
        &[("b4", None), ("a4", None), ("b3", Some('p'))],
        &[("a4", None), ("b4", None), ("b3", Some('p'))],
        &[("a4", None), ("b3", Some('p')), ("b4", None)],
        &[("b3", Some('p')), ("a4", None), ("b4", None)],
    ];
    for order in orders {
        let mut rig = Rig::at(EP);
        for &(sq, content) in order {
            match content {
                Some(p) => rig.place(sq, p),
                None => rig.lift(sq),
            };
        }
        assert_eq!(moves_of(&rig), ["a4b3"], "order {order:?}");
        assert_eq!(retracted(&rig.events), 0, "order {order:?}");
    }
}

const PROMOTE: &str = "1r2k3/P7/8/8/8/8/8/4K3 w - - 0 1";

#[test]
fn promotion_to_each_piece() {
    for (c, uci) in [
        ('Q', "a7a8q"),
        ('R', "a7a8r"),
        ('B', "a7a8b"),
        ('N', "a7a8n"),
    ] {
        let mut rig = Rig::at(PROMOTE);
        rig.lift("a7");
        assert_eq!(played(&rig.place("a8", c)), [uci]);
    }
}

#[test]
fn promotion_pawn_first_set_on_last_rank_then_swapped() {
    // Swapped in one update.
    let mut rig = Rig::at(PROMOTE);
    rig.lift("a7");
    assert!(played(&rig.place("a8", 'P')).is_empty());
    assert_eq!(played(&rig.place("a8", 'Q')), ["a7a8q"]);
    // Lifted, then the new piece set down.
    let mut rig = Rig::at(PROMOTE);
    rig.lift("a7");
    rig.place("a8", 'P');
    rig.wait(300);
    rig.lift("a8");
    assert_eq!(played(&rig.place("a8", 'N')), ["a7a8n"]);
    assert!(illegal(&rig.events).is_empty());
}

#[test]
fn underpromotion_with_capture() {
    let mut rig = Rig::at(PROMOTE);
    rig.lift("b8");
    rig.lift("a7");
    let ev = rig.place("b8", 'N');
    assert_eq!(played(&ev), ["a7b8n"]);
    assert!(matches!(&ev[0], TrackerEvent::MovePlayed { .. }));
}

#[test]
fn slide_over_intermediate_squares_is_one_move() {
    let mut rig = Rig::at("4k3/8/8/8/8/8/8/R3K3 w - - 0 1");
    rig.lift("a1");
    rig.place("a2", 'R');
    rig.lift("a2");
    rig.place("a4", 'R'); // read before a3 emptied
    rig.place("a3", 'R');
    rig.lift("a3");
    rig.place("a5", 'R');
    rig.lift("a4");
    // Every square on the way was held (the line goes on), so nothing was corrected; a5 is
    // held too until the dwell passes.
    assert!(played(&rig.events).is_empty());
    rig.wait(eboard_core::tracker::DWELL_MS);
    assert_eq!(moves_of(&rig), ["a1a5"]);
    assert_eq!(played(&rig.events), ["a1a5"]);
    assert_eq!(rig.tracker.corrections(), 0);
    assert!(rig.tracker.in_sync());
}

#[test]
fn set_down_then_moved_on_ends_where_released() {
    let mut rig = Rig::at("4k3/8/8/8/8/8/8/R3K3 w - - 0 1");
    rig.lift("a1");
    assert!(
        played(&rig.place("a3", 'R')).is_empty(),
        "held: the line goes on"
    );
    // Left there past the dwell: published, and still the mover's to correct.
    assert_eq!(played(&rig.wait(1500)), ["a1a3"]);
    rig.lift("a3");
    let ev = rig.place("a7", 'R');
    assert!(played(&ev).is_empty(), "a7 is held (a8 is empty)");
    let ev = rig.wait(eboard_core::tracker::DWELL_MS);
    assert_eq!(played(&ev), ["a1a7"]);
    assert_eq!(retracted(&rig.events), 1);
    assert_eq!(moves_of(&rig), ["a1a7"]);
    assert_eq!(rig.tracker.corrections(), 1);
}

#[test]
fn after_the_clock_press_the_move_is_final() {
    let mut rig = Rig::at("4k3/8/8/8/8/8/8/R3K3 w - - 0 1");
    rig.lift("a1");
    rig.place("a3", 'R');
    rig.press();
    rig.wait(1000);
    rig.lift("a3");
    rig.place("a7", 'R');
    assert_eq!(moves_of(&rig), ["a1a3"]);
    let ev = rig.wait(ILLEGAL_SETTLE_MS);
    assert_eq!(
        ev,
        vec![TrackerEvent::IllegalPlacement {
            turn: Color::Black,
            description: "white moved out of turn: Ra3\u{2013}a7".into()
        }]
    );
}

#[test]
fn adjustments_produce_nothing() {
    let mut rig = Rig::at(START);
    rig.lift("d1");
    rig.place("d1", 'Q');
    rig.lift("b8");
    rig.wait(2000);
    rig.place("b8", 'n');
    let moves: Vec<_> = rig
        .events
        .iter()
        .filter(|e| {
            !matches!(
                e,
                TrackerEvent::InSync(_) | TrackerEvent::GameStarted { .. }
            )
        })
        .collect();
    assert!(moves.is_empty(), "{moves:?}");
    assert!(rig.tracker.in_sync());
}

#[test]
fn takeback_of_one_ply_before_the_reply() {
    let mut rig = Rig::at(START);
    rig.lift("g1");
    rig.place("f3", 'N');
    rig.press();
    rig.wait(2000);
    rig.lift("f3");
    let ev = rig.place("g1", 'N');
    assert!(
        matches!(&ev[0], TrackerEvent::MoveRetracted { correction: false, mv } if uci_of(mv) == "g1f3")
    );
    assert!(rig.tracker.moves().is_empty());
    assert_eq!(rig.tracker.position(), &Chess::default());
}

#[test]
fn takeback_of_two_plies() {
    let mut rig = Rig::at(START);
    rig.lift("e2");
    rig.place("e4", 'P');
    rig.press();
    rig.lift("c7");
    rig.place("c5", 'p');
    rig.press();
    rig.lift("g1");
    rig.place("f3", 'N');
    rig.press();
    rig.wait(2000);
    // Both take their last moves back.
    rig.lift("f3");
    rig.place("g1", 'N');
    assert_eq!(moves_of(&rig), ["e2e4", "c7c5"]);
    rig.lift("c5");
    let ev = rig.place("c7", 'p');
    assert_eq!(retracted(&ev), 1);
    assert_eq!(moves_of(&rig), ["e2e4"]);
}

#[test]
fn board_two_plies_ahead_in_one_dump_is_inferred() {
    let mut rig = Rig::at(START);
    let mut after = Chess::default();
    for m in ["e2e4", "e7e5"] {
        let mv = uci(&after, m);
        after.play_unchecked(mv);
    }
    rig.board = after.board().clone();
    let ev = rig.dump();
    assert_eq!(played(&ev), ["e2e4", "e7e5"]);
}

#[test]
fn quick_reply_read_together_is_inferred() {
    let mut rig = Rig::at(START);
    rig.lift("e2");
    rig.lift("e7"); // the reply starts before the move's new square is read
    rig.place("e4", 'P');
    let ev = rig.place("e5", 'p');
    assert_eq!(played(&ev), ["e2e4", "e7e5"]);
}

#[test]
fn ambiguous_two_ply_jump_is_not_guessed() {
    // a8=Q Rxa8, a8=R Rxa8, a8=B Rxa8 and a8=N Rxa8 all leave this board.
    let mut rig = Rig::at("1r2k3/P7/8/8/8/8/8/4K3 w - - 0 1");
    let mut board = rig.board.clone();
    board.discard_piece_at(sq("a7"));
    board.discard_piece_at(sq("b8"));
    board.set_piece_at(sq("a8"), piece('r'));
    rig.board = board;
    let ev = rig.dump();
    assert_eq!(ev, vec![TrackerEvent::InSync(false)]);
    rig.wait(5000);
    assert!(rig.tracker.moves().is_empty());
    assert!(!rig.tracker.in_sync());
    // The players restore the board and replay slowly: now it is unambiguous.
    rig.lift("a8");
    rig.place("b8", 'r');
    rig.place("a7", 'P');
    assert!(rig.tracker.in_sync());
    rig.lift("a7");
    rig.place("a8", 'N');
    rig.lift("b8");
    rig.lift("a8");
    rig.place("a8", 'r');
    assert_eq!(moves_of(&rig), ["a7a8n", "b8a8"]);
}

#[test]
fn reversed_board_detected_from_the_start_position() {
    let mut rig = Rig::new(
        Chess::default(),
        OrientationSetting::Auto,
        Orientation::Reversed,
    );
    assert_eq!(
        rig.events.first(),
        Some(&TrackerEvent::GameStarted {
            orientation: Orientation::Reversed
        })
    );
    assert_eq!(rig.tracker.orientation(), Some(Orientation::Reversed));
    rig.lift("e2");
    rig.place("e4", 'P');
    assert_eq!(moves_of(&rig), ["e2e4"]);
    assert_eq!(
        rig.tracker.placement(),
        Placement::from_board(rig.tracker.position().board())
    );
}

#[test]
fn fixed_orientation_setting_is_obeyed() {
    // Told "reversed", a board lying the normal way never matches the start position.
    let mut rig = Rig::new(
        Chess::default(),
        OrientationSetting::Reversed,
        Orientation::Normal,
    );
    assert!(!rig.tracker.in_sync());
    assert!(
        !rig.events
            .iter()
            .any(|e| matches!(e, TrackerEvent::GameStarted { .. }))
    );
    rig.orientation = Orientation::Reversed;
    rig.dump();
    assert!(rig.tracker.in_sync());
}

#[test]
fn start_position_after_a_game_is_a_new_game() {
    let mut rig = Rig::at(START);
    for (from, to, p) in [("e2", "e4", 'P'), ("e7", "e5", 'p'), ("g1", "f3", 'N')] {
        rig.lift(from);
        rig.place(to, p);
        rig.press();
    }
    rig.wait(1000);
    assert_eq!(rig.tracker.moves().len(), 3);
    rig.board = shakmaty::Board::new();
    let ev = rig.dump();
    assert!(ev.contains(&TrackerEvent::GameStarted {
        orientation: Orientation::Normal
    }));
    assert!(rig.tracker.moves().is_empty());
    // Set up again on a board turned round: a new game, reversed.
    let mut rig2 = Rig::new(
        Chess::default(),
        OrientationSetting::Auto,
        Orientation::Normal,
    );
    rig2.lift("e2");
    rig2.place("e4", 'P');
    rig2.orientation = Orientation::Reversed;
    rig2.board = shakmaty::Board::new();
    let ev = rig2.dump();
    assert!(ev.contains(&TrackerEvent::GameStarted {
        orientation: Orientation::Reversed
    }));
}

#[test]
fn start_position_reached_by_a_legal_move_is_play_not_a_new_game() {
    // 1. Nf3 Nf6 2. Ng1 Ng8 repeats the start position: a move (and the first step of a
    // repetition claim), not a new game.
    let mut rig = Rig::at(START);
    let mut ev = Vec::new();
    for (from, to, p) in [
        ("g1", "f3", 'N'),
        ("g8", "f6", 'n'),
        ("f3", "g1", 'N'),
        ("f6", "g8", 'n'),
    ] {
        rig.lift(from);
        ev.extend(rig.place(to, p));
        rig.press();
    }
    assert!(
        !ev.iter()
            .any(|e| matches!(e, TrackerEvent::GameStarted { .. })),
        "{ev:?}"
    );
    assert_eq!(played(&ev), ["g1f3", "g8f6", "f3g1", "f6g8"]);
    assert_eq!(rig.tracker.moves().len(), 4);
}

#[test]
fn illegal_placement_is_described_and_cleared() {
    let mut rig = Rig::at("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 1");
    rig.lift("f1");
    rig.place("h3", 'B');
    // Nothing at once (it may still be a hand at work)...
    assert!(illegal(&rig.events).is_empty());
    let ev = rig.wait(ILLEGAL_SETTLE_MS);
    assert_eq!(
        ev,
        vec![TrackerEvent::IllegalPlacement {
            turn: Color::White,
            description: "Bf1\u{2013}h3 is blocked by g2".into()
        }]
    );
    assert!(rig.wait(1000).is_empty(), "reported once");
    rig.lift("h3");
    let ev = rig.place("f1", 'B');
    assert!(ev.contains(&TrackerEvent::IllegalPlacementCleared));
    assert!(rig.tracker.in_sync());
}

#[test]
fn king_left_in_check_is_described() {
    let mut rig = Rig::at("4k3/4r3/8/8/8/8/4B3/4K3 w - - 0 1");
    rig.lift("e2");
    rig.place("d3", 'B');
    let ev = rig.wait(ILLEGAL_SETTLE_MS);
    assert_eq!(illegal(&ev), ["Be2\u{2013}d3: white king left in check"]);
}

#[test]
fn pieces_in_hand_are_never_illegal() {
    let mut rig = Rig::at(START);
    rig.lift("g1");
    assert!(rig.wait(10_000).is_empty());
    // A castling half-made is a move in progress too.
    let mut rig = Rig::at(CASTLE);
    rig.lift("e1");
    rig.place("g1", 'K');
    assert!(rig.wait(10_000).is_empty());
}

#[test]
fn adopt_placement_keeps_home_castling_rights() {
    let mut rig = Rig::at(CASTLE);
    // White's king walks two squares up the board: illegal, but the arbiter lets it stand.
    rig.lift("e1");
    rig.place("e3", 'K');
    rig.lift("e2");
    rig.place("e2", 'P');
    let ev = rig
        .tracker
        .adopt_placement(Color::Black)
        .expect("adoptable");
    assert_eq!(ev, vec![TrackerEvent::InSync(true)]);
    let pos = rig.tracker.position();
    assert_eq!(pos.turn(), Color::Black);
    assert!(!pos.castles().has_color(Color::White));
    assert!(
        pos.castles()
            .has(Color::Black, shakmaty::CastlingSide::KingSide)
    );
    // Play goes on from there.
    rig.lift("e8");
    rig.place("g8", 'k');
    rig.lift("h8");
    rig.place("f8", 'r');
    assert_eq!(moves_of(&rig), ["e8g8"]);
}

#[test]
fn adopt_placement_refuses_impossible_boards() {
    let mut rig = Rig::at(START);
    rig.lift("e1");
    assert!(rig.tracker.adopt_placement(Color::Black).is_err());
}

#[test]
fn operator_changes() {
    let mut rig = Rig::at(START);
    rig.lift("e2");
    rig.place("e4", 'P');
    // The operator takes the move back while the board still shows it: out of sync.
    let ev = rig.tracker.take_back(1).expect("one ply known");
    assert_eq!(ev, vec![TrackerEvent::InSync(false)]);
    assert!(rig.tracker.take_back(1).is_err());
    // A position set by FEN that matches the board.
    let pos = position("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
    assert_eq!(
        rig.tracker.set_position(pos),
        vec![TrackerEvent::InSync(true)]
    );
    rig.lift("e7");
    rig.place("e5", 'p');
    assert_eq!(moves_of(&rig), ["e7e5"]);
    assert_eq!(rig.tracker.new_game(), vec![TrackerEvent::InSync(false)]);
    assert_eq!(rig.tracker.position(), &Chess::default());
}

#[test]
fn field_updates_before_any_dump_are_held() {
    let mut t = Tracker::new(Chess::default(), OrientationSetting::Auto);
    assert!(t.on_field_update(52, None, 0).is_empty());
    assert!(t.on_field_update(200, None, 0).is_empty());
    assert!(t.on_tick(10_000).is_empty());
}

#[test]
fn clock_press_overtaking_the_last_update_is_not_illegal() {
    let mut rig = Rig::at(START);
    rig.lift("g1");
    rig.wait(3000); // the knight is held a while
    rig.press(); // the press is read before the knight's new square
    assert!(rig.wait(100).is_empty());
    rig.place("f3", 'N');
    assert!(rig.wait(5000).is_empty());
    assert!(illegal(&rig.events).is_empty());
    assert_eq!(moves_of(&rig), ["g1f3"]);
}

#[test]
fn clock_pressed_with_a_piece_in_hand_is_not_an_illegal_placement() {
    let mut rig = Rig::at(START);
    rig.lift("g1");
    rig.press();
    assert!(rig.wait(10 * ILLEGAL_SETTLE_MS).is_empty());
    assert!(!rig.tracker.in_sync());
}

#[test]
fn takeback_of_two_plies_at_once_waits_for_a_settled_board() {
    let mut rig = Rig::at(START);
    for (from, to, p) in [("e2", "e4", 'P'), ("c7", "c5", 'p'), ("g1", "f3", 'N')] {
        rig.lift(from);
        rig.place(to, p);
        rig.press();
    }
    rig.wait(2000);
    // The board is read back two plies at once (say, after a reconnection).
    let mut back = Chess::default();
    let e4 = uci(&back, "e2e4");
    back.play_unchecked(e4);
    rig.board = back.board().clone();
    let ev = rig.dump();
    assert_eq!(retracted(&ev), 0, "not while it may be a slide");
    let ev = rig.wait(ILLEGAL_SETTLE_MS);
    assert_eq!(retracted(&ev), 2);
    assert_eq!(moves_of(&rig), ["e2e4"]);
}

#[test]
fn slide_through_a_repeated_position_is_not_a_takeback() {
    // Bishop and rook shuffle; the bishop going back to b6 is dragged over c5, where the
    // board is exactly the game's first one.
    let mut rig = Rig::at("8/8/8/2b4k/8/8/8/R3K3 b - - 0 1");
    let plies = [
        ("c5", "b6", 'b'),
        ("a1", "a8", 'R'),
        ("b6", "e3", 'b'),
        ("a8", "a1", 'R'),
    ];
    for (from, to, p) in plies {
        rig.lift(from);
        rig.place(to, p);
        rig.press();
        rig.wait(1000);
    }
    // The bishop goes e3-b6, dragged over c5: that board is the game's first one.
    rig.lift("e3");
    rig.place("d4", 'b');
    rig.lift("d4");
    rig.place("c5", 'b');
    rig.lift("c5");
    rig.place("b6", 'b');
    // b6 is held (a7 is empty) until the dwell passes.
    rig.wait(eboard_core::tracker::DWELL_MS);
    assert_eq!(moves_of(&rig), ["c5b6", "a1a8", "b6e3", "a8a1", "e3b6"]);
    assert_eq!(rig.tracker.corrections(), 0);
}

#[test]
fn slide_finished_while_the_reply_starts_is_two_plies_with_no_correction() {
    // 1. e4, then Black pushes e7 over e6 to e5 while White already lifts the knight: e6 was
    // held (the pawn may go on), so nothing is corrected.
    let mut rig = Rig::at("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
    rig.lift("e7");
    assert!(played(&rig.place("e6", 'p')).is_empty());
    rig.lift("e6");
    rig.lift("g1");
    rig.place("e5", 'p');
    let ev = rig.place("f3", 'N');
    assert_eq!(played(&ev), ["e7e5", "g1f3"]);
    assert_eq!(moves_of(&rig), ["e7e5", "g1f3"]);
    assert_eq!(rig.tracker.corrections(), 0);
}

#[test]
fn slide_finished_while_the_reply_starts_waits_for_the_next_move_to_tell_the_stories_apart() {
    // The same with a pause on e6 longer than the dwell: e6 was published. The board then
    // reads "...e5, Nf3" (e6 corrected, and the reply) as well as "...e6, Nf3, ...e6-e5":
    // nothing is picked, the board stays out of sync and nothing is reported as illegal.
    let start = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
    for (next_from, next_to, piece, story) in [
        // Black moves next: e6 was corrected to e5 and Nf3 answered it.
        ("b8", "c6", 'n', vec!["e7e5", "g1f3", "b8c6"]),
        // White moves next: Nf3 answered e6, then the pawn went on to e5.
        ("b1", "c3", 'N', vec!["e7e6", "g1f3", "e6e5", "b1c3"]),
    ] {
        let mut rig = Rig::at(start);
        rig.lift("e7");
        assert!(played(&rig.place("e6", 'p')).is_empty());
        assert_eq!(played(&rig.wait(eboard_core::tracker::DWELL_MS)), ["e7e6"]);
        rig.lift("e6");
        rig.lift("g1");
        rig.place("e5", 'p');
        let ev = rig.place("f3", 'N');
        assert!(played(&ev).is_empty(), "{ev:?}");
        assert!(!rig.tracker.in_sync());
        assert!(illegal(&rig.wait(3_000)).is_empty());
        assert_eq!(moves_of(&rig), ["e7e6"]);
        rig.lift(next_from);
        rig.place(next_to, piece);
        rig.wait(eboard_core::tracker::DWELL_MS);
        assert_eq!(moves_of(&rig), story);
        assert!(rig.tracker.in_sync());
    }
}

#[test]
fn piece_in_hand_during_a_slide_is_not_read_as_a_sacrifice() {
    // White's rook a1 slides over c1 to d1 while Black already holds the queen from d7:
    // the board then equals "...Qd1 Rcxd1" after Rc1, which is not guessed.
    let mut rig = Rig::at("7k/3q4/8/8/8/8/8/R3K3 w - - 0 1");
    rig.lift("a1");
    assert!(
        played(&rig.place("c1", 'R')).is_empty(),
        "held: the line goes on"
    );
    rig.lift("c1");
    rig.lift("d7");
    let ev = rig.place("d1", 'R');
    assert!(played(&ev).is_empty(), "{ev:?}");
    rig.wait(3000);
    assert!(moves_of(&rig).is_empty());
    // The queen lands: rook to d1 (corrected) and the queen's move.
    let ev = rig.place("f5", 'q');
    assert_eq!(played(&ev), ["a1d1"]);
    // The queen's line goes on (g4 is empty): held for the dwell.
    assert_eq!(played(&rig.wait(eboard_core::tracker::DWELL_MS)), ["d7f5"]);
}

#[test]
fn moved_on_to_an_illegal_square_is_described_for_its_player() {
    let mut rig = Rig::at(START);
    rig.lift("g1");
    assert_eq!(played(&rig.place("f3", 'N')), ["g1f3"]);
    rig.lift("f3");
    rig.place("h5", 'N');
    let ev = rig.wait(ILLEGAL_SETTLE_MS);
    assert_eq!(
        ev,
        vec![TrackerEvent::IllegalPlacement {
            turn: Color::White,
            description: "Ng1\u{2013}h5 is not a knight move".into()
        }]
    );
    // Put where it may go: the move is corrected and the report cleared.
    rig.lift("h5");
    let ev = rig.place("h3", 'N');
    assert!(ev.contains(&TrackerEvent::IllegalPlacementCleared));
    assert_eq!(moves_of(&rig), ["g1h3"]);
}

/// A board that turns its own reporting round (a Revelation II from firmware 3.22) reports the
/// right way round already: once the tracker is told so, a board that reads as a reversed
/// start position (a reading caught before the board turned) is not turned a second time,
/// and the normal start position that follows is the game.
#[test]
fn a_board_that_turns_itself_is_never_turned_again() {
    let mut rig = Rig::new(
        Chess::default(),
        OrientationSetting::Auto,
        Orientation::Normal,
    );
    rig.tracker.board_turns_itself();
    assert_eq!(rig.tracker.orientation(), Some(Orientation::Normal));
    // The same start position read the other way round (the board has not turned yet).
    rig.orientation = Orientation::Reversed;
    rig.dump();
    assert_eq!(rig.tracker.orientation(), Some(Orientation::Normal));
    assert!(!rig.tracker.in_sync(), "read as it lies, not turned");
    // The board turns and sends its whole board: the start position, normal.
    rig.orientation = Orientation::Normal;
    rig.dump();
    assert!(rig.tracker.in_sync());
    rig.lift("e2");
    rig.place("e4", 'P');
    assert_eq!(moves_of(&rig), ["e2e4"]);
    // Without the board's own turning, auto learns the reversed reading (as before).
    let mut plain = Rig::new(
        Chess::default(),
        OrientationSetting::Auto,
        Orientation::Reversed,
    );
    assert_eq!(plain.tracker.orientation(), Some(Orientation::Reversed));
    plain.dump();
    assert!(plain.tracker.in_sync());
}

/// A queen slid d1-h5 over g4, answered by ...Bg4, then lifted for her next move before the
/// board showed the bishop's move standing, and held in the air past the settle time: the
/// board is the game with the queen in hand. Qg4 Bxg4 also explains it (the readings saw the
/// queen on g4), but Qh5 and ...Bg4 are final (each opponent touched the board): they are not
/// taken back for a piece in hand, and the queen set down on h6 is the next move (corpus game
/// 853 on a board without a clock).
#[test]
fn a_piece_held_in_the_air_takes_no_final_move_back() {
    let mut rig = Rig::at(START);
    rig.lift("e2");
    rig.place("e4", 'P');
    rig.pass(300);
    rig.lift("d7");
    rig.place("d6", 'p');
    rig.pass(300);
    // The queen's slide: seen on g4 on her way to h5.
    rig.lift("d1");
    rig.place("g4", 'Q');
    rig.lift("g4");
    rig.place("h5", 'Q');
    rig.pass(300);
    rig.lift("c8");
    rig.place("g4", 'b');
    // White lifts the queen while the bishop's move is still held (a bishop may slide on),
    // which makes ...Bg4 final, and holds the queen well past the settle time.
    rig.pass(70);
    rig.lift("h5");
    assert_eq!(moves_of(&rig), ["e2e4", "d7d6", "d1h5", "c8g4"]);
    rig.pass(3 * ILLEGAL_SETTLE_MS);
    assert_eq!(moves_of(&rig), ["e2e4", "d7d6", "d1h5", "c8g4"]);
    rig.place("h6", 'Q');
    rig.pass(3 * ILLEGAL_SETTLE_MS);
    assert_eq!(retracted(&rig.events), 0, "{:?}", rig.events);
    assert!(illegal(&rig.events).is_empty(), "{:?}", rig.events);
    assert_eq!(moves_of(&rig), ["e2e4", "d7d6", "d1h5", "c8g4", "h5h6"]);
    assert!(rig.tracker.in_sync());
}
