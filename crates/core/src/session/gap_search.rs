//! The gap's search: the legal sequences from the last known position to the board as read,
//! cut by the clock's witness and the board's memory, and what follows when it finds one,
//! several (the arbiter chooses) or none (play continues from the board in a new segment).

use shakmaty::{Board, Chess, Color, Move, Position};

use super::gap::*;
use super::recovery::{Candidate, Finding, Memory, Stage, listed, plies};
use super::{Event, Fact, Session};
use crate::arbiter::clock::Display;
use crate::board::Placement;
use crate::board_input::SquareContent;
use crate::gap::{clock, proof, search};
use crate::tracker::Tracker;
use crate::vocab::Millis;

impl Session {
    /// How long the board as sensed must stand still to count as a position (see
    /// [`FEWER_PIECES_SETTLED_MS`]).
    pub(super) fn settle_ms(&self) -> Millis {
        let fewer = self.gap.sensed().is_some_and(|f| {
            self.board_of(&f).occupied().count()
                < self.tracker.position().board().occupied().count()
        });
        if fewer {
            FEWER_PIECES_SETTLED_MS
        } else {
            SETTLED_MS
        }
    }

    /// Whether `board` is `from` itself or `from` with a move in progress: pieces lifted —
    /// one, or those one legal move takes up (a capture, castling) — or lifted pieces no
    /// legal sequence explains. An exchange on one square (dxc5 bxc5) also leaves only
    /// pieces missing, d6 and b4, which no one move takes up: a gap.
    pub(super) fn move_in_progress(&self, from: &Chess, board: &Board) -> bool {
        self.one_move_begun(from, board)
            || lifted_only(from.board(), board)
                && matches!(
                    search::explain(from, board, None),
                    search::Outcome::Unreachable
                )
    }

    /// Whether `board` is `from` itself or `from` with the pieces of one legal move lifted
    /// (one piece, a capture's two, castling's): the next move begun, nothing more.
    pub(super) fn one_move_begun(&self, from: &Chess, board: &Board) -> bool {
        if from.board() == board {
            return true;
        }
        if !lifted_only(from.board(), board) {
            return false;
        }
        let lifted = from.board().occupied() & !board.occupied();
        lifted.count() <= 1
            || from.legal_moves().iter().any(|m| {
                let mut touched = shakmaty::Bitboard::EMPTY;
                touched.add(m.from().unwrap_or(m.to()));
                touched.add(m.to());
                if let Move::EnPassant { from, to } = m {
                    touched.add(shakmaty::Square::from_coords(to.file(), from.rank()));
                }
                (lifted & !touched).is_empty()
            })
    }

    /// Whether `board` can follow from `from`: the same (or a move in progress), or reached by
    /// a legal sequence the search finds (or cannot rule out).
    pub(super) fn board_follows(&self, from: &Chess, board: &Board) -> bool {
        lifted_only(from.board(), board)
            || !matches!(
                search::explain(from, board, None),
                search::Outcome::Unreachable
            )
    }

    /// The clock's readings around the gap, when both are known (see [`clock::Witness`]).
    pub(super) fn clock_witness(&self) -> Option<clock::Witness> {
        if self.config().gap_without_clock_witness {
            return None;
        }
        let g = self.gap.state.gap()?;
        let before = g.clock_before?;
        let (t, clock_at) = g.clock.as_ref()?;
        if !t.status.connected || *clock_at <= before.at {
            return None;
        }
        let mut times = [0, 0];
        for (display, time) in [(Display::Left, t.left), (Display::Right, t.right)] {
            let color = self.arbiter.clock().color_of(display);
            times[usize::from(color == Color::Black)] = time.as_millis();
        }
        let completed = (self.tracker.moves().len() / 2) as u32;
        let increment_ms = self
            .arbiter
            .config()
            .time_control
            .as_ref()
            .map(|tc| tc.increment_after(completed))
            .or(self.arbiter.clock().observed_increment_ms())
            .unwrap_or(0);
        Some(clock::Witness {
            before,
            after: clock::Reading {
                times,
                running: t.status.running,
                at: *clock_at,
            },
            increment_ms,
        })
    }

