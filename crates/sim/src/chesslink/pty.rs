//! A [`MillenniumBoard`] behind a pseudo-terminal: the DGT simulator's pty, link and time
//! base ([`crate::pty`]) driving the Millennium board instead.
//!
//! The slave device ([`ChessLinkHandle::path`]) is what a host opens: 38400 baud, and since
//! a pty forces 8 data bits without parity, the host makes the parity bit itself in bit 7
//! ([`ParityBy::Host`](eboard_core::chesslink::ParityBy::Host)). Board time runs `speed`
//! times faster than the wall clock, or is stepped with an infinite speed, as for the DGT
//! board.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use eboard_core::chesslink::{DecoderStats, LedPattern};
use shakmaty::{Board, Chess, Piece, Position as _, Square};
use tokio::io::AsyncReadExt as _;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use super::board::{MillenniumBoard, MillenniumOptions, MillenniumStats};
use crate::handling::{Handling, Noise, SensorStep};
use crate::pgn::PgnGame;
use crate::pty::{Port, TapReceiver, TimeBase, far_future, remove_link, sleep_until, wall};

/// How long a position stands after each move of [`ChessLinkHandle::play_game`] before the
/// next move's hand comes (longer than the slowest scan's debounce: 5 × 40.96 ms).
pub const AFTER_MOVE_MS: u64 = 250;

/// How to run a simulated Millennium board.
#[derive(Debug, Clone)]
pub struct ChessLinkSimOptions {
    pub board: MillenniumOptions,
    /// Keep a symlink to the current slave device at this path.
    pub link: Option<PathBuf>,
    /// Board ms per wall-clock ms; `f64::INFINITY` steps board time only through
    /// [`ChessLinkHandle::sleep`].
    pub speed: f64,
    /// Hand every chunk written, with its board time, to [`ChessLinkHandle::take_tap`].
    pub tap: bool,
}

impl Default for ChessLinkSimOptions {
    fn default() -> Self {
        ChessLinkSimOptions {
            board: MillenniumOptions::default(),
            link: None,
            speed: 1.0,
            tap: false,
        }
    }
}

/// A physical action on the board (squares are the game's squares).
#[derive(Debug, Clone, PartialEq)]
pub enum ChessLinkAction {
    Lift(Square),
    Place(Square, Piece),
    SetPosition(Board),
    /// These bytes on the line at once, as they are (noise on the cable).
    Junk(Vec<u8>),
}

/// The simulated board at one moment.
#[derive(Debug, Clone)]
pub struct ChessLinkSnapshot {
    pub now_ms: u64,
    pub plugged: bool,
    pub placement: Board,
    /// What the LEDs show.
    pub leds: LedPattern,
    /// Option bytes 00–07.
    pub option_bytes: [u8; 8],
    pub stats: MillenniumStats,
    /// What the board's command decoder dropped.
    pub line: DecoderStats,
    /// Output bytes dropped because nobody read the port.
    pub dropped_bytes: u64,
}

enum Request {
    Advance(u64, oneshot::Sender<()>),
    Act(ChessLinkAction, oneshot::Sender<u64>),
    Snapshot(oneshot::Sender<ChessLinkSnapshot>),
    LedLog(oneshot::Sender<Vec<(u64, LedPattern)>>),
    Unplug(oneshot::Sender<()>),
    Replug(oneshot::Sender<anyhow::Result<()>>),
    Shutdown(oneshot::Sender<()>),
}

/// Entry point: [`ChessLinkSim::spawn`].
pub struct ChessLinkSim;

