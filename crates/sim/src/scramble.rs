//! Games at blitz or bullet pace with the board unplugged now and then, or the daemon
//! killed (-9) and started again from its journal, on a [`Rig`]: the players never stop (a
//! ply every few hundred ms), the plug is out (the daemon down) for a second or so while
//! they go on, and an arbiter with the scoresheets answers a `Gap` that waits for him a few
//! seconds after it lists the candidates — with the moves from the last known position, the
//! gap's and all played since. Shared by `tests/session_gap.rs` and `benches/gap_soak.rs`.
//!
//! Pure and stepped like the rig: a game of 80 plies takes milliseconds.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Move, Position};

use super::rig::Rig;
use eboard_core::session::{Command, Event};

/// How the players and the arbiter behave.
#[derive(Debug, Clone)]
pub struct Pace {
    /// Time per ply, ms (lower and upper bound).
    pub ply_ms: (u64, u64),
    /// How long the plug stays out, ms.
    pub unplug_ms: (u64, u64),
    /// Chance that a ply begins an unplug.
    pub unplug_chance: f64,
    /// How long after `Gap` lists candidates the arbiter answers, ms.
    pub arbiter_after_ms: u64,
    /// Chance that a fault is a kill (-9) of the daemon rather than an unplug: the board
    /// keeps its power and its memory; in a quarter of them the plug is also pulled while
    /// the daemon is down (the memory then has nothing for the gap).
    pub kill_chance: f64,
    /// How long the daemon stays down after a kill, ms (the players play on).
    pub down_ms: (u64, u64),
}

impl Pace {
    /// 0.5–1.1 s a ply, 1–1.6 s unplugs, the arbiter 3 s after the list.
    pub fn blitz() -> Pace {
        Pace {
            ply_ms: (500, 1_100),
            unplug_ms: (1_000, 1_600),
            unplug_chance: 0.08,
            arbiter_after_ms: 3_000,
            kill_chance: 0.0,
            down_ms: (1_000, 3_000),
        }
    }

    /// 0.2–0.5 s a ply, 1 s unplugs.
    pub fn bullet() -> Pace {
        Pace {
            ply_ms: (200, 500),
            unplug_ms: (1_000, 1_000),
            unplug_chance: 0.06,
            arbiter_after_ms: 3_000,
            kill_chance: 0.0,
            down_ms: (1_000, 3_000),
        }
    }

    /// 0.1–0.3 s a ply; faults before 6% of the plies, half of them kills with the daemon
    /// down 1–3 s (a dozen plies made unseen), the others 1 s unplugs.
    pub fn bullet_fast() -> Pace {
        Pace {
            ply_ms: (100, 300),
            unplug_ms: (1_000, 1_000),
            unplug_chance: 0.06,
            arbiter_after_ms: 3_000,
            kill_chance: 0.5,
            down_ms: (1_000, 3_000),
        }
    }
}

/// What one or more games came to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Figures {
    pub games: u64,
    pub games_exact: u64,
    pub plies: u64,
    pub unplugs: u64,
    /// Plies made while the board was unplugged.
    pub gap_plies: u64,
    /// Gaps the arbiter had to resolve.
    pub asked: u64,
    /// Plies played that the record does not have at the end of the game.
    pub lost: u64,
    /// Games whose final record holds a ply that was not played (a record of a game not
    /// played, whatever `InSync` says).
    pub wrong: u64,
    /// Daemon kills (with an unplug while it was down: `kills_unplugged`).
    pub kills: u64,
    pub kills_unplugged: u64,
    /// Plies of a gap that came back to the very position it started from (a repetition:
    /// Nb2 Rb4 Nd3 Rc4): no board can show them, and after a power loss no memory has
    /// them. Counted apart, not as lost; the record is expected without them.
    pub invisible: u64,
    /// Illegal-move signals (no illegal move is ever made).
    pub false_accusations: u64,
    /// The longest time a ply the board showed waited for its `MovePlayed`, ms.
    pub longest_stall_ms: u64,
}

impl Figures {
    pub fn add(&mut self, other: &Figures) {
        self.games += other.games;
        self.games_exact += other.games_exact;
        self.plies += other.plies;
        self.unplugs += other.unplugs;
        self.gap_plies += other.gap_plies;
        self.asked += other.asked;
        self.lost += other.lost;
        self.wrong += other.wrong;
        self.kills += other.kills;
        self.kills_unplugged += other.kills_unplugged;
        self.invisible += other.invisible;
        self.false_accusations += other.false_accusations;
        self.longest_stall_ms = self.longest_stall_ms.max(other.longest_stall_ms);
    }
}

/// The arbiter: watches `Gap`, answers from the scoresheets once it has listed candidates
/// for `after_ms`.
struct Arbiter {
    listed_at: Option<u64>,
    after_ms: u64,
    asked: u64,
}

