//! What the clock says about a gap: how many plies it allows.
//!
//! A DGT clock runs on its own batteries while the board is unplugged, so the reading after
//! a gap, set against the last one before it, is a witness of the presses made meanwhile:
//! - each side's time goes down only while its clock runs and up only by an increment at its
//!   own press, so with an increment the presses of each side are bounded from both ends;
//! - while the clock ran throughout, the times used add up to the time that passed, which
//!   pins the number of presses in all (to within the displays' whole seconds).
//!
//! Without an increment the times say nothing about the count; the side whose clock runs
//! (its parity) is then all the clock tells, and the search uses it directly.
//!
//! Nothing is guessed: every bound allows for the displays' rounding and the readings' age
//! ([`SLACK_MS`]), and a witness that allows no ply count at all is not used (someone pressed
//! twice or set the clock: the board alone decides then).
//!
//! Pure: time comes in as milliseconds.

use shakmaty::Color;

/// What the readings may be off by: under a second on each display, before and after, and
/// the age of the last reading before the gap (the clock reports about once a second).
pub const SLACK_MS: i64 = 3_500;

/// One clock reading: each side's time and whether the clock was running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    /// (white, black) in ms.
    pub times: [u64; 2],
    pub running: bool,
    /// When the session got it.
    pub at: u64,
}

/// The readings around a gap and the increment in force (0: none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Witness {
    pub before: Reading,
    pub after: Reading,
    pub increment_ms: u64,
}

impl Witness {
    /// Whether `plies` plies made from a position with `first` to move fit the clock.
    pub fn allows(&self, first: Color, plies: usize) -> bool {
        let presses = |c: Color| -> i64 {
            let own = if c == first {
                plies.div_ceil(2)
            } else {
                plies / 2
            };
            own as i64
        };
        let elapsed = self.after.at.saturating_sub(self.before.at) as i64;
        let delta = |c: Color| {
            let i = usize::from(c == Color::Black);
            self.after.times[i] as i64 - self.before.times[i] as i64
        };
        let inc = self.increment_ms as i64;
        if inc == 0 {
            return true;
        }
        for c in Color::ALL {
            // after = before - used + inc * presses, 0 <= used <= elapsed.
            let gained = inc * presses(c);
            if gained < delta(c) - SLACK_MS || gained > delta(c) + elapsed + SLACK_MS {
                return false;
            }
        }
        if self.before.running && self.after.running {
            // The times used add up to the time that passed.
            let gained = inc * presses(Color::White) + inc * presses(Color::Black);
            let expected = delta(Color::White) + delta(Color::Black) + elapsed;
            if (gained - expected).abs() > SLACK_MS {
                return false;
            }
        }
        true
    }

    /// Whether any ply count up to `max` fits (a witness that allows none is not used).
    pub fn allows_any(&self, first: Color, max: usize) -> bool {
        (1..=max).any(|n| self.allows(first, n))
    }

    /// The most plies the clock allows since the gap began (`first` to move then), counting
    /// one more for a last move whose press may still be to come; `None` when it bounds
    /// nothing: no increment (the times say nothing about the count), a count past
    /// [`COUNTED_PLIES`] still allowed, or no count allowed at all (someone set the clock).
    pub fn most_plies(&self, first: Color) -> Option<usize> {
        if self.increment_ms == 0 || self.allows(first, COUNTED_PLIES) {
            return None;
        }
        (1..COUNTED_PLIES)
            .rev()
            .find(|&n| self.allows(first, n))
            .map(|n| n + 1)
    }
}

/// How far [`Witness::most_plies`] counts: a clock that allows this many plies bounds
/// nothing a search could use.
pub const COUNTED_PLIES: usize = 64;

#[cfg(test)]
mod tests {
    use super::*;

    fn witness(before: [u64; 2], after: [u64; 2], elapsed: u64, inc: u64) -> Witness {
        Witness {
            before: Reading {
                times: before,
                running: true,
                at: 10_000,
            },
            after: Reading {
                times: after,
                running: true,
                at: 10_000 + elapsed,
            },
            increment_ms: inc,
        }
    }

    #[test]
    fn with_an_increment_the_presses_are_counted() {
        // 3+2, White to move: 3 plies in 4 s (W 2 presses, B 1): W used 2.5 s, B 1.5 s. The
        // displays' seconds leave a press either way, no more.
        let w = witness([180_000, 180_000], [181_500, 180_500], 4_000, 2_000);
        let fits: Vec<usize> = (1..=6).filter(|&n| w.allows(Color::White, n)).collect();
        assert_eq!(fits, [2, 3, 4]);
        // 90+30: even a second's rounding cannot hide a press.
        let w = witness(
            [5_400_000, 5_400_000],
            [5_429_000, 5_400_000],
            1_000,
            30_000,
        );
        let fits: Vec<usize> = (1..=6).filter(|&n| w.allows(Color::White, n)).collect();
        assert_eq!(fits, [1]);
    }

    #[test]
    fn without_an_increment_every_count_fits() {
        let w = witness([60_000, 60_000], [58_000, 57_000], 5_000, 0);
        assert!((1..=6).all(|n| w.allows(Color::White, n)));
    }

    #[test]
    fn the_most_plies_an_increment_allows_bound_the_gap() {
        // The 3+2 example above: 2 to 4 plies fit, and a fifth may still await its press.
        let w = witness([180_000, 180_000], [181_500, 180_500], 4_000, 2_000);
        assert_eq!(w.most_plies(Color::White), Some(5));
        // Without an increment nothing bounds the count.
        let w = witness([60_000, 60_000], [58_000, 57_000], 5_000, 0);
        assert_eq!(w.most_plies(Color::White), None);
        // A clock set by hand (two minutes more each) allows no count: it bounds nothing.
        let w = witness([60_000, 60_000], [180_000, 180_000], 2_000, 2_000);
        assert_eq!(w.most_plies(Color::White), None);
    }

    #[test]
    fn a_witness_that_fits_nothing_says_so() {
        // The times went up by a minute: an arbiter set the clock.
        let w = witness([60_000, 60_000], [120_000, 120_000], 2_000, 2_000);
        assert!(!w.allows_any(Color::White, 6));
    }
}
