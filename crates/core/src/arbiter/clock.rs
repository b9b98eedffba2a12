//! The chess clock as the board reports it: which physical display belongs to White, the
//! remaining times, who is running, lever presses and flag falls.
//!
//! The clock messages are noisy in practice. Before a reading reaches this model, the session
//! holds any reading that could decide a game until the clock confirms it
//! (`session/clock_confirm.rs`: one garbled frame never shows a flag, a press or a time jump
//! here). This model filters what passes before it believes:
//! * all-zero readings (sent by some clocks after a clock command) are ignored;
//! * readings with impossible values (hours > 9, minutes or seconds > 59) are ignored;
//! * a time that jumps *up* is believed: an arbiter adds time for a penalty, and increments
//!   are added at every press.
//!
//! With a time control of several periods the model follows the clock's period. A DGT 3000 in
//! a FIDE mode, when one player's time of a period but the last runs out, shows a steady
//! (non-blinking) flag on his side (bit 6) and adds the next period's time to both sides at
//! once; only the final period's flag (bit 4, clock blocked at zero) is a fall by itself. The
//! end of a period is reported as a [`PeriodEnd`] — from the steady flag appearing on a display
//! that ran out, or, when that reading was missed, from both displays jumping up by the next
//! period's time while one of them ran near zero — and the arbiter judges the move count. That
//! jump is the next period: never an increment, never a correction of a flag.
//!
//! A press is a change of the lever bit while the clock runs (the side pressed down is the
//! presser); if the lever bit never changes (some clocks), a change of the running display is
//! used instead. Which display is White's comes from the configuration, or (`auto`) from the
//! first press after White's first move: that press is White's.

use serde::{Deserialize, Serialize};

use super::ArbiterConfig;
use crate::board_input::{ClockReading, DisplayFlags, DisplayTime};
use crate::vocab::{Millis, WhiteDisplay};
use shakmaty::Color;

/// A physical half of the clock, seen from its front.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Display {
    Left,
    Right,
}

impl Display {
    pub fn other(self) -> Display {
        match self {
            Display::Left => Display::Right,
            Display::Right => Display::Left,
        }
    }
    fn idx(self) -> usize {
        match self {
            Display::Left => 0,
            Display::Right => 1,
        }
    }
}

/// How far a display's reading may lag the time it stands for: displays show whole seconds,
/// rounded up, and a reading may arrive late.
const READING_SLACK_MS: u64 = 2_000;

/// The clock left a period that was not the last: `display`'s time for period `period`
/// (0-based) ran out, and the clock added the next period's time to both sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeriodEnd {
    pub display: Display,
    pub period: usize,
    /// A press by `display` in the same reading came after the period ended: his display
    /// already shows the next period's time (the flag first, 3.3.4 of the seeds' rules).
    pub before_press: bool,
}

/// What one clock reading revealed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClockUpdate {
    /// The reading was believed (not noise).
    pub accepted: bool,
    /// A player pressed the lever: the display on the presser's side.
    pub press: Option<Display>,
    /// Displays whose flag fell with this reading, in the order the clock shows it (a reading
    /// with both is reported as both, order unknown).
    pub flags: Vec<Display>,
    /// A period but the last ended with this reading (see [`PeriodEnd`]).
    pub period_end: Option<PeriodEnd>,
    /// Displays to which the clock added their next period with this reading, by its own
    /// move counter (`clock_periods = "moves"`: a DGT XL adds it at the press it counts as
    /// the period's last move, no flag, one side only).
    pub period_added: Vec<Display>,
    /// The reading came with the lever unknown (the first of a connection, or the first
    /// after a gap): a press made before it is in it, unseen as a press.
    pub fresh: bool,
}

/// The clock model (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
///
/// The settings it follows (White's display, the time control, how the clock changes period)
/// are the arbiter's: each method that needs one is given the [`ArbiterConfig`].
pub struct ClockModel {
    /// White's display once known (configured or learned).
    white: Option<Display>,
    connected: bool,
    times: [Option<u64>; 2],
    fallen: [bool; 2],
    running: Option<Display>,
    lever_left_down: Option<bool>,
    last_reading_at: Option<Millis>,
    /// Time added to the presser at the last press (the observed increment).
    observed_increment_ms: Option<u64>,
    /// The presser's time just before the last press, to measure the increment.
    before_press: [Option<u64>; 2],
    /// The clock's current period (0-based): both sides change period together.
    #[serde(default)]
    period: usize,
    /// The steady (non-final) flag as the last reading showed it, per display.
    #[serde(default)]
    steady: [bool; 2],
    /// In that mode, the periods the clock has added to each display (0: still the first).
    #[serde(default)]
    side_period: [usize; 2],
}

