//! Held moves and final moves: each case where the hand that made a move may still be moving
//! on is held, each way a hold ends publishes it, and a move becomes final (leaves the
//! tracker's pending plies) by the press, the opponent's touch or a still board.

mod tracker_common;

use eboard_core::tracker::{DWELL_MS, FINAL_STILL_MS, SCAN_LAG_MS, TrackerEvent};
use tracker_common::*;

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
const CASTLE: &str = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1";

fn held(rig: &Rig) -> Option<String> {
    rig.tracker
        .held()
        .map(|m| shakmaty::uci::UciMove::from_standard(m).to_string())
}

/// Make a move by lift + place; returns what the placement published.
fn mv(rig: &mut Rig, from: &str, to: &str, p: char) -> Vec<String> {
    rig.lift(from);
    played(&rig.place(to, p))
}

// ---- each hold case ----

#[test]
fn a_slider_whose_line_goes_on_is_held() {
    let mut rig = Rig::at("4k3/8/8/8/8/8/8/R3K3 w - - 0 1");
    assert!(mv(&mut rig, "a1", "a4", 'R').is_empty());
    assert_eq!(held(&rig).as_deref(), Some("a1a4"));
    assert!(
        !rig.tracker.in_sync(),
        "the game does not show the held move yet"
    );
    // A bishop sliding on towards a piece it can take is held too.
    let mut rig = Rig::at("4k3/8/8/5p2/8/8/8/2B1K3 w - - 0 1");
    assert!(mv(&mut rig, "c1", "e3", 'B').is_empty());
}

#[test]
fn a_pawn_step_from_its_start_rank_is_held_and_a_double_step_is_not() {
    let mut rig = Rig::at(START);
    assert!(mv(&mut rig, "d2", "d3", 'P').is_empty());
    assert_eq!(held(&rig).as_deref(), Some("d2d3"));
    let mut rig = Rig::at(START);
    assert_eq!(mv(&mut rig, "d2", "d4", 'P'), ["d2d4"]);
}

#[test]
fn a_rook_on_its_castling_square_with_king_and_right_is_held() {
    let mut rig = Rig::at(CASTLE);
    assert!(mv(&mut rig, "h1", "f1", 'R').is_empty());
    assert_eq!(held(&rig).as_deref(), Some("h1f1"));
    // Without the right the same move is complete.
    let mut rig = Rig::at("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w kq - 0 1");
    assert_eq!(mv(&mut rig, "h1", "f1", 'R'), ["h1f1"]);
}

#[test]
fn a_king_one_step_towards_its_castling_square_is_held() {
    let mut rig = Rig::at(CASTLE);
    assert!(mv(&mut rig, "e1", "f1", 'K').is_empty());
    assert_eq!(held(&rig).as_deref(), Some("e1f1"));
    let mut rig = Rig::at(CASTLE);
    assert!(mv(&mut rig, "e1", "d1", 'K').is_empty());
    // A king step away from both castling squares is complete.
    let mut rig = Rig::at("r3k2r/pppppppp/8/8/8/8/PPPP1PPP/R3K2R w KQkq - 0 1");
    assert_eq!(mv(&mut rig, "e1", "e2", 'K'), ["e1e2"]);
}

#[test]
fn a_piece_set_beside_a_victim_it_could_take_is_held() {
    // The knight from g1 could take f3; set down on e2 beside it, it may be about to.
    let mut rig = Rig::at("4k3/8/8/8/8/5p2/8/4K1N1 w - - 0 1");
    assert!(mv(&mut rig, "g1", "e2", 'N').is_empty());
    assert_eq!(held(&rig).as_deref(), Some("g1e2"));
    // Then the victim comes off and the knight goes on to take it: one move, no correction.
    rig.lift("f3");
    rig.lift("e2");
    let ev = rig.place("f3", 'N');
    assert_eq!(played(&ev), ["g1f3"]);
    assert_eq!(rig.tracker.corrections(), 0);
}

