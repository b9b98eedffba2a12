//! Periods ended by the clock's own move counter (`clock_periods = "moves"`), judged from the
//! record (Article 6.4; rules.md row 8), with the simulator's DGT XL in option 13 ("Fischer
//! Tournament") as the clock: it adds a side's next period at the press it counts as the
//! period's last move, no flag. A press without a move puts its counter ahead of the record:
//! the arbiter is told before it matters, and the period is judged from the record.
//! Readings reach the arbiter when the clock's display changes (as in UPDATE_NICE mode).

use eboard_core::arbiter::{Arbiter, ArbiterConfig, Ruling};
use eboard_core::event::Event;
use eboard_core::vocab::{
    ClockPeriods, Edition, GameResult, Player, Rules, Termination, WhiteDisplay,
};
use eboard_sim::ClockSide;
use eboard_sim::clock::{ClockSetup, VirtualClock};
use shakmaty::uci::UciMove;
use shakmaty::{Chess, Color, Position};

/// Option 13 scaled down (100 min for 40 moves, 50 min for 20, then 10 min, 30 s a move):
/// 4 moves in 20 s, 2 in 10 s, then 5 s, 1 s a move.
const OPTION_13: &str = "4/20+1:2/10+1:5+1";

struct Table {
    a: Arbiter,
    clock: VirtualClock,
    now: u64,
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
    fn new(edition: Edition) -> Table {
        let control = OPTION_13.parse().expect("control");
        let cfg = ArbiterConfig {
            rules: Rules::Standard,
            edition,
            guidelines_iii: false,
            white_display: WhiteDisplay::Left,
            time_control: Some(control),
            clock_periods: ClockPeriods::Moves,
        };
        let mut clock = VirtualClock::new(ClockSetup::default(), 0);
        clock.set_control_by_counter(&OPTION_13.parse().unwrap(), ClockSide::Left, 0);
        let mut t = Table {
            a: Arbiter::new(cfg, Chess::default(), Vec::new()),
            clock,
            now: 0,
            last_sent: None,
            events: Vec::new(),
        };
        // Black starts White's clock.
        t.clock.press(ClockSide::Right, 0);
        t.send();
        t
    }

