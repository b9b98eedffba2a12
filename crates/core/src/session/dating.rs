//! The PGN `Date` of a game that begins: the shell says what day it is
//! ([`Session::set_date`]), and the session writes it into each new game's tags unless the
//! board's configuration names a date. The journal keeps it as it keeps the tags an operator
//! sets (a tags record), so a restored game has its date, and a journal written when the shell
//! still dated games through `SetTags` restores the same.

use super::*;
use crate::game::PgnDate;

/// What the session dates new games with.
#[derive(Debug, Clone, Copy)]
pub(super) struct Dating {
    /// The day the shell last said; `None` until it does (games stay `????.??.??`).
    today: Option<PgnDate>,
    /// The configuration's `tags` name a `Date`: it dates every game, not the calendar.
    configured: bool,
}

impl Dating {
    pub(super) fn for_config<A>(config: &SessionConfig<A>) -> Self {
        Dating {
            today: None,
            configured: config.tags.iter().any(|(name, _)| name == "Date"),
        }
    }
}

impl Session {
    /// The calendar day it is (the daemon gives the UTC day of its wall clock before each
    /// input): a game that begins from now on is dated with it.
    pub fn set_date(&mut self, today: PgnDate) {
        self.dating.today = Some(today);
    }

    /// A game has just begun: its `Date` tag is today's, unless the configuration names one.
    /// A date set over the bus during the previous game does not carry over to this one.
    pub(super) fn date_new_game(&mut self, out: &mut Vec<Event>) {
        if self.dating.configured {
            return;
        }
        if let Some(today) = self.dating.today {
            self.merge_tags(vec![("Date".into(), today.to_string())], out)
                .expect("a calendar date is a valid tag");
        }
    }
}
