//! Human handling: the sensor steps people produce when they make a move on an e-board.
//!
//! A DGT board reports one square at a time, in scan order, while hands lift, slide, drop,
//! capture in any order and adjust pieces. This module turns a legal move into such a
//! sequence, seeded and reproducible, so the board simulator, `--demo`, the tracker's
//! property tests and its benchmark all exercise the same realistic noise.
//!
//! # API
//!
//! ```
//! use eboard_sim::handling::{Handling, Noise, SensorStep};
//! use shakmaty::{Chess, Position};
//!
//! let pos = Chess::default();
//! let mv = pos.legal_moves()[0];
//! let mut hands = Handling::new(42, Noise::Noisy);
//! let steps: Vec<SensorStep> = hands.steps(&pos, mv);
//! // Applying the steps to the board before the move gives the board after it.
//! let mut board = pos.board().clone();
//! for step in &steps {
//!     step.apply(&mut board);
//! }
//! assert_eq!(&board, pos.clone().play(mv).unwrap().board());
//! ```
//!
//! - [`SensorStep`]: `Lift(square)` (the square reads empty), `Place(square, piece)` (the
//!   square reads that piece, whatever it held before: a capture seen in one scan),
//!   `Pause(ms)` (time passes with no change) and `Press` (the mover presses the clock lever).
//!   Squares are physical squares in the **normal orientation** (White on the connector side's
//!   left); the simulator maps them to wire fields and applies a reversed orientation itself.
//! - [`Handling::new`]`(seed, noise)`: [`Noise::Clean`] gives the minimal lift + place
//!   sequence of each move; [`Noise::Noisy`] draws one of the human variants below per move.
//! - [`Handling::with_clock`]: whether each move ends with a `Press` (default: yes).
//! - [`Handling::steps`]`(position, move)`: the steps for one legal move, starting from
//!   `position.board()` and ending on the board after the move (every intermediate change
//!   is undone by the end: touches, adjustments and slides leave nothing behind).
//! - [`Handling::quick_reply`]`(position, move, reply)`: both moves' steps, with the reply's
//!   first lift read before the move's last placement (a fast reply the scan reads together
//!   with the move).
//!
//! Time passes between sensor changes as it does for hands (`Pause` steps): thinking before
//! the move, the hand's travel between lifting a piece and setting it down, the squares of a
//! slide, the pause before the press. The real captures (`tests/sim_capture_like.rs`) check
//! that the variants are the orders of events real hands produce.
//!
//! Variants drawn in noisy mode (each with tests below):
//! - order: lift then place, or the new square reported before the old one empties;
//! - captures: the victim removed first, removed after the attacker is lifted, or replaced in
//!   one update; a captured piece touching an empty neighbouring square on its way off the
//!   board (after the capturing piece has landed, as seen in the real captures);
//! - castling: king first, rook first, or both lifted; the king dragged over the square next
//!   to it;
//! - en passant: the captured pawn removed first, in the middle or last;
//! - promotion: the promoted piece placed directly, or the pawn first set on the last rank and
//!   then swapped (with or without an empty-square reading in between); every promotion role
//!   comes from the move itself, so underpromotion is covered by the caller's move choice;
//! - sliding pieces (rook, bishop, queen, pawn double step) dragged over intermediate squares,
//!   the scan seeing most of them, 40-250 ms a square (mostly quick), with the next square
//!   sometimes read before the previous one empties, and now and then a pause on a square in
//!   the middle of the slide;
//! - a slider set down on an intermediate square, released, left there a moment, then picked
//!   up again and moved on;
//! - adjustments: a piece of the mover lifted and put back on its square, before the move or
//!   after the clock press.

use SensorStep::{Lift, Place};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shakmaty::{Bitboard, Board, CastlingSide, Chess, Color, Move, Piece, Position, Role, Square};

/// One thing the board's sensors (or the clock) report, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SensorStep {
    /// The square now reads empty.
    Lift(Square),
    /// The square now reads this piece (whatever it held before).
    Place(Square, Piece),
    /// Milliseconds pass with no change.
    Pause(u64),
    /// The mover presses the clock lever.
    Press,
}

