//! Periods ended by the clock's own move counter (`clock_periods = "moves"`: a DGT XL in
//! option 13 "Fischer Tournament", or option 00 with move counts), judged from the record
//! (Article 6.4; rules.md row 8: "use the board-derived move count, not the clock's
//! counter"). Part of [`Arbiter`].
//!
//! Such a clock adds a player's next period at the press it counts as the period's last move
//! (the 40th), to his side only, with no flag; a zero before it is a flag fall. It counts
//! presses, the record counts moves, and the two part when a press makes no move (7.5.3) or a
//! move is pressed twice. So:
//! * every press the clock counts is counted here by display (the press that starts the
//!   clock, before any move, is none), and once the presses of a moment are explained, a
//!   player's presses are compared with his completed moves: when they differ, the arbiter is
//!   told at once, in the record (a comment in the `Pgn`, the contract's place for what the
//!   arbiter notes), how far the counter is off and at which of his moves the clock will add
//!   the next period instead — before it matters, so he can set the counter (6.10.2, 7.1);
//! * a period the clock added early (its counter ahead) is not the player's yet: his time of
//!   the period still running is his display less what was added; if that runs out before
//!   his record completes the period's moves, his flag fell in that period;
//! * a player whose record completed the period while the clock did not add the next one
//!   (its counter behind) has not lost when his display reaches zero: the arbiter is told to
//!   add the period's time.
//!
//! The clock's counter is not on the wire. After a gap in the readings (a fresh reading) or a
//! restart, it is taken to agree with the record again; when the clock adds a period, its
//! counter is known to stand at that period's move count.

use shakmaty::{Color, Position};

use super::clock::Display;
use super::timecontrol::TimeControl;
use super::{Arbiter, PRESS_GRACE_MS, Ruling, UNSEEN_PRESS_REPORT_MS, idx};
use crate::vocab::{Millis, Player};

/// What the arbiter keeps about the clock's move counter (see the module documentation).
#[derive(Debug, Clone, Default)]
pub(super) struct CounterWatch {
    /// Presses the clock has counted, per display (left, right).
    presses: [u32; 2],
    /// The press that started the clock before any move: (display). Not a counted move.
    start_press: Option<Display>,
    /// The offset last told, per colour (presses minus completed moves).
    told: [i64; 2],
    /// The counter is to be taken as agreeing with the record at the next quiet moment (a
    /// fresh reading, a restart), and since when.
    resync_after: Option<Millis>,
    /// A counter behind: the flag of this colour was excused once already (told once).
    excused: [bool; 2],
    /// The clock's periods per side are to be taken from the record at the resync (a game
    /// restored after a restart: the model of the clock starts at the first period).
    from_record: bool,
}

fn didx(d: Display) -> usize {
    match d {
        Display::Left => 0,
        Display::Right => 1,
    }
}

/// The periods a player's record has completed: the controls whose moves he has made.
pub(super) fn periods_completed(control: &TimeControl, completed: u32) -> usize {
    let mut j = 0;
    while let Some(due) = control.moves_due_by_end_of(j) {
        if completed < due || j > completed as usize {
            break;
        }
        j += 1;
    }
    j
}

impl CounterWatch {
    /// A game restored after a restart: the clock's counter is taken to agree with the record
    /// (a new game needs none: both start from nothing).
    pub(super) fn restart(now: Millis) -> Self {
        CounterWatch {
            resync_after: Some(now),
            from_record: true,
            ..CounterWatch::default()
        }
    }
}

impl Arbiter {
    fn by_counter(&self) -> Option<&TimeControl> {
        self.cfg
            .clock_periods
            .by_counter()
            .then_some(self.cfg.time_control.as_ref())
            .flatten()
    }

    /// A press the clock counted (called for every press read).
    pub(super) fn count_press(&mut self, d: Display) {
        if self.by_counter().is_none() {
            return;
        }
        let presser = self.clock.color_of(d);
        // While the sides are unknown any press before the first move is taken for it.
        let starter = !self.clock.white_known() || presser != self.position().turn();
        if self.plies == 0
            && self.awaiting_press.is_none()
            && self.counter.start_press.is_none()
            && starter
        {
            // The opponent of the first mover starts the clock: no move of his.
            self.counter.start_press = Some(d);
            return;
        }
        self.counter.presses[didx(d)] += 1;
    }

    /// A reading that came with the lever unknown: presses may have gone unseen.
    pub(super) fn counter_fresh(&mut self, now: Millis) {
        self.counter.resync_after = Some(now);
    }

    /// The clock added `d`'s next period: its counter stands at that period's move count.
    pub(super) fn counter_period_added(&mut self, d: Display) {
        let Some(control) = self.by_counter().cloned() else {
            return;
        };
        let c = self.clock.color_of(d);
        let j = self.clock.side_period(c);
        if let Some(due) = control.moves_due_by_end_of(j.saturating_sub(1)) {
            self.counter.presses[didx(d)] = due;
        }
        self.counter.excused[idx(c)] = false;
    }

