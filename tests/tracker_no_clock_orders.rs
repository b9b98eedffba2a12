//! Boards without a clock (a Millennium ChessLink board, a DGT board played without one),
//! fuzzed over paces and hand orders far beyond the simulator's: 0 ms between a hand's
//! steps, the victim lifted first or the capturer first (or the capture read as one update),
//! the hand resting in the air for seconds with the pieces of a capture lifted, and the
//! tracker ticked at its wakeups, at random times, or only at the readings. The hall's hand
//! (`tracker_common::hand`) makes each move; this file only re-times and re-orders it.
//!
//! What must hold whatever the hand does: the record at the end is the game played, in sync,
//! nobody accused; and no move is ever taken back once it was final (a broadcast shows final
//! moves only, so one retracted there is a move shown and then taken back in the PGN).
//!
//! Every failing case proptest finds becomes a named test below once it is fixed. Open:
//! corpus game 50 played with every step 1 ms after the last (seed 0, victim first, ticked
//! at wakeups, 64 plies) ends with its last two plies (Qa8, then Ra7 within 4 ms) never
//! published and the tracker out of sync. The still board is explained by two stories the
//! board cannot tell apart (Rb7, Qa8, Ra7 — or Rc7-a7 slid with the hand resting on b7 while
//! Qa8 was made, which takes back the published Rb7), and the tracker leaves both open. A
//! rule that took the longer story once the board stood still was tried and not kept: the
//! same rule decides corpus game 895, whose still board the session deliberately leaves to
//! the arbiter (`session_hall`), and a heuristic may delay the record, never decide it.
//! Corpus game 853 (seed 3077825040880118773, steps up to 35 ms, replies up to 152 ms, victim
//! first, the hand in the air with probability 0.09 for up to 2.9 s, ticked at random, 37
//! plies; `one_case` below runs it) was a final move taken back: Qh5 ...Bg4, then White lifted
//! the queen for Qh6 and held it in the air, and the still board, which Qg4 Bxg4 also explains
//! (the queen had passed over g4), took Qh5 back. A final move is now never taken back for a
//! board that is the record's position with pieces lifted (`tracker_cases`'
//! `a_piece_held_in_the_air_takes_no_final_move_back`).
//! Also open, of game 50's kind: corpus game 157 (seed 3823604409759253191, no pause at all:
//! steps and replies of 0 ms, captures as drawn, ticked at the wakeups, 48 plies). ...Rh3 is
//! played on White's next touch, then Rc1 slid h1-c1 and ...Rxh2 follow within 13 ms. The
//! still board is the same after ...Rh3 Rc1 Rxh2 and after ...Rh4xh2 Rc1 (the other player to
//! move), and the tracker leaves both stories open for the arbiter (`one_case` prints them):
//! nothing is published wrongly and nobody is accused, but the record waits for an answer.

mod proptest_runs;
mod tracker_common;

use eboard_core::board::Orientation;
use eboard_core::vocab::OrientationSetting;
use eboard_sim::handling::SensorStep::{self, Lift, Pause, Place};
use proptest::prelude::*;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shakmaty::{Chess, Move, Position};
use std::sync::OnceLock;
use tracker_common::*;

fn games() -> &'static [Vec<Move>] {
    static GAMES: OnceLock<Vec<Vec<Move>>> = OnceLock::new();
    GAMES.get_or_init(corpus_games)
}

/// Which of a capture's two pieces the hand lifts first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CaptureOrder {
    VictimFirst,
    CapturerFirst,
    /// As the hall's hand draws it (either, or the capturer put straight onto the victim).
    AsDrawn,
}

/// When the tracker is ticked besides the readings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ticks {
    /// Whenever it asks ([`eboard_core::tracker::Tracker::next_wakeup`]), as the daemon does.
    Wakeups,
    /// At random moments, however seldom or often.
    Random,
    /// Only right after each reading (every deadline noticed late, by the next change).
    Readings,
}

/// How one game is played: every draw comes from `seed`.
#[derive(Debug, Clone)]
struct Hands {
    seed: u64,
    orientation: Orientation,
    /// The ms between two steps of one hand (uniform).
    step_ms: (u64, u64),
    /// The ms between a move's last change and the next move's first.
    reply_ms: (u64, u64),
    captures: CaptureOrder,
    /// Per move, the probability that the hand rests in the air before it sets its piece
    /// down (a capture's pieces both lifted), and for how long.
    p_air: f64,
    air_ms: (u64, u64),
    ticks: Ticks,
    /// Plies played of the game (from its start).
    plies: usize,
    /// Print each ply's steps and events.
    trace: bool,
}

