//! One board's task: the serial link's life cycle (open, handshake, watchdog, reconnect with
//! backoff), feeding the session with a monotonic millisecond time, and committing what the
//! session reports — journal first, then D-Bus.
//!
//! A board's failures stay inside its task: an unopenable port, junk on the line or a
//! vanished device only change its own `Connected` property.

use std::collections::VecDeque;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_serial::SerialStream;

use crate::session::{Command, Event, Input, Millis, Session};

use super::dbus::{CommandRequest, Publisher};
use super::link::{self, Reader};
use super::settings::BoardSpec;
use super::store::BoardStore;

/// How often the session gets a `Tick` (settling, flag fall on a silent clock) and the
/// watchdog looks at the line.
const TICK: Duration = Duration::from_millis(100);
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
        mut stop: oneshot::Receiver<()>,
    ) {
        let mut link: Option<Link> = None;
        let mut connected = false;
        let mut backoff = BACKOFF_MIN;
        let mut next_attempt: Millis = 0;
        let mut open_failures: u32 = 0;
        let mut last_tick: Millis = 0;
        let mut buf = vec![0u8; 4096];
        // The next wake-up: every TICK while a link is open; without one only for the next
        // open attempt or the idle session tick, so a rack of unplugged boards costs nothing.
        let mut next_tick = Instant::now();
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
                _ = &mut stop => break,
                request = commands.recv() => {
                    let Some(request) = request else { break };
                    let now = self.now();
                    tracing::debug!(command = ?request.command, "command");
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
                            let messages = l.reader.push(bytes);
                            let skipped = l.reader.skipped() - skipped_before;
                            if skipped > 0 {
                                tracing::debug!(skipped, "skipped bytes that are not a board message");
                            }
                            if !messages.is_empty() {
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
                            for message in messages {
                                tracing::trace!(?message, "message");
                                match self.session.handle(Input::Board(message), now) {
                                    Ok(mut e) => events.append(&mut e),
                                    Err(e) => tracing::warn!("session refused board input: {e}"),
                                }
                            }
                            self.commit(events, connected).await;
                            None
                        }
                        Err(e) => Some(Lost::Io(e)),
                    };
                    if let Some(lost) = lost {
                        link = None;
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
                    // Without a link nothing is settling on the board: time-based rules
                    // (a flag falling on a clock nobody hears) only need a tick a second.
                    if link.is_some() || now.saturating_sub(last_tick) >= IDLE_TICK_MS {
                        last_tick = now;
                        match self.session.handle(Input::Tick, now) {
                            Ok(events) => self.commit(events, connected).await,
                            Err(e) => tracing::warn!("session refused a tick: {e}"),
                        }
                    }
                    if let Some(l) = link.as_mut() {
                        if let Err(lost) = self.watchdog(l, now).await {
                            link = None;
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
        self.store.flush();
        tracing::info!("board stopped");
    }

    /// A game that begins gets today's date (UTC) as its PGN `Date` tag, unless the
    /// configuration names one: the pure session has no calendar, the shell does.
    fn date_new_game(&mut self, events: &mut Vec<Event>) {
        if !events
            .iter()
            .any(|e| matches!(e, Event::GameStarted { .. }))
            || self
                .spec
                .session
                .tags
                .iter()
                .any(|(name, _)| name == "Date")
        {
            return;
        }
        let today = super::pgn_files::utc_date(std::time::SystemTime::now()).replace('-', ".");
        let command = Command::SetTags(vec![("Date".into(), today)]);
        match self.session.handle(Input::Command(command), self.now()) {
            Ok(mut more) => events.append(&mut more),
            Err(e) => tracing::warn!("cannot date the new game: {e}"),
        }
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
            if let Err(e) = self.store.append(&events) {
                // Publishing anyway: hiding the game from the arbiter would not make the
                // journal any better.
                tracing::error!("cannot journal events: {e:#}");
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

async fn write(stream: &mut SerialStream, bytes: &[u8]) -> std::io::Result<()> {
    match tokio::time::timeout(WRITE_TIMEOUT, stream.write_all(bytes)).await {
        Ok(r) => r,
        Err(_) => Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "write timed out",
        )),
    }
}
