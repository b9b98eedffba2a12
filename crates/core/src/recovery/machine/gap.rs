//! The gap's own transitions, once its first whole board is read: the search, the memory's
//! answer, the arbiter's choice and the close. Part of the recovery machine (the table is in
//! `machine.rs`); the session never calls these, the handlers there do.

use shakmaty::{Chess, Move, Position};

use super::super::state::{Candidate, Finding, Memory, Stage, State, listed, plies};
use super::super::{BoardRequest, Host, MEMORY_GRACE_MS, evidence, memory, play, proof, reading};
use super::Recovery;
use crate::board_input::{MemoryEvent, SquareContent};
use crate::event::Event;
use crate::fact::Fact;
use crate::tracker::sequences as search;
use crate::vocab::Millis;

impl Recovery {
    /// The first whole board after the gap.
    pub(super) fn board_read(&mut self, h: &mut dyn Host, now: Millis, out: &mut Vec<Event>) {
        let Some(fields) = self.sensed() else {
            return;
        };
        if let Some(g) = self.state.gap_mut() {
            g.first_read = Some(fields);
        }
        let read = reading::board_of(h, &fields);
        let board = reading::learn_orientation(h, read);
        // The position, or one legal move's pieces lifted: the next move begun, the tracker's
        // job (watched: `Begun`). More pieces missing is a gap (exchanges, even beyond the
        // search's reach).
        let position = h.tracker().position();
        if !h.game_on() || reading::is_start(&board) {
            self.close(h, now, out);
        } else if position.board() == &board {
            let kept = self.state.gap().cloned();
            self.close(h, now, out);
            if let Some(g) = kept {
                self.state = State::Watched(Box::new(g), now);
            }
        } else if reading::one_move_begun(position, &board) {
            let kept = self.state.gap().cloned();
            self.close(h, now, out);
            if let Some(g) = kept {
                self.state = State::Begun(Box::new(g), now);
            }
        } else {
            // Search at once: the first board may tell (published once it proves a position).
            self.search_first_board(h, now, out, false);
        }
    }

    /// The memory asked for, the search begun on the board the gap holds (`position`: it
    /// stands as a position).
    pub(super) fn search_first_board(
        &mut self,
        h: &mut dyn Host,
        now: Millis,
        out: &mut Vec<Event>,
        position: bool,
    ) {
        h.report(Fact::ReadingMemory {
            cause: self.cause(),
        });
        self.requests.push(BoardRequest::ReadMemory);
        let memory = Memory::Asked {
            at: now,
            held_unique: false,
        };
        self.enter_search(None, memory);
        self.search(h, now, out, position);
    }

