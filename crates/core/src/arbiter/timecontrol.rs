//! The time control of a board: periods in the PGN `TimeControl` spelling (`40/5400+30:1800+30`,
//! `180+2`, `5400`), extended with delays (`40/5400d30:1800d30` US delay, `5400b5` Bronstein),
//! used for the time-control class, increments, delays and the move count of each period.
//!
//! This is the one type and the one grammar for it. It is parsed once, where the text comes in
//! (the configuration's `time_control`, a remembered board in `boards.json`), with a named
//! [`TimeControlError`], and travels typed from there, held once in the `ArbiterConfig` (a part of the `SessionConfig`).
//! Serialised it is the same string again, so files written before it was a type still load;
//! for Fischer and plain periods that string is the PGN standard's spelling, which has none for
//! delays.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// What a period gives a player at each move besides its time (seconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bonus {
    /// Fischer increment (`+N`): added at every press (6.3.1); `Increment(0)` is none.
    Increment(u64),
    /// US (simple) delay (`dN`): the time only starts counting down N s into each turn (6.3.2).
    UsDelay(u64),
    /// Bronstein delay (`bN`): at the press the time used in the turn, up to N s, is given back.
    Bronstein(u64),
}

/// One period of a [`TimeControl`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Period {
    /// Moves to make in the period; `None`: the rest of the game (sudden death).
    pub moves: Option<u32>,
    /// Time for the period in seconds.
    pub seconds: u64,
    /// Increment or delay per move.
    pub bonus: Bonus,
}

impl Period {
    /// The period's time in milliseconds.
    pub fn base_ms(&self) -> u64 {
        self.seconds.saturating_mul(1000)
    }

    /// The Fischer increment per move in milliseconds (0 for a delay).
    pub fn inc_ms(&self) -> u64 {
        match self.bonus {
            Bonus::Increment(s) => s.saturating_mul(1000),
            Bonus::UsDelay(_) | Bonus::Bronstein(_) => 0,
        }
    }

    /// The US delay per move in milliseconds (0 otherwise): how long a silent clock may
    /// stand still at the start of a turn.
    pub fn us_delay_ms(&self) -> u64 {
        match self.bonus {
            Bonus::UsDelay(s) => s.saturating_mul(1000),
            Bonus::Increment(_) | Bonus::Bronstein(_) => 0,
        }
    }

    /// The Bronstein delay per move in milliseconds (0 otherwise).
    pub fn bronstein_ms(&self) -> u64 {
        match self.bonus {
            Bonus::Bronstein(s) => s.saturating_mul(1000),
            Bonus::Increment(_) | Bonus::UsDelay(_) => 0,
        }
    }

    /// True when the period gives anything per move (an increment or a delay).
    pub fn has_bonus(&self) -> bool {
        match self.bonus {
            Bonus::Increment(s) | Bonus::UsDelay(s) | Bonus::Bronstein(s) => s > 0,
        }
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
     MOVES/SECONDS followed by +INCREMENT, dDELAY (US delay) or bDELAY (Bronstein), the last \
     one may drop MOVES/)"
)]
pub struct TimeControlError {
    /// The text as given.
    pub text: String,
    /// What is wrong with it.
    pub why: String,
}

impl FromStr for TimeControl {
    type Err = TimeControlError;

