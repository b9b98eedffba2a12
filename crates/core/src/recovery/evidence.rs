//! What the clock and the board's memory witness about a gap, read through the arbiter's
//! clock (which display is whose, the increment in force): the clock's readings around the
//! gap, the side whose clock runs now, the memory's press times as each side's.

use shakmaty::{Chess, Color, Position};

use super::state::Gap;
use super::{FEWER_PIECES_SETTLED_MS, Host, SETTLED_MS, clock, memory, proof, reading};
use crate::arbiter::clock::Display;
use crate::board_input::SquareContent;
use crate::tracker::sequences as search;
use crate::vocab::Millis;

/// The search on the board the gap holds (`fields`) from the tracker's position (`from`),
/// cut by the clock's witness and the first board read after the gap; and, for a single
/// sequence found on a `position` (a press, a settled reading), why it is not proven.
pub(super) fn explain(
    h: &dyn Host,
    g: &Gap,
    from: &Chess,
    fields: &[SquareContent; 64],
    position: bool,
) -> (search::Outcome, Option<proof::Verdict>) {
    let (start_ply, first) = g.start;
    let board = reading::board_of(h, fields);
    let witness = clock_witness(h, g);
    // The clock counts the plies since the gap began: those published since (from the
    // board's memory, by the arbiter) count too.
    let done = h.tracker().moves().len().checked_sub(start_ply);
    let fits = |n: usize| match (witness, done) {
        (Some(w), Some(done)) => w.allows(first, done + n),
        (Some(_), None) => true,
        (None, _) => true,
    };
    let most = witness
        .and_then(|w| w.most_plies(first))
        .zip(done)
        .map(|(most, done)| most.saturating_sub(done));
    let mut outcome = search::explain_within(from, &board, clock_side(h, Some(g)), &fits);
    let first_board = g.first_read.map(|f| reading::board_of(h, &f));
    if outcome == search::Outcome::Same
        && let Some(first) = &first_board
    {
        // Back to the known position, but the first reading after the gap was another:
        // moves were made and came back (a repetition), not none.
        outcome = search::explain_through(from, first, &board);
    }
    if let Some(first) = &first_board {
        outcome = reading::through_first_read(from, first, &board, outcome);
    }
    // A single sequence is published only when the evidence proves it (see `proof.rs`): a
    // gap may have held more plies than the shortest story.
    let doubt = match &outcome {
        search::Outcome::Unique(moves) if position => {
            match proof::judge(from, &board, moves, most, &fits) {
                proof::Verdict::Proven
                    if proof::begun_rival(
                        from,
                        &board,
                        moves,
                        clock_side(h, Some(g)),
                        &reading::one_move_begun,
                    ) =>
                {
                    Some(proof::Verdict::Begun)
                }
                proof::Verdict::Proven => None,
                doubt => Some(doubt),
            }
        }
        _ => None,
    };
    (outcome, doubt)
}

/// How long the board as sensed must stand still to count as a position (see
/// [`FEWER_PIECES_SETTLED_MS`]).
pub(super) fn settle_ms(h: &dyn Host, gap: Option<&Gap>) -> Millis {
    if gap.is_some_and(|g| fewer_pieces(h, g)) {
        FEWER_PIECES_SETTLED_MS
    } else {
        SETTLED_MS
    }
}

/// Whether the board as sensed has fewer pieces than the record's position: a capture made
/// in the gap, or a piece in hand, which only time (or a press) tells apart.
pub(super) fn fewer_pieces(h: &dyn Host, g: &Gap) -> bool {
    g.sensed.is_some_and(|f| {
        reading::board_of(h, &f).occupied().count()
            < h.tracker().position().board().occupied().count()
    })
}

/// Each recovered move's mover (read from the record's side to move), with the press the
/// memory logged after it, if any: the side whose display it was on and the time it showed.
fn memory_presses<'a>(
    h: &'a dyn Host,
    found: &'a memory::Recovered,
) -> impl Iterator<Item = (Color, Option<(Color, u64)>)> + 'a {
    let clock = h.arbiter().clock();
    let first = h.tracker().position().turn();
    let side = move |left: bool| clock.color_of(if left { Display::Left } else { Display::Right });
    found.presses.iter().enumerate().map(move |(k, press)| {
        (
            memory::mover(first, k),
            press.map(|(left, ms)| (side(left), ms)),
        )
    })
}

