//! What the session lends its recovery ([`crate::recovery::Host`]): the tracker, the arbiter
//! and the session's own way of applying what they report, so a move the recovery publishes
//! is announced, ruled on and journalled as any other. The recovery's transitions are its own
//! (`crate::recovery`); these are the session's primitives they use.

use super::*;
use crate::recovery::{Host, Recovery};

impl Session {
    /// Run one of the recovery's transitions with the session as its host. The recovery is
    /// taken out for the call (nothing the host does reads it) and put back.
    pub(super) fn with_recovery<T>(&mut self, f: impl FnOnce(&mut Recovery, &mut Self) -> T) -> T {
        let mut recovery = std::mem::take(&mut self.recovery);
        let result = f(&mut recovery, self);
        self.recovery = recovery;
        result
    }
}

impl Host for Session {
    fn tracker(&self) -> &Tracker {
        &self.tracker
    }

    fn tracker_mut(&mut self) -> &mut Tracker {
        &mut self.tracker
    }

    fn arbiter(&self) -> &Arbiter {
        &self.arbiter
    }

    fn arbiter_mut(&mut self) -> &mut Arbiter {
        &mut self.arbiter
    }

    fn game_on(&self) -> bool {
        self.started && !self.arbiter.is_finished()
    }

    fn without_clock_witness(&self) -> bool {
        self.config.gap_without_clock_witness
    }

    fn orientation_learnt(&self) -> bool {
        self.config.orientation == crate::vocab::OrientationSetting::Auto
    }

    fn apply_tracker(&mut self, events: Vec<TrackerEvent>, now: Millis, out: &mut Vec<Event>) {
        Session::apply_tracker(self, events, now, out);
    }

    fn apply_arbiter(&mut self, rulings: Vec<Ruling>, out: &mut Vec<Event>) {
        Session::apply_arbiter(self, rulings, out);
    }

    fn clock_after_gap(
        &mut self,
        reading: Option<&ClockReading>,
        now: Millis,
        out: &mut Vec<Event>,
    ) {
        self.lever_left_down = None;
        if let Some(times) = reading {
            self.clock_live = true;
            self.on_clock(times, now, out);
        }
    }

    fn hold_back(&mut self) {
        self.standing_illegal = None;
    }

    fn report(&mut self, fact: Fact) {
        Session::report(self, fact);
    }
}
