//! The control of a multi-period time control judged by the arbiter (rules.md row 8), with
//! the simulator's DGT 3000 in its FIDE modes as the clock: the steady flag at the end of a
//! period, the next period's time added to both sides, the final period's flag, delays.
//! Readings reach the arbiter when the clock's display changes (as in UPDATE_NICE mode).

use eboard_core::arbiter::{Arbiter, ArbiterConfig, Ruling, parse_fen};
use eboard_core::event::Event;
use eboard_core::vocab::{
    ClaimKind, Edition, GameResult, Player, Rules, Termination, WhiteDisplay,
};
use eboard_sim::ClockSide;
use eboard_sim::clock::{ClockSetup, VirtualClock};
use shakmaty::uci::UciMove;
use shakmaty::{Chess, Color, Position};

/// The scaled-down classical control of these tests: 4 moves in 20 s, then 10 s, 1 s a move.
const CONTROL: &str = "4/20+1:10+1";

struct Table {
    a: Arbiter,
    clock: VirtualClock,
    now: u64,
    /// Readings are sent: off while the link is down.
    link_up: bool,
    last_sent: Option<eboard_core::dgt::message::ClockReading>,
    events: Vec<Ruling>,
}

fn side(c: Color) -> ClockSide {
    match c {
        Color::White => ClockSide::Left,
        Color::Black => ClockSide::Right,
    }
}

impl Table {
    fn new(control: &str, rules: Rules, edition: Edition, fen: Option<&str>) -> Table {
        Self::with_clock(control, rules, edition, fen, true)
    }

    fn with_clock(
        control: &str,
        rules: Rules,
        edition: Edition,
        fen: Option<&str>,
        steady_flag: bool,
    ) -> Table {
        let cfg = ArbiterConfig {
            rules,
            edition,
            guidelines_iii: false,
            white_display: WhiteDisplay::Left,
            time_control: Some(control.parse().expect("control")),
            clock_periods: Default::default(),
        };
        let start = fen.map_or_else(Chess::default, |f| parse_fen(f).expect("fen"));
        let mut clock = VirtualClock::new(ClockSetup::default(), 0);
        clock.shows_steady_flag = steady_flag;
        clock.set_control(&control.parse().unwrap(), side(start.turn()), 0);
        let mut t = Table {
            a: Arbiter::new(cfg, start, Vec::new()),
            clock,
            now: 0,
            link_up: true,
            last_sent: None,
            events: Vec::new(),
        };
        // The player not to move starts the clock.
        let first = t.a.position().turn();
        t.clock.press(side(first.other()), 0);
        t.send();
        t
    }

    /// The reading goes to the arbiter when it changed (and the link is up).
    fn send(&mut self) {
        let r = self.clock.reading(self.now);
        if !self.link_up || self.last_sent == Some(r) {
            return;
        }
        self.last_sent = Some(r);
        let ev = self.a.on_clock(&r, self.now);
        self.events.extend(ev);
    }

    /// Time passes: readings as the display changes, the arbiter ticking in between.
    fn wait(&mut self, ms: u64) {
        let end = self.now + ms;
        while self.now < end {
            let step = self
                .clock
                .next_change(self.now)
                .map_or(end, |t| t.min(end))
                .min(self.now + 500)
                .max(self.now + 1);
            self.now = step;
            self.send();
            // The session ticks the arbiter only while the board link is up.
            if self.link_up {
                let ev = self.a.tick(self.now);
                self.events.extend(ev);
            }
        }
    }

    fn mv(&mut self, uci: &str) {
        let m = UciMove::from_ascii(uci.as_bytes())
            .expect("uci")
            .to_move(self.a.position())
            .expect("legal");
        let ev = self.a.on_move(m, self.now);
        self.events.extend(ev);
    }

    fn press(&mut self, c: Color) {
        self.clock.press(side(c), self.now);
        self.send();
    }

