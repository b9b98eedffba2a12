//! `eboardctl decode CAPTURE [--events]`: a recorded serial stream, read offline through the
//! same pipeline the daemon's board task runs — the protocol decoder, then
//! [`Session::handle`] with the link coming up, every board message, and the ticks the task
//! would give as time passes — printed as the PGN eboardd would have written (clock stamps,
//! arbiter decisions, illegal-move segments, result and termination), or as the list of
//! session events.
//!
//! Time: eboardd's own `--record` files carry the time of every read. The shared captures'
//! base64-lines format has none; their reads are then taken to arrive
//! [`UNTIMED_GAP_MS`] apart, the pace `eboardctl replay` plays them at by default, so
//! decoding such a capture prints what eboardd records when the capture is replayed into it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::daemon::config::{BoardConfig, DaemonConfig};
use crate::daemon::pgn_files;
use eboard_core::board::Orientation;
use eboard_core::capture::{self, Chunk, LinkChange, LinkNote};
use eboard_core::dgt::{Decoder, Message};
use eboard_core::game::PgnDate;
use eboard_core::link::{self, IdleTick};
use eboard_core::session::{Event, Input, Session, SessionConfig};
use eboard_core::vocab::Millis;

/// Gap between two reads of a capture without timestamps (`eboardctl replay`'s default).
pub const UNTIMED_GAP_MS: Millis = 50;

/// Arguments of `eboardctl decode`.
#[derive(Debug, Clone, clap::Args)]
pub struct DecodeArgs {
    /// Capture file: base64 lines (one serial read each), or an eboardd `--record` file.
    pub capture: PathBuf,
    /// List every session event with its position in the stream instead of printing PGN.
    #[arg(long)]
    pub events: bool,
}

/// Where in the capture an event happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamPos {
    /// 1-based index of the read (capture line with data) where the message starts; for an
    /// event of a tick, the last read before it.
    pub chunk: usize,
    /// Offset of the message's first byte in the whole stream (for a tick: of the next byte).
    pub byte: u64,
    /// The recording's time offset of the read that completed the message, when recorded.
    pub at_ms: Option<u64>,
    /// The time the session was given.
    pub now: Millis,
}

/// One session event and where it happened.
#[derive(Debug, Clone, PartialEq)]
pub struct Located {
    pub pos: StreamPos,
    pub event: Event,
}

/// One game as eboardd records it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GameRecord {
    /// The moves of the game's last segment as played (SAN and UCI).
    pub san: Vec<String>,
    pub uci: Vec<String>,
    /// The PGN text eboardd writes for it (the `Pgn` property, the live or finished file).
    pub pgn: String,
}

/// Everything a capture yields.
#[derive(Debug, Clone, Default)]
pub struct Decoded {
    pub events: Vec<Located>,
    /// The games in order: every game that ended, then the one still on the board (when it
    /// began and is not the last one ended).
    pub games: Vec<GameRecord>,
    /// The board orientation the session detected.
    pub orientation: Option<Orientation>,
    pub corrections: u32,
    pub messages: u64,
    pub skipped_bytes: u64,
}

/// The session configuration eboardd gives a board on `port` with its built-in `[daemon]`
/// defaults: the same board entry `AddBoard` and `--port` build, so the tags (`Board`, ...)
/// match. A capture is a file, not a device, so the port checks do not apply to it.
pub fn session_config_for(port: &Path) -> SessionConfig {
    BoardConfig::for_port(&port.to_string_lossy()).session_config(&DaemonConfig::default())
}