    /// The side whose clock runs, from the held reading.
    pub(super) fn clock_side(&self) -> Option<Color> {
        let (t, _) = self.gap.state.gap()?.clock.as_ref()?;
        if !t.status.connected || !t.status.running {
            return None;
        }
        let display = if t.status.left_running != t.status.right_running {
            if t.status.left_running {
                Display::Left
            } else {
                Display::Right
            }
        } else if t.status.lever_left_down {
            Display::Right
        } else {
            Display::Left
        };
        Some(self.arbiter.clock().color_of(display))
    }

    /// Search the board as sensed; `position`: the reading is known to be a position (a
    /// press, a settled reading), so what is found may be acted on.
    pub(super) fn gap_search(&mut self, now: Millis, out: &mut Vec<Event>, position: bool) {
        let Some(g) = self.gap.state.gap_mut() else {
            return;
        };
        let Some(fields) = g.sensed else {
            return;
        };
        let first_read = g.first_read;
        let last_change = g.last_change;
        let (start_ply, first) = g.start;
        if position && let Stage::Search { trusted_at, .. } = &mut g.stage {
            *trusted_at = Some(last_change);
        }
        let board = self.board_of(&fields);
        let from = self.tracker.position().clone();
        let witness = self.clock_witness();
        // The clock counts the plies since the gap began: those published since (from the
        // board's memory, by the arbiter) count too.
        let done = self.tracker.moves().len().checked_sub(start_ply);
        let fits = |n: usize| match (witness, done) {
            (Some(w), Some(done)) => w.allows(first, done + n),
            (Some(_), None) => true,
            (None, _) => true,
        };
        let most = witness
            .and_then(|w| w.most_plies(first))
            .zip(done)
            .map(|(most, done)| most.saturating_sub(done));
        let mut outcome = search::explain_within(&from, &board, self.clock_side(), &fits);
        let first_board = first_read.map(|f| self.board_of(&f));
        if outcome == search::Outcome::Same
            && let Some(first) = &first_board
        {
            // Back to the known position, but the first reading after the gap was another:
            // moves were made and came back (a repetition), not none.
            outcome = search::explain_through(&from, first, &board);
        }
        if let Some(first) = &first_board {
            outcome = through_first_read(&from, first, &board, outcome);
        }
        // The memory, if it comes at once, has the press times too.
        let wait_for_memory = matches!(
            self.gap.memory_mut().map(|m| *m),
            Some(Memory::Asked { at, .. }) if now.saturating_sub(at) < MEMORY_GRACE_MS
        );
        // A single sequence is published only when the evidence proves it (see
        // `gap::proof`): a gap may have held more plies than the shortest story.
        let doubt = match &outcome {
            search::Outcome::Unique(moves) if position => {
                match proof::judge(&from, &board, moves, most, &fits) {
                    proof::Verdict::Proven => None,
                    doubt => Some(doubt),
                }
            }
            _ => None,
        };
        match outcome {
            search::Outcome::Same => self.close_gap(now, out),
            search::Outcome::Unique(moves) if !position => {
                self.gap.found(Finding::Unique {
                    plies: moves.len(),
                    line: search::san_line(&from, &moves),
                });
            }
            _ if !position => {}
            search::Outcome::Unique(moves) if let Some(doubt) = doubt => {
                self.gap_unproven(&from, moves, doubt, fields, now);
            }
            search::Outcome::Unique(_) if wait_for_memory => {
                if let Some(Memory::Asked { held_unique, .. }) = self.gap.memory_mut() {
                    *held_unique = true;
                }
            }
            search::Outcome::Unique(moves) => {
                self.report(Fact::RecoveredUnique {
                    line: search::san_line(&from, &moves),
                });
                let note = format!(
                    "{} made {}, recovered: the only legal sequence to the board",
                    plies(moves.len()),
                    self.gap.cause()
                );
                self.replay_moves(&moves, &[], [None, None], now, out);
                self.arbiter.note(note);
                self.close_gap(now, out);
            }
            search::Outcome::Several { sequences, total } => {
                let listed = listed(&from, &sequences);
                let candidates = sequences
                    .into_iter()
                    .map(|moves| Candidate {
                        shadow: self.shadow_after(&moves, &fields, now),
                        moves,
                    })
                    .collect();
                self.enter_choose(fields, candidates, Some(total), listed, None);
                self.report(Fact::Ambiguous {
                    gap: self.gap.text(),
                });
            }
            search::Outcome::GaveUp => {
                self.enter_choose(fields, Vec::new(), None, Vec::new(), None);
                self.report(Fact::SearchGaveUp {
                    gap: self.gap.text(),
                });
            }
            // Only a still board or the scoresheets can tell now: in a scramble the board
            // never stands still, so the arbiter is asked at once, clearly.
            search::Outcome::Unreachable => self.gap.found(Finding::Unreachable),
        }
    }