    /// After `think` ms, a move and its press.
    fn play(&mut self, uci: &str, think: u64) {
        let c = self.a.position().turn();
        self.wait(think);
        self.mv(uci);
        self.now += 50;
        self.press(c);
    }

    fn take(&mut self) -> Vec<Ruling> {
        std::mem::take(&mut self.events)
    }

    fn pgn(&self) -> String {
        self.a.game().pgn()
    }
}

fn flags(ev: &[Ruling]) -> Vec<Player> {
    ev.iter()
        .filter_map(|e| match e {
            Ruling::Publish(Event::FlagFell { player }) => Some(*player),
            _ => None,
        })
        .collect()
}

fn ended(ev: &[Ruling]) -> Option<(GameResult, Termination)> {
    ev.iter().find_map(|e| match e {
        Ruling::Publish(Event::GameEnded {
            result,
            termination,
        }) => Some((*result, *termination)),
        _ => None,
    })
}

/// Three moves each, two seconds apart.
const THREE_EACH: [&str; 6] = ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6"];
const FOURTH_EACH: [&str; 2] = ["d2d3", "f8c5"];

#[test]
fn moves_made_in_time_mean_nothing_ends_at_the_period_change() {
    for edition in [Edition::Fide2023, Edition::Fide2005] {
        let mut t = Table::new(CONTROL, Rules::Standard, edition, None);
        for m in THREE_EACH.iter().chain(&FOURTH_EACH) {
            t.play(m, 2_000);
        }
        // Both run out of period 1 thinking on move 5, White first, then play on.
        t.wait(20_000);
        assert_eq!(t.clock.period(), 1, "{edition:?}");
        t.play("b1c3", 0);
        t.wait(3_000);
        t.play("d7d6", 0);
        let ev = t.take();
        assert!(flags(&ev).is_empty() && ended(&ev).is_none(), "{ev:?}");
        assert!(!t.a.is_finished());
        assert!(!t.pgn().contains("flag"), "{}", t.pgn());
        assert!(t.a.claims().is_empty(), "{:?}", t.a.claims());
    }
}

#[test]
fn three_moves_when_white_s_period_runs_out_is_a_flag_fall() {
    // 2023 standard: loss.
    let mut t = Table::new(CONTROL, Rules::Standard, Edition::Fide2023, None);
    for m in THREE_EACH {
        t.play(m, 2_000);
    }
    t.wait(20_000);
    let ev = t.take();
    assert_eq!(flags(&ev), vec![Player::White]);
    assert_eq!(
        ended(&ev),
        Some((GameResult::BlackWins, Termination::TimeForfeit))
    );
    let pgn = t.pgn().replace('\n', " ");
    assert!(pgn.contains("[Termination \"time forfeit\"]"), "{pgn}");
    assert!(
        pgn.contains("White completed 3 of the 4 moves due when his time for period 1 ran out"),
        "{pgn}"
    );
    // The clock went on into the next period: still the game stands lost.
    assert_eq!(t.clock.period(), 1);

    // 2005 blitz: the fall opens Black's win-on-time claim, and the game goes on until then.
    let mut t = Table::new(CONTROL, Rules::Blitz, Edition::Fide2005, None);
    for m in THREE_EACH {
        t.play(m, 2_000);
    }
    t.wait(20_000);
    let ev = t.take();
    assert_eq!(flags(&ev), vec![Player::White]);
    assert_eq!(ended(&ev), None);
    assert!(
        t.a.claims()
            .iter()
            .any(|(p, k, _)| *p == Player::Black && *k == ClaimKind::WinOnTime),
        "{:?}",
        t.a.claims()
    );
    // The next period's flag on White does not fall a second time.
    t.play("d2d3", 0);
    assert!(flags(&t.take()).is_empty());
}

