//! The recovery machine through the session's inputs: a still board the readings leave two
//! move orders for is asked about after two seconds, the arbiter's answer (or the next move)
//! settles it; and what `NewGame`, `SetPosition`, `TakeBack` and `ResolveGap` do while a gap
//! is open.

mod session_support;

use eboard_core::board::{Orientation, Placement};
use eboard_core::session::{Command, Event, Input, STILL_ASK_MS, Session, SessionConfig};
use eboard_core::vocab::{CommandError, Millis};
use eboard_sim::rig::Rig;
use session_support::{Clocked, accusations, assert_gap_lists, noisy_rig, resolve_gap};
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Color, Piece, Position, Role, Square};

const PAWNS: &str = "4k3/8/8/8/2p5/8/1P6/4K3 w - - 0 1";

fn pawn(color: Color) -> Option<Piece> {
    Some(Piece {
        color,
        role: Role::Pawn,
    })
}

fn accused(events: &[Event]) -> bool {
    !accusations(events).is_empty()
}

/// No clock: b2-b3, ...c4-c3 at once, then b3-b4 at once. Read without a clock, b2-b4 with
/// the reply made while the pawn passed b3 leaves the same readings: two move orders, the
/// board cannot tell which (b3 c3 b4, or b4 c3).
fn two_move_orders() -> Clocked {
    let mut s = Clocked::new(SessionConfig::default(), Orientation::Normal);
    let start: Chess = PAWNS
        .parse::<Fen>()
        .unwrap()
        .into_position(CastlingMode::Standard)
        .unwrap();
    s.feed(Input::Command(Command::SetPosition(PAWNS.into())));
    s.dump(&Placement::from_board(start.board()));
    s.wait(3_000);
    s.field(Square::B2, None);
    s.now += 60;
    s.field(Square::B3, pawn(Color::White));
    s.now += 80;
    s.field(Square::C4, None);
    s.now += 60;
    s.field(Square::C3, pawn(Color::Black));
    s.now += 80;
    s.field(Square::B3, None);
    s.now += 60;
    s.field(Square::B4, pawn(Color::White));
    s
}

/// Time passes in ticks of 100 ms, as a link gives them, for `ms`.
fn stand(s: &mut Clocked, ms: Millis) {
    let until = s.now + ms;
    while s.now < until {
        s.wait(100);
    }
}

#[test]
fn a_still_board_two_move_orders_explain_is_asked_about_after_two_seconds() {
    let mut s = two_move_orders();
    let placed = s.now;
    let due = s
        .session
        .next_wakeup()
        .expect("the question is due at some time");
    assert!(due <= placed + STILL_ASK_MS, "{due} {placed}");
    stand(&mut s, STILL_ASK_MS - 300);
    assert_eq!(s.session.view().gap, "", "not yet: the hand may still move");
    stand(&mut s, 400);
    let gap = s.session.view().gap.clone();
    assert!(gap.contains("2 move orders explain it"), "{gap}");
    assert!(gap.contains("b3 c3 b4 [b2b3 c4c3 b3b4]"), "{gap}");
    assert!(gap.contains("b4 c3 [b2b4 c4c3]"), "{gap}");
    assert!(gap.contains("ResolveGap"), "{gap}");
    assert!(!accused(&s.events), "{:?}", s.events);
    // The question stands while the board does.
    stand(&mut s, 5_000);
    assert_eq!(s.session.view().gap, gap);
}

#[test]
fn the_arbiter_picks_the_longer_move_order() {
    let mut s = two_move_orders();
    stand(&mut s, STILL_ASK_MS + 200);
    let wrong = s.session.handle(
        Input::Command(Command::ResolveGap(vec!["b2b4".into()])),
        s.now,
    );
    assert!(
        matches!(&wrong, Err(CommandError::InvalidArgument(m)) if m.contains("none of the move orders")),
        "{wrong:?}"
    );
    s.feed(Input::Command(Command::ResolveGap(vec![
        "b2b3".into(),
        "c4c3".into(),
        "b3b4".into(),
    ])));
    let view = s.session.view();
    assert_eq!(view.moves, ["b3", "c3", "b4"]);
    assert_eq!(view.gap, "");
    assert!(view.in_sync);
    assert_eq!(view.turn, "black");
    stand(&mut s, 3_000);
    assert_eq!(s.session.view().moves, ["b3", "c3", "b4"]);
    assert_eq!(s.session.view().gap, "", "answered: not asked again");
    assert!(!accused(&s.events));
}

