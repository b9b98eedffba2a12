//! Gaps in the link, pure: the simulated board (with its EEPROM log) and a session wired
//! byte for byte in memory ([`eboard_sim::rig::Rig`]), stepped time. Link drops, power
//! loss, daemon restarts and lost frames while players go on moving: every move is recovered
//! or left to the arbiter, and nobody is accused.

mod session_support;

use eboard_core::arbiter::ArbiterConfig;
use eboard_core::contract::{BoardProps, IllegalCounts};
use eboard_core::session::{Command, Event, SessionConfig};
use eboard_core::vocab::CommandError;
use eboard_sim::handling::SensorStep;
use eboard_sim::rig::Rig;
use eboard_sim::{BoardOptions, Noise};
use session_support::{accusations, assert_gap_lists, noisy_rig, resolve_gap};
use shakmaty::{Color, Piece, Role, Square};

const RUY: &str = "e4 e5 Nf3 Nc6 Bb5 a6 Ba4 Nf6 O-O Be7 Re1 b5 Bb3 d6 c3 O-O h3 Nb8 d4 Nbd7 \
                   c4 c6 cxb5 axb5 Nc3 Bb7 Bg5 b4 Nb1 h6";

fn rig(seed: u64) -> Rig {
    let (rig, start) = noisy_rig("gap", seed);
    let started = start.iter().any(|e| matches!(e, Event::GameStarted { .. }));
    assert!(started, "the start position begins a game");
    rig
}

/// [`rig`] with the board's time control configured (the simulated clock's 3+2): the
/// session knows the increment before a press could show it (the clock starts at 3:02, so
/// White's first press adds nothing it could see). With the increment the clock's times
/// after a gap count the presses made meanwhile, which proves a single short sequence.
fn rig_with_control(seed: u64) -> Rig {
    let mut rig = Rig::new(
        BoardOptions::default(),
        SessionConfig {
            name: "gap".into(),
            arbiter: ArbiterConfig {
                time_control: Some("180+2".parse().expect("3+2")),
                ..ArbiterConfig::default()
            },
            ..SessionConfig::default()
        },
        seed,
        Noise::Noisy,
    );
    rig.take_events();
    rig
}

fn play(rig: &mut Rig, sans: &[&str]) {
    for san in sans {
        rig.play(san).unwrap();
    }
}

/// The PGN with its line breaks as spaces (comments wrap).
fn flat(pgn: &str) -> String {
    pgn.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn assert_no_accusations(events: &[Event]) {
    let accused = accusations(events);
    assert!(accused.is_empty(), "{accused:?}");
}

/// The PGN carries `note` (a gap's explanation).
fn assert_pgn_says(view: &BoardProps, note: &str) {
    assert!(flat(&view.pgn).contains(note), "{}", view.pgn);
}

/// How the link breaks in a gap (and comes back).
#[derive(Debug, Clone, Copy)]
enum Gap {
    /// The daemon killed and restarted.
    Killed,
    /// The board unplugged and plugged in again.
    Unplugged,
    /// The link drops with the board's power on.
    Dropped,
}

/// Plays `before` and checks the session has it, breaks the link (`gap`) while `during` is
/// played, restores it and gives it 3 s. Returns the events from the break on, and the view.
fn through_gap(
    rig: &mut Rig,
    before: &[&str],
    gap: Gap,
    during: &[&str],
) -> (Vec<Event>, BoardProps) {
    play(rig, before);
    rig.advance(3_000);
    assert_eq!(rig.session().view().moves, before, "before the gap");
    rig.take_events();
    match gap {
        Gap::Killed => rig.kill(),
        Gap::Unplugged => rig.unplug(),
        Gap::Dropped => rig.disconnect(),
    }
    play(rig, during);
    match gap {
        Gap::Killed => rig.restart(),
        Gap::Unplugged => rig.replug(),
        Gap::Dropped => rig.connect(),
    }
    rig.advance(3_000);
    (rig.take_events(), rig.session().view().clone())
}

/// e4 e5, then Nf3 Nc6 Bc4 while the board is unplugged: two move orders explain the board
/// (Bc4 Nc6 Nf3 too), so the gap waits for the arbiter.
fn unplugged_over_two_orders(seed: u64) -> (Rig, Vec<Event>, BoardProps) {
    let mut rig = rig(seed);
    let (events, view) = through_gap(
        &mut rig,
        &["e4", "e5"],
        Gap::Unplugged,
        &["Nf3", "Nc6", "Bc4"],
    );
    (rig, events, view)
}

/// `sans` played after a gap closed are followed: in sync, no gap, the record ending with
/// them, and nobody accused.
fn assert_play_goes_on(rig: &mut Rig, sans: &[&str]) {
    play(rig, sans);
    rig.advance(1_000);
    let view = rig.session().view();
    assert!(view.in_sync);
    assert_eq!(view.gap, "");
    assert_eq!(view.moves[view.moves.len() - sans.len()..], *sans);
    assert_no_accusations(&rig.take_events());
}

fn moves_played(events: &[Event]) -> Vec<(u32, String, u64, u64)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::MovePlayed {
                ply,
                san,
                white_ms,
                black_ms,
                ..
            } => Some((*ply, san.clone(), *white_ms, *black_ms)),
            _ => None,
        })
        .collect()
}

