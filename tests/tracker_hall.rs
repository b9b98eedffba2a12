//! Convergence, fuzzed: random corpus games played by a second model of a hand
//! (`tracker_common::hall`: replies 0 ms to 2 s after the move before, most of them short;
//! victim or capturer first; castling either piece first; slides set down on the way;
//! j'adoube; a knocked piece put back), with a clock or none, on a board either way round.
//! Whenever the board stands still for 2.5 s the record is the game so far, or the tracker
//! holds two stories open with the game among them (the board cannot tell them apart);
//! nobody is accused of a legal game, and the game ends exact and in sync. A record in sync
//! with a game that was not played fails at once.
//!
//! Every failing case proptest finds becomes a named test below (a soak of 400,000 games
//! from a random seed found none more after corpus game 757's).

mod proptest_runs;
mod tracker_common;

use eboard_core::board::Orientation;
use proptest::prelude::*;
use std::sync::OnceLock;
use tracker_common::hall::{self, HallGame};
use tracker_common::*;

fn games() -> &'static [Vec<shakmaty::Move>] {
    static GAMES: OnceLock<Vec<Vec<shakmaty::Move>>> = OnceLock::new();
    GAMES.get_or_init(corpus_games)
}

/// Plays corpus game `index` in the hall and checks everything the module promises.
fn check(index: usize, hall: HallGame) -> Result<(), String> {
    let game = &games()[index];
    let run = hall::play(game, &hall);
    let want: Vec<String> = game
        .iter()
        .map(|m| shakmaty::uci::UciMove::from_standard(*m).to_string())
        .collect();
    let got = run.rig.game_uci();
    let case = format!("game {index}, {hall:?}");
    let accused = illegal(&run.rig.events);
    if !accused.is_empty() {
        return Err(format!("{case}: accused: {:?}", accused[0]));
    }
    if got != want {
        return Err(format!(
            "{case}: {} of {} plies, first difference at {:?}, in sync {}",
            got.len(),
            want.len(),
            got.iter().zip(&want).position(|(a, b)| a != b),
            run.rig.tracker.in_sync()
        ));
    }
    if !run.rig.tracker.in_sync() {
        return Err(format!("{case}: exact but out of sync"));
    }
    if run.behind_plies > 0 || run.open_without_the_game > 0 {
        return Err(format!(
            "{case}: at a still board the record was {} plies off ({} times with nothing said), {} times two stories without the game",
            run.behind_plies, run.silent_behind, run.open_without_the_game
        ));
    }
    Ok(())
}

/// A named case of the property test: no clock, the hall's mix of paces.
fn unclocked(seed: u64, orientation: Orientation) -> HallGame {
    HallGame {
        seed,
        clock: false,
        orientation,
        trace: None,
        reply_ms: None,
    }
}

fn orientation(reversed: bool) -> Orientation {
    if reversed {
        Orientation::Reversed
    } else {
        Orientation::Normal
    }
}

proptest! {
    // 1,000 games, about 85,000 plies, from a fixed seed, so that CI plays the same games
    // every time and a failure is reproducible; `TRACKER_HALL_SEED=random` (or a number)
    // explores further, and `PROPTEST_CASES` plays more (a local soak).
    #![proptest_config(proptest_runs::config("TRACKER_HALL_SEED", 1_000, 1))]

    #[test]
    fn a_still_board_shows_the_game_played(
        index in 0usize..1110,
        seed in any::<u64>(),
        clock in any::<bool>(),
        reversed in any::<bool>(),
    ) {
        let hall = HallGame { seed, clock, orientation: orientation(reversed), trace: None, reply_ms: None };
        if let Err(e) = check(index % games().len(), hall) {
            prop_assert!(false, "{}", e);
        }
    }
}

