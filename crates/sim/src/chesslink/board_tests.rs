use eboard_core::chesslink::leds::MOVE_FROM;
use eboard_core::chesslink::settings::{AUTO_REPORT, REPORT_INTERVAL, SCAN_TIME};
use eboard_core::chesslink::{
    AutoReport, Command, Decoder, LedPattern, ParityBy, Reply, Scan, Version, WireOrder,
};
use shakmaty::{Board, Chess, Color, Piece, Position, Role, Square};

use super::*;
use crate::handling::{Handling, Noise, SensorStep};

/// A board and a host's decoder, time in ms.
struct Bench {
    board: MillenniumBoard,
    decoder: Decoder,
    now: u64,
    got: Vec<(u64, Reply)>,
}

impl Bench {
    fn new(opts: MillenniumOptions) -> Bench {
        Bench {
            board: MillenniumBoard::new(opts, 0),
            decoder: Decoder::new(),
            now: 0,
            got: Vec::new(),
        }
    }

    /// Advance to `until`, collecting everything sent at its own time.
    fn run_to(&mut self, until: u64) {
        loop {
            self.collect();
            match self.board.next_deadline(self.now) {
                Some(t) if t > self.now && t <= until => self.now = t,
                _ => break,
            }
        }
        self.now = until.max(self.now);
        self.collect();
    }

    fn collect(&mut self) {
        let bytes = self.board.poll(self.now);
        let now = self.now;
        let replies: Vec<Reply> = self.decoder.feed(&bytes).collect();
        self.got.extend(replies.into_iter().map(|r| (now, r)));
    }

    fn wait(&mut self, ms: u64) {
        self.run_to(self.now + ms);
    }

    fn send(&mut self, command: &Command) {
        self.board
            .receive(&command.encode(ParityBy::Host), self.now);
    }

    /// Send a command and wait long enough for its reply.
    fn ask(&mut self, command: &Command) -> Vec<Reply> {
        self.got.clear();
        self.send(command);
        self.wait(20);
        self.replies()
    }

    fn replies(&mut self) -> Vec<Reply> {
        self.got.drain(..).map(|(_, r)| r).collect()
    }

    fn statuses(&mut self) -> Vec<Board> {
        let order = self.board.options().order;
        self.replies()
            .into_iter()
            .filter_map(|r| match r {
                Reply::Status(scan) => Some(scan.board(order)),
                _ => None,
            })
            .collect()
    }

    fn hand(&mut self, steps: &[SensorStep]) {
        for step in steps {
            match *step {
                SensorStep::Lift(sq) => self.board.lift(sq, self.now),
                SensorStep::Place(sq, piece) => self.board.place(sq, piece, self.now),
                SensorStep::Pause(ms) => self.wait(ms),
                SensorStep::Press => {}
            }
        }
    }

    fn set_mode(&mut self, mode: AutoReport) {
        let code = mode.code();
        let echo = self.ask(&Command::Write {
            address: AUTO_REPORT,
            value: code,
        });
        assert!(echo.contains(&Reply::Written {
            address: AUTO_REPORT,
            value: code
        }));
        self.got.clear();
    }
}

fn quiet() -> MillenniumOptions {
    MillenniumOptions {
        eeprom: vec![(SCAN_TIME, 20), (AUTO_REPORT, 1)],
        ..MillenniumOptions::default()
    }
}

#[test]
fn answers_version_status_and_option_reads() {
    let mut bench = Bench::new(quiet());
    assert_eq!(
        bench.ask(&Command::Version),
        vec![Reply::Version(Version { high: 2, low: 0 })]
    );
    let start = Scan::from_board(&Board::default(), WireOrder::H1First);
    assert_eq!(bench.ask(&Command::Status), vec![Reply::Status(start)]);
    assert_eq!(
        bench.ask(&Command::Read { address: SCAN_TIME }),
        vec![Reply::Read {
            address: SCAN_TIME,
            value: 20
        }]
    );
    assert_eq!(bench.decoder.stats().dropped_frames, 0);
}

#[test]
fn replies_wait_for_the_reply_delay() {
    let mut bench = Bench::new(MillenniumOptions {
        reply_delay_ms: 250,
        ..quiet()
    });
    bench.send(&Command::Version);
    bench.wait(249);
    assert!(bench.replies().is_empty());
    bench.wait(1);
    assert_eq!(bench.replies().len(), 1);
}

#[test]
fn a_command_with_a_wrong_parity_bit_or_check_gets_no_reply() {
    let mut bench = Bench::new(quiet());
    let mut bad_parity = Command::Version.encode(ParityBy::Host);
    bad_parity[1] ^= 0x80;
    bench.board.receive(&bad_parity, 0);
    let mut bad_check = Command::Status.chars();
    bad_check[2] = b'0';
    bench.board.receive(
        &eboard_core::chesslink::line::to_wire(bad_check, ParityBy::Host),
        0,
    );
    bench.wait(100);
    assert!(bench.replies().is_empty());
    let line = bench.board.line_stats();
    assert_eq!((line.parity_errors, line.dropped_frames), (1, 2));
    // The board reads on: the next good command is answered.
    assert_eq!(bench.ask(&Command::Version).len(), 1);
}

