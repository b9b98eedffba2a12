//! Scenario tests with simulated time for every row of the contract's editions table, in
//! both editions: the illegal-move lifecycle tied to the clock press, flag falls with and
//! without mating material, both flags, increments, a paused clock, quickplay finish and the
//! automatic draws.

use eboard_core::arbiter::clock::Display;
use eboard_core::arbiter::{Arbiter, ArbiterConfig, Ruling, parse_fen, unexchanged_promotion};
use eboard_core::dgt::message::{ClockReading, ClockStatus, DisplayFlags, DisplayTime};
use eboard_core::event::{Event, RecordFact};
use eboard_core::session::Command;
use eboard_core::vocab::{CommandError, Edition, Player, Rules, Termination, WhiteDisplay};
use shakmaty::uci::UciMove;
use shakmaty::{Chess, Color, Position};

/// A simulated DGT clock next to the arbiter. Times in ms; readings sent once a second.
struct Sim {
    a: Arbiter,
    now: u64,
    /// [left, right]
    t: [u64; 2],
    running: Option<Display>,
    lever_left_down: bool,
    inc: u64,
    white: Display,
    flag: [bool; 2],
    events: Vec<Ruling>,
}

fn i(d: Display) -> usize {
    match d {
        Display::Left => 0,
        Display::Right => 1,
    }
}

fn dt(ms: u64) -> DisplayTime {
    // Displays show whole seconds, rounded up while running (as DGT clocks do).
    let s = ms.div_ceil(1000);
    DisplayTime {
        hours: (s / 3600) as u8,
        minutes: ((s / 60) % 60) as u8,
        seconds: (s % 60) as u8,
    }
}

fn cfg(rules: Rules, edition: Edition) -> ArbiterConfig {
    ArbiterConfig {
        rules,
        edition,
        guidelines_iii: false,
        white_display: WhiteDisplay::Left,
        time_control: None,
        clock_periods: Default::default(),
    }
}

impl Sim {
    fn new(c: ArbiterConfig, fen: Option<&str>, base_ms: u64, inc: u64) -> Sim {
        let start = fen.map_or_else(Chess::default, |f| parse_fen(f).expect("fen"));
        let white = match c.white_display {
            WhiteDisplay::Right => Display::Right,
            _ => Display::Left,
        };
        let mut s = Sim {
            a: Arbiter::new(c, start, Vec::new()),
            now: 0,
            t: [base_ms, base_ms],
            running: None,
            lever_left_down: false,
            inc,
            white,
            flag: [false, false],
            events: Vec::new(),
        };
        s.send();
        s
    }

    fn display(&self, c: Color) -> Display {
        if c == Color::White {
            self.white
        } else {
            self.white.other()
        }
    }

    fn reading(&self) -> ClockReading {
        let fl = |k: usize| DisplayFlags {
            flag_fallen: self.flag[k],
            time_per_move: self.inc > 0,
            flag_shown: false,
        };
        ClockReading {
            left: dt(self.t[0]),
            right: dt(self.t[1]),
            left_flags: fl(0),
            right_flags: fl(1),
            status: ClockStatus {
                running: self.running.is_some(),
                lever_left_down: self.lever_left_down,
                battery_low: false,
                left_running: self.running == Some(Display::Left),
                right_running: self.running == Some(Display::Right),
                connected: true,
            },
        }
    }

    fn send(&mut self) {
        let r = self.reading();
        let ev = self.a.on_clock(&r, self.now);
        self.events.extend(ev);
    }

    /// Starts the clock with `c`'s time running (the opponent's lever down).
    fn start(&mut self, c: Color) {
        let d = self.display(c);
        self.lever_left_down = d == Display::Right;
        self.running = Some(d);
        self.send();
    }

    fn pause(&mut self) {
        self.running = None;
        self.send();
    }

    /// Lets time pass, with a reading every second.
    fn wait(&mut self, ms: u64) {
        let mut left = ms;
        while left > 0 {
            let step = left.min(1000);
            left -= step;
            self.now += step;
            if let Some(d) = self.running {
                let k = i(d);
                self.t[k] = self.t[k].saturating_sub(step);
                if self.t[k] == 0 {
                    self.flag[k] = true;
                }
            }
            self.send();
            let ev = self.a.tick(self.now);
            self.events.extend(ev);
        }
    }

    fn press(&mut self, c: Color) {
        let d = self.display(c);
        if self.running == Some(d) {
            self.t[i(d)] += self.inc;
        }
        self.lever_left_down = d == Display::Left;
        self.running = Some(d.other());
        self.now += 100;
        self.send();
    }

    fn mv(&mut self, uci: &str) {
        let m = UciMove::from_ascii(uci.as_bytes())
            .expect("uci")
            .to_move(self.a.position())
            .expect("legal");
        self.now += 100;
        let ev = self.a.on_move(m, self.now);
        self.events.extend(ev);
    }

    /// Makes a move and presses the clock, after `think` ms.
    fn play(&mut self, uci: &str, think: u64) {
        let c = self.a.position().turn();
        self.wait(think);
        self.mv(uci);
        self.press(c);
    }

    fn illegal(&mut self, desc: &str) {
        let c = self.a.position().turn();
        let ev = self.a.on_illegal_placement(c, desc, None, self.now);
        self.events.extend(ev);
    }