    /// Compares the counter with the record once the presses of the moment are explained,
    /// tells the arbiter of a change, and judges a period the clock added early.
    pub(super) fn watch_counter(&mut self, now: Millis, ev: &mut Vec<Ruling>) {
        let Some(control) = self.by_counter().cloned() else {
            return;
        };
        if self.is_finished() {
            return;
        }
        self.judge_early_period(&control, now, ev);
        let settling = self.unexplained_press.is_some()
            || self
                .stray_press
                .is_some_and(|(at, _)| now.saturating_sub(at) <= PRESS_GRACE_MS);
        if settling || !self.clock.white_known() {
            return;
        }
        if let Some(at) = self.counter.resync_after {
            if now.saturating_sub(at) <= UNSEEN_PRESS_REPORT_MS + PRESS_GRACE_MS {
                return;
            }
            // The clock's counter is taken as agreeing with the record.
            self.counter.resync_after = None;
            let from_record = std::mem::take(&mut self.counter.from_record);
            for c in [Color::White, Color::Black] {
                let moves = self.completed_moves[idx(c)];
                self.counter.presses[didx(self.clock.display_of(c))] = moves;
                if from_record {
                    self.clock
                        .set_side_period(c, periods_completed(&control, moves));
                }
            }
            self.counter.told = [0, 0];
            return;
        }
        for c in [Color::White, Color::Black] {
            let presses = self.counter.presses[didx(self.clock.display_of(c))];
            let off = i64::from(presses) - i64::from(self.completed_moves[idx(c)]);
            if off != self.counter.told[idx(c)] {
                self.counter.told[idx(c)] = off;
                let note = self.counter_note(&control, c, presses, off);
                self.game.comment(note);
            }
        }
    }

    /// The arbiter's notice of the counter of `c` being `off` (presses minus moves).
    fn counter_note(&self, control: &TimeControl, c: Color, presses: u32, off: i64) -> String {
        let name = Player::from(c).capitalised();
        let moves = self.completed_moves[idx(c)];
        if off == 0 {
            return format!(
                "Clock move counter: it agrees with the record again ({name}: {moves} moves)"
            );
        }
        let how = if off > 0 { "ahead" } else { "behind" };
        let mut note = format!(
            "Clock move counter {} {how} for {name}: it counted {presses} presses, the record \
             has {moves} completed moves",
            off.unsigned_abs()
        );
        let j = self.clock.side_period(c);
        if let Some(due) = control.moves_due_by_end_of(j) {
            let at_move = i64::from(due) - off;
            note.push_str(&format!(
                "; it will add period {} at his move {at_move} instead of {due}. The period is \
                 judged from the record (6.4); set the clock's counter (6.10.2, 7.1)",
                j + 2
            ));
        }
        note
    }

    /// Whether [`Arbiter::watch_counter`] may act at a tick with no input before it: the
    /// counter is to be taken as agreeing again, a period was added ahead of the record, or
    /// a player's presses differ from his completed moves by other than what was last told.
    pub(super) fn counter_waits(&self) -> bool {
        let Some(control) = self.by_counter() else {
            return false;
        };
        if self.counter.resync_after.is_some() {
            return true;
        }
        [Color::White, Color::Black].into_iter().any(|c| {
            let presses = self.counter.presses[didx(self.clock.display_of(c))];
            let off = i64::from(presses) - i64::from(self.completed_moves[idx(c)]);
            let early = self.clock.side_period(c)
                > periods_completed(control, self.completed_moves[idx(c)]);
            early || off != self.counter.told[idx(c)]
        })
    }

    /// The clock added a period ahead of the record: the time of the period he is still in
    /// is his display less what was added. It ran out before his record completed the
    /// period's moves: his flag fell in that period.
    fn judge_early_period(&mut self, control: &TimeControl, now: Millis, ev: &mut Vec<Ruling>) {
        for c in [Color::White, Color::Black] {
            if self.overstepped[idx(c)] || self.clock.running() != Some(c) {
                continue;
            }
            let done = periods_completed(control, self.completed_moves[idx(c)]);
            let added = self.clock.side_period(c);
            if added <= done {
                continue;
            }
            let early_ms: u64 = (done + 1..=added)
                .map(|j| control.period(j).base_ms())
                .sum();
            let Some(shown) = self.clock.known_time_ms(c) else {
                continue;
            };
            let pressed_late = self
                .unexplained_press
                .is_some_and(|(p, at)| p == c && now.saturating_sub(at) <= PRESS_GRACE_MS);
            if shown > early_ms || pressed_late {
                continue;
            }
            let due = control.moves_due_by_end_of(done).unwrap_or(0);
            self.overstepped[idx(c)] = true;
            self.game.comment(format!(
                "{} completed {} of the {due} moves due when his time for period {} ran out \
                 (the clock's move counter had added period {} early)",
                Player::from(c).capitalised(),
                self.completed_moves[idx(c)],
                done + 1,
                added + 1
            ));
            self.on_flags(&[c], ev);
        }
    }

    /// A flag shown by a clock whose counter is behind the record: the player completed the
    /// period's moves, the clock did not add the next period. Not a fall: the arbiter is told
    /// to add it. Returns whether the flag is excused.
    pub(super) fn counter_excuses_flag(&mut self, c: Color) -> bool {
        let Some(control) = self.by_counter().cloned() else {
            return false;
        };
        let done = periods_completed(&control, self.completed_moves[idx(c)]);
        let added = self.clock.side_period(c);
        if done <= added {
            return false;
        }
        if !self.counter.excused[idx(c)] {
            self.counter.excused[idx(c)] = true;
            let owed: u64 = (added + 1..=done)
                .map(|j| control.period(j).base_ms())
                .sum();
            self.game.comment(format!(
                "{}'s display reached zero, but the record shows {} completed moves: period {} \
                 is his and the clock's counter did not add it. No flag fall; add {} to his clock \
                 (6.10.2, 7.1)",
                Player::from(c).capitalised(),
                self.completed_moves[idx(c)],
                done + 1,
                crate::game::clk(owed)
            ));
        }
        true
    }
}
