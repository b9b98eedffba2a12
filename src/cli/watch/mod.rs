//! `eboardctl watch [BOARD…]`: follows boards live. On a terminal, a full-screen view redrawn
//! on every signal and property change (and a few times a second so the running clock ticks);
//! otherwise, or with `--json`, one line per event.
//!
//! The shell here only moves messages: decoding ([`event`]), state ([`model`]) and drawing
//! ([`screen`], [`line`]) are pure. It subscribes before it reads the boards, and drops the
//! signals the daemon sent before its `GetManagedObjects` reply, so nothing is missed and
//! nothing goes back in time. It survives the daemon stopping and starting again.

pub mod event;
pub mod hall;
pub mod line;
pub mod model;
pub mod screen;

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::signal::unix::{SignalKind, signal};
use zbus::message::{Message, Type};
use zbus::{MatchRule, MessageStream};

use crate::cli::client::{Client, Snapshot, resolve};
use crate::cli::error::CtlError;
use crate::cli::watch::event::{WatchEvent, decode};
use crate::cli::watch::model::Model;
use crate::contract::{BUS_NAME, DBUS_NAME, MANAGER_PATH};

/// The arguments of `watch`.
#[derive(Debug, Clone, clap::Args)]
pub struct WatchArgs {
    /// Boards to watch (names or object ids; `<rig>/<board id>` with --mqtt); all boards when
    /// none is given.
    pub boards: Vec<String>,
    #[command(flatten)]
    pub hall: crate::cli::relay::HallArgs,
}

/// How often the full-screen view is redrawn when nothing happens (for the running clock).
const TICK: Duration = Duration::from_millis(250);

/// Runs `watch` until interrupted.
pub async fn run(client: &Client, json: bool, args: &WatchArgs) -> Result<(), CtlError> {
    // First of all: once installed, the handlers keep every SIGINT/SIGTERM until read, so
    // none is lost between two waits of the main loop.
    let mut stops = Stops::install()?;
    let bad_rule = |e: zbus::Error| CtlError::Other(format!("building a match rule: {e}"));
    // Everything the daemon emits under its object tree: board signals, PropertiesChanged,
    // InterfacesAdded/Removed.
    let rule = MatchRule::builder()
        .msg_type(Type::Signal)
        .sender(BUS_NAME)
        .path_namespace(MANAGER_PATH)
        .build()
        .map_err(bad_rule)?;
    let owner_rule = MatchRule::builder()
        .msg_type(Type::Signal)
        .sender(DBUS_NAME)
        .interface(DBUS_NAME)
        .member("NameOwnerChanged")
        .arg(0, BUS_NAME)
        .build()
        .map_err(bad_rule)?;
    let subscribe = |rule| MessageStream::for_match_rule(rule, &client.conn, None);
    let signals = subscribe(rule)
        .await
        .map_err(|e| CtlError::from_call(e, &client.bus))?;
    let owners = subscribe(owner_rule)
        .await
        .map_err(|e| CtlError::from_call(e, &client.bus))?;

    let snapshot = client.snapshot().await?;
    for wanted in &args.boards {
        resolve(&snapshot.boards, wanted)?;
    }

    let mut watcher = Watcher {
        client,
        model: Model::new(args.boards.clone()),
        started: Instant::now(),
        stale: None,
    };
    if json || !std::io::stdout().is_terminal() {
        watcher
            .lines(signals, owners, snapshot, json, &mut stops)
            .await
    } else {
        watcher.screen(signals, owners, snapshot, &mut stops).await
    }
}

/// SIGINT and SIGTERM, which end the watch cleanly (the terminal is given back).
struct Stops {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
}

impl Stops {
    fn install() -> Result<Self, CtlError> {
        let install = |kind: SignalKind, name: &str| {
            signal(kind).map_err(|e| CtlError::Other(format!("installing a {name} handler: {e}")))
        };
        Ok(Stops {
            interrupt: install(SignalKind::interrupt(), "SIGINT")?,
            terminate: install(SignalKind::terminate(), "SIGTERM")?,
        })
    }

    async fn recv(&mut self) {
        tokio::select! {
            _ = self.interrupt.recv() => {}
            _ = self.terminate.recv() => {}
        }
    }
}

