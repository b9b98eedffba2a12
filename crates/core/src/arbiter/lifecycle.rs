//! Clock presses and what they complete (a move, an illegal move, 7.5.2, 7.5.3), flag falls
//! and the end of the game they cause. Part of [`Arbiter`]; see the module documentation
//! of [`crate::arbiter`] for the decisions taken here.

use shakmaty::{Color, Position};

use super::clock::{self, Display};
use super::{
    Arbiter, OVERTAKEN_MS, PRESS_GRACE_MS, Ruling, Window, color_name, idx, ordinal, unwinnable,
    win_for,
};
use crate::board_input::ClockReading;
use crate::event::Event;
use crate::vocab::{GameResult, Millis, Player, Termination, WhiteDisplay};

impl Arbiter {
    // ----- clock ------------------------------------------------------------------------

    /// One clock reading (`ClockReading`). `ClockEmpty` messages carry nothing: don't pass them.
    pub fn on_clock(&mut self, ct: &ClockReading, now: Millis) -> Vec<Ruling> {
        let mut ev = Vec::new();
        let upd = self.clock.update(&self.cfg, ct, now);
        if upd.fresh {
            self.on_fresh_reading(now, &mut ev);
            self.counter_fresh(now);
        }
        self.check_unexplained_press(now, &mut ev);
        // A press and the period's end in one reading: the clock's order decides (3.3.4).
        let end_first = upd.period_end.filter(|e| e.before_press);
        if let Some(end) = end_first {
            self.on_period_end(end, now, &mut ev);
        }
        if let Some(d) = upd.press {
            self.count_press(d);
            self.on_press(d, now, &mut ev);
        }
        // After the press that made it: the counter then stands at the period's moves.
        for &d in &upd.period_added {
            self.counter_period_added(d);
        }
        if let Some(end) = upd.period_end.filter(|e| !e.before_press) {
            self.on_period_end(end, now, &mut ev);
        }
        self.settle_control_check(now, &mut ev);
        // A player whose flag fell in an earlier period has had his fall.
        let mut colors: Vec<Color> = upd
            .flags
            .iter()
            .map(|&d| self.clock.color_of(d))
            .filter(|&c| !self.overstepped[idx(c)])
            .collect();
        colors.retain(|&c| !self.counter_excuses_flag(c));
        if !colors.is_empty() {
            self.on_flags(&colors, &mut ev);
        }
        self.watch_counter(now, &mut ev);
        ev
    }

    /// Time passes (no input): a silent clock's flag, a press that completed nothing.
    ///
    /// Call it only while the board link is up: a silent clock behind a live board means its
    /// readings stopped (flag fell and blocked), not that the serial line is gone.
    pub fn tick(&mut self, now: Millis) -> Vec<Ruling> {
        let mut ev = Vec::new();
        self.check_unexplained_press(now, &mut ev);
        self.settle_control_check(now, &mut ev);
        if let Some(d) = self.clock.tick(&self.cfg, now) {
            let c = self.clock.color_of(d);
            if !self.overstepped[idx(c)] && !self.counter_excuses_flag(c) {
                self.on_flags(&[c], &mut ev);
            }
        }
        self.watch_counter(now, &mut ev);
        ev
    }

    /// Whether a rule [`Arbiter::tick`] runs is waiting on time other than a silent clock's
    /// flag ([`Arbiter::next_wakeup`]): a press the record has not explained yet, a period's
    /// control to check, or the clock's move counter to compare, judge or take as agreeing
    /// again. While none is, a tick changes nothing, so the shell need not give one; it errs
    /// on the side of ticking (a tick too many costs a little, one too few a ruling).
    pub fn wants_ticks(&self) -> bool {
        self.unexplained_press.is_some()
            || self.control_check.is_some()
            || (!self.is_finished() && self.counter_waits())
    }

    /// The exact instant [`Arbiter::tick`] next has something to do on its own (a silent
    /// running clock's flag in the final period), if no input comes first.
    pub fn next_wakeup(&self) -> Option<Millis> {
        self.clock.silent_flag_due(&self.cfg)
    }

