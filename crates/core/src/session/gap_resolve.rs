//! The arbiter's answer to a gap or a live question (`ResolveGap`), and the live side of the
//! recovery: the stories a still board leaves open, asked after [`STILL_ASK_MS`].

use shakmaty::uci::UciMove;
use shakmaty::{Chess, Move, Position};

use super::gap::*;
use super::recovery::{Asking, Recovery, STILL_ASK_MS, Stage, plies};
use super::{Event, Fact, Session};
use crate::board::{Orientation, Placement};
use crate::board_input::SquareContent;
use crate::gap::search;
use crate::vocab::{CommandError, Millis};

impl Session {
    /// The arbiter says which moves were made during the gap (none: continue from the board),
    /// or which of the stories the tracker holds open is the game.
    pub(super) fn resolve_gap(
        &mut self,
        moves: Vec<String>,
        now: Millis,
        out: &mut Vec<Event>,
    ) -> Result<(), CommandError> {
        let target = match &self.gap.state {
            Recovery::Closed => {
                return Err(CommandError::InvalidArgument(
                    "no gap is open on this board: there is nothing to resolve".into(),
                ));
            }
            Recovery::Asking(_) => return self.resolve_asking(&moves, now, out),
            Recovery::Gap(g) => match &g.stage {
                Stage::Unread { .. } => {
                    return Err(CommandError::InvalidArgument(
                        "the board has not been read since the gap began: nothing can be checked against it yet; resolve once it is connected and read".into(),
                    ));
                }
                Stage::Choose { target, .. } => *target,
                // The board first read after the gap (the gap's end, unless a piece was in
                // hand then; the board now decides in that case, below).
                Stage::Search { .. } => match g.first_read.or(g.sensed) {
                    Some(t) => t,
                    None => unreachable!("a gap searches only once a whole board was read"),
                },
            },
        };
        if moves.is_empty() {
            let note = format!(
                "moves were made {}; the arbiter continued from the board",
                self.gap.cause()
            );
            if !self.continue_from_board(&note, now, out) {
                return Err(CommandError::InvalidArgument(
                    "the board shows no playable position (pieces in hand, a king missing): set the pieces, then resolve again".into(),
                ));
            }
            self.close_gap(now, out);
            return Ok(());
        }
        let from = self.tracker.position().clone();
        let known_len = self.tracker.moves().len();
        let line = parse_line(&from, &moves)?;
        let mut end = from.clone();
        for &m in &line {
            end.play_unchecked(m);
        }
        let gap_len = match self.line_meets_board(&from, &line, &target, self.orientation()) {
            Some(n) => n,
            None => {
                // The arbiter's moves reach the board read the other way round: after a
                // restart its way round was learnt from a board far from the last known
                // position, and the scoresheet settles it.
                let turned = match self.orientation() {
                    Orientation::Normal => Orientation::Reversed,
                    Orientation::Reversed => Orientation::Normal,
                };
                match self.line_meets_board(&from, &line, &target, turned) {
                    Some(n)
                        if self.config().orientation == crate::vocab::OrientationSetting::Auto =>
                    {
                        self.tracker.learn_orientation(turned);
                        self.report(Fact::TurnedByArbiter);
                        n
                    }
                    _ => {
                        return Err(CommandError::InvalidArgument(format!(
                            "{} lead from the last known position to {}, not to the board ({}), nor through it",
                            search::san_line(&from, &line),
                            Placement::from_board(end.board()).board_fen(),
                            Placement::from_board(&self.board_of(&target)).board_fen()
                        )));
                    }
                }
            }
        };
        let now_board = self.gap.sensed().map(|f| self.board_of(&f));
        // Play went on from the chosen story: its follower knows the moves since. The board
        // is the judge: the arbiter's moves stand when the board now follows from them, else
        // the follower's longer story when it agrees with them.
        let follows = |moves: &[Move]| {
            let mut end = from.clone();
            for &m in moves {
                end.play_unchecked(m);
            }
            now_board
                .as_ref()
                .is_none_or(|board| self.board_follows(&end, board))
        };
        let story = match self.gap.state.gap().map(|g| &g.stage) {
            Some(Stage::Choose { candidates, .. }) => candidates
                .iter()
                .find(|c| c.moves == line[..gap_len])
                .map(|c| c.shadow.moves())
                .filter(|f| f.len() >= known_len && f[..known_len] == *self.tracker.moves())
                .map(|f| f[known_len..].to_vec()),
            _ => None,
        };
        let all = match story {
            Some(story)
                if story.len() > line.len() && story.starts_with(&line) && follows(&story) =>
            {
                story
            }
            _ if follows(&line) => line.clone(),
            _ => {
                return Err(CommandError::InvalidArgument(format!(
                    "{} contradict the play followed since the gap: no legal play from there reaches the board ({})",
                    search::san_line(&from, &line),
                    now_board
                        .as_ref()
                        .map(|b| Placement::from_board(b).board_fen())
                        .unwrap_or_default()
                )));
            }
        };
        let note = format!(
            "{} made {}, as the arbiter resolved them",
            plies(gap_len),
            self.gap.cause()
        );
        self.report(Fact::ResolvedByArbiter {
            line: search::san_line(&from, &all),
        });
        self.replay_moves(&all[..gap_len], &[], [None, None], now, out);
        self.arbiter.note(note);
        self.replay_moves(&all[gap_len..], &[], [None, None], now, out);
        self.close_or_search_on(now, out);
        Ok(())
    }