struct Watcher<'a> {
    client: &'a Client,
    model: Model,
    started: Instant,
    /// Messages from this sender with a lower serial predate the last snapshot.
    stale: Option<(String, u32)>,
}

/// Milliseconds since the Unix epoch, for event times.
fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The next item of a message stream.
async fn next_message(stream: &mut MessageStream) -> Option<zbus::Result<Message>> {
    use futures_core::Stream;
    std::future::poll_fn(|cx| std::pin::Pin::new(&mut *stream).poll_next(cx)).await
}

/// Something to wait for in the main loop.
enum Wake {
    Message(Option<zbus::Result<Message>>),
    Tick,
    Resize,
    Quit,
}

impl Watcher<'_> {
    fn now(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// Turns a snapshot into `Board` events and remembers where it stands.
    fn take_snapshot(&mut self, snapshot: Snapshot) -> Vec<WatchEvent> {
        self.stale = snapshot.sender.map(|s| (s, snapshot.serial));
        snapshot
            .boards
            .into_iter()
            .map(|b| WatchEvent::Board {
                path: b.path,
                props: Box::new(b.props),
            })
            .collect()
    }

    /// Decodes a message, dropping what predates the snapshot. A daemon (re)start fetches
    /// the boards again: the returned events then include them.
    async fn events(&mut self, msg: &Message) -> Vec<WatchEvent> {
        let header = msg.header();
        if let (Some((sender, serial)), Some(from)) = (&self.stale, header.sender())
            && from.as_str() == sender
            && header.primary().serial_num().get() < *serial
        {
            return Vec::new();
        }
        let Some(event) = decode(msg) else {
            return Vec::new();
        };
        let mut out = vec![event.clone()];
        if event == WatchEvent::DaemonStarted {
            // If the boards are not there yet, InterfacesAdded will bring them.
            if let Ok(snapshot) = self.client.snapshot().await {
                out.extend(self.take_snapshot(snapshot));
            }
        }
        out
    }

    async fn next(
        signals: &mut MessageStream,
        owners: &mut MessageStream,
        ticker: Option<&mut tokio::time::Interval>,
        resize: Option<&mut tokio::signal::unix::Signal>,
        stops: &mut Stops,
    ) -> Wake {
        let tick = async {
            match ticker {
                Some(t) => {
                    t.tick().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        let resized = async {
            match resize {
                Some(r) => {
                    r.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            m = next_message(signals) => Wake::Message(m),
            m = next_message(owners) => Wake::Message(m),
            _ = tick => Wake::Tick,
            _ = resized => Wake::Resize,
            _ = stops.recv() => Wake::Quit,
        }
    }

    /// One line per event on stdout.
    async fn lines(
        &mut self,
        mut signals: MessageStream,
        mut owners: MessageStream,
        snapshot: Snapshot,
        json: bool,
        stops: &mut Stops,
    ) -> Result<(), CtlError> {
        let mut pending = self.take_snapshot(snapshot);
        loop {
            for event in pending.drain(..) {
                let name = match &event {
                    WatchEvent::Board { props, .. } if !props.name.is_empty() => props.name.clone(),
                    other => other
                        .path()
                        .map(|p| self.model.name_of(p))
                        .unwrap_or_default(),
                };
                let now = self.now();
                if !self.model.apply(&event, now) {
                    continue;
                }
                let text = if json {
                    line::json_line(&event, &name, unix_ms()).to_string()
                } else {
                    line::text_line(&event, &name, unix_ms())
                };
                let mut out = std::io::stdout().lock();
                if writeln!(out, "{text}").and_then(|()| out.flush()).is_err() {
                    // The reader went away (`eboardctl watch | head`): nothing left to do.
                    return Ok(());
                }
            }
            match Self::next(&mut signals, &mut owners, None, None, stops).await {
                Wake::Message(Some(Ok(msg))) => pending = self.events(&msg).await,
                Wake::Message(Some(Err(_))) => {}
                Wake::Message(None) => {
                    return Err(CtlError::Other(format!(
                        "the connection to the {} closed",
                        self.client.bus
                    )));
                }
                Wake::Quit => return Ok(()),
                Wake::Tick | Wake::Resize => {}
            }
        }
    }

    /// The full-screen view.
    async fn screen(
        &mut self,
        mut signals: MessageStream,
        mut owners: MessageStream,
        snapshot: Snapshot,
        stops: &mut Stops,
    ) -> Result<(), CtlError> {
        let mut resize = signal(SignalKind::window_change())
            .map_err(|e| CtlError::Other(format!("installing a SIGWINCH handler: {e}")))?;
        let mut ticker = tokio::time::interval(TICK);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let _screen = terminal::FullScreen::enter();

        let first = self.take_snapshot(snapshot);
        let now = self.now();
        for e in &first {
            self.model.apply(e, now);
        }
        let mut last_frame = String::new();
        loop {
            let (cols, rows) = terminal::size().unwrap_or((80, 24));
            let tod = format!("{} UTC", line::time_of_day(unix_ms()));
            let frame = screen::render(
                &self.model,
                self.now(),
                &screen::Frame {
                    bus: &self.client.bus,
                    time_of_day: &tod,
                    cols,
                    rows,
                },
            );
            if frame != last_frame {
                let mut out = std::io::stdout().lock();
                if out
                    .write_all(frame.as_bytes())
                    .and_then(|()| out.flush())
                    .is_err()
                {
                    return Ok(());
                }
                last_frame = frame;
            }
            match Self::next(
                &mut signals,
                &mut owners,
                Some(&mut ticker),
                Some(&mut resize),
                stops,
            )
            .await
            {
                Wake::Message(Some(Ok(msg))) => {
                    for e in self.events(&msg).await {
                        let now = self.now();
                        self.model.apply(&e, now);
                    }
                }
                Wake::Message(Some(Err(_))) | Wake::Tick => {}
                Wake::Resize => last_frame.clear(),
                Wake::Message(None) => {
                    return Err(CtlError::Other(format!(
                        "the connection to the {} closed",
                        self.client.bus
                    )));
                }
                Wake::Quit => return Ok(()),
            }
        }
    }
}

/// The terminal side of the full-screen view.
mod terminal {
    use std::io::Write;

    use nix::sys::termios::{self, LocalFlags, SetArg, Termios};

    /// While alive: the alternate screen, no cursor, no echo of typed keys. Dropping it (also
    /// on error or panic) gives the terminal back as it was.
    pub struct FullScreen {
        saved: Option<Termios>,
    }

    impl FullScreen {
        pub fn enter() -> Self {
            let stdin = std::io::stdin();
            let saved = termios::tcgetattr(&stdin).ok();
            if let Some(t) = &saved {
                let mut quiet = t.clone();
                quiet
                    .local_flags
                    .remove(LocalFlags::ECHO | LocalFlags::ICANON);
                let _ = termios::tcsetattr(&stdin, SetArg::TCSANOW, &quiet);
            }
            let mut out = std::io::stdout();
            let _ = out.write_all(b"\x1b[?1049h\x1b[?25l\x1b[2J");
            let _ = out.flush();
            FullScreen { saved }
        }
    }

    impl Drop for FullScreen {
        fn drop(&mut self) {
            let mut out = std::io::stdout();
            let _ = out.write_all(b"\x1b[0m\x1b[?25h\x1b[?1049l");
            let _ = out.flush();
            let stdin = std::io::stdin();
            if let Some(t) = &self.saved {
                // Keys typed while watching are discarded, not handed to the shell.
                let _ = termios::tcflush(&stdin, termios::FlushArg::TCIFLUSH);
                let _ = termios::tcsetattr(&stdin, SetArg::TCSANOW, t);
            }
        }
    }

    /// Columns and rows of the terminal on stdout.
    pub fn size() -> Option<(usize, usize)> {
        let mut ws = nix::libc::winsize {
            ws_row: 0,
            ws_col: 0,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: TIOCGWINSZ only writes a `winsize` through the pointer, which points to a
        // live, properly aligned `winsize`; a bad descriptor makes it fail, not write.
        let rc = unsafe {
            nix::libc::ioctl(
                nix::libc::STDOUT_FILENO,
                nix::libc::TIOCGWINSZ,
                &mut ws as *mut nix::libc::winsize,
            )
        };
        (rc == 0 && ws.ws_col > 0 && ws.ws_row > 0)
            .then_some((usize::from(ws.ws_col), usize::from(ws.ws_row)))
    }
}