#[test]
fn killed_while_2_5_and_20_plies_are_played_every_ply_comes_back_from_memory() {
    let line: Vec<&str> = RUY.split_whitespace().collect();
    for (seed, gap) in [(1, 2), (2, 5), (3, 20)] {
        let mut rig = rig(seed);
        let (events, view) = through_gap(&mut rig, &line[..4], Gap::Killed, &line[4..4 + gap]);
        assert_eq!(view.moves, line[..4 + gap], "gap of {gap} plies");
        assert_no_accusations(&events);
        assert_eq!(view.illegal_moves, IllegalCounts::default());
        assert_eq!(view.gap, "");
        assert!(view.in_sync);
        // In order, numbered from ply 5, each with the mover's time from the press tag.
        let played = moves_played(&events);
        let plies: Vec<u32> = played.iter().map(|p| p.0).collect();
        assert_eq!(plies, (5..5 + gap as u32).collect::<Vec<_>>());
        assert!(played.iter().all(|p| p.2 > 0 && p.3 > 0), "{played:?}");
        assert_pgn_says(&view, "read from the board's memory");
        let clks = view.pgn.matches("[%clk").count();
        assert!(clks >= 4 + gap, "every press stamped: {}", view.pgn);
        // Play goes on normally.
        play(&mut rig, &line[4 + gap..4 + gap + 2]);
        rig.advance(2_000);
        assert_eq!(rig.session().view().moves, line[..4 + gap + 2]);
        assert_no_accusations(&rig.take_events());
    }
}

#[test]
fn an_exchange_on_one_square_in_a_gap_is_recovered_not_taken_for_pieces_in_hand() {
    // dxe5 dxe5 leaves only d4 and d6 empty: it looks like pieces lifted, but no one move
    // lifts those two, and the only legal sequence to the board is the exchange.
    let mut rig = rig(8);
    play(&mut rig, &["e4", "e5", "d4", "d6"]);
    rig.advance(2_000);
    rig.unplug();
    rig.advance(1_000);
    play(&mut rig, &["dxe5", "dxe5"]);
    rig.take_events();
    rig.replug();
    rig.advance(3_000);
    play(&mut rig, &["Qxd8+", "Kxd8"]);
    rig.advance(2_000);
    let events = rig.take_events();
    let view = rig.session().view();
    assert_eq!(view.moves, rig.played_san);
    assert_no_accusations(&events);
    assert_pgn_says(
        view,
        "2 plies made while the board was disconnected, recovered",
    );
    assert_eq!(view.gap, "");
}

#[test]
fn unplugged_board_three_plies_with_one_explanation_are_recovered() {
    let mut rig = rig_with_control(7);
    play(&mut rig, &["e4"]);
    rig.advance(2_000);
    rig.unplug();
    rig.advance(1_000);
    play(&mut rig, &["d5", "exd5", "Qxd5"]);
    rig.take_events();
    rig.replug();
    // A pawn fewer than the known position: the board must stand still a little longer
    // (a knight held in hand is explained by a story of captures too).
    rig.advance(eboard_core::session::FEWER_PIECES_SETTLED_MS + 1_000);
    let events = rig.take_events();
    let view = rig.session().view();
    assert_eq!(view.moves, ["e4", "d5", "exd5", "Qxd5"]);
    assert_no_accusations(&events);
    assert_pgn_says(view, "recovered: the only legal sequence to the board");
    assert_eq!(view.gap, "");

    // A real illegal move right after the gap is caught: Ke1-e3.
    let king = Piece {
        color: Color::White,
        role: Role::King,
    };
    let now = rig.now();
    rig.board.lift(Square::E1, now);
    rig.advance(300);
    let now = rig.now();
    rig.board.place(Square::E3, king, now);
    rig.advance(2_000);
    let events = rig.take_events();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::IllegalPlacement { player, .. } if player == "white")),
        "{events:?}"
    );
    let side = rig.side_of(Color::White);
    let now = rig.now();
    rig.board.press_lever(side, now);
    rig.advance(2_000);
    let events = rig.take_events();
    assert!(
        events.iter().any(
            |e| matches!(e, Event::IllegalMoveCompleted { player, count: 1, .. } if player == "white")
        ),
        "{events:?}"
    );
}