    fn take_events(&mut self) -> Vec<Ruling> {
        std::mem::take(&mut self.events)
    }

    fn has_claim(&self, player: &str, kind: &str) -> bool {
        self.a
            .claims()
            .iter()
            .any(|(p, k, _)| p == player && k == kind)
    }

    fn accept(&mut self, player: &str, kind: &str) -> Result<Vec<Ruling>, CommandError> {
        let detail = self
            .a
            .claims()
            .into_iter()
            .find(|(p, k, _)| p == player && k == kind)
            .map(|(_, _, d)| d)
            .unwrap_or_default();
        accept_words(&mut self.a, player, kind, &detail)
    }
}

/// The claims as the contract spells them.
fn claims(a: &Arbiter) -> Vec<(String, String, String)> {
    a.claims()
        .into_iter()
        .map(|(p, k, d)| (p.to_string(), k.to_string(), d))
        .collect()
}

/// `AcceptClaim` with the words as a caller sends them: parsed as the D-Bus edge parses them.
fn accept_words(
    a: &mut Arbiter,
    player: &str,
    kind: &str,
    detail: &str,
) -> Result<Vec<Ruling>, CommandError> {
    match Command::accept_claim(player, kind, detail.into())? {
        Command::AcceptClaim {
            player,
            kind,
            detail,
        } => a.accept_claim(player, kind, &detail),
        other => panic!("{other:?}"),
    }
}

/// `RejectClaim` with the words as a caller sends them.
fn reject_words(
    a: &mut Arbiter,
    player: &str,
    kind: &str,
    detail: &str,
) -> Result<Vec<Ruling>, CommandError> {
    match Command::reject_claim(player, kind, detail.into())? {
        Command::RejectClaim {
            player,
            kind,
            detail,
        } => a.reject_claim(player, kind, &detail),
        other => panic!("{other:?}"),
    }
}

/// `Adjudicate` with the words as a caller sends them.
fn adjudicate_words(
    a: &mut Arbiter,
    result: &str,
    reason: &str,
) -> Result<Vec<Ruling>, CommandError> {
    match Command::adjudicate(result, reason.into())? {
        Command::Adjudicate { result, reason } => a.adjudicate(result, &reason),
        other => panic!("{other:?}"),
    }
}

fn ended(ev: &[Ruling]) -> Option<(String, String)> {
    ev.iter().find_map(|e| match e {
        Ruling::Publish(Event::GameEnded {
            result,
            termination,
        }) => Some((result.to_string(), termination.to_string())),
        _ => None,
    })
}

fn penalty(ev: &[Ruling]) -> Option<(String, u64)> {
    ev.iter().find_map(|e| match e {
        // The added time, in whole seconds, leads the penalty's description.
        Ruling::Publish(Event::Record(RecordFact::Penalty {
            player,
            description,
        })) => {
            let seconds: u64 = description.split(" s: ").next()?.parse().ok()?;
            Some((player.to_string(), seconds * 1000))
        }
        _ => None,
    })
}

fn completed(ev: &[Ruling]) -> Vec<(String, u32)> {
    ev.iter()
        .filter_map(|e| match e {
            Ruling::Publish(Event::IllegalMoveCompleted { player, count, .. }) => {
                Some((player.to_string(), *count))
            }
            _ => None,
        })
        .collect()
}

const BOTH: [Edition; 2] = [Edition::Fide2023, Edition::Fide2005];
const ALL_RULES: [Rules; 3] = [Rules::Standard, Rules::Rapid, Rules::Blitz];

/// A game under way: 1. e4 e5, White to move, clocks running.
fn opened(rules: Rules, edition: Edition, base: u64) -> Sim {
    let mut s = Sim::new(cfg(rules, edition), None, base, 0);
    s.start(Color::White);
    s.play("e2e4", 5_000);
    s.play("e7e5", 5_000);
    s.take_events();
    s
}

/// White completes an illegal move (placement, then press); the arbiter then restores the
/// position and restarts White's clock (which flips the lever back: not a press of White's).
fn white_illegal(s: &mut Sim, desc: &str) -> Vec<Ruling> {
    s.wait(2_000);
    s.illegal(desc);
    s.press(Color::White);
    let ev = s.take_events();
    s.wait(1_000);
    s.start(Color::White);
    assert!(completed(&s.take_events()).is_empty());
    ev
}

// ----- illegal move lifecycle ------------------------------------------------------------

#[test]
fn illegal_placement_corrected_before_the_press_is_not_penalised() {
    for e in BOTH {
        for r in ALL_RULES {
            let mut s = opened(r, e, 600_000);
            s.illegal("Nb1-b3");
            assert_eq!(s.a.pending_illegal(), "Nb1-b3");
            s.events.extend(s.a.on_illegal_cleared(s.now));
            assert_eq!(s.a.pending_illegal(), "");
            s.play("g1f3", 1_000);
            assert!(completed(&s.take_events()).is_empty());
            assert_eq!(s.a.illegal_counts(), (0, 0));
            assert!(!s.has_claim("black", "illegal-move"));
        }
    }
}

