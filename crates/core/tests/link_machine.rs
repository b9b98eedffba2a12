//! The serial link machine (`eboard_core::link`) driven by time as an argument: handshake and its
//! pacing, the watchdog (silence → probe → lost), the reconnect backoff, listen-only, junk,
//! the clock channel's one command in flight, the session's requests. Minutes of link time
//! run in microseconds; nothing sleeps. `tests/daemon_serial.rs` proves the same shell end to
//! end through a real pty.

use std::io;

use eboard_core::board_input::BoardInput;
use eboard_core::dgt::clock_channel::{ACK_TIMEOUT_MS, MESSAGE_HOLD_MS, MessageError};
use eboard_core::dgt::message::ClockAck;
use eboard_core::dgt::{Command, Message};
use eboard_core::link::{
    self, BACKOFF_MAX_MS, ClockRefusal, Fact, HANDSHAKE_GAP_MS, IDLE_TICK_MS, LOST_AFTER_MS, Link,
    Lost, OPEN_SETTLE_MS, Output, PROBE_AFTER_MS, QUIET_TICK_MS, SessionTimer, TICK_MS, TICK_SLOTS,
};
use eboard_core::session::{BoardRequest, Input};
use eboard_core::vocab::Millis;

/// Everything the machine did, stamped with the time it did it.
#[derive(Debug, Default)]
struct Log {
    opens: Vec<Millis>,
    closes: Vec<Millis>,
    writes: Vec<(Millis, Vec<u8>)>,
    session: Vec<(Millis, Input)>,
    clock: Vec<(Millis, u64, Result<(), MessageError>)>,
    facts: Vec<(Millis, Fact)>,
}

/// A shell that does what the machine asks, instantly, and a stepped clock.
struct Rig {
    link: Link,
    now: Millis,
    /// Whether the next `Output::Open` succeeds.
    port_present: bool,
    /// The port as the shell holds it: opened on `Output::Open`, dropped on `Output::Close`.
    port_open: bool,
    log: Log,
}

impl Rig {
    fn new(listen_only: bool) -> Rig {
        Rig {
            link: Link::new(listen_only),
            now: 0,
            port_present: true,
            port_open: false,
            log: Log::default(),
        }
    }

    /// Carry out the machine's outputs at the current time.
    fn drain(&mut self) {
        while let Some(output) = self.link.poll_output() {
            let now = self.now;
            match output {
                Output::Open => {
                    assert!(!self.port_open, "asked to open an open port");
                    self.log.opens.push(now);
                    if self.port_present {
                        self.port_open = true;
                        self.link.on_opened(now);
                    } else {
                        self.link
                            .on_open_failed(io::Error::from(io::ErrorKind::NotFound));
                    }
                }
                Output::Close => {
                    assert!(self.port_open, "asked to close a closed port");
                    self.port_open = false;
                    self.log.closes.push(now);
                }
                Output::Write(bytes) => {
                    assert!(self.port_open, "a write on a closed port");
                    self.log.writes.push((now, bytes));
                }
                Output::Session(input) => self.log.session.push((now, input)),
                Output::Clock { request, result } => self.log.clock.push((now, request, result)),
                Output::Fact(fact) => self.log.facts.push((now, fact)),
            }
        }
    }

    /// Let time pass to `t`, waking the machine whenever it asked to be woken. Panics if
    /// it asks to be woken again and again at the same instant (it would spin the shell).
    fn advance_to(&mut self, t: Millis) {
        assert!(t >= self.now, "time runs forward");
        let mut same_instant = 0;
        loop {
            let wake = self.link.wake_at(self.now);
            if wake > t {
                break;
            }
            let at = wake.max(self.now);
            same_instant = if at == self.now { same_instant + 1 } else { 0 };
            assert!(same_instant < 3, "the machine spins at {at} ms");
            self.now = at;
            self.link.handle_timeout(at);
            self.drain();
        }
        self.now = t;
    }

    fn advance(&mut self, ms: Millis) {
        self.advance_to(self.now + ms);
    }

    fn bytes(&mut self, bytes: &[u8]) {
        self.link.on_bytes(bytes, self.now);
        self.drain();
    }

    fn message(&mut self, m: Message) {
        self.bytes(&m.to_bytes());
    }

    /// Open the port at 0, let the handshake go out and the board answer it with its whole
    /// board (what connects a link that can ask).
    fn connected(listen_only: bool) -> Rig {
        let mut r = Rig::new(listen_only);
        r.advance_to(0);
        assert!(r.link.is_open());
        r.advance_to(1_000);
        r.message(dump());
        assert!(r.link.is_connected());
        r
    }

    fn writes_between(&self, from: Millis, to: Millis) -> Vec<(Millis, Vec<u8>)> {
        self.log
            .writes
            .iter()
            .filter(|(t, _)| (from..to).contains(t))
            .cloned()
            .collect()
    }

    fn session_since(&self, from: Millis) -> Vec<&Input> {
        self.log
            .session
            .iter()
            .filter(|(t, i)| *t >= from && *i != Input::Tick)
            .map(|(_, i)| i)
            .collect()
    }

    fn lost(&self) -> Vec<(Millis, String)> {
        self.log
            .facts
            .iter()
            .filter_map(|(t, f)| match f {
                Fact::Lost(l) => Some((*t, l.to_string())),
                _ => None,
            })
            .collect()
    }
}

