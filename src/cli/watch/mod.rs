//! `eboardctl watch [BOARD…]`: follows boards live. On a terminal, a full-screen view redrawn
//! on every signal and property change (and a few times a second so the running clock ticks);
//! otherwise, or with `--json`, one line per event.
//!
//! One loop ([`follow`]) serves both sources, as `serve` does: the local bus
//! ([`crate::client::watch_bus`]) or, with `--mqtt`, a hall's broker
//! ([`crate::client::mqtt`]). Either sends the client model's [`HallUpdate`]s, which
//! [`hall::Adapter`] (pure) turns into the view's [`WatchEvent`]s; state ([`model`]) and
//! drawing ([`screen`], [`line`]) are pure too. The bus source subscribes before it reads the
//! boards and drops what predates its snapshot, so nothing is missed and nothing goes back in
//! time; it survives the daemon stopping and starting again.

pub mod hall;
pub mod line;
pub mod model;
pub mod screen;

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

use crate::cli::client::{Client, resolve};
use crate::cli::relay::HallSource;
use crate::cli::watch::hall::{Adapter, Naming};
use crate::cli::watch::model::Model;
use crate::client::HallUpdate;
use crate::client::bus::BusChoice;
use crate::client::error::CtlError;
use crate::client::event::WatchEvent;

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

/// Runs `watch` on the local bus until interrupted.
pub async fn run(
    client: &Client,
    bus: &BusChoice,
    json: bool,
    args: &WatchArgs,
) -> Result<(), CtlError> {
    // First of all: once installed, the handlers keep every SIGINT/SIGTERM until read, so
    // none is lost between two waits of the main loop.
    let stop = crate::cli::relay::stop_signal()?;
    // A daemon that is not running, and a board it does not serve, are refused up front.
    let snapshot = client.snapshot().await?;
    for wanted in &args.boards {
        resolve(&snapshot.boards, wanted)?;
    }
    let (tx, rx) = mpsc::channel(1024);
    let feed = tokio::spawn(crate::client::watch_bus(bus.clone(), tx));
    let view = View {
        label: client.bus.clone(),
        json,
        boards: args.boards.clone(),
        local: true,
    };
    let result = follow(view, Adapter::new(Naming::Bus), rx, stop).await;
    feed.abort();
    result
}

/// Runs `watch --mqtt` until interrupted: the same loop as on the bus, fed by the broker.
pub async fn run_hall(source: HallSource, json: bool, boards: Vec<String>) -> Result<(), CtlError> {
    let stop = crate::cli::relay::stop_signal()?;
    let view = View {
        label: format!("broker {}", source.broker.url),
        json,
        boards,
        local: false,
    };
    let (tx, rx) = tokio::sync::mpsc::channel(1024);
    let feed = tokio::spawn(source.follow(None, tx));
    let result = follow(view, Adapter::new(Naming::Hall), rx, stop).await;
    feed.abort();
    result
}

/// What the loop shows and how.
pub struct View {
    /// Where the boards come from, for the top bar ("bus at unix:…", "broker mqtt://…").
    pub label: String,
    pub json: bool,
    /// The boards asked for (all when empty).
    pub boards: Vec<String>,
    /// Whether the boards are this host's (the local bus): then the `broadcast` lines of a
    /// running `eboardctl broadcast` are shown too.
    pub local: bool,
}

/// How often the `broadcast` lines are read again.
const BROADCAST_EVERY: Duration = Duration::from_secs(1);