/// Run a capture through a fresh session as eboardd's board task would. `link` are the
/// record's notes of the link's ups and downs ([`capture::link_notes`]; none for the shared
/// captures, whose port stays open throughout). `today` is the `Date` (as `YYYY-MM-DD`) a
/// game that begins gets, like the daemon dates it (anything but a date leaves it undated).
pub fn decode(chunks: &[Chunk], link: &[LinkNote], config: SessionConfig, today: &str) -> Decoded {
    let mut run = Run::new(config, today);
    let mut byte: u64 = 0;
    let mut untimed: Millis = 0;
    let mut notes = link.iter().peekable();
    for (index, chunk) in chunks.iter().enumerate() {
        let now = chunk.at_ms.unwrap_or_else(|| {
            let at = untimed;
            untimed += UNTIMED_GAP_MS;
            at
        });
        if index == 0 {
            run.now = now;
            run.idle = IdleTick::since(now);
        }
        // What happened to the link before this read, in the board task's order.
        while let Some(note) = notes.next_if(|n| n.after_reads <= index) {
            run.link_change(note, index, byte);
        }
        // The ticks the board task gives while waiting for this read.
        run.tick_until(now, index, byte, chunk.at_ms);
        run.chunk_starts.push(byte);
        let dropped_before = run.decoder.stats().lost_frames();
        let mut messages: Vec<(Message, StreamPos)> = Vec::new();
        for &b in &chunk.bytes {
            let before = run.decoder.stats().message_bytes;
            byte += 1;
            run.decoder.push(&[b]);
            while let Some(message) = run.decoder.next_message() {
                let len = run.decoder.stats().message_bytes.saturating_sub(before);
                let start = byte.saturating_sub(len);
                let pos = StreamPos {
                    // A message that began in an earlier read is named by that read.
                    chunk: run.chunk_of(start),
                    byte: start,
                    at_ms: chunk.at_ms,
                    now,
                };
                messages.push((message, pos));
            }
        }
        let lost_frame = run.decoder.stats().lost_frames() > dropped_before;
        let first = messages.first().map_or(
            StreamPos {
                chunk: index + 1,
                byte,
                at_ms: chunk.at_ms,
                now,
            },
            |m| m.1,
        );
        // One read: the link comes up with the first message, a lost frame is reported, then
        // the messages in order. The daemon's link brings `Connected` up with the whole board
        // it asks for (with the first message only when listen-only); a capture need not hold
        // that board (it may begin mid-game), so it is read as a listen-only link is.
        if !messages.is_empty() && !run.connected {
            run.connected = true;
            run.input(Input::Link(true), first);
        }
        if lost_frame && run.connected {
            run.input(Input::LineLoss, first);
        }
        for (message, pos) in messages {
            if let Some(input) = message.into_board_input() {
                run.input(Input::Board(input), pos);
            }
        }
        if !chunk.bytes.is_empty() {
            run.tick_with_read(StreamPos {
                chunk: index + 1,
                byte,
                at_ms: chunk.at_ms,
                now,
            });
        }
    }
    for note in notes {
        run.link_change(note, chunks.len(), byte);
    }
    // The daemon keeps ticking after the last read: let every waiting move become final.
    let end = run.now;
    run.settle(chunks.len(), byte, chunks.last().and_then(|c| c.at_ms), end);
    run.finish()
}

/// The session and what has been collected so far.
struct Run {
    session: Session,
    out: Decoded,
    current: GameRecord,
    /// The last game that ended, as written then.
    finished: Option<String>,
    chunk_starts: Vec<u64>,
    /// The last time the session was given.
    now: Millis,
    /// When the session was last ticked: the grid's and the idle tick's start.
    idle: IdleTick,
    /// The port is open (the record did not note it lost since it was last opened).
    open: bool,
    /// The board has answered since the port was opened (the session was told so).
    connected: bool,
    /// The protocol decoder of this opening of the port (each opening reads afresh).
    decoder: Decoder,
    /// What the decoders of earlier openings read: messages, skipped bytes.
    earlier: (u64, u64),
}

impl Run {
    fn new(config: SessionConfig, today: &str) -> Self {
        let mut session = Session::new(config);
        if let Some(today) = PgnDate::parse_iso(today) {
            session.set_date(today);
        }
        Run {
            session,
            out: Decoded::default(),
            current: GameRecord::default(),
            finished: None,
            chunk_starts: Vec::new(),
            now: 0,
            idle: IdleTick::default(),
            open: true,
            connected: false,
            decoder: Decoder::new(),
            earlier: (0, 0),
        }
    }