/// The clock moves to the next period by its own move counter (see
/// [`crate::vocab::ClockPeriods::by_counter`]): no steady flag, and every zero is a flag.
fn by_counter(cfg: &ArbiterConfig) -> bool {
    cfg.clock_periods.by_counter()
}

/// White's display as configured (`None`: `auto`, learned from the first press).
pub(super) fn configured_white(setting: WhiteDisplay) -> Option<Display> {
    match setting {
        WhiteDisplay::Left => Some(Display::Left),
        WhiteDisplay::Right => Some(Display::Right),
        WhiteDisplay::Auto => None,
    }
}

/// The setting that names White's half of the clock (how a side learnt is journalled and
/// given back after a restart, see [`configured_white`] for the other way).
pub(super) fn white_setting(white: Display) -> WhiteDisplay {
    match white {
        Display::Left => WhiteDisplay::Left,
        Display::Right => WhiteDisplay::Right,
    }
}

fn plausible(t: DisplayTime) -> bool {
    t.hours <= 9 && t.minutes <= 59 && t.seconds <= 59
}

impl ClockModel {
    pub fn new(setting: WhiteDisplay) -> Self {
        ClockModel {
            white: configured_white(setting),
            connected: false,
            times: [None, None],
            fallen: [false, false],
            running: None,
            lever_left_down: None,
            last_reading_at: None,
            observed_increment_ms: None,
            before_press: [None, None],
            period: 0,
            steady: [false, false],
            side_period: [0, 0],
        }
    }

    /// Take the clock's periods of `c` as `j` (a game restored: the record says where it is).
    pub fn set_side_period(&mut self, c: Color, j: usize) {
        self.side_period[self.display_of(c).idx()] = j;
    }

    /// Periods the clock has added to `c`'s display by its move counter (0: none yet).
    pub fn side_period(&self, c: Color) -> usize {
        self.side_period[self.display_of(c).idx()]
    }

    /// The clock's current period, 0-based (both sides change period together).
    pub fn period(&self) -> usize {
        self.period
    }

    /// True while the clock is in the game's last period (or no control is configured): a
    /// display reaching zero is then a flag fall. In a period but the last, a display at zero
    /// is about to get the next period's time.
    pub fn final_period(&self, cfg: &ArbiterConfig) -> bool {
        // By its move counter the clock adds nothing at zero: every zero is a flag.
        by_counter(cfg)
            || cfg
                .time_control
                .as_ref()
                .is_none_or(|c| c.is_final(self.period))
    }

    /// Forget per-game state (flags, period, learned side in `auto` mode) for a new game.
    pub fn new_game(&mut self, cfg: &ArbiterConfig) {
        self.fallen = [false, false];
        self.period = 0;
        self.side_period = [0, 0];
        self.steady = [false, false];
        // A configured side stays; `auto` learns again.
        self.white = configured_white(cfg.white_display);
    }

    /// Forget the lever and the running side: the next reading is a fresh start, not a press
    /// (after a gap in the readings).
    pub fn forget_lever(&mut self) {
        self.lever_left_down = None;
        self.running = None;
    }

    /// White's display: configured, learned, or (until learned) the left one provisionally.
    pub fn white_display(&self) -> Display {
        self.white.unwrap_or(Display::Left)
    }

    pub fn white_known(&self) -> bool {
        self.white.is_some()
    }

    /// Learn (auto mode) that `d` is White's display; a configured side is never overridden.
    pub fn learn_white(&mut self, d: Display) {
        if self.white.is_none() {
            self.white = Some(d);
        }
    }

    pub fn display_of(&self, c: Color) -> Display {
        match c {
            Color::White => self.white_display(),
            Color::Black => self.white_display().other(),
        }
    }

    pub fn color_of(&self, d: Display) -> Color {
        if d == self.white_display() {
            Color::White
        } else {
            Color::Black
        }
    }

    pub fn connected(&self) -> bool {
        self.connected
    }

    pub fn has_times(&self) -> bool {
        self.connected && self.times.iter().all(Option::is_some)
    }

    /// Remaining time of a colour as the clock shows it (0 while unknown).
    pub fn time_ms(&self, c: Color) -> u64 {
        self.times[self.display_of(c).idx()].unwrap_or(0)
    }