/// What the session is told of a board message (its driver's translation).
fn told(message: Message) -> BoardInput {
    message
        .into_board_input()
        .expect("a message the session is told")
}

fn version() -> Message {
    Message::Version {
        major: 3,
        minor: 10,
    }
}

/// A whole board (empty: the link does not read it).
fn dump() -> Message {
    Message::BoardDump(Box::new([None; 64]))
}

fn handshake_at(start: Millis) -> Vec<(Millis, Vec<u8>)> {
    link::handshake()
        .into_iter()
        .enumerate()
        .map(|(i, bytes)| (start + i as Millis * HANDSHAKE_GAP_MS, bytes))
        .collect()
}

fn ack(sub: u8) -> Message {
    Message::ClockAck(ClockAck::ok(sub))
}

#[test]
fn the_port_opens_at_once_and_the_handshake_goes_out_paced_after_the_settle() {
    let mut r = Rig::new(false);
    r.advance_to(5_000);
    assert_eq!(r.log.opens, [0]);
    // Nobody answers, so the handshake is sent again later: look at the first one only.
    assert_eq!(r.writes_between(0, 1_000), handshake_at(OPEN_SETTLE_MS));
    let sent: Vec<Command> = link::handshake()
        .iter()
        .map(|b| eboard_core::dgt::parse_command(b).unwrap().0)
        .collect();
    assert_eq!(
        sent,
        [
            Command::UpdateNice,
            Command::SendBoard,
            Command::SerialNumber,
            Command::LongSerialNumber,
            Command::Version,
            Command::BatteryStatus,
            Command::Clock(eboard_core::dgt::ClockCommand::Version),
        ]
    );
    assert!(
        r.log
            .facts
            .iter()
            .any(|(t, f)| *t == 0 && matches!(f, Fact::PortOpened)),
        "{:?}",
        r.log.facts
    );
}

#[test]
fn the_whole_board_connects_and_is_fed_to_the_session_after_the_link() {
    let mut r = Rig::new(false);
    r.advance_to(350);
    assert!(r.link.is_open() && !r.link.is_connected());
    // The board answers, but what it shows is not read yet: not connected, and what came
    // before the whole board reaches the session while the link is still down.
    r.message(Message::SerialNumber("13116".into()));
    assert!(!r.link.is_connected());
    assert!(
        r.log.facts.iter().any(|(_, f)| matches!(f, Fact::Answers)),
        "{:?}",
        r.log.facts
    );
    r.message(dump());
    assert!(r.link.is_connected());
    assert_eq!(
        r.session_since(0),
        [
            &Input::Board(told(Message::SerialNumber("13116".into()))),
            &Input::Link(true),
            &Input::Board(told(dump())),
        ]
    );
    // Answering does not stop the rest of the handshake.
    r.advance_to(1_000);
    assert_eq!(r.writes_between(0, 1_000), handshake_at(OPEN_SETTLE_MS));
    // A second whole board is only a message.
    r.message(dump());
    assert_eq!(r.session_since(1_000), [&Input::Board(told(dump()))]);
}

#[test]
fn a_whole_board_that_does_not_come_is_asked_again_and_connects_when_it_does() {
    let mut r = Rig::new(false);
    r.advance_to(1_000);
    let send_board = Command::SendBoard.to_bytes();
    let asked = |r: &Rig| -> Vec<Millis> {
        r.log
            .writes
            .iter()
            .filter(|(_, b)| *b == send_board)
            .map(|(t, _)| *t)
            .collect()
    };
    let first = OPEN_SETTLE_MS + HANDSHAKE_GAP_MS;
    assert_eq!(asked(&r), [first]);
    // The board talks (its clock, every half second) but its dump was lost on the line.
    for _ in 0..6 {
        r.message(version());
        r.advance(500);
    }
    assert!(!r.link.is_connected(), "no whole board read, not connected");
    assert_eq!(asked(&r), [first, first + PROBE_AFTER_MS]);
    assert!(!r.session_since(0).contains(&&Input::Link(true)));
    r.message(dump());
    assert!(r.link.is_connected());
    // A frame cut before the board was read asks for it at once (it may have been the dump).
    let mut r = Rig::new(false);
    r.advance_to(1_000);
    r.message(version());
    r.bytes(&[0x91, 0x00, 0x08, b'1', 0x93, 0x00]);
    r.advance(HANDSHAKE_GAP_MS);
    assert_eq!(asked(&r), [first, 1_000]);
    assert!(!r.session_since(0).contains(&&Input::LineLoss));
}

#[test]
fn a_quiet_board_is_probed_after_two_seconds_and_lost_after_five() {
    let mut r = Rig::connected(false);
    let heard = r.now;
    r.advance_to(heard + LOST_AFTER_MS - 1);
    assert!(r.link.is_connected(), "not lost before five seconds");
    let probes = r.writes_between(heard, heard + LOST_AFTER_MS);
    assert_eq!(
        probes,
        [
            (heard + PROBE_AFTER_MS, link::probe()),
            (heard + 2 * PROBE_AFTER_MS, link::probe())
        ]
    );
    r.advance(1);
    assert!(!r.link.is_open());
    assert_eq!(r.log.closes, [heard + LOST_AFTER_MS]);
    assert_eq!(
        r.lost(),
        [(heard + LOST_AFTER_MS, "no answer for 5.0 s".to_string())]
    );
    assert_eq!(r.session_since(heard + 1), [&Input::Link(false)]);
}

