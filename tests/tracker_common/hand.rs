//! A second model of a player's hand, written apart from the simulator's (`sim::handling`)
//! so that the record is tried on orders and paces that model never makes: replies
//! 0 ms to 2 s after the move before, victim or capturer lifted first, a capture read as
//! one update, castling with either piece first, slides set down on the way, promotions
//! shown as a pawn first, j'adoube, a neighbouring piece knocked and put back, presses late
//! or none at all. Every draw comes from one seed, so a failing game is a number.
//!
//! Pure: a game becomes a script of sensor steps, which the tracker tests play on a tracker
//! (`hall.rs`) and the daemon's soak plays on a simulated board behind a pty.
#![allow(dead_code)]

use eboard_core::board::Orientation;
use eboard_sim::handling::SensorStep::{self, Lift, Pause, Place, Press};
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

/// One ply of a script: the steps of the hand (the pause before it first), where the move's
/// own steps end (a knock and the press may follow), and whether the board then stands
/// still for a check of the record.
#[derive(Debug, Clone)]
pub struct Ply {
    pub mv: Move,
    pub steps: Vec<SensorStep>,
    pub move_ends: usize,
    pub still_after: bool,
}

/// How long the board stands still at a check: past the 2 s after which a record behind the
/// board must say so.
pub const STILL_MS: u64 = 2_500;

/// The hall's script of `game`, drawn from `hall.seed`.
pub fn script(game: &[Move], hall: &HallGame) -> Vec<Ply> {
    let mut rng = SmallRng::seed_from_u64(hall.seed);
    let mut truth = Chess::default();
    let mut plies = Vec::with_capacity(game.len());
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
        truth = after;
        // Now and then the board stands still: the record must then be the game so far.
        let still_after = rng.random_bool(0.1) || ply + 1 == game.len();
        plies.push(Ply {
            mv,
            steps,
            move_ends,
            still_after,
        });
    }
    plies
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
