//! When to push: the pacing of `eboardctl broadcast`, pure, with time passed in.
//!
//! A change is pushed as soon as the last push is a second old (so within a second of the
//! move, and never more than one push a second), one push at a time. After a refusal that
//! may pass (429, a 5xx, the network) the next push waits as `Retry-After` says, or else a
//! backoff that doubles from a second up to a minute; what is sent then is the state at
//! that moment, never a queue of the states in between (the broadcaster keeps no queue: it
//! asks the round for its body when a push is due).

use eboard_core::vocab::Millis;

/// The least time between the starts of two pushes.
pub const MIN_INTERVAL_MS: Millis = 1_000;
/// The first wait after a failed push; it doubles with each failure in a row.
pub const FIRST_BACKOFF_MS: Millis = 1_000;
/// The longest wait after failures (when lichess names no `Retry-After`).
pub const MAX_BACKOFF_MS: Millis = 60_000;
/// The longest `Retry-After` honoured: a longer one is taken as this, so a broadcast never
/// goes quiet for long on one odd header.
pub const MAX_RETRY_AFTER_MS: Millis = 600_000;

/// How a push ended, as far as pacing goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paced {
    /// Taken: the next change may go a second after this push started.
    Accepted,
    /// Not taken, try again: after `retry_after_ms` when the answer said, else the backoff.
    Retry { retry_after_ms: Option<Millis> },
}

/// The pacing state.
#[derive(Debug, Clone, Default)]
pub struct Pacer {
    last_start: Option<Millis>,
    in_flight: bool,
    not_before: Millis,
    failures: u32,
}

impl Pacer {
    /// When a push may start, given whether there is something to push: `None` when nothing
    /// is due (nothing changed, or a push is on its way).
    pub fn due_at(&self, changed: bool) -> Option<Millis> {
        if !changed || self.in_flight {
            return None;
        }
        let after_last = self.last_start.map_or(0, |t| t + MIN_INTERVAL_MS);
        Some(after_last.max(self.not_before))
    }

    /// Whether a push should start now.
    pub fn ready(&self, now: Millis, changed: bool) -> bool {
        self.due_at(changed).is_some_and(|at| at <= now)
    }

    /// A push started.
    pub fn started(&mut self, now: Millis) {
        self.in_flight = true;
        self.last_start = Some(now);
    }

    /// The push that was on its way ended; returns the wait before the next one may start
    /// after a failure (0 after success).
    pub fn ended(&mut self, now: Millis, how: Paced) -> Millis {
        self.in_flight = false;
        match how {
            Paced::Accepted => {
                self.failures = 0;
                self.not_before = 0;
                0
            }
            Paced::Retry { retry_after_ms } => {
                let backoff = FIRST_BACKOFF_MS
                    .saturating_mul(1 << self.failures.min(16))
                    .min(MAX_BACKOFF_MS);
                self.failures = self.failures.saturating_add(1);
                let wait = match retry_after_ms {
                    Some(ms) => ms.min(MAX_RETRY_AFTER_MS),
                    None => backoff,
                };
                self.not_before = now + wait;
                wait
            }
        }
    }

    /// Whether a push is on its way.
    pub fn in_flight(&self) -> bool {
        self.in_flight
    }
}

/// A `Retry-After` header's delay: whole seconds (lichess's form). An HTTP date, or anything
/// else, is not read (the backoff applies).
pub fn retry_after_ms(header: &str) -> Option<Millis> {
    header
        .trim()
        .parse::<u64>()
        .ok()
        .map(|s| s.saturating_mul(1000))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_goes_at_once_then_at_most_once_a_second() {
        let mut p = Pacer::default();
        assert_eq!(p.due_at(false), None);
        assert!(p.ready(5_000, true));
        p.started(5_000);
        assert_eq!(p.due_at(true), None, "one push at a time");
        assert_eq!(p.ended(5_200, Paced::Accepted), 0);
        assert_eq!(p.due_at(true), Some(6_000));
        assert!(!p.ready(5_999, true) && p.ready(6_000, true));
        // A change long after the last push goes at once.
        p.started(6_000);
        p.ended(6_100, Paced::Accepted);
        assert!(p.ready(9_000, true));
    }

    #[test]
    fn failures_back_off_doubling_up_to_a_minute() {
        let mut p = Pacer::default();
        let mut now = 0;
        let mut waits = Vec::new();
        for _ in 0..9 {
            p.started(now);
            let wait = p.ended(
                now + 10,
                Paced::Retry {
                    retry_after_ms: None,
                },
            );
            waits.push(wait);
            assert_eq!(p.due_at(true), Some(now + 10 + wait));
            now += 10 + wait;
        }
        assert_eq!(
            waits,
            [
                1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000
            ]
        );
        // Success resets the backoff.
        p.started(now);
        p.ended(now, Paced::Accepted);
        p.started(now + 1_000);
        assert_eq!(
            p.ended(
                now + 1_000,
                Paced::Retry {
                    retry_after_ms: None
                }
            ),
            1_000
        );
    }

    #[test]
    fn retry_after_is_honoured() {
        let mut p = Pacer::default();
        p.started(0);
        assert_eq!(
            p.ended(
                100,
                Paced::Retry {
                    retry_after_ms: Some(30_000)
                }
            ),
            30_000
        );
        assert_eq!(p.due_at(true), Some(30_100));
        p.started(30_100);
        assert_eq!(
            p.ended(
                30_200,
                Paced::Retry {
                    retry_after_ms: Some(86_400_000)
                }
            ),
            MAX_RETRY_AFTER_MS
        );
        assert_eq!(retry_after_ms(" 7 "), Some(7_000));
        assert_eq!(retry_after_ms("Wed, 21 Oct 2015 07:28:00 GMT"), None);
    }
}
