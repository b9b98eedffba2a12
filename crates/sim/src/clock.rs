//! A pure model of a DGT 3000 clock plugged into the board: two displays counting down,
//! a lever, Fischer increments and flag bits, read as the BWTIME message reports them.
//!
//! Behaviour copied from the real captures (3+2 blitz): a clock set to `base + increment`
//! shows the first increment already added (3:02), the first press only starts the other
//! side, every later press adds the increment to the presser's display, and a stopped clock
//! keeps its "whose turn" bit. A display that reaches zero stays blocked at zero with its flag
//! bit set; the lever still switches sides, so both flags can fall.
//!
//! Set to a [`TimeControl`] ([`VirtualClock::set_control`]) it plays the DGT 3000's FIDE
//! modes: Fischer increments, US delay (the display stands still for the delay at the start of
//! each turn), Bronstein delay (the time used in the turn, up to the delay, comes back at the
//! press), and periods. When one player's time of a period but the last runs out, the clock
//! adds the next period's time to both sides at once and shows a steady flag on his side
//! (bit 6) until his next press; the final period's flag (bit 4) blocks the display at zero.
//!
//! Set with [`VirtualClock::set_control_by_counter`] it plays a DGT XL whose periods end by
//! its own move counter (option 13 "Fischer Tournament", option 00 with move counts): each
//! side counts its presses, and the press it counts as a period's last move adds that side's
//! next period (no flag, the other side untouched); a zero in any period is a flag that
//! blocks the display. The counter counts presses, not moves: a press without a move counts.

use eboard_core::arbiter::timecontrol::{Bonus, TimeControl};
use eboard_core::dgt::{ClockReading, ClockStatus, DisplayFlags, DisplayTime};

/// A physical half of the clock, seen from its front.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClockSide {
    Left,
    Right,
}

impl ClockSide {
    pub fn other(self) -> ClockSide {
        match self {
            ClockSide::Left => ClockSide::Right,
            ClockSide::Right => ClockSide::Left,
        }
    }
}

/// Time control the clock is set to (the same for both sides).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockSetup {
    pub base_ms: u64,
    pub increment_ms: u64,
}

impl Default for ClockSetup {
    /// 3+2 blitz, like the real captures.
    fn default() -> Self {
        ClockSetup {
            base_ms: 180_000,
            increment_ms: 2_000,
        }
    }
}

/// One period as the clock plays it (times in ms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ClockPeriod {
    base_ms: u64,
    /// The period has a move count: another one follows it.
    not_last: bool,
    /// Its move count (0 without one).
    moves: u32,
    increment_ms: u64,
    us_delay_ms: u64,
    bronstein_ms: u64,
}

impl ClockPeriod {
    fn of(setup: ClockSetup) -> ClockPeriod {
        ClockPeriod {
            base_ms: setup.base_ms,
            not_last: false,
            moves: 0,
            increment_ms: setup.increment_ms,
            us_delay_ms: 0,
            bronstein_ms: 0,
        }
    }
}

/// The clock's state at some moment. Times are advanced lazily to the `now` passed in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VirtualClock {
    left_ms: u64,
    right_ms: u64,
    /// The periods it is set to; a last period that is `not_last` repeats.
    periods: Vec<ClockPeriod>,
    /// The current period, 0-based: both sides change period together.
    period: usize,
    /// What is left of the running side's US delay in this turn.
    delay_left_ms: u64,
    /// Time the running side has used in this turn (Bronstein gives it back, up to the delay).
    turn_used_ms: u64,
    /// The steady (non-final) flag shown on [left, right].
    steady: [bool; 2],
    /// The clock shows the steady flag at the end of a period (bit 6); off, only the time
    /// added to both sides tells (a reading that does not carry the flag).
    pub shows_steady_flag: bool,
    /// The display that counts (or would count once started).
    to_run: ClockSide,
    /// Bit 0: counting (not stopped with start/stop).
    running: bool,
    /// Whether any press happened since the clock was set (the first press adds nothing).
    pressed_once: bool,
    left_flag: bool,
    right_flag: bool,
    /// Bit 2 of the status byte.
    pub battery_low: bool,
    /// Periods end by the move counter (a DGT XL in option 13 or 00), each side on its own.
    by_counter: bool,
    /// By the counter: the presses counted per side [left, right], and each side's period.
    counted: [u32; 2],
    side_period: [usize; 2],
    /// Time the running display was last brought up to date.
    updated_at: u64,
}

fn side_idx(side: ClockSide) -> usize {
    match side {
        ClockSide::Left => 0,
        ClockSide::Right => 1,
    }
}