/// The steps of `mv` in `pos`: the hall's hand, re-ordered and re-timed as `h` says.
fn steps(rng: &mut SmallRng, h: &Hands, pos: &Chess, mv: Move) -> Vec<SensorStep> {
    let mut out = tracker_common::hand::hand(rng, pos, mv);
    let lands = |s: &SensorStep| matches!(s, Place(sq, _) if *sq == mv.to());
    if mv.is_capture() && !mv.is_en_passant() && h.captures != CaptureOrder::AsDrawn {
        // The victim's lift (if the hand lifted it before setting the capturer down) moves
        // to the very start, or to just before the capturer is set down (after its slide).
        if let Some(first) = out.iter().position(lands)
            && let Some(lift) = out[..first].iter().position(|s| *s == Lift(mv.to()))
        {
            out.remove(lift);
        }
        let at = match h.captures {
            CaptureOrder::VictimFirst => 0,
            _ => out.iter().position(lands).unwrap_or(out.len()),
        };
        out.insert(at, Lift(mv.to()));
    }
    // Re-time every step of the hand.
    let mut timed = Vec::with_capacity(out.len() * 2);
    for s in out {
        if matches!(s, Pause(_)) {
            continue;
        }
        if !timed.is_empty() {
            timed.push(Pause(rng.random_range(h.step_ms.0..=h.step_ms.1)));
        }
        timed.push(s);
    }
    // The hand resting in the air before its last set-down, everything it lifts lifted.
    if rng.random_bool(h.p_air)
        && let Some(i) = timed.iter().rposition(|s| matches!(s, Place(..)))
    {
        timed.insert(i, Pause(rng.random_range(h.air_ms.0..=h.air_ms.1)));
    }
    timed
}

/// A game through the tracker, watched after every input.
struct Played {
    rig: Rig,
    /// The moves final at some moment (the longest such list).
    final_moves: Vec<Move>,
    /// The first time a final move was taken back, if ever.
    final_retracted: Option<String>,
}

impl Played {
    /// Check that the moves once final still lead the record, and note the ones final now.
    fn watch(&mut self) {
        let moves = self.rig.tracker.moves();
        if self.final_retracted.is_none() && !moves.starts_with(&self.final_moves) {
            self.final_retracted = Some(format!(
                "at {} ms: final {:?}, now {:?}",
                self.rig.now,
                self.final_moves.iter().map(uci_of).collect::<Vec<_>>(),
                moves.iter().map(uci_of).collect::<Vec<_>>()
            ));
        }
        let fin = moves.len() - self.rig.tracker.pending_plies();
        if fin > self.final_moves.len() {
            self.final_moves = moves[..fin].to_vec();
        }
    }

    /// Let `ms` pass, the tracker ticked as `ticks` says.
    fn pass(&mut self, rng: &mut SmallRng, ticks: Ticks, ms: u64) {
        let mut left = ms;
        while left > 0 {
            let slice = match ticks {
                Ticks::Random => rng.random_range(1..=left.min(700)),
                _ => left.min(100),
            };
            match ticks {
                // The rig ticks at the wakeups within the slice and at its end.
                Ticks::Wakeups => {
                    self.rig.pass(slice);
                }
                Ticks::Random => {
                    self.rig.wait(slice);
                }
                Ticks::Readings => self.rig.now += slice,
            }
            self.watch();
            left -= slice;
        }
    }
}

/// Play the first `h.plies` of `game` as `h` says.
fn play(game: &[Move], h: &Hands) -> Played {
    let mut rig = Rig::new(Chess::default(), OrientationSetting::Auto, h.orientation);
    rig.ticks = h.ticks == Ticks::Wakeups;
    let mut played = Played {
        rig,
        final_moves: Vec::new(),
        final_retracted: None,
    };
    let mut rng = SmallRng::seed_from_u64(h.seed);
    let mut truth = Chess::default();
    for (ply, &mv) in game.iter().take(h.plies).enumerate() {
        let mut all = vec![Pause(rng.random_range(h.reply_ms.0..=h.reply_ms.1))];
        all.extend(steps(&mut rng, h, &truth, mv));
        if h.trace {
            println!("ply {ply}: {}", uci_of(&mv));
        }
        for s in all {
            let seen = played.rig.events.len();
            match s {
                Pause(ms) => played.pass(&mut rng, h.ticks, ms),
                s => {
                    played.rig.steps(&[s]);
                    if h.ticks == Ticks::Readings {
                        played.rig.wait(0);
                    }
                    played.watch();
                }
            }
            if h.trace {
                let ev = &played.rig.events[seen..];
                println!("   t={} {s:?} -> {ev:?}", played.rig.now);
            }
        }
        truth.play_unchecked(mv);
    }
    // The game over, the board stands still.
    played.rig.wait(5_000);
    played.watch();
    played
}

