//! Which moves the board shows while the hand that makes them may still be moving.
//!
//! A move is published the moment the board shows it, unless the same hand can plausibly go
//! on to a different move from the same position. Then the first reading is only a square
//! the piece passes over, and publishing it would cost a correction (retract + play) that
//! every client sees. Those moves are *held* by the tracker until the next change, the clock
//! press, the opponent's touch or a dwell ([`DWELL_MS`]).
//!
//! The continuations looked for (all moves from the same position, by the same player):
//! - a slider or pawn whose line goes on through empty squares in the same direction (a rook
//!   dragged a1-d1-e1-f1, a pawn pushed d2-d3-d4, a bishop sliding on to capture);
//! - a rook that landed on its castling square while its king and the right stand (the rook
//!   half of a rook-first castling);
//! - a king one step towards its castling square while that castling is legal (the king
//!   dragged e1-f1-g1);
//! - a piece that could be the first half of a capture in progress: the moved piece stands
//!   beside an enemy piece that it could have captured from where it came (players set the
//!   capturing piece down beside its victim, take the victim off, then move the piece on).
//!
//! Pure functions of a position and a move; no state, no clock.

use shakmaty::{Chess, Move, Position, Role};

use crate::vocab::Millis;

/// How long a held move waits, with the board unchanged, before it is published anyway.
/// Chosen from the dwell benchmark (`cargo bench --bench dwell`, figures in BENCHMARKS.md):
/// the smallest value measured that keeps corrections under 5 per 1,000 plies of the
/// generator, with the p99 latency (last sensor change to `MovePlayed`) at 250 ms. Below it
/// a hand sliding at 40-250 ms a square outruns the dwell; above it latency grows and only
/// hesitations longer than the dwell are saved.
pub const DWELL_MS: Millis = 250;

/// The moves by which the hand that made `mv` in `pos` could still be moving on (empty: the
/// move is complete as far as the board can tell). `mv` must be legal in `pos`.
pub fn continuations(pos: &Chess, mv: Move) -> Vec<Move> {
    let Move::Normal {
        role,
        from,
        to,
        capture,
        promotion: None,
    } = mv
    else {
        // Castling, en passant, promotion and drops end where they stand.
        return Vec::new();
    };
    if capture.is_some() {
        // A capture ends the line; the piece cannot pass through the victim.
        return Vec::new();
    }
    let mut out: Vec<Move> = Vec::new();
    for m in pos.legal_moves() {
        if m == mv {
            continue;
        }
        let plausible = match m {
            Move::Normal {
                role: r, from: f, ..
            } if r == role && f == from => {
                line_goes_on(role, from, to, m.to()) || capture_beside(from, to, m)
            }
            Move::Castle { king, rook } => castling_half(from, to, role, king, rook, pos),
            _ => false,
        };
        if plausible {
            out.push(m);
        }
    }
    out
}

/// Whether `mv` in `pos` may still be moving on (see [`continuations`]).
pub fn may_go_on(pos: &Chess, mv: Move) -> bool {
    !continuations(pos, mv).is_empty()
}

/// `a`, then `b` capturing `a`'s piece where it landed, with a piece that slides: the
/// squares beyond `a`'s landing square on `b`'s line where `a`'s piece could have gone
/// instead (a legal move from the same square) and `b`'s piece could then have captured it,
/// passing over that landing square on its way. If `a`'s piece was seen standing on one of
/// them, the board `a` and `b` leave is also that other move answered by a capture still on
/// its way (Bf4-e3-d2, ...Bg5 set down on e3 on its way to d2), and only the next change or
/// a still board tells which. `a` must be legal in `before`, `b` after it.
pub fn capture_passing_over(before: &Chess, a: Move, b: Move) -> Vec<shakmaty::Square> {
    let (Some(a_from), Some(b_from)) = (a.from(), b.from()) else {
        return Vec::new();
    };
    if b.to() != a.to()
        || !b.is_capture()
        || !matches!(b.role(), Role::Rook | Role::Bishop | Role::Queen)
    {
        return Vec::new();
    }
    before
        .legal_moves()
        .into_iter()
        .filter(|other| {
            other.from() == Some(a_from)
                && other.role() == a.role()
                && other.to() != a.to()
                && shakmaty::attacks::between(b_from, other.to()).contains(a.to())
        })
        .filter(|&other| {
            let mut then = before.clone();
            then.play_unchecked(other);
            then.legal_moves().into_iter().any(|reply| {
                reply.from() == Some(b_from) && reply.to() == other.to() && reply.role() == b.role()
            })
        })
        .map(|other| other.to())
        .collect()
}

/// The same piece going on from `from` over `to` to `further`, in one straight line.
fn line_goes_on(
    role: Role,
    from: shakmaty::Square,
    to: shakmaty::Square,
    further: shakmaty::Square,
) -> bool {
    matches!(role, Role::Rook | Role::Bishop | Role::Queen | Role::Pawn)
        && shakmaty::attacks::between(from, further).contains(to)
}

/// The move `from`-`to` put the piece next to a victim that `capture` takes from `from`.
fn capture_beside(from: shakmaty::Square, to: shakmaty::Square, capture: Move) -> bool {
    capture.is_capture()
        && !shakmaty::attacks::between(from, capture.to()).contains(to)
        && shakmaty::attacks::king_attacks(to).contains(capture.to())
}

