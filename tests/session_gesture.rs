//! The result gesture never reaches a broadcast output: a king's step onto a centre square
//! is in `MovePlayed` and `Moves` at once, but stays out of `Pgn` (the text the PGN files,
//! `/pgn/…` and the relay's `pgn` topic are made of) until it is final — the clock pressed,
//! a later move, or the other king standing away from the centre for the gesture window.
//! When the gesture follows, the step is retracted and never was in `Pgn`, not even between
//! two inputs; a real king move to the centre stays and becomes final.
//!
//! Boards with and without a clock, and first steps by either colour.

use eboard_core::board::{Orientation, Placement};
use eboard_core::session::{Event, SessionConfig};
use eboard_core::tracker::SCAN_LAG_MS;
use eboard_core::tracker::gesture::GESTURE_HOLD_MS;
use shakmaty::Piece;

mod session_support;

use session_support::{Clocked, without_comments};

/// A session fed by hand, checking after every input that `Pgn` never shows `banned`.
struct Rig {
    rig: Clocked,
    clock: bool,
    banned: Option<&'static str>,
}

impl Rig {
    /// The start position on board "b1", with a clock reporting or without one.
    fn started(clock: bool) -> Rig {
        let mut rig = Clocked::new(
            SessionConfig {
                name: "b1".into(),
                ..SessionConfig::default()
            },
            Orientation::Normal,
        );
        if clock {
            rig.clock();
        }
        rig.dump(&Placement::start());
        Rig {
            rig,
            clock,
            banned: None,
        }
    }

    fn check(&self) {
        if let Some(banned) = self.banned {
            let pgn = &self.rig.session.view().pgn;
            assert!(
                !movetext(pgn).contains(banned),
                "{banned} reached Pgn at {} ms: {pgn}",
                self.rig.now
            );
        }
    }

    fn square(&mut self, square: &str, piece: Option<char>) {
        self.rig.now += 150;
        let content = piece.map(|c| Piece::from_char(c).unwrap());
        self.rig.field(square.parse().unwrap(), content);
        self.check();
    }

    /// `ms` pass in ticks of 50 ms (as the daemon's link ticks), each one checked.
    fn wait(&mut self, ms: u64) {
        let until = self.rig.now + ms;
        while self.rig.now < until {
            let step = 50.min(until - self.rig.now);
            self.rig.wait(step);
            self.check();
        }
    }

    /// A move by lift and place; with a clock, the press; then a pause.
    fn play(&mut self, from: &str, to: &str, piece: char) {
        self.square(from, None);
        self.square(to, Some(piece));
        if self.clock {
            self.rig.now += 300;
            self.rig.press();
            self.check();
        }
        self.wait(600);
    }

    /// 1. d3 d6 2. Kd2 Kd7 3. Ke3 Ke6: both kings one step from the centre.
    fn kings_forward(clock: bool) -> Rig {
        let mut rig = Rig::started(clock);
        for (from, to, piece) in [
            ("d2", "d3", 'P'),
            ("d7", "d6", 'p'),
            ("e1", "d2", 'K'),
            ("e8", "d7", 'k'),
            ("d2", "e3", 'K'),
            ("d7", "e6", 'k'),
        ] {
            rig.play(from, to, piece);
        }
        rig.wait(GESTURE_HOLD_MS);
        assert_eq!(
            movetext(&rig.pgn()),
            "1. d3 d6 2. Kd2 Kd7 3. Ke3 Ke6 *",
            "{}",
            rig.pgn()
        );
        rig
    }

    fn pgn(&self) -> String {
        self.rig.session.view().pgn.clone()
    }

    fn ended(&self) -> Option<(String, String)> {
        self.rig.events.iter().find_map(|e| match e {
            Event::GameEnded {
                result,
                termination,
            } => Some((result.to_string(), termination.to_string())),
            _ => None,
        })
    }
}

/// The movetext of a PGN text, comments and clock stamps removed.
fn movetext(pgn: &str) -> String {
    let body: String = pgn
        .lines()
        .filter(|l| !l.starts_with('['))
        .collect::<Vec<_>>()
        .join(" ");
    without_comments(&body)
}

/// The first king steps onto `first`, a legal move; the other king then joins it on
/// `second`; the game ends with `result` and the step was never in `Pgn`.
fn gesture_leaves_no_trace(rig: &mut Rig, first: (&str, &str, char), second: (&str, &str, char)) {
    rig.square(first.0, None);
    rig.square(first.1, Some(first.2));
    let step = rig
        .rig
        .played()
        .last()
        .cloned()
        .expect("the step is a move");
    assert!(step.starts_with('K'), "{step}");
    rig.banned = Some(Box::leak(format!(" {step} ").into_boxed_str()));
    // The other player takes a moment, lifts his king (the opponent's touch, which makes an
    // ordinary move final), holds it, and sets it next to the first.
    rig.wait(800);
    rig.square(second.0, None);
    rig.wait(1_500);
    rig.square(second.1, Some(second.2));
    rig.wait(GESTURE_HOLD_MS + 500);
}

