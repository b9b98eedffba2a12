//! Patches of the game record: what changed in a [`Game`] from one journal record to the next,
//! so that the journal grows by a move's worth of bytes per move instead of by the whole game.
//!
//! [`diff`] computes a [`Patch`] from the record as last journalled to the record now;
//! [`Patch::apply`] turns the old record into the new one. The usual patch is "keep the first
//! `k` moves of the last segment, stamp the last kept move's clock, append one move", a
//! hundred-odd bytes of JSON whatever the game's length. Rarer changes (a takeback, a new
//! segment after an illegal move stood, a result, a penalty) are patches too.
//!
//! A patch covers the fields of [`Game`] this module knows. The session checks every patch
//! by applying it to its copy of the old record and comparing with the new one; should a
//! field be added to [`Game`] without being added here, the check fails and the session
//! journals a whole snapshot instead, so nothing is ever lost by a patch that is too small.
//!
//! Pure data and pure functions: no I/O.

use serde::{Deserialize, Serialize};

use crate::game::{Game, MoveRecord, Penalty, Segment};
use crate::vocab::{GameResult, Termination};

/// The difference between two game records (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Patch {
    /// Segments of the old record kept as they are (a prefix).
    pub seg: usize,
    /// The next old segment continues (same start and intro): its moves are cut to `keep`,
    /// the last kept move may get a new clock stamp, then `moves` are appended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cont: Option<Continued>,
    /// Whole new segments after those.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub segments: Vec<Segment>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<(String, String)>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<GameResult>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::vocab::termination_serde::change"
    )]
    pub termination: Option<Option<Termination>>,
    /// Penalties: keep the first `n`, then append these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub penalties: Option<(usize, Vec<Penalty>)>,
    /// Decisions: keep the first `n`, then append these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decisions: Option<(usize, Vec<String>)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub illegal_moves: Option<(u32, u32)>,
}

/// How a kept segment goes on (see [`Patch::cont`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Continued {
    /// Moves of the old segment kept.
    pub keep: usize,
    /// New `clk_ms` of the last kept move (a clock press stamped it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stamp: Option<u64>,
    /// Moves appended.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub moves: Vec<MoveRecord>,
}

/// Why a patch does not fit the record it is applied to (a journal out of order or damaged).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the game-record patch does not fit the record: {0}")]
pub struct PatchMismatch(pub String);

/// The patch that turns `old` into `new`.
pub fn diff(old: &Game, new: &Game) -> Patch {
    let common = old
        .segments
        .iter()
        .zip(&new.segments)
        .take_while(|(a, b)| a == b)
        .count();
    let mut patch = Patch {
        seg: common,
        ..Patch::default()
    };
    let mut next = common;
    if let (Some(a), Some(b)) = (old.segments.get(common), new.segments.get(common))
        && a.start_fen == b.start_fen
        && a.intro == b.intro
    {
        patch.cont = Some(continued(&a.moves, &b.moves));
        next += 1;
    }
    patch.segments = new.segments[next.min(new.segments.len())..].to_vec();
    if old.tags != new.tags {
        patch.tags = Some(new.tags.clone());
    }
    if old.result != new.result {
        patch.result = Some(new.result);
    }
    if old.termination != new.termination {
        patch.termination = Some(new.termination);
    }
    if old.penalties != new.penalties {
        let n = common_prefix(&old.penalties, &new.penalties);
        patch.penalties = Some((n, new.penalties[n..].to_vec()));
    }
    if old.decisions != new.decisions {
        let n = common_prefix(&old.decisions, &new.decisions);
        patch.decisions = Some((n, new.decisions[n..].to_vec()));
    }
    if old.illegal_moves != new.illegal_moves {
        patch.illegal_moves = Some(new.illegal_moves);
    }
    patch
}

fn continued(old: &[MoveRecord], new: &[MoveRecord]) -> Continued {
    let mut keep = common_prefix(old, new);
    let mut stamp = None;
    // The common case: the last move got its press stamp, then (maybe) a move follows.
    if let (Some(a), Some(b)) = (old.get(keep), new.get(keep))
        && let Some(clk) = b.clk_ms
        && a.clk_ms != b.clk_ms
        && (MoveRecord {
            clk_ms: b.clk_ms,
            ..a.clone()
        }) == *b
    {
        stamp = Some(clk);
        keep += 1;
    }
    Continued {
        keep,
        stamp,
        moves: new[keep..].to_vec(),
    }
}

fn common_prefix<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

