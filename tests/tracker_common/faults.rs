//! Faults for a game played at bullet pace: where the plug is pulled, the daemon killed
//! (-9), or both, and how many plies the players make before anything is read again — from
//! one to a dozen and more, well past the gap search's six. Drawn from one seed, apart from
//! the hand's own draws, so a failing game is two numbers.
//!
//! Pure: the session's hall property plays the plan on a rig in memory, the daemon's on
//! simulated boards behind ptys.
#![allow(dead_code)]

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// What goes wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The plug is pulled (the board loses power and its memory of the gap) and put back.
    Unplug,
    /// The data link drops, the board keeps its power (its memory has the gap).
    LinkDrop,
    /// The daemon is killed (-9) and started again; the board keeps its power.
    Kill,
    /// The daemon is killed, and while it is down the plug is pulled and put back.
    KillAndUnplug,
    /// The plug is pulled and put back, and the daemon is killed moments later, while it
    /// is still recovering the plies made unplugged; more plies are made while it is down.
    UnplugThenKill,
}

/// One fault: before ply `ply` (0-based) it begins, `unseen` plies are made, then it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaultAt {
    pub ply: usize,
    pub fault: Fault,
    pub unseen: usize,
    /// For the two-part faults: how many of the `unseen` plies come before the second part.
    pub split: usize,
}

/// Plies between the end of one fault and the start of the next (the board is read again).
pub const PLIES_BETWEEN: usize = 6;

/// The faults of a game of `len` plies, drawn from `seed`: one to three, each with 1 to 14
/// plies unseen (a third of them more than the search's six), never in the first 4 plies,
/// spread over the whole game.
pub fn plan(seed: u64, len: usize) -> Vec<FaultAt> {
    let mut rng = SmallRng::seed_from_u64(seed ^ 0xFA17_5EED);
    let mut out = Vec::new();
    // Spread over the whole game: the endings, where a few moves explain many, too.
    let stride = (len / 3).max(PLIES_BETWEEN + 1);
    let mut next = 4 + rng.random_range(0..stride);
    let wanted = rng.random_range(1..=3usize);
    while out.len() < wanted && next + 1 < len {
        let fault = match rng.random_range(0..10) {
            0..3 => Fault::Unplug,
            3 => Fault::LinkDrop,
            4..7 => Fault::Kill,
            7..9 => Fault::KillAndUnplug,
            _ => Fault::UnplugThenKill,
        };
        let unseen = match rng.random_range(0..3) {
            0 => rng.random_range(1..=4usize),
            1 => rng.random_range(5..=8usize),
            _ => rng.random_range(9..=14usize),
        }
        .min(len - next);
        let split = if unseen > 1 {
            rng.random_range(1..unseen)
        } else {
            unseen
        };
        out.push(FaultAt {
            ply: next,
            fault,
            unseen,
            split,
        });
        next += unseen + PLIES_BETWEEN + rng.random_range(0..stride);
    }
    out
}