    pub(super) fn enter_choose(
        &mut self,
        target: [SquareContent; 64],
        candidates: Vec<Candidate>,
        total: Option<u64>,
        listed: Vec<String>,
        doubt: Option<proof::Verdict>,
    ) {
        if let Some(g) = self.gap.state.gap_mut() {
            g.stage = Stage::Choose {
                target,
                candidates,
                total,
                listed,
                doubt,
            };
        }
    }

    /// One sequence reaches the board but the evidence does not prove it (`doubt`): the
    /// board's memory, when it may still come, has every change; else the arbiter is asked
    /// with the sequence listed (play going on meanwhile is followed from it).
    fn gap_unproven(
        &mut self,
        from: &Chess,
        moves: Vec<Move>,
        doubt: proof::Verdict,
        fields: [SquareContent; 64],
        now: Millis,
    ) {
        let line = search::san_line(from, &moves);
        if matches!(self.gap.memory_mut(), Some(Memory::Asked { .. })) {
            self.gap.found(Finding::Unproven {
                plies: moves.len(),
                line,
            });
            return;
        }
        let listed = listed(from, std::slice::from_ref(&moves));
        let candidates = vec![Candidate {
            shadow: self.shadow_after(&moves, &fields, now),
            moves,
        }];
        self.enter_choose(fields, candidates, Some(1), listed, Some(doubt));
        self.report(Fact::Unproven {
            gap: self.gap.text(),
        });
    }

    /// A tracker after `moves`, reading `fields` as the board now.
    pub(super) fn shadow_after(
        &self,
        moves: &[Move],
        fields: &[SquareContent; 64],
        now: Millis,
    ) -> Tracker {
        let mut shadow = self.tracker.clone();
        let o = self.orientation();
        for &m in moves {
            let mut next = shadow.position().clone();
            next.play_unchecked(m);
            let _ = shadow.on_board_dump(&Placement::from_board(next.board()).to_wire(o), now);
            // A story's move is complete (play went on after it): never held.
            let _ = shadow.release_held();
            if shadow.position() != &next {
                break;
            }
        }
        let _ = shadow.on_board_dump(fields, now);
        shadow
    }

    /// No legal sequence reaches the board and it stands still: continue from it.
    pub(super) fn gap_unreachable(&mut self, now: Millis, out: &mut Vec<Event>) {
        let note = format!(
            "moves were made {} that no legal sequence of up to {} plies explains",
            self.gap.cause(),
            search::MAX_PLIES
        );
        if self.continue_from_board(&note, now, out) {
            self.close_gap(now, out);
        } else {
            self.gap.found(Finding::NoPosition);
        }
    }

    /// Play continues from the board as it stands, in a new segment; no one is accused.
    /// Returns false when the board cannot be a position (pieces in hand: keep waiting).
    pub(super) fn continue_from_board(
        &mut self,
        note: &str,
        now: Millis,
        out: &mut Vec<Event>,
    ) -> bool {
        let Some(fields) = self.gap.sensed() else {
            return false;
        };
        let turn = self
            .clock_side()
            .unwrap_or_else(|| self.tracker.position().turn());
        let mut trial = self.tracker.clone();
        let _ = trial.on_board_dump(&fields, now);
        if trial.adopt_placement(turn).is_err() {
            return false;
        }
        let _ = self.tracker.on_board_dump(&fields, now);
        match self.tracker.adopt_placement(turn) {
            Ok(_) => {
                self.report(Fact::NewSegment {
                    note: note.to_owned(),
                });
                let ruled = self
                    .arbiter
                    .continue_after_gap(self.tracker.position().clone(), note);
                self.apply_arbiter(ruled, out);
                true
            }
            Err(_) => false,
        }
    }
}

