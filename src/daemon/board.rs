//! One board's task, the thin shell around the pure [`Link`] machine (`src/link/`): it opens
//! the port when the machine asks, moves bytes both ways, sleeps until the machine's (or the
//! session's) next deadline, feeds the session with a monotonic millisecond time, and
//! commits what the session reports — journal first, then D-Bus. Probe, handshake, watchdog,
//! backoff, listen-only and the clock channel are decided by the machine, not here.
//!
//! A board's failures stay inside its task: an unopenable port, junk on the line or a
//! vanished device only change its own `Connected` property.

use std::collections::HashMap;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use eboard_core::capture;
use eboard_core::dgt::clock_channel::MessageError;
use eboard_core::game::PgnDate;
use eboard_core::link::{ClockRefusal, Fact, Link, Output, SessionTimer};
use eboard_core::session::{Command, Event, Input, Session};
use eboard_core::vocab::{CommandError, Millis};

use super::dbus::{CommandRequest, Publisher};
use super::serial_port::SerialPort;
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

/// The reply of a `ShowClockMessage` call.
type ClockReply = oneshot::Sender<Result<(), CommandError>>;

/// A board task while it runs: the task, its link machine and the port the machine opened.
struct Running {
    task: BoardTask,
    link: Link,
    port: Option<SerialPort>,
    /// Clock messages waiting for the clock's ack, by the machine's request id.
    clock_waiting: HashMap<u64, ClockReply>,
    /// The probing of an `auto` port on an FTDI adapter (see [`super::link::AutoProbe`]).
    probe: super::link::AutoProbe,
    /// What the board's LEDs show (a board that has them).
    leds: super::leds::LedPolicy,
}