impl SensorStep {
    /// Apply the step to a board (pauses and presses change nothing).
    pub fn apply(&self, board: &mut Board) {
        match *self {
            SensorStep::Lift(sq) => {
                board.discard_piece_at(sq);
            }
            SensorStep::Place(sq, piece) => board.set_piece_at(sq, piece),
            SensorStep::Pause(_) | SensorStep::Press => {}
        }
    }
}

/// How much human noise to add.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Noise {
    /// Lift the moving piece(s), place them: the shortest sequence for each move.
    Clean,
    /// Draw one realistic human variant per move (see the module documentation).
    #[default]
    Noisy,
}

/// A seeded generator of human handling.
#[derive(Debug, Clone)]
pub struct Handling {
    rng: SmallRng,
    noise: Noise,
    clock: bool,
}

/// Probability that a noisy slider move shows intermediate squares.
const P_SLIDE: f64 = 0.25;
/// Probability that the scan sees the piece on a square it slides over.
const P_SEEN: f64 = 0.85;
/// Time the hand takes per square of a slide: 40-250 ms, mostly quick.
const SQUARE_MS: (u64, u64) = (40, 250);
/// Probability that a slide pauses on one square in its middle (a hesitation), and how long
/// (shorter than a placement takes to count as illegal: the hand is still on the piece).
const P_SLIDE_PAUSE: f64 = 0.02;
const SLIDE_PAUSE_MS: (u64, u64) = (250, 550);
/// Probability that a noisy slider move is set down on the way, released and moved on.
const P_SET_DOWN: f64 = 0.006;
/// The hand's travel between lifting a piece and setting it down elsewhere.
const TRAVEL_MS: (u64, u64) = (120, 600);
/// Probability of an adjustment before or after a noisy move.
const P_ADJUST: f64 = 0.05;
/// Probability that a captured piece touches a neighbouring square on its way off.
const P_TOUCH: f64 = 0.15;
/// Probability that the destination is read before the origin empties.
const P_TO_FIRST: f64 = 0.2;

impl Handling {
    /// A generator with its own seeded random stream.
    pub fn new(seed: u64, noise: Noise) -> Self {
        Handling {
            rng: SmallRng::seed_from_u64(seed),
            noise,
            clock: true,
        }
    }

    /// Whether each move ends with a clock press (default `true`).
    pub fn with_clock(mut self, clock: bool) -> Self {
        self.clock = clock;
        self
    }

    /// The noise level this generator was built with.
    pub fn noise(&self) -> Noise {
        self.noise
    }

