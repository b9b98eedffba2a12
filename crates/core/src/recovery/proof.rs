//! When the search's single sequence is the gap's story, and when it is only the shortest.
//!
//! The search finds the shortest legal sequences to the board (see [`crate::tracker::sequences`]). One
//! sequence of that length proves nothing by itself: a gap that held more plies can reach
//! the same placement too — a piece that moved twice reads as one move, a piece that went
//! and came back reads as none (a dozen bullet plies while the daemon was down can leave a
//! board that four plies reach). A single sequence is the story only when the evidence
//! bounds how many plies the gap held, and no sequence of any other length the bound
//! allows reaches the board.
//!
//! The bound comes from the clock: with an increment, its times after the gap count the
//! presses made meanwhile ([`super::clock::Witness::most_plies`]). Nothing else bounds a
//! gap: its length in time says nothing without a pace no player is held to, and a
//! restarted daemon does not even know it. Without a bound the board's memory (which has
//! every change) or the arbiter decides; the record never takes a guess.
//!
//! Nor is a board a position because the clock was pressed or the board stood still: the
//! next mover's hand may already hold a piece. A shorter story with the next move begun on
//! top ([`begun_rival`]) leaves the board proving nothing either.
//!
//! Pure.

use shakmaty::{Board, Chess, Color, Move, Position};

use crate::tracker::sequences::{self as search, MAX_PLIES, Outcome};

/// What the evidence says of a single sequence found to the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The bound rules out every other length: the sequence is the gap's story.
    Proven,
    /// Nothing bounds the gap within the search's reach: more plies may have been made.
    Unbounded,
    /// Another length the bound allows reaches the board too (or the bound rules out the
    /// sequence's own length, or the search could not finish).
    Rivals,
    /// Fewer plies reach a position the board is with the next move begun (see
    /// [`begun_rival`]).
    Begun,
}

/// Judge `found`, the single shortest sequence from `from` to `board`. `most`: the most
/// plies the gap may hold (`None`: unbounded); `fits`: the ply counts the clock allows.
pub fn judge(
    from: &Chess,
    board: &Board,
    found: &[Move],
    most: Option<usize>,
    fits: &dyn Fn(usize) -> bool,
) -> Verdict {
    let Some(most) = most.filter(|&m| m <= MAX_PLIES) else {
        return Verdict::Unbounded;
    };
    let len = found.len();
    if !fits(len) || len > most {
        return Verdict::Rivals;
    }
    if len == most {
        return Verdict::Proven;
    }
    // Every longer count the clock allows, up to the bound. When none of these reaches the
    // board the search falls back to every count and finds the shortest again (`found`, or
    // its transpositions the caller ruled out): no rival.
    let longer = |n: usize| n > len && n <= most && fits(n);
    let rival = |s: &Vec<Move>| s.len() != len;
    match search::explain_within(from, board, None, &longer) {
        Outcome::Unique(s) if !rival(&s) => Verdict::Proven,
        Outcome::Several { sequences, .. } if !sequences.iter().any(rival) => Verdict::Proven,
        Outcome::Unreachable | Outcome::Same => Verdict::Proven,
        _ => Verdict::Rivals,
    }
}

/// Whether fewer plies than `found` reach a position that the board is with the pieces of the
/// next move lifted (`begun`: by the side to move there, `lifter` when the clock says who it
/// is). A reading at a press, or a board standing still, may show a hand already holding the
/// next move's piece (a reply made the moment the clock was pressed, a player hovering), and
/// a longer sequence that takes the piece off the board by a capture or moves it away reads
/// the same: Ne2 Bxe2 Qxe2 d4 Qf3 is Qxf3 d4 with White's knight in hand. Then the board
/// proves neither; the next board, the memory or the arbiter does. A search that gives up
/// rules nothing out.
pub fn begun_rival(
    from: &Chess,
    board: &Board,
    found: &[Move],
    lifter: Option<Color>,
    begun: &dyn Fn(&Chess, &Board) -> bool,
) -> bool {
    let leaf = |p: &Chess| p.board() != board && begun(p, board);
    (0..found.len())
        .filter(|&k| {
            let turn = if k % 2 == 0 {
                from.turn()
            } else {
                !from.turn()
            };
            lifter.is_none_or(|c| c == turn)
        })
        .any(|k| search::reaches_lifted(from, board, k, &leaf) != Some(false))
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::san::San;

    fn play(pos: &Chess, sans: &str) -> (Chess, Vec<Move>) {
        let mut p = pos.clone();
        let mut moves = Vec::new();
        for s in sans.split_whitespace() {
            let m = s.parse::<San>().unwrap().to_move(&p).unwrap();
            p.play_unchecked(m);
            moves.push(m);
        }
        (p, moves)
    }

    #[test]
    fn a_gap_nothing_bounds_proves_nothing() {
        let (from, _) = play(&Chess::default(), "e4");
        let (to, found) = play(&from, "d5 exd5 Qxd5");
        let verdict = judge(&from, to.board(), &found, None, &|_| true);
        assert_eq!(verdict, Verdict::Unbounded);
        let verdict = judge(&from, to.board(), &found, Some(9), &|_| true);
        assert_eq!(verdict, Verdict::Unbounded);
    }

    #[test]
    fn a_bound_with_no_other_length_reaching_the_board_proves_the_sequence() {
        let (from, _) = play(&Chess::default(), "e4");
        let (to, found) = play(&from, "d5 exd5 Qxd5");
        assert_eq!(
            judge(&from, to.board(), &found, Some(4), &|_| true),
            Verdict::Proven
        );
    }

    #[test]
    fn a_longer_story_the_bound_allows_is_a_rival() {
        // Nf3 Nf6 reads as two plies; Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 reaches it in six.
        let (from, _) = play(&Chess::default(), "e4 e5");
        let (to, found) = play(&from, "Nf3 Nf6");
        assert_eq!(
            judge(&from, to.board(), &found, Some(6), &|_| true),
            Verdict::Rivals
        );
        // A clock that allows only two or three plies leaves it the story.
        assert_eq!(
            judge(&from, to.board(), &found, Some(3), &|n| n <= 3),
            Verdict::Proven
        );
    }

    #[test]
    fn fewer_plies_with_the_next_move_begun_are_a_rival() {
        // Qxf3 d4 was made unseen, and White's hand lifted the knight on c3 for Ne2 the moment
        // Black pressed: Ne2 Bxe2 Qxe2 d4 Qf3 reaches that board exactly.
        let (from, _) = play(&Chess::default(), "e4 c6 Nf3 d5 Nc3 Bg4 h3 Bxf3");
        let (after, _) = play(&from, "Qxf3 d4");
        let mut board = after.board().clone();
        board.discard_piece_at(shakmaty::Square::C3);
        let (_, found) = play(&from, "Ne2 Bxe2 Qxe2 d4 Qf3");
        let begun = super::super::reading::one_move_begun;
        assert!(begun_rival(
            &from,
            &board,
            &found,
            Some(Color::White),
            &begun
        ));
        assert!(begun_rival(&from, &board, &found, None, &begun));
        // Nothing shorter reaches d5 exd5 Qxd5 with a piece in hand.
        let (from, _) = play(&Chess::default(), "e4");
        let (to, found) = play(&from, "d5 exd5 Qxd5");
        assert!(!begun_rival(
            &from,
            to.board(),
            &found,
            Some(Color::White),
            &begun
        ));
    }
}
