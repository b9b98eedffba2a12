//! "Cannot checkmate by any possible series of legal moves" (Laws 5.2.2, 6.9, 7.5.5, 5.1.2).
//!
//! Decided by the Chess Unwinnability Analyzer (`chasolver`), which works on the `chess`
//! crate's board; positions are handed over as FEN. Two strengths are offered:
//!
//! * [`is_dead_fast`]: the analyser's fast, sound but incomplete check for both colours, cheap
//!   enough to run after every move (dead position, 5.2.2).
//! * [`cannot_mate`]: the full helpmate search, used when a result depends on it (flag fall,
//!   a losing illegal move, a resignation). The analyser has its own node budget; when it is
//!   exhausted the answer is "can mate", as the Laws give the benefit to the side that did not
//!   run out of time, and so do other implementations.
//!
//! Neither is the material-only rule of other libraries, which misses blocked positions and
//! calls some real checkmates insufficient (two same-coloured bishops, rules.md §5 B1).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::str::FromStr;

use shakmaty::fen::Fen;
use shakmaty::{Chess, Color, EnPassantMode, Position};

/// The full search's verdict, with "budget exhausted" kept apart so callers and tests can
/// count it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// A helpmate exists: `color` can still checkmate.
    CanMate,
    /// Proven: no sequence of legal moves ends with `color` checkmating.
    CannotMate,
    /// The analyser hit its node budget (or could not read the position): treated as
    /// [`Verdict::CanMate`] by [`cannot_mate`].
    Unknown,
}

fn to_chess_board(pos: &Chess) -> Option<chess::Board> {
    // Legal ep mode: the `chess` crate only wants an ep square when a capture is possible.
    let fen = Fen::from_position(pos, EnPassantMode::Legal).to_string();
    // Its FEN reader is third-party code too: a panic there means "cannot tell".
    catch_unwind(|| chess::Board::from_str(&fen).ok())
        .ok()
        .flatten()
}

fn to_chess_color(c: Color) -> chess::Color {
    match c {
        Color::White => chess::Color::White,
        Color::Black => chess::Color::Black,
    }
}

/// Full analysis of whether `color` can still deliver checkmate in `pos`.
pub fn winnability(pos: &Chess, color: Color) -> Verdict {
    // A lone king never mates; skip the conversion for the commonest flag-fall case.
    if pos.board().by_color(color).count() == 1 {
        return Verdict::CannotMate;
    }
    let Some(board) = to_chess_board(pos) else {
        return Verdict::Unknown;
    };
    // The analyser is third-party search code fed with arbitrary set-up positions; a panic
    // in it must not take the daemon down, and "unknown" is the safe answer.
    let result = catch_unwind(AssertUnwindSafe(|| {
        chasolver::winnability(&board, to_chess_color(color))
    }));
    match result {
        Ok(Some(chasolver::Winnability::Unwinnable)) => Verdict::CannotMate,
        Ok(Some(chasolver::Winnability::Winnable { .. })) => Verdict::CanMate,
        Ok(None) | Err(_) => Verdict::Unknown,
    }
}

/// True only when it is proven that `color` cannot checkmate in `pos` (full search; budget
/// exhausted counts as "can mate").
pub fn cannot_mate(pos: &Chess, color: Color) -> bool {
    winnability(pos, color) == Verdict::CannotMate
}

/// Fast sound check: true when it is proven cheaply that `color` cannot checkmate.
pub fn cannot_mate_fast(pos: &Chess, color: Color) -> bool {
    if pos.board().by_color(color).count() == 1 {
        return true;
    }
    let Some(board) = to_chess_board(pos) else {
        return false;
    };
    catch_unwind(AssertUnwindSafe(|| {
        chasolver::is_unwinnable_fast(&board, to_chess_color(color))
    }))
    .unwrap_or(false)
}

/// Dead position (5.2.2): neither side can checkmate, by the fast sound check. The material
/// test of `shakmaty` is tried first because it is sound for *both* sides together and costs
/// nothing.
pub fn is_dead_fast(pos: &Chess) -> bool {
    if pos.is_insufficient_material() {
        return true;
    }
    // Most positions of a real game have mating material on both sides and plenty of
    // mobility; the analyser's fast check is still cheap (about a microsecond), so it runs
    // on every move rather than guessing when it might matter.
    let Some(board) = to_chess_board(pos) else {
        return false;
    };
    catch_unwind(AssertUnwindSafe(|| {
        chasolver::is_unwinnable_fast(&board, chess::Color::White)
            && chasolver::is_unwinnable_fast(&board, chess::Color::Black)
    }))
    .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::CastlingMode;

    fn pos(fen: &str) -> Chess {
        Fen::from_ascii(fen.as_bytes())
            .expect("test FEN parses")
            .into_position(CastlingMode::Standard)
            .expect("test FEN is legal")
    }

    #[test]
    fn pawn_wall_is_dead() {
        let p = pos("2b1k3/8/8/1p1p1p1p/1P1P1P1P/8/8/2B1K3 w - - 0 1");
        assert!(is_dead_fast(&p));
    }

    #[test]
    fn lichess_pawn_wall_only_black_cannot_mate() {
        let p = pos("5b2/p7/Pp3k2/1Pp1pBp1/2P1P1P1/5K2/8/8 w - - 0 1");
        assert!(cannot_mate(&p, Color::Black));
        assert!(!cannot_mate(&p, Color::White));
        assert!(!is_dead_fast(&p));
    }

    #[test]
    fn same_coloured_bishops_can_mate_b1() {
        // Material rule says insufficient; it is actually checkmate (rules.md §5 B1).
        let p = pos("8/8/8/8/8/2b1k1b1/8/3RKR2 w - - 0 1");
        assert!(p.is_checkmate());
        assert!(!cannot_mate(&p, Color::Black));
    }

    #[test]
    fn forced_capture_lila_7039() {
        let p = pos("r7/K1k5/8/8/8/8/8/8 w - - 0 1");
        // White to move must take the rook; Black is left with a lone king.
        assert!(cannot_mate(&p, Color::Black));
    }

    #[test]
    fn misconceptions_b4_are_winnable() {
        for (fen, c) in [
            ("2b1k3/8/8/8/8/8/8/2B1K3 w - - 0 1", Color::White), // opposite bishops
            ("4k1n1/8/8/8/8/8/8/2N1K3 w - - 0 1", Color::White), // KN v KN
            ("4k2r/8/8/8/8/8/8/2N1K3 w - - 0 1", Color::White),  // KN v KR
        ] {
            assert!(!cannot_mate(&pos(fen), c), "{fen}");
        }
        // K+N against a lone queen cannot mate.
        assert!(cannot_mate(
            &pos("3qk3/8/8/8/8/8/8/2N1K3 w - - 0 1"),
            Color::White
        ));
    }
}