#[test]
fn the_default_mode_reports_after_every_scan() {
    let mut bench = Bench::new(MillenniumOptions::default());
    bench.wait(1000);
    let reports = bench.statuses();
    // 40.96 ms scans: 25 scans in the first second (the one at 0 included).
    assert_eq!(reports.len(), 25);
    assert!(reports.iter().all(|b| *b == Board::default()));
    // A longer scan time, fewer reports.
    bench.ask(&Command::Write {
        address: SCAN_TIME,
        value: 255,
    });
    bench.got.clear();
    bench.wait(1045);
    assert_eq!(bench.statuses().len(), 2);
}

#[test]
fn reports_off_means_only_on_request() {
    let mut bench = Bench::new(quiet());
    bench.board.lift(Square::E2, 10);
    bench.wait(2000);
    assert!(bench.statuses().is_empty());
    bench.send(&Command::Status);
    bench.wait(10);
    assert_eq!(bench.statuses().len(), 1);
}

#[test]
fn on_change_reports_each_change_once() {
    let mut bench = Bench::new(quiet());
    bench.set_mode(AutoReport::OnChange);
    bench.wait(500);
    assert!(bench.statuses().is_empty(), "no change, no report");
    bench.board.lift(Square::E2, bench.now);
    bench.wait(200);
    bench
        .board
        .place(Square::E4, Color::White.pawn(), bench.now);
    bench.wait(200);
    let boards = bench.statuses();
    assert_eq!(boards.len(), 2);
    assert_eq!(boards[0].piece_at(Square::E2), None);
    assert_eq!(boards[1].piece_at(Square::E4), Some(Color::White.pawn()));
    // A change undone between two scans is never seen.
    bench.board.lift(Square::A2, bench.now);
    bench.wait(5);
    bench
        .board
        .place(Square::A2, Color::White.pawn(), bench.now);
    bench.wait(500);
    assert!(bench.statuses().is_empty());
}

#[test]
fn debounce_waits_for_equal_scans() {
    let mut bench = Bench::new(quiet());
    bench.set_mode(AutoReport::Debounced(5));
    // A slide: the piece is on each square for about two scans.
    bench.board.lift(Square::A1, bench.now);
    let rook = Color::White.rook();
    for sq in [Square::A3, Square::A4] {
        bench.board.place(sq, rook, bench.now);
        bench.wait(90);
        bench.board.lift(sq, bench.now);
    }
    bench.board.place(Square::A5, rook, bench.now);
    bench.wait(400);
    let boards = bench.statuses();
    assert_eq!(boards.len(), 1, "only the settled square: {boards:?}");
    assert_eq!(boards[0].piece_at(Square::A5), Some(rook));
    // Without debounce every stop of the slide is reported.
    bench.set_mode(AutoReport::OnChange);
    bench.board.lift(Square::A5, bench.now);
    bench.board.place(Square::A6, rook, bench.now);
    bench.wait(90);
    bench.board.lift(Square::A6, bench.now);
    bench.board.place(Square::A5, rook, bench.now);
    bench.wait(200);
    assert_eq!(bench.statuses().len(), 2);
}

#[test]
fn interval_reports_at_their_pace() {
    let mut bench = Bench::new(quiet());
    bench.ask(&Command::Write {
        address: REPORT_INTERVAL,
        value: 61, // 250 ms
    });
    bench.set_mode(AutoReport::Interval);
    bench.wait(1000);
    let n = bench.statuses().len();
    assert!((4..=5).contains(&n), "{n} reports in a second");
}

#[test]
fn leds_follow_the_commands_and_are_logged() {
    let mut bench = Bench::new(quiet());
    let pattern = LedPattern::for_move(Square::E2, Square::E4, WireOrder::H1First);
    assert_eq!(bench.ask(&Command::Leds(pattern)), vec![Reply::LedsSet]);
    assert_eq!(*bench.board.leds(), pattern);
    assert_eq!(
        bench
            .board
            .leds()
            .corner_codes(Square::E2, WireOrder::H1First),
        [MOVE_FROM; 4]
    );
    assert_eq!(bench.ask(&Command::LedsOff), vec![Reply::LedsOff]);
    assert!(bench.board.leds().is_dark());
    let log: Vec<_> = bench.board.led_log().map(|(_, p)| p.is_dark()).collect();
    assert_eq!(log, [false, true]);
}

#[test]
fn a_reset_answers_nothing_clears_the_leds_and_keeps_the_options() {
    let mut bench = Bench::new(quiet());
    bench.ask(&Command::Leds(LedPattern::steady(
        [Square::D4],
        WireOrder::H1First,
    )));
    assert!(bench.ask(&Command::Reset).is_empty());
    assert!(bench.board.leds().is_dark());
    // Out of service for 3 s: a question meanwhile is lost.
    assert!(bench.ask(&Command::Version).is_empty());
    assert_eq!(bench.board.stats().ignored_while_resetting, 1);
    bench.wait(RESET_MS);
    assert_eq!(bench.ask(&Command::Version).len(), 1);
    assert_eq!(bench.board.auto_report(), AutoReport::Off);
}