#[test]
fn an_answered_probe_keeps_the_board() {
    let mut r = Rig::connected(false);
    for _ in 0..30 {
        let probe_at = r.now + PROBE_AFTER_MS;
        r.advance_to(probe_at);
        assert_eq!(r.log.writes.last(), Some(&(probe_at, link::probe())));
        r.advance(50);
        r.message(version());
    }
    assert!(r.link.is_connected(), "a minute of probes answered");
    assert!(r.lost().is_empty());
}

#[test]
fn a_board_that_never_answers_gets_the_handshake_again_then_is_lost_and_retried() {
    let mut r = Rig::new(false);
    r.advance_to(LOST_AFTER_MS - 1);
    // The handshake, then at two seconds of silence since opening the whole handshake again.
    let mut expected = handshake_at(OPEN_SETTLE_MS);
    expected.extend(handshake_at(PROBE_AFTER_MS));
    expected.extend(handshake_at(2 * PROBE_AFTER_MS));
    assert_eq!(r.writes_between(0, LOST_AFTER_MS), expected);
    r.advance_to(LOST_AFTER_MS);
    assert_eq!(r.log.closes, [LOST_AFTER_MS]);
    assert_eq!(r.session_since(0), [&Input::Link(false)]);
    // The first attempt doubled the backoff to 400 ms; nobody answered to reset it.
    r.advance_to(LOST_AFTER_MS + 399);
    assert_eq!(r.log.opens, [0]);
    r.advance_to(LOST_AFTER_MS + 400);
    assert_eq!(r.log.opens, [0, LOST_AFTER_MS + 400]);
    r.advance_to(LOST_AFTER_MS + 1_500);
    assert_eq!(
        r.writes_between(LOST_AFTER_MS, LOST_AFTER_MS + 1_500),
        handshake_at(LOST_AFTER_MS + 400 + OPEN_SETTLE_MS)
    );
}

#[test]
fn a_missing_port_is_retried_with_a_doubling_backoff_and_said_once() {
    let mut r = Rig::new(false);
    r.port_present = false;
    r.advance_to(20_000);
    // 200 ms doubled at each attempt, to at most 2 s.
    assert_eq!(
        r.log.opens,
        [
            0, 400, 1_200, 2_800, 4_800, 6_800, 8_800, 10_800, 12_800, 14_800, 16_800, 18_800
        ]
    );
    assert!(
        r.log
            .opens
            .windows(2)
            .all(|w| w[1] - w[0] <= BACKOFF_MAX_MS)
    );
    let loud: Vec<bool> = r
        .log
        .facts
        .iter()
        .filter_map(|(_, f)| match f {
            Fact::OpenFailed { first, .. } => Some(*first),
            _ => None,
        })
        .collect();
    assert_eq!(loud.len(), r.log.opens.len());
    assert!(loud[0] && loud[1..].iter().all(|l| !l), "{loud:?}");
    assert!(r.log.writes.is_empty());
    // Without a port the session is ticked once a second.
    let ticks: Vec<Millis> = r
        .log
        .session
        .iter()
        .filter(|(_, i)| *i == Input::Tick)
        .map(|(t, _)| *t)
        .collect();
    assert_eq!(
        ticks,
        (1..=20).map(|s| s * IDLE_TICK_MS).collect::<Vec<_>>()
    );

    // The board is plugged in: the next attempt opens it; its answer resets the backoff and
    // the loud first failure.
    r.port_present = true;
    r.advance_to(20_800);
    assert!(r.link.is_open());
    r.advance(500);
    r.message(version());
    r.link.on_eof(r.now);
    r.drain();
    let lost_at = r.now;
    r.port_present = false;
    r.advance(4_999);
    let after: Vec<Millis> = r
        .log
        .opens
        .iter()
        .copied()
        .filter(|t| *t > lost_at)
        .collect();
    assert_eq!(
        after,
        [
            lost_at + 200,
            lost_at + 600,
            lost_at + 1_400,
            lost_at + 3_000
        ]
    );
    let first_again = r
        .log
        .facts
        .iter()
        .any(|(t, f)| *t == lost_at + 200 && matches!(f, Fact::OpenFailed { first: true, .. }));
    assert!(first_again, "{:?}", r.log.facts);
}

#[test]
fn end_of_file_closes_and_reconnects_after_the_backoff_with_a_new_handshake() {
    let mut r = Rig::connected(false);
    r.advance_to(2_500);
    r.link.on_eof(r.now);
    r.drain();
    assert_eq!(r.log.closes, [2_500]);
    assert_eq!(
        r.lost(),
        [(2_500, "the device went away (end of file)".to_string())]
    );
    assert_eq!(r.session_since(2_500), [&Input::Link(false)]);
    assert!(!r.link.is_connected());
    // Bytes that were still in flight when the port closed are nobody's business.
    r.message(version());
    assert_eq!(r.session_since(2_500), [&Input::Link(false)]);
    // The board had answered, so the backoff is back at its first step.
    r.advance_to(2_699);
    assert_eq!(r.log.opens, [0]);
    r.advance_to(3_700);
    assert_eq!(r.log.opens, [0, 2_700]);
    assert_eq!(
        r.writes_between(2_500, 3_700),
        handshake_at(2_700 + OPEN_SETTLE_MS)
    );
    r.message(dump());
    assert!(r.link.is_connected());
    assert_eq!(
        r.session_since(3_000),
        [&Input::Link(true), &Input::Board(told(dump()))]
    );
}