impl Patch {
    /// Turn `game` (the record the patch was computed from) into the new record.
    pub fn apply(&self, game: &mut Game) -> Result<(), PatchMismatch> {
        let kept = self.seg + usize::from(self.cont.is_some());
        if kept > game.segments.len() {
            return Err(PatchMismatch(format!(
                "it keeps {kept} segments of a record that has {}",
                game.segments.len()
            )));
        }
        if let Some(c) = &self.cont {
            let seg = &game.segments[self.seg];
            if c.keep > seg.moves.len() || (c.stamp.is_some() && c.keep == 0) {
                return Err(PatchMismatch(format!(
                    "it keeps {} moves of a segment that has {}",
                    c.keep,
                    seg.moves.len()
                )));
            }
        }
        if let Some((n, _)) = &self.penalties
            && *n > game.penalties.len()
        {
            return Err(PatchMismatch(format!(
                "it keeps {n} penalties of {}",
                game.penalties.len()
            )));
        }
        if let Some((n, _)) = &self.decisions
            && *n > game.decisions.len()
        {
            return Err(PatchMismatch(format!(
                "it keeps {n} decisions of {}",
                game.decisions.len()
            )));
        }
        // Checked: nothing below can fail, so a mismatch leaves `game` untouched.
        game.segments.truncate(kept);
        if let Some(c) = &self.cont {
            let moves = &mut game.segments[self.seg].moves;
            moves.truncate(c.keep);
            if let (Some(clk), Some(last)) = (c.stamp, moves.last_mut()) {
                last.clk_ms = Some(clk);
            }
            moves.extend(c.moves.iter().cloned());
        }
        game.segments.extend(self.segments.iter().cloned());
        if let Some(tags) = &self.tags {
            game.tags = tags.clone();
        }
        if let Some(r) = self.result {
            game.result = r;
        }
        if let Some(t) = self.termination {
            game.termination = t;
        }
        if let Some((n, more)) = &self.penalties {
            game.penalties.truncate(*n);
            game.penalties.extend(more.iter().cloned());
        }
        if let Some((n, more)) = &self.decisions {
            game.decisions.truncate(*n);
            game.decisions.extend(more.iter().cloned());
        }
        if let Some(counts) = self.illegal_moves {
            game.illegal_moves = counts;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::START_FEN;

    fn mv(san: &str, clk: Option<u64>) -> MoveRecord {
        MoveRecord {
            san: san.into(),
            uci: "e2e4".into(),
            white_ms: Some(1),
            black_ms: Some(2),
            clk_ms: clk,
            comments: Vec::new(),
        }
    }

    fn game(moves: &[MoveRecord]) -> Game {
        let mut g = Game::new(START_FEN, vec![("Event".into(), "x".into())]);
        for m in moves {
            g.push_move(m.clone());
        }
        g
    }

    fn round_trip(old: &Game, new: &Game) -> Patch {
        let patch = diff(old, new);
        let json = serde_json::to_string(&patch).unwrap();
        let back: Patch = serde_json::from_str(&json).unwrap();
        assert_eq!(back, patch);
        let mut g = old.clone();
        back.apply(&mut g).unwrap();
        assert_eq!(&g, new, "{json}");
        patch
    }

    #[test]
    fn a_move_and_its_press_stamp_are_small() {
        let mut moves: Vec<MoveRecord> = (0..200).map(|i| mv(&format!("m{i}"), Some(9))).collect();
        let old = game(&moves);
        moves.last_mut().unwrap().clk_ms = Some(12_345);
        moves.push(mv("Nf3", None));
        let new = game(&moves);
        let patch = round_trip(&old, &new);
        let c = patch.cont.as_ref().unwrap();
        assert_eq!((c.keep, c.stamp, c.moves.len()), (200, Some(12_345), 1));
        assert!(serde_json::to_string(&patch).unwrap().len() < 150);
        assert_eq!(
            diff(&new, &new),
            Patch {
                seg: 1,
                ..Patch::default()
            }
        );
    }

    #[test]
    fn takebacks_corrections_segments_and_the_rest() {
        let a = game(&[mv("e4", Some(1)), mv("e5", Some(2)), mv("Nf3", None)]);
        // Takeback.
        let b = game(&[mv("e4", Some(1)), mv("e5", Some(2))]);
        round_trip(&a, &b);
        // Correction of the last move.
        let c = game(&[mv("e4", Some(1)), mv("e5", Some(2)), mv("Nc3", None)]);
        round_trip(&a, &c);
        // A new segment, a comment on the old last move, a result, penalties, decisions.
        let mut d = a.clone();
        d.comment("illegal move stood");
        d.continue_from("8/8/8/8/8/8/8/K1k5 w - - 0 1", "goes on");
        d.push_move(mv("Kb1", None));
        d.set_result(GameResult::WhiteWins, Some(Termination::Adjudication));
        d.add_penalty(Penalty {
            beneficiary: crate::vocab::Player::White,
            ms: 120_000,
            reason: "7.5.5".into(),
        });
        d.add_decision("adjudicated");
        d.illegal_moves = (0, 1);
        d.tags.push(("Round".into(), "3".into()));
        let p = round_trip(&a, &d);
        assert!(!p.segments.is_empty());
        // And back again (segments dropped, lists cut).
        round_trip(&d, &a);
    }

    #[test]
    fn a_patch_that_does_not_fit_is_refused_and_changes_nothing() {
        let long = game(&[mv("e4", None), mv("e5", None), mv("Nf3", None)]);
        let short = game(&[mv("e4", None)]);
        let patch = diff(
            &long,
            &game(&[
                mv("e4", None),
                mv("e5", None),
                mv("Nf3", None),
                mv("Nc6", None),
            ]),
        );
        let mut g = short.clone();
        assert!(patch.apply(&mut g).is_err());
        assert_eq!(g, short);
        let mut empty = short.clone();
        empty.segments.clear();
        assert!(patch.apply(&mut empty).is_err());
    }
}
