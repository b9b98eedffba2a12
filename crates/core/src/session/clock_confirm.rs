//! One clock reading is not a fact: the gate between the clock's readings and everything that
//! acts on them (the session's own press detection, the arbiter, the gap's clock path).
//!
//! The clock's frame (BWTIME) carries no check of its own and the clock–board cable is noisy:
//! one flipped bit can show a flag on a display at 4:59, a lever press no one made, or a time
//! of 9:59:59. So every reading is compared with the last *believed* one:
//!
//! * **Ordinary** readings pass at once: the same status bits (running, lever, bits 3/4,
//!   connected) and the same flag bits as the believed reading, a stopped display unchanged,
//!   the running display down by no more than the time elapsed plus [`SLACK_MS`] (never up,
//!   never newly at 0:00).
//! * **A press the clock corroborates itself** passes at once: the lever changed *and* the
//!   running-display bits 3/4 (which a DGT 3000 sets in agreement with the lever) changed with
//!   it, before and after agreeing with the lever; no flag fell; the presser's display lost no
//!   more than the time elapsed (it may gain up to [`PRESS_GAIN_MAX_MS`]: an increment, a
//!   Bronstein refund), the other display likewise lost no more than that and gained nothing.
//!   Three status bits change together at a real press: no single bit flip makes one, so such
//!   a press costs no delay.
//! * Anything else is **decisive** and held: a flag bit, a display newly at 0:00, a time jump
//!   up or down, the clock started or stopped, connected or not, a press with no bits 3/4 to
//!   corroborate it (other clocks), or one whose bits disagree with its lever. A held reading
//!   is decided by what comes next:
//!   - the next reading continues the believed one (ordinary or a corroborated press from
//!     it): the held reading was noise and is dropped;
//!   - the next reading continues the held one (ordinary, a corroborated press, the clock
//!     started or stopped from it): it is **confirmed** and acted on, with its own time (a
//!     press keeps the time it was read at, never the confirmation's);
//!   - the next reading continues neither: if no display in it lost more than the elapsed
//!     time since the believed reading, it may be the clock's real next state and takes the
//!     held one's place (which is dropped) — unless the held one is a consistent flag fall
//!     (below), which a blocked clock would not follow with anything; otherwise it is
//!     dropped itself. A clock that speaks again after a "stopped" or "no clock" reading
//!     without continuing it was never stopped;
//!   - no reading comes: a blocked clock after a real flag fall sends nothing more (its
//!     display no longer changes), nor does a stopped or unplugged clock. A flag on a display
//!     at 0:00 that was running and near zero is confirmed after [`FLAG_WAIT_MS`]; a stopped
//!     clock (also one set to new times while stopped) or a clock gone after [`STOP_WAIT_MS`], longer than the
//!     second in which a running clock speaks again (one flipped bit makes such a reading);
//!     any other (a running clock speaks again within a second) is dropped after
//!     [`HOLD_LIMIT_MS`] without an answer.
//!   - the link goes down or comes up, or a frame is lost on the line, while a reading is
//!     held: it is unconfirmed and dropped. An operator command decides it at once as the
//!     deadline would.
//!
//! While a reading is held, everything the board reports after it (field updates, dumps, its
//! memory) and the ticks are held too, and replayed in their original order with their
//! original times once the reading is decided: the session sees exactly the noise-free
//! sequence, only later. That delay (a `MovePlayed` up to the next clock frame, about a second;
//! a real flag fall [`FLAG_WAIT_MS`] after its frame) is paid only while a reading is held:
//! never at an ordinary reading or a corroborated press.
//!
//! Readings the clock model ignores anyway (an all-zero reading, digits out of range) are
//! dropped here and change nothing. A held reading is not journalled state: a session restored
//! from its journal starts with nothing held, as if the unconfirmed reading never came.

use crate::board_input::BoardInput;
use crate::board_input::{ClockReading, DisplayFlags};
use crate::vocab::Millis;

use super::Input;

/// How long a held flag fall blocked at 0:00 on a display that ran out waits for a
/// contradiction before it is believed (a blocked clock sends nothing more).
pub const FLAG_WAIT_MS: Millis = 1_000;

/// How long a held reading of a stopped or unplugged clock waits for a contradiction before it
/// is believed: longer than the second in which a running clock speaks again, since one flipped
/// bit makes such a reading.
pub const STOP_WAIT_MS: Millis = 2_000;

/// How long any other held reading waits for the clock's next frame before it is dropped as
/// unconfirmed (a running clock sends one every second; a US delay holds the display still).
pub const HOLD_LIMIT_MS: Millis = 10_000;