    /// The sensor steps for `mv` played in `pos`. `mv` must be legal in `pos`; for any other
    /// move the steps still only touch the squares the move names.
    pub fn steps(&mut self, pos: &Chess, mv: Move) -> Vec<SensorStep> {
        let mut out = Vec::with_capacity(12);
        let turn = pos.turn();
        let board = pos.board();
        let noisy = self.noise == Noise::Noisy;
        if noisy {
            out.push(SensorStep::Pause(self.rng.random_range(300..3000)));
            if self.rng.random_bool(P_ADJUST) {
                self.adjust(board, turn, moved_squares(mv), &mut out);
            }
        }
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
                if noisy {
                    self.noisy_normal(pos, piece, landed, from, to, capture, &mut out);
                } else {
                    out.push(SensorStep::Lift(from));
                    out.push(SensorStep::Place(to, landed));
                }
            }
            Move::EnPassant { from, to } => {
                let victim = Square::from_coords(to.file(), from.rank());
                let pawn = Role::Pawn.of(turn);
                if noisy {
                    self.noisy_en_passant(pawn, from, to, victim, &mut out);
                } else {
                    out.push(SensorStep::Lift(from));
                    out.push(SensorStep::Lift(victim));
                    out.push(SensorStep::Place(to, pawn));
                }
            }
            Move::Castle { king, rook } => {
                let side = if rook.file() > king.file() {
                    CastlingSide::KingSide
                } else {
                    CastlingSide::QueenSide
                };
                let king_to = side.king_to(turn);
                let rook_to = side.rook_to(turn);
                if noisy {
                    self.noisy_castle(turn, king, rook, king_to, rook_to, &mut out);
                } else {
                    out.push(SensorStep::Lift(king));
                    out.push(SensorStep::Lift(rook));
                    out.push(SensorStep::Place(king_to, Role::King.of(turn)));
                    out.push(SensorStep::Place(rook_to, Role::Rook.of(turn)));
                }
            }
            Move::Put { role, to } => out.push(SensorStep::Place(to, role.of(turn))),
        }
        if self.clock {
            if noisy {
                out.push(SensorStep::Pause(self.rng.random_range(80..600)));
            }
            out.push(SensorStep::Press);
        }
        if noisy && self.rng.random_bool(P_ADJUST) {
            // Adjusting after the press: the board is the one after the move.
            let mut after = board.clone();
            for step in &out {
                step.apply(&mut after);
            }
            out.push(SensorStep::Pause(self.rng.random_range(100..800)));
            self.adjust(&after, turn, Bitboard::EMPTY, &mut out);
        }
        out
    }

    /// The steps for `mv` answered at once by `reply` (legal after `mv`): the reply's first
    /// lift is read before the move's last placement, as a quick reply in blitz is. When the
    /// reply starts on the square the move lands on (a recapture), nothing can overtake and
    /// the two sequences simply follow each other.
    pub fn quick_reply(&mut self, pos: &Chess, mv: Move, reply: Move) -> Vec<SensorStep> {
        let mut first = self.steps(pos, mv);
        if !pos.is_legal(mv) {
            return first;
        }
        let mut after = pos.clone();
        after.play_unchecked(mv);
        let mut second = self.steps(&after, reply);
        // A quick reply has no thinking time.
        if let Some(SensorStep::Pause(_)) = second.first() {
            second[0] = SensorStep::Pause(self.rng.random_range(20..150));
        }
        let last_place = first
            .iter()
            .rposition(|s| matches!(s, SensorStep::Place(..)));
        let first_lift = second.iter().position(|s| matches!(s, SensorStep::Lift(_)));
        if let (Some(l), Some(f)) = (last_place, first_lift)
            && let SensorStep::Lift(q) = second[f]
        {
            // The lifted square must not be touched by the move from its last placement on.
            let touched = first[l..].iter().any(|s| match *s {
                SensorStep::Lift(sq) | SensorStep::Place(sq, _) => sq == q,
                _ => false,
            });
            if !touched {
                let lift = second.remove(f);
                first.insert(l, lift);
            }
        }
        first.extend(second);
        first
    }

    fn pause(&mut self, out: &mut Vec<SensorStep>) {
        out.push(SensorStep::Pause(self.rng.random_range(30..250)));
    }

    /// `beats`: the steps of each beat come together (one hand or both at once), and a human
    /// [`pause`](Self::pause) lies between one beat and the next.
    fn in_beats(&mut self, out: &mut Vec<SensorStep>, beats: &[&[SensorStep]]) {
        for (i, beat) in beats.iter().enumerate() {
            if i > 0 {
                self.pause(out);
            }
            out.extend_from_slice(beat);
        }
    }

    /// Lift one of `color`'s pieces (not on `avoid`) and put it back.
    fn adjust(&mut self, board: &Board, color: Color, avoid: Bitboard, out: &mut Vec<SensorStep>) {
        let candidates = board.by_color(color) & !avoid;
        let count = candidates.count();
        if count == 0 {
            return;
        }
        let pick = self.rng.random_range(0..count);
        if let Some(sq) = candidates.into_iter().nth(pick)
            && let Some(piece) = board.piece_at(sq)
        {
            self.in_beats(out, &[&[Lift(sq)], &[Place(sq, piece)]]);
            self.pause(out);
        }
    }

    /// Steps of a piece carried from `from` to `to`, optionally dragged over the empty squares
    /// between them. The final `Place` is included; `from` is lifted first.
    fn carry(
        &mut self,
        pos: &Chess,
        piece: Piece,
        landed: Piece,
        from: Square,
        to: Square,
    ) -> Vec<SensorStep> {
        let mut out = Vec::with_capacity(8);
        let path: Vec<Square> = if slides(piece.role) {
            shakmaty::attacks::between(from, to).into_iter().collect()
        } else {
            Vec::new()
        };
        // `between` lists squares in square order; put them in travel order.
        let path: Vec<Square> = if to < from {
            path.into_iter().rev().collect()
        } else {
            path
        };
        // Set down only where the piece may legally stand (a player does not leave a piece
        // on a square it cannot go to; that would be an illegal placement, not handling).
        let legal_stops: Vec<Square> = path
            .iter()
            .copied()
            .filter(|&sq| {
                pos.is_legal(Move::Normal {
                    role: piece.role,
                    from,
                    capture: None,
                    to: sq,
                    promotion: None,
                })
            })
            .collect();
        if !legal_stops.is_empty() && self.rng.random_bool(P_SET_DOWN) {
            let mid = legal_stops[self.rng.random_range(0..legal_stops.len())];
            out.push(SensorStep::Lift(from));
            self.pause(&mut out);
            out.push(SensorStep::Place(mid, piece));
            out.push(SensorStep::Pause(self.rng.random_range(400..1500)));
            out.push(SensorStep::Lift(mid));
            self.pause(&mut out);
            out.push(SensorStep::Place(to, landed));
            return out;
        }
        if !path.is_empty() && self.rng.random_bool(P_SLIDE) {
            // The scan sees the piece on most of the squares it passes over.
            let visible: Vec<Square> = path
                .into_iter()
                .filter(|_| self.rng.random_bool(P_SEEN))
                .collect();
            // A hesitation on one square of the slide, now and then.
            let hesitate = if !visible.is_empty() && self.rng.random_bool(P_SLIDE_PAUSE) {
                Some(visible[self.rng.random_range(0..visible.len())])
            } else {
                None
            };
            out.push(SensorStep::Lift(from));
            let mut previous: Option<Square> = None;
            for sq in visible.iter().copied().chain(std::iter::once(to)) {
                let this = if sq == to { landed } else { piece };
                let overlap = self.rng.random_bool(0.3);
                if let Some(prev) = previous
                    && !overlap
                {
                    out.push(SensorStep::Lift(prev));
                }
                out.push(SensorStep::Place(sq, this));
                if let Some(prev) = previous
                    && overlap
                {
                    out.push(SensorStep::Lift(prev));
                }
                previous = (sq != to).then_some(sq);
                if sq == to {
                    break;
                }
                let ms = if hesitate == Some(sq) {
                    self.rng.random_range(SLIDE_PAUSE_MS.0..SLIDE_PAUSE_MS.1)
                } else {
                    self.square_ms()
                };
                out.push(SensorStep::Pause(ms));
            }
            return out;
        }
        out.push(SensorStep::Lift(from));
        out.push(SensorStep::Pause(
            self.rng.random_range(TRAVEL_MS.0..TRAVEL_MS.1),
        ));
        out.push(SensorStep::Place(to, landed));
        out
    }

    /// Time for one square of a slide: 40-250 ms, skewed towards the quick end (the square
    /// of a uniform draw).
    fn square_ms(&mut self) -> u64 {
        let u: f64 = self.rng.random();
        SQUARE_MS.0 + ((SQUARE_MS.1 - SQUARE_MS.0) as f64 * u * u) as u64
    }

    #[allow(clippy::too_many_arguments)]
    fn noisy_normal(
        &mut self,
        pos: &Chess,
        piece: Piece,
        landed: Piece,
        from: Square,
        to: Square,
        capture: Option<Role>,
        out: &mut Vec<SensorStep>,
    ) {
        let board = pos.board();
        let promotion = piece != landed;
        // A promoting pawn may first be set on the last rank as a pawn, then swapped.
        let first = if promotion && self.rng.random_bool(0.5) {
            piece
        } else {
            landed
        };
        let victim_first = capture.is_some() && self.rng.random_bool(0.3);
        if victim_first {
            out.push(SensorStep::Lift(to));
            self.pause(out);
        }
        if !promotion && capture.is_none() && self.rng.random_bool(P_TO_FIRST) {
            // The scan reads the destination before the origin empties.
            out.push(SensorStep::Place(to, first));
            out.push(SensorStep::Lift(from));
        } else if capture.is_some() && !victim_first && self.rng.random_bool(0.3) {
            // Attacker lifted, victim lifted, attacker placed.
            self.in_beats(out, &[&[Lift(from)], &[Lift(to)], &[Place(to, first)]]);
        } else if capture.is_some() && !victim_first && self.rng.random_bool(P_TO_FIRST) {
            // Replaced in one update, read before the origin empties.
            out.push(SensorStep::Place(to, first));
            out.push(SensorStep::Lift(from));
        } else {
            let carried = self.carry(pos, piece, first, from, to);
            out.extend(carried);
        }
        if first != landed {
            out.push(SensorStep::Pause(self.rng.random_range(200..900)));
            if self.rng.random_bool(0.5) {
                out.push(SensorStep::Lift(to));
                self.pause(out);
            }
            out.push(SensorStep::Place(to, landed));
        }
        if let Some(role) = capture
            && self.rng.random_bool(P_TOUCH)
        {
            self.touch(board, role.of(!piece.color), from, to, out);
        }
    }

    /// The captured piece touches an empty square next to `to` on its way off the board.
    fn touch(
        &mut self,
        board: &Board,
        victim: Piece,
        from: Square,
        to: Square,
        out: &mut Vec<SensorStep>,
    ) {
        // Empty after the move: the origin, and whatever was empty before except `to`.
        let occupied_after = (board.occupied() & !Bitboard::from(from)) | Bitboard::from(to);
        let empty: Vec<Square> = (shakmaty::attacks::king_attacks(to) & !occupied_after)
            .into_iter()
            .collect();
        if empty.is_empty() {
            return;
        }
        let sq = empty[self.rng.random_range(0..empty.len())];
        out.push(SensorStep::Pause(self.rng.random_range(20..200)));
        out.push(SensorStep::Place(sq, victim));
        out.push(SensorStep::Pause(self.rng.random_range(20..150)));
        out.push(SensorStep::Lift(sq));
    }

    fn noisy_en_passant(
        &mut self,
        pawn: Piece,
        from: Square,
        to: Square,
        victim: Square,
        out: &mut Vec<SensorStep>,
    ) {
        let beats: &[&[SensorStep]] = match self.rng.random_range(0..4) {
            0 => &[&[Lift(victim)], &[Lift(from)], &[Place(to, pawn)]],
            1 => &[&[Lift(from)], &[Lift(victim)], &[Place(to, pawn)]],
            2 => &[&[Lift(from)], &[Place(to, pawn)], &[Lift(victim)]],
            // Read at the destination before the origin empties.
            _ => &[&[Place(to, pawn), Lift(from)], &[Lift(victim)]],
        };
        self.in_beats(out, beats);
    }

    fn noisy_castle(
        &mut self,
        turn: Color,
        king: Square,
        rook: Square,
        king_to: Square,
        rook_to: Square,
        out: &mut Vec<SensorStep>,
    ) {
        let k = Role::King.of(turn);
        let r = Role::Rook.of(turn);
        let overlap = [king_to, rook_to].contains(&king) || [king_to, rook_to].contains(&rook);
        let variant = if overlap {
            2
        } else {
            self.rng.random_range(0..4)
        };
        let (king_on, rook_on) = (Place(king_to, k), Place(rook_to, r));
        if variant == 0 {
            // King first, sometimes dragged over the square next to it.
            let between = shakmaty::attacks::between(king, king_to);
            let lift: &[SensorStep] = match between.first() {
                Some(mid) if between.count() == 1 && self.rng.random_bool(0.3) => {
                    &[Lift(king), Place(mid, k), Lift(mid)]
                }
                _ => &[Lift(king)],
            };
            return self.in_beats(out, &[lift, &[king_on], &[Lift(rook)], &[rook_on]]);
        }
        let beats: &[&[SensorStep]] = match variant {
            // Rook first.
            1 => &[&[Lift(rook)], &[rook_on], &[Lift(king)], &[king_on]],
            // Both lifted, king placed first.
            2 => &[&[Lift(king), Lift(rook)], &[king_on, rook_on]],
            // Both lifted (rook first), rook placed first.
            _ => &[&[Lift(rook), Lift(king)], &[rook_on, king_on]],
        };
        self.in_beats(out, beats);
    }
}