    /// After how many of `line`'s moves from `from` the board read after the gap (`target`,
    /// wire order) stood, or all of them when the board now is their end (or it with a move
    /// in progress, while searching), the board read the `orientation` way round.
    fn line_meets_board(
        &self,
        from: &Chess,
        line: &[Move],
        target: &[SquareContent; 64],
        orientation: Orientation,
    ) -> Option<usize> {
        let read =
            |fields: &[SquareContent; 64]| Placement::from_wire(fields, orientation).to_board();
        let target_board = read(target);
        let mut pos = from.clone();
        let mut through = None;
        for (i, &m) in line.iter().enumerate() {
            pos.play_unchecked(m);
            if through.is_none() && *pos.board() == target_board {
                through = Some(i + 1);
            }
        }
        let now_board = self.gap.sensed().map(|f| read(&f));
        let searching = matches!(
            self.gap.state.gap().map(|g| &g.stage),
            Some(Stage::Search { .. })
        );
        match through {
            Some(n) => Some(n),
            None if now_board.as_ref() == Some(pos.board()) => Some(line.len()),
            // The board read after the gap was not a position the line passes through, but
            // the board now is its end with a move in progress (pieces in hand): the arbiter
            // gave everything up to now.
            None if searching
                && now_board
                    .as_ref()
                    .is_some_and(|b| lifted_only(pos.board(), b)) =>
            {
                Some(line.len())
            }
            None => None,
        }
    }

    /// The stories the tracker holds open, from the last position it is sure of (the
    /// position before the first move they differ in).
    pub(super) fn live_stories(&self) -> Option<Asking> {
        let lines = self.tracker.open_stories()?;
        let common = lines
            .iter()
            .map(|l| l.iter().zip(&lines[0]).take_while(|(a, b)| a == b).count())
            .min()?;
        let mut base = self.tracker.root().clone();
        for &m in &lines[0][..common] {
            base.play_unchecked(m);
        }
        let stories = lines.iter().map(|l| l[common..].to_vec()).collect();
        Some(Asking {
            base,
            base_ply: common,
            stories,
        })
    }

    /// When the still board the tracker holds several stories for has stood long enough
    /// for `Gap` to ask (while nothing is asked yet).
    pub(super) fn ask_due(&self) -> Option<Millis> {
        (self.game_on() && self.tracker.open_stories().is_some())
            .then(|| self.tracker.last_change().saturating_add(STILL_ASK_MS))
    }

    /// After every input while no gap is open: the tracker's open stories become a question
    /// for the arbiter once the board has stood still [`STILL_ASK_MS`], and the question
    /// goes as soon as the tracker has settled them (or holds others).
    pub(super) fn follow_live_stories(&mut self, now: Millis) {
        if self.gap.is_open() {
            return;
        }
        let asking = self
            .ask_due()
            .filter(|&due| now >= due)
            .and_then(|_| self.live_stories());
        match (&self.gap.state, asking) {
            (Recovery::Asking(a), Some(b)) if a.base == b.base && a.stories == b.stories => {}
            (_, Some(b)) => {
                self.gap.state = Recovery::Asking(b);
                self.report(Fact::StillBoardAsks {
                    gap: self.gap.text(),
                });
            }
            (Recovery::Asking(_), None) => self.gap.state = Recovery::Closed,
            (_, None) => {}
        }
    }

    /// `ResolveGap` for the live stories: the moves from the position before them (or the
    /// chosen story's moves after the record's last, which the stories may share).
    pub(super) fn resolve_asking(
        &mut self,
        moves: &[String],
        now: Millis,
        out: &mut Vec<Event>,
    ) -> Result<(), CommandError> {
        let Recovery::Asking(asking) = &self.gap.state else {
            return Ok(());
        };
        // The record's moves since the stories' base (the provisional move they part at).
        let recorded = &self.tracker.moves()[asking.base_ply.min(self.tracker.moves().len())..];
        let from_base = parse_line(&asking.base, moves).ok();
        let from_record = parse_line(self.tracker.position(), moves).ok();
        let chosen = asking.stories.iter().find(|s| {
            from_base.as_deref() == Some(s.as_slice())
                || (s.starts_with(recorded) && from_record.as_deref() == Some(&s[recorded.len()..]))
        });
        let Some(story) = chosen else {
            return Err(CommandError::InvalidArgument(format!(
                "`{}` is none of the move orders that explain the board; {}",
                moves.join(" "),
                self.gap.text()
            )));
        };
        let mut line = self.tracker.moves()[..asking.base_ply].to_vec();
        line.extend_from_slice(story);
        let tracked = self.tracker.take_story(&line);
        self.apply_tracker(tracked, now, out);
        self.gap.state = Recovery::Closed;
        Ok(())
    }
}

/// The arbiter's UCI moves, legal one after the other from `from`.
fn parse_line(from: &Chess, moves: &[String]) -> Result<Vec<Move>, CommandError> {
    let mut pos = from.clone();
    let mut line = Vec::with_capacity(moves.len());
    for (i, text) in moves.iter().enumerate() {
        let m = text
            .parse::<UciMove>()
            .ok()
            .and_then(|u| u.to_move(&pos).ok())
            .ok_or_else(|| {
                CommandError::InvalidArgument(format!(
                    "move {} `{text}` is not a legal UCI move in {}",
                    i + 1,
                    crate::arbiter::fen_of(&pos)
                ))
            })?;
        pos.play_unchecked(m);
        line.push(m);
    }
    Ok(line)
}