/// The one watch loop: hall updates from any source in, lines or frames out, until `stop`
/// resolves or the source ends.
pub async fn follow(
    view: View,
    mut adapter: Adapter,
    mut rx: mpsc::Receiver<HallUpdate>,
    stop: impl std::future::Future<Output = ()>,
) -> Result<(), CtlError> {
    let mut stop = Box::pin(stop);
    let mut model = Model::new(view.boards.clone());
    let started = Instant::now();
    let now = || started.elapsed().as_millis() as u64;
    let gone = || CtlError::Other(format!("the feed from the {} stopped", view.label));
    let mut broadcast = tokio::time::interval(BROADCAST_EVERY);
    broadcast.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    if view.json || !std::io::stdout().is_terminal() {
        loop {
            let update = tokio::select! {
                u = rx.recv() => u.ok_or_else(gone)?,
                _ = broadcast.tick(), if view.local => {
                    for (path, lines) in model.set_broadcast(broadcast_lines) {
                        let name = model.name_of(&path);
                        let text = line::broadcast_line(&name, &path, &lines, unix_ms(), view.json);
                        if crate::cli::print_text(&text).is_err() {
                            return Ok(());
                        }
                    }
                    continue;
                }
                _ = &mut stop => return Ok(()),
            };
            for event in adapter.events(update) {
                let name = match &event {
                    WatchEvent::Board { props, .. } if !props.name.is_empty() => props.name.clone(),
                    other => other.path().map(|p| model.name_of(p)).unwrap_or_default(),
                };
                if !model.apply(&event, now()) {
                    continue;
                }
                let text = if view.json {
                    line::json_line(&event, &name, unix_ms()).to_string()
                } else {
                    line::text_line(&event, &name, unix_ms())
                };
                // One line per event: any control character in it came from outside.
                if !crate::cli::print_line(&text) {
                    // The reader went away (`eboardctl watch | head`): nothing left to do.
                    return Ok(());
                }
            }
        }
    }
    let mut resize = signal(SignalKind::window_change())
        .map_err(|e| CtlError::Other(format!("installing a SIGWINCH handler: {e}")))?;
    let mut ticker = tokio::time::interval(TICK);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let _screen = terminal::FullScreen::enter();
    let mut last_frame = String::new();
    loop {
        let (cols, rows) = terminal::size().unwrap_or((80, 24));
        let tod = format!("{} UTC", line::time_of_day(unix_ms()));
        let frame = screen::render(
            &model,
            now(),
            &screen::Frame {
                bus: &view.label,
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
        tokio::select! {
            u = rx.recv() => {
                for e in adapter.events(u.ok_or_else(gone)?) {
                    // The frame mixes the view's own escape sequences with text from
                    // outside: that text is escaped before it reaches the model.
                    model.apply(&crate::cli::escape::watch_event(e), now());
                }
            }
            _ = ticker.tick() => {}
            _ = broadcast.tick(), if view.local => {
                model.set_broadcast(broadcast_lines);
            }
            _ = resize.recv() => last_frame.clear(),
            _ = &mut stop => return Ok(()),
        }
    }
}

/// A board's `broadcast` lines, read from the running broadcasters' state files.
fn broadcast_lines(board_id: &str) -> Vec<String> {
    crate::cli::status::broadcast_lines(board_id)
}

/// Milliseconds since the Unix epoch, for event times.
fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The terminal side of the full-screen view, through crossterm.
mod terminal {
    use std::io::Write;

    use crossterm::cursor::{Hide, Show};
    use crossterm::style::ResetColor;
    use crossterm::terminal::{Clear, ClearType, EnterAlternateScreen, LeaveAlternateScreen};
    use nix::sys::termios::{self, LocalFlags, SetArg, Termios};

    /// While alive: the alternate screen, no cursor, no echo of typed keys. Dropping it (also
    /// on error or panic) gives the terminal back as it was.
    ///
    /// Typed keys are only kept from echoing (no ECHO, no ICANON), not put in crossterm's raw
    /// mode: raw mode also turns off ISIG, and Ctrl-C must stay the SIGINT that ends the watch.
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
            let _ = crossterm::execute!(out, EnterAlternateScreen, Hide, Clear(ClearType::All));
            let _ = out.flush();
            FullScreen { saved }
        }
    }

    impl Drop for FullScreen {
        fn drop(&mut self) {
            let mut out = std::io::stdout();
            let _ = crossterm::execute!(out, ResetColor, Show, LeaveAlternateScreen);
            let _ = out.flush();
            let stdin = std::io::stdin();
            if let Some(t) = &self.saved {
                // Keys typed while watching are discarded, not handed to the shell.
                let _ = termios::tcflush(&stdin, termios::FlushArg::TCIFLUSH);
                let _ = termios::tcsetattr(&stdin, SetArg::TCSANOW, t);
            }
        }
    }

    /// Columns and rows of the terminal.
    pub fn size() -> Option<(usize, usize)> {
        match crossterm::terminal::size() {
            Ok((cols, rows)) if cols > 0 && rows > 0 => {
                Some((usize::from(cols), usize::from(rows)))
            }
            _ => None,
        }
    }
}