#[test]
fn a_period_overstep_is_a_draw_when_the_opponent_cannot_mate() {
    for edition in [Edition::Fide2023, Edition::Fide2005] {
        let fen = "8/8/4k3/8/8/8/4K3/7Q w - - 0 1";
        let mut t = Table::new(CONTROL, Rules::Standard, edition, Some(fen));
        for m in ["h1h2", "e6d5", "h2h3", "d5c5", "h3h4", "c5b6"] {
            t.play(m, 2_000);
        }
        t.wait(20_000);
        let ev = t.take();
        assert_eq!(flags(&ev), vec![Player::White], "{edition:?}");
        assert_eq!(
            ended(&ev),
            Some((GameResult::Draw, Termination::FlagFallDraw)),
            "{edition:?}"
        );
    }
}

#[test]
fn black_s_period_runs_out_while_he_thinks_on_his_fourth_move() {
    let mut t = Table::new(CONTROL, Rules::Standard, Edition::Fide2023, None);
    for m in THREE_EACH {
        t.play(m, 1_000);
    }
    t.play("d2d3", 1_000);
    // Black made his move on the board but has not pressed: it is not completed.
    t.wait(10_000);
    t.mv("f8c5");
    t.wait(20_000);
    let ev = t.take();
    assert_eq!(flags(&ev), vec![Player::Black]);
    assert_eq!(
        ended(&ev),
        Some((GameResult::WhiteWins, Termination::TimeForfeit))
    );
}

/// White plays three moves, then his fourth with `before_expiry_ms` of period 1 left; the
/// press and the clock's period change reach the arbiter in one reading.
fn last_control_move_in_one_reading(press_late: bool) -> Vec<Ruling> {
    let mut t = Table::new(CONTROL, Rules::Standard, Edition::Fide2023, None);
    for m in THREE_EACH {
        t.play(m, 2_000);
    }
    let left = t.clock.remaining(ClockSide::Left, t.now);
    // Up to 600 ms before the end of White's period, readings as usual.
    t.wait(left - 600);
    t.mv("d2d3");
    // Nothing is read until the press: then one reading shows it all.
    t.link_up = false;
    t.now += if press_late { 900 } else { 300 };
    t.clock.press(ClockSide::Left, t.now);
    t.now += 400;
    t.link_up = true;
    t.send();
    t.wait(3_000);
    t.take()
}

#[test]
fn the_last_control_move_counts_only_if_its_press_came_before_the_flag() {
    // Pressed 300 ms before the end: the control is met, nothing ends.
    let ev = last_control_move_in_one_reading(false);
    assert!(flags(&ev).is_empty() && ended(&ev).is_none(), "{ev:?}");
    // Pressed 300 ms after the end: in the same reading as the period change, an overstep.
    let ev = last_control_move_in_one_reading(true);
    assert_eq!(flags(&ev), vec![Player::White]);
    assert_eq!(
        ended(&ev),
        Some((GameResult::BlackWins, Termination::TimeForfeit))
    );
}

#[test]
fn a_missed_flag_reading_is_judged_from_the_jump_of_both_displays() {
    for (moves, overstep) in [(&THREE_EACH[..], true), (&THREE_EACH[..5], false)] {
        // A clock whose readings never carry the steady flag: only the jump tells.
        let mut t = Table::with_clock(CONTROL, Rules::Standard, Edition::Fide2023, None, false);
        for m in moves {
            t.play(m, 2_000);
        }
        if !overstep {
            // Black to move with 3 made: White made his 3 too, give White his fourth.
            t.play("f8c5", 0);
            t.play("d2d3", 0);
            t.play("d7d6", 0);
        }
        let to_move = t.a.position().turn();
        let left = t.clock.remaining(side(to_move), t.now);
        t.wait(left.saturating_sub(1_500));
        t.link_up = false;
        t.wait(2_500);
        t.link_up = true;
        t.wait(2_000);
        let ev = t.take();
        if overstep {
            assert_eq!(flags(&ev), vec![Player::White]);
            assert_eq!(
                ended(&ev),
                Some((GameResult::BlackWins, Termination::TimeForfeit))
            );
        } else {
            assert!(flags(&ev).is_empty() && ended(&ev).is_none(), "{ev:?}");
            assert_eq!(t.clock.period(), 1);
        }
    }
}

