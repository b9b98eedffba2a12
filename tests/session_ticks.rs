//! The daemon ticks a board's session on its 100 ms grid only while the session wants it
//! (`Session::wants_ticks`: a rule judged at each tick waits), and otherwise only at the
//! session's own deadlines (`Session::next_wakeup`) and about once a second (with a read a
//! second after the last tick, or after five quiet seconds). That is safe only if
//! a tick the session did not want never changes anything. So two rigs play the same game
//! with the same hands, faults and seeds: one ticked on the grid always and at every
//! deadline (what the daemon did before), one only as needed, without even the daemon's
//! idle tick. Everything each reports must be the same, in the same order, at the
//! same board times: every event, every `MovePlayed`'s time, every fact, the final view.
//!
//! The games are random corpus games, played by noisy or clean hands at a human or a
//! scramble pace, with or without a clock (sudden death, Fischer periods, a DGT XL's move
//! counter ending the periods), through presses without a move (7.5.3), long pauses, cut
//! frames, junk, a dropped link, an unplugged board and a daemon killed and restarted.
//! A fixed seed by default (CI is reproducible); `SESSION_TICKS_SEED=random` explores.

mod proptest_runs;
mod tracker_common;

use eboard_core::arbiter::ArbiterConfig;
use eboard_core::arbiter::timecontrol::TimeControl;
use eboard_core::session::SessionConfig;
use eboard_core::vocab::{ClockPeriods, Edition};
use eboard_sim::clock_models::ClockPresence;
use eboard_sim::handling::{Noise, SensorStep};
use eboard_sim::rig::{QUIET_TICK_MS, Rig, Ticks};
use eboard_sim::virtual_board::BoardOptions;
use proptest::prelude::*;
use proptest::test_runner::Config;
use shakmaty::Move;
use std::sync::OnceLock;

fn games() -> &'static [Vec<Move>] {
    static GAMES: OnceLock<Vec<Vec<Move>>> = OnceLock::new();
    GAMES.get_or_init(tracker_common::corpus_games)
}

/// The clock on the table.
#[derive(Debug, Clone, Copy)]
enum Clock {
    None,
    /// Sudden death with an increment: flags fall in a long think.
    SuddenDeath,
    /// Fischer periods ended by time (a control at move 6).
    Periods,
    /// Periods ended by the clock's move counter (a DGT XL in option 13), judged from the
    /// record: the counter is compared at every tick.
    Counter,
}

/// What happens before a ply.
#[derive(Debug, Clone, Copy)]
enum Fault {
    None,
    /// The player to move presses without moving, then thinks (7.5.3).
    PressOnly(u64),
    /// A long think.
    Pause(u64),
    /// The link drops for a while (the board stays powered).
    Disconnect(u64),
    /// The board loses power for a while.
    Unplug(u64),
    /// The daemon is killed and started again from its journal.
    Restart,
    /// A frame cut on the line.
    CutFrame,
    /// Junk on the line.
    Junk,
}

#[derive(Debug, Clone)]
struct Case {
    game: usize,
    plies: usize,
    clock: Clock,
    noise: Noise,
    seed: u64,
    /// Per ply: a scramble pace (`Some(ms)`) or a hand at a human pace, and a fault first.
    plies_as: Vec<(Option<u64>, Fault)>,
    edition: Edition,
}

fn clock_strategy() -> impl Strategy<Value = Clock> {
    prop_oneof![
        Just(Clock::None),
        Just(Clock::SuddenDeath),
        Just(Clock::Periods),
        Just(Clock::Counter)
    ]
}

fn fault_strategy() -> impl Strategy<Value = Fault> {
    prop_oneof![
        12 => Just(Fault::None),
        1 => (0u64..4_000).prop_map(Fault::PressOnly),
        1 => (2_000u64..20_000).prop_map(Fault::Pause),
        1 => (200u64..6_000).prop_map(Fault::Disconnect),
        1 => (200u64..6_000).prop_map(Fault::Unplug),
        1 => Just(Fault::Restart),
        1 => Just(Fault::CutFrame),
        1 => Just(Fault::Junk),
    ]
}

