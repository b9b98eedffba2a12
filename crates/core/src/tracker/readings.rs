//! What the sensors read since the last final position: every board, one per change, in the
//! order read. The sensors report every change, so while this log is complete it tells which
//! of the legal sequences to the board was played: each move's piece was seen set down on
//! the square it moved to, one move after the other ([`Readings::witness`]). A board the
//! tracker cannot explain live is re-derived from the last final position through them
//! (see `Tracker::recover`), with the same search a gap uses ([`super::sequences`]).

use std::collections::VecDeque;

use shakmaty::{
    Bitboard, Board, CastlingSide, Chess, Move, Piece, Position, Role, Square, attacks,
};

/// Readings kept at most; past this the oldest go and the log is no longer complete (a
/// board that stays unexplained this long is far beyond what a live search can reach).
pub const MAX_READINGS: usize = 600;
/// Stories kept at most: more than one is already too many to pick from.
const MAX_STORIES: usize = 8;

/// The boards read since the anchor (the last final position), oldest first.
#[derive(Debug, Clone, Default)]
pub(super) struct Readings {
    boards: VecDeque<Board>,
    /// The index, counted since the tracker began, of `boards[0]`.
    first: u64,
    /// Readings were dropped past [`MAX_READINGS`]: the log does not hold every change.
    overflowed: bool,
}

impl Readings {
    /// A new reading (the sensed board after a change).
    pub(super) fn push(&mut self, board: Board) {
        if self.boards.len() >= MAX_READINGS {
            self.boards.pop_front();
            self.first += 1;
            self.overflowed = true;
        }
        self.boards.push_back(board);
    }

    /// The index of the last reading (0 before any).
    pub(super) fn last_index(&self) -> u64 {
        (self.first + self.boards.len() as u64).saturating_sub(1)
    }

    /// Forget the readings before `index` (the anchor moved on to a position shown then).
    pub(super) fn keep_from(&mut self, index: u64) {
        while self.first < index && self.boards.len() > 1 {
            self.boards.pop_front();
            self.first += 1;
        }
        if self.first >= index {
            self.overflowed = false;
        }
    }

    /// Start again from `board` (a new game, a set position, another orientation).
    pub(super) fn restart(&mut self, board: Board) {
        self.first = self.last_index() + 1;
        self.boards.clear();
        self.boards.push_back(board);
        self.overflowed = false;
    }

    /// Whether the log holds every change since the anchor.
    pub(super) fn complete(&self) -> bool {
        !self.overflowed
    }

    /// Whether the readings show `moves`, played from `from`, being made: each move's piece
    /// (the last of a castling's two) seen being set down on its destination, each move
    /// after the one before it. A hand still moving while the reply is made (a slide, a
    /// captured piece touching a square on its way off) sets pieces down out of that order,
    /// so such a story is not taken for play.
    pub(super) fn witness(&self, from: &Chess, moves: &[Move]) -> bool {
        self.set_downs(from, moves).is_some()
    }

    /// For each of `moves` played from `from`, the reading in which its piece was set down
    /// (see [`Readings::witness`]); `None` if the readings do not show them so.
    fn set_downs(&self, from: &Chess, moves: &[Move]) -> Option<Vec<usize>> {
        let mut pos = from.clone();
        let mut next = 0usize;
        let mut at = Vec::with_capacity(moves.len());
        for &m in moves {
            let k = self.set_down(&pos, m, next)?;
            at.push(k);
            next = k + 1;
            pos.play_unchecked(m);
        }
        Some(at)
    }

