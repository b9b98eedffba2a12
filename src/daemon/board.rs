//! One board's task: the serial link's life cycle (open, handshake, watchdog, reconnect with
//! backoff), feeding the session with a monotonic millisecond time, and committing what the
//! session reports — journal first, then D-Bus.
//!
//! A board's failures stay inside its task: an unopenable port, junk on the line or a
//! vanished device only change its own `Connected` property.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_serial::SerialStream;

use crate::protocol::Command as BoardCommand;
use crate::protocol::clock_channel::{ClockChannel, MessageError, Outcome};
use crate::session::{BoardRequest, Command, CommandError, Event, Input, Millis, Session};

use super::dbus::{CommandRequest, Publisher};
use super::link::{self, Reader};
use super::settings::BoardSpec;
use super::store::BoardStore;
use super::writer::Outcome as WriteOutcome;

/// Why a board task is told to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The daemon shuts down: everything stays as it is for the next start.
    Shutdown,
    /// `RemoveBoard`: the board is no longer served; its live PGN leaves `live/`.
    Removed,
}

/// How often the session gets a `Tick` (settling, flag fall on a silent clock) and the
/// watchdog looks at the line.
const TICK: Duration = Duration::from_millis(TICK_MS);
/// [`TICK`] in session time (`eboardctl decode` ticks the session the same way).
pub const TICK_MS: Millis = 100;
/// Session ticks while the board is not connected.
const IDLE_TICK_MS: Millis = 1_000;
/// Silence after which a probe is sent (the board answers it with its version).
const PROBE_AFTER: Millis = 2_000;
/// Silence after which the board counts as gone (unless `listen_only`, which cannot probe).
const LOST_AFTER: Millis = 5_000;
/// Reconnection backoff: first retry, and the ceiling the doubling stops at.
const BACKOFF_MIN: Millis = 200;
const BACKOFF_MAX: Millis = 2_000;
/// A write that does not complete in this time means the line is stuck.
const WRITE_TIMEOUT: Duration = Duration::from_secs(1);

/// Everything a board task owns.
pub struct BoardTask {
    pub spec: BoardSpec,
    pub session: Session,
    pub store: BoardStore,
    pub publisher: Publisher,
    /// The daemon's time origin: session time is milliseconds since it.
    pub epoch: Instant,
}

/// An open serial link and its watchdog state.
struct Link {
    stream: SerialStream,
    reader: Reader,
    opened_at: Millis,
    /// When a complete message last arrived (`None`: not yet since opening).
    last_rx: Option<Millis>,
    last_probe: Millis,
    /// Commands waiting to be written, one per [`link::HANDSHAKE_GAP_MS`].
    outbox: VecDeque<Vec<u8>>,
    /// When the next queued command may go out.
    next_write: Millis,
    /// Clock commands: one in flight, acknowledged, retried once.
    clock: ClockChannel,
}

impl Link {
    /// Queue the handshake (a board that never answered gets it again on a probe).
    fn queue_handshake(&mut self, not_before: Millis) {
        self.outbox.extend(link::handshake());
        self.next_write = self.next_write.max(not_before);
    }
}

/// Why a link was closed.
enum Lost {
    Eof,
    Io(std::io::Error),
    Silent(Millis),
}

impl std::fmt::Display for Lost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Lost::Eof => f.write_str("the device went away (end of file)"),
            Lost::Io(e) => write!(f, "serial I/O error: {e}"),
            Lost::Silent(ms) => write!(f, "no answer for {:.1} s", *ms as f64 / 1000.0),
        }
    }
}

