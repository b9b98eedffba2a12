//! The ChessLink driver of the link (`crate::link::Driver::ChessLink`): the handshake (the
//! version, the start-up option bytes written and read back, then a status), the probe, the
//! polling of a board whose automatic reports could not be switched on, and the decoding of
//! its replies into the core's [`BoardInput`]s.
//!
//! - Replies are matched by their letter, never by their order: the board may send a status
//!   report between a command and its reply.
//! - Every status is a whole board. The first one on a connection, and the answer to a whole
//!   board someone asked for (the handshake's, the session's), goes to the core as
//!   [`BoardInput::Scan`]; after that a status that differs in one square is that square's
//!   [`BoardInput::Square`] (exactly what it is: one change between two scans), one that
//!   differs in several is a `Scan` (several squares at once, in no order the board shows),
//!   and one that changes nothing is the line's own. The squares go to the core in its frame
//!   (a8 first) read in the order the drivers in use read a board with White on the usual
//!   side ([`WireOrder::H1First`]); a board turned round then shows the start position turned
//!   round, which the core's orientation handling recognises as for any board.
//! - A malformed or mis-checked frame is counted by the decoder and dropped, never a move.
//!   Since each status is a whole board, what it may have carried is restored by asking for
//!   the next one at once (`S`), not by opening a gap in the record.
//! - The board keeps no moves: a gap is recovered from the current board alone (the link
//!   answers a memory request with "unavailable").

use shakmaty::Square;

use super::decoder::{Decoder, DecoderStats, ParityCheck};
use super::leds::LedPattern;
use super::line::ParityBy;
use super::message::{Command, Reply};
use super::settings::{AUTO_REPORT, AutoReport, StartupSettings};
use super::squares::{Scan, WireOrder};
use crate::board_input::{BoardInput, IdentityReport, Scan as BoardScan};
use crate::vocab::Millis;

/// How often a board whose automatic reports are off is asked for its status: about five
/// readings a second follow a game closely (a move lasts longer) and leave the line nearly
/// idle (67 characters of 3,840 a second each).
pub const POLL_MS: Millis = 200;

/// At most one LED command a second: an `L` takes 43 ms of the line, and the board is not
/// made to flicker (the drivers in use throttle the same way).
pub const LED_GAP_MS: Millis = 1_000;

/// What the board's LEDs should show (squares of the game, whatever way the board lies).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LedRequest {
    Off,
    /// The last move: its two squares blinking in opposite phase.
    Move {
        from: Square,
        to: Square,
    },
    /// Squares steadily lit (an illegal placement's, until it is put right).
    Squares(Vec<Square>),
}

/// The parity bits are made and checked by the host (8N1 port); see `line`.
pub const PARITY_BY: ParityBy = ParityBy::Host;

/// One open ChessLink port's driver state.
#[derive(Debug)]
pub struct ChessLink {
    decoder: Decoder,
    settings: StartupSettings,
    /// The option bytes the board read back on this connection (address, value).
    reads: Vec<(u8, u8)>,
    /// The last board given to the core, in its frame (`None`: none yet on this connection).
    last: Option<BoardScan>,
    /// Which order the board sends its squares in, known once it showed the start position
    /// (its LEDs follow the same order).
    order: Option<WireOrder>,
    /// Whole boards asked for by the handshake or the session and not answered yet: the
    /// next status goes to the core whole, even if nothing changed.
    status_asked: u32,
    /// `S` commands this driver sent on its own (polling, a lost frame): not counted above.
    own_asks: u32,
    /// A status is due (polling, or a frame was lost): when it may be asked.
    ask_at: Option<Millis>,
    /// A status arrived on this connection: the handshake is through.
    has_status: bool,
    /// Frames (and letters with a bad parity bit) seen dropped so far.
    losses: u64,
    /// What the LEDs should show, and what they were last told (`None`: not on this
    /// connection).
    leds_wanted: Option<LedRequest>,
    leds_shown: Option<LedPattern>,
    /// When the last LED command went out.
    leds_at: Option<Millis>,
}