    pub(super) fn on_press(&mut self, d: Display, now: Millis, ev: &mut Vec<Ruling>) {
        // Auto side: the first press after a reported move is that mover's (normally White's
        // first move; if that press came before the tracker's report, the next move's press).
        // A press before any move is Black starting White's clock and teaches nothing.
        // With an illegal placement standing, the press is its author's. A reply read just
        // before the press (the same scan: made the moment the press came) leaves the press
        // the first mover's.
        let overtaken = self
            .overtaken
            .filter(|&(_, at)| now.saturating_sub(at) <= OVERTAKEN_MS)
            .map(|(c, _)| c);
        let likely_presser = self
            .pending
            .as_ref()
            .map(|p| p.player)
            .or(overtaken)
            .or(self.awaiting_press);
        // A press hidden in a fresh reading leaves the first press read after it uncertain:
        // the hidden one's mover, or his opponent's (see `press_maybe_unseen`).
        let hidden_before = std::mem::take(&mut self.press_maybe_hidden);
        if !self.clock.white_known()
            && !hidden_before
            && let Some(mover) = likely_presser
        {
            let white = if mover == Color::White { d } else { d.other() };
            self.clock.learn_white(white);
            if white == Display::Right {
                // Stamps taken before the side was known used the provisional mapping.
                for seg in &mut self.game.segments {
                    for m in &mut seg.moves {
                        std::mem::swap(&mut m.white_ms, &mut m.black_ms);
                    }
                }
            }
        }
        if self.is_finished() {
            return;
        }
        let presser = self.clock.color_of(d);
        if self.pending.as_ref().is_some_and(|p| p.player == presser) {
            self.complete_illegal_pending(presser, ev);
        } else if self.awaiting_press == Some(presser) {
            self.complete_move(presser);
            self.check_intended(presser, ev);
        } else if self.overtaken.is_some_and(|(c, _)| c == presser) {
            // The reply was read before this press (made the moment it came): the press
            // completes the presser's own move, the one before the last.
            self.overtaken = None;
            self.completed_moves[idx(presser)] += 1;
        } else {
            // A press that completed nothing (yet): it may be a move's whose report is late.
            self.stray_press = Some((now, self.clock.white_known().then_some(presser)));
            if presser == self.position().turn() && self.plies > 0 && self.clock.white_known() {
                // Possibly 7.5.3, or the tracker has not reported the move yet.
                self.unexplained_press = Some((presser, now));
            }
        }
    }

    /// Whether several stories of the moves made explain the board (the tracker's open
    /// stories, until one is picked): a press that completed nothing is judged only once one
    /// is, and a move that story reports late still completes it.
    pub fn set_moves_undecided(&mut self, undecided: bool) {
        self.moves_undecided = undecided;
    }

    /// Who pressed a clock whose lever now lies down on the left (`lever_left_down`) or the
    /// right, once the clock's sides are known (configured, or learnt): the tracker ends only
    /// that player's move with it.
    pub fn presser(&self, lever_left_down: bool) -> Option<Color> {
        let pressed = if lever_left_down {
            Display::Left
        } else {
            Display::Right
        };
        self.clock
            .white_known()
            .then(|| self.clock.color_of(pressed))
    }

    /// The clock's half White's time was learnt on, with `white_display = "auto"` (a
    /// configured side is none: nothing was learnt).
    pub fn learned_white_display(&self) -> Option<WhiteDisplay> {
        if self.cfg.white_display != WhiteDisplay::Auto || !self.clock.white_known() {
            return None;
        }
        Some(clock::white_setting(self.clock.white_display()))
    }

    /// A restored game's clock side as it was learnt before the restart (see
    /// [`crate::event::RecordFact::ClockSide`]): not learnt again. A configured side is never
    /// overridden.
    pub fn restore_white_display(&mut self, side: WhiteDisplay) {
        if let Some(white) = clock::configured_white(side) {
            self.clock.learn_white(white);
        }
    }

    /// The first clock reading with the lever unknown (a connection, or after a gap: a
    /// restart, an unplug) holds any press made before it, unseen: the press of a mover
    /// awaiting his, or of one whose move is reported just after it (see
    /// [`super::UNSEEN_PRESS_REPORT_MS`]).
    fn on_fresh_reading(&mut self, now: Millis, ev: &mut Vec<Ruling>) {
        match self.awaiting_press {
            Some(mover) => self.press_maybe_unseen(mover, ev),
            None => self.fresh_reading_at = Some(now),
        }
    }

    /// `mover`'s press may be in a fresh reading (see [`Self::on_fresh_reading`]). The clock
    /// tells it when its sides are known: his own time runs, his press is to come; his
    /// opponent's runs, he pressed. Else (sides unknown, clock stopped) neither is sure. Left
    /// awaiting, a hidden press made the opponent's next press (read within a quarter second
    /// of his reply) look like the mover's, overtaken, and taught the clock's sides the wrong
    /// way round (every later press then the other player's: a press "without a move" at the
    /// end of a game); dropped, a press still to come would be taken for the opponent's the
    /// same way. So his move counts as completed (it was made), without a stamp, and the next
    /// press read teaches nothing: the one after it, by a mover the record awaits, does.
    pub(super) fn press_maybe_unseen(&mut self, mover: Color, ev: &mut Vec<Ruling>) {
        let running = self.clock.running();
        if self.clock.white_known() && running == Some(mover) {
            return;
        }
        if self.clock.white_known() && running == Some(mover.other()) {
            self.complete_move(mover);
            self.check_intended(mover, ev);
            return;
        }
        self.awaiting_press = None;
        self.completed_moves[idx(mover)] += 1;
        self.press_maybe_hidden = !self.clock.white_known();
    }

    pub(super) fn complete_move(&mut self, presser: Color) {
        self.awaiting_press = None;
        self.completed_moves[idx(presser)] += 1;
        if let Some(t) = self.clock.known_time_ms(presser) {
            self.game.stamp_press(t);
        }
    }

