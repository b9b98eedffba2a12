//! The idle tick: when a session that waits on nothing in particular is ticked anyway.
//!
//! The tick is a backstop: a rule that waits on time declares its deadline
//! (`Session::next_wakeup`) or asks for the periodic tick (`Session::wants_ticks`), and the idle
//! tick only bounds how late a rule missing from those would run. The daemon's link
//! ([`super::Link`]), the simulator's rig (its daemon-like ticks) and `eboardctl decode` must
//! tick a session at the same instants to be the same model of the daemon, so the rule is
//! kept here, once:
//!
//! - while the port is open, the tick comes with the first read [`IDLE_TICK_MS`] or more after
//!   the last tick, after what that read brought ([`IdleTick::read_brings_tick`]); the timer
//!   gives it only after [`QUIET_TICK_MS`] without a tick;
//! - while the port is closed (or opening), the timer gives it every [`IDLE_TICK_MS`];
//! - any tick, whatever brought it, starts the wait again ([`IdleTick::ticked`]).

use crate::vocab::Millis;

/// Session ticks while the port is closed, or open with nothing judged at each tick: nothing
/// is settling on a board nobody hears and an idle board has nothing to judge, so one a
/// second is enough (a rule that waits on time has its deadline, and this tick only makes
/// a rule missing from those late, never lost), and a rack of boards costs little. While the
/// port is open this tick rides on the first read that comes this long after the last tick
/// (the board task is awake for it anyway); the timer gives it only after [`QUIET_TICK_MS`].
pub const IDLE_TICK_MS: Millis = 1_000;
/// While the port is open and nothing is judged at each tick, the longest the session goes
/// without a tick when no read brings one ([`IDLE_TICK_MS`]). A talking board (a clock
/// reports every second) is then never woken by the timer for it: at 50 boards that was 50
/// wake-ups a second, a sixth of the daemon's work at a classical pace.
pub const QUIET_TICK_MS: Millis = 5_000;

/// When the session was last ticked, and so when the idle tick is due.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IdleTick {
    last: Millis,
}

impl IdleTick {
    /// The wait counted from `at` (the start of a run).
    pub fn since(at: Millis) -> IdleTick {
        IdleTick { last: at }
    }

    /// When the session was last ticked.
    pub fn last(&self) -> Millis {
        self.last
    }

    /// The session was ticked at `now`, by this rule or any other: the wait starts again.
    pub fn ticked(&mut self, now: Millis) {
        self.last = now;
    }

    /// When the timer gives the idle tick: [`QUIET_TICK_MS`] after the last tick while the
    /// port is `open` (a read brings it sooner), [`IDLE_TICK_MS`] while it is not.
    pub fn timer_due(&self, open: bool) -> Millis {
        self.last + if open { QUIET_TICK_MS } else { IDLE_TICK_MS }
    }

    /// Whether a read at `now` on the open port brings the tick (given after what it brought).
    pub fn read_brings_tick(&self, now: Millis) -> bool {
        now.saturating_sub(self.last) >= IDLE_TICK_MS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_brings_the_tick_a_second_after_the_last_and_the_timer_after_five() {
        let mut idle = IdleTick::since(10_000);
        assert!(!idle.read_brings_tick(10_999));
        assert!(idle.read_brings_tick(11_000));
        assert_eq!(idle.timer_due(true), 15_000);
        assert_eq!(idle.timer_due(false), 11_000);
        // A tick for any reason (a deadline, the grid) starts the wait again.
        idle.ticked(12_345);
        assert_eq!(idle.last(), 12_345);
        assert!(!idle.read_brings_tick(13_000));
        assert_eq!(idle.timer_due(true), 17_345);
        // A clock that went back (a restarted capture) never brings a tick by underflow.
        assert!(!idle.read_brings_tick(0));
    }
}