impl ChessLinkSim {
    /// Start a simulated Millennium board on a new pty (needs a tokio runtime).
    pub async fn spawn(opts: ChessLinkSimOptions) -> anyhow::Result<ChessLinkHandle> {
        anyhow::ensure!(
            opts.speed > 0.0,
            "simulator speed must be a positive number, got {}",
            opts.speed
        );
        let port = Port::open(opts.link.as_deref())?;
        let slave_path = Arc::new(Mutex::new(port.slave_path.clone()));
        let time = if opts.speed.is_finite() {
            TimeBase::Scaled {
                start: Instant::now(),
                speed: opts.speed,
            }
        } else {
            TimeBase::Stepped(Arc::new(AtomicU64::new(0)))
        };
        let (tap, tap_rx) = if opts.tap {
            let (t, r) = mpsc::unbounded_channel();
            (Some(t), Some(r))
        } else {
            (None, None)
        };
        let (tx, rx) = mpsc::unbounded_channel();
        let driver = Driver {
            board: MillenniumBoard::new(opts.board.clone(), 0),
            time: time.clone(),
            link: opts.link.clone(),
            port: Some(port),
            slave_path: slave_path.clone(),
            tap,
            dropped_bytes: 0,
        };
        let task = tokio::spawn(driver.run(rx));
        Ok(ChessLinkHandle {
            options: opts.board,
            tx,
            link: opts.link,
            slave_path,
            time,
            tap: Mutex::new(tap_rx),
            task: Mutex::new(Some(task)),
        })
    }
}

/// Control of a running simulated Millennium board. Dropping it stops the simulator.
pub struct ChessLinkHandle {
    options: MillenniumOptions,
    tx: mpsc::UnboundedSender<Request>,
    link: Option<PathBuf>,
    slave_path: Arc<Mutex<PathBuf>>,
    time: TimeBase,
    tap: Mutex<Option<TapReceiver>>,
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

fn lock<T: Clone>(m: &Mutex<T>) -> T {
    match m.lock() {
        Ok(v) => v.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    }
}

impl ChessLinkHandle {
    /// The path a host should open: the link if one was asked for, else the slave device.
    pub fn path(&self) -> PathBuf {
        self.link.clone().unwrap_or_else(|| lock(&self.slave_path))
    }

    pub fn options(&self) -> &MillenniumOptions {
        &self.options
    }

    /// Board time now, ms since the simulator started.
    pub fn now(&self) -> u64 {
        self.time.now()
    }

    /// Every chunk written to the pty with its board time (with the `tap` option; `None`
    /// after the first call).
    pub fn take_tap(&self) -> Option<TapReceiver> {
        match self.tap.lock() {
            Ok(mut t) => t.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        }
    }

    async fn call<T>(&self, make: impl FnOnce(oneshot::Sender<T>) -> Request) -> anyhow::Result<T> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(make(reply))
            .map_err(|_| anyhow::anyhow!("the simulator has stopped"))?;
        rx.await
            .map_err(|_| anyhow::anyhow!("the simulator stopped before answering"))
    }

    /// Wait `board_ms` of board time (stepped time: advance it at once, sending everything
    /// due on the way in order).
    pub async fn sleep(&self, board_ms: u64) {
        match &self.time {
            TimeBase::Scaled { speed, .. } => {
                tokio::time::sleep(wall(board_ms as f64, *speed)).await;
            }
            TimeBase::Stepped(_) => {
                let _ = self.call(|r| Request::Advance(board_ms, r)).await;
            }
        }
    }

    /// Carry out a physical action; returns the board time it happened at.
    pub async fn act(&self, action: ChessLinkAction) -> anyhow::Result<u64> {
        self.call(|r| Request::Act(action, r)).await
    }

    pub async fn snapshot(&self) -> anyhow::Result<ChessLinkSnapshot> {
        self.call(Request::Snapshot).await
    }

    /// Every LED state the board was put in, with its board time, oldest first.
    pub async fn led_log(&self) -> anyhow::Result<Vec<(u64, LedPattern)>> {
        self.call(Request::LedLog).await
    }

    /// Pull the plug: the pty closes, the link goes away, the board loses power (LEDs off).
    pub async fn unplug(&self) -> anyhow::Result<()> {
        self.call(Request::Unplug).await
    }

    /// Plug back in: a new pty behind the same link, the board powered up.
    pub async fn replug(&self) -> anyhow::Result<()> {
        self.call(Request::Replug).await?
    }