#[test]
fn the_arbiter_picks_the_shorter_move_order() {
    let mut s = two_move_orders();
    stand(&mut s, STILL_ASK_MS + 200);
    s.feed(Input::Command(Command::ResolveGap(vec![
        "b2b4".into(),
        "c4c3".into(),
    ])));
    let view = s.session.view();
    assert_eq!(view.moves, ["b4", "c3"]);
    assert_eq!(view.gap, "");
    assert!(view.in_sync);
    assert_eq!(view.turn, "white");
    // White plays on.
    s.field(Square::E1, None);
    s.now += 100;
    s.field(Square::D1, Some(Piece::from_char('K').unwrap()));
    stand(&mut s, 3_000);
    assert_eq!(s.session.view().moves, ["b4", "c3", "Kd1"]);
    assert!(!accused(&s.events));
}

#[test]
fn the_next_move_settles_the_question_without_the_arbiter() {
    let mut s = two_move_orders();
    stand(&mut s, STILL_ASK_MS + 200);
    assert_ne!(s.session.view().gap, "");
    // Black's king steps: only after b3 c3 b4 is it Black's turn.
    s.field(Square::E8, None);
    s.now += 100;
    s.field(Square::D8, Some(Piece::from_char('k').unwrap()));
    stand(&mut s, 3_000);
    let view = s.session.view();
    assert_eq!(view.moves, ["b3", "c3", "b4", "Kd8"]);
    assert_eq!(view.gap, "");
    assert!(!accused(&s.events));
}

#[test]
fn a_played_game_with_nothing_to_ask_never_says_gap() {
    let mut s = Clocked::new(SessionConfig::default(), Orientation::Normal);
    s.dump(&Placement::start());
    for (from, to, piece) in [
        (Square::E2, Square::E4, 'P'),
        (Square::E7, Square::E5, 'p'),
        (Square::G1, Square::F3, 'N'),
    ] {
        s.field(from, None);
        s.now += 100;
        s.field(to, Some(Piece::from_char(piece).unwrap()));
        stand(&mut s, 2_500);
        assert_eq!(s.session.view().gap, "");
    }
    assert_eq!(s.session.view().moves, ["e4", "e5", "Nf3"]);
}

// ----- commands while a gap is open ---------------------------------------------------

fn rig(seed: u64) -> Rig {
    noisy_rig("recovery", seed).0
}

/// e4 e5 seen, then Nf3 Nc6 Bc4 played while unplugged, and the board plugged in again.
fn unplugged_for_three_plies(seed: u64) -> Rig {
    let mut rig = rig(seed);
    for san in ["e4", "e5"] {
        rig.play(san).unwrap();
    }
    rig.advance(3_000);
    rig.unplug();
    for san in ["Nf3", "Nc6", "Bc4"] {
        rig.play(san).unwrap();
    }
    rig.replug();
    rig
}

/// [`unplugged_for_three_plies`]: two orders reach the board, the gap waits for the arbiter.
fn choosing(seed: u64) -> Rig {
    let mut rig = unplugged_for_three_plies(seed);
    rig.advance(3_000);
    let gap = &rig.session().view().gap;
    assert!(gap.starts_with("2 sequences explain the board"), "{gap}");
    rig.take_events();
    rig
}

#[test]
fn new_game_while_a_gap_waits_ends_it_and_reads_the_board_against_the_start() {
    let mut rig = choosing(31);
    rig.command(Command::NewGame).unwrap();
    let view = rig.session().view().clone();
    assert_eq!(
        view.gap, "",
        "the gap's moves belong to the game left behind"
    );
    assert!(view.moves.is_empty());
    assert!(!view.in_sync, "the board still shows the old game");
    let closed = resolve_gap(&mut rig, &[]);
    assert!(
        matches!(&closed, Err(CommandError::InvalidArgument(m)) if m.contains("no gap is open")),
        "{closed:?}"
    );
    // The players set up the pieces: the new game is followed.
    rig.new_game();
    rig.play("d4").unwrap();
    rig.advance(3_000);
    let view = rig.session().view();
    assert_eq!(view.moves, ["d4"]);
    assert!(view.in_sync);
    assert_eq!(view.gap, "");
}

#[test]
fn set_position_while_a_gap_waits_ends_it_and_follows_the_board_from_there() {
    let mut rig = choosing(32);
    // The arbiter sets up the position the board shows, Black to move.
    let fen = "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3";
    rig.command(Command::SetPosition(fen.into())).unwrap();
    rig.advance(1_000);
    let view = rig.session().view().clone();
    assert_eq!(view.gap, "");
    assert!(view.in_sync, "the board shows the position set");
    assert!(view.moves.is_empty());
    rig.play("Nf6").unwrap();
    rig.advance(3_000);
    assert_eq!(rig.session().view().moves, ["Nf6"]);
    assert!(!accused(&rig.take_events()));
}

