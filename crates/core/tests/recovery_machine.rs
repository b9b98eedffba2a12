//! The recovery as a machine of its own: driven here by a host that is not the session (a
//! tracker and an arbiter, and a log of what it was asked to apply), through its `handle_*`,
//! `poll_*` and `next_wakeup` alone.

use eboard_core::arbiter::{Arbiter, ArbiterConfig, Ruling};
use eboard_core::board::{Orientation, Placement};
use eboard_core::board_input::{BoardInput, ClockReading};
use eboard_core::event::Event;
use eboard_core::fact::Fact;
use eboard_core::recovery::{BoardRequest, Cause, Host, MEMORY_WAIT_MS, Recovery};
use eboard_core::tracker::{Tracker, TrackerEvent};
use eboard_core::vocab::{Millis, OrientationSetting};
use shakmaty::{Chess, Position};

/// A game on, with the tracker and the arbiter the recovery may move on, and what it asked.
struct Table {
    tracker: Tracker,
    arbiter: Arbiter,
    played: Vec<String>,
    facts: Vec<Fact>,
    held_back: usize,
}

impl Table {
    fn new() -> Table {
        Table {
            tracker: Tracker::new(Chess::default(), OrientationSetting::Auto),
            arbiter: Arbiter::new(ArbiterConfig::default(), Chess::default(), Vec::new()),
            played: Vec::new(),
            facts: Vec::new(),
            held_back: 0,
        }
    }
}

impl Host for Table {
    fn tracker(&self) -> &Tracker {
        &self.tracker
    }
    fn tracker_mut(&mut self) -> &mut Tracker {
        &mut self.tracker
    }
    fn arbiter(&self) -> &Arbiter {
        &self.arbiter
    }
    fn arbiter_mut(&mut self) -> &mut Arbiter {
        &mut self.arbiter
    }
    fn game_on(&self) -> bool {
        true
    }
    fn without_clock_witness(&self) -> bool {
        false
    }
    fn orientation_learnt(&self) -> bool {
        true
    }
    fn apply_tracker(&mut self, events: Vec<TrackerEvent>, now: Millis, _: &mut Vec<Event>) {
        for e in events {
            if let TrackerEvent::MovePlayed { mv, .. } = e {
                let _ = self.arbiter.on_move(mv, now);
                self.played
                    .push(mv.to_uci(shakmaty::CastlingMode::Standard).to_string());
            }
        }
    }
    fn apply_arbiter(&mut self, _: Vec<Ruling>, _: &mut Vec<Event>) {}
    fn clock_after_gap(&mut self, _: Option<&ClockReading>, _: Millis, _: &mut Vec<Event>) {}
    fn hold_back(&mut self) {
        self.held_back += 1;
    }
    fn report(&mut self, fact: Fact) {
        self.facts.push(fact);
    }
}

/// The whole board after `uci` moves from the start, as the board sends it.
fn dump(uci: &[&str]) -> BoardInput {
    let mut pos = Chess::default();
    for m in uci {
        let mv = m
            .parse::<shakmaty::uci::UciMove>()
            .unwrap()
            .to_move(&pos)
            .unwrap();
        pos.play_unchecked(mv);
    }
    BoardInput::Scan(Box::new(
        Placement::from_board(pos.board()).to_wire(Orientation::Normal),
    ))
}

#[test]
fn a_gap_is_opened_read_asked_about_and_resolved_by_the_machine_alone() {
    let mut table = Table::new();
    let mut recovery = Recovery::default();
    let mut out = Vec::new();
    // Link down with a game on: the board is held back from now.
    recovery.handle_unread(&mut table, Cause::Disconnected, Some(1_000));
    assert!(recovery.is_open());
    assert_eq!(table.held_back, 1);
    recovery.handle_link_up(5_000);
    // The first whole board shows two plies made meanwhile: the memory is asked for.
    assert!(recovery.handle_message(&mut table, &dump(&["e2e4", "e7e5"]), 5_100, &mut out));
    assert_eq!(recovery.poll_request(), Some(BoardRequest::ReadMemory));
    assert_eq!(recovery.poll_request(), None);
    assert!(table.played.is_empty(), "nothing is published unproven");
    // Its deadline reaches the caller: the memory is awaited so long at most.
    let due = recovery
        .next_wakeup(&table)
        .expect("the recovery waits on time");
    assert!(due <= 5_100 + MEMORY_WAIT_MS, "{due}");
    // A listen-only shell cannot ask: the search alone decides, and with no clock to bound
    // the plies made it asks the arbiter with the one story it found.
    recovery.handle_no_memory(&mut table, 5_200, &mut out);
    assert!(recovery.handle_tick(&mut table, 9_000, &mut out));
    let text = recovery.text();
    assert!(text.contains("e4") && text.contains("ResolveGap"), "{text}");
    // The arbiter's answer is checked against the board, then published through the host.
    assert!(
        recovery
            .handle_resolve(&mut table, &["e2e4".into(), "e7e6".into()], 9_500, &mut out)
            .is_err()
    );
    recovery
        .handle_resolve(&mut table, &["e2e4".into(), "e7e5".into()], 9_600, &mut out)
        .expect("the board's moves");
    assert_eq!(table.played, ["e2e4", "e7e5"]);
    assert!(!recovery.is_open());
    assert_eq!(recovery.text(), "");
    assert!(
        table
            .facts
            .iter()
            .any(|f| matches!(f, Fact::ResolvedByArbiter { .. })),
        "{:?}",
        table.facts
    );
}

#[test]
fn a_lost_frame_asks_for_a_whole_board_which_closes_the_gap_on_the_known_position() {
    let mut table = Table::new();
    let mut recovery = Recovery::default();
    // With a game on, a lost frame asks for a whole board at once.
    recovery.handle_line_loss(&mut table, 100);
    assert!(recovery.is_open());
    assert_eq!(recovery.poll_request(), Some(BoardRequest::SendBoard));
    // The same board as known: closed, nothing published.
    let mut out = Vec::new();
    assert!(recovery.handle_message(&mut table, &dump(&[]), 200, &mut out));
    assert!(!recovery.is_open());
    assert!(table.played.is_empty());
}