    /// Carry out a hand's sensor steps: lifts, placements and pauses (a clock press does
    /// nothing: the board has no clock).
    pub async fn hand(&self, steps: &[SensorStep]) -> anyhow::Result<()> {
        for step in steps {
            match *step {
                SensorStep::Lift(square) => {
                    self.act(ChessLinkAction::Lift(square)).await?;
                }
                SensorStep::Place(square, piece) => {
                    self.act(ChessLinkAction::Place(square, piece)).await?;
                }
                SensorStep::Pause(ms) => self.sleep(ms).await,
                SensorStep::Press => {}
            }
        }
        Ok(())
    }

    /// Play `game` by hand from its start position (set up at once), with the DGT
    /// simulator's hands: `noise` chooses their variants, `seed` their draw; each position
    /// stands [`AFTER_MOVE_MS`] before the next move. Returns the positions after each move.
    pub async fn play_game(
        &self,
        game: &PgnGame,
        seed: u64,
        noise: Noise,
    ) -> anyhow::Result<Vec<Chess>> {
        let mut position = game.start_position()?;
        self.act(ChessLinkAction::SetPosition(position.board().clone()))
            .await?;
        let mut hands = Handling::new(seed, noise).with_clock(false);
        let mut after = Vec::new();
        for mv in game.moves()? {
            self.hand(&hands.steps(&position, mv)).await?;
            // The hand leaves the board: the position stands for a few scans at least.
            self.sleep(AFTER_MOVE_MS).await;
            position = position.play(mv)?;
            after.push(position.clone());
        }
        Ok(after)
    }