/// How far a running display may fall behind the time elapsed between two readings: the
/// displays show whole seconds and a reading may arrive late.
pub const SLACK_MS: u64 = 1_500;

/// The most a press may add to the presser's display (an increment, a Bronstein refund).
pub const PRESS_GAIN_MAX_MS: u64 = 300_000;

/// A physical half of the clock (index into the reading's displays).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Half {
    Left,
    Right,
}

const HALVES: [Half; 2] = [Half::Left, Half::Right];

fn ms(t: &ClockReading, h: Half) -> u64 {
    match h {
        Half::Left => t.left.as_millis(),
        Half::Right => t.right.as_millis(),
    }
}

fn flags(t: &ClockReading, h: Half) -> DisplayFlags {
    match h {
        Half::Left => t.left_flags,
        Half::Right => t.right_flags,
    }
}

/// The display that runs, as the clock model reads it: bits 3/4 when they tell, else the lever.
fn running(t: &ClockReading) -> Option<Half> {
    let s = t.status;
    if !s.running {
        None
    } else if s.left_running != s.right_running {
        Some(if s.left_running {
            Half::Left
        } else {
            Half::Right
        })
    } else if s.lever_left_down {
        Some(Half::Right)
    } else {
        Some(Half::Left)
    }
}

/// Bits 3/4 say exactly one display runs and agree with the lever (left down: right runs).
fn bits_agree(t: &ClockReading) -> bool {
    let s = t.status;
    s.left_running != s.right_running && s.right_running == s.lever_left_down
}

/// The flag bits that matter (the time-per-move indicator decides nothing).
fn same_flags(a: DisplayFlags, b: DisplayFlags) -> bool {
    a.flag_fallen == b.flag_fallen && a.flag_shown == b.flag_shown
}

/// A reading the clock model ignores: digits out of range, or all zero with nothing set.
fn ignorable(t: &ClockReading) -> bool {
    if !t.status.connected {
        return false;
    }
    let out_of_range = [t.left, t.right]
        .iter()
        .any(|d| d.hours > 9 || d.minutes > 59 || d.seconds > 59);
    let s = t.status;
    let nothing = HALVES.iter().all(|&h| {
        let f = flags(t, h);
        ms(t, h) == 0 && !f.flag_fallen && !f.flag_shown
    }) && !s.running
        && !s.left_running
        && !s.right_running;
    out_of_range || nothing
}

/// A reading and when it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamped {
    times: ClockReading,
    at: Millis,
}

/// How `to` follows from `from` (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Follows {
    /// What a clock does by itself between two readings.
    Ordinary,
    /// A press the clock's own status bits corroborate.
    Press,
}

/// `d` lost no more than a running display can in `elapsed`, gained nothing, and did not
/// newly reach zero.
fn ran_down(from: u64, to: u64, elapsed: u64) -> bool {
    to <= from && from - to <= elapsed + SLACK_MS && !(to == 0 && from > 0)
}

fn follows(from: &Stamped, to: &ClockReading, now: Millis) -> Option<Follows> {
    let elapsed = now.saturating_sub(from.at);
    let (a, b) = (&from.times, to);
    if !a.status.connected || !b.status.connected {
        // Still no clock: nothing to act on either way.
        return (!a.status.connected && !b.status.connected).then_some(Follows::Ordinary);
    }
    let (sa, sb) = (a.status, b.status);
    let same_status = sa.running == sb.running
        && sa.lever_left_down == sb.lever_left_down
        && sa.left_running == sb.left_running
        && sa.right_running == sb.right_running;
    let flags_kept = HALVES.iter().all(|&h| same_flags(flags(a, h), flags(b, h)));
    if same_status && flags_kept {
        let run = running(a);
        let times_ok = HALVES.iter().all(|&h| {
            let (x, y) = (ms(a, h), ms(b, h));
            if run == Some(h) {
                ran_down(x, y, elapsed)
            } else {
                x == y
            }
        });
        return times_ok.then_some(Follows::Ordinary);
    }
    // A press: the lever and bits 3/4 change together, agreeing before and after.
    let press = sa.running
        && sb.running
        && sa.lever_left_down != sb.lever_left_down
        && bits_agree(a)
        && bits_agree(b);
    let presser = running(a)?;
    // No flag falls at a press; a steady flag may go out (the next period's first press).
    let flags_ok = HALVES.iter().all(|&h| {
        let (fa, fb) = (flags(a, h), flags(b, h));
        fa.flag_fallen == fb.flag_fallen && (fa.flag_shown || !fb.flag_shown)
    });
    let times_ok = HALVES.iter().all(|&h| {
        let (x, y) = (ms(a, h), ms(b, h));
        if h == presser {
            y + elapsed + SLACK_MS >= x && y <= x + PRESS_GAIN_MAX_MS && !(y == 0 && x > 0)
        } else {
            ran_down(x, y, elapsed)
        }
    });
    (press && flags_ok && times_ok).then_some(Follows::Press)
}

