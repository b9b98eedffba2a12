//! When the last move is final and when a held move is published: the press (its presser's
//! move only), the press window, the opponent's touch, the still board, the dwell.

use super::*;

impl Tracker {
    /// The clock lever changed: the mover says the move is done. The last move becomes final
    /// ([`SCAN_LAG_MS`] later, in case the press overtook its last field update). Who
    /// pressed is not known here: see [`Tracker::on_clock_press_by`].
    pub fn on_clock_press(&mut self, now: Millis) -> Vec<TrackerEvent> {
        self.on_clock_press_by(now, None)
    }

    /// The clock lever changed, pressed by `presser` when the clock's sides are known. A
    /// press ends only its presser's move: with no reply time at all, the opponent's first
    /// piece can be read before the press of the move it answers (...Rxd8 pressed as White
    /// already sets his bishop down on e3, on its way to f4). That press neither publishes
    /// White's held move nor closes the window in which White's hand may still move on.
    pub fn on_clock_press_by(&mut self, now: Millis, presser: Option<Color>) -> Vec<TrackerEvent> {
        self.settle_final(now);
        let mut ev = Vec::new();
        // The press ends a hold at once: the mover says the move is done (a held move is the
        // side to move's).
        let to_move = self.position().turn();
        if presser.is_none_or(|c| c == to_move)
            && let Some(h) = self.held.take()
        {
            self.play(h.mv, &mut ev);
            self.set_sync(true, &mut ev);
        }
        self.last_press = Some(now);
        self.settled_checked = false;
        // Only a move the board shows is made final: a press while the board is still out of
        // sync (a castling finishing while the opponent already lifts a piece) leaves the
        // window open until the reply is published. The provisional move is the side's not
        // to move.
        let last_mover = !self.position().turn();
        if self.provisional
            && self.window_until.is_none()
            && self.in_sync
            && presser.is_none_or(|c| c == last_mover)
        {
            self.window_until = Some(now.saturating_add(SCAN_LAG_MS));
        }
        // A board in sync at a press is the last final position seen: a hand that is
        // mid-move at every change (pieces set down before their squares are emptied) is in
        // sync only here, and recovery must never reach back past moves pressed as final.
        self.advance_anchor();
        ev
    }

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
