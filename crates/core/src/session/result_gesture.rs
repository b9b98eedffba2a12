//! The DGT result gesture (both kings on the centre squares) as the session decides it: the
//! first half kept out of the broadcast outputs while it may be one, the result once it has
//! stood for [`crate::tracker::gesture::GESTURE_HOLD_MS`].

use super::*;

impl Session {
    /// What the board shows by the result gesture, if anything: the result, and whether the
    /// record's last move is the gesture's first king move (legal, so it was played).
    pub(super) fn gesture_on_board(&self) -> Option<(GameResult, bool)> {
        let sensed = self.tracker.placement().to_board();
        // The last move a king's step onto a centre square: the gesture's first half, which
        // leaves the record (checked first, as the board after it matches too).
        // Only while the step is not final (see `gesture_first`): after a press it is a move
        // like any other, and a gesture then ends the game after it.
        let first_half = || {
            self.gesture_first.as_ref()?;
            let before = self.arbiter.previous_position()?;
            let last = self.arbiter.game().current_moves().last()?;
            let mv: shakmaty::uci::UciMove = last.uci.parse().ok()?;
            let mv = mv.to_move(before).ok()?;
            if !gesture::is_king_to_centre(mv.role(), mv.to()) || mv.is_capture() {
                return None;
            }
            gesture::gesture_result(&sensed, before.board())
        };
        if let Some(r) = first_half() {
            return Some((r, true));
        }
        gesture::gesture_result(&sensed, self.arbiter.position().board()).map(|r| (r, false))
    }

    /// Follow the record's last move while it may be the gesture's first half: it stays
    /// pending until a press (see [`Session::on_clock`]), a later move, or the other king
    /// standing away from the centre for the gesture window.
    pub(super) fn watch_gesture_first(&mut self, now: Millis) {
        // Nothing to watch on almost every input: no board copied for it.
        if self.gesture_first.is_none() {
            return;
        }
        let ply = self.arbiter.game().ply_count();
        let other = self.arbiter.position().turn();
        let sensed = self.tracker.placement().to_board();
        if let Some(first) = self.gesture_first.as_mut()
            && (self.arbiter.is_finished() || !first.still_open(ply, &sensed, other, now))
        {
            self.gesture_first = None;
        }
    }

    /// The result gesture: decided once both kings have stood on the centre squares for
    /// [`gesture::GESTURE_HOLD_MS`]; a first king move that entered the record is retracted
    /// (the PGN ends at the position before the gesture).
    pub(super) fn check_gesture(&mut self, now: Millis, out: &mut Vec<Event>) {
        if !self.started || self.arbiter.is_finished() {
            self.gesture = None;
            return;
        }
        let Some((result, retract)) = self.gesture_on_board() else {
            self.gesture = None;
            return;
        };
        let since = match self.gesture {
            Some((t, r)) if r == result => t,
            _ => {
                self.gesture = Some((now, result));
                now
            }
        };
        if now.saturating_sub(since) < gesture::GESTURE_HOLD_MS {
            return;
        }
        self.gesture = None;
        if retract {
            let ply = self.arbiter.game().ply_count();
            let ruled = self.arbiter.on_retract(now);
            out.push(Event::MoveRetracted {
                ply: ply as u32,
                fen: self.arbiter.fen(),
            });
            self.apply_arbiter(ruled, out);
        }
        if self.tracker.position() != self.arbiter.position() {
            let _ = self.tracker.set_position(self.arbiter.position().clone());
        }
        let ruled = self.arbiter.result_gesture(result);
        self.apply_arbiter(ruled, out);
    }
}