#[test]
fn illegal_move_completed_by_the_press_opens_the_claim() {
    for e in BOTH {
        for r in ALL_RULES {
            let mut s = opened(r, e, 600_000);
            let ev = white_illegal(&mut s, "Ke1-e3");
            assert_eq!(
                completed(&ev),
                vec![("white".to_string(), 1)],
                "{e:?} {r:?}"
            );
            assert_eq!(s.a.illegal_counts(), (1, 0));
            assert_eq!(s.a.pending_illegal(), "");
            assert!(claims(&s.a).contains(&(
                "black".into(),
                "illegal-move".into(),
                "Ke1-e3".into()
            )));
        }
    }
}

#[test]
fn claim_window_closes_with_the_opponents_own_move() {
    for e in BOTH {
        let mut s = opened(Rules::Blitz, e, 180_000);
        white_illegal(&mut s, "Bf1-f3");
        // The position is restored and White plays a legal move: the window stays open.
        s.play("g1f3", 1_000);
        assert!(s.has_claim("black", "illegal-move"));
        // Black moves on: the window is closed.
        s.play("b8c6", 1_000);
        assert!(!s.has_claim("black", "illegal-move"));
        assert!(matches!(
            s.accept("black", "illegal-move"),
            Err(CommandError::ClaimNotAvailable(_))
        ));
        assert_eq!(s.a.result(), "*");
    }
}

#[test]
fn first_illegal_move_2023_gives_two_minutes_standard_one_minute_rapid_blitz() {
    for (r, ms) in [
        (Rules::Standard, 120_000),
        (Rules::Rapid, 60_000),
        (Rules::Blitz, 60_000),
    ] {
        let mut s = opened(r, Edition::Fide2023, 600_000);
        white_illegal(&mut s, "Ke1-e3");
        let ev = s.accept("black", "illegal-move").expect("claim");
        assert_eq!(penalty(&ev), Some(("black".into(), ms)), "{r:?}");
        assert_eq!(ended(&ev), None);
        assert_eq!(s.a.result(), "*");
        assert_eq!(s.a.game().penalties.len(), 1);
        // The arbiter adds the time on the clock: a jump up is believed.
        s.t[1] += ms;
        s.send();
        assert!(s.a.black_ms() > 600_000);
    }
}

#[test]
fn second_illegal_move_2023_loses() {
    for r in ALL_RULES {
        let mut s = opened(r, Edition::Fide2023, 600_000);
        white_illegal(&mut s, "Ke1-e3");
        s.accept("black", "illegal-move").expect("first");
        s.play("g1f3", 1_000);
        s.play("b8c6", 1_000);
        let ev = white_illegal(&mut s, "Nf3-f5");
        assert_eq!(completed(&ev), vec![("white".to_string(), 2)]);
        let ev = s.accept("black", "illegal-move").expect("second");
        assert_eq!(
            ended(&ev),
            Some(("0-1".into(), "illegal-move".into())),
            "{r:?}"
        );
        assert!(s.a.claims().is_empty());
    }
}

#[test]
fn illegal_moves_2005_standard_two_penalties_then_loss_on_the_third() {
    let mut s = opened(Rules::Standard, Edition::Fide2005, 5_400_000);
    for n in 1..=2u32 {
        let ev = white_illegal(&mut s, "Ke1-e3");
        assert_eq!(completed(&ev), vec![("white".to_string(), n)]);
        let ev = s.accept("black", "illegal-move").expect("claim");
        assert_eq!(penalty(&ev), Some(("black".into(), 120_000)));
        assert_eq!(s.a.result(), "*");
    }
    white_illegal(&mut s, "Ke1-e3");
    let ev = s.accept("black", "illegal-move").expect("third");
    assert_eq!(ended(&ev), Some(("0-1".into(), "illegal-move".into())));
}

#[test]
fn illegal_move_2005_blitz_claims_a_win_c3() {
    let mut s = opened(Rules::Blitz, Edition::Fide2005, 300_000);
    white_illegal(&mut s, "Qd1-h5 through e2");
    let ev = s.accept("black", "illegal-move").expect("claim");
    assert_eq!(ended(&ev), Some(("0-1".into(), "illegal-move".into())));
}

#[test]
fn illegal_move_2005_rapid_loses_only_under_five_minutes() {
    let mut s = opened(Rules::Rapid, Edition::Fide2005, 1_500_000);
    white_illegal(&mut s, "Ke1-e3");
    let ev = s.accept("black", "illegal-move").expect("claim");
    assert_eq!(penalty(&ev), Some(("black".into(), 120_000)));
    assert_eq!(s.a.result(), "*");

    let mut s = opened(Rules::Rapid, Edition::Fide2005, 290_000);
    white_illegal(&mut s, "Ke1-e3");
    let ev = s.accept("black", "illegal-move").expect("claim");
    assert_eq!(ended(&ev), Some(("0-1".into(), "illegal-move".into())));
}

#[test]
fn losing_illegal_move_is_a_draw_when_the_opponent_cannot_mate() {
    for (e, n) in [(Edition::Fide2023, 2), (Edition::Fide2005, 3)] {
        // Black has a lone king.
        let mut s = Sim::new(
            cfg(Rules::Standard, e),
            Some("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"),
            600_000,
            0,
        );
        s.start(Color::White);
        for _ in 1..n {
            white_illegal(&mut s, "Ke1-e3");
            s.accept("black", "illegal-move").expect("claim");
        }
        white_illegal(&mut s, "Ke1-e3");
        let ev = s.accept("black", "illegal-move").expect("claim");
        assert_eq!(
            ended(&ev),
            Some(("1/2-1/2".into(), "illegal-move".into())),
            "{e:?}"
        );
    }
}

