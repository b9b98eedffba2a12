//! One noisy clock frame never decides a game: every single-bit flip of every byte of a clock
//! frame, and bursts of garbage frames, sent between the simulated clock's own frames at
//! several moments of a game (mid-think, right after a press, in a time scramble, at a
//! period's end), with and without a real flag fall following. The record of each run must be
//! the record of the same game without the noise, and the real flag fall must still be called.
//!
//! Pure and byte for byte: the simulated board and clock and the session wired in memory
//! ([`eboard_sim::rig::Rig`]), stepped time; the noise enters the session's decoder as bytes.

use eboard_core::arbiter::ArbiterConfig;
use eboard_core::arbiter::timecontrol::TimeControl;
use eboard_core::session::{Command, Event, SessionConfig};
use eboard_core::vocab::{GameResult, Termination};
use eboard_sim::handling::SensorStep;
use eboard_sim::rig::Rig;
use eboard_sim::{BoardOptions, ClockSetup, Noise};
use shakmaty::san::San;
use shakmaty::{Color, Move, Position};

/// When the noise comes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Moment {
    /// Halfway through a player's three-second think, between two of the clock's frames.
    MidThink,
    /// 100 ms after a press.
    AfterPress,
    /// 50 ms before the mover puts his piece down (a slow hand, the press 800 ms later): the
    /// move is made while the garbled reading may still be held.
    BeforeMove,
    /// Moves made in 300 ms with a few seconds left.
    Scramble,
    /// Right after the first period ran out (the steady flag, the next period added).
    PeriodEnd,
}

const MOMENTS: [Moment; 5] = [
    Moment::MidThink,
    Moment::AfterPress,
    Moment::BeforeMove,
    Moment::Scramble,
    Moment::PeriodEnd,
];

/// What is sent on the line.
#[derive(Debug, Clone, Copy)]
enum Injection {
    None,
    /// The clock's current frame with one bit of payload byte `byte` flipped.
    Flip {
        byte: usize,
        bit: u8,
    },
    /// Frames of seeded garbage, then the clock's current frame with its lever bit flipped.
    Burst {
        seed: u64,
    },
    /// The clock's current frame with one display (the left: `left`) at 9:59:59.
    Jump {
        left: bool,
    },
}

/// The ply (0-based) of [`Moment::BeforeMove`].
const BEFORE_MOVE_PLY: usize = 6;

const OPENING: [&str; 16] = [
    "e4", "e5", "Nf3", "Nc6", "Bc4", "Bc5", "c3", "Nf6", "d3", "d6", "O-O", "O-O", "h3", "h6",
    "Re1", "Re8",
];

/// The record as it matters: each move with its clock stamps, the result and its reason, the
/// illegal-move counts, and the decisive events in order.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Record {
    moves: Vec<(String, Option<u64>)>,
    /// Both clocks at each move (compared within a display second: a flip that a real tick
    /// could have made is taken as one).
    times: Vec<(Option<u64>, Option<u64>)>,
    result: GameResult,
    termination: Option<Termination>,
    illegal: (u32, u32),
    decisive: Vec<String>,
    /// Clock readings the session never acted on (not part of the record).
    dropped: u64,
}

fn record_of(rig: &Rig) -> Record {
    let game = rig.session().game();
    let moves = game.current_moves();
    let decisive = rig
        .journal()
        .iter()
        .filter_map(|e| match e {
            Event::FlagFell { .. }
            | Event::IllegalMoveCompleted { .. }
            | Event::GameEnded { .. }
            | Event::IllegalPlacement { .. } => Some(format!("{e:?}")),
            _ => None,
        })
        .collect();
    Record {
        moves: moves.iter().map(|m| (m.san.clone(), m.clk_ms)).collect(),
        times: moves.iter().map(|m| (m.white_ms, m.black_ms)).collect(),
        result: game.result,
        termination: game.termination,
        illegal: game.illegal_moves,
        decisive,
        dropped: rig.session().clock_readings_filtered().0,
    }
}