/// Roles a person may drag along the board surface over empty squares.
fn slides(role: Role) -> bool {
    matches!(role, Role::Rook | Role::Bishop | Role::Queen | Role::Pawn)
}

/// Every square a move touches (not to be used for adjustments during it).
fn moved_squares(mv: Move) -> Bitboard {
    match mv {
        Move::Normal { from, to, .. } => Bitboard::from(from) | Bitboard::from(to),
        Move::EnPassant { from, to } => {
            Bitboard::from(from)
                | Bitboard::from(to)
                | Bitboard::from(Square::from_coords(to.file(), from.rank()))
        }
        Move::Castle { king, rook } => Bitboard::from(king) | Bitboard::from(rook),
        Move::Put { to, .. } => Bitboard::from(to),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;
    use shakmaty::{CastlingMode, EnPassantMode};

    fn position(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap()
    }

    /// The move `uci` in `pos`.
    fn uci(pos: &Chess, uci: &str) -> Move {
        uci.parse::<shakmaty::uci::UciMove>()
            .unwrap()
            .to_move(pos)
            .unwrap()
    }

    fn replay(board: &Board, steps: &[SensorStep]) -> Board {
        let mut b = board.clone();
        for s in steps {
            s.apply(&mut b);
        }
        b
    }

    /// Every legal move of a set of positions, under many seeds, ends on the right board.
    #[test]
    fn every_move_ends_on_the_board_after_it() {
        let fens = [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
            "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N w - - 0 1",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/Pp2P3/2N2Q1p/1PPBBPPP/R3K2R b KQkq a3 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
        ];
        for fen in fens {
            let pos = position(fen);
            for mv in pos.legal_moves() {
                let after = pos.clone().play(mv).unwrap();
                for seed in 0..40 {
                    for noise in [Noise::Clean, Noise::Noisy] {
                        let steps = Handling::new(seed, noise).steps(&pos, mv);
                        assert_eq!(
                            &replay(pos.board(), &steps),
                            after.board(),
                            "{fen} {mv} seed {seed} {noise:?}: {steps:?}"
                        );
                        assert_eq!(steps.iter().filter(|s| **s == SensorStep::Press).count(), 1);
                    }
                }
            }
        }
    }

    #[test]
    fn quick_reply_overtakes_and_ends_on_the_right_board() {
        let pos = Chess::default();
        let e4 = uci(&pos, "e2e4");
        let mut after = pos.clone();
        after.play_unchecked(e4);
        for reply in after.legal_moves() {
            let mut end = after.clone();
            end.play_unchecked(reply);
            for seed in 0..20 {
                let steps = Handling::new(seed, Noise::Clean)
                    .with_clock(false)
                    .quick_reply(&pos, e4, reply);
                assert_eq!(&replay(pos.board(), &steps), end.board());
                assert_eq!(steps[0], SensorStep::Lift(Square::E2));
                assert!(matches!(steps[1], SensorStep::Lift(_)), "{steps:?}");
            }
        }
    }

    #[test]
    fn clean_is_lift_then_place() {
        let pos = Chess::default();
        let mv = uci(&pos, "g1f3");
        let steps = Handling::new(1, Noise::Clean).steps(&pos, mv);
        assert_eq!(
            steps,
            vec![
                SensorStep::Lift(Square::G1),
                SensorStep::Place(Square::F3, Piece::from_char('N').unwrap()),
                SensorStep::Press
            ]
        );
        let steps = Handling::new(1, Noise::Clean)
            .with_clock(false)
            .steps(&pos, mv);
        assert_eq!(steps.len(), 2);
    }

    #[test]
    fn same_seed_same_steps() {
        let pos = Chess::default();
        for mv in pos.legal_moves() {
            assert_eq!(
                Handling::new(7, Noise::Noisy).steps(&pos, mv),
                Handling::new(7, Noise::Noisy).steps(&pos, mv)
            );
        }
    }

    /// Over many seeds the noisy generator produces each documented variant.
    #[test]
    fn noisy_variants_all_occur() {
        let castle = position("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
        let oo = castle
            .legal_moves()
            .into_iter()
            .find(|m| m.castling_side() == Some(CastlingSide::KingSide))
            .unwrap();
        let (mut king_first, mut rook_first, mut both) = (false, false, false);
        for seed in 0..200 {
            let steps: Vec<_> = Handling::new(seed, Noise::Noisy)
                .steps(&castle, oo)
                .into_iter()
                .filter(|s| matches!(s, SensorStep::Lift(_) | SensorStep::Place(..)))
                .collect();
            let lifts: Vec<usize> = steps
                .iter()
                .enumerate()
                .filter(|(_, s)| matches!(s, SensorStep::Lift(Square::E1 | Square::H1)))
                .map(|(i, _)| i)
                .collect();
            match steps.first() {
                Some(SensorStep::Lift(Square::E1)) if lifts.get(1) == Some(&1) => both = true,
                Some(SensorStep::Lift(Square::H1)) if lifts.get(1) == Some(&1) => both = true,
                Some(SensorStep::Lift(Square::E1)) => king_first = true,
                Some(SensorStep::Lift(Square::H1)) => rook_first = true,
                _ => {}
            }
        }
        assert!(king_first && rook_first && both);

        // Captures: victim first, replaced in one update, touching a neighbour.
        let pos = position("4k3/8/8/4n3/8/2B5/8/4K3 w - - 0 1");
        let bxe5 = pos
            .legal_moves()
            .into_iter()
            .find(|m| m.to() == Square::E5)
            .unwrap();
        let (mut victim_first, mut replaced, mut touched, mut slid) = (false, false, false, false);
        for seed in 0..400 {
            let steps = Handling::new(seed, Noise::Noisy).steps(&pos, bxe5);
            let moves: Vec<_> = steps
                .iter()
                .filter(|s| matches!(s, SensorStep::Lift(_) | SensorStep::Place(..)))
                .collect();
            victim_first |= matches!(moves.first(), Some(SensorStep::Lift(Square::E5)));
            replaced |= !steps.contains(&SensorStep::Lift(Square::E5));
            touched |= steps
                .iter()
                .any(|s| matches!(s, SensorStep::Place(_, p) if p.color == Color::Black));
            slid |= steps
                .iter()
                .any(|s| matches!(s, SensorStep::Place(Square::D4, _)));
        }
        assert!(victim_first && replaced && touched && slid);

        // Promotion: pawn first set on the last rank, then swapped.
        let pos = position("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1");
        let b8n = pos
            .legal_moves()
            .into_iter()
            .find(|m| m.promotion() == Some(Role::Knight))
            .unwrap();
        let swapped = (0..100).any(|seed| {
            Handling::new(seed, Noise::Noisy)
                .steps(&pos, b8n)
                .contains(&SensorStep::Place(
                    Square::B8,
                    Piece::from_char('P').unwrap(),
                ))
        });
        assert!(swapped);

        // En passant: the victim lifted first and last.
        let pos = position("4k3/8/8/8/pP6/8/8/4K3 b - b3 0 1");
        let ep = pos.en_passant_moves()[0];
        assert_eq!(pos.ep_square(EnPassantMode::Legal), Some(Square::B3));
        let firsts: Vec<_> = (0..50)
            .map(|seed| {
                Handling::new(seed, Noise::Noisy)
                    .steps(&pos, ep)
                    .into_iter()
                    .find(|s| matches!(s, SensorStep::Lift(_) | SensorStep::Place(..)))
            })
            .collect();
        assert!(firsts.contains(&Some(SensorStep::Lift(Square::B4))));
        assert!(firsts.contains(&Some(SensorStep::Lift(Square::A4))));
    }
}