#[test]
fn press_without_a_move_is_illegal_in_2023_7_5_3() {
    let mut s = opened(Rules::Blitz, Edition::Fide2023, 180_000);
    s.wait(1_000);
    s.press(Color::White);
    s.wait(3_000);
    let ev = s.take_events();
    assert_eq!(completed(&ev).len(), 1, "{ev:?}");
    assert!(s.has_claim("black", "illegal-move"));

    let mut s = opened(Rules::Blitz, Edition::Fide2005, 180_000);
    s.wait(1_000);
    s.press(Color::White);
    s.wait(3_000);
    assert!(completed(&s.take_events()).is_empty());
}

#[test]
fn a_move_reported_just_after_the_press_is_not_a_press_without_move() {
    let mut s = opened(Rules::Blitz, Edition::Fide2023, 180_000);
    s.wait(1_000);
    s.press(Color::White);
    s.now += 500;
    s.mv("g1f3");
    s.wait(3_000);
    assert!(completed(&s.take_events()).is_empty());
    let last = s.a.game().current_moves().last().expect("move").clone();
    assert_eq!(last.san, "Nf3");
    assert!(last.clk_ms.is_some());
}

#[test]
fn pawn_left_on_the_last_rank_stands_as_a_queen_2023_7_5_2() {
    let fen = "7k/P7/8/8/8/8/8/4K3 w - - 0 1";
    let promo = |s: &Sim| {
        UciMove::from_ascii(b"a7a8q")
            .expect("uci")
            .to_move(s.a.position())
            .expect("legal")
    };
    let mut s = Sim::new(cfg(Rules::Blitz, Edition::Fide2023), Some(fen), 180_000, 0);
    s.start(Color::White);
    let m = promo(&s);
    // The helper finds that move from the board the sensors show (pawn on a8).
    let board = shakmaty::Board::from_ascii_board_fen(b"P6k/8/8/8/8/8/8/4K3").expect("board");
    assert_eq!(unexchanged_promotion(s.a.position(), &board), Some(m));
    let normal = parse_fen("Q6k/8/8/8/8/8/8/4K3 b - - 0 1")
        .expect("fen")
        .board()
        .clone();
    assert_eq!(unexchanged_promotion(s.a.position(), &normal), None);
    let ev =
        s.a.on_illegal_placement(Color::White, "pawn a7-a8 not exchanged", Some(m), s.now);
    assert!(ev.is_empty());
    s.press(Color::White);
    let ev = s.take_events();
    assert!(
        ev.iter()
            .any(|e| matches!(e, Ruling::PromotionStands { san, .. } if san == "a8=Q+"))
    );
    assert_eq!(completed(&ev), vec![("white".to_string(), 1)]);
    assert_eq!(s.a.position().turn(), Color::Black);
    assert_eq!(s.a.game().current_moves().len(), 1);

    let mut s = Sim::new(cfg(Rules::Blitz, Edition::Fide2005), Some(fen), 180_000, 0);
    s.start(Color::White);
    let m = promo(&s);
    s.a.on_illegal_placement(Color::White, "pawn a7-a8 not exchanged", Some(m), s.now);
    s.press(Color::White);
    let ev = s.take_events();
    assert!(
        !ev.iter()
            .any(|e| matches!(e, Ruling::PromotionStands { .. }))
    );
    assert_eq!(completed(&ev).len(), 1);
    assert_eq!(s.a.position().turn(), Color::White);
}

// ----- flags -------------------------------------------------------------------------------

#[test]
fn flag_fall_2023_ends_at_once_win_or_draw_by_mating_material() {
    for r in [Rules::Rapid, Rules::Blitz, Rules::Standard] {
        let mut s = opened(r, Edition::Fide2023, 20_000);
        s.wait(20_000);
        let ev = s.take_events();
        assert!(ev.contains(&Ruling::Publish(Event::FlagFell {
            player: Player::White
        })));
        assert_eq!(
            ended(&ev),
            Some(("0-1".into(), "time-forfeit".into())),
            "{r:?}"
        );
    }
    // Black has a lone king: White's flag is a draw.
    let mut s = Sim::new(
        cfg(Rules::Blitz, Edition::Fide2023),
        Some("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"),
        10_000,
        0,
    );
    s.start(Color::White);
    s.wait(11_000);
    assert_eq!(
        ended(&s.take_events()),
        Some(("1/2-1/2".into(), "flag-fall-draw".into()))
    );
}

#[test]
fn flag_fall_2005_rapid_blitz_is_a_claim_standard_ends() {
    for r in [Rules::Rapid, Rules::Blitz] {
        let mut s = opened(r, Edition::Fide2005, 20_000);
        s.wait(20_000);
        let ev = s.take_events();
        assert!(ev.contains(&Ruling::Publish(Event::FlagFell {
            player: Player::White
        })));
        assert_eq!(ended(&ev), None);
        assert!(s.has_claim("black", "win-on-time"));
        let ev = s.accept("black", "win-on-time").expect("claim");
        assert_eq!(ended(&ev), Some(("0-1".into(), "time-forfeit".into())));
    }
    let mut s = opened(Rules::Standard, Edition::Fide2005, 20_000);
    s.wait(20_000);
    assert_eq!(
        ended(&s.take_events()),
        Some(("0-1".into(), "time-forfeit".into()))
    );
}