    pub fn known_time_ms(&self, c: Color) -> Option<u64> {
        if self.connected {
            self.times[self.display_of(c).idx()]
        } else {
            None
        }
    }

    /// The colour whose time runs, or None when the clock is stopped, paused or absent.
    pub fn running(&self) -> Option<Color> {
        if !self.connected {
            return None;
        }
        self.running.map(|d| self.color_of(d))
    }

    pub fn fallen(&self, c: Color) -> bool {
        self.fallen[self.display_of(c).idx()]
    }

    /// When the last reading believed was taken (session time).
    pub fn last_reading_at(&self) -> Option<Millis> {
        self.last_reading_at
    }

    pub fn observed_increment_ms(&self) -> Option<u64> {
        self.observed_increment_ms
    }

    /// Feed one clock reading taken at `now`.
    pub fn update(&mut self, cfg: &ArbiterConfig, ct: &ClockReading, now: Millis) -> ClockUpdate {
        let mut out = ClockUpdate::default();
        if !ct.status.connected {
            self.connected = false;
            self.running = None;
            return out;
        }
        if !plausible(ct.left) || !plausible(ct.right) {
            return out;
        }
        let any_flag_bit = ct.left_flags.flag_fallen
            || ct.right_flags.flag_fallen
            || ct.left_flags.flag_shown
            || ct.right_flags.flag_shown;
        let all_zero = ct.left.as_millis() == 0
            && ct.right.as_millis() == 0
            && !any_flag_bit
            && !ct.status.running
            && !ct.status.left_running
            && !ct.status.right_running;
        if all_zero {
            return out;
        }
        out.accepted = true;
        out.fresh = self.lever_left_down.is_none();
        self.connected = true;
        let new_times = [ct.left.as_millis(), ct.right.as_millis()];
        let flag_bits = [ct.left_flags, ct.right_flags];
        let elapsed = self.last_reading_at.map_or(0, |at| now.saturating_sub(at));
        let final_before = self.final_period(cfg);
        out.period_end = self.period_end(cfg, flag_bits, new_times, elapsed);
        out.period_added = self.periods_added(cfg, new_times, elapsed);
        let running = if !ct.status.running {
            None
        } else if ct.status.left_running != ct.status.right_running {
            Some(if ct.status.left_running {
                Display::Left
            } else {
                Display::Right
            })
        } else if ct.status.lever_left_down {
            Some(Display::Right)
        } else {
            Some(Display::Left)
        };

        // Press detection.
        let lever_changed = self
            .lever_left_down
            .is_some_and(|prev| prev != ct.status.lever_left_down);
        let press = if lever_changed && ct.status.running {
            Some(if ct.status.lever_left_down {
                Display::Left
            } else {
                Display::Right
            })
        } else if !lever_changed {
            match (self.running, running) {
                (Some(a), Some(b)) if a != b => Some(a),
                _ => None,
            }
        } else {
            None
        };
        if let Some(p) = press {
            let before = self.times[p.idx()];
            self.before_press[p.idx()] = before;
            // The increment shows as the presser's time going up at the press — unless the
            // clock added the next period with this reading.
            if let Some(b) = before
                && new_times[p.idx()] > b
                && out.period_end.is_none()
                && !out.period_added.contains(&p)
            {
                self.observed_increment_ms = Some(new_times[p.idx()] - b);
            }
        }
        out.press = press;
        if let Some(end) = out.period_end.as_mut() {
            // Pressed first, he would have stopped short of zero: his display shows the next
            // period only if it ran out before the press.
            let next_ms = cfg
                .time_control
                .as_ref()
                .map_or(0, |c| c.period(end.period + 1).base_ms());
            end.before_press = press == Some(end.display)
                && new_times[end.display.idx()] + elapsed + READING_SLACK_MS >= next_ms;
            self.period = end.period + 1;
        }

        // Flag falls: the flag bit, or a display that ran down to zero.
        for d in [Display::Left, Display::Right] {
            let flags = if d == Display::Left {
                ct.left_flags
            } else {
                ct.right_flags
            };
            let ran_out = final_before
                && new_times[d.idx()] == 0
                && self.times[d.idx()].is_some_and(|t| t > 0)
                && (self.running == Some(d) || running == Some(d));
            if (flags.flag_fallen || ran_out) && !self.fallen[d.idx()] {
                self.fallen[d.idx()] = true;
                out.flags.push(d);
            }
            // Time added back (a correction after a wrongly observed fall, or a new period):
            // the flag is no longer down.
            // The next period's time is no correction.
            if self.fallen[d.idx()]
                && new_times[d.idx()] > 0
                && !flags.flag_fallen
                && out.period_end.is_none()
                && !out.period_added.contains(&d)
            {
                self.fallen[d.idx()] = false;
            }
        }
        self.steady = flag_bits.map(|f| f.flag_shown && !f.flag_fallen);

        self.times = [Some(new_times[0]), Some(new_times[1])];
        self.running = running;
        self.lever_left_down = Some(ct.status.lever_left_down);
        self.last_reading_at = Some(now);
        out
    }

