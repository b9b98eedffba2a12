//! The time control of a board: PGN `TimeControl`-style periods (`40/5400+30:1800+30`,
//! `180+2`, `5400`), used for the time-control class, increments and move counting.
//!
//! This is the one type and the one grammar for it. It is parsed once, where the text comes in
//! (the configuration's `time_control`, a remembered board in `boards.json`), with a named
//! [`TimeControlError`], and travels typed from there (`SessionConfig`, `ArbiterConfig`).
//! Serialised it is the PGN string again, so files written before it was a type still load.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// One period of a [`TimeControl`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Period {
    /// Moves to make in the period; `None`: the rest of the game (sudden death).
    pub moves: Option<u32>,
    /// Time for the period in seconds.
    pub seconds: u64,
    /// Increment per move in seconds.
    pub increment: u64,
}

impl Period {
    /// The period's time in milliseconds.
    pub fn base_ms(&self) -> u64 {
        self.seconds.saturating_mul(1000)
    }

    /// The increment per move in milliseconds.
    pub fn inc_ms(&self) -> u64 {
        self.increment.saturating_mul(1000)
    }
}

/// A time control: one or more periods; only the last one may be without a move count, and
/// a last period with a move count repeats.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct TimeControl {
    pub periods: Vec<Period>,
}

/// Text that is not a time control; the message says what is wrong and what is expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "bad time_control {text:?}: {why} (expected periods like \"40/5400+30:1800+30\": \
     MOVES/SECONDS+INCREMENT, the last one may be SECONDS+INCREMENT)"
)]
pub struct TimeControlError {
    /// The text as given.
    pub text: String,
    /// What is wrong with it.
    pub why: String,
}

impl FromStr for TimeControl {
    type Err = TimeControlError;

    /// PGN TimeControl periods joined by `:`: `MOVES/SECONDS[+INC]` or, for the last period
    /// only, `SECONDS[+INC]` (sudden death). Whole seconds, no spaces. PGN's `?` (unknown) and
    /// `-` (none) are refused: they set no periods, and a board without a time control simply
    /// has none configured.
    fn from_str(s: &str) -> Result<TimeControl, TimeControlError> {
        parse_periods(s)
            .map(|periods| TimeControl { periods })
            .map_err(|why| TimeControlError {
                text: s.to_string(),
                why,
            })
    }
}

fn parse_periods(s: &str) -> Result<Vec<Period>, String> {
    if s.is_empty() {
        return Err("empty".into());
    }
    let fields: Vec<&str> = s.split(':').collect();
    let mut periods = Vec::with_capacity(fields.len());
    for (i, field) in fields.iter().enumerate() {
        let n = i + 1;
        let number = |text: &str, what: &str| -> Result<u64, String> {
            if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!("period {n}: {what} {text:?} is not a number"));
            }
            text.parse::<u64>()
                .map_err(|_| format!("period {n}: {what} {text:?} is too large"))
        };
        let (moves, rest) = match field.split_once('/') {
            Some((m, rest)) => (Some(number(m, "move count")?), rest),
            None => (None, *field),
        };
        let (time, inc) = match rest.split_once('+') {
            Some((t, inc)) => (t, Some(inc)),
            None => (rest, None),
        };
        let seconds = number(time, "time")?;
        let increment = inc
            .map(|i| number(i, "increment"))
            .transpose()?
            .unwrap_or(0);
        let moves = match moves {
            Some(0) => return Err(format!("period {n}: a period needs at least one move")),
            Some(m) => Some(u32::try_from(m).map_err(|_| format!("period {n}: too many moves"))?),
            None if n < fields.len() => {
                return Err(format!(
                    "period {n}: only the last period may be without a move count"
                ));
            }
            None => None,
        };
        if seconds == 0 {
            return Err(format!("period {n}: the time must be positive"));
        }
        periods.push(Period {
            moves,
            seconds,
            increment,
        });
    }
    Ok(periods)
}