fn same_record(base: &Record, run: &Record) -> bool {
    let close = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (Some(a), Some(b)) => a.abs_diff(b) <= 1_000,
        (a, b) => a == b,
    };
    base.moves == run.moves
        && base.result == run.result
        && base.termination == run.termination
        && base.illegal == run.illegal
        && base.decisive == run.decisive
        && base.times.len() == run.times.len()
        && base
            .times
            .iter()
            .zip(&run.times)
            .all(|(a, b)| close(a.0, b.0) && close(a.1, b.1))
}

/// A tiny seeded generator for the garbage (xorshift).
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

fn frame(payload: [u8; 7]) -> Vec<u8> {
    let mut f = vec![0x8D, 0x00, 0x0A];
    f.extend(payload);
    f
}

fn inject(rig: &mut Rig, injection: Injection) {
    let now = rig.now();
    let payload = rig.board.clock_reading(now).payload();
    match injection {
        Injection::None => {}
        Injection::Flip { byte, bit } => {
            let mut p = payload;
            p[byte] ^= 1 << bit;
            rig.junk(&frame(p));
        }
        Injection::Burst { seed } => {
            let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            for _ in 0..4 {
                let mut p = [0u8; 7];
                for b in &mut p {
                    *b = (next(&mut s) & 0x7F) as u8;
                }
                // Half of them with valid digits, so that they reach the session.
                if next(&mut s).is_multiple_of(2) {
                    for i in [1, 2, 4, 5] {
                        p[i] = (((next(&mut s) % 6) << 4) | (next(&mut s) % 10)) as u8;
                    }
                    p[0] = (p[0] & 0x70) | (next(&mut s) % 10) as u8;
                    p[3] = (p[3] & 0x70) | (next(&mut s) % 10) as u8;
                    p[6] &= 0x1F;
                }
                rig.junk(&frame(p));
            }
            let mut p = payload;
            p[6] ^= 0x02;
            rig.junk(&frame(p));
        }
        Injection::Jump { left } => {
            let mut p = payload;
            let at = if left { 3 } else { 0 };
            p[at] = (p[at] & 0x70) | 9;
            p[at + 1] = 0x59;
            p[at + 2] = 0x59;
            rig.junk(&frame(p));
        }
    }
}

fn to_move(rig: &Rig, san: &str) -> Move {
    san.parse::<San>()
        .expect("SAN")
        .to_move(&rig.played)
        .expect("legal")
}

/// One game with `injection` at `moment`; with `flag`, the player to move at the end lets
/// his flag fall. Returns the record.
fn run(moment: Moment, injection: Injection, flag: bool) -> Record {
    run_timed(moment, injection, flag, 0).0
}

