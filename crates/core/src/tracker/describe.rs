//! Human-readable descriptions of placements no legal move explains, for arbiters:
//! "Bf1–h3 is blocked by g2", "white king left in check", "black moved out of turn: …".

use shakmaty::{Bitboard, Board, CastlingSide, Chess, Color, Piece, Position, Role, Square};

use super::search::diff;

/// Describe why `target` is not reachable from `pos` by a legal move.
pub(crate) fn describe(pos: &Chess, target: &Board) -> String {
    let cur = pos.board();
    let us = pos.turn();
    if let Some(text) = single_move(pos, target, us) {
        return text;
    }
    if let Some(text) = castling_shape(pos, target) {
        return text;
    }
    if let Some((from, to, piece)) = one_piece_moved(cur, target, !us) {
        return format!(
            "{} moved out of turn: {}",
            color_name(!us),
            move_text(piece, from, to)
        );
    }
    let mut parts = Vec::new();
    for sq in diff(cur, target) {
        let text = match (cur.piece_at(sq), target.piece_at(sq)) {
            (Some(was), None) => format!("{} missing from {sq}", piece_name(was)),
            (None, Some(now)) => format!("extra {} on {sq}", piece_name(now)),
            (Some(was), Some(now)) => {
                format!("{} on {sq} instead of {}", piece_name(now), piece_name(was))
            }
            (None, None) => continue,
        };
        parts.push(text);
    }
    if parts.len() > 6 {
        let more = parts.len() - 6;
        parts.truncate(6);
        parts.push(format!("{more} more squares differ"));
    }
    format!("board differs from the game: {}", parts.join("; "))
}

/// If exactly one of `color`'s pieces went from one square to another (capturing at most one
/// opposing piece on arrival), which.
fn one_piece_moved(cur: &Board, target: &Board, color: Color) -> Option<(Square, Square, Piece)> {
    let d = diff(cur, target);
    let left = d & cur.by_color(color);
    let arrived = d & target.by_color(color);
    if left.count() != 1 || arrived.count() != 1 {
        return None;
    }
    let from = left.first()?;
    let to = arrived.first()?;
    // Everything else that changed must be an opposing piece removed from `to`.
    if (d & !Bitboard::from(from) & !Bitboard::from(to)).any() {
        return None;
    }
    if target.piece_at(from).is_some() {
        return None;
    }
    Some((from, to, cur.piece_at(from)?))
}

/// Explain a single-piece move attempt by the side to move.
fn single_move(pos: &Chess, target: &Board, us: Color) -> Option<String> {
    let cur = pos.board();
    let (from, to, piece) = one_piece_moved(cur, target, us)?;
    let landed = target.piece_at(to)?;
    let text = move_text(piece, from, to);
    let captured = cur.piece_at(to);
    if captured.is_some_and(|p| p.role == Role::King) {
        return Some(format!("{text} captures the {} king", color_name(!us)));
    }
    let last_rank = to.rank() == us.fold_wb(shakmaty::Rank::Eighth, shakmaty::Rank::First);
    if piece.role == Role::Pawn && last_rank && landed.role == Role::Pawn {
        return Some(format!("{text}: the pawn must be promoted"));
    }
    if landed.role != piece.role && !(piece.role == Role::Pawn && last_rank) {
        return Some(format!(
            "{text} turned a {} into a {}",
            role_name(piece.role),
            role_name(landed.role)
        ));
    }
    if landed.role == Role::King && piece.role == Role::Pawn {
        return Some(format!("{text}: a pawn cannot promote to a king"));
    }
    let occupied = cur.occupied();
    let shape_ok = match piece.role {
        Role::Pawn => pawn_reason(pos, from, to, captured.is_some()),
        Role::King if from.distance(to) == 2 && from.rank() == to.rank() => {
            return Some(castling_reason(pos, from, to));
        }
        role => {
            let empty_attacks = shakmaty::attacks::attacks(from, role.of(us), Bitboard::EMPTY);
            if !empty_attacks.contains(to) {
                Err(format!("{text} is not a {} move", role_name(role)))
            } else {
                Ok(())
            }
        }
    };
    if let Err(reason) = shape_ok {
        return Some(reason);
    }
    let blockers = shakmaty::attacks::between(from, to) & occupied;
    if let Some(block) = blockers.into_iter().min_by_key(|sq| sq.distance(from)) {
        return Some(format!("{text} is blocked by {block}"));
    }
    // Geometrically fine: the move is illegal because of the king.
    Some(format!("{text}: {} king left in check", color_name(us)))
}

/// Why a pawn's move is not possible by its shape, if it is not.
fn pawn_reason(pos: &Chess, from: Square, to: Square, captures: bool) -> Result<(), String> {
    let us = pos.turn();
    let text = move_text(Role::Pawn.of(us), from, to);
    let forward = us.fold_wb(1i32, -1i32);
    let dr = to.rank() as i32 - from.rank() as i32;
    let df = (to.file() as i32 - from.file() as i32).abs();
    let home = us.fold_wb(shakmaty::Rank::Second, shakmaty::Rank::Seventh);
    if df == 0 && (dr == forward || (dr == 2 * forward && from.rank() == home)) {
        if captures {
            return Err(format!("{text}: a pawn cannot capture straight ahead"));
        }
        return Ok(());
    }
    if df == 1 && dr == forward {
        if !captures && pos.maybe_ep_square() != Some(to) {
            return Err(format!("{text}: a pawn moves diagonally only to capture"));
        }
        return Ok(());
    }
    Err(format!("{text} is not a pawn move"))
}