    /// Whether every reading fits the story `moves` (witnessed from `from`) at the time it
    /// was read: each piece seen stands where the story has one like it then (before the
    /// move last set down, after it, or after the one being made), on the line of the move
    /// last set down or of the one being made, or next to where either captured it. A
    /// repetition can put a piece on a square in some position of a story without it being
    /// there when it was seen: Ra4-a5, ...Qb7, Ra5-a4 has the rook on a6 in no position of
    /// its time, though the board showed it there until the queen was set down (it was
    /// Ra4-a6, ...Qb7, Ra6-a4, set down on a5 on the way); [`Readings::misfit`] cannot tell.
    pub(super) fn fits_in_time(&self, from: &Chess, moves: &[Move]) -> bool {
        let Some(at) = self.set_downs(from, moves) else {
            return false;
        };
        let mut positions = vec![from.clone()];
        for &m in moves {
            let mut next = positions[positions.len() - 1].clone();
            next.play_unchecked(m);
            positions.push(next);
        }
        // What the move `i` (0-based) allows besides the positions: its line, its victim.
        let allowed = |i: usize, sq: Square, piece: Option<Piece>| {
            moves.get(i).zip(positions.get(i)).is_some_and(|(&m, pos)| {
                passing(pos, m).any(|(line, p)| line.contains(sq) && piece == Some(p))
            })
        };
        self.boards.iter().enumerate().all(|(j, reading)| {
            // Moves set down by this reading.
            let done = at.iter().filter(|&&k| k <= j).count();
            reading.occupied().into_iter().all(|sq| {
                let piece = reading.piece_at(sq);
                let around = done.saturating_sub(1)..=(done + 1).min(moves.len());
                around
                    .clone()
                    .any(|i| positions[i].board().piece_at(sq) == piece)
                    || (done > 0 && allowed(done - 1, sq, piece))
                    || allowed(done, sq, piece)
            })
        })
    }

    /// Whether the story's last move may be a capture still on its way (see
    /// [`super::hold::capture_passing_over`]): after the move before it was set down, that
    /// move's piece was seen on a square the capture could be going to instead.
    pub(super) fn last_capture_may_go_on(&self, from: &Chess, moves: &[Move]) -> bool {
        let [.., a, b] = moves else {
            return false;
        };
        let mut pos = from.clone();
        let mut next = 0usize;
        for &m in &moves[..moves.len() - 2] {
            if let Some(k) = self.set_down(&pos, m, next) {
                next = k + 1;
            }
            pos.play_unchecked(m);
        }
        let Some(k) = self.set_down(&pos, *a, next) else {
            return false;
        };
        let piece = a.role().of(pos.turn());
        super::hold::capture_passing_over(&pos, *a, *b)
            .into_iter()
            .any(|sq| {
                self.boards
                    .iter()
                    .skip(k + 1)
                    .any(|r| r.piece_at(sq) == Some(piece))
            })
    }

    /// The legal sequences from `from` to `target` that the readings show being made (see
    /// [`Readings::witness`]), of the shortest length found and one ply longer (no clock says
    /// whose turn it is), at most `max_plies` long. The readings guide the search: only a
    /// move whose piece was set down after the move before it is tried, so it stays cheap
    /// at any depth.
    pub(super) fn witnessed_sequences(
        &self,
        from: &Chess,
        target: &Board,
        max_plies: usize,
    ) -> Vec<Vec<Move>> {
        self.sequences_where(from, target, max_plies, &|_| true)
    }

    /// [`Readings::witnessed_sequences`], counting first only the sequences that fit every
    /// reading ([`Readings::misfit`]), and all of them only when none does. A shorter story
    /// that skips moves the readings show (the queen seen standing on e8 on her way b8-e8-d8,
    /// read as Qb8-d8) is then not the shortest: the record it would cut short is.
    pub(super) fn fitting_sequences(
        &self,
        from: &Chess,
        target: &Board,
        max_plies: usize,
    ) -> Vec<Vec<Move>> {
        let fitting =
            self.sequences_where(from, target, max_plies, &|s| self.misfit(from, s).is_some());
        if fitting.is_empty() {
            self.witnessed_sequences(from, target, max_plies)
        } else {
            fitting
        }
    }

    fn sequences_where(
        &self,
        from: &Chess,
        target: &Board,
        max_plies: usize,
        accept: &dyn Fn(&[Move]) -> bool,
    ) -> Vec<Vec<Move>> {
        let mut found = Vec::new();
        let mut shortest = None;
        for plies in 1..=max_plies {
            if shortest.is_some_and(|s| plies > s + 1) {
                break;
            }
            let before = found.len();
            let goal = Goal { target, accept };
            self.visit(from, &goal, plies, 0, &mut Vec::new(), &mut found);
            if found.len() > before {
                shortest.get_or_insert(plies);
            }
        }
        found
    }

