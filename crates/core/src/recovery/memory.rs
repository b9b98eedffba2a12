//! Moves from the board's EEPROM log (DGT_MSG_EE_MOVES) after a gap.
//!
//! A board that stayed powered logged every field change while nobody read it. The log has
//! no clock of its own, only order, so the moves are found the way the live daemon finds
//! them: a copy of the tracker, standing at the last position the daemon knew, is fed the
//! logged field changes in order (a tag without the fast bit counts as a pause, so pieces in
//! hand settle as they did at the board) and the logged lever presses.
//!
//! Where the gap starts in the log: the board's state is rebuilt tag by tag (completely from
//! the last POWERUP, whose field tags list every piece; without one, squares not yet written
//! are taken from the board now, never-written ones are unknown and match anything). The
//! anchor is the first moment the board showed the last known position after the last time
//! it showed the position before it and then the known one (so a repetition during the gap
//! is kept, and a gap that shows the before-board again later is not cut short), or else the
//! last moment it showed the last known position. A log whose last POWERUP comes after the
//! gap began has nothing for the gap: the board lost power, and [`recover`] says so with
//! `None`.

use shakmaty::{Chess, Color, Move, Position};

use crate::board::{Orientation, Placement};
use crate::board_input::{MemoryEvent, SquareContent};
use crate::tracker::{Tracker, TrackerEvent};
use crate::vocab::Millis;

/// A pause between two logged field changes without the fast bit: long enough for a held
/// move's dwell, shorter than a settle ([`crate::tracker::ILLEGAL_SETTLE_MS`]). The log does
/// not say how long pieces were in hand, and a settled board with pieces lifted lets the
/// tracker read a capture in progress as an exchange (Qxh6 with the queen and the pawn in
/// hand is also Qxg5 hxg5): only the board's own changes tell the moves here.
const PAUSE_MS: Millis = 400;
/// Between two field changes with the fast bit (same scan, < 250 ms).
const QUICK_MS: Millis = 100;

/// What the memory held about the gap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    /// The moves made during the gap, in order.
    pub moves: Vec<Move>,
    /// For each move, the first logged lever press after it: (left display, its time in ms).
    pub presses: Vec<Option<(bool, u64)>>,
    /// The last time logged for each display (left, right) before the gap: the time of the
    /// side that does not move first stands at it until that side's first press.
    pub before: [Option<u64>; 2],
    /// After the last move found, a piece was set down: a board that shows the last
    /// position with pieces missing is then more than the next move begun (a move made and
    /// its piece taken, the capture in progress).
    pub set_down_since: bool,
}

/// Why the memory could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unusable {
    #[error("the board's memory does not show the last known position (it lost power meanwhile)")]
    NoAnchor,
    #[error("the board's memory shows a new game or a takeback of known moves")]
    NotThisGame,
    #[error("the board's memory does not end in a position of this game")]
    NoPosition,
}

/// Replay `log` from the last position `tracker` knows (see the module documentation).
/// `previous`: the position before it, if the record has one (a tracker started after a
/// restart has only its last position; the record has both). `now`: the board as the daemon
/// reads it now, in wire order (for squares the log never wrote); `at`: the time to run the
/// copy of the tracker from.
pub fn recover(
    tracker: &Tracker,
    previous: Option<&Chess>,
    log: &[MemoryEvent],
    now: &[SquareContent; 64],
    at: Millis,
) -> Result<Recovered, Unusable> {
    let orientation = tracker.orientation().unwrap_or(Orientation::Normal);
    let wire = |pos: &Chess| Placement::from_board(pos.board()).to_wire(orientation);
    let known = wire(tracker.position());
    let before = previous.map(wire);

    let start = log
        .iter()
        .rposition(|e| *e == MemoryEvent::PowerUp)
        .map_or(0, |i| i + 1);
    let tail = &log[start..];
    let powered_up = start > 0;
    // The board before the first tag of the tail: empty after a power-up (its tags list
    // every piece), otherwise unknown where a tag will write and as now elsewhere.
    let mut state: [Option<SquareContent>; 64] = [None; 64];
    if !powered_up {
        let mut written = [false; 64];
        for e in tail {
            if let MemoryEvent::Square { index: field, .. } = e {
                written[usize::from(*field) & 63] = true;
            }
        }
        for i in 0..64 {
            if !written[i] {
                state[i] = Some(now[i]);
            }
        }
    } else {
        state = [Some(None); 64];
    }
    let matches = |state: &[Option<SquareContent>; 64], board: &[SquareContent; 64]| {
        state
            .iter()
            .zip(board)
            .all(|(s, b)| s.is_none_or(|s| s == *b))
    };
    // Indices `i` such that the board after `tail[..i]` shows the position.
    let mut known_at = Vec::new();
    let mut before_at = Vec::new();
    for i in 0..=tail.len() {
        if i > 0 {
            let MemoryEvent::Square {
                index: field,
                content,
                ..
            } = tail[i - 1]
            else {
                continue;
            };
            state[usize::from(field) & 63] = Some(content);
        }
        if matches(&state, &known) {
            known_at.push(i);
        }
        if before.as_ref().is_some_and(|b| matches(&state, b)) {
            before_at.push(i);
        }
    }
    // The last time the board went from the position before to the known one (the record's
    // last move), not merely the last before-position: the gap's moves may show the
    // before-board again later (a move taken back by a later one), and the known board too
    // with the other side to move (an odd cycle), from which the replay would read the rest
    // with the wrong side to move.
    let anchor = before_at
        .iter()
        .rev()
        .find_map(|&j| known_at.iter().copied().find(|&i| i > j))
        .or_else(|| known_at.last().copied())
        .ok_or(Unusable::NoAnchor)?;
    let mut before = [None, None];
    for e in &tail[..anchor] {
        if let MemoryEvent::Press { left, time } = e {
            before[usize::from(!*left)] = Some(time.as_millis());
        }
    }
    let mut found = replay(tracker, &tail[anchor..], &known, at)?;
    found.before = before;
    Ok(found)
}

