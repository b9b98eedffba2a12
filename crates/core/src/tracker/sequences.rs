//! The legal sequences of moves from a known position to a sensed board, shortest first.
//!
//! A gap leaves the board a few plies ahead of the record. Nothing is guessed: the search
//! finds every sequence of the shortest length that reaches exactly the sensed board (move
//! orders count as different sequences: they are different games). When the clock says whose
//! turn it is and the shortest sequences leave the other side to move, the shortest
//! sequences of the clock's parity are added too (a bishop can reach a square in one move or
//! two): both stories are then candidates, and the arbiter decides.
//!
//! The depth-first search never enumerates blindly. A side's move puts exactly one of its
//! pieces on a new square (two when castling), so a position from which the board needs more
//! arrivals of a side's pieces than that side has plies left is abandoned; so is one that
//! needs more captures than the capturer has plies, more pawns than there are, or a pawn
//! that no pawn behind it could have become.

use shakmaty::{Board, Chess, Color, Move, Position, Role};

use super::search::diff;

/// The longest gap searched (plies).
pub const MAX_PLIES: usize = 6;
/// Positions visited before the search gives up (then the arbiter decides).
pub const NODE_BUDGET: u64 = 2_000_000;
/// Sequences kept as candidates (each followed as play goes on); more are only counted.
pub const MAX_KEPT: usize = 64;
/// Sequences listed in the `Gap` text.
pub const MAX_LISTED: usize = 8;

/// What the search found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The board is the position itself.
    Same,
    /// Exactly one sequence explains the board.
    Unique(Vec<Move>),
    /// Several do: the first [`MAX_KEPT`] of them, and how many there are in all.
    Several {
        sequences: Vec<Vec<Move>>,
        total: u64,
    },
    /// No legal sequence of at most [`MAX_PLIES`] plies reaches the board.
    Unreachable,
    /// The search ran out of its node budget before it could tell.
    GaveUp,
}

/// Explain `target` from `from` (see the module documentation). `to_move`: the side whose
/// clock runs, when known.
pub fn explain(from: &Chess, target: &Board, to_move: Option<Color>) -> Outcome {
    explain_within(from, target, to_move, &|_| true)
}

/// [`explain`] with only the sequence lengths `fits` allows (what the clock's times say, see
/// [`crate::recovery::clock`]). When no allowed length reaches the board, the clock is not
/// believed and every length is searched: a witness never makes the search worse.
pub fn explain_within(
    from: &Chess,
    target: &Board,
    to_move: Option<Color>,
    fits: &dyn Fn(usize) -> bool,
) -> Outcome {
    if from.board() == target {
        return Outcome::Same;
    }
    let narrowed = (1..=MAX_PLIES).any(|n| !fits(n));
    match lengths(from, target, to_move, fits) {
        Outcome::Unreachable if narrowed => lengths(from, target, to_move, &|_| true),
        found => found,
    }
}

fn lengths(
    from: &Chess,
    target: &Board,
    to_move: Option<Color>,
    fits: &dyn Fn(usize) -> bool,
) -> Outcome {
    let budget = NODE_BUDGET;
    let mut search = Dfs {
        target,
        nodes: 0,
        budget,
        path: Vec::new(),
        found: Vec::new(),
        total: 0,
    };
    let mut shortest = None;
    for plies in (1..=MAX_PLIES).filter(|&n| fits(n)) {
        search.run(from, plies);
        if search.nodes > budget {
            return Outcome::GaveUp;
        }
        if search.total > 0 {
            shortest = Some(plies);
            break;
        }
    }
    let Some(plies) = shortest else {
        return Outcome::Unreachable;
    };
    let mut sequences = std::mem::take(&mut search.found);
    let mut total = search.total;
    let turn_after = |n: usize| {
        if n.is_multiple_of(2) {
            from.turn()
        } else {
            !from.turn()
        }
    };
    if let Some(side) = to_move
        && turn_after(plies) != side
    {
        for longer in (plies + 1..=MAX_PLIES).step_by(2).filter(|&n| fits(n)) {
            search.total = 0;
            search.run(from, longer);
            if search.nodes > budget {
                return Outcome::GaveUp;
            }
            if search.total > 0 {
                total += search.total;
                let room = MAX_KEPT.saturating_sub(sequences.len());
                sequences.extend(search.found.drain(..).take(room));
                break;
            }
        }
    }
    if total == 1 {
        Outcome::Unique(sequences.remove(0))
    } else {
        Outcome::Several { sequences, total }
    }
}