fn case_strategy() -> impl Strategy<Value = Case> {
    (
        0..games().len(),
        6usize..60,
        clock_strategy(),
        prop_oneof![Just(Noise::Clean), Just(Noise::Noisy)],
        any::<u64>(),
        proptest::collection::vec(
            (
                prop_oneof![Just(None), (60u64..1_500).prop_map(Some)],
                fault_strategy(),
            ),
            60,
        ),
        prop_oneof![Just(Edition::Fide2023), Just(Edition::Fide2005)],
    )
        .prop_map(
            |(game, plies, clock, noise, seed, plies_as, edition)| Case {
                game,
                plies: plies.min(games()[game].len()),
                clock,
                noise,
                seed,
                plies_as,
                edition,
            },
        )
}

fn rig(case: &Case, ticks: Ticks) -> Rig {
    let control: Option<TimeControl> = match case.clock {
        Clock::None => None,
        Clock::SuddenDeath => Some("40+1".parse().expect("control")),
        Clock::Periods => Some("3/25+1:30+1".parse().expect("control")),
        Clock::Counter => Some("3/25+1:30+1".parse().expect("control")),
    };
    let by_counter = matches!(case.clock, Clock::Counter);
    let board = BoardOptions {
        clock: if matches!(case.clock, Clock::None) {
            ClockPresence::Absent
        } else {
            ClockPresence::Present
        },
        time_control: control.clone(),
        clock_by_counter: by_counter,
        ..BoardOptions::default()
    };
    let config = SessionConfig {
        name: "ticks".into(),
        arbiter: ArbiterConfig {
            time_control: control,
            edition: case.edition,
            clock_periods: if by_counter {
                ClockPeriods::Moves
            } else {
                ClockPeriods::Time
            },
            ..ArbiterConfig::default()
        },
        ..SessionConfig::default()
    };
    let mut rig = Rig::new(board, config, case.seed, case.noise);
    rig.set_ticks(ticks);
    rig
}

/// Everything a rig's sessions reported, with the board times of the moves published.
#[derive(Debug, PartialEq)]
struct Seen {
    journal: Vec<eboard_core::session::Event>,
    published: Vec<(u32, u64)>,
    facts: Vec<String>,
    view: Option<eboard_core::contract::BoardProps>,
    now: u64,
}

fn play(case: &Case, ticks: Ticks) -> Seen {
    let mut rig = rig(case, ticks);
    let mut facts = Vec::new();
    let mut take_facts = |rig: &mut Rig| {
        facts.extend(rig.facts().into_iter().map(|f| format!("{f:?}")));
    };
    for (i, &m) in games()[case.game][..case.plies].iter().enumerate() {
        let (pace, fault) = case.plies_as[i % case.plies_as.len()];
        match fault {
            Fault::None => {}
            Fault::PressOnly(think) => {
                rig.hand(&[SensorStep::Press]);
                rig.advance(think);
            }
            Fault::Pause(ms) => rig.advance(ms),
            Fault::Disconnect(ms) => {
                rig.disconnect();
                rig.advance(ms);
                rig.connect();
            }
            Fault::Unplug(ms) => {
                rig.unplug();
                rig.advance(ms);
                rig.replug();
            }
            Fault::Restart => {
                take_facts(&mut rig);
                rig.kill();
                rig.advance(500);
                rig.restart();
            }
            Fault::CutFrame => rig.cut_next_frame(),
            Fault::Junk => rig.junk(&[0xFF, 0x00, 0x81, 0x13]),
        }
        match pace {
            Some(ms) => rig.play_quick(m, ms),
            None => rig.play_move(m),
        }
        take_facts(&mut rig);
    }
    // Long enough for every deadline left (a silent clock's flag, a move becoming final).
    rig.advance(15_000);
    take_facts(&mut rig);
    Seen {
        journal: rig.journal().to_vec(),
        published: rig.published.clone(),
        facts,
        view: rig.running().then(|| rig.session().view().clone()),
        now: rig.now(),
    }
}