impl Default for ChessLink {
    fn default() -> Self {
        ChessLink::new()
    }
}

impl ChessLink {
    pub fn new() -> Self {
        ChessLink {
            decoder: Decoder::with_parity(ParityCheck::Verify),
            settings: StartupSettings::default(),
            reads: Vec::new(),
            last: None,
            order: None,
            status_asked: 0,
            own_asks: 0,
            ask_at: None,
            has_status: false,
            losses: 0,
            leds_wanted: None,
            leds_shown: None,
            leds_at: None,
        }
    }

    /// Show `request` on the LEDs: written when the line allows, at most one command per
    /// [`LED_GAP_MS`] (a request replaced before it went out is never written).
    pub fn show_leds(&mut self, request: LedRequest) {
        self.leds_wanted = Some(request);
    }

    /// The pattern `request` stands for on this board (its square order, once the start
    /// position told it).
    pub fn led_pattern(&self, request: &LedRequest) -> LedPattern {
        let order = self.order.unwrap_or_default();
        match request {
            LedRequest::Off => LedPattern::default(),
            LedRequest::Move { from, to } => LedPattern::for_move(*from, *to, order),
            LedRequest::Squares(squares) => LedPattern::steady(squares.iter().copied(), order),
        }
    }

    /// The LED command due now, if any.
    fn leds_due(&self, now: Millis) -> Option<Millis> {
        let wanted = self.leds_wanted.as_ref()?;
        if self.leds_shown.as_ref() == Some(&self.led_pattern(wanted)) {
            return None;
        }
        Some(self.leds_at.map_or(now, |at| at + LED_GAP_MS))
    }

    /// The bytes of `command` on this line.
    pub fn encode(command: &Command) -> Vec<u8> {
        command.encode(PARITY_BY)
    }

    /// Commands sent on every (re)connection, each on its own: the version (the board is
    /// there, and which firmware), the start-up option bytes written and read back (they
    /// survive power-off, so another program's report mode is undone every time), then the
    /// whole board, asked last so that it is read with the reports already switched on.
    pub fn handshake(&self) -> Vec<Vec<u8>> {
        std::iter::once(Command::Version)
            .chain(self.settings.commands())
            .chain(std::iter::once(Command::Status))
            .map(|c| Self::encode(&c))
            .collect()
    }

    /// Sent on a quiet line (a board that reports only changes is quiet between moves).
    pub fn probe() -> Vec<u8> {
        Self::encode(&Command::Version)
    }

    /// The whole board (`S`).
    pub fn status_request() -> Vec<u8> {
        Self::encode(&Command::Status)
    }

    /// The link wrote `bytes`: a whole board asked for by someone else than this driver is
    /// given to the core whole when it comes.
    pub fn on_sent(&mut self, bytes: &[u8]) {
        if bytes == Self::status_request().as_slice() {
            if self.own_asks > 0 {
                self.own_asks -= 1;
            } else {
                self.status_asked += 1;
            }
        }
    }

    /// Feed one read's worth of bytes: one entry per complete reply.
    pub fn push(&mut self, bytes: &[u8], now: Millis) -> Vec<Option<BoardInput>> {
        self.decoder.push(bytes);
        let mut out = Vec::new();
        while let Some(reply) = self.decoder.next_message() {
            out.push(self.on_reply(reply, now));
        }
        let stats = self.decoder.stats();
        let losses = stats.dropped_frames + stats.parity_errors;
        if losses > self.losses {
            // What the lost frame said, if it was a status, is in the next one: ask now.
            self.losses = losses;
            self.ask_at = Some(self.ask_at.map_or(now, |at| at.min(now)));
        }
        out
    }