    /// Periods joined by `:`: `MOVES/SECONDS[BONUS]` or, for the last period only,
    /// `SECONDS[BONUS]` (sudden death), where BONUS is `+INC`, `dDELAY` or `bDELAY`. Whole
    /// seconds, no spaces. PGN's `?` (unknown) and
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
        let (time, bonus) = match rest.find(['+', 'd', 'b']) {
            Some(at) => {
                let amount = number(&rest[at + 1..], "increment or delay")?;
                let bonus = match rest.as_bytes()[at] {
                    b'+' => Bonus::Increment(amount),
                    b'd' => Bonus::UsDelay(amount),
                    _ => Bonus::Bronstein(amount),
                };
                (&rest[..at], bonus)
            }
            None => (rest, Bonus::Increment(0)),
        };
        let seconds = number(time, "time")?;
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
            bonus,
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
            match p.bonus {
                Bonus::Increment(0) => {}
                Bonus::Increment(s) => write!(f, "+{s}")?,
                Bonus::UsDelay(s) => write!(f, "d{s}")?,
                Bonus::Bronstein(s) => write!(f, "b{s}")?,
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
    /// Period `j` (0-based) as the clock plays it: a last period with a move count repeats.
    pub fn period(&self, j: usize) -> Period {
        let last = self.periods.len().saturating_sub(1);
        self.periods[j.min(last)]
    }

    /// True when period `j` runs to the end of the game: its running out is the game's flag
    /// fall, and no time is added after it.
    pub fn is_final(&self, j: usize) -> bool {
        self.period(j).moves.is_none()
    }

    /// The moves a player must have completed when his time of period `j` runs out (6.3.1):
    /// the move counts of periods 0..=j; `None` for a final period.
    pub fn moves_due_by_end_of(&self, j: usize) -> Option<u32> {
        (0..=j).try_fold(0u32, |due, k| {
            Some(due.saturating_add(self.period(k).moves?))
        })
    }

    /// The period a player is in after `completed` moves, by his own move count (the
    /// increment of his next press is this period's).
    pub fn period_after(&self, completed: u32) -> Period {
        let mut quota = 0u32;
        for j in 0.. {
            let p = self.period(j);
            match p.moves {
                Some(n) => {
                    quota = quota.saturating_add(n);
                    if completed < quota || quota == u32::MAX {
                        return p;
                    }
                }
                None => return p,
            }
        }
        unreachable!("the loop returns at the last period or at the move count's cap")
    }

    /// The Fischer increment (ms) of the period a player is in after `completed` moves; 0 in
    /// a delay period (a delay gives nothing to take back).
    pub fn increment_after(&self, completed: u32) -> u64 {
        self.period_after(completed).inc_ms()
    }

    /// True when any period has a Fischer increment.
    pub fn has_increment(&self) -> bool {
        self.periods.iter().any(|p| p.inc_ms() > 0)
    }

    /// True when any period has an increment or a delay (no quickplay finish then).
    pub fn has_bonus(&self) -> bool {
        self.periods.iter().any(Period::has_bonus)
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
                    bonus: Bonus::Increment(30)
                },
                Period {
                    moves: None,
                    seconds: 1800,
                    bonus: Bonus::Increment(30)
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
                bonus: Bonus::Increment(2)
            }]
        );
        assert!(!tc("5400").has_increment());
        assert_eq!(tc("40/7200").periods[0].moves, Some(40));
        // A repeating last period with a move count keeps its increment.
        let t = tc("40/7200+30");
        assert_eq!(t.increment_after(100), 30_000);
    }

    #[test]
    fn parses_delays_and_keeps_their_spelling() {
        let t = tc("40/5400d30:1800d30");
        assert_eq!(t.periods[0].bonus, Bonus::UsDelay(30));
        assert_eq!(t.periods[0].us_delay_ms(), 30_000);
        assert_eq!(t.periods[0].inc_ms(), 0);
        assert_eq!(t.increment_after(3), 0);
        assert!(!t.has_increment() && t.has_bonus());
        assert_eq!(t.to_string(), "40/5400d30:1800d30");
        let b = tc("5400b5");
        assert_eq!(b.periods[0].bonus, Bonus::Bronstein(5));
        assert_eq!(b.periods[0].bronstein_ms(), 5_000);
        assert_eq!(b.to_string(), "5400b5");
        // Mixed: a Fischer period after a delay period.
        let m = tc("40/5400b10:1800+30");
        assert_eq!(m.increment_after(39), 0);
        assert_eq!(m.increment_after(40), 30_000);
        assert_eq!(tc("300+0").to_string(), "300");
    }

    #[test]
    fn moves_due_by_the_end_of_each_period() {
        let t = tc("40/5400+30:20/3600+30:900+30");
        assert_eq!(t.moves_due_by_end_of(0), Some(40));
        assert_eq!(t.moves_due_by_end_of(1), Some(60));
        assert_eq!(t.moves_due_by_end_of(2), None);
        assert!(!t.is_final(1) && t.is_final(2) && t.is_final(7));
        // A last period with a move count repeats: 40 more moves in each hour.
        let r = tc("40/7200:40/3600");
        assert_eq!(r.moves_due_by_end_of(3), Some(160));
        assert_eq!(r.period(5).seconds, 3600);
        assert!(!r.is_final(9));
        assert_eq!(tc("300+2").moves_due_by_end_of(0), None);
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
            "40/5400d",
            "40/5400b",
            "40/5400+30d5",
            "5400x5",
            "d30",
            "40/d30",
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