#[test]
fn read_and_write_errors_lose_the_link_like_an_unplug() {
    let mut r = Rig::connected(false);
    r.advance_to(1_200);
    r.link.on_write_failed(
        io::Error::new(io::ErrorKind::TimedOut, "write timed out"),
        1_200,
    );
    r.drain();
    assert_eq!(r.log.closes, [1_200]);
    assert_eq!(
        r.lost(),
        [(1_200, "serial I/O error: write timed out".to_string())]
    );
    r.advance_to(1_400);
    assert!(r.link.is_open());
    r.advance(400);
    r.message(dump());
    r.link.on_read_failed(io::Error::other("EIO"), r.now);
    r.drain();
    assert_eq!(r.log.closes.len(), 2);
    assert_eq!(r.lost()[1].1, "serial I/O error: EIO");
    assert_eq!(
        r.session_since(0)
            .into_iter()
            .filter(|i| matches!(i, Input::Link(_)))
            .collect::<Vec<_>>(),
        [
            &Input::Link(true),
            &Input::Link(false),
            &Input::Link(true),
            &Input::Link(false)
        ]
    );
}

#[test]
fn listen_only_never_writes_and_silence_is_not_a_lost_board() {
    let mut r = Rig::new(true);
    r.advance_to(0);
    assert!(r.link.is_open());
    r.advance_to(3_000);
    r.message(version());
    assert!(r.link.is_connected());
    // The session asks for the board and its memory; an operator asks for a clock message.
    r.link.request(BoardRequest::SendBoard, r.now);
    r.link.request(BoardRequest::ReadMemory, r.now);
    r.drain();
    assert_eq!(
        r.link.show_clock_message("HELLO", true, r.now),
        Err(ClockRefusal::ListenOnly)
    );
    assert_eq!(
        r.session_since(3_000),
        [
            &Input::Link(true),
            &Input::Board(told(version())),
            &Input::MemoryUnavailable
        ]
    );
    // Ten silent minutes.
    r.advance(600_000);
    assert!(
        r.log.writes.is_empty(),
        "listen-only wrote {:?}",
        r.log.writes
    );
    assert!(
        r.link.is_connected(),
        "silence is not a lost board when listen-only"
    );
    assert!(r.lost().is_empty());
    // Still ticked ten times a second for the session's time-based rules.
    let ticks = r
        .log
        .session
        .iter()
        .filter(|(t, i)| *t > 3_000 && *i == Input::Tick)
        .count() as u64;
    assert!(ticks >= 600_000 / TICK_MS, "{ticks} ticks");
    // An unplug is still seen, and the port reopened without a handshake.
    r.link.on_eof(r.now);
    r.drain();
    r.advance(10_000);
    assert_eq!(r.log.opens.len(), 2);
    assert!(r.log.writes.is_empty());
}

#[test]
fn junk_is_skipped_and_a_frame_cut_while_connected_asks_for_the_whole_board() {
    let mut r = Rig::new(false);
    r.advance_to(350);
    // Before any answer a cut frame is just junk: nothing to resynchronise yet.
    r.bytes(&[0x91, 0x00, 0x08, b'1', 0x93, 0x00]);
    assert!(r.session_since(0).is_empty());
    r.bytes(&[0x05, 3, 10]);
    r.message(dump());
    assert_eq!(
        r.session_since(0),
        [
            &Input::Board(told(version())),
            &Input::Link(true),
            &Input::Board(told(dump()))
        ]
    );
    // Garbage of every kind: stray data bytes, ids with absurd lengths, an EEPROM-dump
    // header announcing 8 KB that never comes, bytes with every value.
    let mut junk: Vec<u8> = vec![0x00, 0x7F, 0x13, 0x8D, 0x7F, 0x7F, 0x86, 0x00, 0x43, 0x01];
    junk.extend_from_slice(&[0x8F, 0x3E, 0x03]);
    junk.extend((0u8..=255).rev());
    junk.extend_from_slice(&[0x93, 0x00]);
    let before = r.log.session.len();
    for _ in 0..20 {
        r.bytes(&junk);
    }
    r.message(Message::Version {
        major: 3,
        minor: 11,
    });
    let fed: Vec<&Input> = r.log.session[before..]
        .iter()
        .map(|(_, i)| i)
        .filter(|i| **i != Input::Tick)
        .collect();
    assert_eq!(
        fed.last(),
        Some(&&Input::Board(told(Message::Version {
            major: 3,
            minor: 11
        }))),
        "a real message after the junk is understood: {fed:?}"
    );
    assert!(fed.contains(&&Input::LineLoss), "{fed:?}");
    assert!(
        fed.iter()
            .all(|i| matches!(i, Input::LineLoss | Input::Board(_))),
        "junk is never a link change: {fed:?}"
    );
    assert!(r.link.is_connected());
    assert!(
        r.log
            .facts
            .iter()
            .any(|(_, f)| matches!(f, Fact::Skipped(n) if *n > 0)),
        "skipped bytes are reported"
    );
    // The session then asks for the whole board, which is written at once.
    r.advance(1_000);
    r.link.request(BoardRequest::SendBoard, r.now);
    r.drain();
    assert_eq!(
        r.log.writes.last(),
        Some(&(r.now, Command::SendBoard.to_bytes()))
    );
}