/// A rook shuffled a4-a6, the reply, then slid back a6-a5-a4 (set down on a5) while the
/// tracker held two stories open (Ra5 Qb7 against Qb7 Ra6-a5): the board then read as the
/// first story and a move beyond it (Ra5 Qb7 Ra4), a record in sync with a game not played
/// for the rest of the game. The readings show neither story: the rook stood on a6 and
/// reached a5 only after the reply. (Corpus game 1069, no clock.)
#[test]
fn a_rook_slid_back_over_a_square_of_the_other_story_is_the_game_played() {
    let hall = unclocked(2771, Orientation::Reversed);
    check(1069, hall).unwrap();
}

/// b2-b3 answered by ...c4-c3 (held: it may be on its way to capture b3), then b3-b4 at
/// once: without a clock b2-b4 with the reply read during it leaves the same readings; the
/// two stories stay open, the game among them, until the next move tells (corpus game 895).
#[test]
fn two_stories_the_board_cannot_tell_apart_hold_the_game_until_the_next_move() {
    let hall = unclocked(155, Orientation::Reversed);
    let run = hall::play(&games()[895], &hall);
    assert_eq!(run.open_questions, 1, "the still board asked");
    check(895, hall).unwrap();
}

/// Qb8-e8 (the queen seen standing on e8), Qe7-c7 held, ...Qe8-d8 held, Qc7xd8 Rfxd8: the
/// readings also witness Qb8-d8 Qe7xd8 Rxd8, two plies shorter, which never puts the queen
/// on e8. That story was the shortest, so the game played was never searched; the record
/// stopped behind the board for 60 plies and at last took the shorter game, in sync with a
/// game not played. Found by the property test (corpus game 202, no clock).
#[test]
fn a_shorter_story_that_skips_a_queen_seen_standing_is_not_the_game() {
    let hall = unclocked(14_480_505_434_843_928_584, Orientation::Normal);
    check(202, hall).unwrap();
}

/// Rb1-b7 (slid, set down on each square on the way), ...Qa7-a8 held, then the rook slid
/// back b7-b6-b4-b3-b2: the two stories held open (Rb6 Qa8 against Qa8 Rb7-b6) and the move
/// beyond the first (Rb6-b4) read as the game, though no rook stood on b6 after b7 until
/// the reply was made. The readings show Rb7 Qa8 Rb7-b4 (corpus game 816, no clock).
#[test]
fn a_rook_slid_back_after_the_reply_is_not_the_held_story() {
    let hall = unclocked(2814, Orientation::Normal);
    check(816, hall).unwrap();
}

/// Bf4 slid to d2 (set down on e3 on the way), answered at once by ...Bg5xd2 with the
/// victim lifted first and the bishop set down on f4 and e3 on its way: on e3 the board read
/// as Bf4-e3 Bxe3, a white bishop seen standing on e3, and the two plies were taken; the
/// record then fell behind the board for good and a legal game was called illegal. The
/// white bishop was seen on d2 after e3: the capture may still be on its way, and the next
/// change (the bishop set down on d2) tells. Found by the property test (corpus game 757,
/// no clock).
#[test]
fn a_capture_set_down_on_the_way_to_a_piece_that_moved_on_is_not_taken_short() {
    let hall = unclocked(3_765_028_393_421_860_144, Orientation::Normal);
    check(757, hall).unwrap();
}

/// The rook shuffled a4-a6 and back through a repetition, set down on a5 each way: Ra4-a6
/// (over a5), ...Qc6-b7 at once, then Ra6-a4 (over a5). On a5 the tracker held two stories
/// open (Ra6 replaced by Ra5 and answered, or Qb7 and the rook moved on), and on a4 it took
/// Ra5 Qb7 Ra4: every reading shows a piece that story has somewhere (the repetition put the
/// rook on a6 before), and its moves were set down in order, as the game's were. But the
/// rook stood on a6 when the queen was set down, where that story never has it then: the
/// game is the story that fits every reading at its time, and no move of it is taken back.
/// Found by a soak of the property test (corpus game 1069, no clock, the board reversed).
#[test]
fn a_rook_shuffled_through_a_repetition_is_where_it_stood_when_the_reply_came() {
    let hall = unclocked(15_837_803_132_077_286_284, Orientation::Reversed);
    check(1069, hall).unwrap();
}