impl BoardTask {
    fn now(&self) -> Millis {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Serve the board until `stop` fires or the command channel closes.
    pub async fn run(
        mut self,
        mut commands: mpsc::Receiver<CommandRequest>,
        mut stop: oneshot::Receiver<Stop>,
    ) {
        let mut link: Option<Link> = None;
        let mut connected = false;
        let mut backoff = BACKOFF_MIN;
        let mut next_attempt: Millis = 0;
        let mut open_failures: u32 = 0;
        let mut last_tick: Millis = 0;
        let mut buf = vec![0u8; 4096];
        // Clock messages waiting for the clock's ack, by request id.
        let mut clock_waiting: HashMap<u64, ClockReply> = HashMap::new();
        // The next wake-up: every TICK while a link is open; without one only for the next
        // open attempt or the idle session tick, so a rack of unplugged boards costs nothing.
        let mut next_tick = Instant::now();
        let mut removed = false;
        tracing::info!(port = %self.spec.port.display(), listen_only = self.spec.listen_only, "serving board");
        // The journal is the truth: rewrite the live PGN of a restored game.
        self.store.after_publish(self.session.view(), &[]);

        loop {
            let wake = if link.is_some() {
                // The session says when it next needs time to pass (a held move's dwell, a
                // move becoming final): wake then rather than at the next periodic tick.
                match self.session.next_wakeup() {
                    // (Never sooner than a millisecond from now: a deadline the tick
                    // does not clear must not spin.)
                    Some(at) => next_tick.min(
                        (self.epoch + Duration::from_millis(at))
                            .max(Instant::now() + Duration::from_millis(1)),
                    ),
                    None => next_tick,
                }
            } else {
                let idle = self.epoch + Duration::from_millis(last_tick + IDLE_TICK_MS);
                let attempt = self.epoch + Duration::from_millis(next_attempt);
                next_tick.max(idle.min(attempt))
            };
            let read = async {
                match link.as_mut() {
                    Some(l) => l.stream.read(&mut buf).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                why = &mut stop => {
                    removed = why == Ok(Stop::Removed);
                    break;
                }
                request = commands.recv() => {
                    let Some(request) = request else { break };
                    let now = self.now();
                    tracing::debug!(command = ?request.command, "command");
                    if let Command::ShowClockMessage(text) = &request.command {
                        // The serial link's business, not the game's: answered once acked.
                        match self.clock_message(link.as_mut(), connected, text, now) {
                            Ok(id) => {
                                clock_waiting.insert(id, request.reply);
                            }
                            Err(e) => {
                                let _ = request.reply.send(Err(e));
                            }
                        }
                        continue;
                    }
                    let answer = match self.session.handle(Input::Command(request.command), now) {
                        Ok(events) => {
                            self.commit(events, connected).await;
                            Ok(())
                        }
                        Err(e) => Err(e),
                    };
                    // The caller may have gone; that is not the board's problem.
                    let _ = request.reply.send(answer);
                }
                result = read => {
                    let now = self.now();
                    let lost = match result {
                        Ok(0) => Some(Lost::Eof),
                        Ok(n) => {
                            let bytes = &buf[..n];
                            self.store.record(bytes);
                            let Some(l) = link.as_mut() else { continue };
                            let skipped_before = l.reader.skipped();
                            let dropped_before = l.reader.dropped_frames();
                            let messages = l.reader.push(bytes);
                            let skipped = l.reader.skipped() - skipped_before;
                            if skipped > 0 {
                                tracing::debug!(skipped, "skipped bytes that are not a board message");
                            }
                            let lost_frame = l.reader.dropped_frames() > dropped_before;
                            if !messages.is_empty() || l.reader.in_frame() {
                                l.last_rx = Some(now);
                            }
                            let mut events = Vec::new();
                            if !messages.is_empty() && !connected {
                                tracing::info!("board answers");
                                connected = true;
                                backoff = BACKOFF_MIN;
                                open_failures = 0;
                                // Only now is the clock's silence meaningful again.
                                if let Ok(mut e) = self.session.handle(Input::Link(true), now) {
                                    events.append(&mut e);
                                }
                            }
                            if lost_frame && connected {
                                tracing::info!("a frame was lost on the line: reading the whole board");
                                if let Ok(mut e) = self.session.handle(Input::LineLoss, now) {
                                    events.append(&mut e);
                                }
                            }
                            for message in &messages {
                                l.clock.on_message(message, now);
                            }
                            answer_clock(&mut l.clock, &mut clock_waiting);
                            for message in messages {
                                tracing::trace!(?message, "message");
                                match self.session.handle(Input::Board(message), now) {
                                    Ok(mut e) => events.append(&mut e),
                                    Err(e) => tracing::warn!("session refused board input: {e}"),
                                }
                            }
                            self.serve_requests(link.as_mut(), now, &mut events);
                            self.commit(events, connected).await;
                            None
                        }
                        Err(e) => Some(Lost::Io(e)),
                    };
                    if let Some(lost) = lost {
                        if let Some(mut l) = link.take() {
                            l.clock.reset();
                            answer_clock(&mut l.clock, &mut clock_waiting);
                        }
                        connected = false;
                        next_attempt = now + backoff;
                        self.link_lost(&lost, now).await;
                    }
                }
                _ = tokio::time::sleep_until(wake) => {
                    let now = self.now();
                    if Instant::now() >= next_tick {
                        next_tick = Instant::now() + TICK;
                    }
                    self.store.retry(self.session.view());
                    // Without a link nothing is settling on the board: time-based rules
                    // (a flag falling on a clock nobody hears) only need a tick a second.
                    if link.is_some() || now.saturating_sub(last_tick) >= IDLE_TICK_MS {
                        last_tick = now;
                        match self.session.handle(Input::Tick, now) {
                            Ok(mut events) => {
                                self.serve_requests(link.as_mut(), now, &mut events);
                                self.commit(events, connected).await
                            }
                            Err(e) => tracing::warn!("session refused a tick: {e}"),
                        }
                    }
                    if let Some(l) = link.as_mut() {
                        let result = self.watchdog(l, now).await;
                        answer_clock(&mut l.clock, &mut clock_waiting);
                        if let Err(lost) = result {
                            if let Some(mut l) = link.take() {
                                l.clock.reset();
                                answer_clock(&mut l.clock, &mut clock_waiting);
                            }
                            connected = false;
                            next_attempt = now + backoff;
                            self.link_lost(&lost, now).await;
                        }
                    } else if now >= next_attempt {
                        match self.connect(now) {
                            Ok(l) => {
                                tracing::info!("port opened");
                                self.store.note("port opened");
                                link = Some(l);
                            }
                            Err(e) => {
                                open_failures += 1;
                                // Say it once loudly; a board left unplugged should not
                                // flood the log.
                                if open_failures == 1 {
                                    tracing::warn!("cannot open {}: {e}; retrying", self.spec.port.display());
                                } else {
                                    tracing::debug!("cannot open {}: {e}", self.spec.port.display());
                                }
                            }
                        }
                        backoff = (backoff * 2).min(BACKOFF_MAX);
                        next_attempt = now + backoff;
                    }
                }
            }
        }
        self.store.flush().await;
        if removed {
            self.store.retire();
        }
        tracing::info!("board stopped");
    }

    /// A game that begins gets today's date (UTC) as its PGN `Date` tag, unless the
    /// configuration names one: the pure session has no calendar, the shell does.
    fn date_new_game(&mut self, events: &mut Vec<Event>) {
        let today = super::pgn_files::utc_date(std::time::SystemTime::now());
        let Some(command) =
            super::pgn_files::date_new_game(events, &self.spec.session.tags, &today)
        else {
            return;
        };
        match self.session.handle(Input::Command(command), self.now()) {
            Ok(mut more) => events.append(&mut more),
            Err(e) => tracing::warn!("cannot date the new game: {e}"),
        }
    }

    /// Queue a text for the clock display, or say why it cannot be shown.
    fn clock_message(
        &self,
        link: Option<&mut Link>,
        connected: bool,
        text: &str,
        now: Millis,
    ) -> Result<u64, CommandError> {
        if self.spec.listen_only {
            return Err(CommandError::ListenOnly(format!(
                "board {} is listen_only: eboardd never writes to it, so it cannot show a \
                 clock message (set listen_only = false to allow it)",
                self.spec.id
            )));
        }
        let Some(l) = link.filter(|_| connected) else {
            return Err(CommandError::NoClock(format!(
                "board {} is not connected, so no clock can be reached",
                self.spec.id
            )));
        };
        if !self.session.view().clock_connected {
            return Err(CommandError::NoClock(format!(
                "no clock reports through board {}; plug the clock into the board and \
                 switch it on",
                self.spec.id
            )));
        }
        l.clock
            .show(text, now)
            .map_err(|e| CommandError::InvalidArgument(format!("cannot show {text:?}: {e}")))
    }

    /// The link is gone (unplugged, silent, I/O error): say so once, tell the session (no
    /// flag falls by silence while nobody listens) and publish `Connected = false`.
    async fn link_lost(&mut self, lost: &Lost, now: Millis) {
        tracing::warn!("board lost: {lost}");
        self.store.note(&format!("lost: {lost}"));
        let events = self
            .session
            .handle(Input::Link(false), now)
            .unwrap_or_default();
        self.commit(events, false).await;
    }

    /// Send what the session asks of the board (a gap's memory read, a whole board). A
    /// listen-only or absent link cannot: the session is told so and does without.
    fn serve_requests(&mut self, link: Option<&mut Link>, now: Millis, events: &mut Vec<Event>) {
        let mut link = link.filter(|_| !self.spec.listen_only);
        while let Some(request) = self.session.poll_request() {
            let bytes = match request {
                BoardRequest::ReadMemory => BoardCommand::EeMoves.to_bytes(),
                BoardRequest::SendBoard => BoardCommand::SendBoard.to_bytes(),
            };
            match link.as_deref_mut() {
                Some(l) => {
                    tracing::info!(?request, "asking the board");
                    l.outbox.push_back(bytes);
                }
                None if request == BoardRequest::ReadMemory => {
                    if let Ok(mut e) = self.session.handle(Input::MemoryUnavailable, now) {
                        events.append(&mut e);
                    }
                }
                None => {}
            }
        }
    }

    /// Open the port and queue the handshake (unless listen-only).
    fn connect(&mut self, now: Millis) -> std::io::Result<Link> {
        let stream = link::open(&self.spec.port)?;
        let mut l = Link {
            stream,
            reader: Reader::new(),
            opened_at: now,
            last_rx: None,
            last_probe: now,
            outbox: VecDeque::new(),
            next_write: now,
            clock: ClockChannel::new(),
        };
        if !self.spec.listen_only {
            l.queue_handshake(now + link::OPEN_SETTLE_MS);
        }
        Ok(l)
    }

    /// Write queued commands when due, probe a quiet board, declare a silent one lost.
    async fn watchdog(&self, l: &mut Link, now: Millis) -> Result<(), Lost> {
        if self.spec.listen_only {
            // A listen-only link cannot ask; silence is a quiet game, not a lost board.
            return Ok(());
        }
        if now >= l.next_write
            && let Some(bytes) = l.outbox.pop_front()
        {
            tracing::debug!(bytes = ?bytes, queued = l.outbox.len(), "write");
            write(&mut l.stream, &bytes).await.map_err(Lost::Io)?;
            l.next_write = now + link::HANDSHAKE_GAP_MS;
        } else if now >= l.next_write
            && let Some(bytes) = l.clock.poll_transmit(now)
        {
            // Clock commands go out between board commands, never during the handshake.
            tracing::debug!(bytes = ?bytes, "clock command");
            write(&mut l.stream, &bytes).await.map_err(Lost::Io)?;
            l.next_write = now + link::HANDSHAKE_GAP_MS;
        }
        let heard = l.last_rx.unwrap_or(l.opened_at);
        let silence = now.saturating_sub(heard);
        if silence >= LOST_AFTER {
            return Err(Lost::Silent(silence));
        }
        if silence >= PROBE_AFTER && now.saturating_sub(l.last_probe) >= PROBE_AFTER {
            l.last_probe = now;
            if l.last_rx.is_some() {
                l.outbox.push_back(link::probe());
            } else if l.outbox.is_empty() {
                l.queue_handshake(now);
            }
        }
        Ok(())
    }

    /// Journal the events, then publish them and the property changes.
    async fn commit(&mut self, mut events: Vec<Event>, connected: bool) {
        self.date_new_game(&mut events);
        if !events.is_empty() {
            for e in &events {
                match e {
                    // Journal records carry whole game snapshots: too much for the log.
                    Event::Record(_) => tracing::debug!(event = ?e, "record"),
                    _ => tracing::info!(event = ?e, "event"),
                }
            }
            if let WriteOutcome::Held(problem) = self.store.append(&events).await {
                // Publishing anyway: hiding the game from the arbiter would not make the
                // journal any better. The records are written when the disk allows; the
                // problem is logged once and shown as the manager's StorageProblem.
                tracing::debug!("journal records held in memory: {problem}");
            }
        }
        self.publisher
            .publish(&events, self.session.view(), connected)
            .await;
        // A move becoming final changes the PGN with no event of its own (a tick, a press):
        // the store rewrites the live file whenever the text changed.
        self.store.after_publish(self.session.view(), &events);
    }
}

/// The reply of a `ShowClockMessage` call.
type ClockReply = oneshot::Sender<Result<(), CommandError>>;

/// Answer the callers whose clock messages were acknowledged or given up on.
fn answer_clock(clock: &mut ClockChannel, waiting: &mut HashMap<u64, ClockReply>) {
    while let Some(outcome) = clock.poll_outcome() {
        let (id, answer) = match outcome {
            Outcome::Shown(id) => (id, Ok(())),
            Outcome::Failed(id, e @ (MessageError::NoAck | MessageError::Refused)) => (
                id,
                Err(CommandError::ClockTimeout(format!(
                    "{e}; check that the clock is switched on and cabled to the board"
                ))),
            ),
            Outcome::Failed(id, e) => (id, Err(CommandError::InvalidArgument(e.to_string()))),
        };
        if let Some(reply) = waiting.remove(&id) {
            let _ = reply.send(answer);
        }
    }
}

async fn write(stream: &mut SerialStream, bytes: &[u8]) -> std::io::Result<()> {
    match tokio::time::timeout(WRITE_TIMEOUT, stream.write_all(bytes)).await {
        Ok(r) => r,
        Err(_) => Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "write timed out",
        )),
    }
}
