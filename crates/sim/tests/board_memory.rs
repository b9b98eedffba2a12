//! The gap's memory reader (`eboard_core::recovery::memory`) on what the simulated board's memory
//! writes: the moves after the last known position, in order and with their presses, and
//! the logs that must give nothing.

use eboard_core::board::{Orientation, Placement};
use eboard_core::board_input::MemoryEvent;
use eboard_core::dgt::DisplayTime;
use eboard_core::dgt::FieldContent;
use eboard_core::dgt::input::memory_events;
use eboard_core::recovery::memory::{Recovered, Unusable, recover};
use eboard_core::tracker::Tracker;
use eboard_core::vocab::OrientationSetting;
use eboard_sim::eeprom::Eeprom;
use shakmaty::san::San;
use shakmaty::{Board, Square};
use shakmaty::{Chess, Color, Position};

fn wire(board: &Board) -> [FieldContent; 64] {
    Placement::from_board(board).to_wire(Orientation::Normal)
}

/// Log one move the simple way: lift from, (capture) put down on to, press.
fn log_move(log: &mut Eeprom, pos: &mut Chess, san: &str, t: &mut u64) {
    let m = san.parse::<San>().unwrap().to_move(pos).unwrap();
    let before = pos.board().clone();
    pos.play_unchecked(m);
    for sq in Square::ALL {
        if before.piece_at(sq) != pos.board().piece_at(sq) && pos.board().piece_at(sq).is_none() {
            *t += 400;
            log.field(Orientation::Normal.field_of_square(sq), None, *t);
        }
    }
    for sq in Square::ALL {
        if before.piece_at(sq) != pos.board().piece_at(sq) && pos.board().piece_at(sq).is_some() {
            *t += 400;
            log.field(
                Orientation::Normal.field_of_square(sq),
                pos.board().piece_at(sq),
                *t,
            );
        }
    }
    *t += 400;
    log.time(
        pos.turn() == Color::Black,
        DisplayTime {
            hours: 0,
            minutes: 9,
            seconds: 30,
        },
        *t,
    );
}

/// The memory as the driver hands it to the recovery.
fn parsed(log: &Eeprom) -> Vec<MemoryEvent> {
    let mut stats = eboard_core::dgt::DecoderStats::default();
    memory_events(&eboard_core::dgt::ee_moves::parse(&log.dump(), &mut stats))
}

/// The memory read by the tracker's gap reader, from the tracker's last known position, with
/// the board now as `board` and the link back at `now`.
fn read_memory(
    tracker: &Tracker,
    log: &Eeprom,
    board: &Board,
    now: u64,
) -> Result<Recovered, Unusable> {
    recover(
        tracker,
        tracker.previous_position(),
        &parsed(log),
        &wire(board),
        now,
    )
}

/// The recovered moves in SAN, played from `from`.
fn sans(from: &Chess, got: &Recovered) -> Vec<String> {
    let mut p = from.clone();
    got.moves
        .iter()
        .map(|&m| shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut p, m).to_string())
        .collect()
}

fn tracker_at_start() -> Tracker {
    let mut t = Tracker::new(Chess::default(), OrientationSetting::Normal);
    let _ = t.on_board_dump(&wire(&Board::default()), 0);
    t
}

#[test]
fn moves_after_the_last_known_position_in_order_with_presses() {
    let mut log = Eeprom::new();
    log.power_up(&wire(&Board::default()), 0);
    let tracker = tracker_at_start();
    let mut pos = Chess::default();
    let mut t = 1_000;
    for san in ["e4", "c5", "Nf3", "d6", "d4", "cxd4", "Nxd4"] {
        log_move(&mut log, &mut pos, san, &mut t);
    }
    let got = read_memory(&tracker, &log, pos.board(), 10_000).unwrap();
    assert_eq!(
        sans(&Chess::default(), &got),
        ["e4", "c5", "Nf3", "d6", "d4", "cxd4", "Nxd4"]
    );
    assert_eq!(got.presses[0], Some((true, 570_000)));
    assert_eq!(got.presses[1], Some((false, 570_000)));
}

/// A tracker at `fen`, the board read.
fn tracker_at(fen: &str) -> (Tracker, Chess) {
    let pos: Chess = fen
        .parse::<shakmaty::fen::Fen>()
        .unwrap()
        .into_position(shakmaty::CastlingMode::Standard)
        .unwrap();
    let mut t = Tracker::new(pos.clone(), OrientationSetting::Normal);
    let _ = t.on_board_dump(&wire(pos.board()), 0);
    (t, pos)
}

#[test]
fn a_capture_in_progress_when_the_memory_is_read_is_no_exchange() {
    // Qxh6 under way, the queen and the pawn both in hand: the board is also what
    // Qxg5 hxg5 leaves. The memory must not tell that story.
    let fen = "r1bq1kr1/1p2n3/5p1p/2n1p1pQ/1pPp4/3P2P1/P1N2PBP/R1B1R1K1 w - - 2 20";
    let (tracker, pos) = tracker_at(fen);
    let mut log = Eeprom::new();
    log.power_up(&wire(pos.board()), 0);
    let field = |sq: Square| Orientation::Normal.field_of_square(sq);
    log.field(field(Square::H6), None, 1_000);
    log.field(field(Square::H5), None, 1_400);
    let mut now = pos.board().clone();
    now.discard_piece_at(Square::H6);
    now.discard_piece_at(Square::H5);
    let got = read_memory(&tracker, &log, &now, 10_000);
    assert!(got.as_ref().is_ok_and(|r| r.moves.is_empty()), "{got:?}");
    // Finished and answered, the same log gives the moves made.
    let mut done = pos.clone();
    let mut t = 1_400;
    for san in ["Qxh6+", "Kf7"] {
        log_move(&mut log, &mut done, san, &mut t);
    }
    let got = read_memory(&tracker, &log, done.board(), 20_000).unwrap();
    assert_eq!(sans(&pos, &got), ["Qxh6+", "Kf7"]);
}

#[test]
fn a_power_up_after_the_gap_began_leaves_nothing() {
    let mut log = Eeprom::new();
    log.power_up(&wire(&Board::default()), 0);
    let tracker = tracker_at_start();
    let mut pos = Chess::default();
    let mut t = 1_000;
    let mut lost = Eeprom::new();
    log_move(&mut lost, &mut pos, "e4", &mut t);
    // The board lost power during e4 and came back with it on the board.
    log.power_up(&wire(pos.board()), t);
    log_move(&mut log, &mut pos, "e5", &mut t);
    assert_eq!(
        read_memory(&tracker, &log, pos.board(), 10_000),
        Err(Unusable::NoAnchor)
    );
}