struct Dfs<'a> {
    target: &'a Board,
    nodes: u64,
    budget: u64,
    path: Vec<Move>,
    found: Vec<Vec<Move>>,
    total: u64,
}

impl Dfs<'_> {
    fn run(&mut self, from: &Chess, plies: usize) {
        self.found.clear();
        self.path.clear();
        self.visit(from, plies);
    }

    fn visit(&mut self, pos: &Chess, left: usize) {
        self.nodes += 1;
        if self.nodes > self.budget {
            return;
        }
        if left == 0 {
            if pos.board() == self.target {
                self.total += 1;
                if self.found.len() < MAX_KEPT {
                    self.found.push(self.path.clone());
                }
            }
            return;
        }
        if !feasible(pos, self.target, left) {
            return;
        }
        for m in pos.legal_moves() {
            let mut next = pos.clone();
            next.play_unchecked(m);
            self.path.push(m);
            self.visit(&next, left - 1);
            self.path.pop();
        }
    }
}

/// Whether some legal sequence of exactly `plies` plies from `from` ends in a position `leaf`
/// accepts, where `target` is meant to be that position with a move's pieces lifted (at most
/// [`LIFTED`]: a capture's two, castling's). `None`: the search gave up (nothing ruled out).
pub fn reaches_lifted(
    from: &Chess,
    target: &Board,
    plies: usize,
    leaf: &dyn Fn(&Chess) -> bool,
) -> Option<bool> {
    fn visit(
        pos: &Chess,
        target: &Board,
        left: usize,
        leaf: &dyn Fn(&Chess) -> bool,
        nodes: &mut u64,
    ) -> Option<bool> {
        *nodes += 1;
        if *nodes > NODE_BUDGET {
            return None;
        }
        if left == 0 {
            return Some(leaf(pos));
        }
        if !feasible_lifted(pos, target, left, LIFTED) {
            return Some(false);
        }
        for m in pos.legal_moves() {
            let mut next = pos.clone();
            next.play_unchecked(m);
            if visit(&next, target, left - 1, leaf, nodes)? {
                return Some(true);
            }
        }
        Some(false)
    }
    visit(from, target, plies, leaf, &mut 0)
}

/// The most pieces a move begun lifts off the board (a capture's mover and victim, castling's
/// king and rook).
pub const LIFTED: usize = 2;

/// Whether `target` can still be reached from `pos` in `left` plies (a necessary condition).
pub(super) fn feasible(pos: &Chess, target: &Board, left: usize) -> bool {
    feasible_lifted(pos, target, left, 0)
}