    /// Wait until the board's option byte `address` holds `value` (a host configured it).
    pub async fn wait_for_option(
        &self,
        address: u8,
        value: u8,
        timeout: Duration,
    ) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            let snap = self.snapshot().await?;
            if snap.option_bytes.get(usize::from(address)) == Some(&value) {
                return Ok(());
            }
            anyhow::ensure!(
                Instant::now() < deadline,
                "option byte {address:02X} did not become {value:02X} within {timeout:?}"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Stop the simulator, close the pty and remove the link.
    pub async fn shutdown(&self) {
        let _ = self.call(Request::Shutdown).await;
        let task = match self.task.lock() {
            Ok(mut t) => t.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        if let Some(task) = task {
            let _ = task.await;
        }
    }
}

impl Drop for ChessLinkHandle {
    fn drop(&mut self) {
        let (reply, _) = oneshot::channel();
        let _ = self.tx.send(Request::Shutdown(reply));
    }
}

struct Driver {
    board: MillenniumBoard,
    time: TimeBase,
    link: Option<PathBuf>,
    port: Option<Port>,
    slave_path: Arc<Mutex<PathBuf>>,
    tap: Option<mpsc::UnboundedSender<(u64, Vec<u8>)>>,
    dropped_bytes: u64,
}

enum Wake {
    Read(std::io::Result<usize>),
    Request(Option<Request>),
    Timer,
}

impl Driver {
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Request>) {
        let mut buf = [0u8; 512];
        loop {
            self.flush();
            let now = self.time.now();
            let wake = self.board.next_deadline(now).map(|t| {
                self.time.instant_of(t.max(now)).unwrap_or_else(|| {
                    if t <= now {
                        Instant::now()
                    } else {
                        far_future()
                    }
                })
            });
            let read = async {
                match self.port.as_mut() {
                    Some(port) => port.reader.read(&mut buf).await,
                    None => std::future::pending().await,
                }
            };
            let event = tokio::select! {
                result = read => Wake::Read(result),
                request = rx.recv() => Wake::Request(request),
                _ = sleep_until(wake) => Wake::Timer,
            };
            match event {
                Wake::Timer => {}
                Wake::Read(Ok(n)) if n > 0 => {
                    let now = self.time.now();
                    self.board.receive(&buf[..n], now);
                }
                Wake::Read(result) => {
                    // Neither end of file nor an error can happen while the slave is held
                    // open; do not spin on them.
                    if let Err(e) = result {
                        tracing::warn!("simulated ChessLink board: pty read failed: {e}");
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Wake::Request(None) => break,
                Wake::Request(Some(request)) => {
                    if !self.handle(request).await {
                        break;
                    }
                }
            }
        }
        if let Some(link) = &self.link {
            remove_link(link);
        }
    }

    /// Returns false when the driver should stop.
    async fn handle(&mut self, request: Request) -> bool {
        let now = self.time.now();
        match request {
            Request::Act(action, reply) => {
                match action {
                    ChessLinkAction::Lift(sq) => self.board.lift(sq, now),
                    ChessLinkAction::Place(sq, piece) => self.board.place(sq, piece, now),
                    ChessLinkAction::SetPosition(b) => self.board.set_position(&b, now),
                    ChessLinkAction::Junk(bytes) => self.board.send_raw(bytes, now),
                }
                self.flush();
                let _ = reply.send(now);
            }
            Request::Advance(ms, reply) => {
                if let TimeBase::Stepped(clock) = self.time.clone() {
                    self.advance(&clock, now, ms);
                }
                let _ = reply.send(());
            }
            Request::Snapshot(reply) => {
                let _ = reply.send(self.snapshot(now));
            }
            Request::LedLog(reply) => {
                let _ = reply.send(self.board.led_log().cloned().collect());
            }
            Request::Unplug(reply) => {
                if let Some(port) = self.port.take() {
                    if let Some(link) = &self.link {
                        remove_link(link);
                    }
                    port.close().await;
                    self.board.power_off(now);
                }
                let _ = reply.send(());
            }
            Request::Replug(reply) => {
                let result = if self.port.is_some() {
                    Ok(())
                } else {
                    self.replug(now)
                };
                let _ = reply.send(result);
            }
            Request::Shutdown(reply) => {
                let _ = reply.send(());
                return false;
            }
        }
        true
    }

    fn replug(&mut self, now: u64) -> anyhow::Result<()> {
        let port = Port::open(self.link.as_deref())?;
        if let Ok(mut p) = self.slave_path.lock() {
            *p = port.slave_path.clone();
        }
        self.board.power_cycle(now);
        self.port = Some(port);
        Ok(())
    }

    /// Stepped time: visit every deadline up to `now + ms` so each report leaves at its own
    /// time.
    fn advance(&mut self, clock: &AtomicU64, now: u64, ms: u64) {
        let target = now.saturating_add(ms);
        let mut at = now;
        while let Some(next) = self.board.next_deadline(at).filter(|&t| t <= target) {
            at = next.max(at + 1).min(target);
            clock.store(at, Ordering::SeqCst);
            self.flush();
            if at == target {
                break;
            }
        }
        clock.store(target, Ordering::SeqCst);
        self.flush();
    }

    fn snapshot(&self, now: u64) -> ChessLinkSnapshot {
        ChessLinkSnapshot {
            now_ms: now,
            plugged: self.port.is_some(),
            placement: self.board.placement().clone(),
            leds: *self.board.leds(),
            option_bytes: std::array::from_fn(|a| self.board.option_byte(a as u8)),
            stats: self.board.stats(),
            line: self.board.line_stats(),
            dropped_bytes: self.dropped_bytes,
        }
    }

    /// Hand everything due to the writer; while unplugged the bytes go nowhere.
    fn flush(&mut self) {
        let now = self.time.now();
        let bytes = self.board.poll(now);
        if bytes.is_empty() {
            return;
        }
        let len = bytes.len() as u64;
        let Some(port) = &self.port else {
            self.dropped_bytes += len;
            return;
        };
        let copy = self.tap.as_ref().map(|tap| (tap, bytes.clone()));
        if port.writer.try_send(bytes).is_err() {
            self.dropped_bytes += len;
        } else if let Some((tap, bytes)) = copy {
            let _ = tap.send((now, bytes));
        }
    }
}
