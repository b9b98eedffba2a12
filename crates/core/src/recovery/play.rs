//! What the recovery does to the game through its [`Host`]: recovered moves published through
//! the tracker as if read one by one, play continued from the board in a new segment, the
//! board and the clock handed back when a gap closes, and the trackers that follow a story.

use shakmaty::{Chess, Color, Move, Position};

use super::state::Gap;
use super::{Host, evidence, memory, reading};
use crate::board::Placement;
use crate::board_input::{ClockReading, SquareContent};
use crate::event::Event;
use crate::fact::Fact;
use crate::tracker::{Tracker, TrackerEvent};
use crate::vocab::Millis;

/// Publish `moves` through the tracker, one whole board per move, as if the board had
/// been read after each; `stamps[k]`: the mover's clock time after move k, if known;
/// `earlier`: each side's last time the board's memory logged before the gap.
pub(super) fn replay_moves(
    h: &mut dyn Host,
    moves: &[Move],
    stamps: &[Option<(Color, u64)>],
    earlier: [Option<u64>; 2],
    now: Millis,
    out: &mut Vec<Event>,
) {
    let o = reading::orientation(h);
    // Each side's time as last known: the mover's clock runs, the other's stands.
    let mut last = [
        h.arbiter().clock().known_time_ms(Color::White),
        h.arbiter().clock().known_time_ms(Color::Black),
    ];
    for (slot, logged) in last.iter_mut().zip(earlier) {
        *slot = slot.or(logged);
    }
    for (k, &m) in moves.iter().enumerate() {
        let mut next: Chess = h.tracker().position().clone();
        next.play_unchecked(m);
        let fields = Placement::from_board(next.board()).to_wire(o);
        let tracked = read_as(h, m, &fields, now);
        let before = out.len();
        h.apply_tracker(tracked, now, out);
        if h.tracker().position() != &next {
            h.report(Fact::ReplayMisread { k });
            return;
        }
        if let Some(Some((color, ms))) = stamps.get(k) {
            h.arbiter_mut().recovered_press(*color, *ms);
            last[usize::from(*color == Color::Black)] = Some(*ms);
        }
        if stamps.is_empty() {
            continue;
        }
        for e in &mut out[before..] {
            if let Event::MovePlayed {
                white_ms, black_ms, ..
            } = e
            {
                if let Some(ms) = last[0] {
                    *white_ms = ms;
                }
                if let Some(ms) = last[1] {
                    *black_ms = ms;
                }
            }
        }
    }
}

/// The tracker's reading of the whole board `fields` after the recovered move `m`: as it
/// reads it when that is `m` alone. Otherwise `m` is played as shown and the board read after
/// it: the move an operator's takeback just removed, which the tracker does not read again
/// from the board alone, or readings left from before the gap that the tracker would take
/// as witnessing another story (pieces moved live just before an unplug: the recovered
/// moves played, taken back and a shorter story played in one reading, whose moves the
/// record, which takes each event in turn, could not follow).
fn read_as(
    h: &mut dyn Host,
    m: Move,
    fields: &[SquareContent; 64],
    now: Millis,
) -> Vec<TrackerEvent> {
    let mut trial = h.tracker().clone();
    let mut tracked = trial.on_board_dump(fields, now);
    // A recovered move is complete (play went on after it): never held.
    tracked.extend(trial.release_held());
    let mut moved = tracked.iter().filter(|e| {
        matches!(
            e,
            TrackerEvent::MovePlayed { .. } | TrackerEvent::MoveRetracted { .. }
        )
    });
    let just_m = matches!(moved.next(), Some(TrackerEvent::MovePlayed { mv }) if *mv == m)
        && moved.next().is_none();
    if just_m {
        *h.tracker_mut() = trial;
        return tracked;
    }
    let tracker = h.tracker_mut();
    let mut tracked = tracker.play_shown(m);
    tracked.extend(tracker.on_board_dump(fields, now));
    tracked.extend(tracker.release_held());
    tracked
}

/// Play continues from the board the gap `g` holds as it stands, in a new segment (the side
/// the clock says is to move, see [`evidence::side_to_move`], else the side the record has);
/// no one is accused. On a board that shows the record's position, the record's side is to
/// move: a running clock is no proof of the turn (the board back at the record's position by
/// a cycle, Rf8 Kg1 Re8 Kf1, showed White's Kf1 made and not yet pressed, and a segment with
/// White to move lost every move after it).
/// Returns false when the board cannot be a position (pieces in hand: keep waiting).
pub(super) fn continue_from_board(
    h: &mut dyn Host,
    g: Option<&Gap>,
    note: &str,
    now: Millis,
    out: &mut Vec<Event>,
) -> bool {
    let Some(fields) = g.and_then(|g| g.sensed.as_ref()) else {
        return false;
    };
    let record = h.tracker().position();
    let turn = if reading::board_of(h, fields) == *record.board() {
        record.turn()
    } else {
        evidence::side_to_move(h, g).unwrap_or_else(|| record.turn())
    };
    let mut trial = h.tracker().clone();
    let _ = trial.on_board_dump(fields, now);
    if trial.adopt_placement(turn).is_err() {
        return false;
    }
    let _ = h.tracker_mut().on_board_dump(fields, now);
    match h.tracker_mut().adopt_placement(turn) {
        Ok(_) => {
            h.report(Fact::NewSegment {
                note: note.to_owned(),
            });
            let position = h.tracker().position().clone();
            let ruled = h.arbiter_mut().continue_after_gap(position, note);
            h.apply_arbiter(ruled, out);
            true
        }
        Err(_) => false,
    }
}

/// The moves the board's memory had (`found`), published with their press times when the
/// board now (`fields`) follows from them, then `note` in the record. False: the board does
/// not follow (the memory was read seconds ago), nothing is published.
pub(super) fn memory_moves(
    h: &mut dyn Host,
    found: &memory::Recovered,
    fields: &[SquareContent; 64],
    note: String,
    now: Millis,
    out: &mut Vec<Event>,
) -> bool {
    let n = found.moves.len();
    if evidence::memory_presses_contradict(h, found) {
        h.report(Fact::MemoryPressesContradict { plies: n });
        return false;
    }
    let (stamps, earlier) = evidence::memory_stamps(h, found);
    let mut end = h.tracker().position().clone();
    for &m in &found.moves {
        end.play_unchecked(m);
    }
    if !reading::board_follows(&end, &reading::board_of(h, fields)) {
        h.report(Fact::MemoryContradicted { plies: n });
        return false;
    }
    h.report(Fact::RecoveredFromMemory { plies: n });
    replay_moves(h, &found.moves, &stamps, earlier, now, out);
    h.arbiter_mut().note(note);
    true
}

/// A gap closed: the tracker reads the board as it stands (`sensed`), the arbiter the clock
/// (`clock`, the reading held back).
pub(super) fn hand_back(
    h: &mut dyn Host,
    sensed: Option<&[SquareContent; 64]>,
    clock: Option<&ClockReading>,
    now: Millis,
    out: &mut Vec<Event>,
) {
    if let Some(fields) = sensed {
        let tracked = h.tracker_mut().on_board_dump(fields, now);
        h.apply_tracker(tracked, now, out);
    }
    h.arbiter_mut().after_gap();
    h.clock_after_gap(clock, now, out);
}

/// A tracker after `moves`, reading `fields` as the board now.
pub(super) fn shadow_after(
    h: &dyn Host,
    moves: &[Move],
    fields: &[SquareContent; 64],
    now: Millis,
) -> Tracker {
    let mut shadow = h.tracker().clone();
    let o = reading::orientation(h);
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
