//! A second model of a player's hand, written apart from the simulator's (`sim::handling`)
//! so that the tracker is tried on orders and paces that model never makes: replies
//! 0 ms to 2 s after the move before, victim or capturer lifted first, a capture read as
//! one update, castling with either piece first, slides set down on the way, promotions
//! shown as a pawn first, j'adoube, a neighbouring piece knocked and put back, presses late
//! or none at all. Every draw comes from one seed, so a failing game is a number.

use super::Rig;
use eboardd::board::Orientation;
use eboardd::sim::handling::SensorStep::{self, Lift, Pause, Place, Press};
use eboardd::tracker::TrackerEvent;
use eboardd::vocab::OrientationSetting;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shakmaty::{CastlingSide, Chess, Move, Position, Role, Square, attacks};

/// How one game is played in the hall.
#[derive(Debug, Clone)]
pub struct HallGame {
    pub seed: u64,
    pub clock: bool,
    pub orientation: Orientation,
    /// Plies whose steps and the events each caused are printed (to look at a failure).
    pub trace: Option<std::ops::RangeInclusive<usize>>,
    /// Every reply this many ms after the move before (uniform), instead of the hall's mix.
    pub reply_ms: Option<(u64, u64)>,
}

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

/// The pause before a move: most replies are quick, some are thought over.
fn reply_delay(rng: &mut SmallRng) -> u64 {
    match rng.random_range(0..100) {
        0..10 => 0,
        10..65 => rng.random_range(0..=250),
        65..90 => rng.random_range(250..=800),
        _ => rng.random_range(800..=2_000),
    }
}

/// A hand's step between two changes.
fn step(rng: &mut SmallRng) -> SensorStep {
    Pause(rng.random_range(0..=150))
}

/// The sensor steps of `mv` in `pos`, drawn from `rng`.
pub fn hand(rng: &mut SmallRng, pos: &Chess, mv: Move) -> Vec<SensorStep> {
    let turn = pos.turn();
    let mut out = Vec::new();
    match mv {
        Move::Normal {
            role,
            from,
            capture,
            to,
            promotion,
        } => {
            let piece = role.of(turn);
            let landed = promotion.unwrap_or(role).of(turn);
            let mut carry = vec![Lift(from)];
            // Set down on the way: only where the piece may stand (a stop it could move to).
            if matches!(role, Role::Bishop | Role::Rook | Role::Queen) && rng.random_bool(0.25) {
                let mut path: Vec<Square> = attacks::between(from, to).into_iter().collect();
                if to < from {
                    path.reverse();
                }
                for sq in path {
                    let stop = Move::Normal {
                        role,
                        from,
                        capture: None,
                        to: sq,
                        promotion: None,
                    };
                    if pos.is_legal(stop) && rng.random_bool(0.6) {
                        carry.extend([step(rng), Place(sq, piece), step(rng), Lift(sq)]);
                    }
                }
            }
            let set_down = if promotion.is_some() && rng.random_bool(0.5) {
                // The pawn stands on the last rank a moment before it is swapped.
                vec![
                    Place(to, piece),
                    step(rng),
                    Lift(to),
                    step(rng),
                    Place(to, landed),
                ]
            } else {
                vec![Place(to, landed)]
            };
            match capture {
                None => {
                    out.extend(carry);
                    out.push(step(rng));
                    out.extend(set_down);
                }
                Some(_) => match rng.random_range(0..10) {
                    // Victim first.
                    0..4 => {
                        out.extend([Lift(to), step(rng)]);
                        out.extend(carry);
                        out.push(step(rng));
                        out.extend(set_down);
                    }
                    // Capturer first.
                    4..8 => {
                        out.extend(carry);
                        out.extend([step(rng), Lift(to), step(rng)]);
                        out.extend(set_down);
                    }
                    // The capturer put straight onto the victim's square: one update.
                    _ => {
                        out.extend(carry);
                        out.push(step(rng));
                        out.extend(set_down);
                    }
                },
            }
        }
        Move::EnPassant { from, to } => {
            let victim = Square::from_coords(to.file(), from.rank());
            let pawn = Role::Pawn.of(turn);
            let orders: [&[SensorStep]; 3] = [
                &[Lift(victim), Lift(from), Place(to, pawn)],
                &[Lift(from), Lift(victim), Place(to, pawn)],
                &[Lift(from), Place(to, pawn), Lift(victim)],
            ];
            let order = orders[rng.random_range(0..3)];
            for (i, s) in order.iter().enumerate() {
                if i > 0 {
                    out.push(step(rng));
                }
                out.push(*s);
            }
        }
        Move::Castle { king, rook } => {
            let side = if rook.file() > king.file() {
                CastlingSide::KingSide
            } else {
                CastlingSide::QueenSide
            };
            let (k, r) = (Role::King.of(turn), Role::Rook.of(turn));
            let (king_on, rook_on) = (Place(side.king_to(turn), k), Place(side.rook_to(turn), r));
            let orders: [&[SensorStep]; 4] = [
                &[Lift(king), king_on, Lift(rook), rook_on],
                &[Lift(rook), rook_on, Lift(king), king_on],
                &[Lift(king), Lift(rook), king_on, rook_on],
                &[Lift(rook), Lift(king), rook_on, king_on],
            ];
            let order = orders[rng.random_range(0..4)];
            for (i, s) in order.iter().enumerate() {
                if i > 0 {
                    out.push(step(rng));
                }
                out.push(*s);
            }
        }
        Move::Put { role, to } => out.push(Place(to, role.of(turn))),
    }
    out
}

