//! Reading a board against a position: which way round it stands, whether it shows a move
//! begun or one that follows, and which of the search's sequences pass through the board
//! first read after a gap. Questions only; the machine (`machine.rs`) acts on the answers.

use shakmaty::{Board, Chess, Color, Move, Position};

use super::Host;
use crate::board::{Orientation, Placement};
use crate::board_input::SquareContent;
use crate::tracker::sequences as search;

/// The board's way round as the tracker knows it (normal until learnt).
pub(super) fn orientation(h: &dyn Host) -> Orientation {
    h.tracker().orientation().unwrap_or(Orientation::Normal)
}

/// The board `fields` (wire order) show, read the board's way round.
pub(super) fn board_of(h: &dyn Host, fields: &[SquareContent; 64]) -> Board {
    Placement::from_wire(fields, orientation(h)).to_board()
}

/// The first whole board after a gap, `board` read the normal way round: when the tracker
/// has not learnt the board's way round yet (a restarted daemon), the reading closer to the
/// known position is it (a gap moves a few pieces, turning it moves them all); learnt here.
/// Returns the board read the learnt way round.
pub(super) fn learn_orientation(h: &mut dyn Host, mut board: Board) -> Board {
    if h.tracker().orientation().is_some() {
        return board;
    }
    let known = h.tracker().position().board().clone();
    let mut turned = board.clone();
    turned.rotate_180();
    let off = |b: &Board| crate::tracker::search_diff(b, &known).count();
    // Pawns only go forward: a long gap (a dozen bullet plies while the daemon was
    // down) can leave the turned reading closer, never with its pawns going forward.
    let forward = (
        pawns_forward(&known, &turned),
        pawns_forward(&known, &board),
    );
    let reversed = match forward {
        (true, false) => true,
        (false, true) => false,
        _ => off(&turned) < off(&board),
    };
    if reversed {
        h.tracker_mut().learn_orientation(Orientation::Reversed);
        board = turned;
    } else {
        h.tracker_mut().learn_orientation(Orientation::Normal);
    }
    board
}

/// `board` is a start position, either way round.
pub(super) fn is_start(board: &Board) -> bool {
    Placement::from_board(board).is_start() || {
        let mut turned = board.clone();
        turned.rotate_180();
        Placement::from_board(&turned).is_start()
    }
}

/// Whether `board` is `from` itself or `from` with the pieces of one legal move lifted
/// (one piece, a capture's two, castling's): the next move begun, nothing more.
pub(super) fn one_move_begun(from: &Chess, board: &Board) -> bool {
    if from.board() == board {
        return true;
    }
    if !lifted_only(from.board(), board) {
        return false;
    }
    let lifted = from.board().occupied() & !board.occupied();
    lifted.count() <= 1
        || from.legal_moves().iter().any(|m| {
            let mut touched = shakmaty::Bitboard::EMPTY;
            touched.add(m.from().unwrap_or(m.to()));
            touched.add(m.to());
            if let Move::EnPassant { from, to } = m {
                touched.add(shakmaty::Square::from_coords(to.file(), from.rank()));
            }
            (lifted & !touched).is_empty()
        })
}

/// Whether `board` can follow from `from`: the same (or a move in progress), or reached by
/// a legal sequence the search finds (or cannot rule out).
pub(super) fn board_follows(from: &Chess, board: &Board) -> bool {
    lifted_only(from.board(), board)
        || !matches!(
            search::explain(from, board, None),
            search::Outcome::Unreachable
        )
}

/// `board` is `known` or `known` with pieces lifted: at most a move in progress.
pub(super) fn lifted_only(known: &Board, board: &Board) -> bool {
    (board.occupied() & !known.occupied()).is_empty()
        && board
            .occupied()
            .into_iter()
            .all(|sq| board.piece_at(sq) == known.piece_at(sq))
}