fn replay(
    tracker: &Tracker,
    tail: &[MemoryEvent],
    known: &[SquareContent; 64],
    at: Millis,
) -> Result<Recovered, Unusable> {
    let mut shadow = tracker.clone();
    let base = tracker.moves().to_vec();
    let mut t = at;
    let mut events = shadow.on_board_dump(known, t);
    let mut presses: Vec<(usize, bool, u64)> = Vec::new();
    let mut board = *known;
    let mut set_down_since = false;
    for e in tail {
        let plies = shadow.moves().len();
        let set_down = matches!(
            e,
            MemoryEvent::Square {
                content: Some(_),
                ..
            }
        );
        match *e {
            MemoryEvent::Square {
                index: field,
                content,
                quick,
            } => {
                // A field written again as it is changes nothing, and must not make the
                // time since the last change look longer than it was.
                let Some(slot) = board.get_mut(usize::from(field)) else {
                    continue;
                };
                if *slot == content {
                    continue;
                }
                *slot = content;
                if quick {
                    t += QUICK_MS;
                } else {
                    t += PAUSE_MS;
                    events.extend(shadow.on_tick(t));
                }
                events.extend(shadow.on_field_update(field, content, t));
            }
            MemoryEvent::Press { left, time } => {
                t += QUICK_MS;
                events.extend(shadow.on_clock_press(t));
                presses.push((shadow.moves().len(), left, time.as_millis()));
            }
            _ => {}
        }
        if events
            .iter()
            .any(|e| matches!(e, TrackerEvent::GameStarted { .. }))
        {
            return Err(Unusable::NotThisGame);
        }
        events.clear();
        if shadow.moves().len() != plies {
            set_down_since = false;
        } else if set_down {
            set_down_since = true;
        }
    }
    t += PAUSE_MS;
    let plies = shadow.moves().len();
    let _ = shadow.on_tick(t);
    if shadow.moves().len() != plies {
        set_down_since = false;
    }
    let moves = shadow.moves();
    if moves.len() < base.len() || moves[..base.len()] != base[..] {
        return Err(Unusable::NotThisGame);
    }
    // The memory is read while play goes on: it may end with a piece in hand (the next move
    // begun), which is the last position with pieces missing; anything else is no position.
    let sensed = shadow.placement().to_board();
    let position = shadow.position().board();
    let lifted_only = (sensed.occupied() & !position.occupied()).is_empty()
        && sensed
            .occupied()
            .into_iter()
            .all(|sq| sensed.piece_at(sq) == position.piece_at(sq));
    if !shadow.in_sync() && !lifted_only {
        return Err(Unusable::NoPosition);
    }
    let new: Vec<Move> = moves[base.len()..].to_vec();
    let mut stamps = vec![None; new.len()];
    for (count, left, ms) in presses {
        if let Some(k) = count.checked_sub(base.len() + 1)
            && k < stamps.len()
            && stamps[k].is_none()
        {
            stamps[k] = Some((left, ms));
        }
    }
    Ok(Recovered {
        moves: new,
        presses: stamps,
        before: [None, None],
        set_down_since,
    })
}

/// The colour that made move `k` of a gap that began with `first` to move.
pub fn mover(first: Color, k: usize) -> Color {
    if k.is_multiple_of(2) { first } else { !first }
}