/// A castling made on the board (king and rook both on their castled squares, nothing else
/// changed) that is not legal: why.
fn castling_shape(pos: &Chess, target: &Board) -> Option<String> {
    let us = pos.turn();
    let cur = pos.board();
    let king = cur.king_of(us)?;
    CastlingSide::ALL.into_iter().find_map(|side| {
        let rook = pos.castles().rook(us, side)?;
        let mut castled = cur.clone();
        castled.discard_piece_at(king);
        castled.discard_piece_at(rook);
        castled.set_piece_at(side.king_to(us), Role::King.of(us));
        castled.set_piece_at(side.rook_to(us), Role::Rook.of(us));
        (castled == *target).then(|| castling_reason(pos, king, side.king_to(us)))
    })
}

fn castling_reason(pos: &Chess, from: Square, to: Square) -> String {
    let us = pos.turn();
    let side = if to > from {
        CastlingSide::KingSide
    } else {
        CastlingSide::QueenSide
    };
    let name = if side.is_king_side() { "O-O" } else { "O-O-O" };
    if !pos.castles().has(us, side) {
        return format!("{name} is not allowed: the king or rook has moved");
    }
    if !pos.castling_moves(side).is_empty() {
        return format!("{name}: the rook has not been moved yet");
    }
    if pos.is_check() {
        return format!("{name} is not allowed: the king is in check");
    }
    let path = shakmaty::attacks::between(from, pos.castles().rook(us, side).unwrap_or(to));
    if (path & pos.board().occupied()).any() {
        return format!("{name} is not allowed: pieces stand between king and rook");
    }
    format!("{name} is not allowed: the king passes through or lands on an attacked square")
}

fn move_text(piece: Piece, from: Square, to: Square) -> String {
    let letter = if piece.role == Role::Pawn {
        String::new()
    } else {
        piece.role.upper_char().to_string()
    };
    format!("{letter}{from}\u{2013}{to}")
}

pub(crate) fn color_name(c: Color) -> &'static str {
    c.fold_wb("white", "black")
}

fn role_name(r: Role) -> &'static str {
    match r {
        Role::Pawn => "pawn",
        Role::Knight => "knight",
        Role::Bishop => "bishop",
        Role::Rook => "rook",
        Role::Queen => "queen",
        Role::King => "king",
    }
}

fn piece_name(p: Piece) -> String {
    format!("{} {}", color_name(p.color), role_name(p.role))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tracker::test_position as pos;
    use shakmaty::Square::*;

    fn moved(p: &Chess, from: Square, to: Square) -> Board {
        let mut b = p.board().clone();
        let piece = b.remove_piece_at(from).unwrap();
        b.set_piece_at(to, piece);
        b
    }

    #[test]
    fn blocked_slider() {
        let p = Chess::default();
        assert_eq!(
            describe(&p, &moved(&p, F1, H3)),
            "Bf1\u{2013}h3 is blocked by g2"
        );
        assert_eq!(
            describe(&p, &moved(&p, A1, A3)),
            "Ra1\u{2013}a3 is blocked by a2"
        );
    }

    #[test]
    fn king_left_in_check() {
        let p = pos("4k3/8/8/8/8/8/4r3/4K3 w - - 0 1");
        assert_eq!(
            describe(&p, &moved(&p, E1, D2)),
            "Ke1\u{2013}d2: white king left in check"
        );
        let p = pos("4k3/4r3/8/8/8/8/4B3/4K3 w - - 0 1");
        assert_eq!(
            describe(&p, &moved(&p, E2, D3)),
            "Be2\u{2013}d3: white king left in check"
        );
    }

    #[test]
    fn castling_made_through_check() {
        let p = pos("5r1k/7p/8/8/8/8/8/4K2R w K - 0 1");
        let mut b = moved(&p, E1, G1);
        b.discard_piece_at(H1);
        b.set_piece_at(F1, Piece::from_char('R').unwrap());
        assert_eq!(
            describe(&p, &b),
            "O-O is not allowed: the king passes through or lands on an attacked square"
        );
    }

    #[test]
    fn wrong_shapes_and_turns() {
        let p = Chess::default();
        assert_eq!(
            describe(&p, &moved(&p, B1, B3)),
            "Nb1\u{2013}b3 is not a knight move"
        );
        assert_eq!(
            describe(&p, &moved(&p, E2, E5)),
            "e2\u{2013}e5 is not a pawn move"
        );
        assert_eq!(
            describe(&p, &moved(&p, G8, F6)),
            "black moved out of turn: Ng8\u{2013}f6"
        );
        let mut b = p.board().clone();
        b.set_piece_at(E4, Piece::from_char('N').unwrap());
        assert_eq!(
            describe(&p, &b),
            "board differs from the game: extra white knight on e4"
        );
    }
}
