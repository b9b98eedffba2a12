//! The hall's hand (`hand.rs`) played on a tracker: at every still board the record is
//! compared with the game so far.

use super::Rig;
pub use super::hand::{HallGame, STILL_MS, script};
use eboard_core::tracker::TrackerEvent;
use eboard_core::vocab::OrientationSetting;
use eboard_sim::handling::SensorStep::Pause;
use shakmaty::{Chess, Move};

/// What a game through the tracker came to.
pub struct HallRun {
    pub rig: Rig,
    /// Plies of the game played.
    pub plies: usize,
    /// Times the board stood still for 2.5 s: each a check of the record against the game.
    pub checks: usize,
    /// At those checks, how many plies the record lacked (or held wrongly), summed: a record
    /// behind the board with the board still.
    pub behind_plies: usize,
    /// Checks at which the record was behind or wrong with nothing said: no illegal
    /// placement, and no two stories held open with the game among them.
    pub silent_behind: usize,
    /// Checks at which the tracker held two stories open, the game one of them (the board
    /// cannot tell them apart: the next move or the arbiter decides).
    pub open_questions: usize,
    /// Checks at which the tracker held two stories open and the game was neither.
    pub open_without_the_game: usize,
    /// For each ply, ms from the move's last field change to the record holding it
    /// (`MovePlayed`), and to its being final; in the order they came.
    pub to_played_ms: Vec<u64>,
    pub to_final_ms: Vec<u64>,
}

/// Play `game` in the hall: see the module documentation.
pub fn play(game: &[Move], hall: &HallGame) -> HallRun {
    let mut run = HallRun {
        rig: Rig::new(Chess::default(), OrientationSetting::Auto, hall.orientation),
        plies: game.len(),
        checks: 0,
        behind_plies: 0,
        silent_behind: 0,
        open_questions: 0,
        open_without_the_game: 0,
        to_played_ms: Vec::new(),
        to_final_ms: Vec::new(),
    };
    let mut waits = Waits::default();
    for (ply, p) in script(game, hall).into_iter().enumerate() {
        let (mv, steps, move_ends) = (p.mv, p.steps, p.move_ends);
        let trace = hall.trace.as_ref().is_some_and(|r| r.contains(&ply));
        if trace {
            println!("ply {ply}: {mv:?}");
        }
        for (i, s) in steps.iter().enumerate() {
            // Time passes in slices of at most 50 ms, so that the waits are measured to that.
            let ev = match *s {
                Pause(ms) => {
                    let mut ev = Vec::new();
                    let mut left = ms;
                    while left > 0 {
                        let slice = left.min(50);
                        ev.extend(run.rig.steps(&[Pause(slice)]));
                        waits.catch_up(&mut run);
                        left -= slice;
                    }
                    ev
                }
                _ => run.rig.steps(&[*s]),
            };
            if i + 1 == move_ends {
                waits.unplayed.push((ply, run.rig.now));
                waits.unfinal.push((ply, run.rig.now));
            }
            waits.catch_up(&mut run);
            if trace {
                println!("   t={} {s:?} -> {ev:?}", run.rig.now);
                if std::env::var("TRACE_STATE").is_ok() {
                    println!(
                        "      held {:?} pending {} in_sync {}",
                        run.rig.tracker.held(),
                        run.rig.tracker.pending_plies(),
                        run.rig.tracker.in_sync()
                    );
                }
            }
        }
        // Now and then the board stands still: the record must then be the game so far.
        if p.still_after {
            let accused_before = accusations(&run.rig.events);
            for _ in 0..STILL_MS / 50 {
                run.rig.pass(50);
                waits.catch_up(&mut run);
            }
            run.checks += 1;
            let so_far = &game[..=ply];
            if let Some(stories) = run.rig.tracker.open_stories() {
                if stories.iter().any(|s| s.as_slice() == so_far) {
                    run.open_questions += 1;
                } else {
                    run.open_without_the_game += 1;
                }
                continue;
            }
            let held = run.rig.tracker.moves();
            let common = held.iter().zip(so_far).take_while(|(a, b)| a == b).count();
            let off = (so_far.len() - common) + (held.len() - common);
            if off > 0 {
                if hall.trace.is_some() {
                    println!("ply {ply}: the record is {off} plies off at a still board");
                }
                run.behind_plies += off;
                if accusations(&run.rig.events) == accused_before {
                    run.silent_behind += 1;
                }
            }
        }
    }
    run
}

/// Plies (with the time of their last change) the record does not hold yet, and that are
/// not final yet.
#[derive(Default)]
struct Waits {
    unplayed: Vec<(usize, u64)>,
    unfinal: Vec<(usize, u64)>,
}

impl Waits {
    /// Plies the record now holds leave `unplayed`, plies now final leave `unfinal`; each
    /// one's wait is kept in `run`.
    fn catch_up(&mut self, run: &mut HallRun) {
        let held = run.rig.tracker.moves().len();
        let fin = held - run.rig.tracker.pending_plies();
        let now = run.rig.now;
        self.unplayed.retain(|&(ply, at)| {
            let done = ply < held;
            if done {
                run.to_played_ms.push(now.saturating_sub(at));
            }
            !done
        });
        self.unfinal.retain(|&(ply, at)| {
            let done = ply < fin;
            if done {
                run.to_final_ms.push(now.saturating_sub(at));
            }
            !done
        });
    }
}

fn accusations(events: &[TrackerEvent]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, TrackerEvent::IllegalPlacement { .. }))
        .count()
}