/// Round a remaining time up to whole seconds, the way the display shows it: a display reads
/// 0:00 only once the time is really gone.
fn display_time(ms: u64) -> DisplayTime {
    let secs = ms.div_ceil(1000).min(9 * 3600 + 59 * 60 + 59);
    DisplayTime {
        hours: (secs / 3600) as u8,
        minutes: ((secs / 60) % 60) as u8,
        seconds: (secs % 60) as u8,
    }
}

impl VirtualClock {
    /// A clock set to `setup`, stopped, left display to run first (White on the left).
    pub fn new(setup: ClockSetup, now: u64) -> Self {
        Self::with_periods(vec![ClockPeriod::of(setup)], now)
    }

    fn with_periods(periods: Vec<ClockPeriod>, now: u64) -> Self {
        // A Fischer clock shows the first increment already added (see the module docs).
        let first = periods[0];
        let start = first.base_ms.saturating_add(first.increment_ms);
        VirtualClock {
            left_ms: start,
            right_ms: start,
            periods,
            period: 0,
            delay_left_ms: first.us_delay_ms,
            turn_used_ms: 0,
            steady: [false, false],
            shows_steady_flag: true,
            to_run: ClockSide::Left,
            running: false,
            pressed_once: false,
            left_flag: false,
            right_flag: false,
            battery_low: false,
            by_counter: false,
            counted: [0, 0],
            side_period: [0, 0],
            updated_at: now,
        }
    }

    /// Reset to `setup`, stopped, with `first` to run once started.
    pub fn set(&mut self, setup: ClockSetup, first: ClockSide, now: u64) {
        self.reset_to(vec![ClockPeriod::of(setup)], first, now);
    }

    /// Reset to a time control in the DGT 3000's FIDE mode, stopped, with `first` to run.
    pub fn set_control(&mut self, control: &TimeControl, first: ClockSide, now: u64) {
        let periods = control
            .periods
            .iter()
            .map(|p| {
                let (increment_ms, us_delay_ms, bronstein_ms) = match p.bonus {
                    Bonus::Increment(_) => (p.inc_ms(), 0, 0),
                    Bonus::UsDelay(_) => (0, p.us_delay_ms(), 0),
                    Bonus::Bronstein(_) => (0, 0, p.bronstein_ms()),
                };
                ClockPeriod {
                    base_ms: p.base_ms(),
                    not_last: p.moves.is_some(),
                    moves: p.moves.unwrap_or(0),
                    increment_ms,
                    us_delay_ms,
                    bronstein_ms,
                }
            })
            .collect();
        self.reset_to(periods, first, now);
    }

    /// Reset to a time control whose periods end by the move counter (a DGT XL in option
    /// 13, or option 00 with move counts), stopped, with `first` to run.
    pub fn set_control_by_counter(&mut self, control: &TimeControl, first: ClockSide, now: u64) {
        self.set_control(control, first, now);
        self.by_counter = true;
    }

    /// By the counter: the presses counted for `side`.
    pub fn counted(&self, side: ClockSide) -> u32 {
        self.counted[side_idx(side)]
    }

    /// Set a side's move counter, as an arbiter does on the clock's buttons.
    pub fn set_counted(&mut self, side: ClockSide, presses: u32) {
        self.counted[side_idx(side)] = presses;
    }

    /// The period `side` plays (both sides together unless by the counter).
    fn period_of(&self, side: ClockSide) -> ClockPeriod {
        let j = if self.by_counter {
            self.side_period[side_idx(side)]
        } else {
            self.period
        };
        self.periods[j.min(self.periods.len() - 1)]
    }

    /// By the counter: `side`'s press was counted; at the period's last move its next
    /// period's time is added to it.
    fn count_press(&mut self, side: ClockSide) {
        let i = side_idx(side);
        self.counted[i] += 1;
        let j = self.side_period[i];
        if !self.period_of(side).not_last {
            return;
        }
        let moves_due: u32 = (0..=j)
            .map(|k| self.periods[k.min(self.periods.len() - 1)].moves)
            .sum();
        if self.counted[i] == moves_due {
            self.side_period[i] = j + 1;
            let next = self.period_of(side).base_ms;
            let time = self.time_mut(side);
            *time = time.saturating_add(next);
        }
    }

    fn reset_to(&mut self, periods: Vec<ClockPeriod>, first: ClockSide, now: u64) {
        // `by_counter` goes back to time-ended periods: `set_control_by_counter` sets it after.
        *self = VirtualClock {
            to_run: first,
            battery_low: self.battery_low,
            shows_steady_flag: self.shows_steady_flag,
            ..VirtualClock::with_periods(periods, now)
        };
    }