/// A piece of the mover not in the move lifted and put back (j'adoube), or one next to
/// the move's destination knocked and put back: `None` when there is none.
fn touch_and_put_back(
    rng: &mut SmallRng,
    board: &shakmaty::Board,
    near: Option<Square>,
    avoid: &[Square],
) -> Option<Vec<SensorStep>> {
    let squares: Vec<Square> = match near {
        Some(sq) => (attacks::king_attacks(sq) & board.occupied())
            .into_iter()
            .collect(),
        None => board.occupied().into_iter().collect(),
    };
    let squares: Vec<Square> = squares.into_iter().filter(|s| !avoid.contains(s)).collect();
    if squares.is_empty() {
        return None;
    }
    let sq = squares[rng.random_range(0..squares.len())];
    let piece = board.piece_at(sq)?;
    Some(vec![
        Lift(sq),
        Pause(rng.random_range(30..=300)),
        Place(sq, piece),
    ])
}

/// Play `game` in the hall: see the module documentation.
pub fn play(game: &[Move], hall: &HallGame) -> HallRun {
    let mut rng = SmallRng::seed_from_u64(hall.seed);
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
    let mut truth = Chess::default();
    // Plies (with the time of their last change) the record does not hold yet, and that are
    // not final yet.
    let mut unplayed: Vec<(usize, u64)> = Vec::new();
    let mut unfinal: Vec<(usize, u64)> = Vec::new();
    for (ply, &mv) in game.iter().enumerate() {
        let delay = match hall.reply_ms {
            Some((lo, hi)) => rng.random_range(lo..=hi),
            None => reply_delay(&mut rng),
        };
        let mut steps = vec![Pause(delay)];
        let moved: Vec<Square> = [mv.from(), Some(mv.to())].into_iter().flatten().collect();
        if rng.random_bool(0.03) {
            let mine = truth.board().by_color(truth.turn());
            let board = {
                let mut b = truth.board().clone();
                for sq in !mine {
                    b.discard_piece_at(sq);
                }
                b
            };
            if let Some(adjust) = touch_and_put_back(&mut rng, &board, None, &moved) {
                steps.extend(adjust);
                steps.push(Pause(rng.random_range(50..=400)));
            }
        }
        steps.extend(hand(&mut rng, &truth, mv));
        let move_ends = steps.len();
        let mut after = truth.clone();
        after.play_unchecked(mv);
        if rng.random_bool(0.02)
            && let Some(knock) = touch_and_put_back(&mut rng, after.board(), Some(mv.to()), &moved)
        {
            steps.push(step(&mut rng));
            steps.extend(knock);
        }
        if hall.clock {
            steps.push(Pause(rng.random_range(0..=400)));
            steps.push(Press);
        }
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
                        catch_up(
                            &run.rig,
                            &mut unplayed,
                            &mut unfinal,
                            &mut run.to_played_ms,
                            &mut run.to_final_ms,
                        );
                        left -= slice;
                    }
                    ev
                }
                _ => run.rig.steps(&[*s]),
            };
            if i + 1 == move_ends {
                unplayed.push((ply, run.rig.now));
                unfinal.push((ply, run.rig.now));
            }
            catch_up(
                &run.rig,
                &mut unplayed,
                &mut unfinal,
                &mut run.to_played_ms,
                &mut run.to_final_ms,
            );
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
        truth = after;
        // Now and then the board stands still: the record must then be the game so far.
        if rng.random_bool(0.1) || ply + 1 == game.len() {
            let accused_before = accusations(&run.rig.events);
            for _ in 0..50 {
                run.rig.pass(50);
                catch_up(
                    &run.rig,
                    &mut unplayed,
                    &mut unfinal,
                    &mut run.to_played_ms,
                    &mut run.to_final_ms,
                );
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

/// Plies the record now holds leave `unplayed`, plies now final leave `unfinal`; each
/// one's wait is kept.
fn catch_up(
    rig: &Rig,
    unplayed: &mut Vec<(usize, u64)>,
    unfinal: &mut Vec<(usize, u64)>,
    to_played_ms: &mut Vec<u64>,
    to_final_ms: &mut Vec<u64>,
) {
    let held = rig.tracker.moves().len();
    let fin = held - rig.tracker.pending_plies();
    unplayed.retain(|&(ply, at)| {
        let done = ply < held;
        if done {
            to_played_ms.push(rig.now.saturating_sub(at));
        }
        !done
    });
    unfinal.retain(|&(ply, at)| {
        let done = ply < fin;
        if done {
            to_final_ms.push(rig.now.saturating_sub(at));
        }
        !done
    });
}

fn accusations(events: &[TrackerEvent]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, TrackerEvent::IllegalPlacement { .. }))
        .count()
}
