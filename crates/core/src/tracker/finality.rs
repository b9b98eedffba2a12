//! When the last move is final and when a held move is published: the press window, the
//! opponent's touch, the still board, the dwell.

use super::*;

impl Tracker {
    /// Publish a held move whose dwell has run out by `now`. Called on every tick and before
    /// every change: a change that comes after the dwell finds the move published, however
    /// seldom the caller ticks (the board told it: the move stood for the whole dwell).
    /// Returns whether it published one (the board showed it until the dwell's end).
    pub(super) fn dwell_out(&mut self, now: Millis, ev: &mut Vec<TrackerEvent>) -> bool {
        let Some(h) = self
            .held
            .filter(|h| now >= h.since.saturating_add(self.dwell))
        else {
            return false;
        };
        // The hand rested long enough: publish, but an opponent's touch does not yet make it
        // final (the hand may still move on while the opponent starts his reply).
        self.held = None;
        self.play(h.mv, ev);
        self.unsettled = true;
        true
    }

    /// Make the provisional move final when its time has come: the press window closed, or
    /// the board has shown it unchanged for [`FINAL_STILL_MS`]. Called before each input is
    /// looked at, with the time of that input.
    pub(super) fn settle_final(&mut self, now: Millis) {
        if !self.provisional {
            return;
        }
        let window_closed = self.window_until.is_some_and(|t| now > t);
        let still = self.in_sync
            && self.held.is_none()
            && now.saturating_sub(self.last_change) >= FINAL_STILL_MS;
        if window_closed || still {
            self.make_final();
        }
    }

    /// The board changed only where the side to move has pieces, and none of them now holds
    /// a piece of the last mover: the opponent of the last mover has touched the board (a
    /// piece of the mover set on an opponent's square is the mover capturing).
    pub(super) fn opponent_touched(&self, shown: &Chess) -> bool {
        let changed = diff(shown.board(), &self.sensed);
        let theirs = shown.board().by_color(shown.turn());
        let mover = self.sensed.by_color(!shown.turn());
        changed.any() && (changed & !theirs).is_empty() && (changed & mover).is_empty()
    }

    /// Before a change is explained: a held move ends when the opponent touches the board
    /// (it is published; the hand may still be on its piece, so it stays correctable) and is
    /// dropped otherwise (the board is read afresh). A complete provisional move touched by
    /// the opponent is final.
    pub(super) fn end_hold_or_make_final(&mut self, ev: &mut Vec<TrackerEvent>) {
        if let Some(h) = self.held.take() {
            let shown = after(self.position(), h.mv);
            // Lifting a piece that a continuation captures is the mover's hand, not the
            // opponent's.
            let victims = hold::continuations(self.position(), h.mv)
                .into_iter()
                .filter(|m| m.is_capture())
                .fold(Bitboard::EMPTY, |b, m| b | Bitboard::from(m.to()));
            if self.opponent_touched(&shown)
                && (diff(shown.board(), &self.sensed) & victims).is_empty()
            {
                self.play(h.mv, ev);
                self.unsettled = true;
            }
            return;
        }
        if self.provisional
            && !self.unsettled
            && self.window_until.is_none()
            && self.opponent_touched(self.position())
        {
            self.make_final();
        }
    }

    /// Publish `m`, or hold it when the hand may still be moving on. Returns whether it was
    /// published.
    pub(super) fn play_or_hold(
        &mut self,
        m: Move,
        now: Millis,
        ev: &mut Vec<TrackerEvent>,
    ) -> bool {
        if self.dwell > 0 && hold::may_go_on(self.position(), m) {
            self.held = Some(Held { mv: m, since: now });
            false
        } else {
            self.play(m, ev);
            true
        }
    }

    pub(super) fn provisional_now(&self, now: Millis) -> bool {
        self.provisional && self.window_until.is_none_or(|t| now <= t)
    }
}