impl fmt::Display for TimeControl {
    /// The PGN `TimeControl` tag value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.periods.iter().enumerate() {
            if i > 0 {
                f.write_str(":")?;
            }
            if let Some(m) = p.moves {
                write!(f, "{m}/")?;
            }
            write!(f, "{}", p.seconds)?;
            if p.increment > 0 {
                write!(f, "+{}", p.increment)?;
            }
        }
        Ok(())
    }
}

impl TryFrom<String> for TimeControl {
    type Error = TimeControlError;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        text.parse()
    }
}

impl From<TimeControl> for String {
    fn from(tc: TimeControl) -> String {
        tc.to_string()
    }
}

impl TimeControl {
    /// The increment (ms) of the period a player is in after `completed` moves.
    pub fn increment_after(&self, completed: u32) -> u64 {
        let mut quota = 0u32;
        for p in &self.periods {
            match p.moves {
                Some(n) => {
                    quota = quota.saturating_add(n);
                    if completed < quota {
                        return p.inc_ms();
                    }
                }
                None => return p.inc_ms(),
            }
        }
        self.periods.last().map_or(0, Period::inc_ms)
    }

    /// True when any period has an increment.
    pub fn has_increment(&self) -> bool {
        self.periods.iter().any(|p| p.increment > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tc(text: &str) -> TimeControl {
        text.parse().expect("parses")
    }

    #[test]
    fn parses_multi_period() {
        let tc = tc("40/5400+30:1800+30");
        assert_eq!(
            tc.periods,
            vec![
                Period {
                    moves: Some(40),
                    seconds: 5400,
                    increment: 30
                },
                Period {
                    moves: None,
                    seconds: 1800,
                    increment: 30
                },
            ]
        );
        assert_eq!(tc.periods[0].base_ms(), 5_400_000);
        assert_eq!(tc.periods[1].inc_ms(), 30_000);
        assert_eq!(tc.increment_after(39), 30_000);
        assert!(tc.has_increment());
        assert_eq!(tc.to_string(), "40/5400+30:1800+30");
    }

    #[test]
    fn parses_simple_forms() {
        let t = tc("180+2");
        assert_eq!(t.periods[0].base_ms(), 180_000);
        assert_eq!(t.periods[0].inc_ms(), 2_000);
        assert_eq!(
            tc("300+2").periods,
            vec![Period {
                moves: None,
                seconds: 300,
                increment: 2
            }]
        );
        assert!(!tc("5400").has_increment());
        assert_eq!(tc("40/7200").periods[0].moves, Some(40));
        // A repeating last period with a move count keeps its increment.
        let t = tc("40/7200+30");
        assert_eq!(t.increment_after(100), 30_000);
    }

    #[test]
    fn rejects_junk_with_a_named_error() {
        for bad in [
            "",
            "?",
            "-",
            "*180",
            "40/",
            "/5400",
            "5400:40/1800",
            "0",
            "40/0",
            "0/60",
            "40/abc",
            "40/5400+",
            "40/5400+x",
            "1e3",
            "0.5",
            " 300",
            "300 ",
            "300:",
            "40/5400++1",
            "99999999999999999999",
            "99999999999/60",
        ] {
            let e = bad.parse::<TimeControl>().expect_err(bad);
            assert_eq!(e.text, bad);
            let message = e.to_string();
            assert!(
                message.contains(&format!("{bad:?}")) && message.contains("40/5400+30:1800+30"),
                "{message}"
            );
        }
    }

    #[test]
    fn serialises_as_the_pgn_string() {
        let t = tc("40/5400+30:1800+30");
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(json, "\"40/5400+30:1800+30\"");
        assert_eq!(serde_json::from_str::<TimeControl>(&json).unwrap(), t);
        let e = serde_json::from_str::<TimeControl>("\"40/\"").unwrap_err();
        assert!(e.to_string().contains("bad time_control"), "{e}");
    }
}