    /// Did a period but the last end with this reading? `display` ran out if the clock's
    /// steady flag appeared on its side, or if both displays jumped up by the next period's
    /// time while it ran near zero (the flag's reading missed). Either way the display that
    /// ran out must have been near zero at the last reading: a steady flag still shown after
    /// the period changed is not a new end.
    fn period_end(
        &self,
        cfg: &ArbiterConfig,
        flag_bits: [DisplayFlags; 2],
        new_times: [u64; 2],
        elapsed: u64,
    ) -> Option<PeriodEnd> {
        let control = cfg.time_control.as_ref()?;
        if by_counter(cfg) || control.is_final(self.period) {
            return None;
        }
        let next_ms = control.period(self.period + 1).base_ms();
        let [Some(l), Some(r)] = self.times else {
            return None;
        };
        let old = [l, r];
        let gone = elapsed + READING_SLACK_MS;
        let near_zero = |d: Display| old[d.idx()] <= gone;
        let jumped = |d: Display| new_times[d.idx()] + gone >= old[d.idx()] + next_ms;
        let steady_appeared = |d: Display| {
            let f = flag_bits[d.idx()];
            f.flag_shown && !f.flag_fallen && !self.steady[d.idx()]
        };
        // The running display first: it is the one whose time was being used.
        let order = match self.running {
            Some(Display::Right) => [Display::Right, Display::Left],
            _ => [Display::Left, Display::Right],
        };
        order
            .into_iter()
            .find(|&d| near_zero(d) && (steady_appeared(d) || (jumped(d) && jumped(d.other()))))
            .map(|display| PeriodEnd {
                display,
                period: self.period,
                before_press: false,
            })
    }

    /// By the move counter: the displays whose time jumped up by at least their next
    /// period's time with this reading (the clock added it at a press; an arbiter's
    /// correction of a counter that was behind adds it too). Never an increment.
    fn periods_added(
        &mut self,
        cfg: &ArbiterConfig,
        new_times: [u64; 2],
        elapsed: u64,
    ) -> Vec<Display> {
        let Some(control) = cfg.time_control.as_ref().filter(|_| by_counter(cfg)) else {
            return Vec::new();
        };
        let mut added = Vec::new();
        for d in [Display::Left, Display::Right] {
            let j = self.side_period[d.idx()];
            let Some(old) = self.times[d.idx()] else {
                continue;
            };
            if control.is_final(j) {
                continue;
            }
            let next_ms = control.period(j + 1).base_ms();
            // The time used since the last reading is allowed for, up to half the period:
            // a display standing still over a long silence is no addition.
            let used = elapsed.min(next_ms / 2);
            if new_times[d.idx()] + used + READING_SLACK_MS >= old + next_ms {
                self.side_period[d.idx()] = j + 1;
                added.push(d);
            }
        }
        added
    }

    /// When [`ClockModel::tick`] would call a silent running clock's flag if no reading comes
    /// before: the deadline of the rule below, exactly (`None`: no flag can fall by silence).
    pub fn silent_flag_due(&self, cfg: &ArbiterConfig) -> Option<Millis> {
        let d = self.running?;
        let at = self.last_reading_at?;
        let t = self.times[d.idx()]?;
        if !self.connected || self.fallen[d.idx()] || !self.final_period(cfg) {
            return None;
        }
        let delay = cfg
            .time_control
            .as_ref()
            .map_or(0, |c| c.period(self.period).us_delay_ms());
        Some(at.saturating_add(t.saturating_add(1_000).saturating_add(delay).max(3_000)))
    }