/// The same gap when nothing tells the increment (no time control configured, and the clock
/// began at 3:02, so White's one press showed none): the clock cannot count the presses
/// made while unplugged, and d5 exd5 Qxd5 is only the shortest story (Nf3 Nf6 Ng1 Ng8 on
/// top reach the same board). Nothing is published on a guess: `Gap` lists the story for the
/// arbiter, and his answer (the longer game, from the scoresheet) is taken.
#[test]
fn unplugged_three_plies_nothing_bounds_are_asked_about_not_published() {
    let mut rig = rig(7);
    play(&mut rig, &["e4"]);
    rig.advance(2_000);
    rig.unplug();
    rig.advance(1_000);
    play(
        &mut rig,
        &["d5", "Nf3", "Nf6", "Ng1", "Ng8", "exd5", "Qxd5"],
    );
    rig.take_events();
    rig.replug();
    rig.advance(eboard_core::session::FEWER_PIECES_SETTLED_MS + 1_000);
    let view = rig.session().view().clone();
    assert_eq!(view.moves, ["e4"], "nothing published on a guess");
    assert_gap_lists(
        &view.gap,
        &[
            "the shortest legal sequence reaches the board, but nothing bounds how many plies were made",
            "waiting for the arbiter (ResolveGap)",
            "d5 exd5 Qxd5 [d7d5 e4d5 d8d5]",
        ],
    );
    resolve_gap(
        &mut rig,
        &["d7d5", "g1f3", "g8f6", "f3g1", "f6g8", "e4d5", "d8d5"],
    )
    .unwrap();
    rig.advance(1_000);
    let events = rig.take_events();
    let view = rig.session().view();
    assert_eq!(view.moves, rig.played_san);
    assert_eq!(view.gap, "");
    assert!(view.in_sync);
    assert_no_accusations(&events);
    assert_pgn_says(
        view,
        "7 plies made while the board was disconnected, as the arbiter resolved them",
    );
}

#[test]
fn several_explanations_wait_for_the_arbiter_and_play_meanwhile_is_kept() {
    let (mut rig, events, view) = unplugged_over_two_orders(9);
    assert_no_accusations(&events);
    assert!(moves_played(&events).is_empty(), "nothing decided yet");
    assert_eq!(view.moves, ["e4", "e5"], "nothing invented");
    assert!(!view.in_sync);
    assert!(
        view.gap.starts_with("2 sequences explain the board"),
        "{}",
        view.gap
    );
    assert_gap_lists(
        &view.gap,
        &[
            "Nf3 Nc6 Bc4 [g1f3 b8c6 f1c4]",
            "Bc4 Nc6 Nf3 [f1c4 b8c6 g1f3]",
        ],
    );
    // Black plays on while the arbiter comes.
    play(&mut rig, &["Nf6"]);
    rig.advance(3_000);
    let events = rig.take_events();
    assert_no_accusations(&events);
    assert!(moves_played(&events).is_empty());

    let wrong = resolve_gap(&mut rig, &["g1f3", "b8c6"]);
    assert!(
        matches!(&wrong, Err(CommandError::InvalidArgument(m)) if m.contains("not to the board")),
        "{wrong:?}"
    );
    let illegal = resolve_gap(&mut rig, &["g1f4"]);
    assert!(
        matches!(&illegal, Err(CommandError::InvalidArgument(m)) if m.contains("move 1 `g1f4`")),
        "{illegal:?}"
    );
    resolve_gap(&mut rig, &["g1f3", "b8c6", "f1c4"]).unwrap();
    rig.advance(1_000);
    let view = rig.session().view();
    assert_eq!(view.moves, ["e4", "e5", "Nf3", "Nc6", "Bc4", "Nf6"]);
    assert!(view.in_sync);
    assert_eq!(view.gap, "");
    let closed = resolve_gap(&mut rig, &[]);
    assert!(
        matches!(&closed, Err(CommandError::InvalidArgument(m)) if m.contains("no gap is open")),
        "{closed:?}"
    );
    play(&mut rig, &["d3"]);
    rig.advance(1_000);
    assert_eq!(rig.session().view().moves.len(), 7);
    assert_no_accusations(&rig.take_events());
}