    /// A link note of the record, before read `index` (0-based) at stream offset `byte`.
    fn link_change(&mut self, note: &LinkNote, index: usize, byte: u64) {
        let at = note.at_ms.max(self.now);
        self.tick_until(at, index, byte, Some(note.at_ms));
        match note.change {
            LinkChange::Opened => {
                let stats = self.decoder.stats();
                self.earlier.0 += stats.messages;
                self.earlier.1 += stats.skipped_bytes;
                self.decoder = Decoder::new();
                self.open = true;
            }
            LinkChange::Lost => {
                // The link machine tells the session whenever it gives the board up.
                let pos = StreamPos {
                    chunk: index.max(1),
                    byte,
                    at_ms: Some(note.at_ms),
                    now: at,
                };
                self.input(Input::Link(false), pos);
                self.connected = false;
                self.open = false;
            }
        }
    }

    fn chunk_of(&self, start: u64) -> usize {
        self.chunk_starts.partition_point(|&s| s <= start).max(1)
    }

    /// Feed one input, then what the board task does after it: answer the session's
    /// requests (here nothing answers: a capture cannot be asked).
    fn input(&mut self, input: Input, pos: StreamPos) {
        self.now = self.now.max(pos.now);
        let Ok(events) = self.session.handle(input, pos.now) else {
            return;
        };
        while self.session.poll_request().is_some() {}
        for event in events {
            self.record(&event);
            self.out.events.push(Located { pos, event });
        }
    }

    /// The ticks the board task's timer gives before `until`: while the port is open, one
    /// every [`link::TICK_MS`] while the session wants the periodic tick, else the idle tick
    /// of the timer ([`IdleTick::timer_due`]: a read brings it sooner, see
    /// [`Run::tick_with_read`]), and one at each time the session asks to be woken; the idle
    /// tick of a closed port while it is closed (see `Link::wake_at`).
    fn tick_until(&mut self, until: Millis, index: usize, byte: u64, at_ms: Option<u64>) {
        loop {
            let (periodic, wakeup) = if !self.open {
                (self.idle.timer_due(false), None)
            } else if self.session.wants_ticks() {
                (self.idle.last() + link::TICK_MS, self.session.next_wakeup())
            } else {
                (self.idle.timer_due(true), self.session.next_wakeup())
            };
            let at = match wakeup {
                Some(w) => periodic.min(w.max(self.now + 1)),
                None => periodic,
            };
            if at >= until {
                return;
            }
            // Any tick starts the wait again, as in the link.
            self.idle.ticked(at);
            let pos = StreamPos {
                chunk: index.max(1),
                byte,
                at_ms,
                now: at,
            };
            self.input(Input::Tick, pos);
        }
    }

    /// The idle tick a read brings while the port is open, after what it brought
    /// ([`IdleTick::read_brings_tick`], as `Link::on_bytes` gives it).
    fn tick_with_read(&mut self, pos: StreamPos) {
        if self.open && self.idle.read_brings_tick(pos.now) {
            self.idle.ticked(pos.now);
            self.input(Input::Tick, pos);
        }
    }

    /// Tick on after the capture until nothing waits on time any more.
    fn settle(&mut self, index: usize, byte: u64, at_ms: Option<u64>, end: Millis) {
        // Longer than anything the session waits for on its own (a move becoming final,
        // a gesture, an unreachable board's memory).
        const SETTLE_MS: Millis = 60_000;
        // The line is silent after the capture: the board task counts the board gone
        // `LOST_AFTER_MS` after the last read and tells the session (what a record's `Lost`
        // note says), so nothing later is judged as if the board and its clock were still
        // heard (a silent clock's flag is the clock not heard, not a clock that fell).
        if self.open {
            let lost = end + link::LOST_AFTER_MS;
            self.follow_wakeups(index, byte, at_ms, lost);
            self.tick_until(lost, index, byte, at_ms);
            let pos = StreamPos {
                chunk: index.max(1),
                byte,
                at_ms,
                now: lost.max(self.now),
            };
            self.input(Input::Link(false), pos);
            self.connected = false;
            self.open = false;
        }
        self.follow_wakeups(index, byte, at_ms, end + SETTLE_MS);
    }