impl BoardTask {
    fn now(&self) -> Millis {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Tell the session the wall clock before an input at `now`: the broadcast PGN's
    /// `ReferenceTime` is the instant a clock reading came in, and a game that begins is
    /// dated with the UTC day (the pure session has no calendar, the shell does).
    fn wall_clock_at(&mut self, now: Millis) {
        let unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        self.session.set_wall_clock(unix_ms, now);
        self.session.set_date(PgnDate::of_unix_ms(unix_ms));
    }

    /// Serve the board until `stop` fires or the command channel closes.
    pub async fn run(
        mut self,
        mut commands: mpsc::Receiver<CommandRequest>,
        mut stop: oneshot::Receiver<Stop>,
    ) {
        tracing::info!(port = %self.spec.port.display(), listen_only = self.spec.listen_only, "serving board");
        // The journal is the truth: rewrite the live PGN of a restored game.
        self.store.after_publish(self.session.view(), &[]);
        // A bound Bluetooth link (rfcomm) is a Bluetooth board whatever name the port is
        // configured under (a udev symlink): said at once, and its battery asked for.
        let bluetooth = std::fs::canonicalize(&self.spec.port)
            .ok()
            .is_some_and(|p| {
                eboard_core::identity::Identity::is_bluetooth_port(&p.to_string_lossy())
            });
        let mut link = Link::new(self.spec.listen_only)
            .with_tick_slot(tick_slot(&self.spec.id))
            .with_protocol(super::link::protocol_for(
                self.spec.protocol,
                &self.spec.port,
            ));
        if bluetooth {
            link.set_bluetooth_port(true);
            self.session.set_bluetooth_port(true);
        }
        let leds = super::leds::LedPolicy::new(self.spec.leds);
        let mut r = Running {
            link,
            task: self,
            port: None,
            clock_waiting: HashMap::new(),
            probe: super::link::AutoProbe::default(),
            leds,
        };
        let mut buf = vec![0u8; 4096];
        let mut removed = false;
        loop {
            let now = r.task.now();
            r.link.set_session_timer(
                SessionTimer {
                    wakeup: r.task.session.next_wakeup(),
                    ticks: r.task.session.wants_ticks(),
                },
                now,
            );
            let wake_ms = r.link.wake_at(now);
            let wake = r.task.epoch + Duration::from_millis(wake_ms);
            let read = async {
                match r.port.as_ref() {
                    Some(port) => port.read(&mut buf).await,
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
                    r.command(request).await;
                }
                result = read => {
                    let now = r.task.now();
                    match result {
                        Ok(0) => r.link.on_eof(now),
                        Ok(n) => {
                            r.task.store.record(&buf[..n]);
                            r.link.on_bytes(&buf[..n], now);
                        }
                        Err(e) => r.link.on_read_failed(e, now),
                    }
                    r.drive(now).await;
                }
                _ = tokio::time::sleep_until(wake) => {
                    let now = r.task.now();
                    r.link.handle_timeout(now);
                    r.drive(now).await;
                }
            }
        }
        let mut task = r.task;
        task.store.flush().await;
        if removed {
            task.store.retire().await;
        }
        tracing::info!("board stopped");
    }

    /// Journal the events, then publish them and the property changes.
    async fn commit(&mut self, events: Vec<Event>) {
        if !events.is_empty() {
            for e in &events {
                // Journal records carry whole game snapshots: too much for the log. Moves are
                // not logged at info either: they are the record's (journal, PGN, bus), and a
                // line per move per board is a line a second per board at blitz for journald
                // to keep. What an operator looks for stays: a game's start and end, flags,
                // illegal moves, retractions.
                match e {
                    Event::Record(_) => tracing::debug!(event = ?e, "record"),
                    Event::MovePlayed { .. } => tracing::debug!(event = ?e, "event"),
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
        self.publisher.publish(&events, self.session.view()).await;
        // A move becoming final changes the PGN with no event of its own (a tick, a press):
        // the store rewrites the live file whenever the text changed.
        self.store.after_publish(self.session.view(), &events);
    }
}

impl Running {
    /// An operator command: clock messages are the link's business (answered once the clock
    /// acknowledges), everything else goes to the session.
    async fn command(&mut self, request: CommandRequest) {
        let now = self.task.now();
        // An excerpt: a command's arguments are bounded, but a log line stays short.
        tracing::debug!(
            command = %eboard_core::vocab::excerpt(&format!("{:?}", request.command)),
            "command"
        );
        if let Command::ShowClockMessage(text) = &request.command {
            let clock_reports = self.task.session.view().clock_connected;
            match self.link.show_clock_message(text, clock_reports, now) {
                Ok(id) => {
                    self.clock_waiting.insert(id, request.reply);
                }
                Err(refusal) => {
                    let _ = request.reply.send(Err(self.refused(refusal, text)));
                }
            }
        } else {
            self.task.wall_clock_at(now);
            let answer = match self
                .task
                .session
                .handle(Input::Command(request.command), now)
            {
                Ok(events) => {
                    self.leds.saw(&events);
                    self.task.commit(events).await;
                    Ok(())
                }
                Err(e) => Err(e),
            };
            // The caller may have gone; that is not the board's problem.
            let _ = request.reply.send(answer);
        }
        // The clock command may go out now; the session may have asked the board for
        // something.
        self.drive(now).await;
    }

    /// Carry out what the machine asks until it has nothing more, then commit what the
    /// session reported. A change of `Connected` is committed apart from what came before
    /// it, so each batch is published with the link state it happened under.
    async fn drive(&mut self, now: Millis) {
        // `None`: nothing was fed to the session, so nothing to commit.
        let mut pending: Option<Vec<Event>> = None;
        loop {
            while let Some(request) = self.task.session.poll_request() {
                self.link.request(request, now);
            }
            while let Some(fact) = self.task.session.poll_fact() {
                log_fact(&fact);
            }
            let Some(output) = self.link.poll_output() else {
                break;
            };
            match output {
                Output::Open => match self.open_port() {
                    Ok(port) => {
                        self.port = Some(port);
                        self.link.on_opened(now);
                    }
                    Err(e) => self.link.on_open_failed(e),
                },
                Output::Close => self.port = None,
                Output::Write(bytes) => {
                    tracing::debug!(bytes = ?bytes, "write");
                    let result = match self.port.as_ref() {
                        Some(port) => write(port, &bytes).await,
                        None => Err(std::io::Error::new(
                            std::io::ErrorKind::NotConnected,
                            "the port is closed",
                        )),
                    };
                    if let Err(e) = result {
                        self.link.on_write_failed(e, now);
                    }
                }
                Output::Session(input) => {
                    // The session shows `Connected` as the link input says: what came
                    // before it is published under the old state.
                    if matches!(input, Input::Link(_))
                        && let Some(events) = pending.take()
                    {
                        self.leds.saw(&events);
                        self.task.commit(events).await;
                    }
                    let events = pending.get_or_insert_with(Vec::new);
                    self.feed(input, now, events);
                }
                Output::Clock { request, result } => self.answer_clock(request, result),
                Output::Fact(fact) => self.log(fact),
            }
        }
        if let Some(events) = pending {
            self.leds.saw(&events);
            self.task.commit(events).await;
        }
        if self.link.protocol() == eboard_core::link::Protocol::ChessLink
            && let Some(request) = self.leds.wish(self.task.session.view())
        {
            self.link.show_leds(request, now);
        }
    }

    /// One input to the session; its events join the batch.
    fn feed(&mut self, input: Input, now: Millis, events: &mut Vec<Event>) {
        let what = match &input {
            Input::Board(message) => {
                tracing::trace!(?message, "message");
                "board input"
            }
            Input::Tick => "a tick",
            Input::Command(_) => "a command",
            Input::Link(_) | Input::LineLoss | Input::MemoryUnavailable => "a link input",
        };
        self.task.wall_clock_at(now);
        match self.task.session.handle(input, now) {
            Ok(mut more) => events.append(&mut more),
            Err(e) => tracing::warn!("session refused {what}: {e}"),
        }
    }

    /// Open the port with the line of the protocol the board speaks: with `protocol =
    /// "auto"` decided again at every opening, since another board may have been plugged in.
    fn open_port(&mut self) -> std::io::Result<SerialPort> {
        let spec = &self.task.spec;
        let suggested = super::link::protocol_for(spec.protocol, &spec.port);
        let protocol = self
            .probe
            .next(spec.protocol, suggested, self.link.protocol());
        if protocol != self.link.protocol() {
            tracing::info!(port = %spec.port.display(), ?protocol, "the board's protocol");
            self.link.set_protocol(protocol);
        }
        super::link::open(&spec.port, self.link.line())
    }

    /// Why a clock message is not shown, as the contract's error.
    fn refused(&self, refusal: ClockRefusal, text: &str) -> CommandError {
        let id = &self.task.spec.id;
        match refusal {
            ClockRefusal::ListenOnly => CommandError::ListenOnly(format!(
                "board {id} is listen_only: eboardd never writes to it, so it cannot show a \
                 clock message (set listen_only = false to allow it)"
            )),
            ClockRefusal::NotConnected => CommandError::NoClock(format!(
                "board {id} is not connected, so no clock can be reached"
            )),
            ClockRefusal::NoClock => CommandError::NoClock(format!(
                "no clock reports through board {id}; plug the clock into the board and \
                 switch it on"
            )),
            ClockRefusal::Invalid(MessageError::NoClock) => CommandError::NoClock(format!(
                "board {id} has no clock (a Millennium ChessLink board has none)"
            )),
            ClockRefusal::Invalid(e @ MessageError::Busy { .. }) => CommandError::Busy(format!(
                "board {id}: cannot show \"{}\" now: {e}",
                eboard_core::vocab::excerpt(text)
            )),
            ClockRefusal::Invalid(e) => {
                // The channel's reason quotes the text already.
                CommandError::InvalidArgument(format!("cannot show it: {e}"))
            }
        }
    }

    /// Answer the caller whose clock message was acknowledged or given up on.
    fn answer_clock(&mut self, request: u64, result: Result<(), MessageError>) {
        let answer = result.map_err(|e| match e {
            MessageError::NoAck | MessageError::Refused => CommandError::ClockTimeout(format!(
                "{e}; check that the clock is switched on and cabled to the board"
            )),
            e @ (MessageError::Empty
            | MessageError::TooLong { .. }
            | MessageError::TooLongForRevelation { .. }
            | MessageError::NotAscii(_)) => CommandError::InvalidArgument(e.to_string()),
            e @ MessageError::Busy { .. } => CommandError::Busy(e.to_string()),
            e @ MessageError::NoClock => CommandError::NoClock(e.to_string()),
        });
        if let Some(reply) = self.clock_waiting.remove(&request) {
            let _ = reply.send(answer);
        }
    }

    /// Say what the machine reports, and note the link's ups and downs in the recording.
    fn log(&mut self, fact: Fact) {
        let port = self.task.spec.port.display();
        match fact {
            Fact::PortOpened => {
                tracing::info!("port opened");
                self.task.store.note(capture::NOTE_PORT_OPENED);
            }
            Fact::OpenFailed { error, first: true } => {
                tracing::warn!("cannot open {port}: {error}; retrying");
            }
            Fact::OpenFailed {
                error,
                first: false,
            } => {
                tracing::debug!("cannot open {port}: {error}");
            }
            Fact::Answers => {
                self.probe.answered();
                // A new connection's driver has shown nothing yet.
                self.leds.forget();
                tracing::info!("board answers");
            }
            Fact::Skipped(skipped) => {
                tracing::debug!(skipped, "skipped bytes that are not a board message");
            }
            Fact::UnprintableText(bytes) => {
                tracing::warn!(
                    bytes,
                    "the board sent text (serial number or trademark) with bytes that are not \
                     printable ASCII; they are shown as `?` (a faulty or hostile device?)"
                );
            }
            Fact::FrameLost => {
                tracing::info!("a frame was lost on the line: reading the whole board");
            }
            Fact::Asking(request) => tracing::info!(?request, "asking the board"),
            Fact::Lost(lost) => {
                tracing::warn!("board lost: {lost}");
                self.task.store.note(&capture::lost_note(&lost));
            }
        }
    }
}

async fn write(stream: &SerialPort, bytes: &[u8]) -> std::io::Result<()> {
    match tokio::time::timeout(WRITE_TIMEOUT, stream.write_all(bytes)).await {
        Ok(r) => r,
        Err(_) => Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "write timed out",
        )),
    }
}

/// The board's tick slot ([`Link::with_tick_slot`]): from its id, so boards spread over the
/// slots evenly and a board keeps its slot across restarts.
fn tick_slot(id: &str) -> u64 {
    // FNV-1a: stable across builds, unlike the standard library's hasher.
    id.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The session's facts go to the daemon's log at their own level (the core only reports them).
fn log_fact(fact: &eboard_core::session::Fact) {
    match fact.level() {
        eboard_core::session::Level::Info => tracing::info!("{fact}"),
        eboard_core::session::Level::Warn => tracing::warn!("{fact}"),
    }
}
