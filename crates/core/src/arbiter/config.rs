//! The arbiter's settings: the Laws (rules, edition, Guidelines III) and the clock (White's
//! display, time control, how it changes period). Held once: a session's configuration holds
//! them (`SessionConfig::arbiter`), hands them to its arbiter, and the clock model is given them
//! where it needs one; `SetRules` changes them here.

use serde::{Deserialize, Serialize};

use super::laws::Laws;
use super::timecontrol::TimeControl;
use crate::vocab::{ClockPeriods, Edition, Rules, WhiteDisplay};

/// Everything the arbiter needs from the configuration.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ArbiterConfig {
    pub rules: Rules,
    pub edition: Edition,
    pub guidelines_iii: bool,
    pub white_display: WhiteDisplay,
    /// Parsed where it came in (the configuration); see [`super::timecontrol`].
    pub time_control: Option<TimeControl>,
    /// How the clock moves to the next period: by time (steady flag) or by its own move
    /// counter (see `counter.rs`).
    #[serde(default)]
    pub clock_periods: ClockPeriods,
}

impl ArbiterConfig {
    /// The edition and rule set the game is played under (where they decide: [`super::laws`]).
    pub fn laws(&self) -> Laws {
        Laws {
            edition: self.edition,
            rules: self.rules,
        }
    }
}