#[test]
fn a_white_king_step_that_begins_the_gesture_is_never_in_the_pgn() {
    for clock in [false, true] {
        let mut rig = Rig::kings_forward(clock);
        gesture_leaves_no_trace(&mut rig, ("e3", "e4", 'K'), ("e6", "d5", 'k'));
        assert_eq!(
            rig.ended(),
            Some(("1-0".into(), "result-gesture".into())),
            "clock {clock}"
        );
        assert_eq!(
            movetext(&rig.pgn()),
            "1. d3 d6 2. Kd2 Kd7 3. Ke3 Ke6 1-0",
            "clock {clock}"
        );
        // MovePlayed showed the step and MoveRetracted withdrew it.
        assert!(
            rig.rig
                .events
                .iter()
                .any(|e| matches!(e, Event::MovePlayed { san, ply: 7, .. } if san == "Ke4"))
        );
        assert!(
            rig.rig
                .events
                .iter()
                .any(|e| matches!(e, Event::MoveRetracted { ply: 7, .. }))
        );
        assert_eq!(rig.rig.played().len(), 6);
    }
}

#[test]
fn a_black_king_step_that_begins_the_gesture_is_never_in_the_pgn() {
    for clock in [false, true] {
        let mut rig = Rig::kings_forward(clock);
        rig.play("a2", "a3", 'P');
        rig.wait(GESTURE_HOLD_MS);
        // 4... Ke5 is legal (the king on e3 guards d4, e4, f4); White's king joins on d4.
        gesture_leaves_no_trace(&mut rig, ("e6", "e5", 'k'), ("e3", "d4", 'K'));
        assert_eq!(
            rig.ended(),
            Some(("0-1".into(), "result-gesture".into())),
            "clock {clock}"
        );
        assert_eq!(
            movetext(&rig.pgn()),
            "1. d3 d6 2. Kd2 Kd7 3. Ke3 Ke6 4. a3 0-1",
            "clock {clock}"
        );
    }
}

#[test]
fn a_real_king_move_to_the_centre_stays_and_becomes_final() {
    for clock in [false, true] {
        // The other king stays where it is: final once the gesture window has passed.
        let mut rig = Rig::kings_forward(clock);
        rig.square("e3", None);
        rig.square("e4", Some('K'));
        assert_eq!(rig.rig.session.pending_plies(), 1);
        rig.wait(GESTURE_HOLD_MS - 100);
        assert!(!movetext(&rig.pgn()).contains("Ke4"), "{}", rig.pgn());
        let wake = rig.rig.session.next_wakeup().expect("the window ends");
        assert!(wake <= rig.rig.now + 100, "woken at the window's end");
        rig.wait(150);
        assert_eq!(
            movetext(&rig.pgn()),
            "1. d3 d6 2. Kd2 Kd7 3. Ke3 Ke6 4. Ke4 *",
            "clock {clock}: {}",
            rig.pgn()
        );
        assert_eq!(rig.ended(), None);

        // The opponent lifts his king and thinks with it in hand: still pending; he sets it
        // on f6, a move: Ke4 is final, Kf6 follows as any move does.
        let mut rig = Rig::kings_forward(clock);
        rig.square("e3", None);
        rig.square("e4", Some('K'));
        rig.square("e6", None);
        rig.wait(3_000);
        assert!(!movetext(&rig.pgn()).contains("Ke4"), "{}", rig.pgn());
        rig.square("f6", Some('k'));
        assert!(
            movetext(&rig.pgn()).ends_with("4. Ke4 *"),
            "clock {clock}: {}",
            rig.pgn()
        );
        rig.wait(3_000);
        assert!(movetext(&rig.pgn()).ends_with("4. Ke4 Kf6 *"));
    }
}

#[test]
fn a_press_makes_a_king_step_to_the_centre_final() {
    let mut rig = Rig::kings_forward(true);
    rig.square("e3", None);
    rig.square("e4", Some('K'));
    rig.rig.now += 200;
    rig.rig.press();
    rig.wait(SCAN_LAG_MS + 50);
    assert_eq!(rig.rig.session.pending_plies(), 0);
    assert!(movetext(&rig.pgn()).ends_with("4. Ke4 *"), "{}", rig.pgn());
    // The press was the move's end: a gesture now ends the game after it, and the step
    // stays in the record.
    rig.square("e6", None);
    rig.square("d5", Some('k'));
    rig.wait(GESTURE_HOLD_MS + 500);
    assert_eq!(rig.ended(), Some(("1-0".into(), "result-gesture".into())));
    assert_eq!(
        movetext(&rig.pgn()),
        "1. d3 d6 2. Kd2 Kd7 3. Ke3 Ke6 4. Ke4 1-0",
        "{}",
        rig.pgn()
    );
}