#[test]
fn a_long_frame_arriving_slowly_is_a_live_line() {
    let mut r = Rig::connected(false);
    // An EEPROM dump at 9600 baud takes seconds; its bytes trickle in.
    let events = vec![eboard_core::dgt::EeEvent::PowerUp; 1_200];
    let dump = Message::EeMoves(events).to_bytes();
    assert!(dump.len() > 1_000);
    let start = r.now;
    for chunk in dump.chunks(100) {
        r.advance(1_000);
        r.bytes(chunk);
    }
    assert!(r.now - start > LOST_AFTER_MS, "longer than the watchdog");
    assert!(r.lost().is_empty(), "{:?}", r.lost());
    assert!(matches!(
        r.session_since(start).last(),
        Some(Input::Board(BoardInput::Memory(_)))
    ));
}

#[test]
fn the_sessions_requests_go_out_on_an_open_link_and_memory_is_unavailable_without_one() {
    let mut r = Rig::connected(false);
    r.advance_to(1_000);
    r.link.request(BoardRequest::ReadMemory, r.now);
    r.link.request(BoardRequest::SendBoard, r.now);
    r.drain();
    r.advance_to(1_500);
    assert_eq!(
        r.writes_between(1_000, 1_500),
        [
            (1_000, Command::EeMoves.to_bytes()),
            (1_000 + HANDSHAKE_GAP_MS, Command::SendBoard.to_bytes())
        ]
    );
    let asked: Vec<BoardRequest> = r
        .log
        .facts
        .iter()
        .filter_map(|(_, f)| match f {
            Fact::Asking(q) => Some(*q),
            _ => None,
        })
        .collect();
    assert_eq!(asked, [BoardRequest::ReadMemory, BoardRequest::SendBoard]);
    r.link.on_eof(r.now);
    r.drain();
    let closed_at = r.now;
    r.link.request(BoardRequest::SendBoard, r.now);
    r.link.request(BoardRequest::ReadMemory, r.now);
    r.drain();
    assert_eq!(
        r.session_since(closed_at),
        [&Input::Link(false), &Input::MemoryUnavailable]
    );
    assert!(r.writes_between(closed_at, Millis::MAX).is_empty());
}

#[test]
fn a_clock_message_waits_for_its_ack_one_in_flight_between_board_commands() {
    let mut r = Rig::connected(false);
    r.advance_to(1_000);
    let first = r.link.show_clock_message("HELLO", true, r.now).unwrap();
    let second = r.link.show_clock_message("BYE", true, r.now).unwrap();
    r.drain();
    let (t, bytes) = r.log.writes.last().unwrap().clone();
    assert_eq!(t, 1_000, "the line is free: the message goes out at once");
    assert_eq!(&bytes[..4], &[0x2B, 0x0C, 0x03, 0x0C]);
    assert_eq!(&bytes[4..12], b"HELLO   ");
    // A board command queued meanwhile goes before the next clock command.
    r.link.request(BoardRequest::SendBoard, r.now);
    r.drain();
    r.advance(500);
    assert_eq!(
        r.writes_between(1_001, 1_500),
        [(1_100, Command::SendBoard.to_bytes())],
        "one clock command in flight"
    );
    r.message(ack(0x0C));
    assert_eq!(r.log.clock, [(1_500, first, Ok(()))]);
    // The message stays on the display for the hold, then the times come back, and only
    // then is the second message shown (the board is probed meanwhile: that is no clock
    // command).
    let clock_writes = |r: &Rig| -> Vec<(Millis, Vec<u8>)> {
        r.log
            .writes
            .iter()
            .filter(|(_, b)| b[0] == 0x2B)
            .cloned()
            .collect()
    };
    r.advance(MESSAGE_HOLD_MS - 1);
    assert_eq!(
        clock_writes(&r).last().unwrap().0,
        1_000,
        "nothing during the hold"
    );
    r.advance(1);
    let end_at = 1_500 + MESSAGE_HOLD_MS;
    assert_eq!(
        clock_writes(&r).last(),
        Some(&(end_at, vec![0x2B, 0x03, 0x03, 0x03, 0x00]))
    );
    r.advance(10);
    r.message(ack(0x03));
    // Acknowledged, but the line takes one command per gap.
    r.advance(HANDSHAKE_GAP_MS - 11);
    assert_eq!(clock_writes(&r).last().unwrap().0, end_at);
    r.advance(1);
    let (t, bytes) = clock_writes(&r).last().unwrap().clone();
    assert_eq!(
        t,
        end_at + HANDSHAKE_GAP_MS,
        "the next message, once the line is free"
    );
    assert_eq!(&bytes[4..12], b"BYE     ");
    r.advance(10);
    r.message(ack(0x0C));
    assert_eq!(
        r.log.clock[1],
        (end_at + HANDSHAKE_GAP_MS + 10, second, Ok(()))
    );
    assert_eq!(r.log.clock.len(), 2, "the end of a message answers nobody");
}

#[test]
fn an_unacknowledged_clock_message_is_sent_twice_then_fails() {
    let mut r = Rig::connected(false);
    r.advance_to(1_000);
    let id = r.link.show_clock_message("HELLO", true, r.now).unwrap();
    r.drain();
    // The board keeps talking (clock times) but the clock never acks.
    for _ in 0..10 {
        r.advance(500);
        r.message(version());
    }
    let clock_writes: Vec<Millis> = r
        .log
        .writes
        .iter()
        .filter(|(_, b)| b.starts_with(&[0x2B, 0x0C]))
        .map(|(t, _)| *t)
        .collect();
    assert_eq!(clock_writes, [1_000, 1_000 + ACK_TIMEOUT_MS]);
    assert_eq!(
        r.log.clock,
        [(1_000 + 2 * ACK_TIMEOUT_MS, id, Err(MessageError::NoAck))]
    );
}