    /// Time passes with no reading: a running display whose time must have run out while the
    /// clock is silent (more than three seconds without a reading, and at least a second past
    /// zero by extrapolation, plus a US delay: such a clock stands still at the start of each
    /// turn) counts as a flag fall — in the final period only; before it, the clock goes on
    /// into the next period and keeps reporting.
    pub fn tick(&mut self, cfg: &ArbiterConfig, now: Millis) -> Option<Display> {
        let d = self.running?;
        let at = self.last_reading_at?;
        let t = self.times[d.idx()]?;
        let silent = now.saturating_sub(at);
        if !self.connected || self.fallen[d.idx()] || silent < 3_000 || !self.final_period(cfg) {
            return None;
        }
        let delay = cfg
            .time_control
            .as_ref()
            .map_or(0, |c| c.period(self.period).us_delay_ms());
        if silent >= t.saturating_add(1_000).saturating_add(delay) {
            self.fallen[d.idx()] = true;
            self.times[d.idx()] = Some(0);
            return Some(d);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board_input::{ClockStatus, DisplayFlags};

    /// A clock model with the settings it is given (the arbiter's, in a game).
    struct Clock {
        model: ClockModel,
        cfg: ArbiterConfig,
    }

    impl Clock {
        fn new(white_display: WhiteDisplay) -> Clock {
            Clock {
                model: ClockModel::new(white_display),
                cfg: ArbiterConfig {
                    white_display,
                    ..ArbiterConfig::default()
                },
            }
        }
        fn update(&mut self, ct: &ClockReading, now: Millis) -> ClockUpdate {
            self.model.update(&self.cfg, ct, now)
        }
        fn tick(&mut self, now: Millis) -> Option<Display> {
            self.model.tick(&self.cfg, now)
        }
        fn final_period(&self) -> bool {
            self.model.final_period(&self.cfg)
        }
    }

    impl std::ops::Deref for Clock {
        type Target = ClockModel;
        fn deref(&self) -> &ClockModel {
            &self.model
        }
    }

    fn dt(ms: u64) -> DisplayTime {
        let s = ms / 1000;
        DisplayTime {
            hours: (s / 3600) as u8,
            minutes: ((s / 60) % 60) as u8,
            seconds: (s % 60) as u8,
        }
    }

    fn reading(left: u64, right: u64, run: Option<Display>, lever_left_down: bool) -> ClockReading {
        ClockReading {
            left: dt(left),
            right: dt(right),
            left_flags: DisplayFlags::default(),
            right_flags: DisplayFlags::default(),
            status: ClockStatus {
                running: run.is_some(),
                lever_left_down,
                battery_low: false,
                left_running: run == Some(Display::Left),
                right_running: run == Some(Display::Right),
                connected: true,
            },
        }
    }

    #[test]
    fn press_detected_from_lever_and_increment_observed() {
        let mut c = Clock::new(WhiteDisplay::Auto);
        let u = c.update(&reading(180_000, 180_000, Some(Display::Left), false), 0);
        assert!(u.accepted && u.press.is_none());
        let u = c.update(
            &reading(177_000, 180_000, Some(Display::Left), false),
            3_000,
        );
        assert!(u.press.is_none());
        let u = c.update(
            &reading(179_000, 180_000, Some(Display::Right), true),
            3_100,
        );
        assert_eq!(u.press, Some(Display::Left));
        assert_eq!(c.observed_increment_ms(), Some(2_000));
    }

    #[test]
    fn noise_is_ignored() {
        let mut c = Clock::new(WhiteDisplay::Left);
        c.update(&reading(60_000, 50_000, Some(Display::Left), false), 0);
        let u = c.update(&ClockReading::default_connected(), 10);
        assert!(!u.accepted);
        assert_eq!(c.time_ms(Color::White), 60_000);
        let mut bad = reading(60_000, 50_000, Some(Display::Left), false);
        bad.left.minutes = 75;
        assert!(!c.update(&bad, 20).accepted);
        assert!(
            c.update(&reading(60_000, 50_000, None, false), 30)
                .flags
                .is_empty()
        );
        assert_eq!(c.running(), None);
    }

    #[test]
    fn multi_period_zero_without_flag_bit_is_not_a_fall() {
        let mut c = Clock::new(WhiteDisplay::Left);
        c.cfg.time_control = Some("40/5400:1800".parse().unwrap());
        c.update(&reading(1_000, 60_000, Some(Display::Left), false), 0);
        assert!(
            c.update(&reading(0, 60_000, Some(Display::Left), false), 1_000)
                .flags
                .is_empty()
        );
        // The clock adds the next period: it goes on counting.
        assert!(
            c.update(
                &reading(1_800_000, 60_000, Some(Display::Left), false),
                2_000
            )
            .flags
            .is_empty()
        );
        assert!(!c.fallen(Color::White));
        let mut fl = reading(0, 60_000, Some(Display::Left), false);
        fl.left_flags.flag_fallen = true;
        assert_eq!(c.update(&fl, 3_000).flags, vec![Display::Left]);
    }

    fn steady(mut r: ClockReading, d: Display) -> ClockReading {
        match d {
            Display::Left => r.left_flags.flag_shown = true,
            Display::Right => r.right_flags.flag_shown = true,
        }
        r
    }

    fn fide(control: &str) -> Clock {
        let mut c = Clock::new(WhiteDisplay::Left);
        c.cfg.time_control = Some(control.parse().unwrap());
        c
    }

    #[test]
    fn the_steady_flag_ends_the_period_once_and_is_no_fall() {
        let mut c = fide("4/20+1:10+1");
        c.update(&reading(1_000, 15_000, Some(Display::Left), false), 0);
        let u = c.update(
            &steady(
                reading(10_000, 25_000, Some(Display::Left), false),
                Display::Left,
            ),
            1_000,
        );
        let end = u.period_end.expect("the period ended");
        assert_eq!(
            (end.display, end.period, end.before_press),
            (Display::Left, 0, false)
        );
        assert!(u.flags.is_empty() && !c.fallen(Color::White));
        assert_eq!(c.period(), 1);
        assert!(c.final_period());
        // Still shown on the next readings: no second end.
        let u = c.update(
            &steady(
                reading(9_000, 25_000, Some(Display::Left), false),
                Display::Left,
            ),
            2_000,
        );
        assert_eq!(u.period_end, None);
    }

    #[test]
    fn only_both_displays_jumping_by_the_next_period_is_a_missed_period_end() {
        // A penalty to one side is no period end, nor a time added to a display not near zero.
        let mut c = fide("4/20+1:10+1");
        c.update(&reading(1_000, 15_000, Some(Display::Left), false), 0);
        let u = c.update(&reading(1_000, 135_000, Some(Display::Left), false), 500);
        assert_eq!(u.period_end, None);
        let mut c = fide("4/20+1:10+1");
        c.update(&reading(12_000, 15_000, Some(Display::Left), false), 0);
        let u = c.update(&reading(21_000, 25_000, Some(Display::Left), false), 1_000);
        assert_eq!(u.period_end, None);
        // Both jump while White's ran near zero, the reading with the flag missed (3 s).
        let mut c = fide("4/20+1:10+1");
        c.update(&reading(2_000, 15_000, Some(Display::Left), false), 0);
        let u = c.update(&reading(9_000, 25_000, Some(Display::Left), false), 3_000);
        assert_eq!(u.period_end.map(|e| e.display), Some(Display::Left));
        // In the final period nothing is a period end.
        let u = c.update(&reading(19_000, 35_000, Some(Display::Left), false), 4_000);
        assert_eq!(u.period_end, None);
    }

    #[test]
    fn a_press_after_the_flag_shows_the_next_period_and_is_no_increment() {
        let mut c = fide("4/20+1:10+1");
        c.update(&reading(1_000, 15_000, Some(Display::Left), false), 0);
        // White's press (left down) in the reading that also shows his steady flag.
        let u = c.update(
            &steady(
                reading(11_000, 25_000, Some(Display::Right), true),
                Display::Left,
            ),
            1_000,
        );
        assert_eq!(u.press, Some(Display::Left));
        assert!(u.period_end.is_some_and(|e| e.before_press));
        assert_eq!(c.observed_increment_ms(), None);
    }

    #[test]
    fn flag_from_running_to_zero_and_from_silence() {
        let mut c = Clock::new(WhiteDisplay::Right);
        c.update(&reading(5_000, 1_000, Some(Display::Right), true), 0);
        let u = c.update(&reading(5_000, 0, Some(Display::Right), true), 1_000);
        assert_eq!(u.flags, vec![Display::Right]);
        assert!(c.fallen(Color::White));

        let mut c = Clock::new(WhiteDisplay::Right);
        c.update(&reading(5_000, 1_000, Some(Display::Left), false), 0);
        assert_eq!(c.tick(2_000), None);
        assert_eq!(c.tick(6_500), Some(Display::Left));
        assert!(c.fallen(Color::Black));
    }

    impl ClockReading {
        fn default_connected() -> ClockReading {
            ClockReading {
                status: ClockStatus {
                    connected: true,
                    ..ClockStatus::default()
                },
                ..ClockReading::default()
            }
        }
    }
}