/// `to` could be the clock's real state after `from`: connected, and no display lost more
/// than the time elapsed (time may be added: a penalty, a new period).
fn plausible(from: &Stamped, to: &ClockReading, now: Millis) -> bool {
    let elapsed = now.saturating_sub(from.at);
    to.status.connected
        && HALVES
            .iter()
            .all(|&h| ms(to, h) + elapsed + SLACK_MS >= ms(&from.times, h))
}

/// `to` is `from` with the clock started or stopped (start/stop button): the lever and the
/// running-display bits kept, no flag changed, a display running on either side lost no more
/// than the time elapsed, the other unchanged.
fn start_stop(from: &Stamped, to: &ClockReading, now: Millis) -> bool {
    let elapsed = now.saturating_sub(from.at);
    let (a, b) = (&from.times, to);
    let (sa, sb) = (a.status, b.status);
    sa.connected
        && sb.connected
        && sa.running != sb.running
        && sa.lever_left_down == sb.lever_left_down
        && sa.left_running == sb.left_running
        && sa.right_running == sb.right_running
        && HALVES.iter().all(|&h| same_flags(flags(a, h), flags(b, h)))
        && HALVES.iter().all(|&h| {
            let (x, y) = (ms(a, h), ms(b, h));
            if running(a) == Some(h) || running(b) == Some(h) {
                ran_down(x, y, elapsed)
            } else {
                x == y
            }
        })
}

/// `to` continues `held`: as a clock goes on by itself, at a press, or started or stopped.
fn continues(held: &Stamped, to: &ClockReading, now: Millis) -> bool {
    follows(held, to, now).is_some() || start_stop(held, to, now)
}

/// What silence after a held reading means: what the clock does after it, or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Silence {
    /// A flag fell (bit 4, blocked at 0:00) on a display that was running and near zero: a
    /// blocked clock sends nothing more.
    Flag,
    /// The clock was stopped (or set while stopped), or is gone: it sends nothing more.
    Stopped,
    /// A running clock speaks again within a second: silence confirms nothing.
    Unexpected,
}

fn silence_after(base: Option<&Stamped>, held: &Stamped) -> Silence {
    let t = &held.times;
    if !t.status.connected {
        return Silence::Stopped;
    }
    let new_flags: Vec<Half> = HALVES
        .iter()
        .copied()
        .filter(|&h| {
            flags(t, h).flag_fallen && base.is_none_or(|b| !flags(&b.times, h).flag_fallen)
        })
        .collect();
    if !new_flags.is_empty() {
        let consistent = new_flags.iter().all(|&h| {
            ms(t, h) == 0
                && base.is_none_or(|b| {
                    let elapsed = held.at.saturating_sub(b.at);
                    running(&b.times) == Some(h) && ms(&b.times, h) <= elapsed + SLACK_MS
                })
        });
        return if consistent {
            Silence::Flag
        } else {
            Silence::Unexpected
        };
    }
    // A stopped clock sends nothing more, whether it was just stopped or set to new times
    // while stopped (an arbiter's correction before the game or in a pause). One flipped bit
    // of a stopped clock's frame changes only what it shows until it speaks again: a stopped
    // display makes no press and no flag. A steady flag appearing is a period's change, which
    // only the next frame confirms.
    let new_steady = HALVES
        .iter()
        .any(|&h| flags(t, h).flag_shown && base.is_none_or(|b| !flags(&b.times, h).flag_shown));
    if !t.status.running && !new_steady {
        Silence::Stopped
    } else {
        Silence::Unexpected
    }
}

/// How a held reading ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decision {
    Confirmed,
    /// Never acted on, and why.
    Dropped(&'static str),
}

/// A decisive reading waiting for the clock to confirm it, and what came after it.
#[derive(Debug, Clone)]
struct Held {
    reading: Stamped,
    queue: Vec<(Input, Millis)>,
}