#[test]
fn win_on_time_claim_2005_is_a_draw_when_the_claimant_cannot_mate() {
    let mut s = Sim::new(
        cfg(Rules::Blitz, Edition::Fide2005),
        Some("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"),
        5_000,
        0,
    );
    s.start(Color::White);
    s.wait(6_000);
    let ev = s.accept("black", "win-on-time").expect("claim");
    assert_eq!(
        ended(&ev),
        Some(("1/2-1/2".into(), "flag-fall-draw".into()))
    );
}

#[test]
fn both_flags() {
    // 2005: the second flag before any claim makes it a draw.
    let mut s = opened(Rules::Blitz, Edition::Fide2005, 10_000);
    s.wait(11_000);
    s.running = Some(Display::Right); // the clock goes on with Black's time (arbiter's clock)
    s.wait(11_000);
    assert_eq!(
        ended(&s.take_events()),
        Some(("1/2-1/2".into(), "both-flags-fallen".into()))
    );
    // 2023: the first flag decides (the game is over before the second falls).
    let mut s = opened(Rules::Blitz, Edition::Fide2023, 10_000);
    s.wait(11_000);
    s.running = Some(Display::Right);
    s.wait(11_000);
    assert_eq!(s.a.result(), "0-1");
    assert_eq!(
        s.a.termination().map_or("", Termination::as_str),
        "time-forfeit"
    );
    // 2023: both shown in one reading (order unknown) is a draw.
    let mut s = opened(Rules::Blitz, Edition::Fide2023, 10_000);
    s.flag = [true, true];
    s.t = [0, 0];
    s.send();
    assert_eq!(
        ended(&s.take_events()),
        Some(("1/2-1/2".into(), "both-flags-fallen".into()))
    );
}

#[test]
fn checkmate_made_before_the_flag_stands() {
    let mut s = Sim::new(cfg(Rules::Blitz, Edition::Fide2023), None, 30_000, 0);
    s.start(Color::White);
    s.play("f2f3", 5_000);
    s.play("e7e5", 5_000);
    s.play("g2g4", 5_000);
    s.wait(14_000);
    s.mv("d8h4"); // mate made, not pressed
    assert_eq!(s.a.result(), "0-1");
    s.take_events();
    s.wait(20_000);
    assert_eq!(s.a.result(), "0-1");
    assert!(
        s.take_events().is_empty(),
        "no FlagFell after the game ended"
    );
    assert_eq!(
        s.a.termination().map_or("", Termination::as_str),
        "checkmate"
    );
}

#[test]
fn paused_clock_is_never_a_resignation() {
    for e in BOTH {
        let mut s = opened(Rules::Blitz, e, 10_000);
        s.wait(3_000);
        s.pause();
        assert_eq!(s.a.clock_running(), "none");
        s.wait(600_000);
        assert_eq!(s.a.result(), "*");
        assert!(s.take_events().is_empty());
    }
}

#[test]
fn increment_shows_in_the_stamps_and_blocks_quickplay() {
    let mut c = cfg(Rules::Rapid, Edition::Fide2005);
    c.time_control = None;
    let mut s = Sim::new(c, None, 100_000, 2_000);
    s.start(Color::White);
    s.play("e2e4", 3_000);
    let m = s.a.game().current_moves()[0].clone();
    assert_eq!(m.white_ms, Some(97_000));
    assert_eq!(m.clk_ms, Some(99_000));
    assert!(s.a.game().pgn().contains("e4 {[%clk 0:01:39]}"));
    // Under two minutes but with increment: no quickplay finish.
    assert!(!s.has_claim("black", "quickplay-finish"));
}

#[test]
fn quickplay_finish_by_edition() {
    // 2005 10.2: any no-increment standard/rapid game.
    let mut s = opened(Rules::Rapid, Edition::Fide2005, 100_000);
    assert!(s.has_claim("white", "quickplay-finish"));
    let ev = s.accept("white", "quickplay-finish").expect("claim");
    assert_eq!(ended(&ev), Some(("1/2-1/2".into(), "claim".into())));
    // Not in blitz.
    let s = opened(Rules::Blitz, Edition::Fide2005, 100_000);
    assert!(!s.has_claim("white", "quickplay-finish"));
    // 2023: only with Guidelines III announced.
    let s = opened(Rules::Rapid, Edition::Fide2023, 100_000);
    assert!(!s.has_claim("white", "quickplay-finish"));
    let mut c = cfg(Rules::Standard, Edition::Fide2023);
    c.guidelines_iii = true;
    let mut s = Sim::new(c, None, 100_000, 0);
    s.start(Color::White);
    assert!(s.has_claim("white", "quickplay-finish"));
    // A configured increment excludes it too.
    let mut c = cfg(Rules::Standard, Edition::Fide2023);
    c.guidelines_iii = true;
    c.time_control = Some("100+5".parse().unwrap());
    let mut s = Sim::new(c, None, 100_000, 0);
    s.start(Color::White);
    assert!(!s.has_claim("white", "quickplay-finish"));
}

// ----- automatic draws and claims ------------------------------------------------------------