/// [`feasible`] for a `target` that may lack up to `lifted` pieces besides (held in a hand):
/// they leave their squares and disappear without a ply of the other side's.
fn feasible_lifted(pos: &Chess, target: &Board, left: usize, lifted: usize) -> bool {
    let board = pos.board();
    let changed = diff(board, target);
    let turn = pos.turn();
    for color in Color::ALL {
        let plies = if color == turn {
            left.div_ceil(2)
        } else {
            left / 2
        };
        let others = left - plies;
        let castle = usize::from(pos.castles().has_color(color));
        // Each move of `color` lands one of its pieces on a square (castling: two).
        let arrivals = (target.by_color(color) & changed).count();
        if arrivals > plies + castle.min(plies) {
            return false;
        }
        // Each of its pieces that must leave a square moves away or is captured.
        let departures = (board.by_color(color) & changed).count();
        if departures > plies + castle.min(plies) + others + lifted {
            return false;
        }
        // Pieces only disappear (captured by the other side's moves); pawns only decrease.
        let now = board.by_color(color).count();
        let then = target.by_color(color).count();
        if then > now || now - then > others + lifted {
            return false;
        }
        let pawns = |b: &Board| (b.by_color(color) & b.by_role(Role::Pawn)).count();
        if pawns(target) > pawns(board) {
            return false;
        }
        // Pawns only go forward: a pawn on a new square came from a square behind it that
        // it left, at most one file aside per rank (captures).
        let pawn = Role::Pawn.of(color);
        let (now_pawns, then_pawns) = (board.by_piece(pawn), target.by_piece(pawn));
        let left_behind = now_pawns & !then_pawns;
        for sq in then_pawns & !now_pawns {
            let reachable = left_behind.into_iter().any(|p| {
                let ahead = match color {
                    Color::White => i32::from(sq.rank()) - i32::from(p.rank()),
                    Color::Black => i32::from(p.rank()) - i32::from(sq.rank()),
                };
                ahead > 0 && (i32::from(sq.file()) - i32::from(p.file())).abs() <= ahead
            });
            if !reachable {
                return false;
            }
        }
        // A promotion needs a pawn move; other pieces can only be more by promotions.
        let pieces = |b: &Board| (b.by_color(color) & !b.by_role(Role::Pawn)).count();
        if pieces(target) > pieces(board) + (pawns(board) - pawns(target)).min(plies) {
            return false;
        }
    }
    true
}

/// The board came back to `from` itself after a gap whose first reading was `through`
/// (a repetition: Nb2 Rb4 while unplugged, then Nd3 Rc4): the sequences from `from` through
/// `through` and back to `target`, each stage as [`explain`] finds it. `Same` when `through`
/// is `from` or explains nothing (the board decides then, as for any still board).
pub fn explain_through(from: &Chess, through: &Board, target: &Board) -> Outcome {
    let firsts = match explain(from, through, None) {
        Outcome::Unique(s) => vec![s],
        Outcome::Several { sequences, .. } => sequences,
        Outcome::GaveUp => return Outcome::GaveUp,
        Outcome::Same | Outcome::Unreachable => return Outcome::Same,
    };
    let mut found = Vec::new();
    let mut total = 0u64;
    for first in firsts {
        let mut pos = from.clone();
        for &m in &first {
            pos.play_unchecked(m);
        }
        let seconds = match explain(&pos, target, None) {
            Outcome::Unique(s) => vec![s],
            Outcome::Several {
                sequences,
                total: t,
            } => {
                total += t.saturating_sub(sequences.len() as u64);
                sequences
            }
            Outcome::GaveUp => return Outcome::GaveUp,
            Outcome::Same | Outcome::Unreachable => continue,
        };
        for second in seconds {
            total += 1;
            if found.len() < MAX_KEPT {
                found.push([first.clone(), second].concat());
            }
        }
    }
    match total {
        0 => Outcome::Same,
        1 => Outcome::Unique(found.remove(0)),
        _ => Outcome::Several {
            sequences: found,
            total,
        },
    }
}

/// SAN of a sequence played from `from`, space-separated ("Nf3 Nc6 Bc4").
pub fn san_line(from: &Chess, moves: &[Move]) -> String {
    let mut pos = from.clone();
    let mut out = Vec::with_capacity(moves.len());
    for &m in moves {
        out.push(shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string());
    }
    out.join(" ")
}

