//! The control judged (6.3.1, 6.4; rules.md row 8): when a player's time of a period but the
//! last runs out — the clock's [`PeriodEnd`] — his completed moves are compared with the moves
//! due by the end of that period. Short of them, it is a flag fall in that period, with all a
//! flag fall brings; enough, and play goes on. Part of [`Arbiter`].
//!
//! A move counts once its own press completed it (6.2.1; the seeds' 3.3.4): a move made but
//! not pressed does not. A press the tracker has not explained yet (the move's report can come
//! a little after the press, [`PRESS_GRACE_MS`]) holds the verdict until the report comes or
//! the grace is over. A press and the flag in one reading: the clock says which came first
//! ([`PeriodEnd::before_press`]); the press counts only if it came first.
//!
//! Only the player whose time ran out is judged, and that is enough: his clock was the one
//! running, so he was to move, and his opponent had completed as many moves as he had (Black,
//! running out) or one more (White). Whoever made the moves due, his opponent made them too.
//!
//! After a restart the clock's period is not known (the record keeps no period changes): it
//! is taken as the first, so a third period's end would be judged against the first period's
//! moves. With the usual two periods the last one has no end to judge, and its fall is still
//! the clock's final flag (bit 4); only a silent clock's extrapolated fall waits for it.

use shakmaty::Color;

use super::clock::PeriodEnd;
use super::{Arbiter, PRESS_GRACE_MS, Ruling, idx};
use crate::vocab::{Millis, Player};

/// A period end waiting for its verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ControlCheck {
    player: Color,
    /// 0-based period whose time ran out.
    period: usize,
    due: u32,
}

impl Arbiter {
    /// The clock left period `end.period` because `end.display`'s time ran out.
    pub(super) fn on_period_end(&mut self, end: PeriodEnd, now: Millis, ev: &mut Vec<Ruling>) {
        if self.is_finished() {
            return;
        }
        let Some(due) = self
            .cfg
            .time_control
            .as_ref()
            .and_then(|t| t.moves_due_by_end_of(end.period))
        else {
            return;
        };
        self.control_check = Some(ControlCheck {
            player: self.clock.color_of(end.display),
            period: end.period,
            due,
        });
        self.settle_control_check(now, ev);
    }

    /// Gives the verdict of a waiting check once it can be given.
    pub(super) fn settle_control_check(&mut self, now: Millis, ev: &mut Vec<Ruling>) {
        let Some(check) = self.control_check else {
            return;
        };
        if self.is_finished() {
            self.control_check = None;
            return;
        }
        let player = check.player;
        if self.completed_moves[idx(player)] >= check.due {
            // The control is met: the clock's next period is his.
            self.control_check = None;
            return;
        }
        let unexplained = self
            .unexplained_press
            .is_some_and(|(p, at)| p == player && now.saturating_sub(at) <= PRESS_GRACE_MS);
        if unexplained {
            return;
        }
        self.control_check = None;
        self.overstepped[idx(player)] = true;
        self.game.comment(format!(
            "{} completed {} of the {} moves due when his time for period {} ran out",
            Player::from(player).capitalised(),
            self.completed_moves[idx(player)],
            check.due,
            check.period + 1
        ));
        self.on_flags(&[player], ev);
    }

    /// The player's flag is down: the clock's own fall, or a period overstepped.
    pub(super) fn flag_down(&self, c: Color) -> bool {
        self.clock.fallen(c) || self.overstepped[idx(c)]
    }
}