    /// The gap (open) searches from now: `tried`, the board change already searched.
    pub(super) fn enter_search(&mut self, tried: Option<Millis>, memory: Memory) {
        if let Some(g) = self.state.gap_mut() {
            g.memory = memory;
            g.stage = Stage::Search {
                tried,
                trusted_at: None,
                finding: Finding::Nothing,
            };
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
        if let Some(g) = self.state.gap_mut() {
            g.stage = Stage::Choose {
                target,
                candidates,
                total,
                listed,
                doubt,
            };
        }
    }

    /// The board's memory came (asked while `held_unique`: a sequence found waits for it).
    pub(super) fn memory_answered(
        &mut self,
        h: &mut dyn Host,
        log: &[MemoryEvent],
        held_unique: bool,
        now: Millis,
        out: &mut Vec<Event>,
    ) {
        let Some(fields) = self.sensed() else {
            return;
        };
        match memory::recover(
            h.tracker(),
            evidence::previous_position(h),
            log,
            &fields,
            now,
        ) {
            Ok(found) if !found.moves.is_empty() => {
                let note = format!(
                    "{} made {}, read from the board's memory",
                    plies(found.moves.len()),
                    self.cause()
                );
                if play::memory_moves(h, &found, &fields, note, now, out) {
                    self.close_or_search_on(h, now, out, found.set_down_since);
                } else {
                    self.search_again(h, held_unique, now, out);
                }
            }
            Ok(_) => self.search_again(h, held_unique, now, out),
            Err(why) => {
                h.report(Fact::MemoryEmpty {
                    why: why.to_string(),
                });
                self.search_again(h, held_unique, now, out);
            }
        }
    }

    /// The memory is not used: the search decides, now if it `held` a sequence for it on the
    /// board as it still stands, else at the next press or settled reading.
    pub(super) fn search_again(
        &mut self,
        h: &mut dyn Host,
        held: bool,
        now: Millis,
        out: &mut Vec<Event>,
    ) {
        let Some(g) = self.state.gap_mut() else {
            return;
        };
        let last_change = g.last_change;
        if let Memory::Asked { held_unique, .. } = &mut g.memory {
            *held_unique = false;
        }
        if let Stage::Search {
            tried, trusted_at, ..
        } = &mut g.stage
        {
            if held && *trusted_at == Some(last_change) {
                self.search(h, now, out, true);
            } else {
                *tried = None;
            }
        }
    }

    /// Moves were published up to the tracker's position: closed when the board shows it or
    /// the next move begun (not if the memory shows a piece `set_down_since` its last move:
    /// Bb7-g2, ...Bxg2 under way), else searched on at once (plies made while the memory or
    /// the arbiter was awaited; pieces in hand no one move takes up: Bc2 Bxc2, Qxc2 begun).
    pub(super) fn close_or_search_on(
        &mut self,
        h: &mut dyn Host,
        now: Millis,
        out: &mut Vec<Event>,
        set_down_since: bool,
    ) {
        let on_board = self.sensed().map(|f| reading::board_of(h, &f));
        let done = on_board
            .as_ref()
            .is_none_or(|b| reading::one_move_begun(h.tracker().position(), b));
        if done && !set_down_since {
            self.close(h, now, out);
        } else {
            let last_change = self.state.gap().map_or(0, |g| g.last_change);
            let settled =
                now.saturating_sub(last_change) >= evidence::settle_ms(h, self.state.gap());
            self.enter_search(settled.then_some(last_change), Memory::Settled);
            self.search(h, now, out, settled);
        }
    }

    /// Search the board as sensed; `position`: the reading is known to be a position (a
    /// press, a settled reading), so what is found may be acted on.
    pub(super) fn search(
        &mut self,
        h: &mut dyn Host,
        now: Millis,
        out: &mut Vec<Event>,
        position: bool,
    ) {
        let Some(g) = self.state.gap_mut() else {
            return;
        };
        let Some(fields) = g.sensed else {
            return;
        };
        let last_change = g.last_change;
        if position && let Stage::Search { trusted_at, .. } = &mut g.stage {
            *trusted_at = Some(last_change);
        }
        let Some(g) = self.state.gap() else {
            return;
        };
        let from = h.tracker().position().clone();
        let (outcome, doubt) = evidence::explain(h, g, &from, &fields, position);
        // The memory, if it comes at once, has the press times too.
        let wait_for_memory = matches!(
            g.memory,
            Memory::Asked { at, .. } if now.saturating_sub(at) < MEMORY_GRACE_MS
        );
        match outcome {
            search::Outcome::Same => self.close(h, now, out),
            search::Outcome::Unique(moves) if !position => {
                self.found(Finding::Unique {
                    plies: moves.len(),
                    line: search::san_line(&from, &moves),
                });
            }
            _ if !position => {}
            search::Outcome::Unique(moves) if let Some(doubt) = doubt => {
                self.unproven(h, &from, moves, doubt, fields, now);
            }
            search::Outcome::Unique(_) if wait_for_memory => {
                if let Some(Memory::Asked { held_unique, .. }) = self.state.memory_mut() {
                    *held_unique = true;
                }
            }
            search::Outcome::Unique(moves) => {
                h.report(Fact::RecoveredUnique {
                    line: search::san_line(&from, &moves),
                });
                let note = format!(
                    "{} made {}, recovered: the only legal sequence to the board",
                    plies(moves.len()),
                    self.cause()
                );
                play::replay_moves(h, &moves, &[], [None, None], now, out);
                h.arbiter_mut().note(note);
                self.close(h, now, out);
            }
            search::Outcome::Several { sequences, total } => {
                let listed = listed(&from, &sequences);
                let candidates = sequences
                    .into_iter()
                    .map(|moves| Candidate {
                        shadow: play::shadow_after(h, &moves, &fields, now),
                        moves,
                    })
                    .collect();
                self.enter_choose(fields, candidates, Some(total), listed, None);
                h.report(Fact::Ambiguous { gap: self.text() });
            }
            search::Outcome::GaveUp => {
                self.enter_choose(fields, Vec::new(), None, Vec::new(), None);
                h.report(Fact::SearchGaveUp { gap: self.text() });
            }
            // Only a still board or the scoresheets can tell now: in a scramble the board
            // never stands still, so the arbiter is asked at once, clearly.
            search::Outcome::Unreachable => self.found(Finding::Unreachable),
        }
    }

    /// One sequence reaches the board but the evidence does not prove it (`doubt`): the
    /// board's memory, when it may still come, has every change; else the arbiter is asked
    /// with the sequence listed (play going on meanwhile is followed from it).
    pub(super) fn unproven(
        &mut self,
        h: &mut dyn Host,
        from: &Chess,
        moves: Vec<Move>,
        doubt: proof::Verdict,
        fields: [SquareContent; 64],
        now: Millis,
    ) {
        let line = search::san_line(from, &moves);
        if matches!(self.state.memory_mut(), Some(Memory::Asked { .. })) {
            self.found(Finding::Unproven {
                plies: moves.len(),
                line,
            });
            return;
        }
        let listed = listed(from, std::slice::from_ref(&moves));
        let candidates = vec![Candidate {
            shadow: play::shadow_after(h, &moves, &fields, now),
            moves,
        }];
        self.enter_choose(fields, candidates, Some(1), listed, Some(doubt));
        h.report(Fact::Unproven { gap: self.text() });
    }

    /// No legal sequence reaches the board and it stands still: continue from it.
    pub(super) fn unreachable(&mut self, h: &mut dyn Host, now: Millis, out: &mut Vec<Event>) {
        let note = format!(
            "moves were made {} that no legal sequence of up to {} plies explains",
            self.cause(),
            search::MAX_PLIES
        );
        if play::continue_from_board(h, self.state.gap(), &note, now, out) {
            self.close(h, now, out);
        } else {
            self.found(Finding::NoPosition);
        }
    }

    /// The gap is over: the tracker reads the board as it stands, the arbiter the clock.
    pub(super) fn close(&mut self, h: &mut dyn Host, now: Millis, out: &mut Vec<Event>) {
        if !self.is_open() {
            return;
        }
        let State::Gap(g) = std::mem::take(&mut self.state) else {
            return;
        };
        let clock = g.clock.as_ref().map(|(times, _)| times);
        play::hand_back(h, g.sensed.as_ref(), clock, now, out);
    }
}