fn shuffle(s: &mut Sim, times: usize) {
    for _ in 0..times {
        for m in ["g1f3", "g8f6", "f3g1", "f6g8"] {
            s.play(m, 500);
        }
    }
}

#[test]
fn fivefold_is_automatic_in_2023_only_threefold_is_a_claim() {
    let mut s = Sim::new(cfg(Rules::Standard, Edition::Fide2023), None, 600_000, 0);
    s.start(Color::White);
    shuffle(&mut s, 2);
    assert!(claims(&s.a).contains(&("white".into(), "threefold-repetition".into(), String::new())));
    shuffle(&mut s, 2);
    assert_eq!(
        s.a.termination().map_or("", Termination::as_str),
        "fivefold-repetition"
    );

    let mut s = Sim::new(cfg(Rules::Standard, Edition::Fide2005), None, 600_000, 0);
    s.start(Color::White);
    shuffle(&mut s, 4);
    assert_eq!(s.a.result(), "*");
    let ev = s.accept("white", "threefold-repetition").expect("claim");
    assert_eq!(ended(&ev), Some(("1/2-1/2".into(), "claim".into())));
}

#[test]
fn seventyfive_moves_automatic_in_2023_only() {
    let fen = "8/8/8/4k3/8/8/2R5/4K3 w - - 149 100";
    for (e, term) in [
        (Edition::Fide2023, "seventyfive-moves"),
        (Edition::Fide2005, ""),
    ] {
        let mut s = Sim::new(cfg(Rules::Standard, e), Some(fen), 600_000, 0);
        s.start(Color::White);
        assert!(s.has_claim("white", "fifty-moves"));
        s.play("c2c3", 500);
        assert_eq!(
            s.a.termination().map_or("", Termination::as_str),
            term,
            "{e:?}"
        );
    }
}

#[test]
fn dead_position_is_automatic_in_both_editions() {
    for e in BOTH {
        let mut s = Sim::new(
            cfg(Rules::Standard, e),
            Some("4k3/8/8/8/8/8/3p4/4K3 w - - 0 1"),
            600_000,
            0,
        );
        s.start(Color::White);
        s.play("e1d2", 500);
        assert_eq!(
            s.a.termination().map_or("", Termination::as_str),
            "dead-position"
        );
        assert_eq!(s.a.result(), "1/2-1/2");
    }
}

#[test]
fn intended_move_claims_and_wrong_claims() {
    let mut s = Sim::new(cfg(Rules::Standard, Edition::Fide2023), None, 600_000, 0);
    s.start(Color::White);
    for m in ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1"] {
        s.play(m, 500);
    }
    assert!(claims(&s.a).contains(&("black".into(), "threefold-repetition".into(), "f6g8".into())));
    assert!(matches!(
        accept_words(&mut s.a, "black", "threefold-repetition", "f6h5"),
        Err(CommandError::ClaimNotAvailable(_))
    ));
    assert!(matches!(
        accept_words(&mut s.a, "white", "threefold-repetition", "f6g8"),
        Err(CommandError::ClaimNotAvailable(_))
    ));
    let ev = accept_words(&mut s.a, "black", "threefold-repetition", "f6g8").expect("claim");
    assert_eq!(ended(&ev), Some(("1/2-1/2".into(), "claim".into())));
    assert!(s.a.game().pgn().contains("intended move f6g8"));
}

// ----- clock side, takeback, standing illegal move, adjudication ------------------------------

#[test]
fn auto_white_display_learned_from_the_first_press() {
    let mut c = cfg(Rules::Blitz, Edition::Fide2023);
    c.white_display = WhiteDisplay::Auto;
    let mut s = Sim::new(c, None, 180_000, 0);
    s.white = Display::Right; // the real clock has White on the right
    s.t = [180_000, 170_000];
    s.start(Color::White);
    s.play("e2e4", 2_000);
    assert!(s.a.clock().white_known());
    assert_eq!(s.a.white_ms(), 168_000);
    assert_eq!(s.a.black_ms(), 180_000);
    let first = s.a.game().current_moves()[0].clone();
    assert_eq!(first.white_ms, Some(168_000));
    assert_eq!(s.a.clock_running(), "black");
}

#[test]
fn takeback_pops_the_move_and_reopens_a_position_end() {
    let mut s = Sim::new(cfg(Rules::Blitz, Edition::Fide2023), None, 180_000, 0);
    s.start(Color::White);
    for m in ["f2f3", "e7e5", "g2g4", "d8h4"] {
        s.play(m, 500);
    }
    assert_eq!(
        s.a.termination().map_or("", Termination::as_str),
        "checkmate"
    );
    s.a.take_back().expect("takeback");
    assert_eq!(s.a.result(), "*");
    assert_eq!(s.a.game().san_moves().len(), 3);
    let mut fresh = Sim::new(cfg(Rules::Blitz, Edition::Fide2023), None, 180_000, 0);
    assert!(matches!(
        fresh.a.take_back(),
        Err(CommandError::NothingToTakeBack(_))
    ));
}