/// [`run`], and for [`Moment::BeforeMove`] the time from the board showing that move to its
/// `MovePlayed` (`None`: never published, or another moment).
/// `phase`: how much longer that move's think is (where the noise falls in the clock's second).
fn run_timed(
    moment: Moment,
    injection: Injection,
    flag: bool,
    phase: u64,
) -> (Record, Option<u64>) {
    let mut shown_at = None;
    let periods = moment == Moment::PeriodEnd;
    let control: Option<TimeControl> = periods.then(|| "2/6:20".parse().expect("time control"));
    let mut rig = Rig::new(
        BoardOptions {
            clock_setup: ClockSetup {
                base_ms: 20_000,
                increment_ms: 0,
            },
            time_control: control.clone(),
            ..BoardOptions::default()
        },
        SessionConfig {
            name: "noise".into(),
            arbiter: ArbiterConfig {
                time_control: control,
                ..ArbiterConfig::default()
            },
            ..SessionConfig::default()
        },
        1,
        Noise::Clean,
    );
    let plies = if periods { 6 } else { OPENING.len() };
    for (i, san) in OPENING.iter().take(plies).enumerate() {
        let quick = if periods { i != 4 } else { i >= 8 };
        let think = if quick { 300 } else { 3_200 };
        if periods && i == 4 {
            // White's first period (6 s) runs out while he thinks: the steady flag.
            let white = rig.side_of(Color::White);
            let mut waited = 0;
            while !rig.board.clock_mut().steady_flag(white) && waited < 15_000 {
                rig.advance(10);
                waited += 10;
            }
            assert!(waited < 15_000, "the period ended");
            rig.advance(150);
            if moment == Moment::PeriodEnd {
                inject(&mut rig, injection);
            }
            rig.advance(900);
        } else if moment == Moment::MidThink && i == 3 {
            rig.advance(think / 2 + 37);
            inject(&mut rig, injection);
            rig.advance(think / 2);
        } else if moment == Moment::BeforeMove && i == BEFORE_MOVE_PLY {
            // A slow hand: the piece is lifted, the noise comes 50 ms before it is put down,
            // and the press 800 ms after, so the clock's next own frame may come first.
            rig.advance(think + phase);
            let m = to_move(&rig, san);
            let piece = rig
                .played
                .board()
                .piece_at(m.from().expect("a move"))
                .expect("piece");
            rig.hand(&[SensorStep::Lift(m.from().expect("a move"))]);
            rig.advance(300);
            inject(&mut rig, injection);
            rig.advance(50);
            rig.hand(&[SensorStep::Place(m.to(), piece)]);
            shown_at = Some(rig.now());
            rig.advance(800);
            rig.play_steps(m, &[SensorStep::Press]);
            rig.advance(100);
            continue;
        } else if moment == Moment::Scramble && i == 13 {
            rig.advance(130);
            inject(&mut rig, injection);
            rig.advance(170);
        } else {
            rig.advance(think);
        }
        let m = to_move(&rig, san);
        rig.play_quick(m, 300);
        if moment == Moment::AfterPress && i == 5 {
            inject(&mut rig, injection);
        }
    }
    if flag {
        // The player to move thinks until his flag falls (20 s at most in the final period).
        let mut waited = 0;
        while rig.session().game().termination.is_none() && waited < 40_000 {
            rig.advance(100);
            waited += 100;
        }
    } else {
        rig.advance(1_500);
    }
    let ply = BEFORE_MOVE_PLY as u32 + 1;
    let delay = shown_at.and_then(|shown| {
        rig.published
            .iter()
            .find(|&&(p, at)| p == ply && at >= shown)
            .map(|&(_, at)| at - shown)
    });
    (record_of(&rig), delay)
}

fn all_flips() -> Vec<Injection> {
    (0..7)
        .flat_map(|byte| (0..7).map(move |bit| Injection::Flip { byte, bit }))
        .collect()
}

/// The baseline of a moment: the game without noise; with `flag`, it must end on time.
fn baseline(moment: Moment, flag: bool) -> Record {
    let base = run(moment, Injection::None, flag);
    assert_eq!(
        base.moves.len(),
        if moment == Moment::PeriodEnd { 6 } else { 16 }
    );
    assert_eq!(base.illegal, (0, 0), "{moment:?}: {base:?}");
    if flag {
        assert_eq!(
            base.termination,
            Some(Termination::TimeForfeit),
            "{moment:?}: the real flag fall is called: {base:?}"
        );
        assert!(
            base.decisive.iter().any(|e| e.starts_with("FlagFell")),
            "{base:?}"
        );
    } else {
        assert_eq!(base.result, GameResult::Ongoing, "{moment:?}: {base:?}");
    }
    base
}

fn check(moment: Moment, flag: bool, injections: &[Injection]) {
    let base = baseline(moment, flag);
    let mut changed = Vec::new();
    for &injection in injections {
        let got = run(moment, injection, flag);
        // The three: a flag on either display, the lever. Each reached the session
        // and was dropped, never acted on.
        if let Injection::Flip {
            byte: 0 | 3,
            bit: 4,
        }
        | Injection::Flip { byte: 6, bit: 1 } = injection
        {
            assert!(
                got.dropped > base.dropped,
                "{moment:?} {injection:?}: {got:?}"
            );
        }
        if !same_record(&base, &got) {
            changed.push(format!("{injection:?}: {got:?}"));
        }
    }
    assert!(
        changed.is_empty(),
        "{moment:?} (flag fall after: {flag}): the noise changed the record of\n{base:?}\nin {} runs:\n{}",
        changed.len(),
        changed.join("\n")
    );
}

#[test]
fn every_single_bit_flip_of_a_clock_frame_leaves_the_record_alone() {
    for moment in MOMENTS {
        check(moment, false, &all_flips());
    }
}