/// Of several sequences to the board, only those that pass through the first whole board
/// read after the gap are the game: that board stood on the table. Plies made after it
/// (play resumed the moment the board was back: Bc4 while unplugged, then Nf6 Nc3) would
/// otherwise leave transpositions (Nc3 Nf6 Bc4) no later reading can rule out. Nothing
/// changes when the search kept only some of its sequences, or when none passes through
/// (the first board was read in the middle of a move).
pub(super) fn through_first_read(
    from: &Chess,
    first: &Board,
    board: &Board,
    outcome: search::Outcome,
) -> search::Outcome {
    let search::Outcome::Several { sequences, total } = outcome else {
        return outcome;
    };
    if first == board || first == from.board() || total != sequences.len() as u64 {
        return search::Outcome::Several { sequences, total };
    }
    let passes = |moves: &[Move]| {
        let mut pos = from.clone();
        moves.iter().any(|&m| {
            pos.play_unchecked(m);
            pos.board() == first
        })
    };
    let mut through: Vec<Vec<Move>> = sequences.iter().filter(|s| passes(s)).cloned().collect();
    match through.len() {
        0 => search::Outcome::Several { sequences, total },
        1 => search::Outcome::Unique(through.remove(0)),
        n => search::Outcome::Several {
            sequences: through,
            total: n as u64,
        },
    }
}

/// Whether the pawns of `board` can have come from those of `known`: each from its own pawn
/// of that side, ahead of it, a file aside per rank at most, and every file changed a capture
/// of one of the other side's pieces (which the board must be short of). A reading turned the
/// wrong way round mirrors the files too (a2 reads as h7), which takes captures nobody made.
pub(super) fn pawns_forward(known: &Board, board: &Board) -> bool {
    Color::ALL.into_iter().all(|color| {
        let pawn = shakmaty::Role::Pawn.of(color);
        let before: Vec<shakmaty::Square> = known.by_piece(pawn).into_iter().collect();
        let after: Vec<shakmaty::Square> = board.by_piece(pawn).into_iter().collect();
        let captured = known
            .by_color(!color)
            .count()
            .saturating_sub(board.by_color(!color).count());
        // The file changes of a pawn from `p` to `sq`, or `None` when it cannot get there.
        let shift = |p: shakmaty::Square, sq: shakmaty::Square| {
            let ahead = match color {
                Color::White => i32::from(sq.rank()) - i32::from(p.rank()),
                Color::Black => i32::from(p.rank()) - i32::from(sq.rank()),
            };
            let files = (i32::from(sq.file()) - i32::from(p.file())).abs();
            (ahead >= 0 && files <= ahead).then_some(files as usize)
        };
        // The fewest file changes that take distinct pawns of `known` (a bit set, at most
        // eight) to every pawn of `board`: a small assignment, by subsets.
        let unreachable = usize::MAX / 2;
        let mut best = vec![unreachable; 1 << before.len()];
        best[0] = 0;
        for (k, &sq) in after.iter().enumerate() {
            let mut next = vec![unreachable; best.len()];
            for used in 0..best.len() {
                if best[used] >= unreachable || (used as u32).count_ones() as usize != k {
                    continue;
                }
                for (j, &p) in before.iter().enumerate() {
                    if used & (1 << j) == 0
                        && let Some(files) = shift(p, sq)
                    {
                        let slot = &mut next[used | (1 << j)];
                        *slot = (*slot).min(best[used] + files);
                    }
                }
            }
            best = next;
        }
        best.iter().any(|&cost| cost <= captured)
    })
}

#[cfg(test)]
mod tests {
    use super::pawns_forward;
    use shakmaty::Board;

    fn board(fen: &str) -> Board {
        fen.parse().expect("board FEN")
    }

    #[test]
    fn the_turned_reading_of_a_board_with_pawns_on_one_wing_is_told_apart() {
        // Kings and pawns on the queenside; a3 played since.
        let known = board("4k3/pp6/8/8/8/8/PP6/4K3");
        let now = board("4k3/pp6/8/8/8/P7/1P6/4K3");
        let mut turned = now.clone();
        turned.rotate_180();
        assert!(pawns_forward(&known, &now));
        // Turned, the pawns stand on the kingside: files no capture changed.
        assert!(!pawns_forward(&known, &turned));
    }

    #[test]
    fn a_pawn_that_changed_file_needs_a_capture_the_board_shows() {
        let known = board("4k3/8/3n4/8/4P3/8/8/4K3");
        // exd5 took the knight: one file, one piece fewer.
        assert!(pawns_forward(&known, &board("4k3/8/8/3P4/8/8/8/4K3")));
        // The same file change with the knight still there: no capture made it.
        assert!(!pawns_forward(&known, &board("4k3/8/3n4/3P4/8/8/8/4K3")));
    }
}