    /// Tick at each time the session asks to be woken, up to `horizon`.
    fn follow_wakeups(&mut self, index: usize, byte: u64, at_ms: Option<u64>, horizon: Millis) {
        let mut t = self.now;
        while let Some(w) = self.session.next_wakeup() {
            if w > horizon {
                break;
            }
            t = t.max(w).max(self.now + 1);
            self.tick_until(t + 1, index, byte, at_ms);
        }
    }

    fn record(&mut self, event: &Event) {
        match event {
            Event::GameStarted { .. } => {
                self.close_current();
            }
            Event::MovePlayed { san, uci, .. } => {
                self.current.san.push(san.clone());
                self.current.uci.push(uci.clone());
            }
            Event::MoveRetracted { ply, .. } => {
                let keep = (*ply as usize).saturating_sub(1);
                self.current.san.truncate(keep);
                self.current.uci.truncate(keep);
            }
            Event::GameEnded { .. } => {
                let pgn = self.session.view().pgn.clone();
                self.finished = Some(pgn.clone());
                let mut game = std::mem::take(&mut self.current);
                game.pgn = pgn;
                self.out.games.push(game);
            }
            _ => {}
        }
    }

    /// A game on the board that has moves and did not end: it is kept as it stands.
    fn close_current(&mut self) {
        if !self.current.san.is_empty() {
            let mut game = std::mem::take(&mut self.current);
            game.pgn = self.session.view().pgn.clone();
            self.out.games.push(game);
        }
    }

    fn finish(mut self) -> Decoded {
        let pgn = self.session.view().pgn.clone();
        let ended_last = self.finished.as_deref() == Some(pgn.as_str());
        if !ended_last && (!self.current.san.is_empty() || self.out.games.is_empty()) {
            let mut game = std::mem::take(&mut self.current);
            game.pgn = if pgn.is_empty() {
                // Nothing began: still a valid (empty) game, so tools reading the output
                // need no special case.
                self.session.game().pgn()
            } else {
                pgn
            };
            self.out.games.push(game);
        }
        self.out.orientation = self.session.detected_orientation();
        self.out.corrections = self.session.corrections();
        self.out.messages = self.earlier.0 + self.decoder.stats().messages;
        self.out.skipped_bytes = self.earlier.1 + self.decoder.stats().skipped_bytes;
        self.out
    }
}

/// One event as a line of `--events` output.
pub fn event_line(located: &Located) -> String {
    let p = located.pos;
    let mut line = format!("chunk {:>4} byte {:>6} t={}ms", p.chunk, p.byte, p.now);
    // The one description of an event, the core's (`watch` prints it too).
    let _ = write!(line, "  {}", located.event);
    line
}

/// Today's UTC date as eboardd dates a new game.
pub fn today() -> String {
    pgn_files::utc_date(std::time::SystemTime::now())
}

/// `eboardctl decode`.
pub fn run(args: &DecodeArgs) -> anyhow::Result<()> {
    let path = args.capture.display();
    let text = crate::bounded_read::read_text(&args.capture, crate::bounded_read::CAPTURE)
        .with_context(|| format!("capture {path}"))?;
    let chunks = capture::parse(&text).with_context(|| format!("{path}: not a capture"))?;
    let link = capture::link_notes(&text);
    let decoded = decode(&chunks, &link, session_config_for(&args.capture), &today());
    // Through the one printing path: a capture's board may send any text.
    let text = if args.events {
        decoded
            .events
            .iter()
            .map(event_line)
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        // The games as before: each PGN as written, a newline between them.
        let games: Vec<&str> = decoded.games.iter().map(|g| g.pgn.as_str()).collect();
        games.join("\n")
    };
    if text.is_empty() {
        return Ok(());
    }
    // `print_text` ends the text with the newline it already has.
    let text = text.strip_suffix('\n').unwrap_or(&text);
    crate::cli::print_text(text).map_err(|e| anyhow::anyhow!("{e}"))
}