#[test]
fn illegal_move_that_stands_starts_a_readable_segment() {
    let mut s = opened(Rules::Blitz, Edition::Fide2023, 180_000);
    white_illegal(&mut s, "Ke1-e3");
    // Black moves on without claiming; the board position becomes the game position.
    let board =
        parse_fen("rnbqkbnr/pppp1ppp/8/4p3/4P3/4K3/PPPP1PPP/RNBQ1BNR b kq - 1 2").expect("fen");
    s.a.illegal_move_stands(board, "Ke1-e3");
    s.play("b8c6", 500);
    let pgn = s.a.game().pgn();
    assert_eq!(pgn.matches("[Event ").count(), 2);
    assert!(pgn.contains("[FEN \"rnbqkbnr/pppp1ppp/8/4p3/4P3/4K3/PPPP1PPP/RNBQ1BNR b kq - 1 2\"]"));
    assert!(pgn.contains("2... Nc6"));
    assert_eq!(s.a.game().san_moves(), vec!["e4", "e5", "Nc6"]);
}

#[test]
fn adjudication_and_resignation_draw_5_1_2() {
    let mut s = opened(Rules::Standard, Edition::Fide2023, 600_000);
    assert!(matches!(
        adjudicate_words(&mut s.a, "2-0", "x"),
        Err(CommandError::InvalidArgument(_))
    ));
    let ev = adjudicate_words(&mut s.a, "1-0", "Black resigned").expect("ok");
    assert_eq!(ended(&ev), Some(("1-0".into(), "adjudication".into())));

    let mut s = Sim::new(
        cfg(Rules::Standard, Edition::Fide2023),
        Some("4k3/8/8/8/8/8/4P3/4K3 b - - 0 1"),
        600_000,
        0,
    );
    let ev = adjudicate_words(&mut s.a, "0-1", "White resigned").expect("ok");
    assert_eq!(
        ended(&ev),
        Some(("1/2-1/2".into(), "adjudication".into())),
        "Black has a lone king: a resignation is a draw"
    );
    let _ = s.take_events();
}

#[test]
fn clock_noise_all_zero_and_impossible_readings_are_ignored() {
    let mut s = opened(Rules::Blitz, Edition::Fide2023, 180_000);
    let before = (s.a.white_ms(), s.a.black_ms());
    let zero = ClockReading {
        status: ClockStatus {
            connected: true,
            ..ClockStatus::default()
        },
        ..ClockReading::default()
    };
    assert!(s.a.on_clock(&zero, s.now).is_empty());
    let mut bad = s.reading();
    bad.left.seconds = 0x5A;
    assert!(s.a.on_clock(&bad, s.now).is_empty());
    assert_eq!((s.a.white_ms(), s.a.black_ms()), before);
    assert_eq!(s.a.result(), "*");
    assert_eq!(s.a.clock_running(), "white");
}

#[test]
fn record_survives_serialisation_and_restore() {
    let mut s = opened(Rules::Blitz, Edition::Fide2023, 180_000);
    white_illegal(&mut s, "Ke1-e3");
    s.accept("black", "illegal-move").expect("claim");
    s.play("g1f3", 500);
    let json = serde_json::to_string(s.a.game()).expect("ser");
    let game = serde_json::from_str(&json).expect("de");
    let r = Arbiter::restore(cfg(Rules::Blitz, Edition::Fide2023), game).expect("restore");
    assert_eq!(r.fen(), s.a.fen());
    assert_eq!(r.illegal_counts(), (1, 0));
    assert_eq!(r.game().pgn(), s.a.game().pgn());
    assert_eq!(r.claims(), s.a.claims());
}

#[test]
fn auto_white_display_learned_even_when_the_first_report_is_late() {
    let mut c = cfg(Rules::Blitz, Edition::Fide2023);
    c.white_display = WhiteDisplay::Auto;
    let mut s = Sim::new(c, None, 180_000, 0);
    s.white = Display::Right;
    s.start(Color::White);
    // White presses before the tracker reports e4: nothing can be learned from that press.
    s.wait(2_000);
    s.press(Color::White);
    s.now += 300;
    s.mv("e2e4");
    assert!(!s.a.clock().white_known());
    // Black's move and press teach it.
    s.play("e7e5", 3_000);
    assert!(s.a.clock().white_known());
    assert_eq!(s.a.clock_running(), "white");
    assert_eq!(s.a.black_ms(), 177_000);
    assert!(completed(&s.take_events()).is_empty());
}

#[test]
fn illegal_press_increment_is_noted_for_the_arbiter() {
    let mut c = cfg(Rules::Blitz, Edition::Fide2023);
    c.time_control = Some("180+2".parse().unwrap());
    let mut s = Sim::new(c, None, 180_000, 2_000);
    s.start(Color::White);
    s.play("e2e4", 2_000);
    s.play("e7e5", 2_000);
    let ev = white_illegal(&mut s, "Ke1-e3");
    assert_eq!(completed(&ev).len(), 1);
    assert!(
        s.a.game().pgn().replace('\n', " ").contains(
            "1st illegal move by white: Ke1-e3 (take back the 2 s increment of that press)"
        ),
        "{}",
        s.a.game().pgn()
    );
}

// ----- incorrect claims (9.5, RejectClaim) ------------------------------------------------------

/// Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1: Black may claim threefold with the intended move f6g8 only.
fn knights_dance(s: &mut Sim) {
    s.start(Color::White);
    for m in ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1"] {
        s.play(m, 500);
    }
}