#[test]
fn delay_games_take_no_increment_back_after_an_illegal_press() {
    for control in ["60b5", "60d5", "4/20b2:10b2", "4/20d2:10d2"] {
        let mut t = Table::new(control, Rules::Blitz, Edition::Fide2023, None);
        t.play("e2e4", 3_000);
        t.play("e7e5", 3_000);
        t.wait(3_000);
        let ev =
            t.a.on_illegal_placement(Color::White, "Ke1-e3", None, t.now);
        assert!(ev.is_empty());
        t.press(Color::White);
        let ev = t.take();
        assert!(
            ev.iter()
                .any(|e| matches!(e, Ruling::Publish(Event::IllegalMoveCompleted { .. }))),
            "{control}: {ev:?}"
        );
        let pgn = t.pgn().replace('\n', " ");
        assert!(pgn.contains("1st illegal move by white: Ke1-e3"), "{pgn}");
        assert!(!pgn.contains("increment"), "{control}: {pgn}");
    }
    // A Fischer game says what to take back.
    let mut t = Table::new("60+2", Rules::Blitz, Edition::Fide2023, None);
    t.play("e2e4", 3_000);
    t.play("e7e5", 3_000);
    let _ =
        t.a.on_illegal_placement(Color::White, "Ke1-e3", None, t.now);
    t.press(Color::White);
    assert!(
        t.pgn()
            .replace('\n', " ")
            .contains("(take back the 2 s increment of that press)")
    );
}

#[test]
fn a_silent_us_delay_clock_is_not_a_flag_while_the_delay_runs() {
    // 9 s and a 5 s delay a move: the display stands still for 5 s at the start of a turn.
    let mut t = Table::new("9d5", Rules::Blitz, Edition::Fide2023, None);
    t.play("e2e4", 5_000);
    t.play("e7e5", 12_000);
    t.play("g1f3", 1_000);
    // Black: under 2 s left, and his turn starts with 5 s of silence.
    assert_eq!(t.clock.remaining(ClockSide::Right, t.now), 1_950);
    t.wait(6_000);
    assert!(flags(&t.take()).is_empty());
    t.wait(5_000);
    let ev = t.take();
    assert_eq!(flags(&ev), vec![Player::Black]);
    assert_eq!(
        ended(&ev),
        Some((GameResult::WhiteWins, Termination::TimeForfeit))
    );
}

#[test]
fn the_final_period_s_flag_is_a_fall_and_clk_is_right_across_the_period_change() {
    let mut t = Table::new(CONTROL, Rules::Standard, Edition::Fide2023, None);
    for m in THREE_EACH.iter().chain(&FOURTH_EACH) {
        t.play(m, 2_000);
    }
    // White runs out of period 1 thinking on move 5 and presses 1.5 s into period 2.
    t.wait(18_000);
    t.wait(1_500);
    assert_eq!(t.clock.period(), 1);
    t.mv("b1c3");
    t.now += 50;
    t.press(Color::White);
    let clk = t.clock.remaining(ClockSide::Left, t.now);
    let last = t.a.game().current_moves().last().cloned().unwrap();
    assert_eq!(
        last.clk_ms.map(|ms| ms.div_ceil(1000)),
        Some(clk.div_ceil(1000))
    );
    assert!(clk > 8_000 && clk < 11_000, "{clk}");
    assert!(flags(&t.take()).is_empty());
    // Black's turn, then White's final period runs out: the blinking flag.
    t.play("d7d6", 1_000);
    t.wait(15_000);
    let ev = t.take();
    assert_eq!(flags(&ev), vec![Player::White]);
    assert_eq!(
        ended(&ev),
        Some((GameResult::BlackWins, Termination::TimeForfeit))
    );
    assert!(t.clock.reading(t.now).left_flags.flag_fallen);
}