    /// The current period (a last period with a move count repeats).
    fn current(&self) -> ClockPeriod {
        self.periods[self.period.min(self.periods.len() - 1)]
    }

    /// The clock's current period, 0-based.
    pub fn period(&self) -> usize {
        self.period
    }

    /// The steady (non-final) flag shown on `side`.
    pub fn steady_flag(&self, side: ClockSide) -> bool {
        self.steady[side_idx(side)]
    }

    /// Host SET-AND-RUN: both times (ms) and which side counts down (`None` = paused).
    pub fn set_and_run(&mut self, left_ms: u64, right_ms: u64, run: Option<ClockSide>, now: u64) {
        self.advance(now);
        self.left_ms = left_ms;
        self.right_ms = right_ms;
        self.left_flag = left_ms == 0;
        self.right_flag = right_ms == 0;
        match run {
            Some(side) => {
                self.to_run = side;
                self.running = true;
            }
            None => self.running = false,
        }
        self.pressed_once = true;
        self.updated_at = now;
    }

    /// Bring the running display up to `now`: the US delay first, then the time; a period
    /// but the last that runs out adds the next period to both sides, the last one sets the
    /// flag and blocks at zero.
    pub fn advance(&mut self, now: u64) {
        let elapsed = now.saturating_sub(self.updated_at);
        self.updated_at = self.updated_at.max(now);
        if !self.running || elapsed == 0 {
            return;
        }
        let waited = elapsed.min(self.delay_left_ms);
        self.delay_left_ms -= waited;
        let mut used = elapsed - waited;
        self.turn_used_ms = self.turn_used_ms.saturating_add(used);
        let side = self.to_run;
        while used > 0 {
            let time = self.time_mut(side);
            if used < *time {
                *time -= used;
                return;
            }
            used -= *time;
            *time = 0;
            if self.flag_fallen(side) || self.by_counter || !self.current().not_last {
                self.set_flag(side);
                return;
            }
            // The period's time is gone: the next period's time goes to both sides.
            self.period += 1;
            let next = self.current().base_ms;
            self.left_ms = self.left_ms.saturating_add(next);
            self.right_ms = self.right_ms.saturating_add(next);
            if self.shows_steady_flag {
                self.steady[side_idx(side)] = true;
            }
        }
    }

    fn time_mut(&mut self, side: ClockSide) -> &mut u64 {
        match side {
            ClockSide::Left => &mut self.left_ms,
            ClockSide::Right => &mut self.right_ms,
        }
    }

    fn set_flag(&mut self, side: ClockSide) {
        match side {
            ClockSide::Left => self.left_flag = true,
            ClockSide::Right => self.right_flag = true,
        }
    }

    /// The player on `side` presses his side of the lever. Starts a stopped-and-fresh clock
    /// for the other side; otherwise gives `side`, if it was the one running, the period's
    /// increment or Bronstein give-back, and starts the other side's turn (and US delay).
    pub fn press(&mut self, side: ClockSide, now: u64) {
        self.advance(now);
        if self.to_run == side {
            if self.pressed_once && self.running && !self.flag_fallen(side) {
                let period = self.period_of(side);
                let back = period
                    .increment_ms
                    .saturating_add(self.turn_used_ms.min(period.bronstein_ms));
                let time = self.time_mut(side);
                *time = time.saturating_add(back);
            }
            // The XL counts the press of the side to run, the first one too (a clock nobody
            // started: the first mover's press starts it and is his first move).
            if self.by_counter && !self.flag_fallen(side) {
                self.count_press(side);
            }
            self.steady[side_idx(side)] = false;
            self.to_run = side.other();
            self.delay_left_ms = self.period_of(side.other()).us_delay_ms;
            self.turn_used_ms = 0;
        }
        if !self.pressed_once {
            self.running = true;
        }
        self.pressed_once = true;
    }

    /// The start/stop button.
    pub fn toggle_running(&mut self, now: u64) {
        self.advance(now);
        self.running = !self.running;
    }

    /// Milliseconds left on `side` at `now`.
    pub fn remaining(&mut self, side: ClockSide, now: u64) -> u64 {
        self.advance(now);
        match side {
            ClockSide::Left => self.left_ms,
            ClockSide::Right => self.right_ms,
        }
    }

    pub fn is_running(&self) -> bool {
        self.running
    }

    /// Which display counts (or would count once started).
    pub fn to_run(&self) -> ClockSide {
        self.to_run
    }