    fn on_reply(&mut self, reply: Reply, now: Millis) -> Option<BoardInput> {
        match reply {
            Reply::Version(v) => Some(BoardInput::Identity(IdentityReport::ChessLinkFirmware {
                high: v.high,
                low: v.low,
            })),
            Reply::Status(scan) => self.on_status(&scan, now),
            Reply::Read { address, value } => {
                self.reads.retain(|&(a, _)| a != address);
                self.reads.push((address, value));
                if address == AUTO_REPORT && self.reports_changes() {
                    self.ask_at = None;
                }
                None
            }
            Reply::Written { .. } | Reply::LedsSet | Reply::LedsOff => None,
        }
    }

    fn on_status(&mut self, scan: &Scan, now: Millis) -> Option<BoardInput> {
        self.has_status = true;
        if let Some(order) = WireOrder::of_start_position(scan) {
            self.order = Some(order);
        }
        if !self.reports_changes() {
            self.ask_at = Some(now + POLL_MS);
        } else if self.ask_at.is_some_and(|at| at > now) {
            self.ask_at = None;
        }
        let board = board_frame(scan);
        let asked = self.status_asked > 0;
        self.status_asked = self.status_asked.saturating_sub(1);
        let input = match &self.last {
            Some(last) if !asked => {
                let mut changed =
                    (0..64u8).filter(|&i| last[usize::from(i)] != board[usize::from(i)]);
                match (changed.next(), changed.next()) {
                    (None, _) => None,
                    (Some(index), None) => Some(BoardInput::Square {
                        index,
                        content: board[usize::from(index)],
                    }),
                    (Some(_), Some(_)) => Some(BoardInput::Scan(Box::new(board))),
                }
            }
            _ => Some(BoardInput::Scan(Box::new(board))),
        };
        self.last = Some(board);
        input
    }

    /// The board reports changes by itself: its report mode read back as one that does.
    pub fn reports_changes(&self) -> bool {
        self.reads.iter().any(|&(address, value)| {
            address == AUTO_REPORT
                && AutoReport::from_code(value) != AutoReport::Off
                && AutoReport::from_code(value) != AutoReport::Interval
        })
    }

    /// The option bytes that did not read back as written (an address not answered yet
    /// counts as differing).
    pub fn mismatches(&self) -> Vec<u8> {
        self.settings.mismatches(&self.reads)
    }

    /// The status the driver asks for on its own, when due.
    /// LEDs wait for the whole board (its order decides which LEDs are a square's).
    pub fn poll_transmit(&mut self, now: Millis) -> Option<Vec<u8>> {
        if self.ask_at.is_some_and(|at| now >= at) {
            self.ask_at = None;
            self.own_asks += 1;
            return Some(Self::status_request());
        }
        if self.has_status && self.leds_due(now).is_some_and(|at| now >= at) {
            let pattern = self.led_pattern(self.leds_wanted.as_ref()?);
            self.leds_at = Some(now);
            self.leds_shown = Some(pattern);
            // The acknowledgement (`l`/`x`) is not waited for: a lost one costs nothing.
            let command = if pattern.is_dark() {
                Command::LedsOff
            } else {
                Command::Leds(pattern)
            };
            return Some(Self::encode(&command));
        }
        None
    }