#[test]
fn complete_moves_are_published_at_once() {
    let mut rig = Rig::at(START);
    assert_eq!(mv(&mut rig, "g1", "f3", 'N'), ["g1f3"]);
    let mut rig = Rig::at("4k3/8/8/8/8/8/8/R3K3 w - - 0 1");
    assert_eq!(mv(&mut rig, "a1", "a8", 'R'), ["a1a8"], "end of the line");
    let mut rig = Rig::at("4k3/8/8/8/p7/8/8/R3K3 w - - 0 1");
    rig.lift("a4");
    assert_eq!(
        mv(&mut rig, "a1", "a4", 'R'),
        ["a1a4"],
        "a capture ends the line"
    );
}

// ---- each way a hold ends ----

#[test]
fn a_hold_ends_with_the_next_change_that_continues_the_move() {
    let mut rig = Rig::at("4k3/8/8/8/8/8/8/R3K3 w - - 0 1");
    assert!(mv(&mut rig, "a1", "a4", 'R').is_empty());
    rig.lift("a4");
    assert_eq!(held(&rig), None, "the piece is in hand again");
    assert_eq!(played(&rig.place("a8", 'R')), ["a1a8"]);
    assert_eq!(retracted(&rig.events), 0);
}

#[test]
fn a_hold_ends_with_the_press() {
    let mut rig = Rig::at(CASTLE);
    assert!(mv(&mut rig, "h1", "f1", 'R').is_empty());
    let ev = rig.press();
    assert_eq!(played(&ev), ["h1f1"]);
    assert!(rig.tracker.in_sync());
    assert_eq!(held(&rig), None);
}

#[test]
fn a_hold_ends_with_the_opponents_touch() {
    let mut rig = Rig::at(START);
    assert!(mv(&mut rig, "e2", "e3", 'P').is_empty());
    // Black lifts his knight: White's hand is off, the pawn stays on e3.
    let ev = rig.lift("g8");
    assert_eq!(played(&ev), ["e2e3"]);
    let ev = rig.place("f6", 'n');
    assert_eq!(played(&ev), ["g8f6"]);
    assert_eq!(rig.game_uci(), ["e2e3", "g8f6"]);
}

#[test]
fn a_hold_ends_with_the_dwell_and_not_before() {
    let mut rig = Rig::at(START);
    assert!(mv(&mut rig, "e2", "e3", 'P').is_empty());
    let shown_at = rig.now;
    assert_eq!(rig.tracker.next_wakeup(), Some(shown_at + DWELL_MS));
    assert!(played(&rig.wait(DWELL_MS - 1)).is_empty());
    let ev = rig.wait(1);
    assert_eq!(played(&ev), ["e2e3"]);
    assert_eq!(ev.last(), Some(&TrackerEvent::InSync(true)));
}

#[test]
fn lifting_the_victim_of_a_continuation_is_the_movers_hand_not_the_opponents_touch() {
    // Bc1-e3 held; the next square on the line, f4, holds a black pawn. White lifts it.
    let mut rig = Rig::at("4k3/8/8/8/5p2/8/8/2B1K3 w - - 0 1");
    assert!(mv(&mut rig, "c1", "e3", 'B').is_empty());
    assert!(played(&rig.lift("f4")).is_empty());
    rig.lift("e3");
    assert_eq!(played(&rig.place("f4", 'B')), ["c1f4"]);
    assert_eq!(rig.tracker.corrections(), 0);
}

#[test]
fn the_opponents_press_read_after_a_held_first_step_does_not_end_the_hold() {
    // Black's ...Kd8 is pressed only as White already sets his bishop down on e3, on its way
    // to capture on f4 (no reply time at all; the press read after the first step).
    let mut rig = Rig::at("4k3/8/8/8/5b2/8/8/2B1K3 b - - 0 1");
    assert_eq!(mv(&mut rig, "e8", "d8", 'k'), ["e8d8"]);
    assert!(mv(&mut rig, "c1", "e3", 'B').is_empty());
    assert!(played(&rig.press_by(shakmaty::Color::Black)).is_empty());
    assert_eq!(held(&rig).as_deref(), Some("c1e3"));
    // The bishop goes on; the capture lands well past a press window.
    rig.lift("e3");
    rig.wait(SCAN_LAG_MS + 50);
    rig.lift("f4");
    assert_eq!(played(&rig.place("f4", 'B')), ["c1f4"]);
    rig.press_by(shakmaty::Color::White);
    assert_eq!(rig.game_uci(), ["e8d8", "c1f4"]);
    assert_eq!(retracted(&rig.events), 0);
}