    pub(super) fn check_unexplained_press(&mut self, now: Millis, ev: &mut Vec<Ruling>) {
        let Some((p, at)) = self.unexplained_press else {
            return;
        };
        // Whether the press made a move is known only once the board's story is.
        if now.saturating_sub(at) <= PRESS_GRACE_MS || self.moves_undecided {
            return;
        }
        self.unexplained_press = None;
        if self.is_finished() || p != self.position().turn() {
            return;
        }
        if self.cfg.edition.press_without_move_is_illegal() {
            self.complete_illegal(p, "clock pressed without making a move (7.5.3)".into(), ev);
        }
    }

    pub(super) fn complete_illegal_pending(&mut self, presser: Color, ev: &mut Vec<Ruling>) {
        let Some(p) = self.pending.take() else {
            return;
        };
        if let Some(m) = p
            .queen_move
            .filter(|_| self.cfg.edition.unexchanged_promotion_stands())
        {
            // 7.5.2: the move stands with a queen, and it is still an illegal move.
            self.record_move(m);
            self.game
                .comment("Pawn not exchanged on the last rank: it stands as a queen (7.5.2)");
            self.complete_move(presser);
            if let Some(last) = self.game.current_moves().last() {
                ev.push(Ruling::PromotionStands {
                    san: last.san.clone(),
                    uci: last.uci.clone(),
                });
            }
            self.complete_illegal(presser, p.description, ev);
            self.automatic_end_into(ev);
            return;
        }
        self.complete_illegal(presser, p.description, ev);
    }

    pub(super) fn complete_illegal(
        &mut self,
        offender: Color,
        description: String,
        ev: &mut Vec<Ruling>,
    ) {
        self.illegal[idx(offender)] += 1;
        let count = self.illegal[idx(offender)];
        self.game.illegal_moves = (self.illegal[0], self.illegal[1]);
        // The increment the offender gained from the illegal press is not his (Arbiters'
        // Manual, all time controls): say so in the record for the arbiter setting the clock.
        // A configured control says what that press gave; a delay (US or Bronstein) gives
        // nothing to take back, and what a delay clock shows at a press is not an increment.
        // Only without one is the increase seen at presses taken for the increment.
        let inc = match &self.cfg.time_control {
            Some(t) => Some(t.increment_after(self.completed_moves[idx(offender)])),
            None => self.clock.observed_increment_ms(),
        }
        .filter(|&i| i > 0);
        let inc_note = inc.map_or(String::new(), |i| {
            format!(" (take back the {} s increment of that press)", i / 1000)
        });
        self.game.comment(format!(
            "{} illegal move by {}: {}{inc_note}",
            ordinal(count),
            color_name(offender),
            description
        ));
        let times = match (
            self.clock.known_time_ms(Color::White),
            self.clock.known_time_ms(Color::Black),
        ) {
            (Some(w), Some(b)) => Some((w, b)),
            _ => None,
        };
        self.window = Some(Window {
            offender,
            count,
            description: description.clone(),
            times,
        });
        ev.push(Ruling::Publish(Event::IllegalMoveCompleted {
            player: offender.into(),
            count,
            description,
        }));
    }

    pub(super) fn on_flags(&mut self, fallen: &[Color], ev: &mut Vec<Ruling>) {
        if self.is_finished() {
            // A game end made before the flag stands (5.1.1, 6.9); a clock left running
            // after the game is no news.
            return;
        }
        for &c in fallen {
            ev.push(Ruling::Publish(Event::FlagFell { player: c.into() }));
            self.game
                .comment(format!("{} flag fell", Player::from(c).capitalised()));
        }
        let both_now = self.flag_down(Color::White) && self.flag_down(Color::Black);
        let claimed_fall = self.cfg.laws().flag_fall_is_claimed();
        if both_now && (fallen.len() == 2 || claimed_fall) {
            // 2005 10.4/B8: draw. 2023: the first fall decides, but a reading showing both
            // at once does not tell which was first (Guidelines III.3.1: draw).
            self.end(GameResult::Draw, Termination::BothFlagsFallen, ev);
            return;
        }
        if claimed_fall {
            // B6/B7: the fall only counts on the opponent's `win-on-time` claim.
            return;
        }
        let flagged = fallen[0];
        self.flag_decision(flagged, ev);
    }

    pub(super) fn flag_decision(&mut self, flagged: Color, ev: &mut Vec<Ruling>) {
        let winner = flagged.other();
        if unwinnable::cannot_mate(self.position(), winner) {
            self.end(GameResult::Draw, Termination::FlagFallDraw, ev);
        } else {
            self.end(win_for(winner), Termination::TimeForfeit, ev);
        }
    }

    pub(super) fn end(
        &mut self,
        result: GameResult,
        termination: Termination,
        ev: &mut Vec<Ruling>,
    ) {
        self.game.set_result(result, Some(termination));
        self.window = None;
        self.pending = None;
        self.unexplained_press = None;
        ev.push(Ruling::Publish(Event::GameEnded {
            result,
            termination,
        }));
    }
}