impl Arbiter {
    /// `expected`: the played ply of each ply of the record expected (an invisible gap,
    /// see [`Figures::invisible`], is not in the record).
    fn look(&mut self, rig: &mut Rig, expected: &[usize]) {
        let view = rig.session().view();
        if !view.gap.contains("waiting for the arbiter") {
            self.listed_at = None;
            return;
        }
        let known = view.moves.len();
        let listed = *self.listed_at.get_or_insert(rig.now());
        if rig.now() < listed + self.after_ms {
            return;
        }
        let since = match known {
            0 => 0,
            n => expected
                .get(n - 1)
                .map_or(rig.played_moves.len(), |&p| p + 1),
        };
        let moves = rig.played_moves[since.min(rig.played_moves.len())..]
            .iter()
            .map(|m| UciMove::from_move(*m, CastlingMode::Standard).to_string())
            .collect();
        match rig.command(Command::ResolveGap(moves)) {
            Ok(()) => self.asked += 1,
            Err(why) => tracing::warn!(%why, "the arbiter's ResolveGap was refused"),
        }
        self.listed_at = None;
    }
}

fn accusations(events: &[Event]) -> u64 {
    events.iter().filter(|e| e.is_accusation()).count() as u64
}

/// Play `moves` on `rig` (a fresh game from the start position) at `pace`.
pub fn play_game(rig: &mut Rig, moves: &[Move], pace: &Pace, seed: u64) -> Figures {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut f = Figures {
        games: 1,
        ..Figures::default()
    };
    if !rig.played_san.is_empty() {
        rig.new_game();
    }
    rig.take_events();
    let mut arbiter = Arbiter {
        listed_at: None,
        after_ms: pace.arbiter_after_ms,
        asked: 0,
    };
    let ply_ms = |rng: &mut SmallRng| rng.random_range(pace.ply_ms.0..=pace.ply_ms.1);
    let mut k = 0;
    // The record expected at the end: what was played, less the invisible gaps.
    let mut expected: Vec<usize> = Vec::new();
    while k < moves.len() {
        // One fault at a time: the next unplug waits until the last gap is closed.
        let closed = rig.session().view().gap.is_empty();
        if k > 0 && closed && rng.random_bool(pace.unplug_chance) {
            let kill = rng.random_bool(pace.kill_chance);
            let also_unplugged = kill && rng.random_bool(0.25);
            let out_for = if kill {
                f.kills += 1;
                f.kills_unplugged += u64::from(also_unplugged);
                rng.random_range(pace.down_ms.0..=pace.down_ms.1)
            } else {
                f.unplugs += 1;
                rng.random_range(pace.unplug_ms.0..=pace.unplug_ms.1)
            };
            let until = rig.now() + out_for;
            if kill {
                rig.kill();
            } else {
                rig.unplug();
            }
            let shown_before = rig.shown.len();
            let board_before = rig.played.board().clone();
            let first = k;
            let halfway = rig.now() + out_for / 2;
            let mut pulled = false;
            while k < moves.len() && rig.now() + pace.ply_ms.0 <= until {
                if also_unplugged && !pulled && rig.now() >= halfway {
                    rig.unplug();
                    pulled = true;
                }
                rig.play_quick(moves[k], ply_ms(&mut rng));
                k += 1;
                f.gap_plies += 1;
            }
            if k > first && *rig.played.board() == board_before {
                f.invisible += (k - first) as u64;
            } else {
                expected.extend(first..k);
            }
            let wait = until.saturating_sub(rig.now());
            rig.advance(wait);
            if !kill || pulled {
                rig.replug();
            }
            if kill {
                rig.restart();
            }
            // The board shows the gap's plies when it is read again.
            let now = rig.now();
            for s in &mut rig.shown[shown_before..] {
                s.1 = now;
            }
            continue;
        }
        rig.play_quick(moves[k], ply_ms(&mut rng));
        expected.push(k);
        k += 1;
        arbiter.look(rig, &expected);
    }
    for _ in 0..20 {
        rig.advance(1_000);
        arbiter.look(rig, &expected);
    }
    let expected: Vec<String> = expected
        .iter()
        .map(|&p| rig.played_san[p].clone())
        .collect();
    let view = rig.session().view();
    f.plies = rig.played_san.len() as u64;
    // A game the Laws ended (a dead position the corpus game played on) ends its record.
    let ended = view.result != "*" && expected.starts_with(&view.moves);
    if view.moves == expected || ended {
        f.games_exact = 1;
    } else {
        let kept = view
            .moves
            .iter()
            .zip(&expected)
            .take_while(|(a, b)| a == b)
            .count();
        f.lost = (expected.len() - kept) as u64;
        f.wrong = u64::from(kept < view.moves.len());
    }
    f.asked = arbiter.asked;
    f.false_accusations = accusations(&rig.take_events());
    let (longest, missing) = rig.stalls();
    f.longest_stall_ms = longest;
    if !missing.is_empty() && f.games_exact == 1 && !ended {
        tracing::warn!(
            ?missing,
            "plies the board showed were published only as a batch"
        );
    }
    f
}