#[test]
fn take_back_while_a_gap_waits_searches_again_from_the_position_before() {
    let mut rig = choosing(33);
    rig.command(Command::TakeBack).unwrap();
    let view = rig.session().view().clone();
    assert_eq!(view.moves, ["e4"], "the record's last move went");
    // From 1. e4 the board is five plies away: e5 and the gap's three, in two orders.
    assert_gap_lists(
        &view.gap,
        &[
            "sequences explain the board",
            "e5 Nf3 Nc6 Bc4 [e7e5 g1f3 b8c6 f1c4]",
        ],
    );
    let old_line = resolve_gap(&mut rig, &["g1f3", "b8c6", "f1c4"]);
    assert!(
        matches!(&old_line, Err(CommandError::InvalidArgument(m)) if m.contains("move 1 `g1f3`")),
        "from the position before the takeback, it is Black's move: {old_line:?}"
    );
    resolve_gap(&mut rig, &["e7e5", "g1f3", "b8c6", "f1c4"]).unwrap();
    rig.advance(1_000);
    let view = rig.session().view();
    assert_eq!(view.moves, ["e4", "e5", "Nf3", "Nc6", "Bc4"]);
    assert_eq!(view.gap, "");
    assert!(view.in_sync);
    assert!(!accused(&rig.take_events()));
}

#[test]
fn resolve_gap_before_the_board_is_read_again_says_so() {
    let mut rig = rig(34);
    for san in ["e4", "e5"] {
        rig.play(san).unwrap();
    }
    rig.advance(3_000);
    rig.unplug();
    rig.advance(500);
    let early = resolve_gap(&mut rig, &["g1f3"]);
    assert!(
        matches!(&early, Err(CommandError::InvalidArgument(m)) if m.contains("not been read")),
        "{early:?}"
    );
    rig.play("Nf3").unwrap();
    rig.replug();
    rig.advance(3_000);
    let view = rig.session().view();
    assert_eq!(view.moves, ["e4", "e5", "Nf3"]);
    assert_eq!(view.gap, "");
}

#[test]
fn a_gap_waiting_for_the_memory_is_in_the_sessions_wakeup() {
    let mut rig = unplugged_for_three_plies(35);
    // The first board is read and the memory asked for: the session has deadlines of its
    // own now (the memory's wait, the board settling), not just the link's ticks.
    rig.advance(300);
    let now = rig.now();
    let wake = rig.session().next_wakeup().expect("the gap waits on time");
    assert!(
        wake <= now + eboard_core::session::MEMORY_WAIT_MS,
        "{wake} {now}"
    );
}

/// A session that was never given a board has nothing to wait for.
#[test]
fn an_idle_session_has_no_recovery_deadline() {
    let s = Session::new(SessionConfig::default());
    assert_eq!(s.next_wakeup(), None);
}

/// A gap that closed on the known position is watched until the first move, the clock read
/// live. A flag that falls meanwhile ends the game, and the watch with it: the players then
/// set the pieces aside as they like, and no gap opens on a finished game (the board standing
/// out of sync reopened it, and `Gap` asked the arbiter about moves after the end).
#[test]
fn a_game_that_ends_while_a_closed_gap_is_watched_opens_no_gap_after() {
    use eboard_sim::{BoardOptions, ClockSetup, Noise};
    let mut rig = Rig::new(
        BoardOptions {
            clock_setup: ClockSetup {
                base_ms: 6_000,
                increment_ms: 0,
            },
            ..BoardOptions::default()
        },
        SessionConfig {
            name: "watched-then-flag".into(),
            ..SessionConfig::default()
        },
        3,
        Noise::Clean,
    );
    rig.play("e4").unwrap();
    rig.play("e5").unwrap();
    rig.kill();
    rig.advance(300);
    rig.restart();
    rig.advance(1_500);
    assert_eq!(
        rig.session().view().gap,
        "",
        "the gap closed on the known position"
    );
    assert_eq!(rig.session().view().state, "playing");
    rig.advance(8_000);
    let view = rig.session().view();
    assert_eq!(
        (view.state.as_str(), view.termination.as_str()),
        ("finished", "time-forfeit"),
        "the case: White's flag fell"
    );
    // The players clear the pieces off the board after the game.
    let now = rig.now();
    for sq in [Square::E4, Square::E5, Square::D1, Square::D8] {
        rig.board.lift(sq, now);
    }
    rig.advance(STILL_ASK_MS + 3_000);
    let view = rig.session().view();
    assert_eq!(view.gap, "", "no gap on a finished game");
    assert_eq!(view.state, "finished");
    assert!(!accused(rig.journal()), "nobody is accused");
}