#[test]
fn every_single_bit_flip_before_a_real_flag_fall_leaves_it_called() {
    for moment in MOMENTS {
        check(moment, true, &all_flips());
    }
}

#[test]
fn bursts_of_garbage_frames_leave_the_record_alone() {
    let bursts: Vec<Injection> = (1..=12).map(|seed| Injection::Burst { seed }).collect();
    for moment in MOMENTS {
        for flag in [false, true] {
            check(moment, flag, &bursts);
        }
    }
}

/// What holding a reading costs the move made behind it: the time from the board showing
/// the move to its `MovePlayed`, for the move made 150 ms after each single-bit flip
/// ([`Moment::BeforeMove`]), against the same move without noise. Printed for BENCHMARKS.md;
/// asserted only that every ply is published.
#[test]
fn the_delay_a_held_reading_adds_to_move_played_is_printed() {
    let mut added = Vec::new();
    for phase in (0..1_000).step_by(100) {
        let (_, base) = run_timed(Moment::BeforeMove, Injection::None, false, phase);
        let before = base.expect("published");
        for injection in all_flips() {
            let (_, after) = run_timed(Moment::BeforeMove, injection, false, phase);
            let after = after.unwrap_or_else(|| panic!("{injection:?}: never published"));
            added.push(after.saturating_sub(before));
        }
    }
    added.sort_unstable();
    let held = added.iter().filter(|&&d| d > 0).count();
    println!(
        "MovePlayed of a move put down 50 ms after a flipped clock frame (10 phases in the \
         clock's second): {held} of {} runs held it, added delay median {} ms, 90th percentile \
         {} ms, max {} ms",
        added.len(),
        added[added.len() / 2],
        added[added.len() * 9 / 10],
        added[added.len() - 1]
    );
}

#[test]
fn a_frame_jumping_to_9_59_59_leaves_the_record_alone() {
    let jumps = [
        Injection::Jump { left: true },
        Injection::Jump { left: false },
    ];
    for moment in MOMENTS {
        for flag in [false, true] {
            check(moment, flag, &jumps);
        }
    }
}

/// An operator command while a reading is held decides it at once (a flag far from zero:
/// dropped); the move made behind it is published once, even when the command is refused.
#[test]
fn a_refused_command_while_a_reading_is_held_loses_no_event() {
    let mut rig = Rig::new(
        BoardOptions::default(),
        SessionConfig {
            name: "noise".into(),
            ..SessionConfig::default()
        },
        1,
        Noise::Clean,
    );
    for san in ["e4", "e5"] {
        rig.advance(2_000);
        let m = to_move(&rig, san);
        rig.play_quick(m, 300);
    }
    rig.advance(1_500);
    rig.take_events();
    // White thinks; a garbled frame shows his flag; he puts the knight on f3 behind it.
    inject(&mut rig, Injection::Flip { byte: 3, bit: 4 });
    let m = to_move(&rig, "Nf3");
    rig.hand(&[SensorStep::Lift(m.from().expect("a move"))]);
    rig.advance(50);
    let knight = rig
        .played
        .board()
        .piece_at(m.from().expect("a move"))
        .expect("piece");
    rig.hand(&[SensorStep::Place(m.to(), knight)]);
    rig.advance(20);
    assert!(
        rig.session().view().moves.len() == 2,
        "the move waits behind the held reading: {:?}",
        rig.session().view().moves
    );
    let refused = rig.command(Command::ResolveGap(vec!["g1f3".into()]));
    assert!(refused.is_err(), "no gap to resolve");
    rig.play_steps(m, &[SensorStep::Press]);
    rig.advance(1_500);
    let events = rig.take_events();
    let played: Vec<&Event> = events
        .iter()
        .filter(|e| matches!(e, Event::MovePlayed { .. }))
        .collect();
    assert!(
        matches!(played[..], [Event::MovePlayed { san, .. }] if san == "Nf3"),
        "{events:?}"
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::FlagFell { .. } | Event::GameEnded { .. })),
        "{events:?}"
    );
    assert_eq!(rig.session().view().moves, ["e4", "e5", "Nf3"]);
    assert_eq!(rig.session().clock_readings_filtered().0, 1);
}