    pub fn flag_fallen(&self, side: ClockSide) -> bool {
        match side {
            ClockSide::Left => self.left_flag,
            ClockSide::Right => self.right_flag,
        }
    }

    /// Earliest time after `now` at which the reading changes by itself (the running display
    /// ticks to its next shown second), if it is counting.
    pub fn next_change(&mut self, now: u64) -> Option<u64> {
        self.advance(now);
        if !self.running {
            return None;
        }
        let ms = match self.to_run {
            ClockSide::Left => self.left_ms,
            ClockSide::Right => self.right_ms,
        };
        if ms == 0 {
            return None;
        }
        // The shown value drops when ms crosses the next lower multiple of 1000, once the
        // US delay is over.
        let to_next = match ms % 1000 {
            0 => 1000,
            rest => rest,
        };
        Some(
            now.saturating_add(self.delay_left_ms)
                .saturating_add(to_next),
        )
    }

    /// The reading as a BWTIME clock-times message reports it.
    pub fn reading(&mut self, now: u64) -> ClockReading {
        self.advance(now);
        let period = self.period_of(self.to_run);
        let per_move = period.increment_ms > 0 || period.bronstein_ms > 0;
        let flags = |fallen: bool, steady: bool| DisplayFlags {
            flag_fallen: fallen,
            time_per_move: per_move,
            flag_shown: steady && !fallen,
        };
        ClockReading {
            right: display_time(self.right_ms),
            right_flags: flags(self.right_flag, self.steady[1]),
            left: display_time(self.left_ms),
            left_flags: flags(self.left_flag, self.steady[0]),
            status: ClockStatus {
                running: self.running,
                // The left side is down exactly when the right display is the one to run.
                lever_left_down: self.to_run == ClockSide::Right,
                battery_low: self.battery_low,
                left_running: self.to_run == ClockSide::Left,
                right_running: self.to_run == ClockSide::Right,
                connected: true,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(c: &mut VirtualClock, now: u64) -> [u8; 7] {
        c.reading(now).payload()
    }

    #[test]
    fn follows_capture_one_opening() {
        let mut c = VirtualClock::new(ClockSetup::default(), 0);
        assert_eq!(bytes(&mut c, 0), [0x20, 3, 2, 0x20, 3, 2, 0x08]);
        // Black's side presses to start White's (left) clock: no increment.
        c.press(ClockSide::Right, 0);
        assert_eq!(bytes(&mut c, 0), [0x20, 3, 2, 0x20, 3, 2, 0x09]);
        assert_eq!(bytes(&mut c, 1_500), [0x20, 3, 2, 0x20, 3, 1, 0x09]);
        assert_eq!(bytes(&mut c, 3_100), [0x20, 3, 2, 0x20, 2, 0x59, 0x09]);
        // White presses at 2:58.9 → 3:00.9 shown as 3:01, right runs, lever left down.
        c.press(ClockSide::Left, 3_100);
        assert_eq!(bytes(&mut c, 3_100), [0x20, 3, 2, 0x20, 3, 1, 0x13]);
        c.toggle_running(4_000);
        assert_eq!(bytes(&mut c, 9_000), [0x20, 3, 2, 0x20, 3, 1, 0x12]);
    }

    #[test]
    fn an_xl_by_its_counter_adds_the_period_at_the_counted_press_to_that_side_only() {
        let control: TimeControl = "2/20+1:10+1".parse().unwrap();
        let mut c = VirtualClock::new(ClockSetup::default(), 0);
        c.set_control_by_counter(&control, ClockSide::Left, 0);
        c.press(ClockSide::Right, 0); // starts the left side, not counted
        c.press(ClockSide::Left, 1_000); // 21 - 1 + 1 = 21 s
        c.press(ClockSide::Right, 2_000);
        assert_eq!(c.remaining(ClockSide::Left, 2_000), 21_000);
        // A press without a move counts: the left side's second press is its "2nd move".
        c.press(ClockSide::Left, 3_000);
        assert_eq!(c.counted(ClockSide::Left), 2);
        assert_eq!(c.remaining(ClockSide::Left, 3_000), 21_000 + 10_000);
        assert_eq!(c.remaining(ClockSide::Right, 3_000), 21_000);
        assert!(!c.steady_flag(ClockSide::Left));
        // A zero is a flag that blocks, in any period.
        assert!(!c.flag_fallen(ClockSide::Right));
        c.advance(30_000);
        assert!(c.flag_fallen(ClockSide::Right));
        assert_eq!(c.remaining(ClockSide::Right, 30_000), 0);
    }

    #[test]
    fn flag_falls_and_blocks_at_zero() {
        let mut c = VirtualClock::new(
            ClockSetup {
                base_ms: 2_000,
                increment_ms: 0,
            },
            0,
        );
        c.press(ClockSide::Right, 0);
        assert_eq!(c.next_change(0), Some(1_000));
        assert_eq!(bytes(&mut c, 5_000), [0x00, 0, 2, 0x10, 0, 0, 0x09]);
        assert!(c.flag_fallen(ClockSide::Left));
        assert_eq!(c.next_change(5_000), None);
        c.press(ClockSide::Left, 5_000);
        assert_eq!(c.remaining(ClockSide::Left, 5_000), 0);
        assert_eq!(bytes(&mut c, 9_000), [0x10, 0, 0, 0x10, 0, 0, 0x13]);
    }

    #[test]
    fn set_and_run_takes_host_times() {
        let mut c = VirtualClock::new(ClockSetup::default(), 0);
        c.set_and_run(65_000, 3_600_000, Some(ClockSide::Right), 0);
        let r = c.reading(500);
        assert_eq!((r.left.minutes, r.left.seconds), (1, 5));
        assert_eq!((r.right.hours, r.right.minutes, r.right.seconds), (1, 0, 0));
        assert!(r.status.right_running && r.status.running);
    }

    fn fide(control: &str) -> VirtualClock {
        let mut c = VirtualClock::new(ClockSetup::default(), 0);
        c.set_control(&control.parse().unwrap(), ClockSide::Left, 0);
        // Black's side starts White's (left) clock.
        c.press(ClockSide::Right, 0);
        c
    }

    #[test]
    fn a_period_that_runs_out_adds_the_next_to_both_sides_with_a_steady_flag() {
        let mut c = fide("4/20+1:10+1");
        assert_eq!(c.remaining(ClockSide::Left, 0), 21_000);
        // White thinks 21.5 s: 0.5 s into the second period's 10 s.
        let r = c.reading(21_500);
        assert!(r.left_flags.flag_shown && !r.left_flags.flag_fallen);
        assert!(!r.right_flags.flag_shown);
        assert_eq!(c.remaining(ClockSide::Left, 21_500), 9_500);
        assert_eq!(c.remaining(ClockSide::Right, 21_500), 31_000);
        assert_eq!(c.period(), 1);
        // His press clears his steady flag and gives the new period's increment.
        c.press(ClockSide::Left, 22_000);
        assert!(!c.steady_flag(ClockSide::Left));
        assert_eq!(c.remaining(ClockSide::Left, 22_000), 10_000);
        // The final period's flag: blocked at zero, bit 4.
        c.press(ClockSide::Right, 22_000);
        let r = c.reading(40_000);
        assert!(r.left_flags.flag_fallen && !r.left_flags.flag_shown);
        assert_eq!(c.remaining(ClockSide::Left, 40_000), 0);
        assert_eq!(c.period(), 1);
    }

    #[test]
    fn the_steady_flag_can_be_left_out() {
        let mut c = VirtualClock::new(ClockSetup::default(), 0);
        c.shows_steady_flag = false;
        c.set_control(&"4/20:10".parse().unwrap(), ClockSide::Left, 0);
        c.press(ClockSide::Right, 0);
        let r = c.reading(21_000);
        assert!(!r.left_flags.flag_shown);
        assert_eq!(c.remaining(ClockSide::Left, 21_000), 9_000);
    }

    #[test]
    fn us_delay_stands_still_and_bronstein_gives_back_the_time_used() {
        let mut c = fide("60d5");
        assert_eq!(c.remaining(ClockSide::Left, 0), 60_000);
        assert_eq!(c.next_change(0), Some(6_000));
        assert_eq!(c.remaining(ClockSide::Left, 4_000), 60_000);
        assert_eq!(c.remaining(ClockSide::Left, 7_000), 58_000);
        c.press(ClockSide::Left, 7_000);
        assert_eq!(c.remaining(ClockSide::Left, 7_000), 58_000);
        assert_eq!(c.remaining(ClockSide::Right, 10_000), 60_000);

        let mut c = fide("60b5");
        c.press(ClockSide::Left, 3_000);
        assert_eq!(c.remaining(ClockSide::Left, 3_000), 60_000);
        assert_eq!(c.remaining(ClockSide::Right, 9_000), 54_000);
        c.press(ClockSide::Right, 9_000);
        assert_eq!(c.remaining(ClockSide::Right, 9_000), 59_000);
        let r = c.reading(9_000);
        assert!(r.left_flags.time_per_move);
    }
}