/// Plays `h` on corpus game `index` and checks everything the module promises.
fn check(index: usize, h: &Hands) -> Result<(), String> {
    let game = &games()[index];
    let played = play(game, h);
    if h.trace {
        let open = played.rig.tracker.open_stories();
        let open: Option<Vec<Vec<String>>> =
            open.map(|o| o.iter().map(|s| s.iter().map(uci_of).collect()).collect());
        println!("at the end: stories left open {open:?}");
    }
    let want: Vec<String> = game.iter().take(h.plies).map(uci_of).collect();
    let got = played.rig.game_uci();
    let case = format!("game {index}, {h:?}");
    if let Some(retracted) = &played.final_retracted {
        return Err(format!("{case}: a final move taken back {retracted}"));
    }
    let accused = illegal(&played.rig.events);
    if !accused.is_empty() {
        return Err(format!("{case}: accused: {:?}", accused[0]));
    }
    if got != want {
        return Err(format!(
            "{case}: {} of {} plies, first difference at {:?}, in sync {}",
            got.len(),
            want.len(),
            got.iter().zip(&want).position(|(a, b)| a != b),
            played.rig.tracker.in_sync()
        ));
    }
    if !played.rig.tracker.in_sync() {
        return Err(format!("{case}: exact but out of sync"));
    }
    Ok(())
}

fn capture_order() -> impl Strategy<Value = CaptureOrder> {
    prop_oneof![
        Just(CaptureOrder::VictimFirst),
        Just(CaptureOrder::CapturerFirst),
        Just(CaptureOrder::AsDrawn),
    ]
}

fn ticks() -> impl Strategy<Value = Ticks> {
    prop_oneof![
        Just(Ticks::Wakeups),
        Just(Ticks::Random),
        Just(Ticks::Readings)
    ]
}

proptest! {
    // A fixed seed by default, so that CI runs the same 384 cases every time and a failure
    // is reproducible; `NO_CLOCK_ORDERS_SEED=random` (or a number) explores further, and
    // `PROPTEST_CASES` runs more cases.
    #![proptest_config(proptest_runs::config("NO_CLOCK_ORDERS_SEED", 384, 1))]

    /// Any pace of the hand (0 ms a step up to a slow one), any order of a capture, the hand
    /// resting in the air for up to five seconds, any ticking: the game played, exactly.
    #[test]
    fn any_pace_and_order_without_a_clock_is_the_game_played(
        index in 0usize..1110,
        seed in any::<u64>(),
        reversed in any::<bool>(),
        step_top in prop_oneof![Just(0u64), 0u64..=60, 0u64..=300],
        reply_top in prop_oneof![Just(0u64), 0u64..=400, 0u64..=3_000],
        captures in capture_order(),
        p_air in prop_oneof![Just(0.0), 0.05f64..=0.5],
        air_top in 600u64..=5_000,
        ticks in ticks(),
        plies in 20usize..=90,
    ) {
        let h = Hands {
            seed,
            orientation: if reversed { Orientation::Reversed } else { Orientation::Normal },
            step_ms: (0, step_top),
            reply_ms: (0, reply_top),
            captures,
            p_air,
            air_ms: (600, air_top),
            ticks,
            plies,
            trace: false,
        };
        if let Err(e) = check(index % games().len(), &h) {
            prop_assert!(false, "{}", e);
        }
    }
}

/// Corpus game 154's capture, reduced: White's rook on f6 takes the pawn on f7; had it
/// taken the pawn on e6 instead, the f-pawn could recapture there.
const ROOK_TAKES_F7: &str = "6k1/5p2/4pR2/8/8/8/8/6K1 w - - 0 1";