    fn send(&mut self) {
        let r = self.clock.reading(self.now);
        if self.last_sent == Some(r) {
            return;
        }
        self.last_sent = Some(r);
        let ev = self.a.on_clock(&r, self.now);
        self.events.extend(ev);
    }

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
            let ev = self.a.tick(self.now);
            self.events.extend(ev);
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
        self.a.game().pgn().replace('\n', " ")
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

const FOUR_EACH: [&str; 8] = [
    "e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "d2d3", "f8c5",
];

#[test]
fn the_xl_adds_the_period_at_the_fourth_press_no_flag_nothing_to_tell() {
    for edition in [Edition::Fide2023, Edition::Fide2005] {
        let mut t = Table::new(edition);
        for m in FOUR_EACH {
            t.play(m, 2_000);
        }
        // White's 4th press added period 2 to his side only (no flag): 21-8+4+10 s, less
        // the moments between moves and presses.
        let left = t.clock.remaining(ClockSide::Left, t.now);
        assert!((26_000..=27_000).contains(&left), "{left}");
        assert!(!t.clock.steady_flag(ClockSide::Left));
        // White now uses more than what was left of period 1: the period is his, no fall.
        t.wait(12_000);
        t.play("b1c3", 0);
        t.wait(3_000);
        let ev = t.take();
        assert!(flags(&ev).is_empty() && ended(&ev).is_none(), "{ev:?}");
        assert!(!t.pgn().contains("counter"), "{}", t.pgn());
        assert!(!t.a.is_finished());
    }
}

/// A press without a move (2005: no penalty for it) puts each counter one ahead: the
/// arbiter is told at once, long before the clock adds period 2 at the 3rd move.
fn counters_one_ahead() -> Table {
    let mut t = Table::new(Edition::Fide2005);
    t.play("e2e4", 1_000);
    t.play("e7e5", 1_000);
    // White presses without a move; Black presses back without one.
    t.wait(1_000);
    t.press(Color::White);
    t.wait(1_000);
    t.press(Color::Black);
    t.wait(3_000);
    let pgn = t.pgn();
    assert!(
        pgn.contains(
            "Clock move counter 1 ahead for White: it counted 2 presses, the record has 1 \
             completed moves; it will add period 2 at his move 3 instead of 4"
        ),
        "{pgn}"
    );
    assert!(
        pgn.contains("Clock move counter 1 ahead for Black"),
        "{pgn}"
    );
    assert!(
        pgn.contains("(6.4)") && pgn.contains("(6.10.2, 7.1)"),
        "{pgn}"
    );
    t
}

#[test]
fn a_press_without_a_move_is_told_and_the_period_is_judged_from_the_record() {
    let mut t = counters_one_ahead();
    t.play("g1f3", 1_000);
    t.play("b8c6", 1_000);
    t.play("f1c4", 1_000);
    // The clock counted White's 3rd move as his 4th: period 2 added, early.
    assert_eq!(t.clock.counted(ClockSide::Left), 4);
    t.play("g8f6", 1_000);
    let left = t.clock.remaining(ClockSide::Left, t.now);
    assert!(left > 10_000, "{left}");
    let ev = t.take();
    assert!(flags(&ev).is_empty(), "{ev:?}");
    // White thinks on his 4th move until his display is down to the 10 s added early: his
    // time of period 1 is gone with 3 of the 4 moves made.
    t.wait(left - 10_000 + 1_500);
    let ev = t.take();
    assert_eq!(flags(&ev), vec![Player::White], "{}", t.pgn());
    assert_eq!(
        ended(&ev),
        Some((GameResult::BlackWins, Termination::TimeForfeit))
    );
    let pgn = t.pgn();
    assert!(
        pgn.contains(
            "White completed 3 of the 4 moves due when his time for period 1 ran out (the \
             clock's move counter had added period 2 early)"
        ),
        "{pgn}"
    );
}

#[test]
fn a_counter_ahead_is_no_fall_when_the_period_s_moves_are_made_in_its_time() {
    let mut t = counters_one_ahead();
    for m in ["g1f3", "b8c6", "f1c4", "g8f6", "d2d3", "f8c5", "b1c3"] {
        t.play(m, 1_000);
    }
    t.wait(3_000);
    let ev = t.take();
    assert!(flags(&ev).is_empty() && ended(&ev).is_none(), "{ev:?}");
    assert!(!t.a.is_finished());
}

#[test]
fn a_counter_behind_is_no_fall_and_the_arbiter_is_told_to_add_the_period() {
    let mut t = Table::new(Edition::Fide2023);
    for m in &FOUR_EACH[..6] {
        t.play(m, 1_000);
    }
    // Someone set White's counter back by one: his 4th move's press adds nothing.
    t.clock.set_counted(ClockSide::Left, 2);
    t.play("d2d3", 1_000);
    t.play("f8c5", 1_000);
    let left = t.clock.remaining(ClockSide::Left, t.now);
    t.wait(left + 2_000);
    assert!(t.clock.flag_fallen(ClockSide::Left));
    let ev = t.take();
    assert!(flags(&ev).is_empty() && ended(&ev).is_none(), "{ev:?}");
    let pgn = t.pgn();
    assert!(
        pgn.contains(
            "White's display reached zero, but the record shows 4 completed moves: period 2 is \
             his and the clock's counter did not add it. No flag fall; add 0:00:10 to his clock"
        ),
        "{pgn}"
    );
    assert!(!t.a.is_finished());
}

#[test]
fn after_a_restart_a_zero_in_the_second_period_is_a_flag_fall() {
    let mut t = Table::new(Edition::Fide2023);
    for m in FOUR_EACH {
        t.play(m, 1_000);
    }
    // The daemon restarts: the arbiter is rebuilt from the record, the XL runs on in period
    // 2 for both (4 moves each made and pressed).
    let cfg = t.a.config().clone();
    t.a = Arbiter::restore(cfg, t.a.game().clone()).expect("restored");
    t.last_sent = None;
    t.wait(3_000);
    // White uses up period 2 on his 5th move: a zero in period 2 with 4 of the 6 moves due
    // is his flag, no counter to excuse.
    let left = t.clock.remaining(ClockSide::Left, t.now);
    t.wait(left + 2_000);
    assert!(t.clock.flag_fallen(ClockSide::Left));
    let ev = t.take();
    assert_eq!(flags(&ev), vec![Player::White], "{}", t.pgn());
    assert_eq!(
        ended(&ev),
        Some((GameResult::BlackWins, Termination::TimeForfeit))
    );
    assert!(!t.pgn().contains("counter"), "{}", t.pgn());
}