#[test]
fn resolving_with_no_moves_continues_from_the_board() {
    let (mut rig, events, view) = unplugged_over_two_orders(10);
    assert!(!view.gap.is_empty());
    assert_no_accusations(&events);
    resolve_gap(&mut rig, &[]).unwrap();
    rig.advance(500);
    let view = rig.session().view();
    assert_eq!(view.gap, "");
    assert!(view.in_sync);
    assert_eq!(view.turn, "black");
    assert_pgn_says(view, "the arbiter continued from the board");
    assert_eq!(view.illegal_moves, IllegalCounts::default());
}

#[test]
fn a_lost_frame_is_a_gap_not_an_illegal_move() {
    let mut rig = rig(11);
    play(&mut rig, &["d4", "d5"]);
    rig.advance(2_000);
    // The lift of the c-pawn is lost on the line.
    rig.cut_next_frame();
    play(&mut rig, &["c4", "e6", "Nc3"]);
    rig.advance(3_000);
    let events = rig.take_events();
    let view = rig.session().view();
    assert_eq!(view.moves, ["d4", "d5", "c4", "e6", "Nc3"]);
    assert_no_accusations(&events);
}

#[test]
fn a_link_drop_with_power_on_reads_the_memory() {
    let mut rig = rig(12);
    let (events, view) = through_gap(
        &mut rig,
        &["e4", "c5"],
        Gap::Dropped,
        &["Nf3", "d6", "d4", "cxd4"],
    );
    assert_eq!(view.moves, ["e4", "c5", "Nf3", "d6", "d4", "cxd4"]);
    assert_no_accusations(&events);
    assert_pgn_says(&view, "read from the board's memory");
}

/// After 1. e4 e5, Nf3 Nc6 Bc4 made unseen (link dropped, or unplugged), then Black lifts
/// his g8 knight before the board is read again; `held_ms` later he sets it on f6 and
/// presses. Returns the events from the reconnection on.
fn knight_in_hand_after_three_unseen_plies(
    rig: &mut Rig,
    unplug: bool,
    held_ms: u64,
) -> Vec<Event> {
    play(rig, &["e4", "e5"]);
    rig.advance(2_000);
    if unplug {
        rig.unplug();
    } else {
        rig.disconnect();
    }
    play(rig, &["Nf3", "Nc6", "Bc4"]);
    let now = rig.now();
    rig.board.lift(Square::G8, now);
    rig.advance(200);
    rig.take_events();
    if unplug {
        rig.replug();
    } else {
        rig.connect();
    }
    rig.advance(held_ms);
    let mut events = rig.take_events();
    let now = rig.now();
    let knight = Piece {
        color: Color::Black,
        role: Role::Knight,
    };
    rig.board.place(Square::F6, knight, now);
    rig.advance(300);
    let now = rig.now();
    rig.board.press_lever(rig.side_of(Color::Black), now);
    rig.advance(2_000);
    events.extend(rig.take_events());
    events
}

#[test]
fn a_memory_read_while_a_piece_is_in_hand_is_used() {
    // Nf3 Nc6 Bc4 and Bc4 Nc6 Nf3 both explain the board: only the memory can tell, and it
    // is read while Black already holds his knight for the next move.
    let mut rig = rig(14);
    let events = knight_in_hand_after_three_unseen_plies(&mut rig, false, 1_500);
    let view = rig.session().view();
    assert_eq!(
        view.moves,
        ["e4", "e5", "Nf3", "Nc6", "Bc4", "Nf6"],
        "{}",
        view.gap
    );
    assert_eq!(view.gap, "");
    assert_no_accusations(&events);
    assert_pgn_says(view, "read from the board's memory");
}

