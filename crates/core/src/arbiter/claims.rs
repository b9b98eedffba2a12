//! Position-based draw claims and automatic draws: repetition (9.2, 9.6.1) and the
//! fifty/seventy-five move rules (9.3, 9.6.2).
//!
//! Repetition identity is FIDE's (9.2.3): placement, side to move, castling *rights*, and the
//! en passant square only when an en passant capture is legal — exactly what shakmaty's
//! `zobrist_hash(EnPassantMode::Legal)` hashes (the other modes miscount a pinned ep pawn).
//! The history starts with the start or set-up position and is popped on a takeback.

use shakmaty::zobrist::Zobrist64;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Move, Position};

/// FIDE repetition key of a position.
pub fn key(pos: &Chess) -> u64 {
    pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0
}

/// The keys of every position that stood with a player to move, oldest first; the last one
/// is the current position.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct History {
    keys: Vec<u64>,
}

impl History {
    /// A history holding only the start (or set-up) position.
    pub fn new(start: &Chess) -> Self {
        History {
            keys: vec![key(start)],
        }
    }

    pub fn push(&mut self, pos: &Chess) {
        self.keys.push(key(pos));
    }

    /// Removes the current position (takeback). The start position is never removed.
    pub fn pop(&mut self) {
        if self.keys.len() > 1 {
            self.keys.pop();
        }
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Occurrences of `k` among the last `window` positions. Positions before the last
    /// capture or pawn move cannot repeat (those moves are irreversible), so callers pass
    /// the halfmove clock + 1 to keep the scan short.
    fn count_recent(&self, k: u64, window: usize) -> usize {
        let start = self.keys.len().saturating_sub(window);
        self.keys[start..].iter().filter(|&&x| x == k).count()
    }

    /// Occurrences of the current position (including itself).
    pub fn current_count(&self, pos: &Chess) -> usize {
        self.count_recent(key(pos), pos.halfmoves() as usize + 1)
    }
}

/// The claims the player to move could make in a position, by the Laws alone.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PositionClaims {
    /// 9.2.2: the position has appeared at least three times.
    pub threefold_now: bool,
    /// 9.2.1: legal moves that would make the resulting position appear a third time.
    pub threefold_intended: Vec<Move>,
    /// 9.3.2: the last 50 moves of each player were quiet.
    pub fifty_now: bool,
    /// 9.3.1: legal non-zeroing moves that would complete the 50 moves — including one that
    /// mates or stalemates (python-chess refuses that, issue #1188; arbiters allow it).
    pub fifty_intended: Vec<Move>,
}

impl PositionClaims {
    pub fn is_empty(&self) -> bool {
        !self.threefold_now
            && self.threefold_intended.is_empty()
            && !self.fifty_now
            && self.fifty_intended.is_empty()
    }
}

/// Evaluates the repetition and fifty-move claims for the side to move in `pos`, whose key
/// is the last entry of `history`.
pub fn position_claims(pos: &Chess, history: &History) -> PositionClaims {
    let hmc = pos.halfmoves() as usize;
    let mut out = PositionClaims {
        threefold_now: history.count_recent(key(pos), hmc + 1) >= 3,
        fifty_now: hmc >= 100,
        ..PositionClaims::default()
    };
    // A repetition needs at least two earlier occurrences of the next position, four
    // plies apart at least; with a shorter quiet stretch no move can bring a third one.
    let repetition_possible = hmc >= 7;
    if !repetition_possible && hmc < 99 {
        return out;
    }
    for m in pos.legal_moves() {
        if m.is_zeroing() {
            // Irreversible: the resulting position is new, and it resets the 50-move count.
            continue;
        }
        if hmc >= 99 {
            out.fifty_intended.push(m);
        }
        if repetition_possible {
            let mut next = pos.clone();
            next.play_unchecked(m);
            // Positions before the last zeroing move cannot equal `next`; hmc + 1 entries
            // cover everything since then (the current one included).
            if history.count_recent(key(&next), hmc + 1) >= 2 {
                out.threefold_intended.push(m);
            }
        }
    }
    out
}

/// UCI text of a move as the contract's claim details use it (`e1g1` for castling).
pub fn uci(m: Move) -> String {
    m.to_uci(CastlingMode::Standard).to_string()
}

/// UCI of `m` in `pos`'s castling convention: king-takes-own-rook in Chess960 (the
/// UCI_Chess960 convention), king-two-squares otherwise.
pub fn uci_in(pos: &Chess, m: Move) -> String {
    m.to_uci(pos.castles().mode()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;
    use shakmaty::uci::UciMove;

    fn play_line(start: Chess, ucis: &[&str]) -> (Chess, History) {
        let mut pos = start;
        let mut h = History::new(&pos);
        for u in ucis {
            let m = UciMove::from_ascii(u.as_bytes())
                .expect("uci")
                .to_move(&pos)
                .expect("legal");
            pos.play_unchecked(m);
            h.push(&pos);
        }
        (pos, h)
    }

    #[test]
    fn pinned_ep_counts_three() {
        let start: Chess =
            Fen::from_ascii(b"6k1/1p2p1rp/rP1pR3/2pP1pP1/p1P2P1P/R5K1/8/8 b - - 0 1")
                .expect("fen")
                .into_position(CastlingMode::Standard)
                .expect("legal");
        let (pos, h) = play_line(
            start,
            &[
                "h7h5", "e6h6", "g7h7", "h6e6", "h7g7", "e6h6", "g7h7", "h6e6", "h7g7",
            ],
        );
        assert!(position_claims(&pos, &h).threefold_now);
    }

    #[test]
    fn about_to_appear_only_for_the_repeating_move() {
        let (pos, h) = play_line(
            Chess::default(),
            &["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1"],
        );
        let c = position_claims(&pos, &h);
        assert!(!c.threefold_now);
        let ucis: Vec<String> = c.threefold_intended.into_iter().map(uci).collect();
        assert_eq!(ucis, vec!["f6g8".to_string()]);
    }

    #[test]
    fn takeback_pops_history() {
        let (mut pos, mut h) = play_line(
            Chess::default(),
            &[
                "g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8",
            ],
        );
        assert!(position_claims(&pos, &h).threefold_now);
        h.pop();
        let (p2, _) = play_line(
            Chess::default(),
            &["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1"],
        );
        pos = p2;
        assert!(!position_claims(&pos, &h).threefold_now);
    }
}