/// Of several sequences to the board, only those that pass through the first whole board
/// read after the gap are the game: that board stood on the table. Plies made after it
/// (play resumed the moment the board was back: Bc4 while unplugged, then Nf6 Nc3) would
/// otherwise leave transpositions (Nc3 Nf6 Bc4) no later reading can rule out. Nothing
/// changes when the search kept only some of its sequences, or when none passes through
/// (the first board was read in the middle of a move).
pub(super) fn through_first_read(
    from: &Chess,
    first: &Board,
    board: &Board,
    outcome: search::Outcome,
) -> search::Outcome {
    let search::Outcome::Several { sequences, total } = outcome else {
        return outcome;
    };
    if first == board || first == from.board() || total != sequences.len() as u64 {
        return search::Outcome::Several { sequences, total };
    }
    let passes = |moves: &[Move]| {
        let mut pos = from.clone();
        moves.iter().any(|&m| {
            pos.play_unchecked(m);
            pos.board() == first
        })
    };
    let mut through: Vec<Vec<Move>> = sequences.iter().filter(|s| passes(s)).cloned().collect();
    match through.len() {
        0 => search::Outcome::Several { sequences, total },
        1 => search::Outcome::Unique(through.remove(0)),
        n => search::Outcome::Several {
            sequences: through,
            total: n as u64,
        },
    }
}

/// Whether the pawns of `board` can have come from those of `known`: each from its own pawn
/// of that side, ahead of it, a file aside per rank at most, and every file changed a capture
/// of one of the other side's pieces (which the board must be short of). A reading turned the
/// wrong way round mirrors the files too (a2 reads as h7), which takes captures nobody made.
pub(super) fn pawns_forward(known: &Board, board: &Board) -> bool {
    Color::ALL.into_iter().all(|color| {
        let pawn = shakmaty::Role::Pawn.of(color);
        let before: Vec<shakmaty::Square> = known.by_piece(pawn).into_iter().collect();
        let after: Vec<shakmaty::Square> = board.by_piece(pawn).into_iter().collect();
        let captured = known
            .by_color(!color)
            .count()
            .saturating_sub(board.by_color(!color).count());
        // The file changes of a pawn from `p` to `sq`, or `None` when it cannot get there.
        let shift = |p: shakmaty::Square, sq: shakmaty::Square| {
            let ahead = match color {
                Color::White => i32::from(sq.rank()) - i32::from(p.rank()),
                Color::Black => i32::from(p.rank()) - i32::from(sq.rank()),
            };
            let files = (i32::from(sq.file()) - i32::from(p.file())).abs();
            (ahead >= 0 && files <= ahead).then_some(files as usize)
        };
        // The fewest file changes that take distinct pawns of `known` (a bit set, at most
        // eight) to every pawn of `board`: a small assignment, by subsets.
        let unreachable = usize::MAX / 2;
        let mut best = vec![unreachable; 1 << before.len()];
        best[0] = 0;
        for (k, &sq) in after.iter().enumerate() {
            let mut next = vec![unreachable; best.len()];
            for used in 0..best.len() {
                if best[used] >= unreachable || (used as u32).count_ones() as usize != k {
                    continue;
                }
                for (j, &p) in before.iter().enumerate() {
                    if used & (1 << j) == 0
                        && let Some(files) = shift(p, sq)
                    {
                        let slot = &mut next[used | (1 << j)];
                        *slot = (*slot).min(best[used] + files);
                    }
                }
            }
            best = next;
        }
        best.iter().any(|&cost| cost <= captured)
    })
}

#[cfg(test)]
mod tests {
    use super::pawns_forward;
    use shakmaty::Board;

    fn board(fen: &str) -> Board {
        fen.parse().expect("board FEN")
    }

    #[test]
    fn the_turned_reading_of_a_board_with_pawns_on_one_wing_is_told_apart() {
        // Kings and pawns on the queenside; a3 played since.
        let known = board("4k3/pp6/8/8/8/8/PP6/4K3");
        let now = board("4k3/pp6/8/8/8/P7/1P6/4K3");
        let mut turned = now.clone();
        turned.rotate_180();
        assert!(pawns_forward(&known, &now));
        // Turned, the pawns stand on the kingside: files no capture changed.
        assert!(!pawns_forward(&known, &turned));
    }

    #[test]
    fn a_pawn_that_changed_file_needs_a_capture_the_board_shows() {
        let known = board("4k3/8/3n4/8/4P3/8/8/4K3");
        // exd5 took the knight: one file, one piece fewer.
        assert!(pawns_forward(&known, &board("4k3/8/8/3P4/8/8/8/4K3")));
        // The same file change with the knight still there: no capture made it.
        assert!(!pawns_forward(&known, &board("4k3/8/3n4/3P4/8/8/8/4K3")));
    }
}
