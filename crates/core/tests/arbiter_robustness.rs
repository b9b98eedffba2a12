//! No input sequence can make the arbiter panic or break its invariants: random clock
//! readings (including garbage values), ticks, legal moves, illegal placements, claims,
//! adjudications, takebacks and rule changes, in any order, under both editions.

#[path = "../../../tests/clock_strategies/mod.rs"]
mod clock_strategies;

use clock_strategies::clock_times;
use eboard_core::arbiter::{Arbiter, ArbiterConfig, fen_of, parse_fen};
use eboard_core::dgt::message::{ClockReading, DisplayTime};
use eboard_core::session::Command;
use eboard_core::vocab::{CommandError, Edition, Rules, WhiteDisplay};
use proptest::prelude::*;
use shakmaty::uci::UciMove;
use shakmaty::{Chess, Position};

#[derive(Debug, Clone)]
enum Op {
    Clock(ClockReading),
    Tick(u64),
    Move(usize),
    Illegal(String),
    Cleared,
    Accept(usize, String),
    Adjudicate(String, String),
    TakeBack,
    Retract,
    Rules(String),
}

fn display() -> impl Strategy<Value = DisplayTime> {
    (0u8..12, 0u8..70, 0u8..70).prop_map(|(hours, minutes, seconds)| DisplayTime {
        hours,
        minutes,
        seconds,
    })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => clock_times(display).prop_map(Op::Clock),
        2 => (0u64..10_000).prop_map(Op::Tick),
        6 => any::<usize>().prop_map(Op::Move),
        1 => "[a-z0-9 -]{0,12}".prop_map(Op::Illegal),
        1 => Just(Op::Cleared),
        2 => (any::<usize>(), "[a-z0-9]{0,5}").prop_map(|(i, s)| Op::Accept(i, s)),
        1 => (prop_oneof![Just("1-0".to_string()), Just("0-1".to_string()),
                          Just("1/2-1/2".to_string()), "[0-9/-]{0,7}"],
              "(resigned|[a-z ]{0,10})").prop_map(|(r, s)| Op::Adjudicate(r, s)),
        1 => Just(Op::TakeBack),
        1 => Just(Op::Retract),
        1 => prop_oneof![Just("rapid".to_string()), Just("blitz".to_string()), "[a-z]{0,6}"]
            .prop_map(Op::Rules),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_inputs_never_panic(
        ops in prop::collection::vec(op(), 1..80),
        e2005 in any::<bool>(),
        rules in 0usize..3,
        auto in any::<bool>(),
    ) {
        let cfg = ArbiterConfig {
            rules: [Rules::Standard, Rules::Rapid, Rules::Blitz][rules],
            edition: if e2005 { Edition::Fide2005 } else { Edition::Fide2023 },
            guidelines_iii: true,
            white_display: if auto { WhiteDisplay::Auto } else { WhiteDisplay::Right },
            time_control: None,
            clock_periods: Default::default(),
        };
        let mut a = Arbiter::new(cfg, Chess::default(), Vec::new());
        let mut now = 0u64;
        for op in ops {
            now += 137;
            match op {
                Op::Clock(ct) => { a.on_clock(&ct, now); }
                Op::Tick(d) => { now += d; a.tick(now); }
                Op::Move(i) => {
                    let moves = a.position().legal_moves();
                    if !moves.is_empty() {
                        a.on_move(moves[i % moves.len()], now);
                    }
                }
                Op::Illegal(d) => {
                    let turn = a.position().turn();
                    a.on_illegal_placement(turn, &d, None, now);
                }
                Op::Cleared => { a.on_illegal_cleared(now); }
                Op::Accept(i, junk) => {
                    let claims = a.claims();
                    if claims.is_empty() || i % 4 == 0 {
                        // Junk goes through the edge's parser, then (if it is words) the arbiter.
                        let refused = match Command::accept_claim("white", &junk, String::new()) {
                            Ok(Command::AcceptClaim { player, kind, detail }) => {
                                a.accept_claim(player, kind, &detail).is_err()
                            }
                            Ok(other) => panic!("accept_claim parsed into {other:?}"),
                            Err(e) => matches!(e, CommandError::ClaimNotAvailable(_)),
                        };
                        prop_assert!(refused || !claims.is_empty());
                    } else {
                        let (p, k, d) = claims[i % claims.len()].clone();
                        prop_assert!(a.accept_claim(p, k, &d).is_ok());
                    }
                }
                Op::Adjudicate(r, s) => {
                    if let Ok(Command::Adjudicate { result, reason }) = Command::adjudicate(&r, s) {
                        let _ = a.adjudicate(result, &reason);
                    }
                }
                Op::TakeBack => { let _ = a.take_back(); }
                Op::Retract => { a.on_retract(now); }
                Op::Rules(r) => {
                    if let Ok(Command::SetRules(r)) = Command::set_rules(&r) {
                        a.set_rules(r);
                    }
                }
            }
            // Invariants the properties rely on.
            prop_assert!(["*", "1-0", "0-1", "1/2-1/2"].contains(&a.result().as_str()));
            prop_assert_eq!(a.result() == "*", a.termination().is_none());
            prop_assert!(["white", "black", "none"].contains(&a.clock_running()));
            if a.is_finished() {
                prop_assert!(a.claims().is_empty());
            }
            // The record replays to the arbiter's position.
            let mut pos = parse_fen(a.game().start_fen()).expect("record start FEN");
            for m in a.game().current_moves() {
                let mv = UciMove::from_ascii(m.uci.as_bytes()).expect("uci").to_move(&pos);
                prop_assert!(mv.is_ok(), "record move {} illegal", m.uci);
                pos.play_unchecked(mv.expect("checked"));
            }
            prop_assert_eq!(fen_of(&pos), a.fen());
        }
        let _ = a.game().pgn();
    }
}

/// A FEN's move numbers are bounded where it enters: a number that does not fit (shakmaty
/// would store 99999999999 as 4294967295, and a record counts on from there) or a FEN longer
/// than any real one is refused with a short sentence; every real position is accepted.
#[test]
fn fen_numbers_and_length_are_bounded() {
    let e = parse_fen("4k3/8/8/8/8/8/4P3/4K3 w - - 0 99999999999").unwrap_err();
    assert!(
        e.contains("fullmove number 99999999999 is out of range"),
        "{e}"
    );
    let e = parse_fen("4k3/8/8/8/8/8/4P3/4K3 w - - 99999999999999999999999 1").unwrap_err();
    assert!(e.contains("halfmove clock"), "{e}");
    let e = parse_fen("4k3/8/8/8/8/8/4P3/4K3 w - - 0 10001").unwrap_err();
    assert!(e.contains("at most 10000"), "{e}");
    let e = parse_fen(&format!(
        "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1{}",
        " ".repeat(200)
    ))
    .unwrap_err();
    assert!(e.contains("at most 128 characters") && e.len() < 200, "{e}");
    let pos = parse_fen("4k3/8/8/8/8/8/4P3/4K3 w - - 150 10000").expect("the largest numbers");
    assert_eq!(pos.fullmoves().get(), 10_000);
    assert!(
        parse_fen("4k3/8/8/8/8/8/4P3/4K3 w - - 0 0").is_ok(),
        "0 reads as 1"
    );
}