/// Rf6xf7 with the victim lifted first and then the rook, the hand resting in the air: the
/// settled board (f6 and f7 empty) also reads as Rxe6 fxe6, a rook never seen on e6. That
/// story was published once the board had stood for 0.6 s, and taken back when the rook
/// landed (corpus games 154 and 650 on a ChessLink board at the quick no-clock pace, the
/// tracker ticked at its wakeups). However long the hand rests, nothing is published before
/// the rook lands, and then the capture.
#[test]
fn a_capture_resting_in_the_air_is_not_two_plies_that_only_empty_squares() {
    for rest_ms in [0, 550, 600, 650, 1_000, 2_500, 6_000] {
        for victim_first in [true, false] {
            for ticked in [true, false] {
                let mut rig = Rig::at(ROOK_TAKES_F7);
                rig.ticks = ticked;
                rig.pass(3_000);
                if victim_first {
                    rig.lift("f7");
                    rig.pass(60);
                    rig.lift("f6");
                } else {
                    rig.lift("f6");
                    rig.pass(60);
                    rig.lift("f7");
                }
                rig.pass(rest_ms);
                if !ticked {
                    rig.wait(0);
                }
                let case =
                    format!("rest {rest_ms} ms, victim first {victim_first}, ticked {ticked}");
                assert!(
                    played(&rig.events).is_empty(),
                    "{case}: published {:?}",
                    played(&rig.events)
                );
                rig.place("f7", 'R');
                rig.pass(5_000);
                assert_eq!(played(&rig.events), ["f6f7"], "{case}");
                assert_eq!(retracted(&rig.events), 0, "{case}");
                assert!(illegal(&rig.events).is_empty(), "{case}");
                assert!(rig.tracker.in_sync(), "{case}");
            }
        }
    }
}

/// A real recapture that only empties squares, each piece seen set down (Rxe6, then fxe6
/// with the rook lifted first): the readings show both plies, so the settled board is them.
#[test]
fn a_recapture_the_readings_show_is_still_two_plies() {
    for ticked in [true, false] {
        let mut rig = Rig::at(ROOK_TAKES_F7);
        rig.ticks = ticked;
        rig.pass(3_000);
        rig.lift("e6");
        rig.pass(80);
        rig.lift("f6");
        rig.pass(80);
        rig.place("e6", 'R');
        rig.pass(400);
        rig.lift("e6");
        rig.pass(80);
        rig.lift("f7");
        rig.pass(80);
        rig.place("e6", 'p');
        rig.pass(5_000);
        assert_eq!(rig.game_uci(), ["f6e6", "f7e6"], "ticked {ticked}");
        assert!(rig.tracker.in_sync());
        assert!(illegal(&rig.events).is_empty());
    }
}

/// Corpus game 629, no clock, 0 ms between a hand's steps, the victim lifted first and the
/// hand resting up to 2 s in the air, ticked at random: the capture's settled board was
/// read as two plies that only emptied squares and the record ended a ply long, out of sync.
/// Found by the property test.
#[test]
fn captures_resting_in_the_air_at_zero_ms_a_step_are_the_game_played() {
    let h = Hands {
        seed: 3_313_303_432_596_069_810,
        orientation: Orientation::Normal,
        step_ms: (0, 0),
        reply_ms: (0, 52),
        captures: CaptureOrder::VictimFirst,
        p_air: 0.357_744_741_313_344_16,
        air_ms: (600, 2_054),
        ticks: Ticks::Random,
        plies: 61,
        trace: false,
    };
    check(629, &h).unwrap();
}

/// One case from the environment, traced (O_GAME, O_SEED, O_REV, O_STEP, O_REPLY, O_CAPTURES
/// as 0 victim first, 1 capturer first, 2 as drawn, O_AIR as the probability, O_AIR_TOP,
/// O_TICKS as 0 wakeups, 1 random, 2 readings, O_PLIES): to look at a failure.
#[test]
#[ignore]
fn one_case() {
    let v = |n: &str| std::env::var(n).unwrap();
    let n = |name: &str| v(name).parse::<u64>().unwrap();
    let h = Hands {
        seed: n("O_SEED"),
        orientation: if n("O_REV") == 1 {
            Orientation::Reversed
        } else {
            Orientation::Normal
        },
        step_ms: (0, n("O_STEP")),
        reply_ms: (0, n("O_REPLY")),
        captures: [
            CaptureOrder::VictimFirst,
            CaptureOrder::CapturerFirst,
            CaptureOrder::AsDrawn,
        ][n("O_CAPTURES") as usize],
        p_air: v("O_AIR").parse().unwrap(),
        air_ms: (600, n("O_AIR_TOP")),
        ticks: [Ticks::Wakeups, Ticks::Random, Ticks::Readings][n("O_TICKS") as usize],
        plies: n("O_PLIES") as usize,
        trace: true,
    };
    check(n("O_GAME") as usize, &h).unwrap();
}