/// The move `from`-`to` (a rook to its castling square, or the king one step towards its
/// own) is the first half of the legal castling `king`/`rook`.
fn castling_half(
    from: shakmaty::Square,
    to: shakmaty::Square,
    role: Role,
    king: shakmaty::Square,
    rook: shakmaty::Square,
    pos: &Chess,
) -> bool {
    let side = if rook.file() > king.file() {
        shakmaty::CastlingSide::KingSide
    } else {
        shakmaty::CastlingSide::QueenSide
    };
    let turn = pos.turn();
    match role {
        Role::Rook => from == rook && to == side.rook_to(turn),
        Role::King => {
            let king_to = side.king_to(turn);
            from == king
                && shakmaty::attacks::king_attacks(king).contains(to)
                && to.rank() == king.rank()
                && (shakmaty::attacks::between(king, king_to).contains(to) || to == king_to)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tracker::test_position as pos;
    use shakmaty::uci::UciMove;

    fn goes_on(fen: &str, uci: &str) -> bool {
        let p = pos(fen);
        let m = UciMove::from_ascii(uci.as_bytes())
            .unwrap()
            .to_move(&p)
            .unwrap();
        may_go_on(&p, m)
    }

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    const CASTLE: &str = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1";

    #[test]
    fn pawn_single_step_from_its_start_rank_may_go_on() {
        assert!(goes_on(START, "e2e3"));
        assert!(!goes_on(START, "e2e4"));
        assert!(!goes_on("4k3/8/8/8/8/4P3/8/4K3 w - - 0 1", "e3e4"));
    }

    #[test]
    fn slider_with_empty_squares_ahead_may_go_on_and_one_at_the_end_does_not() {
        let fen = "4k3/8/8/8/8/8/8/R3K3 w Q - 0 1";
        assert!(goes_on(fen, "a1a4"));
        assert!(!goes_on(fen, "a1a8"), "the line ends at the board edge");
        // Ending next to a piece of one's own: nowhere further to go.
        assert!(!goes_on("4k3/8/8/8/8/8/8/R2NK3 w - - 0 1", "a1c1"));
        // Going on to capture.
        assert!(goes_on("4k3/8/8/8/8/8/8/R2nK3 w - - 0 1", "a1c1"));
        // Knights and captures end where they stand.
        assert!(!goes_on(START, "g1f3"));
    }

    #[test]
    fn castling_halves_may_go_on() {
        assert!(goes_on(CASTLE, "h1f1"), "rook on its castling square");
        assert!(
            goes_on(CASTLE, "a1d1"),
            "queenside rook on its castling square"
        );
        assert!(goes_on(CASTLE, "e1f1"), "king one step towards g1");
        assert!(goes_on(CASTLE, "e1d1"), "king one step towards c1");
        // Without the right, Rf1 and Kf1 are complete moves.
        let no_rights = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w - - 0 1";
        assert!(!goes_on(no_rights, "h1f1"));
        assert!(!goes_on(no_rights, "e1f1"));
        // Rook h1-g1 is not on its castling square (the line h1-g1-f1 goes on, though).
        assert!(goes_on(CASTLE, "h1g1"));
        assert!(!goes_on(
            "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3KB1R w KQkq - 0 1",
            "h1g1"
        ));
    }

    #[test]
    fn a_slider_capturing_a_piece_that_just_moved_may_be_passing_over_its_square() {
        let mv = |p: &Chess, uci: &str| {
            UciMove::from_ascii(uci.as_bytes())
                .unwrap()
                .to_move(p)
                .unwrap()
        };
        let beyond = |fen: &str, a: &str, b: &str| {
            let p = pos(fen);
            let a = mv(&p, a);
            let mut then = p.clone();
            then.play_unchecked(a);
            let mut squares = capture_passing_over(&p, a, mv(&then, b));
            squares.sort();
            squares
        };
        // Bf4-d2 or Bf4-c1 instead, taken there by the bishop passing over e3.
        assert_eq!(
            beyond("6k1/8/8/6b1/5B2/8/8/7K w - - 0 1", "f4e3", "g5e3"),
            [shakmaty::Square::C1, shakmaty::Square::D2]
        );
        // A knight passes over nothing.
        assert!(beyond("6k1/8/8/8/5B2/8/2n5/7K w - - 0 1", "f4e3", "c2e3").is_empty());
        // The bishop could not have gone on beyond e3 (its own pawn on d2).
        assert!(beyond("6k1/8/8/6b1/5B2/8/3P4/7K w - - 0 1", "f4e3", "g5e3").is_empty());
        // Beyond on the capturer's line, but the moved piece could not have gone there.
        assert!(beyond("6k1/8/8/7b/8/8/8/4N2K w - - 0 1", "e1f3", "h5f3").is_empty());
    }

    #[test]
    fn piece_beside_a_victim_it_could_take_may_go_on() {
        // Knight g1-e2 stands beside d4? No: e2 touches d3, not d4. Knight to f3 touches e4
        // where a black pawn stands that g1 cannot reach: no.
        assert!(!goes_on("4k3/8/8/8/4p3/8/8/4K1N1 w - - 0 1", "g1f3"));
        // Knight g1-e2 beside f3... a knight from g1 takes on f3: set down on e2 first.
        assert!(goes_on("4k3/8/8/8/8/5p2/8/4K1N1 w - - 0 1", "g1e2"));
    }
}
