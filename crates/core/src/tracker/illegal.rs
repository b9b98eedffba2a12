//! Illegal placements: what is a move in progress (pieces in hand, part of a legal move made,
//! a promotion piece not yet set down) and what has stood long enough to be reported, with
//! its description for the arbiter.

use super::*;
use shakmaty::Square;

impl Tracker {
    /// Report the standing placement as illegal if it has settled and is not a move in
    /// progress (or the clock was pressed on it).
    pub(super) fn check_illegal(&mut self, now: Millis, ev: &mut Vec<TrackerEvent>) {
        if self.in_sync || !self.have_board || self.held.is_some() || self.ambiguous.is_some() {
            return;
        }
        if now.saturating_sub(self.last_change) < ILLEGAL_SETTLE_MS || self.settled_checked {
            return;
        }
        // The press may have overtaken the update that completes the move: give the board
        // one scan to catch up before judging what it shows.
        if self
            .last_press
            .is_some_and(|p| now >= p && now - p < SCAN_LAG_MS)
        {
            return;
        }
        // The verdict on a settled placement does not change until the board or the clock does.
        self.settled_checked = true;
        if self.explain(now, true, ev) {
            self.set_sync(true, ev);
            return;
        }
        if self.held.is_some() {
            return;
        }
        // Before anyone is accused: the readings since the last final position, searched as
        // deep as a gap is.
        if self.recover(Reach::Settled, true, ev) {
            self.set_sync(true, ev);
            return;
        }
        // Legal play the readings show explains the board, in several ways: no one is
        // accused; the stories are open (the session asks the arbiter about a still board).
        if self.in_progress(now) || !self.undecided.is_empty() {
            return;
        }
        let (turn, description) = self.describe_illegal(now);
        if self.illegal.as_ref() != Some(&(turn, description.clone())) {
            self.illegal = Some((turn, description.clone()));
            ev.push(TrackerEvent::IllegalPlacement { turn, description });
        }
    }

    /// Pieces in hand: every occupied square agrees with the position, or with a legal move
    /// partly made (from the position, or from the one before a provisional move), or the
    /// board is a reply caught half-way ([`Tracker::reply_in_progress`]).
    pub(super) fn in_progress(&self, now: Millis) -> bool {
        let n = self.positions.len();
        let mut bases = vec![self.position()];
        if self.provisional_now(now) && n >= 2 {
            bases.push(&self.positions[n - 2]);
        }
        bases.into_iter().any(|base| self.partly_made(base)) || self.reply_in_progress()
    }

    /// A move the readings show being made, then the reply partly made: its victim in hand,
    /// its piece resting on the way (Bg2-d5, then ...Rd8xd5 with the bishop lifted and the
    /// rook set down on d7) is no placement to judge, nor a story of two plies to take.
    pub(super) fn reply_in_progress(&self) -> bool {
        let pos = self.position();
        self.readings.complete()
            && pos
                .legal_moves()
                .into_iter()
                .filter(|&m| self.readings.witness(pos, &[m]))
                .any(|m| self.partly_made(&after(pos, m)))
    }

    /// The board is the record's position with one or more pieces lifted and nothing else:
    /// every occupied square holds what the position has there, and a square is empty.
    pub(super) fn pieces_in_hand(&self) -> bool {
        let board = self.position().board();
        board.occupied() != self.sensed.occupied()
            && (diff(board, &self.sensed) & self.sensed.occupied()).is_empty()
    }

    /// Every occupied square agrees with `base`, or with a legal move from it partly made.
    pub(super) fn partly_made(&self, base: &Chess) -> bool {
        // The piece the last move captured, touching an empty square next to the capture on
        // its way off the board (seen in real captures), is handling too; not once a piece of
        // its side has left its square (that side's own hand is on the board: a pawn d5 set
        // back on d6 after dxe5 is no captured pawn passing by).
        let mut touched = Bitboard::EMPTY;
        let pos_board = self.position().board();
        let victims_standing = pos_board
            .by_color(self.position().turn())
            .into_iter()
            .all(|sq| self.sensed.piece_at(sq) == pos_board.piece_at(sq));
        if let Some(&last) = self.moves.last()
            && let Some(role) = last.capture()
            && victims_standing
        {
            let victim = role.of(self.position().turn());
            let near =
                shakmaty::attacks::king_attacks(last.to()) & !self.position().board().occupied();
            touched = near & self.sensed.by_piece(victim);
        }
        // Every occupied square holds what `base` or `other` has there.
        let agree = |other: &Board| {
            let off_base = diff(base.board(), &self.sensed) & self.sensed.occupied() & !touched;
            (off_base & diff(other, &self.sensed)).is_empty()
        };
        agree(base.board())
            || base.legal_moves().into_iter().any(|m| {
                // The board has settled: no scan is still on its way, so a piece of `m` set
                // down on its square has left the square it came from. One still standing
                // there means the piece set down came from elsewhere (the other bishop put
                // where this one could go): no part of `m`.
                if !self.left_where_set_down(base, m, touched) {
                    return false;
                }
                let mut made = after(base, m).board().clone();
                if m.is_promotion() {
                    // The pawn may stand on the last rank a moment before it is swapped.
                    made.set_piece_at(m.to(), shakmaty::Role::Pawn.of(base.turn()));
                    if agree(&made) {
                        return true;
                    }
                    made = after(base, m).board().clone();
                }
                agree(&made)
            })
    }

    /// Whether every piece `m` moves that stands on its new square (the king and the rook of
    /// a castling each on their own; a promotion's pawn or piece) is gone from the square it
    /// left. `touched`: squares a captured piece rests on, on its way off the board.
    fn left_where_set_down(&self, base: &Chess, m: Move, touched: Bitboard) -> bool {
        let board = base.board();
        let journeys: Vec<(Square, Square)> = match m {
            Move::Castle { king, rook } => {
                let side = m
                    .castling_side()
                    .unwrap_or(shakmaty::CastlingSide::KingSide);
                let turn = base.turn();
                vec![(king, side.king_to(turn)), (rook, side.rook_to(turn))]
            }
            Move::Put { .. } => Vec::new(),
            _ => m.from().map(|from| (from, m.to())).into_iter().collect(),
        };
        journeys.into_iter().all(|(from, to)| {
            let set_down = from != to
                && !touched.contains(to)
                && self.sensed.piece_at(to).is_some()
                && self.sensed.piece_at(to) != board.piece_at(to);
            !set_down || self.sensed.piece_at(from) != board.piece_at(from)
        })
    }

    pub(super) fn describe_illegal(&self, now: Millis) -> (Color, String) {
        let n = self.positions.len();
        let pos = self.position();
        if self.provisional_now(now) && n >= 2 {
            // The last mover is still handling pieces: describe against their position.
            let prev = &self.positions[n - 2];
            if diff(pos.board(), &self.sensed).into_iter().all(|sq| {
                self.sensed.color_at(sq) != Some(pos.turn())
                    && pos.board().color_at(sq) != Some(pos.turn())
            }) {
                return (prev.turn(), describe::describe(prev, &self.sensed));
            }
        }
        (pos.turn(), describe::describe(pos, &self.sensed))
    }
}