    /// When [`ChessLink::poll_transmit`] next has something to send.
    pub fn poll_timeout(&self) -> Option<Millis> {
        let leds = self
            .has_status
            .then(|| self.leds_due(self.leds_at.unwrap_or(0)))
            .flatten();
        match (self.ask_at, leds) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The square order the board showed the start position in, once it did.
    pub fn order(&self) -> Option<WireOrder> {
        self.order
    }

    /// The square of the core's frame index `index` (a8 first) on this board, as the LEDs
    /// number it: the frame is read in [`WireOrder::H1First`].
    pub fn wire_square(index: u8) -> Square {
        WireOrder::A8First.square_of_index(usize::from(index))
    }

    pub fn stats(&self) -> DecoderStats {
        self.decoder.stats()
    }

    /// A frame has begun and is not complete yet.
    pub fn in_frame(&self) -> bool {
        self.decoder.pending_len() > 0
    }
}

/// The core's frame (a8 first) of a status read in the drivers' order (h1 first): the
/// characters turned round.
pub fn board_frame(scan: &Scan) -> BoardScan {
    let mut board = scan.squares;
    board.reverse();
    board
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chesslink::decoder::CommandDecoder;
    use shakmaty::{Board, Color, Piece, Role};

    fn reply(r: Reply) -> Vec<u8> {
        r.encode(PARITY_BY)
    }

    fn status(board: &Board, order: WireOrder) -> Vec<u8> {
        reply(Reply::Status(Scan::from_board(board, order)))
    }

    #[test]
    fn the_handshake_asks_version_writes_reads_back_then_the_board() {
        let d = ChessLink::new();
        let mut commands = CommandDecoder::new();
        let sent: Vec<Command> = d
            .handshake()
            .iter()
            .flat_map(|b| commands.feed(b).collect::<Vec<_>>())
            .collect();
        assert_eq!(sent.first(), Some(&Command::Version));
        assert_eq!(sent.last(), Some(&Command::Status));
        assert!(sent.contains(&Command::Write {
            address: AUTO_REPORT,
            value: AutoReport::OnChange.code()
        }));
        assert!(sent.contains(&Command::Read {
            address: AUTO_REPORT
        }));
        assert_eq!(commands.stats().dropped_frames, 0);
    }

    #[test]
    fn statuses_become_a_whole_board_then_single_squares() {
        let mut d = ChessLink::new();
        let mut board = Board::default();
        d.on_sent(&ChessLink::status_request());
        let first = d.push(&status(&board, WireOrder::H1First), 0);
        let [Some(BoardInput::Scan(scan))] = first.as_slice() else {
            panic!("{first:?}");
        };
        // The core's frame: index 0 = a8, 63 = h1.
        assert_eq!(
            scan[0],
            Some(Piece {
                color: Color::Black,
                role: Role::Rook
            })
        );
        assert_eq!(
            scan[60],
            Some(Piece {
                color: Color::White,
                role: Role::King
            })
        );
        assert_eq!(d.order(), Some(WireOrder::H1First));
        // Nothing changed: the line's own.
        assert_eq!(d.push(&status(&board, WireOrder::H1First), 10), [None]);
        // e2 lifted: one square (e2 = index 52 in the core's frame).
        board.discard_piece_at(Square::E2);
        assert_eq!(
            d.push(&status(&board, WireOrder::H1First), 20),
            [Some(BoardInput::Square {
                index: 52,
                content: None
            })]
        );
        // Two squares at once: a whole board.
        board.discard_piece_at(Square::D2);
        board.discard_piece_at(Square::C2);
        assert!(matches!(
            d.push(&status(&board, WireOrder::H1First), 30).as_slice(),
            [Some(BoardInput::Scan(_))]
        ));
        // Asked for by the session: whole even though nothing changed.
        d.on_sent(&ChessLink::status_request());
        assert!(matches!(
            d.push(&status(&board, WireOrder::H1First), 40).as_slice(),
            [Some(BoardInput::Scan(_))]
        ));
    }

    #[test]
    fn a_turned_board_is_recognised_from_the_start_position() {
        let mut d = ChessLink::new();
        let out = d.push(&status(&Board::default(), WireOrder::A8First), 0);
        assert_eq!(d.order(), Some(WireOrder::A8First));
        let [Some(BoardInput::Scan(scan))] = out.as_slice() else {
            panic!("{out:?}");
        };
        // Read as the drivers read a board: White's pieces at the far side.
        assert_eq!(
            scan[0],
            Some(Piece {
                color: Color::White,
                role: Role::Rook
            })
        );
    }

    #[test]
    fn replies_are_matched_by_letter_and_reports_decide_polling() {
        let mut d = ChessLink::new();
        // A status arrives before the read-back: no auto-report known yet, so polled.
        d.push(&status(&Board::default(), WireOrder::H1First), 0);
        assert_eq!(d.poll_timeout(), Some(POLL_MS));
        let mut bytes = reply(Reply::Read {
            address: 0,
            value: 0,
        });
        bytes.extend(reply(Reply::Read {
            address: 1,
            value: 20,
        }));
        bytes.extend(reply(Reply::Read {
            address: AUTO_REPORT,
            value: 3,
        }));
        assert_eq!(d.push(&bytes, 50), [None, None, None]);
        assert!(d.reports_changes());
        assert!(d.mismatches().is_empty());
        assert_eq!(d.poll_timeout(), None);
        // A board that keeps its reports off is polled.
        let mut off = ChessLink::new();
        off.push(
            &reply(Reply::Read {
                address: AUTO_REPORT,
                value: 1,
            }),
            0,
        );
        assert_eq!(off.mismatches(), vec![0, 1, 2]);
        off.push(&status(&Board::default(), WireOrder::H1First), 10);
        assert_eq!(off.poll_transmit(10 + POLL_MS - 1), None);
        assert_eq!(
            off.poll_transmit(10 + POLL_MS),
            Some(ChessLink::status_request())
        );
        // Its own poll is not a whole board someone asked for.
        off.on_sent(&ChessLink::status_request());
        assert_eq!(
            off.push(&status(&Board::default(), WireOrder::H1First), 300),
            [None]
        );
    }

    #[test]
    fn garbage_and_bad_checks_are_counted_and_the_board_asked_again() {
        let mut d = ChessLink::new();
        d.push(
            &reply(Reply::Read {
                address: AUTO_REPORT,
                value: 3,
            }),
            0,
        );
        d.push(&status(&Board::default(), WireOrder::H1First), 0);
        assert_eq!(d.poll_timeout(), None);
        let mut bad = status(&Board::empty(), WireOrder::H1First);
        let n = bad.len();
        bad[n - 1] ^= 0x01; // wrong check digit (parity fixed up below)
        bad[n - 1] = crate::chesslink::line::with_odd_parity(bad[n - 1]);
        let out = d.push(&[&[0x13, 0xFF, 0x80][..], &bad[..]].concat(), 100);
        assert!(out.iter().all(Option::is_none), "{out:?}");
        assert!(d.stats().dropped_frames >= 1);
        assert!(d.stats().skipped_bytes >= 3);
        assert_eq!(d.poll_transmit(100), Some(ChessLink::status_request()));
    }

    #[test]
    fn leds_show_the_request_at_most_once_a_second_in_the_boards_order() {
        use crate::chesslink::message::Command as C;
        let mut d = ChessLink::new();
        d.show_leds(LedRequest::Move {
            from: Square::E2,
            to: Square::E4,
        });
        assert_eq!(
            d.poll_transmit(0),
            None,
            "not before the board's order is known"
        );
        d.push(
            &reply(Reply::Read {
                address: AUTO_REPORT,
                value: 3,
            }),
            0,
        );
        d.push(&status(&Board::default(), WireOrder::A8First), 10);
        let sent = d.poll_transmit(10).expect("the LEDs");
        let want = LedPattern::for_move(Square::E2, Square::E4, WireOrder::A8First);
        assert_eq!(sent, C::Leds(want).encode(PARITY_BY));
        // Shown: nothing more. A new wish waits for its second.
        assert_eq!(d.poll_transmit(20), None);
        d.show_leds(LedRequest::Squares(vec![Square::D4]));
        assert_eq!(d.poll_timeout(), Some(10 + LED_GAP_MS));
        assert_eq!(d.poll_transmit(500), None);
        d.show_leds(LedRequest::Off);
        assert_eq!(
            d.poll_transmit(10 + LED_GAP_MS),
            Some(C::LedsOff.encode(PARITY_BY))
        );
        assert_eq!(d.poll_timeout(), None);
    }

    #[test]
    fn the_version_names_the_firmware() {
        let mut d = ChessLink::new();
        let out = d.push(
            &reply(Reply::Version(super::super::Version { high: 2, low: 5 })),
            0,
        );
        assert_eq!(
            out,
            [Some(BoardInput::Identity(
                IdentityReport::ChessLinkFirmware { high: 2, low: 5 }
            ))]
        );
    }
}