#[test]
fn unplugged_the_board_is_dark_and_silent_and_keeps_its_options() {
    let mut bench = Bench::new(quiet());
    bench.set_mode(AutoReport::OnChange);
    bench.ask(&Command::Leds(LedPattern::steady(
        [Square::D4],
        WireOrder::H1First,
    )));
    bench.board.power_off(bench.now);
    bench.board.lift(Square::E2, bench.now);
    bench.send(&Command::Version);
    bench.wait(500);
    assert!(bench.replies().is_empty());
    assert!(bench.board.leds().is_dark());
    bench.board.power_cycle(bench.now);
    bench.wait(200);
    // The first scan after power-up is the reference: nothing sent until the next change.
    assert!(bench.statuses().is_empty());
    assert_eq!(bench.board.auto_report(), AutoReport::OnChange);
    let after = bench.ask(&Command::Status);
    let Reply::Status(scan) = after[0] else {
        panic!("{after:?}")
    };
    assert_eq!(scan.board(WireOrder::H1First).piece_at(Square::E2), None);
}

#[test]
fn a_board_turned_round_sends_the_other_order() {
    let mut bench = Bench::new(MillenniumOptions {
        order: WireOrder::A8First,
        ..quiet()
    });
    let replies = bench.ask(&Command::Status);
    let Reply::Status(scan) = replies[0] else {
        panic!("{replies:?}")
    };
    assert_eq!(
        WireOrder::of_start_position(&scan),
        Some(WireOrder::A8First)
    );
}

/// The boards after each sensor step of a game, and the positions after each move.
fn play(bench: &mut Bench, seed: u64, noise: Noise) -> Vec<Chess> {
    let game = crate::default_game();
    let mut position = Chess::default();
    let mut hands = Handling::new(seed, noise).with_clock(false);
    let mut after = Vec::new();
    for mv in game.moves().unwrap() {
        bench.hand(&hands.steps(&position, mv));
        bench.wait(300);
        position = position.play(mv).unwrap();
        after.push(position.clone());
    }
    after
}

#[test]
fn a_game_played_by_hand_reads_as_its_positions_in_order() {
    for (seed, noise) in [(1, Noise::Clean), (7, Noise::Noisy), (8, Noise::Noisy)] {
        let mut bench = Bench::new(quiet());
        bench.set_mode(AutoReport::OnChange);
        let positions = play(&mut bench, seed, noise);
        let boards = bench.statuses();
        // Every position after a move was reported, in order, among the hands' in-between
        // readings; consecutive reports always differ.
        let mut it = boards.iter();
        for (ply, pos) in positions.iter().enumerate() {
            assert!(
                it.any(|b| b == pos.board()),
                "seed {seed}: ply {} not reported",
                ply + 1
            );
        }
        assert!(boards.windows(2).all(|w| w[0] != w[1]));
        assert_eq!(boards.last(), positions.last().map(|p| p.board()));
        if noise == Noise::Clean {
            // Clean hands lift and place at once: one report a move, the position itself.
            let want: Vec<&Board> = positions.iter().map(|p| p.board()).collect();
            assert_eq!(boards.iter().collect::<Vec<_>>(), want);
        }
        assert_eq!(bench.decoder.stats().dropped_frames, 0);
    }
}

#[test]
fn a_promotion_shows_the_new_piece() {
    let mut bench = Bench::new(quiet());
    bench.set_mode(AutoReport::OnChange);
    let mut board = Board::empty();
    board.set_piece_at(Square::E1, Color::White.king());
    board.set_piece_at(Square::E8, Color::Black.king());
    board.set_piece_at(Square::B7, Color::White.pawn());
    bench.board.set_position(&board, bench.now);
    bench.wait(100);
    bench.hand(&[
        SensorStep::Lift(Square::B7),
        SensorStep::Pause(100),
        SensorStep::Place(
            Square::B8,
            Piece {
                color: Color::White,
                role: Role::Knight,
            },
        ),
    ]);
    bench.wait(100);
    let last = bench.statuses().pop().unwrap();
    assert_eq!(last.piece_at(Square::B8), Some(Color::White.knight()));
}

#[test]
fn junk_on_the_line_is_skipped_by_the_host_and_costs_no_report() {
    let mut bench = Bench::new(quiet());
    bench.set_mode(AutoReport::OnChange);
    bench.board.send_raw(b"\x00\xf3garbage".to_vec(), bench.now);
    bench.board.lift(Square::D2, bench.now);
    bench.wait(100);
    bench.board.send_raw(vec![0x73, 0xD2], bench.now);
    bench
        .board
        .place(Square::D4, Color::White.pawn(), bench.now);
    bench.wait(100);
    let boards = bench.statuses();
    assert_eq!(boards.len(), 2);
    assert_eq!(boards[1].piece_at(Square::D4), Some(Color::White.pawn()));
    let stats = bench.decoder.stats();
    assert!(stats.skipped_bytes >= 11, "{stats:?}");
    assert_eq!(stats.messages, 2 + 1, "two reports and the write's echo");
}
