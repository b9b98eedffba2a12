//! Automatic ends of the game decided by the position alone, and the 7.5.2 helper.

use shakmaty::{Chess, Move, Position};

use super::claims::History;
use super::{unwinnable, win_for};
use crate::vocab::{Edition, GameResult, Termination};

/// 7.5.2 helper for the session: the queen promotion whose placement `board` shows, except
/// that the mover's pawn was left on the last rank instead of being exchanged. Pass it to
/// [`super::Arbiter::on_illegal_placement`] with the tracker's `IllegalPlacement`.
pub fn unexchanged_promotion(pos: &Chess, board: &shakmaty::Board) -> Option<Move> {
    let mover = pos.turn();
    pos.legal_moves().into_iter().find(|m| {
        if m.promotion() != Some(shakmaty::Role::Queen) {
            return false;
        }
        let mut after = pos.clone();
        after.play_unchecked(*m);
        let mut b = after.board().clone();
        b.set_piece_at(
            m.to(),
            shakmaty::Piece {
                color: mover,
                role: shakmaty::Role::Pawn,
            },
        );
        b == *board
    })
}

/// The automatic end a position calls for, by rules.md §4.5's precedence: checkmate, dead
/// position by material, stalemate, dead position by the analyser, then (`fide-2023` only)
/// 75 moves and fivefold repetition. `history`
/// ends with `pos`. Returns (result, termination).
pub fn automatic_end_of(
    pos: &Chess,
    history: &History,
    edition: Edition,
) -> Option<(GameResult, Termination)> {
    if pos.is_checkmate() {
        return Some((win_for(pos.turn().other()), Termination::Checkmate));
    }
    // The material rule first, then stalemate, then the exact (CHA) dead-position test: the
    // labels then match python-chess wherever it has one (K+B v K stalemated is
    // `dead-position`, a stalemate with mating material left is `stalemate`).
    if pos.is_insufficient_material() {
        return Some((GameResult::Draw, Termination::DeadPosition));
    }
    if pos.is_stalemate() {
        return Some((GameResult::Draw, Termination::Stalemate));
    }
    if unwinnable::is_dead_fast(pos) {
        return Some((GameResult::Draw, Termination::DeadPosition));
    }
    if edition.ends_by_seventyfive_and_fivefold() {
        if pos.halfmoves() >= 150 {
            return Some((GameResult::Draw, Termination::SeventyfiveMoves));
        }
        if history.current_count(pos) >= 5 {
            return Some((GameResult::Draw, Termination::FivefoldRepetition));
        }
    }
    None
}