#[test]
fn the_opponents_late_press_does_not_close_the_window_of_a_move_published_at_once() {
    // White's Bc1-h6 is published at once (its line ends there), and Black's press of ...Kd8
    // is read only after it: White's move stays correctable until his own press, so the
    // bishop taken back over its square and set down on a3 replaces it.
    let mut rig = Rig::at("4k3/8/8/8/8/8/8/2B1K3 b - - 0 1");
    assert_eq!(mv(&mut rig, "e8", "d8", 'k'), ["e8d8"]);
    assert_eq!(mv(&mut rig, "c1", "h6", 'B'), ["c1h6"]);
    rig.press_by(shakmaty::Color::Black);
    rig.wait(SCAN_LAG_MS + 50);
    assert_eq!(rig.tracker.pending_plies(), 1, "White has not pressed");
    rig.lift("h6");
    assert_eq!(played(&rig.place("a3", 'B')), ["c1a3"]);
    assert_eq!(rig.game_uci(), ["e8d8", "c1a3"]);
    rig.press_by(shakmaty::Color::White);
    rig.wait(SCAN_LAG_MS + 1);
    assert_eq!(rig.tracker.pending_plies(), 0, "his own press ends it");
}

// ---- when a move is final ----

#[test]
fn a_move_is_final_after_the_press_window() {
    let mut rig = Rig::at(START);
    assert_eq!(mv(&mut rig, "g1", "f3", 'N'), ["g1f3"]);
    assert_eq!(rig.tracker.pending_plies(), 1);
    rig.press();
    assert_eq!(
        rig.tracker.pending_plies(),
        1,
        "the scan may still be behind"
    );
    rig.wait(SCAN_LAG_MS + 1);
    assert_eq!(rig.tracker.pending_plies(), 0);
}

#[test]
fn a_complete_move_is_final_at_the_opponents_touch() {
    let mut rig = Rig::at(START);
    assert_eq!(mv(&mut rig, "g1", "f3", 'N'), ["g1f3"]);
    rig.lift("e7");
    assert_eq!(rig.tracker.pending_plies(), 0);
}

#[test]
fn a_move_is_final_after_the_board_stood_still_for_two_seconds() {
    let mut rig = Rig::at(START);
    assert_eq!(mv(&mut rig, "g1", "f3", 'N'), ["g1f3"]);
    let placed = rig.now;
    assert_eq!(rig.tracker.next_wakeup(), Some(placed + FINAL_STILL_MS));
    rig.wait(FINAL_STILL_MS - 1);
    assert_eq!(rig.tracker.pending_plies(), 1);
    rig.wait(1);
    assert_eq!(rig.tracker.pending_plies(), 0);
    // A final move is never corrected: the knight moved on is not Ng1-h3.
    rig.lift("f3");
    rig.place("h3", 'N');
    rig.wait(1000);
    assert_eq!(rig.game_uci(), ["g1f3"]);
    assert_eq!(retracted(&rig.events), 0);
}

#[test]
fn a_move_published_by_the_dwell_stays_correctable_when_the_opponent_touches() {
    // e7-e6, left past the dwell; White lifts the knight while Black pushes on to e5.
    let mut rig = Rig::at("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
    assert!(mv(&mut rig, "e7", "e6", 'p').is_empty());
    assert_eq!(played(&rig.wait(DWELL_MS)), ["e7e6"]);
    rig.lift("g1");
    assert_eq!(
        rig.tracker.pending_plies(),
        1,
        "the pawn may still be moving"
    );
    rig.lift("e6");
    rig.place("e5", 'p');
    // "...e5 Nf3" or "...e6 Nf3 ...e6-e5": the next move tells (tracker_cases tests both).
    assert!(played(&rig.place("f3", 'N')).is_empty());
    assert!(!rig.tracker.in_sync());
    assert_eq!(rig.tracker.pending_plies(), 1, "e6 is still not final");
}