#[test]
fn losing_the_link_fails_the_clock_messages_waiting_on_it() {
    let mut r = Rig::connected(false);
    let a = r.link.show_clock_message("ONE", true, r.now).unwrap();
    let b = r.link.show_clock_message("TWO", true, r.now).unwrap();
    r.drain();
    r.advance(100);
    r.link.on_eof(r.now);
    r.drain();
    assert_eq!(
        r.log.clock,
        [
            (r.now, a, Err(MessageError::NoAck)),
            (r.now, b, Err(MessageError::NoAck))
        ]
    );
    // The answers come before the session hears of the loss.
    assert!(r.log.clock.iter().all(|(t, ..)| *t == r.now));
}

#[test]
fn clock_messages_are_refused_with_the_reason() {
    let mut r = Rig::new(false);
    assert_eq!(
        r.link.show_clock_message("HI", true, 0),
        Err(ClockRefusal::NotConnected),
        "closed"
    );
    r.advance_to(350);
    assert_eq!(
        r.link.show_clock_message("HI", true, r.now),
        Err(ClockRefusal::NotConnected),
        "open, not answering"
    );
    r.message(version());
    assert_eq!(
        r.link.show_clock_message("HI", true, r.now),
        Err(ClockRefusal::NotConnected),
        "answering, its board not read yet"
    );
    r.message(dump());
    assert_eq!(
        r.link.show_clock_message("HI", false, r.now),
        Err(ClockRefusal::NoClock)
    );
    assert!(matches!(
        r.link.show_clock_message("FAR TOO LONG", true, r.now),
        Err(ClockRefusal::Invalid(MessageError::TooLong { .. }))
    ));
    assert!(matches!(
        r.link.show_clock_message("", true, r.now),
        Err(ClockRefusal::Invalid(MessageError::Empty))
    ));
}

#[test]
fn the_session_is_ticked_ten_times_a_second_while_open_and_its_deadline_is_honoured() {
    let mut r = Rig::connected(false);
    let from = r.now;
    for _ in 0..10 {
        r.advance(1_000);
        r.message(version());
    }
    let ticks: Vec<Millis> = r
        .log
        .session
        .iter()
        .filter(|(t, i)| *t > from && *i == Input::Tick)
        .map(|(t, _)| *t)
        .collect();
    assert!(
        ticks.windows(2).all(|w| w[1] - w[0] <= TICK_MS),
        "{ticks:?}"
    );
    // The session's own deadline wakes the shell sooner than the link's, never in the past.
    let now = r.now;
    let own = r.link.wake_at(now);
    assert!(own > now);
    let timer = |wakeup| SessionTimer {
        wakeup,
        ticks: true,
    };
    r.link.set_session_timer(timer(Some(now + 7)), now);
    assert_eq!(r.link.wake_at(now).min(own), now + 7);
    r.link.set_session_timer(timer(Some(now - 50)), now);
    assert_eq!(r.link.wake_at(now), now + 1);
    r.link.set_session_timer(timer(None), now);
    assert_eq!(r.link.wake_at(now), own);
    // Without a port the session's deadline does not matter: nothing is settling.
    r.link.on_eof(now);
    r.drain();
    let closed = r.link.poll_timeout();
    r.link.set_session_timer(timer(Some(now + 1)), now);
    assert_eq!(r.link.wake_at(now), closed);
}

/// A session that wants no periodic tick (nothing judged at each tick waits) is ticked at its
/// own deadline, with the first read `IDLE_TICK_MS` after its last tick and by the timer only
/// after `QUIET_TICK_MS` without one, not ten times a second; the grid comes back the moment
/// it wants it again, on the link's slot.
#[test]
fn a_session_that_wants_no_periodic_tick_is_ticked_at_its_deadline_and_about_once_a_second() {
    let mut r = Rig::new(true);
    r.link = Link::new(true).with_tick_slot(4);
    r.advance_to(1_000);
    r.message(dump());
    let ticks_in = |r: &Rig, from: Millis| -> Vec<Millis> {
        r.log
            .session
            .iter()
            .filter(|(t, i)| *t > from && *i == Input::Tick)
            .map(|(t, _)| *t)
            .collect()
    };
    // Idle and talking (a read every 300 ms): the tick rides on the first read a second or
    // more after the last one, whatever the grid; the timer never wakes for it.
    r.link.set_session_timer(
        SessionTimer {
            wakeup: None,
            ticks: false,
        },
        r.now,
    );
    let from = r.now;
    let mut reads = Vec::new();
    for _ in 0..20 {
        r.advance(300);
        reads.push(r.now);
        r.message(dump());
    }
    let idle = ticks_in(&r, from);
    assert!((4..=6).contains(&idle.len()), "{idle:?}");
    assert!(idle.iter().all(|t| reads.contains(t)), "{idle:?}");
    assert!(
        idle.windows(2)
            .all(|w| (IDLE_TICK_MS..IDLE_TICK_MS + 300).contains(&(w[1] - w[0]))),
        "{idle:?}"
    );
    // Idle and silent: the timer's tick, once every QUIET_TICK_MS.
    let from = r.now;
    r.advance(3 * QUIET_TICK_MS);
    let quiet = ticks_in(&r, from);
    assert_eq!(quiet.len(), 3, "{quiet:?}");
    assert!(
        quiet.windows(2).all(|w| w[1] - w[0] == QUIET_TICK_MS),
        "{quiet:?}"
    );
    // A deadline of its own, off the grid: ticked exactly then.
    let at = r.now + 333;
    r.link.set_session_timer(
        SessionTimer {
            wakeup: Some(at),
            ticks: false,
        },
        r.now,
    );
    let from = r.now;
    r.advance(333);
    assert!(ticks_in(&r, from).contains(&at), "{:?}", ticks_in(&r, from));
    // Wanting the periodic tick again, in the middle of a quiet stretch: on the slot's grid
    // from its next instant (not at once, off the grid), every TICK_MS.
    let quiet = SessionTimer {
        wakeup: None,
        ticks: false,
    };
    r.link.set_session_timer(quiet, r.now);
    r.advance(457);
    r.link.set_session_timer(SessionTimer::default(), r.now);
    let from = r.now;
    r.advance(1_000);
    let grid = ticks_in(&r, from);
    assert_eq!(grid.len() as u64, 1_000 / TICK_MS, "{grid:?}");
    assert!(
        grid.iter()
            .all(|t| t % TICK_MS == 4 * (TICK_MS / TICK_SLOTS)),
        "{grid:?}"
    );
}