    /// How well the readings fit the story `moves` from `from`: `None` when a reading shows a
    /// piece where the story never puts one like it (`from` or after any of its moves), nor
    /// on the line a sliding piece of the story travelled, nor next to where the story
    /// captured it (a captured piece touching a square on its way off); otherwise how many
    /// pieces seen needed those allowances. A pawn seen on f5 is not part of f7-f6, e5xf6
    /// unless the captured pawn touched f5; f7-f5, e5xf6 e.p. explains it outright.
    pub(super) fn misfit(&self, from: &Chess, moves: &[Move]) -> Option<usize> {
        let mut boards = vec![from.board().clone()];
        let mut travelled: Vec<(Bitboard, Piece)> = Vec::new();
        let mut pos = from.clone();
        for &m in moves {
            travelled.extend(passing(&pos, m));
            pos.play_unchecked(m);
            boards.push(pos.board().clone());
        }
        let mut allowances = 0;
        for reading in &self.boards {
            for sq in reading.occupied() {
                let piece = reading.piece_at(sq);
                if boards.iter().any(|b| b.piece_at(sq) == piece) {
                    continue;
                }
                if !travelled
                    .iter()
                    .any(|&(line, p)| line.contains(sq) && piece == Some(p))
                {
                    return None;
                }
                allowances += 1;
            }
        }
        Some(allowances)
    }

    fn visit(
        &self,
        pos: &Chess,
        goal: &Goal,
        left: usize,
        next: usize,
        path: &mut Vec<Move>,
        found: &mut Vec<Vec<Move>>,
    ) {
        if found.len() >= MAX_STORIES {
            return;
        }
        if left == 0 {
            if pos.board() == goal.target && (goal.accept)(path) {
                found.push(path.clone());
            }
            return;
        }
        if !super::sequences::feasible(pos, goal.target, left) {
            return;
        }
        for m in pos.legal_moves() {
            let Some(k) = self.set_down(pos, m, next) else {
                continue;
            };
            let mut after = pos.clone();
            after.play_unchecked(m);
            path.push(m);
            self.visit(&after, goal, left - 1, k + 1, path, found);
            path.pop();
        }
    }

    /// The first reading from `next` on in which `m`'s piece (the last of a castling's two)
    /// was set down on its destination: shown there and not in the reading before (the
    /// first reading kept may have been set down on just before it).
    fn set_down(&self, pos: &Chess, m: Move, next: usize) -> Option<usize> {
        let landed = landing(pos, m);
        let shows = |k: usize| {
            landed
                .iter()
                .all(|&(sq, p)| self.boards[k].piece_at(sq) == Some(p))
        };
        (next..self.boards.len()).find(|&k| shows(k) && (k == 0 || !shows(k - 1)))
    }
}

/// What a search of the readings looks for: sequences reaching `target` that `accept` takes.
struct Goal<'a> {
    target: &'a Board,
    accept: &'a dyn Fn(&[Move]) -> bool,
}

/// The pieces a move leaves on the squares it moves to.
fn landing(pos: &Chess, m: Move) -> Vec<(Square, Piece)> {
    let turn = pos.turn();
    match m {
        Move::Normal {
            role,
            to,
            promotion,
            ..
        } => vec![(to, promotion.unwrap_or(role).of(turn))],
        Move::EnPassant { to, .. } => vec![(to, Role::Pawn.of(turn))],
        Move::Castle { king, rook } => {
            let side = if rook.file() > king.file() {
                CastlingSide::KingSide
            } else {
                CastlingSide::QueenSide
            };
            vec![
                (side.king_to(turn), Role::King.of(turn)),
                (side.rook_to(turn), Role::Rook.of(turn)),
            ]
        }
        Move::Put { role, to } => vec![(to, role.of(turn))],
    }
}

/// Where a reading may show a piece of the move `m` (played in `pos`) that no position of the
/// story has there: the mover on the line it travelled (a slide set down on its way) and the
/// victim next to the square it was taken on (touching a square on its way off).
fn passing(pos: &Chess, m: Move) -> impl Iterator<Item = (Bitboard, Piece)> {
    let turn = pos.turn();
    let line = m.from().map(|origin| {
        (
            attacks::between(origin, m.to()) | Bitboard::from(m.to()),
            m.role().of(turn),
        )
    });
    let victim = m
        .capture()
        .map(|v| (attacks::king_attacks(m.to()), v.of(!turn)));
    line.into_iter().chain(victim)
}