/// The gate (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct ClockConfirm {
    /// The last believed reading (`None`: none since the link came up).
    base: Option<Stamped>,
    held: Option<Held>,
    /// Readings dropped as noise or left unconfirmed since the session began.
    dropped: u64,
    /// Held readings confirmed and acted on.
    confirmed: u64,
    /// Readings dropped since the session last asked, and why (for the log).
    dropped_news: Vec<(ClockReading, &'static str)>,
}

impl ClockConfirm {
    /// Readings dropped (noise, unconfirmed) and held readings confirmed, so far.
    pub fn counts(&self) -> (u64, u64) {
        (self.dropped, self.confirmed)
    }

    /// The readings dropped since the last call, each with why, oldest first.
    pub fn take_dropped(&mut self) -> Vec<(ClockReading, &'static str)> {
        std::mem::take(&mut self.dropped_news)
    }

    fn drop_reading(&mut self, reading: ClockReading, why: &'static str) {
        self.dropped += 1;
        if self.dropped_news.len() < 16 {
            self.dropped_news.push((reading, why));
        }
    }

    /// A reading is held: board input waits behind it.
    pub fn holding(&self) -> bool {
        self.held.is_some()
    }

    /// When the held reading is decided if no frame comes.
    pub fn deadline(&self) -> Option<Millis> {
        self.held.as_ref().map(|h| {
            let wait = match silence_after(self.base.as_ref(), &h.reading) {
                Silence::Flag => FLAG_WAIT_MS,
                Silence::Stopped => STOP_WAIT_MS,
                Silence::Unexpected => HOLD_LIMIT_MS,
            };
            h.reading.at.saturating_add(wait)
        })
    }

    /// Take one input at `now`; returns the inputs to act on now, in order, each with the
    /// time it happened (empty: it waits behind a held reading, or was noise).
    pub fn admit(&mut self, input: Input, now: Millis) -> Vec<(Input, Millis)> {
        match input {
            Input::Board(BoardInput::Clock(times)) => self.reading(times, now),
            Input::Command(_) => {
                let mut out = self.decide_now();
                out.push((input, now));
                out
            }
            Input::Link(_) | Input::LineLoss => {
                let mut out = self.release(Decision::Dropped(match input {
                    Input::LineLoss => "a frame was lost on the line before the clock confirmed it",
                    _ => "the link changed before the clock confirmed it",
                }));
                if matches!(input, Input::Link(_)) {
                    // The lever may have moved while nobody listened: a fresh start.
                    self.base = None;
                }
                out.push((input, now));
                out
            }
            Input::Tick => {
                if self.deadline().is_some_and(|d| now >= d) {
                    let mut out = self.decide_now();
                    out.push((input, now));
                    out
                } else {
                    self.pass_or_queue(input, now)
                }
            }
            other => self.pass_or_queue(other, now),
        }
    }

    fn pass_or_queue(&mut self, input: Input, now: Millis) -> Vec<(Input, Millis)> {
        match self.held.as_mut() {
            Some(h) => {
                h.queue.push((input, now));
                Vec::new()
            }
            None => vec![(input, now)],
        }
    }

    /// Decide the held reading as its deadline would: believed if silence is normal after it.
    fn decide_now(&mut self) -> Vec<(Input, Millis)> {
        let confirm = self
            .held
            .as_ref()
            .is_some_and(|h| silence_after(self.base.as_ref(), &h.reading) != Silence::Unexpected);
        if confirm {
            self.release(Decision::Confirmed)
        } else {
            self.release(Decision::Dropped("no clock frame came to confirm it"))
        }
    }

    /// End the hold: the held reading first if confirmed (it becomes the believed one),
    /// then everything that waited behind it.
    fn release(&mut self, decision: Decision) -> Vec<(Input, Millis)> {
        let Some(h) = self.held.take() else {
            return Vec::new();
        };
        let mut out = Vec::with_capacity(h.queue.len() + 1);
        if decision == Decision::Confirmed {
            self.confirmed += 1;
            self.base = Some(h.reading);
            out.push((
                Input::Board(BoardInput::Clock(h.reading.times)),
                h.reading.at,
            ));
        } else if let Decision::Dropped(why) = decision {
            self.drop_reading(h.reading.times, why);
        }
        out.extend(h.queue);
        out
    }