/// Links given the same tick slot are ticked at the same instants (the daemon's runtime then
/// wakes once for all of their boards), still once every `TICK_MS`, whenever they opened.
#[test]
fn ticks_fall_on_the_links_slot_every_tick() {
    let phase = 3 * (TICK_MS / TICK_SLOTS);
    for opened_at in [0, 7, 1_234] {
        let mut r = Rig::new(true);
        r.link = Link::new(true).with_tick_slot(TICK_SLOTS + 3);
        r.advance_to(opened_at);
        assert!(r.link.is_open());
        r.advance(1_000);
        r.message(dump());
        let from = r.now;
        r.advance(2_000);
        let ticks: Vec<Millis> = r
            .log
            .session
            .iter()
            .filter(|(t, i)| *t > from && *i == Input::Tick)
            .map(|(t, _)| *t)
            .collect();
        assert_eq!(ticks.len() as u64, 2_000 / TICK_MS, "{ticks:?}");
        assert!(ticks.iter().all(|t| t % TICK_MS == phase), "{ticks:?}");
        assert!(
            ticks.windows(2).all(|w| w[1] - w[0] == TICK_MS),
            "{ticks:?}"
        );
    }
}

#[test]
fn lost_describes_itself() {
    assert_eq!(Lost::Silent(5_300).to_string(), "no answer for 5.3 s");
    assert_eq!(Lost::Eof.to_string(), "the device went away (end of file)");
}

/// One thing that may happen to a link, for the property test below.
#[derive(Debug, Clone)]
enum Step {
    Wait(Millis),
    Bytes(Vec<u8>),
    Message(u8),
    Eof,
    WriteFails,
    Request(bool),
    Clock(String),
    PortPresent(bool),
}

