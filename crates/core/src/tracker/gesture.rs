//! The DGT result gesture (contract section 2): both kings put on the centre squares d4, d5,
//! e4, e5 and left there for [`GESTURE_HOLD_MS`] end the game — both on light squares (d5, e4)
//! 1-0, both on dark squares (d4, e5) 0-1, one on each ½-½.
//!
//! Two kings on the centre squares always stand next to each other, so no legal position has
//! them there: once both are, the board cannot be showing a real move sequence. Until then
//! (one king walked to the centre) it can, and nothing is decided. The detector only looks at
//! placements: the rest of the board must be exactly the game's, so a piece in hand or an
//! unrelated illegal placement is never read as a gesture.

use shakmaty::{Board, Color, Move, Role, Square};

use crate::vocab::{GameResult, Millis};

/// How long both kings must stay on the centre squares.
pub const GESTURE_HOLD_MS: u64 = 2_000;

const CENTRE: [Square; 4] = [Square::D4, Square::D5, Square::E4, Square::E5];

/// The result the sensed board shows by the gesture, if `sensed` is `game` with both kings
/// moved to centre squares (a king already there may stay).
pub fn gesture_result(sensed: &Board, game: &Board) -> Option<GameResult> {
    let white = sole_king(sensed, Color::White)?;
    let black = sole_king(sensed, Color::Black)?;
    if !CENTRE.contains(&white) || !CENTRE.contains(&black) {
        return None;
    }
    let game_kings = [game.king_of(Color::White)?, game.king_of(Color::Black)?];
    for sq in Square::ALL {
        if sq == white || sq == black || game_kings.contains(&sq) {
            continue;
        }
        if sensed.piece_at(sq) != game.piece_at(sq) {
            return None;
        }
    }
    // The kings' old squares are empty now unless a king stands there.
    for sq in game_kings {
        if sq != white && sq != black && sensed.piece_at(sq).is_some() {
            return None;
        }
    }
    // The centre squares the kings took were empty in the game: a king taking a piece there
    // is not the gesture.
    for sq in [white, black] {
        if !game_kings.contains(&sq) && game.piece_at(sq).is_some() {
            return None;
        }
    }
    Some(match (white.is_light(), black.is_light()) {
        (true, true) => GameResult::WhiteWins,
        (false, false) => GameResult::BlackWins,
        (true, false) | (false, true) => GameResult::Draw,
    })
}

fn sole_king(board: &Board, color: Color) -> Option<Square> {
    let kings = board.kings() & board.by_color(color);
    (kings.count() == 1).then(|| kings.first()).flatten()
}

/// Whether `role` moving from `from` to `to` is a king stepping onto a centre square (the
/// first half of a gesture that was also a legal move).
pub fn is_king_to_centre(role: Role, to: Square) -> bool {
    role == Role::King && CENTRE.contains(&to)
}

/// A king's step onto a centre square, watched while it may still be a gesture's first half
/// (a legal move that the gesture would retract). It is final once the clock is pressed, a
/// later move is played, or the other king has stood on the board away from the centre
/// squares for [`GESTURE_HOLD_MS`] without a break (a king in hand may be on its way there).
/// Until then broadcast outputs leave it out, so a gesture never shows in them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirstHalf {
    /// The record's ply count with the step as its last move.
    ply: usize,
    /// Since when the other king has stood away from the centre squares.
    away_since: Option<Millis>,
}

impl FirstHalf {
    /// Watch `mv`, the record's `ply`th move, if it can be a gesture's first half: a king
    /// stepping onto an empty centre square.
    pub fn watch(mv: Move, ply: usize) -> Option<FirstHalf> {
        (is_king_to_centre(mv.role(), mv.to()) && !mv.is_capture()).then_some(FirstHalf {
            ply,
            away_since: None,
        })
    }

    /// Whether the step may still be a gesture's first half at `now`, the record now having
    /// `ply` moves and the board showing `sensed`; `other` is the colour of the king that
    /// would complete the gesture (the side to move).
    pub fn still_open(&mut self, ply: usize, sensed: &Board, other: Color, now: Millis) -> bool {
        if ply != self.ply {
            return false;
        }
        match sole_king(sensed, other) {
            Some(sq) if !CENTRE.contains(&sq) => {
                let since = *self.away_since.get_or_insert(now);
                now.saturating_sub(since) < GESTURE_HOLD_MS
            }
            _ => {
                self.away_since = None;
                true
            }
        }
    }

    /// When the step becomes final if the other king stays where it is (`None`: it is not
    /// standing away from the centre now).
    pub fn final_at(&self) -> Option<Millis> {
        self.away_since
            .map(|since| since.saturating_add(GESTURE_HOLD_MS))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;

    fn board(fen: &str) -> Board {
        fen.parse::<Fen>().unwrap().into_setup().board
    }

    #[test]
    fn colours_of_the_centre_squares_give_the_result() {
        let game = board("8/8/4k3/8/8/4K3/8/R7");
        for (fen, result) in [
            ("8/8/8/3k4/4K3/8/8/R7", "1-0"),     // d5 + e4: light
            ("8/8/8/4k3/3K4/8/8/R7", "0-1"),     // e5 + d4: dark
            ("8/8/8/3k4/3K4/8/8/R7", "1/2-1/2"), // d5 light, d4 dark
        ] {
            assert_eq!(
                gesture_result(&board(fen), &game).map(GameResult::as_str),
                Some(result),
                "{fen}"
            );
        }
        // One king in the centre, or a piece missing, or a piece moved: no gesture.
        assert_eq!(gesture_result(&board("8/8/4k3/8/4K3/8/8/R7"), &game), None);
        assert_eq!(gesture_result(&board("8/8/8/3k4/4K3/8/8/8"), &game), None);
        assert_eq!(gesture_result(&board("8/8/8/3k4/4K3/8/8/1R6"), &game), None);
        // A king already on a centre square in the game may stay.
        let game = board("8/8/4k3/8/4K3/8/8/R7");
        assert_eq!(
            gesture_result(&board("8/8/8/3k4/4K3/8/8/R7"), &game),
            Some(GameResult::WhiteWins)
        );
    }
}