#[test]
fn a_piece_held_in_hand_after_an_unplug_is_not_explained_by_invented_captures() {
    // Unplugged (no memory): after Nf3 Nc6 Bc4, Black holds his g8 knight. The board then
    // is also reached by Nf3 Na6 Bxa6 Ne7 Bc4 Nc6, six plies never played: a still board
    // with a piece fewer is a position only after standing a while, or at a press.
    let mut rig = rig(17);
    let events = knight_in_hand_after_three_unseen_plies(&mut rig, true, 2_000);
    let invented = events.iter().any(|e| {
        matches!(e, Event::MovePlayed { san, .. } if ["Na6", "Bxa6", "Ne7"].contains(&san.as_str()))
    });
    assert!(!invented, "{events:?}");
    assert_no_accusations(&events);
    // Two orders explain the board: the arbiter decides.
    let gap = &rig.session().view().gap;
    assert!(gap.contains("waiting for the arbiter"), "{gap}");
}

#[test]
fn a_memory_dump_cut_off_in_the_middle_does_not_hold_the_search_up() {
    // The memory never arrives whole: the search's one sequence is published once the
    // memory had its short grace and the board (a pawn fewer) stood still, not after the
    // memory's whole time-out.
    let mut rig = rig_with_control(13);
    play(&mut rig, &["e4"]);
    rig.advance(2_000);
    rig.disconnect();
    play(&mut rig, &["d5", "exd5", "Qxd5"]);
    rig.cut_next_memory_dump(40);
    rig.connect();
    rig.advance(eboard_core::session::FEWER_PIECES_SETTLED_MS + 1_000);
    const {
        assert!(
            eboard_core::session::FEWER_PIECES_SETTLED_MS + 1_000
                < eboard_core::session::MEMORY_WAIT_MS
        )
    };
    let events = rig.take_events();
    let view = rig.session().view();
    assert_eq!(view.moves, ["e4", "d5", "exd5", "Qxd5"]);
    assert_eq!(view.gap, "");
    assert_no_accusations(&events);
    assert_pgn_says(view, "recovered: the only legal sequence");
    // The rest of the cut-off answer, or a late one, changes nothing.
    rig.advance(eboard_core::session::MEMORY_WAIT_MS + 2_000);
    assert_eq!(rig.session().view().moves, ["e4", "d5", "exd5", "Qxd5"]);
    assert_no_accusations(&rig.take_events());
}

