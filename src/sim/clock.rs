//! A pure model of a DGT 3000 clock plugged into the board: two displays counting down,
//! a lever, Fischer increments and flag bits, read as the BWTIME message reports them.
//!
//! Behaviour copied from the real captures (3+2 blitz): a clock set to `base + increment`
//! shows the first increment already added (3:02), the first press only starts the other
//! side, every later press adds the increment to the presser's display, and a stopped clock
//! keeps its "whose turn" bit. A display that reaches zero stays blocked at zero with its flag
//! bit set; the lever still switches sides, so both flags can fall.

use crate::protocol::{ClockStatus, ClockTimes, DisplayFlags, DisplayTime};

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

/// The clock's state at some moment. Times are advanced lazily to the `now` passed in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VirtualClock {
    left_ms: u64,
    right_ms: u64,
    increment_ms: u64,
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
    /// Time the running display was last brought up to date.
    updated_at: u64,
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
        let start = setup.base_ms.saturating_add(setup.increment_ms);
        VirtualClock {
            left_ms: start,
            right_ms: start,
            increment_ms: setup.increment_ms,
            to_run: ClockSide::Left,
            running: false,
            pressed_once: false,
            left_flag: false,
            right_flag: false,
            battery_low: false,
            updated_at: now,
        }
    }

    /// Reset to `setup`, stopped, with `first` to run once started.
    pub fn set(&mut self, setup: ClockSetup, first: ClockSide, now: u64) {
        *self = VirtualClock {
            to_run: first,
            battery_low: self.battery_low,
            ..VirtualClock::new(setup, now)
        };
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

    /// Bring the running display up to `now`, setting its flag when it reaches zero.
    pub fn advance(&mut self, now: u64) {
        let elapsed = now.saturating_sub(self.updated_at);
        self.updated_at = self.updated_at.max(now);
        if !self.running || elapsed == 0 {
            return;
        }
        let (time, flag) = match self.to_run {
            ClockSide::Left => (&mut self.left_ms, &mut self.left_flag),
            ClockSide::Right => (&mut self.right_ms, &mut self.right_flag),
        };
        *time = time.saturating_sub(elapsed);
        if *time == 0 {
            *flag = true;
        }
    }

    /// The player on `side` presses his side of the lever. Starts a stopped-and-fresh clock
    /// for the other side; otherwise adds the increment to `side` if it was the one running.
    pub fn press(&mut self, side: ClockSide, now: u64) {
        self.advance(now);
        if self.to_run == side {
            if self.pressed_once && self.running {
                let flagged = match side {
                    ClockSide::Left => self.left_flag,
                    ClockSide::Right => self.right_flag,
                };
                if !flagged {
                    match side {
                        ClockSide::Left => {
                            self.left_ms = self.left_ms.saturating_add(self.increment_ms)
                        }
                        ClockSide::Right => {
                            self.right_ms = self.right_ms.saturating_add(self.increment_ms)
                        }
                    }
                }
            }
            self.to_run = side.other();
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
        // The shown value drops when ms crosses the next lower multiple of 1000.
        let to_next = match ms % 1000 {
            0 => 1000,
            rest => rest,
        };
        Some(now.saturating_add(to_next))
    }

    /// The reading as a BWTIME clock-times message reports it.
    pub fn reading(&mut self, now: u64) -> ClockTimes {
        self.advance(now);
        let fischer = self.increment_ms > 0;
        let flags = |fallen: bool| DisplayFlags {
            flag_fallen: fallen,
            time_per_move: fischer,
            flag_shown: false,
        };
        ClockTimes {
            right: display_time(self.right_ms),
            right_flags: flags(self.right_flag),
            left: display_time(self.left_ms),
            left_flags: flags(self.left_flag),
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
}