    fn reading(&mut self, times: ClockReading, now: Millis) -> Vec<(Input, Millis)> {
        if ignorable(&times) {
            return Vec::new();
        }
        let mut out = Vec::new();
        if let Some(h) = self.held.as_ref() {
            let from_base = self.base.as_ref().and_then(|b| follows(b, &times, now));
            if from_base.is_some() {
                out = self.release(Decision::Dropped(
                    "the next clock frame continued the one before it",
                ));
            } else if continues(&h.reading, &times, now) {
                out = self.release(Decision::Confirmed);
            } else if silence_after(self.base.as_ref(), &h.reading) != Silence::Flag
                && self.base.as_ref().is_none_or(|b| plausible(b, &times, now))
            {
                // Perhaps the clock's real next state: it takes the held one's place.
                out = self.release(Decision::Dropped("a later clock frame did not continue it"));
            } else {
                self.drop_reading(
                    times,
                    "it follows neither the believed reading nor the held one",
                );
                return out;
            }
        }
        let reading = Stamped { times, at: now };
        let passes = match self.base.as_ref() {
            Some(b) => follows(b, &times, now).is_some(),
            // The first reading since the link came up is no press; only a flag waits.
            None => !HALVES.iter().any(|&h| flags(&times, h).flag_fallen),
        };
        if passes {
            self.base = Some(reading);
            out.push((Input::Board(BoardInput::Clock(times)), now));
        } else {
            self.held = Some(Held {
                reading,
                queue: Vec::new(),
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board_input::{ClockStatus, DisplayTime};

    fn dt(ms: u64) -> DisplayTime {
        let s = ms / 1000;
        DisplayTime {
            hours: (s / 3600) as u8,
            minutes: ((s / 60) % 60) as u8,
            seconds: (s % 60) as u8,
        }
    }

    /// A DGT 3000 reading: left runs unless the left side of the lever is down.
    fn r(left: u64, right: u64, left_down: bool) -> ClockReading {
        ClockReading {
            left: dt(left),
            right: dt(right),
            status: ClockStatus {
                running: true,
                lever_left_down: left_down,
                left_running: !left_down,
                right_running: left_down,
                connected: true,
                ..ClockStatus::default()
            },
            ..ClockReading::default()
        }
    }

    fn times(out: &[(Input, Millis)]) -> Vec<Millis> {
        out.iter().map(|(_, at)| *at).collect()
    }

    fn reading_of(i: &Input) -> Option<ClockReading> {
        match i {
            Input::Board(BoardInput::Clock(t)) => Some(*t),
            _ => None,
        }
    }

    #[test]
    fn ordinary_readings_and_corroborated_presses_pass_at_once() {
        let mut g = ClockConfirm::default();
        assert_eq!(
            g.admit(
                Input::Board(BoardInput::Clock(r(300_000, 300_000, false))),
                0
            )
            .len(),
            1
        );
        assert_eq!(
            g.admit(
                Input::Board(BoardInput::Clock(r(299_000, 300_000, false))),
                1_000
            )
            .len(),
            1
        );
        // White presses (left down): bits 3/4 follow the lever; +2 s increment.
        assert_eq!(
            g.admit(
                Input::Board(BoardInput::Clock(r(300_500, 300_000, true))),
                1_400
            )
            .len(),
            1
        );
        assert!(!g.holding());
    }

    #[test]
    fn a_flipped_lever_is_held_and_refuted_by_the_next_frame_with_the_moves_replayed() {
        let mut g = ClockConfirm::default();
        g.admit(
            Input::Board(BoardInput::Clock(r(300_000, 300_000, false))),
            0,
        );
        let mut flipped = r(300_000, 300_000, false);
        flipped.status.lever_left_down = true;
        assert!(
            g.admit(Input::Board(BoardInput::Clock(flipped)), 300)
                .is_empty()
        );
        assert!(g.holding());
        assert!(g.admit(Input::Tick, 400).is_empty());
        let out = g.admit(
            Input::Board(BoardInput::Clock(r(299_000, 300_000, false))),
            1_000,
        );
        assert_eq!(times(&out), [400, 1_000]);
        assert!(matches!(out[0].0, Input::Tick));
        assert_eq!(reading_of(&out[1].0), Some(r(299_000, 300_000, false)));
        assert_eq!(g.counts(), (1, 0));
    }

    #[test]
    fn a_flag_on_a_display_far_from_zero_never_passes() {
        let mut g = ClockConfirm::default();
        g.admit(
            Input::Board(BoardInput::Clock(r(299_000, 300_000, false))),
            0,
        );
        let mut flag = r(299_000, 300_000, false);
        flag.left_flags.flag_fallen = true;
        assert!(
            g.admit(Input::Board(BoardInput::Clock(flag)), 500)
                .is_empty()
        );
        // Silence does not confirm it: a running clock speaks again.
        assert_eq!(g.deadline(), Some(500 + HOLD_LIMIT_MS));
        let out = g.admit(Input::Tick, 500 + HOLD_LIMIT_MS);
        assert_eq!(out.len(), 1, "only the tick");
        assert_eq!(g.counts(), (1, 0));
    }

    #[test]
    fn a_real_flag_blocked_at_zero_is_confirmed_by_silence() {
        let mut g = ClockConfirm::default();
        g.admit(Input::Board(BoardInput::Clock(r(1_000, 300_000, false))), 0);
        let mut flag = r(0, 300_000, false);
        flag.left_flags.flag_fallen = true;
        assert!(
            g.admit(Input::Board(BoardInput::Clock(flag)), 1_000)
                .is_empty()
        );
        assert_eq!(g.deadline(), Some(1_000 + FLAG_WAIT_MS));
        assert!(g.admit(Input::Tick, 1_500).is_empty());
        let out = g.admit(Input::Tick, 2_000);
        assert_eq!(
            times(&out),
            [1_000, 1_500, 2_000],
            "the flag keeps its own time"
        );
        assert_eq!(reading_of(&out[0].0), Some(flag));
        assert_eq!(g.counts(), (0, 1));
    }

    #[test]
    fn a_time_jump_is_confirmed_by_the_next_frame_continuing_it() {
        let mut g = ClockConfirm::default();
        g.admit(
            Input::Board(BoardInput::Clock(r(200_000, 300_000, false))),
            0,
        );
        // An arbiter adds two minutes to Black's display.
        assert!(
            g.admit(
                Input::Board(BoardInput::Clock(r(199_000, 420_000, false))),
                1_000
            )
            .is_empty()
        );
        let out = g.admit(
            Input::Board(BoardInput::Clock(r(198_000, 420_000, false))),
            2_000,
        );
        assert_eq!(times(&out), [1_000, 2_000]);
        assert_eq!(g.counts(), (0, 1));
    }

    #[test]
    fn a_flipped_connected_bit_before_a_real_flag_never_hides_it() {
        let mut g = ClockConfirm::default();
        g.admit(Input::Board(BoardInput::Clock(r(1_000, 300_000, false))), 0);
        let mut gone = r(1_000, 300_000, false);
        gone.status.connected = false;
        assert!(
            g.admit(Input::Board(BoardInput::Clock(gone)), 100)
                .is_empty()
        );
        assert_eq!(g.deadline(), Some(100 + STOP_WAIT_MS));
        // The clock speaks again, blocked at zero: the "no clock" reading was noise.
        let mut flag = r(0, 300_000, false);
        flag.left_flags.flag_fallen = true;
        assert!(
            g.admit(Input::Board(BoardInput::Clock(flag)), 1_000)
                .is_empty()
        );
        let out = g.admit(Input::Tick, 2_000);
        assert_eq!(reading_of(&out[0].0), Some(flag));
        assert_eq!(g.counts(), (1, 1));
    }

    #[test]
    fn a_link_change_drops_what_is_held() {
        let mut g = ClockConfirm::default();
        g.admit(Input::Board(BoardInput::Clock(r(1_000, 300_000, false))), 0);
        let mut flag = r(0, 300_000, false);
        flag.left_flags.flag_fallen = true;
        g.admit(Input::Board(BoardInput::Clock(flag)), 1_000);
        let out = g.admit(Input::Link(false), 1_100);
        assert_eq!(out.len(), 1);
        assert!(matches!(out[0].0, Input::Link(false)));
        assert!(!g.holding());
    }

    #[test]
    fn a_clock_set_while_stopped_is_believed_after_its_silence() {
        let mut g = ClockConfirm::default();
        let mut stopped = r(300_000, 300_000, false);
        stopped.status.running = false;
        g.admit(Input::Board(BoardInput::Clock(stopped)), 0);
        // The arbiter sets 5:03 on both sides and leaves the clock stopped: it sends one
        // frame and then nothing, as a stopped clock does.
        let mut set = r(303_000, 303_000, false);
        set.status.running = false;
        assert!(
            g.admit(Input::Board(BoardInput::Clock(set)), 500)
                .is_empty()
        );
        assert_eq!(g.deadline(), Some(500 + STOP_WAIT_MS));
        let out = g.admit(Input::Tick, 500 + STOP_WAIT_MS);
        assert_eq!(reading_of(&out[0].0), Some(set));
        assert_eq!(g.counts(), (0, 1));
    }
}