fn check(case: &Case) {
    let always = play(case, Ticks::Always);
    let as_needed = play(case, Ticks::AsNeeded);
    if always != as_needed {
        let first = always
            .journal
            .iter()
            .zip(&as_needed.journal)
            .position(|(a, b)| a != b);
        panic!(
            "ticking only as needed changed what the session reports ({case:?}): first \
             different event {first:?} of {} and {}; always {:?} / as needed {:?} there; \
             published {} / {}; facts {} / {}",
            always.journal.len(),
            as_needed.journal.len(),
            first.map(|i| &always.journal[i]),
            first.map(|i| &as_needed.journal[i]),
            always.published.len(),
            as_needed.published.len(),
            always.facts.len(),
            as_needed.facts.len(),
        );
    }
}

fn config() -> Config {
    Config {
        failure_persistence: None,
        ..proptest_runs::config("SESSION_TICKS_SEED", 48, 45)
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn a_tick_the_session_does_not_want_changes_nothing(case in case_strategy()) {
        check(&case);
    }
}

/// The rules judged at each tick, each on its own and seen to act: a press without a move
/// (its grace, then 7.5.3 in the 2023 edition), with and without the move counter, the
/// control at a period's end, a flag in sudden death.
#[test]
fn each_rule_judged_at_a_tick_is_still_judged() {
    let quiet = vec![(None, Fault::None); 60];
    let mut press = quiet.clone();
    press[4] = (None, Fault::PressOnly(3_000));
    let mut pause = quiet;
    pause[3] = (None, Fault::Pause(50_000));
    let cases = [
        (
            Clock::SuddenDeath,
            &press,
            "clock pressed without making a move (7.5.3)",
        ),
        (
            Clock::Counter,
            &press,
            "clock pressed without making a move (7.5.3)",
        ),
        (
            Clock::Periods,
            &pause,
            "Black completed 1 of the 3 moves due when his time for period 1 ran out",
        ),
        (Clock::SuddenDeath, &pause, "Black flag fell"),
    ];
    for (clock, plies_as, judged) in cases {
        let case = Case {
            game: 7,
            plies: 16,
            clock,
            noise: Noise::Clean,
            seed: 3,
            plies_as: plies_as.clone(),
            edition: Edition::Fide2023,
        };
        check(&case);
        let seen = play(&case, Ticks::AsNeeded);
        // The text as words: the PGN wraps its lines.
        let pgn = seen.view.expect("running").pgn.replace('\n', " ");
        assert!(pgn.contains(judged), "{clock:?}: {judged:?} not in {pgn}");
    }
}

/// What the change saves: a board waiting for a move (a clock running, nothing judged at each
/// tick) is ticked at most once a second, not ten times; a game at a brisk pace a fraction as
/// often.
#[test]
fn an_idle_board_is_ticked_at_most_once_a_second_and_a_game_far_less_often_than_the_grid() {
    let case = Case {
        game: 11,
        plies: 40,
        clock: Clock::SuddenDeath,
        noise: Noise::Clean,
        seed: 5,
        plies_as: vec![(Some(800), Fault::None); 60],
        edition: Edition::Fide2023,
    };
    let ticks = |ticks: Ticks, play: bool| {
        let mut rig = rig(&case, ticks);
        if play {
            for &m in &games()[case.game][..case.plies] {
                rig.play_quick(m, 800);
            }
        }
        let from = rig.ticks_given;
        rig.advance(60_000);
        (from, rig.ticks_given - from)
    };
    // A minute of waiting: 600 grid ticks against at most one a second (with a read) and at
    // least one every QUIET_TICK_MS.
    let (_, always) = ticks(Ticks::Always, false);
    let (_, daemon) = ticks(Ticks::AsTheDaemon, false);
    assert!(always >= 599, "{always}");
    let least = 60_000 / QUIET_TICK_MS;
    assert!((least..=61).contains(&daemon), "{daemon}");
    // Forty plies at 0.8 s each: the grid's ticks against those the rules asked for.
    let (always, _) = ticks(Ticks::Always, true);
    let (daemon, _) = ticks(Ticks::AsTheDaemon, true);
    assert!(daemon * 4 < always, "{daemon} of {always}");
}