#[test]
fn rejected_claim_2023_gives_the_opponent_two_minutes_one_in_rapid() {
    for (rules, ms) in [
        (Rules::Standard, 120_000),
        (Rules::Rapid, 60_000),
        (Rules::Blitz, 60_000),
    ] {
        let mut s = Sim::new(cfg(rules, Edition::Fide2023), None, 600_000, 0);
        s.start(Color::White);
        s.play("e2e4", 500);
        let ev = reject_words(&mut s.a, "black", "threefold-repetition", "").expect("reject");
        assert_eq!(penalty(&ev), Some(("white".into(), ms)), "{rules:?}");
        assert_eq!(s.a.result(), "*", "play goes on");
        let pgn = s.a.game().pgn().replace('\n', " ");
        assert!(pgn.contains("incorrect (9.5)"), "{pgn}");
        assert!(
            pgn.contains(&format!("{} s added to white", ms / 1000)),
            "{pgn}"
        );
    }
}

#[test]
fn rejected_claim_2005_three_minutes_and_half_the_claimants_time() {
    let mut s = Sim::new(cfg(Rules::Standard, Edition::Fide2005), None, 600_000, 0);
    s.start(Color::White);
    s.play("e2e4", 500);
    s.wait(100_000); // Black thinks: 500 s left
    let ev = reject_words(&mut s.a, "black", "fifty-moves", "").expect("reject");
    assert_eq!(penalty(&ev), Some(("white".into(), 180_000)));
    let pgn = s.a.game().pgn().replace('\n', " ");
    assert!(
        pgn.contains("180 s off black's clock, leaving 320 s (9.5b)"),
        "{pgn}"
    );
    // With less than a minute left nothing comes off.
    let mut s = Sim::new(cfg(Rules::Standard, Edition::Fide2005), None, 50_000, 0);
    s.start(Color::White);
    s.play("e2e4", 500);
    reject_words(&mut s.a, "black", "threefold-repetition", "").expect("reject");
    assert!(
        s.a.game()
            .decisions
            .iter()
            .any(|d| d.contains("keeps his time")),
        "{:?}",
        s.a.game().decisions
    );
}

#[test]
fn a_correct_claim_or_a_bad_argument_is_refused() {
    let mut s = Sim::new(cfg(Rules::Standard, Edition::Fide2023), None, 600_000, 0);
    knights_dance(&mut s);
    let refused = |r: Result<Vec<Ruling>, CommandError>| match r {
        Err(CommandError::InvalidArgument(m)) => m,
        other => panic!("{other:?}"),
    };
    let m = refused(reject_words(
        &mut s.a,
        "black",
        "threefold-repetition",
        "f6g8",
    ));
    assert!(m.contains("correct") && m.contains("AcceptClaim"), "{m}");
    refused(reject_words(&mut s.a, "purple", "threefold-repetition", ""));
    refused(reject_words(&mut s.a, "black", "win-on-time", ""));
    refused(reject_words(&mut s.a, "white", "threefold-repetition", ""));
    refused(reject_words(
        &mut s.a,
        "black",
        "threefold-repetition",
        "e2e4",
    ));
    assert!(
        s.a.game().penalties.is_empty(),
        "nothing recorded for a refusal"
    );
}

#[test]
fn the_intended_move_must_be_made_next() {
    for edition in [Edition::Fide2023, Edition::Fide2005] {
        let mut s = Sim::new(cfg(Rules::Standard, edition), None, 600_000, 0);
        knights_dance(&mut s);
        // Black claims with ...Nh5 (which would not repeat): incorrect.
        reject_words(&mut s.a, "black", "threefold-repetition", "f6h5").expect("reject");
        assert_eq!(s.a.intended_move(), Some((Color::Black, "f6h5")));
        s.take_events();
        // He plays ...Ng8 instead and presses: an illegal move, White may claim it.
        s.play("f6g8", 500);
        let ev = s.take_events();
        assert!(
            ev.iter().any(
                |e| matches!(e, Ruling::Publish(Event::IllegalMoveCompleted { player, count: 1, description })
                if player == "black" && description.contains("intended move f6h5"))
            ),
            "{edition:?}: {ev:?}"
        );
        assert!(s.has_claim("white", "illegal-move"), "{edition:?}");
        assert_eq!(s.a.illegal_counts(), (0, 1));
        assert_eq!(s.a.intended_move(), None);
    }
    // Made as intended: nothing happens, the obligation is met.
    let mut s = Sim::new(cfg(Rules::Standard, Edition::Fide2023), None, 600_000, 0);
    knights_dance(&mut s);
    reject_words(&mut s.a, "black", "threefold-repetition", "f6h5").expect("reject");
    s.take_events();
    s.play("f6h5", 500);
    assert!(
        !s.take_events()
            .iter()
            .any(|e| matches!(e, Ruling::Publish(Event::IllegalMoveCompleted { .. })))
    );
    assert_eq!(s.a.intended_move(), None);
    // A wrong move taken back before the press leaves the obligation standing.
    let mut s = Sim::new(cfg(Rules::Standard, Edition::Fide2023), None, 600_000, 0);
    knights_dance(&mut s);
    reject_words(&mut s.a, "black", "threefold-repetition", "f6h5").expect("reject");
    s.mv("f6g8");
    s.a.on_retract(s.now);
    assert_eq!(s.a.intended_move(), Some((Color::Black, "f6h5")));
    s.play("f6h5", 500);
    assert_eq!(s.a.illegal_counts(), (0, 0));
}