/// The clock's readings around the gap, when both are known (see [`clock::Witness`]).
pub(super) fn clock_witness(h: &dyn Host, g: &Gap) -> Option<clock::Witness> {
    if h.without_clock_witness() {
        return None;
    }
    let before = g.clock_before?;
    let (t, clock_at) = g.clock.as_ref()?;
    if !t.status.connected || *clock_at <= before.at {
        return None;
    }
    let mut times = [0, 0];
    for (display, time) in [(Display::Left, t.left), (Display::Right, t.right)] {
        let color = h.arbiter().clock().color_of(display);
        times[usize::from(color == Color::Black)] = time.as_millis();
    }
    let completed = (h.tracker().moves().len() / 2) as u32;
    let increment_ms = h
        .arbiter()
        .config()
        .time_control
        .as_ref()
        .map(|tc| tc.increment_after(completed))
        .or(h.arbiter().clock().observed_increment_ms())
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

/// The side whose clock runs, from the reading the gap holds.
pub(super) fn clock_side(h: &dyn Host, g: Option<&Gap>) -> Option<Color> {
    let (t, _) = g?.clock.as_ref()?;
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
    Some(h.arbiter().clock().color_of(display))
}

/// The position before the record's last move, when the tracker stands at the record's last
/// position: the tracker's own, or the arbiter's (a tracker started after a restart has only
/// the last position).
pub(super) fn previous_position(h: &dyn Host) -> Option<&Chess> {
    let tracker = h.tracker();
    tracker.previous_position().or_else(|| {
        let arbiter = h.arbiter();
        (arbiter.position().board() == tracker.position().board()
            && arbiter.position().turn() == tracker.position().turn())
        .then(|| arbiter.previous_position())
        .flatten()
    })
}

/// The side to move on the board the gap holds, by the clock (see [`clock_side`]): a piece of
/// the side whose clock runs set down since that reading is that side's move, whose press
/// the reading cannot show (pressed a moment later, or read late on a slow line), so the
/// other side is to move. One reading of a running clock is not the turn when the board has
/// moved on since.
pub(super) fn side_to_move(h: &dyn Host, g: Option<&Gap>) -> Option<Color> {
    let running = clock_side(h, g)?;
    let g = g?;
    let read_at = g.clock.as_ref()?.1;
    let moved_since = g
        .last_set_down
        .is_some_and(|(c, at)| c == running && at >= read_at);
    Some(if moved_since { !running } else { running })
}

/// The clock at the gap's start, when the arbiter knows both times and the clock is
/// connected: what the witness counts from.
pub(super) fn clock_before(h: &dyn Host, now: Option<Millis>) -> Option<clock::Reading> {
    let c = h.arbiter().clock();
    match (
        now,
        c.known_time_ms(Color::White),
        c.known_time_ms(Color::Black),
    ) {
        (Some(at), Some(w), Some(b)) if c.connected() => Some(clock::Reading {
            times: [w, b],
            running: c.running().is_some(),
            at,
        }),
        _ => None,
    }
}

/// The memory's press times as the mover's clock time after each recovered move (`None`:
/// no press logged, or one on the other side's display), and each side's last time the
/// memory logged before the gap.
pub(super) type Stamps = (Vec<Option<(Color, u64)>>, [Option<u64>; 2]);

/// Whether a lever press the memory logged after a recovered move was the other side's (the
/// clock's sides known): the moves were read with the wrong side to move. A memory that
/// reaches back only to the known board with play gone on (the board lost power during the
/// gap) is read from the record's side to move, and an odd cycle back to that board (Qc5 Rh3
/// Kh8 Rg3 Qe5 Rf3 Kg7) leaves it the other side's: White's Qf2 and Black's Rb8 after it
/// read as ...Rb8 Qf2, two plies in place of nine, in sync.
pub(super) fn memory_presses_contradict(h: &dyn Host, found: &memory::Recovered) -> bool {
    h.arbiter().clock().white_known()
        && memory_presses(h, found).any(|(mover, press)| press.is_some_and(|(c, _)| c != mover))
}

pub(super) fn memory_stamps(h: &dyn Host, found: &memory::Recovered) -> Stamps {
    let stamps = memory_presses(h, found)
        .map(|(mover, press)| press.filter(|&(color, _)| color == mover))
        .collect();
    let mut earlier = [None, None];
    for (i, display) in [Display::Left, Display::Right].into_iter().enumerate() {
        let color = h.arbiter().clock().color_of(display);
        earlier[usize::from(color == Color::Black)] = found.before[i];
    }
    (stamps, earlier)
}