fn step() -> impl proptest::strategy::Strategy<Value = Step> {
    use proptest::prelude::*;
    prop_oneof![
        4 => (0u64..4_000).prop_map(Step::Wait),
        2 => proptest::collection::vec(any::<u8>(), 0..40).prop_map(Step::Bytes),
        3 => (0u8..4).prop_map(Step::Message),
        1 => Just(Step::Eof),
        1 => Just(Step::WriteFails),
        1 => any::<bool>().prop_map(Step::Request),
        1 => "[ -~]{0,10}".prop_map(Step::Clock),
        1 => any::<bool>().prop_map(Step::PortPresent),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

    /// Whatever happens, in any order: the machine never asks to be woken in the past
    /// without progress (checked by `advance_to`), a listen-only link never writes and is
    /// never lost by silence, writes happen only on an open port and at most one per gap,
    /// the port is opened only when closed and written only when open (checked by `drain`),
    /// and every clock request is answered exactly once.
    #[test]
    fn the_link_keeps_its_promises_under_any_history(
        listen_only: bool,
        steps in proptest::collection::vec(step(), 1..80),
    ) {
        let mut r = Rig::new(listen_only);
        let mut asked = Vec::new();
        for s in steps {
            match s {
                Step::Wait(ms) => r.advance(ms),
                Step::Bytes(b) => r.bytes(&b),
                Step::Message(k) => r.message(match k {
                    0 => version(),
                    1 => ack(0x0C),
                    2 => ack(0x03),
                    _ => Message::SerialNumber("13116".into()),
                }),
                Step::Eof => {
                    r.link.on_eof(r.now);
                    r.drain();
                }
                Step::WriteFails => {
                    r.link.on_write_failed(io::Error::other("gone"), r.now);
                    r.drain();
                }
                Step::Request(memory) => {
                    let q = if memory { BoardRequest::ReadMemory } else { BoardRequest::SendBoard };
                    r.link.request(q, r.now);
                    r.drain();
                }
                Step::Clock(text) => {
                    if let Ok(id) = r.link.show_clock_message(&text, true, r.now) {
                        asked.push(id);
                    }
                    r.drain();
                }
                Step::PortPresent(p) => r.port_present = p,
            }
            proptest::prop_assert!(r.link.is_open() || !r.link.is_connected());
            proptest::prop_assert_eq!(r.link.is_open(), r.port_open);
        }
        if listen_only {
            proptest::prop_assert!(r.log.writes.is_empty(), "{:?}", r.log.writes);
            proptest::prop_assert!(
                r.lost().iter().all(|(_, why)| !why.starts_with("no answer")),
                "{:?}", r.lost()
            );
        }
        proptest::prop_assert!(
            r.log.writes.windows(2).all(|w| w[1].0 >= w[0].0 + HANDSHAKE_GAP_MS),
            "one write per gap: {:?}", r.log.writes
        );
        proptest::prop_assert!(r.log.closes.len() <= r.log.opens.len());
        // Each request is answered at most once, and all of them once the link is lost.
        let mut answered: Vec<u64> = r.log.clock.iter().map(|(_, id, _)| *id).collect();
        answered.sort();
        let before = answered.len();
        answered.dedup();
        proptest::prop_assert_eq!(before, answered.len(), "answered twice");
        r.link.on_eof(r.now);
        r.drain();
        let mut all: Vec<u64> = r.log.clock.iter().map(|(_, id, _)| *id).collect();
        all.sort();
        asked.sort();
        proptest::prop_assert_eq!(all, asked);
    }
}

#[test]
fn clock_request_ids_stay_unique_across_reconnections() {
    let mut r = Rig::connected(false);
    let first = r.link.show_clock_message("A", true, r.now).unwrap();
    r.link.on_eof(r.now);
    r.drain();
    r.advance(500);
    r.message(dump());
    let second = r.link.show_clock_message("A", true, r.now).unwrap();
    assert_ne!(first, second, "a reply must never go to an earlier caller");
    // It waits for the new handshake to be out, then goes.
    r.advance(1_000);
    assert!(r.log.writes.last().unwrap().1.starts_with(&[0x2B, 0x0C]));
    r.message(ack(0x0C));
    assert_eq!(
        r.log
            .clock
            .iter()
            .map(|(_, id, res)| (*id, res.is_ok()))
            .collect::<Vec<_>>(),
        [(first, false), (second, true)]
    );
}

/// A board that answered the battery question is asked again once a minute while connected;
/// a board that did not (a USB board) never again; an rfcomm port's board from the start.
#[test]
fn a_battery_board_is_asked_for_its_battery_once_a_minute() {
    use eboard_core::dgt::BatteryStatus;
    use eboard_core::link::BATTERY_POLL_MS;
    let battery = [0x4C_u8].to_vec();
    let asks = |r: &Rig, from: Millis, to: Millis| {
        r.writes_between(from, to)
            .into_iter()
            .filter(|(_, b)| *b == battery)
            .count()
    };
    // A USB board: asked once in the handshake, never again.
    // (The board answers its probes: it stays connected.)
    let live = |r: &mut Rig, until: Millis| {
        while r.now + 1_000 <= until {
            let t = r.now + 1_000;
            r.advance_to(t);
            r.message(version());
        }
        r.advance_to(until);
    };
    let mut usb = Rig::connected(false);
    let start = usb.now;
    live(&mut usb, start + 3 * BATTERY_POLL_MS + 500);
    assert_eq!(asks(&usb, start, usb.now + 1), 0);
    assert_eq!(usb.log.opens.len(), 1);
    // A board that answers it: asked again every minute.
    let mut bt = Rig::connected(false);
    let start = bt.now;
    bt.message(Message::BatteryStatus(BatteryStatus {
        percent: 50,
        ..BatteryStatus::default()
    }));
    live(&mut bt, start + 3 * BATTERY_POLL_MS + 500);
    assert_eq!(asks(&bt, start, bt.now + 1), 3);
    assert_eq!(bt.log.opens.len(), 1);
}

/// One reading is not a fact: a clock that named its model once is asked its version again at
/// once, and a board that answered the battery question once (not on an rfcomm port) is asked
/// again a second later, not a minute later.
#[test]
fn what_a_board_said_once_is_asked_again() {
    use eboard_core::dgt::{BatteryStatus, ClockCommand};
    use eboard_core::link::CONFIRM_ASK_MS;
    let clock_version = Command::Clock(ClockCommand::Version).to_bytes();
    let battery = Command::BatteryStatus.to_bytes();
    let count = |r: &Rig, from: Millis, bytes: &[u8]| {
        r.writes_between(from, Millis::MAX)
            .into_iter()
            .filter(|(_, b)| b == bytes)
            .count()
    };
    let mut r = Rig::connected(false);
    let start = r.now;
    r.message(Message::ClockAck(ClockAck::version_reply(1, 0)));
    r.advance_to(start + 500);
    assert_eq!(count(&r, start, &clock_version), 1, "asked again once");
    r.message(Message::ClockAck(ClockAck::version_reply(1, 0)));
    r.advance_to(start + 1_000);
    assert_eq!(
        count(&r, start, &clock_version),
        1,
        "the same answer twice settles it"
    );

    let start = r.now;
    r.message(Message::BatteryStatus(BatteryStatus {
        percent: 50,
        ..BatteryStatus::default()
    }));
    r.advance_to(start + CONFIRM_ASK_MS - 1);
    r.message(version());
    assert_eq!(count(&r, start, &battery), 0);
    r.advance_to(start + CONFIRM_ASK_MS + 10);
    assert_eq!(count(&r, start, &battery), 1, "asked again after a second");
}
