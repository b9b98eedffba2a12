//! Which legal moves explain a sensed board: one ply, or two plies in a row.
//!
//! These run on every sensor change, so they never enumerate blindly: the squares where the
//! sensed board differs from the position name the only candidate moves.

use shakmaty::{Bitboard, Board, CastlingSide, Chess, Color, Move, Position, Role};

/// Squares whose contents differ between two boards.
pub fn diff(a: &Board, b: &Board) -> Bitboard {
    let mut d = a.white() ^ b.white();
    for role in Role::ALL {
        d |= a.by_role(role) ^ b.by_role(role);
    }
    d
}

/// The board after a move (the move must be legal in `pos`).
pub(crate) fn after(pos: &Chess, m: Move) -> Chess {
    let mut next = pos.clone();
    next.play_unchecked(m);
    next
}

/// The legal move of `pos` whose result has exactly the `target` board, if any. At most one
/// move can: two different moves never leave the same pieces on the same squares.
pub(crate) fn find_move(pos: &Chess, target: &Board) -> Option<Move> {
    let cur = pos.board();
    let d = diff(cur, target);
    let n = d.count();
    if !(2..=4).contains(&n) {
        return None;
    }
    let us = pos.turn();
    let ours_now = cur.by_color(us).count();
    let ours_then = target.by_color(us).count();
    let theirs_now = cur.by_color(!us).count();
    let theirs_then = target.by_color(!us).count();
    if ours_now != ours_then || !(theirs_then == theirs_now || theirs_then + 1 == theirs_now) {
        return None;
    }
    let matches = |m: &Move| after(pos, *m).board() == target;
    // Chess960 castling changes 2 to 4 squares: the king or the rook may stay where it is,
    // or the two may swap squares.
    let castling = || {
        [CastlingSide::KingSide, CastlingSide::QueenSide]
            .into_iter()
            .flat_map(|side| pos.castling_moves(side))
            .find(matches)
    };
    match n {
        2 => {
            // A normal move (incl. captures and promotions): its destination holds one of our
            // pieces that was not there before.
            let arrivals = d & target.by_color(us);
            if arrivals.count() != 1 {
                return castling();
            }
            let to = arrivals.first()?;
            let role = target.role_at(to)?;
            let mut candidates = pos.san_candidates(role, to);
            if role != Role::Pawn && role != Role::King {
                candidates.extend(pos.san_candidates(Role::Pawn, to));
            }
            candidates.into_iter().find(matches).or_else(castling)
        }
        3 => pos
            .en_passant_moves()
            .into_iter()
            .find(matches)
            .or_else(castling),
        _ => castling(),
    }
}

/// Result of looking for a two-ply explanation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TwoPly {
    None,
    One(Move, Move),
    /// Several sequences give the same board: nothing may be guessed.
    Ambiguous,
}

/// The pairs (m1 by the side to move, m2 by the reply) leading from `pos` to `target`,
/// skipping `m1 == exclude`.
pub(crate) fn find_two_ply(pos: &Chess, target: &Board, exclude: Option<Move>) -> TwoPly {
    let cur = pos.board();
    let d = diff(cur, target);
    if d.count() < 2 {
        return TwoPly::None;
    }
    let us: Color = pos.turn();
    // m1 empties a square of ours (the reply may land on it, but never with our piece);
    // m2 empties a square of theirs that was theirs before m1 too.
    let our_origins = d & cur.by_color(us) & !target.by_color(us);
    let their_origins = d & cur.by_color(!us) & !target.occupied();
    if our_origins.is_empty() || their_origins.is_empty() {
        return TwoPly::None;
    }
    // Each side loses at most one piece per ply and gains none.
    let lost_ours = cur.by_color(us).count() as i64 - target.by_color(us).count() as i64;
    let lost_theirs = cur.by_color(!us).count() as i64 - target.by_color(!us).count() as i64;
    if !(0..=1).contains(&lost_ours) || !(0..=1).contains(&lost_theirs) {
        return TwoPly::None;
    }
    let mut found = None;
    for m1 in pos.legal_moves() {
        if Some(m1) == exclude || !first_square(m1).is_some_and(|sq| our_origins.contains(sq)) {
            continue;
        }
        let p1 = after(pos, m1);
        if let Some(m2) = find_move(&p1, target) {
            if found.is_some() {
                return TwoPly::Ambiguous;
            }
            found = Some((m1, m2));
        }
    }
    match found {
        Some((a, b)) => TwoPly::One(a, b),
        None => TwoPly::None,
    }
}

/// The square a move lifts its (first) piece from.
fn first_square(m: Move) -> Option<shakmaty::Square> {
    match m {
        Move::Castle { king, .. } => Some(king),
        other => other.from(),
    }
}
