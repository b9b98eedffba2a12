//! Reading the arbiter's answer (`ResolveGap`): its moves parsed and checked against the
//! board read after the gap and the board now (the play followed since from the story it
//! chose), and the stories a still board leaves open as the arbiter is asked about them.
//! The machine (`machine.rs`) makes the transitions these answers lead to.

use shakmaty::uci::UciMove;
use shakmaty::{Board, Chess, Move, Position};

use super::state::{Asking, Gap, Stage};
use super::{Host, STILL_ASK_MS, reading};
use crate::board::{Orientation, Placement};
use crate::board_input::SquareContent;
use crate::fact::Fact;
use crate::tracker::sequences as search;
use crate::vocab::{CommandError, Millis};

/// The board the arbiter's moves must reach: the one the gap's stories lead to, or the board
/// first read after the gap (the gap's end, unless a piece was in hand then; the board now
/// decides in that case, see [`gap_line`]).
pub(super) fn target(g: &Gap) -> Result<[SquareContent; 64], CommandError> {
    match &g.stage {
        Stage::Unread { .. } => Err(CommandError::InvalidArgument(
            "the board has not been read since the gap began: nothing can be checked against it yet; resolve once it is connected and read".into(),
        )),
        Stage::Choose { target, .. } => Ok(*target),
        Stage::Search { .. } => match g.first_read.or(g.sensed) {
            Some(t) => Ok(t),
            None => unreachable!("a gap searches only once a whole board was read"),
        },
    }
}

/// The arbiter's `moves` for the open gap `g`, checked: the moves to publish from the
/// tracker's position and how many of them were the gap's (the rest were played since),
/// `target` being the board read after the gap.
pub(super) fn gap_line(
    h: &mut dyn Host,
    g: &Gap,
    target: &[SquareContent; 64],
    moves: &[String],
) -> Result<(Vec<Move>, usize), CommandError> {
    let from = h.tracker().position().clone();
    let known_len = h.tracker().moves().len();
    let line = parse_line(&from, moves)?;
    let mut end = from.clone();
    for &m in &line {
        end.play_unchecked(m);
    }
    let orientation = reading::orientation(h);
    let gap_len = match line_meets_board(g, &from, &line, target, orientation) {
        Some(n) => n,
        None => {
            // The arbiter's moves reach the board read the other way round: after a
            // restart its way round was learnt from a board far from the last known
            // position, and the scoresheet settles it.
            let turned = match orientation {
                Orientation::Normal => Orientation::Reversed,
                Orientation::Reversed => Orientation::Normal,
            };
            match line_meets_board(g, &from, &line, target, turned) {
                Some(n) if h.orientation_learnt() => {
                    h.tracker_mut().learn_orientation(turned);
                    h.report(Fact::TurnedByArbiter);
                    n
                }
                _ => {
                    return Err(CommandError::InvalidArgument(format!(
                        "{} lead from the last known position to {}, not to the board ({}), nor through it",
                        search::san_line(&from, &line),
                        Placement::from_board(end.board()).board_fen(),
                        Placement::from_board(&reading::board_of(h, target)).board_fen()
                    )));
                }
            }
        }
    };
    let now_board: Option<Board> = g.sensed.map(|f| reading::board_of(h, &f));
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
            .is_none_or(|board| reading::board_follows(&end, board))
    };
    let story = match &g.stage {
        Stage::Choose { candidates, .. } => candidates
            .iter()
            .find(|c| c.moves == line[..gap_len])
            .map(|c| c.shadow.moves())
            .filter(|f| f.len() >= known_len && f[..known_len] == *h.tracker().moves())
            .map(|f| f[known_len..].to_vec()),
        _ => None,
    };
    let all = match story {
        Some(story) if story.len() > line.len() && story.starts_with(&line) && follows(&story) => {
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
    Ok((all, gap_len))
}

/// After how many of `line`'s moves from `from` the board read after the gap (`target`,
/// wire order) stood, or all of them when the board now is their end (or it with a move
/// in progress, while searching), the board read the `orientation` way round.
fn line_meets_board(
    g: &Gap,
    from: &Chess,
    line: &[Move],
    target: &[SquareContent; 64],
    orientation: Orientation,
) -> Option<usize> {
    let read = |fields: &[SquareContent; 64]| Placement::from_wire(fields, orientation).to_board();
    let target_board = read(target);
    let mut pos = from.clone();
    let mut through = None;
    for (i, &m) in line.iter().enumerate() {
        pos.play_unchecked(m);
        if through.is_none() && *pos.board() == target_board {
            through = Some(i + 1);
        }
    }
    let now_board = g.sensed.map(|f| read(&f));
    let searching = matches!(g.stage, Stage::Search { .. });
    match through {
        Some(n) => Some(n),
        None if now_board.as_ref() == Some(pos.board()) => Some(line.len()),
        // The board read after the gap was not a position the line passes through, but
        // the board now is its end with a move in progress (pieces in hand): the arbiter
        // gave everything up to now.
        None if searching
            && now_board
                .as_ref()
                .is_some_and(|b| reading::lifted_only(pos.board(), b)) =>
        {
            Some(line.len())
        }
        None => None,
    }
}

/// When the still board the tracker holds several stories for has stood long enough for
/// `Gap` to ask (while nothing is asked yet).
pub(super) fn ask_due(h: &dyn Host) -> Option<Millis> {
    (h.game_on() && h.tracker().open_stories().is_some())
        .then(|| h.tracker().last_change().saturating_add(STILL_ASK_MS))
}

/// The stories the tracker holds open, from the last position it is sure of (the
/// position before the first move they differ in).
pub(super) fn live_stories(h: &dyn Host) -> Option<Asking> {
    let lines = h.tracker().open_stories()?;
    let common = lines
        .iter()
        .map(|l| l.iter().zip(&lines[0]).take_while(|(a, b)| a == b).count())
        .min()?;
    let mut base = h.tracker().root().clone();
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

/// `ResolveGap` for the live stories: the record's line (from the tracker's root) the
/// arbiter chose, given the moves from the position before the stories (or the chosen
/// story's moves after the record's last, which the stories may share); `None`: none of them.
pub(super) fn asked_line(h: &dyn Host, asking: &Asking, moves: &[String]) -> Option<Vec<Move>> {
    let tracker = h.tracker();
    // The record's moves since the stories' base (the provisional move they part at).
    let recorded = &tracker.moves()[asking.base_ply.min(tracker.moves().len())..];
    let from_base = parse_line(&asking.base, moves).ok();
    let from_record = parse_line(tracker.position(), moves).ok();
    let story = asking.stories.iter().find(|s| {
        from_base.as_deref() == Some(s.as_slice())
            || (s.starts_with(recorded) && from_record.as_deref() == Some(&s[recorded.len()..]))
    })?;
    let mut line = tracker.moves()[..asking.base_ply].to_vec();
    line.extend_from_slice(story);
    Some(line)
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
