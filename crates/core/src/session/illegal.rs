//! A completed illegal move that stands (the opponent pressed with it on the board): the game
//! goes on from the position it left, in a new segment of the record.

use super::*;

impl Session {
    /// The opponent pressed while the completed illegal move still stood on the board: he
    /// moved on without claiming (A.5.2). Play continues from the board as it stands.
    pub(super) fn illegal_move_stands(&mut self, now: Millis, out: &mut Vec<Event>) {
        let Some((offender, description)) = self.standing_illegal.take() else {
            return;
        };
        if self.tracker.in_sync() || self.arbiter.is_finished() {
            return;
        }
        // The game goes on from the position the illegal move left, the opponent to move,
        // and his reply (what the board shows now) is the continuation's first move. Only
        // when no single move explains the board is it taken as it stands, offender to move.
        if let Some(board) = self.illegal_board.take()
            && self.continue_after_illegal(board, offender, &description, now, out)
        {
            return;
        }
        match self.tracker.adopt_placement(offender) {
            Ok(tracked) => {
                let ruled = self
                    .arbiter
                    .illegal_move_stands(self.tracker.position().clone(), &description);
                // No GameStarted: the game goes on (ply numbers and `Moves` continue); the
                // record opens a new segment from the board's position (see crate::game).
                self.apply_arbiter(ruled, out);
                // The tracker's own reports about the adoption (in sync again) need no relay.
                drop(tracked);
            }
            Err(e) => {
                self.report(Fact::IllegalMoveUnreadable {
                    error: e.to_string(),
                });
            }
        }
    }

    /// The illegal move stands: open the continuation from `board` (what the illegal move
    /// left) with the opponent of `offender` to move, then play his reply the board shows.
    /// Returns false, changing nothing, when the board is not that position plus one legal
    /// move.
    pub(super) fn continue_after_illegal(
        &mut self,
        board: shakmaty::Board,
        offender: Color,
        description: &str,
        now: Millis,
        out: &mut Vec<Event>,
    ) -> bool {
        let mut trial = self.tracker.clone();
        if trial.adopt_board(board, !offender).is_err() {
            return false;
        }
        let Some(reply) = trial.move_shown() else {
            return false;
        };
        self.tracker = trial;
        let ruled = self
            .arbiter
            .illegal_move_stands(self.tracker.position().clone(), description);
        self.apply_arbiter(ruled, out);
        let tracked = self.tracker.play_shown(reply);
        self.apply_tracker(tracked, now, out);
        true
    }
}