#[test]
fn a_reversed_board_is_read_the_right_way_round_after_a_restart() {
    let mut rig = Rig::new(
        BoardOptions {
            orientation: eboard_core::board::Orientation::Reversed,
            ..BoardOptions::default()
        },
        SessionConfig::default(),
        14,
        Noise::Noisy,
    );
    let (events, view) = through_gap(
        &mut rig,
        &["e4", "e5", "Nf3"],
        Gap::Killed,
        &["Nc6", "Bb5", "a6"],
    );
    assert_eq!(view.moves, ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6"]);
    assert_no_accusations(&events);
}

#[test]
fn a_board_no_sequence_reaches_continues_in_a_new_segment_without_accusing_anyone() {
    let mut rig = rig(15);
    play(&mut rig, &["e4", "e5"]);
    rig.advance(2_000);
    rig.unplug();
    // A pawn walked back (a spectator's hand): e4 to e3, which no legal sequence does.
    let pawn = Piece {
        color: Color::White,
        role: Role::Pawn,
    };
    let now = rig.now();
    rig.board.lift(Square::E4, now);
    rig.board.place(Square::E3, pawn, now + 300);
    rig.replug();
    rig.advance(5_000);
    assert!(
        rig.session().view().gap.contains("no legal sequence"),
        "{}",
        rig.session().view().gap
    );
    rig.advance(eboard_core::session::UNREACHABLE_SETTLE_MS);
    let view = rig.session().view();
    assert_eq!(view.gap, "");
    assert!(view.in_sync);
    assert_eq!(view.turn, "white", "the clock says White is to move");
    assert_pgn_says(view, "that no legal sequence of up to 6 plies explains");
    rig.played = shakmaty::fen::Fen::from_ascii(view.fen.as_bytes())
        .unwrap()
        .into_position(shakmaty::CastlingMode::Standard)
        .unwrap();
    play(&mut rig, &["d4"]);
    rig.advance(1_000);
    let events = rig.take_events();
    assert_eq!(rig.session().view().moves, ["e4", "e5", "d4"]);
    assert_no_accusations(&events);
    assert_eq!(rig.session().view().illegal_moves, IllegalCounts::default());
}

/// The moves of a SAN line.
fn line_moves(line: &str) -> Vec<shakmaty::Move> {
    use shakmaty::{Chess, Position, san::San};
    let mut pos = Chess::default();
    line.split_whitespace()
        .map(|s| {
            let m = s.parse::<San>().unwrap().to_move(&pos).unwrap();
            pos.play_unchecked(m);
            m
        })
        .collect()
}

#[test]
fn bullet_a_replug_with_one_ply_then_nine_quick_plies_is_exact_without_the_arbiter() {
    let moves = line_moves(RUY);
    for seed in 1..=4u64 {
        let mut rig = rig(40 + seed);
        for &m in &moves[..6] {
            rig.play_move(m);
        }
        rig.advance(2_000);
        rig.take_events();
        // Out for 1 s, one ply made meanwhile.
        rig.unplug();
        rig.advance(300);
        rig.play_quick(moves[6], 400);
        rig.advance(300);
        rig.replug();
        let replugged = rig.now();
        rig.shown.retain(|s| s.0 != 7);
        rig.shown.push((7, replugged));
        // Nine plies at 0.2-0.5 s each.
        for (i, &m) in moves[7..16].iter().enumerate() {
            rig.play_quick(m, 200 + (i as u64 * 37 + seed * 71) % 300);
        }
        rig.advance(3_000);
        let events = rig.take_events();
        let view = rig.session().view();
        assert_eq!(view.moves, rig.played_san, "seed {seed}: {}", view.gap);
        assert_no_accusations(&events);
        assert_eq!(view.gap, "");
        assert_pgn_says(view, "recovered: the only legal sequence to the board");
        let (longest, missing) = rig.stalls();
        assert!(
            missing.is_empty(),
            "seed {seed}: never published: {missing:?}"
        );
        assert!(
            longest <= 1_000,
            "seed {seed}: a shown move waited {longest} ms for MovePlayed"
        );
    }
}

#[test]
fn three_plies_made_while_a_slow_memory_answer_is_on_the_line_are_followed() {
    let mut rig = rig(51);
    // Earlier games fill the board's memory: its answer takes seconds at 9600 baud.
    for _ in 0..10 {
        for m in line_moves(RUY) {
            rig.play_quick(m, 300);
        }
        rig.new_game();
    }
    rig.take_events();
    play(&mut rig, &["e4", "e5"]);
    rig.advance(2_000);
    rig.disconnect();
    // Two stories explain this board (Nf3 Nc6 Bc4, Bc4 Nc6 Nf3): only the memory can tell.
    play(&mut rig, &["Nf3", "Nc6", "Bc4"]);
    let memory = rig.board.eeprom_dump().len();
    assert!(memory > 2_500, "the memory holds {memory} bytes");
    rig.pace_line(Some(960));
    rig.connect();
    rig.advance(500);
    assert_ne!(rig.session().view().gap, "", "the gap waits for the memory");
    assert_eq!(rig.session().view().moves, ["e4", "e5"]);
    let more = line_moves("e4 e5 Nf3 Nc6 Bc4 Bc5 c3 Nf6");
    for &m in &more[5..] {
        rig.play_quick(m, 500);
    }
    let on_line = rig.now();
    rig.advance(12_000);
    let events = rig.take_events();
    let view = rig.session().view();
    assert_eq!(view.moves, rig.played_san, "{}", view.gap);
    assert_no_accusations(&events);
    assert_eq!(view.gap, "");
    assert_pgn_says(view, "read from the board's memory");
    // The memory was still on the line when the three plies were made.
    let recovered_at = rig
        .published
        .iter()
        .find(|p| p.0 == 3)
        .map(|p| p.1)
        .unwrap();
    assert!(recovered_at > on_line, "{recovered_at} {on_line}");
}

#[test]

fn blitz_with_unplugs_and_an_arbiter_answering_from_the_scoresheet_every_game_is_exact() {
    use eboard_sim::scramble::{Figures, Pace, play_game};
    let games = [RUY, RUY, RUY, RUY, RUY, RUY];
    let mut all = Figures::default();
    for (i, game) in games.iter().enumerate() {
        let mut rig = rig(60 + i as u64);
        let pace = Pace {
            unplug_chance: 0.15,
            ..Pace::blitz()
        };
        let f = play_game(&mut rig, &line_moves(game), &pace, 600 + i as u64);
        assert_eq!(
            rig.session().view().moves,
            rig.played_san,
            "game {i}: {f:?} {} {:?}",
            rig.session().view().gap,
            rig.journal().iter().rev().take(30).collect::<Vec<_>>()
        );
        assert_eq!(f.false_accusations, 0, "game {i}: {f:?}");
        all.add(&f);
    }
    assert_eq!(all.games_exact, all.games, "{all:?}");
    assert!(all.unplugs >= 6 && all.gap_plies >= 6, "{all:?}");
}

#[test]
fn seven_plies_unseen_ask_the_arbiter_who_may_answer_while_a_piece_is_in_hand() {
    let mut rig = rig(16);
    let moves = line_moves(RUY);
    for &m in &moves[..4] {
        rig.play_quick(m, 700);
    }
    rig.advance(2_000);
    rig.unplug();
    // Seven plies while the plug is out: beyond the search's six.
    for &m in &moves[4..11] {
        rig.play_quick(m, 600);
    }
    rig.replug();
    rig.advance(1_000);
    let gap = rig.session().view().gap.clone();
    assert!(
        gap.contains("no legal sequence") && gap.contains("waiting for the arbiter (ResolveGap)"),
        "the arbiter is asked at once, not after the board stands still: {gap}"
    );
    // Play goes on; the arbiter answers from the scoresheet while Black holds the b-pawn.
    rig.play_quick(moves[11], 600);
    rig.play_quick(moves[12], 600);
    let now = rig.now();
    rig.board.lift(Square::D7, now);
    rig.advance(100);
    let from_known: Vec<String> = rig.played_moves[4..]
        .iter()
        .map(|m| {
            shakmaty::uci::UciMove::from_move(*m, shakmaty::CastlingMode::Standard).to_string()
        })
        .collect();
    rig.command(Command::ResolveGap(from_known))
        .expect("the moves up to the board with a piece in hand are taken");
    let now = rig.now();
    rig.board.place(
        Square::D6,
        Piece {
            color: Color::Black,
            role: Role::Pawn,
        },
        now,
    );
    rig.advance(1_000);
    let events = rig.take_events();
    let view = rig.session().view();
    assert_eq!(view.gap, "");
    // d6 (not pressed yet) is the tracker's as ever: shown at once or once pressed.
    assert_eq!(&view.moves[..13], &rig.played_san[..13]);
    assert_no_accusations(&events);
    assert_pgn_says(
        view,
        "7 plies made while the board was disconnected, as the arbiter resolved them",
    );
}

/// One ply while the link is down (its memory answer lost on the line), then play resumed
/// at once: Nf6 and Nc3 after the first whole board read showed Bc4. The board then stands
/// where Bc4 Nf6 Nc3 and Nc3 Nf6 Bc4 both lead, but only the first passes through the board
/// read: the record is exact and the arbiter is never asked.
#[test]
fn plies_made_after_the_first_board_read_are_no_question_for_the_arbiter() {
    for seed in 1..=3u64 {
        let mut rig = rig(70 + seed);
        let moves = line_moves("e4 e5 Nf3 Nc6 Bc4 Nf6 Nc3");
        for &m in &moves[..4] {
            rig.play_move(m);
        }
        rig.advance(2_000);
        rig.take_events();
        rig.disconnect();
        rig.play_quick(moves[4], 400);
        rig.advance(300);
        rig.cut_next_memory_dump(20);
        rig.connect();
        rig.advance(100);
        for &m in &moves[5..] {
            rig.play_quick(m, 150 + seed * 40);
        }
        let mut asked = Vec::new();
        for _ in 0..50 {
            rig.advance(100);
            let gap = rig.session().view().gap.clone();
            if gap.contains("arbiter") {
                asked.push(gap);
            }
        }
        let events = rig.take_events();
        let view = rig.session().view();
        assert_eq!(view.moves, rig.played_san, "seed {seed}: {}", view.gap);
        assert!(asked.is_empty(), "seed {seed}: {asked:?}");
        assert_eq!(view.gap, "");
        assert_no_accusations(&events);
    }
}

/// A gap whose moves came back to the known position's board with the other side to move
/// (Bb5 Be7 Be2 Bf8 Bc4: five plies), then to the board before it (...Ng8 takes ...Nf6 back),
/// and on (h3 Nf6). The memory was replayed from where the board last showed the known
/// position, so with White to move where Black was: the eight plies were read as White's h3,
/// one ply, and the record went on with the wrong side to move, in sync (corpus game 996 at
/// bullet pace, found by a soak). The memory is replayed from the known position the board
/// reached by the record's last move (the board before it, then it), which keeps the side.
#[test]
fn a_gap_that_shows_the_known_board_with_the_other_side_to_move_is_replayed_whole() {
    let known = ["e4", "e5", "Nf3", "Nc6", "Bc4", "Nf6"];
    let during = ["Bb5", "Be7", "Be2", "Bf8", "Bc4", "Ng8", "h3", "Nf6"];
    for (seed, gap) in [(1, Gap::Killed), (2, Gap::Dropped)] {
        let mut rig = rig(seed);
        let (events, view) = through_gap(&mut rig, &known, gap, &during);
        let all: Vec<&str> = known.iter().chain(&during).copied().collect();
        assert_eq!(view.moves, all, "{gap:?}: every ply of the gap");
        assert_no_accusations(&events);
        assert_eq!(view.gap, "");
        assert_eq!(view.turn, "white");
        assert_pgn_says(&view, "read from the board's memory");
    }
}

/// After ...Nc6 Ng1 ...Nb8, made while unplugged, White's knight is back on f3 and not yet
/// pressed when the arbiter answers: continue from the board. The board shows the record's
/// position again (a cycle), and the clock, White's still running, is no proof that White is
/// to move: the record goes on with Black to move, and Black's next move is followed (a
/// segment with White to move lost every move after it; corpus game 880 at bullet pace).
#[test]
fn continuing_from_a_board_back_at_the_records_position_keeps_its_side_to_move() {
    let mut rig = rig(12);
    play(&mut rig, &["e4", "e5", "Nf3"]);
    rig.advance(2_000);
    rig.unplug();
    rig.advance(1_000);
    play(&mut rig, &["Nc6", "Ng1", "Nb8"]);
    rig.replug();
    rig.advance(1_500);
    let knight = Piece {
        color: Color::White,
        role: Role::Knight,
    };
    rig.hand(&[
        SensorStep::Lift(Square::G1),
        SensorStep::Pause(120),
        SensorStep::Place(Square::F3, knight),
    ]);
    // A clock reading with White's clock running comes after the knight is set down.
    rig.advance(1_100);
    assert!(
        !rig.session().view().gap.is_empty(),
        "the gap is still open when the arbiter answers"
    );
    resolve_gap(&mut rig, &[]).unwrap();
    rig.advance(300);
    let view = rig.session().view();
    assert_eq!(view.turn, "black");
    assert!(view.in_sync);
    assert_eq!(view.gap, "");
    // White presses his Nf3; Black answers.
    let nf3 = "g1f3"
        .parse::<shakmaty::uci::UciMove>()
        .unwrap()
        .to_move(&rig.played)
        .unwrap();
    rig.play_steps(nf3, &[SensorStep::Press]);
    rig.advance(500);
    assert_play_goes_on(&mut rig, &["Nc6", "Bc4"]);
}

/// The arbiter answers "continue from the board" just as a player has a piece in hand (corpus
/// game 963: Black's bishop in the air). A board with a piece missing is a legal position, so
/// taking it would start the new segment without the piece, and its landing would be an
/// illegal placement. The answer is refused until the board has stood still; then it is taken
/// with every piece, and play goes on without an accusation.
#[test]
fn continuing_from_a_board_with_a_piece_in_hand_waits_until_it_stands_still() {
    let (mut rig, events, view) = unplugged_over_two_orders(10);
    assert!(!view.gap.is_empty(), "the gap waits for the arbiter");
    assert_no_accusations(&events);
    let knight = Piece {
        color: Color::Black,
        role: Role::Knight,
    };
    rig.hand(&[SensorStep::Lift(Square::G8)]);
    rig.advance(200);
    let refused = resolve_gap(&mut rig, &[]);
    assert!(
        matches!(&refused, Err(CommandError::InvalidArgument(text)) if text.contains("piece in hand")),
        "a board with a piece in hand is no position to continue from: {refused:?}"
    );
    assert!(
        !rig.session().view().gap.is_empty(),
        "the gap is still open"
    );
    // Black thinks again and puts the knight back; the board then stands still.
    rig.hand(&[SensorStep::Place(Square::G8, knight)]);
    rig.advance(1_000);
    resolve_gap(&mut rig, &[]).expect("a still board is continued from");
    rig.advance(500);
    let view = rig.session().view();
    assert_eq!(view.gap, "");
    assert!(view.in_sync);
    assert_eq!(view.turn, "black");
    assert_play_goes_on(&mut rig, &["Nf6", "Nc3"]);
}
