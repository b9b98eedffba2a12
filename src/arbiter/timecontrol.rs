//! PGN `TimeControl`-style periods (`40/5400+30:1800+30`, `180+2`, `5400`), used for the
//! time-control class, increments and move counting.

use serde::{Deserialize, Serialize};

/// One period: `moves` moves (None = rest of the game) in `base_ms`, plus `inc_ms` per move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Period {
    pub moves: Option<u32>,
    pub base_ms: u64,
    pub inc_ms: u64,
}

/// A parsed time control: one or more periods, the last one without a move count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeControl {
    pub periods: Vec<Period>,
}

fn parse_seconds(s: &str) -> Result<u64, String> {
    // Seconds may be fractional in PGN ("0.5"); milliseconds are enough.
    let v: f64 = s
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if !v.is_finite() || !(0.0..=1.0e7).contains(&v) {
        return Err(format!("`{s}` is not a sensible number of seconds"));
    }
    Ok((v * 1000.0).round() as u64)
}

impl TimeControl {
    /// Parses `moves/seconds+increment` periods separated by `:`. `?` and `-` (unknown, no
    /// time control) give an error, so callers treat them as "not configured".
    pub fn parse(text: &str) -> Result<TimeControl, String> {
        let text = text.trim();
        if text.is_empty() || text == "?" || text == "-" {
            return Err(format!("time control `{text}` sets no periods"));
        }
        let mut periods = Vec::new();
        for part in text.split(':') {
            let (moves, rest) = match part.split_once('/') {
                Some((m, r)) => {
                    let n: u32 = m
                        .parse()
                        .map_err(|_| format!("`{m}` in `{part}` is not a move count"))?;
                    if n == 0 {
                        return Err(format!("a period of 0 moves in `{part}`"));
                    }
                    (Some(n), r)
                }
                None => (None, part),
            };
            let (base, inc) = match rest.split_once('+') {
                Some((b, i)) => (parse_seconds(b)?, parse_seconds(i)?),
                None => (parse_seconds(rest)?, 0),
            };
            periods.push(Period {
                moves,
                base_ms: base,
                inc_ms: inc,
            });
        }
        Ok(TimeControl { periods })
    }

    /// The increment of the period a player is in after `completed` moves.
    pub fn increment_after(&self, completed: u32) -> u64 {
        let mut quota = 0u32;
        for p in &self.periods {
            match p.moves {
                Some(n) => {
                    quota = quota.saturating_add(n);
                    if completed < quota {
                        return p.inc_ms;
                    }
                }
                None => return p.inc_ms,
            }
        }
        self.periods.last().map_or(0, |p| p.inc_ms)
    }

    /// True when any period has an increment.
    pub fn has_increment(&self) -> bool {
        self.periods.iter().any(|p| p.inc_ms > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_multi_period() {
        let tc = TimeControl::parse("40/5400+30:1800+30").expect("parses");
        assert_eq!(tc.periods.len(), 2);
        assert_eq!(tc.periods[0].moves, Some(40));
        assert_eq!(tc.periods[0].base_ms, 5_400_000);
        assert_eq!(tc.periods[1].inc_ms, 30_000);
        assert_eq!(tc.increment_after(39), 30_000);
        assert!(tc.has_increment());
    }

    #[test]
    fn parses_simple_and_rejects_junk() {
        let tc = TimeControl::parse("180+2").expect("parses");
        assert_eq!(tc.periods[0].base_ms, 180_000);
        assert_eq!(tc.periods[0].inc_ms, 2_000);
        assert!(!TimeControl::parse("5400").expect("parses").has_increment());
        assert!(TimeControl::parse("?").is_err());
        assert!(TimeControl::parse("40/abc").is_err());
        assert!(TimeControl::parse("0/60").is_err());
    }
}