/// UCI of a sequence ("g1f3 b8c6 f1c4").
pub fn uci_line(moves: &[Move]) -> String {
    moves
        .iter()
        .map(|m| {
            shakmaty::uci::UciMove::from_move(*m, shakmaty::CastlingMode::Standard).to_string()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::san::San;

    fn play(pos: &Chess, sans: &str) -> Chess {
        let mut p = pos.clone();
        for s in sans.split_whitespace() {
            let m = s.parse::<San>().unwrap().to_move(&p).unwrap();
            p.play_unchecked(m);
        }
        p
    }

    #[test]
    fn unique_several_and_unreachable() {
        let start = play(&Chess::default(), "e4");
        let target = play(&start, "d5 exd5 Qxd5");
        match explain(&start, target.board(), None) {
            Outcome::Unique(line) => assert_eq!(san_line(&start, &line), "d5 exd5 Qxd5"),
            other => panic!("{other:?}"),
        }
        let start = play(&Chess::default(), "e4 e5");
        let target = play(&start, "Nf3 Nc6 Bc4");
        match explain(&start, target.board(), Some(Color::Black)) {
            Outcome::Several { sequences, total } => {
                assert_eq!(total, 2);
                let lines: Vec<String> = sequences.iter().map(|s| san_line(&start, s)).collect();
                assert!(lines.contains(&"Nf3 Nc6 Bc4".to_string()), "{lines:?}");
                assert!(lines.contains(&"Bc4 Nc6 Nf3".to_string()), "{lines:?}");
            }
            other => panic!("{other:?}"),
        }
        // Two white queens out of nowhere.
        let mut board = start.board().clone();
        board.set_piece_at(shakmaty::Square::D4, Role::Queen.of(Color::White));
        assert_eq!(explain(&start, &board, None), Outcome::Unreachable);
        assert_eq!(explain(&start, start.board(), None), Outcome::Same);
    }

    #[test]
    fn the_clock_adds_the_other_parity() {
        // After 1. e4 e5 the board shows only Bc4 more: one ply, Black to move. White's clock
        // running says an even number: Bf1-e2-c4 with a black move and back is then a story
        // too, so the arbiter decides; without the clock the one ply stands alone.
        let start = play(&Chess::default(), "e4 e5");
        let target = play(&start, "Bc4");
        match explain(&start, target.board(), None) {
            Outcome::Unique(line) => assert_eq!(san_line(&start, &line), "Bc4"),
            other => panic!("{other:?}"),
        }
        match explain(&start, target.board(), Some(Color::Black)) {
            Outcome::Unique(line) => assert_eq!(san_line(&start, &line), "Bc4"),
            other => panic!("{other:?}"),
        }
        match explain(&start, target.board(), Some(Color::White)) {
            Outcome::Several { sequences, total } => {
                assert_eq!(san_line(&start, &sequences[0]), "Bc4");
                assert!(total > 2, "{total}");
                assert!(sequences[1..].iter().all(|s| s.len() == 4));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_repetition_after_a_gap_is_found_through_its_first_reading() {
        let start = play(&Chess::default(), "e4 e5 Nf3 Nc6");
        let through = play(&start, "Ng1");
        // Back on f3 with Black's knight out: not the start board; then Nb8 ... back again.
        match explain_through(&start, through.board(), start.board()) {
            Outcome::Several { sequences, total } => {
                assert!(total >= 2, "{total}");
                let lines: Vec<String> = sequences.iter().map(|s| san_line(&start, s)).collect();
                assert!(lines.contains(&"Ng1 Nb8 Nf3 Nc6".to_string()), "{lines:?}");
                assert!(sequences.iter().all(|s| s.len() == 4));
            }
            other => panic!("{other:?}"),
        }
        // A first reading equal to the position says nothing.
        assert_eq!(
            explain_through(&start, start.board(), start.board()),
            Outcome::Same
        );
    }

    #[test]
    fn six_quiet_plies_are_found_within_budget() {
        let start = play(&Chess::default(), "e4 e5 Nf3 Nc6");
        let target = play(&start, "Bb5 a6 Ba4 Nf6 O-O Be7");
        match explain(&start, target.board(), None) {
            Outcome::Several { sequences, total } => {
                assert!(total >= 2);
                assert!(sequences.iter().all(|s| s.len() == 6));
            }
            Outcome::Unique(s) => assert_eq!(s.len(), 6),
            other => panic!("{other:?}"),
        }
    }
}
