//! The thin tokio driver that puts a [`VirtualBoard`] behind a pseudo-terminal.
//!
//! One task owns the board and the pty master; it feeds host bytes in, carries out physical
//! actions sent through a [`SimHandle`], and writes whatever the board has to say when it is
//! due. Board time runs `speed` times faster than the wall clock, so a game of several
//! minutes plays in seconds while the clock still counts the full time. With an infinite
//! speed the board's time is *stepped*: it stands still except when the scenario waits
//! ([`SimHandle::sleep`]), which advances it at once, emitting every clock message due on the
//! way in order. Tests use that: exact board times, no wall-clock waiting at all.
//!
//! The slave side (`/dev/pts/N`) is what a daemon opens as its serial port. With a `link`
//! path the simulator keeps a symlink there; unplugging removes it (as the device node of a
//! real USB board disappears) and replugging puts a fresh pty behind the same path.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context as _;
use shakmaty::{Board, Piece, Square};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _, ReadHalf, WriteHalf};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_serial::{SerialPort as _, SerialStream};

use super::clock::{ClockSetup, ClockSide};
use super::virtual_board::{BoardOptions, BoardStats, UpdateMode, VirtualBoard};
use eboard_core::dgt::ClockReading;

/// Output chunks queued for a host that reads slowly before bytes are dropped (a whole game
/// at stepped speed fits many times over).
const WRITE_QUEUE_CHUNKS: usize = 65_536;

/// How long an unplug waits for the host to read what was sent before the plug was pulled.
const UNPLUG_GRACE: Duration = Duration::from_millis(500);

/// How to run a simulated board.
#[derive(Debug, Clone)]
pub struct SimOptions {
    pub board: BoardOptions,
    /// Keep a symlink to the current slave device at this path (replaced atomically).
    pub link: Option<PathBuf>,
    /// Board milliseconds per wall-clock millisecond (1.0 = real time). Must be > 0;
    /// `f64::INFINITY` steps board time only through [`SimHandle::sleep`].
    pub speed: f64,
    /// Also hand every chunk written to the pty, with its board time, to
    /// [`SimHandle::take_tap`] (tests use it to timestamp what they read).
    pub tap: bool,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            board: BoardOptions::default(),
            link: None,
            speed: 1.0,
            tap: false,
        }
    }
}

/// A physical action on the board or the clock. Squares are physical squares named as in
/// the standard orientation (the game's squares); the board maps them to its wire indices.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Lift(Square),
    Place(Square, Piece),
    /// The player sitting at this side of the clock presses the lever.
    PressLever(ClockSide),
    /// The clock's start/stop button.
    StartStop,
    /// One of the clock's five buttons (see [`VirtualBoard::press_button`]).
    ClockButton(u8),
    /// Rearrange the pieces to this placement (a reset to a new game, a set-up position).
    SetPosition(Board),
    /// Set the clock to a new time control, stopped.
    SetClock(ClockSetup),
    /// Set the clock to a time control in its FIDE mode (periods, increments, delays),
    /// stopped.
    SetTimeControl(eboard_core::arbiter::timecontrol::TimeControl),
    /// The clock's current frame (BWTIME) with its payload XORed with this mask, sent at once
    /// between the clock's own frames: what a noisy clock–board cable delivers.
    GarbleClockFrame([u8; 7]),
    /// A Bluetooth board's battery drains or is put on charge.
    SetBattery(crate::models::SimBattery),
}

/// The simulator's state at one moment.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// Board time, ms since the simulator started.
    pub now_ms: u64,
    pub plugged: bool,
    pub mode: UpdateMode,
    pub placement: Board,
    /// What the clock shows (what a clock request would return).
    pub clock: ClockReading,
    pub display_text: Option<String>,
    pub stats: BoardStats,
    /// Output bytes dropped because nobody read the port fast enough.
    pub dropped_bytes: u64,
}

enum Request {
    Advance(u64, oneshot::Sender<()>),
    Act(Action, oneshot::Sender<u64>),
    Snapshot(oneshot::Sender<Snapshot>),
    Unplug(oneshot::Sender<anyhow::Result<()>>),
    Replug(oneshot::Sender<anyhow::Result<()>>),
    Shutdown(oneshot::Sender<()>),
}

/// Every chunk the board wrote to the pty, with the board time it was written at.
pub type TapReceiver = mpsc::UnboundedReceiver<(u64, Vec<u8>)>;

/// Entry point: [`SimBoard::spawn`].
pub struct SimBoard;

impl SimBoard {
    /// Start a simulated board on a new pty. Needs a tokio runtime with I/O and time enabled.
    pub async fn spawn(opts: SimOptions) -> anyhow::Result<SimHandle> {
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
        let board = VirtualBoard::new(opts.board.clone(), 0);
        let (tx, rx) = mpsc::unbounded_channel();
        let (tap, tap_rx) = if opts.tap {
            let (t, r) = mpsc::unbounded_channel();
            (Some(t), Some(r))
        } else {
            (None, None)
        };
        let driver = Driver {
            tap,
            board,
            time: time.clone(),
            link: opts.link.clone(),
            port: Some(port),
            slave_path: slave_path.clone(),
            dropped_bytes: 0,
        };
        let task = tokio::spawn(driver.run(rx));
        Ok(SimHandle {
            options: opts.board.clone(),
            tx,
            link: opts.link,
            slave_path,
            time,
            speed: opts.speed,
            tap: Mutex::new(tap_rx),
            task: Mutex::new(Some(task)),
        })
    }
}

/// Where board time comes from.
#[derive(Debug, Clone)]
pub(crate) enum TimeBase {
    /// `speed` × the wall clock since `start`.
    Scaled { start: Instant, speed: f64 },
    /// Only advanced by the driver on request; shared so handles can read it.
    Stepped(Arc<AtomicU64>),
}

impl TimeBase {
    pub(crate) fn now(&self) -> u64 {
        match self {
            TimeBase::Scaled { start, speed } => {
                (start.elapsed().as_secs_f64() * 1000.0 * speed) as u64
            }
            TimeBase::Stepped(now) => now.load(Ordering::SeqCst),
        }
    }

    /// The wall-clock instant of a board time, `None` for stepped time.
    pub(crate) fn instant_of(&self, board_ms: u64) -> Option<Instant> {
        match self {
            // Half a board millisecond late, so that `now()` has surely reached `board_ms`
            // when the timer fires (no spinning on float rounding).
            TimeBase::Scaled { start, speed } => Some(
                start
                    .checked_add(wall(board_ms as f64 + 0.5, *speed))
                    .unwrap_or_else(far_future),
            ),
            TimeBase::Stepped(_) => None,
        }
    }
}

/// Control of a running simulated board. Dropping it stops the simulator.
pub struct SimHandle {
    options: BoardOptions,
    tx: mpsc::UnboundedSender<Request>,
    link: Option<PathBuf>,
    slave_path: Arc<Mutex<PathBuf>>,
    time: TimeBase,
    speed: f64,
    tap: Mutex<Option<TapReceiver>>,
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl SimHandle {
    /// The path a daemon should open: the link if one was asked for, else the current slave
    /// device (which changes on every replug).
    pub fn path(&self) -> PathBuf {
        match &self.link {
            Some(link) => link.clone(),
            None => self.slave_path(),
        }
    }

    /// The current slave device (`/dev/pts/N`).
    pub fn slave_path(&self) -> PathBuf {
        match self.slave_path.lock() {
            Ok(p) => p.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// The options the board was started with.
    pub fn options(&self) -> &BoardOptions {
        &self.options
    }

    pub fn speed(&self) -> f64 {
        self.speed
    }

    /// The receiver of every chunk written to the pty with its board time (only with
    /// [`SimOptions::tap`]; `None` after the first call).
    pub fn take_tap(&self) -> Option<TapReceiver> {
        match self.tap.lock() {
            Ok(mut t) => t.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        }
    }

    /// Board time now, ms since the simulator started.
    pub fn now(&self) -> u64 {
        self.time.now()
    }

    /// Wait `board_ms` of board time: `board_ms / speed` on the wall clock, or, with stepped
    /// time, advance the board's time at once (everything due on the way is sent in order).
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

    async fn call<T>(&self, make: impl FnOnce(oneshot::Sender<T>) -> Request) -> anyhow::Result<T> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(make(reply))
            .map_err(|_| anyhow::anyhow!("the simulator has stopped"))?;
        rx.await
            .map_err(|_| anyhow::anyhow!("the simulator stopped before answering"))
    }

    /// Carry out a physical action; returns the board time it happened at.
    pub async fn act(&self, action: Action) -> anyhow::Result<u64> {
        self.call(|r| Request::Act(action, r)).await
    }

    pub async fn lift(&self, square: Square) -> anyhow::Result<u64> {
        self.act(Action::Lift(square)).await
    }

    pub async fn place(&self, square: Square, piece: Piece) -> anyhow::Result<u64> {
        self.act(Action::Place(square, piece)).await
    }

    pub async fn press_lever(&self, side: ClockSide) -> anyhow::Result<u64> {
        self.act(Action::PressLever(side)).await
    }

    pub async fn snapshot(&self) -> anyhow::Result<Snapshot> {
        self.call(Request::Snapshot).await
    }

    /// Pull the plug: the pty closes (the daemon reads end-of-file) and the link goes away.
    /// Pieces can still be moved; the board sees them but tells nobody. A board on its
    /// battery (a Bluetooth board) keeps its power and logs them: a Bluetooth link drop.
    pub async fn unplug(&self) -> anyhow::Result<()> {
        self.call(Request::Unplug).await?
    }

    /// Plug back in: a new pty behind the same link, the board powered up in IDLE.
    pub async fn replug(&self) -> anyhow::Result<()> {
        self.call(Request::Replug).await?
    }

    /// Wait until the host has put the board in an update mode (e.g. after connecting).
    pub async fn wait_for_update_mode(&self, timeout: Duration) -> anyhow::Result<UpdateMode> {
        let deadline = Instant::now() + timeout;
        loop {
            let mode = self.snapshot().await?.mode;
            if mode.sends_fields() {
                return Ok(mode);
            }
            anyhow::ensure!(
                Instant::now() < deadline,
                "no host put the simulated board in an update mode within {timeout:?}"
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

impl Drop for SimHandle {
    fn drop(&mut self) {
        let (reply, _) = oneshot::channel();
        let _ = self.tx.send(Request::Shutdown(reply));
    }
}

/// One plugged-in pty: the master's read half, a writer task for the other half, and the
/// slave kept open so the master never reads EIO while the daemon is away.
pub(crate) struct Port {
    pub(crate) reader: ReadHalf<SerialStream>,
    pub(crate) writer: mpsc::Sender<Vec<u8>>,
    writer_task: tokio::task::JoinHandle<WriteHalf<SerialStream>>,
    slave: SerialStream,
    pub(crate) slave_path: PathBuf,
}

impl Port {
    /// Close the pty after what was already sent has reached the host (or a short grace
    /// period passed): bytes the board sent before the plug was pulled are not lost.
    pub(crate) async fn close(self) {
        let Port {
            reader,
            writer,
            writer_task,
            slave,
            ..
        } = self;
        drop(writer);
        let grace = Instant::now() + UNPLUG_GRACE;
        let write_half = tokio::time::timeout_at(grace, writer_task).await;
        wait_until_read(&slave, grace).await;
        drop((reader, write_half, slave));
    }

    pub(crate) fn open(link: Option<&Path>) -> anyhow::Result<Port> {
        let (master, slave) = SerialStream::pair().context("cannot create a pseudo-terminal")?;
        let slave_path = PathBuf::from(
            slave
                .name()
                .context("the pseudo-terminal has no slave device name")?,
        );
        if let Some(link) = link {
            make_link(&slave_path, link)?;
        }
        let (reader, mut write_half) = tokio::io::split(master);
        // A separate writer so a host that stops reading never stalls the board itself.
        let (writer, mut rx) = mpsc::channel::<Vec<u8>>(WRITE_QUEUE_CHUNKS);
        let writer_task = tokio::spawn(async move {
            while let Some(bytes) = rx.recv().await {
                if let Err(e) = write_half.write_all(&bytes).await {
                    tracing::debug!("simulated board: write to pty failed: {e}");
                    break;
                }
            }
            write_half
        });
        tracing::info!(slave = %slave_path.display(), "simulated board plugged in");
        Ok(Port {
            reader,
            writer,
            writer_task,
            slave,
            slave_path,
        })
    }
}

/// Wait until the host has read everything written to the pty (its slave input queue stays
/// empty), or until `deadline`. The kernel moves written bytes into that queue
/// asynchronously, so "empty" only counts once it has held for a few checks in a row.
pub async fn wait_until_read(slave: &SerialStream, deadline: Instant) {
    let mut empty_checks = 0;
    while empty_checks < 5 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(4)).await;
        if slave.bytes_to_read().unwrap_or(0) == 0 {
            empty_checks += 1;
        } else {
            empty_checks = 0;
        }
    }
}

/// Point `link` at `target`, replacing any old link atomically.
pub fn make_link(target: &Path, link: &Path) -> anyhow::Result<()> {
    let mut tmp = link.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(target, &tmp)
        .with_context(|| format!("cannot create symlink {}", tmp.display()))?;
    std::fs::rename(&tmp, link)
        .with_context(|| format!("cannot move symlink into place at {}", link.display()))?;
    Ok(())
}

/// Remove `link` if it is a symlink (never a real file someone put there).
pub fn remove_link(link: &Path) {
    if std::fs::symlink_metadata(link).is_ok_and(|m| m.file_type().is_symlink()) {
        let _ = std::fs::remove_file(link);
    }
}

enum Wake {
    Read(std::io::Result<usize>),
    Request(Option<Request>),
    Timer,
}

struct Driver {
    tap: Option<mpsc::UnboundedSender<(u64, Vec<u8>)>>,
    board: VirtualBoard,
    time: TimeBase,
    link: Option<PathBuf>,
    port: Option<Port>,
    slave_path: Arc<Mutex<PathBuf>>,
    dropped_bytes: u64,
}

impl Driver {
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Request>) {
        let mut buf = [0u8; 256];
        loop {
            self.flush();
            let now = self.time.now();
            let wake = self.board.next_deadline(now).map(|t| {
                // Stepped time: only what is already due wakes the loop (at once).
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
                Wake::Read(Ok(0)) => {
                    // End of file cannot happen while the slave is held open; do not spin.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Wake::Read(Ok(n)) => {
                    let now = self.time.now();
                    self.board.receive(&buf[..n], now);
                }
                Wake::Read(Err(e)) => {
                    // Cannot happen while the slave is held open; do not spin on it.
                    tracing::warn!("simulated board: pty read failed: {e}");
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
        tracing::info!("simulated board stopped");
    }

    /// Returns false when the driver should stop.
    async fn handle(&mut self, request: Request) -> bool {
        let now = self.time.now();
        match request {
            Request::Act(action, reply) => {
                self.apply(action, now);
                // Field updates of this action go out before the caller continues.
                self.flush();
                let _ = reply.send(now);
            }
            Request::Advance(ms, reply) => {
                if let TimeBase::Stepped(clock) = self.time.clone() {
                    let target = now.saturating_add(ms);
                    let mut at = now;
                    // Visit every deadline on the way so each message leaves at its own time.
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
                let _ = reply.send(());
            }
            Request::Snapshot(reply) => {
                let _ = reply.send(Snapshot {
                    now_ms: now,
                    plugged: self.port.is_some(),
                    mode: self.board.mode(),
                    placement: self.board.placement(),
                    clock: self.board.clock_reading(now),
                    display_text: self.board.display_text().map(str::to_owned),
                    stats: self.board.stats(),
                    dropped_bytes: self.dropped_bytes,
                });
            }
            Request::Unplug(reply) => {
                if let Some(port) = self.port.take() {
                    if let Some(link) = &self.link {
                        remove_link(link);
                    }
                    port.close().await;
                    if self.board.on_battery() {
                        // A Bluetooth link drops; the board keeps its power and its log.
                        self.board.link_lost();
                        tracing::info!("simulated board's link dropped (on battery)");
                    } else {
                        // No USB, no power: the board logs nothing until it is plugged back in.
                        self.board.power_off(now);
                        tracing::info!("simulated board unplugged");
                    }
                }
                let _ = reply.send(Ok(()));
            }
            Request::Replug(reply) => {
                let result = if self.port.is_some() {
                    Ok(())
                } else {
                    Port::open(self.link.as_deref()).map(|port| {
                        if let Ok(mut p) = self.slave_path.lock() {
                            *p = port.slave_path.clone();
                        }
                        if self.board.powered() {
                            // A Bluetooth link comes back: the board never lost its power.
                            self.board.link_lost();
                        } else {
                            self.board.power_cycle(now);
                        }
                        self.port = Some(port);
                    })
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

    fn apply(&mut self, action: Action, now: u64) {
        match action {
            Action::Lift(square) => self.board.lift(square, now),
            Action::Place(square, piece) => self.board.place(square, piece, now),
            Action::PressLever(side) => self.board.press_lever(side, now),
            Action::StartStop => self.board.clock_mut().toggle_running(now),
            Action::ClockButton(button) => self.board.press_button(button, now),
            Action::SetPosition(placement) => self.board.set_position(&placement, now),
            Action::SetClock(setup) => self.board.set_clock(setup, now),
            Action::SetTimeControl(control) => self.board.set_time_control(control, now),
            Action::GarbleClockFrame(mask) => self.board.send_garbled_clock_frame(mask, now),
            Action::SetBattery(battery) => self.board.set_battery(battery, now),
        }
    }

    /// Hand everything due to the writer; while unplugged the bytes go nowhere.
    fn flush(&mut self) {
        let now = self.time.now();
        let bytes = self.board.poll(now);
        if bytes.is_empty() {
            return;
        }
        match &self.port {
            Some(port) => {
                let len = bytes.len() as u64;
                let copy = self.tap.as_ref().map(|tap| (tap, bytes.clone()));
                if port.writer.try_send(bytes).is_err() {
                    self.dropped_bytes += len;
                } else if let Some((tap, bytes)) = copy {
                    let _ = tap.send((now, bytes));
                }
            }
            None => self.dropped_bytes += bytes.len() as u64,
        }
    }
}

/// Wall-clock duration of `board_ms` at `speed` (saturating instead of panicking).
pub(crate) fn wall(board_ms: f64, speed: f64) -> Duration {
    Duration::try_from_secs_f64(board_ms / 1000.0 / speed).unwrap_or(Duration::MAX)
}

pub(crate) fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(86_400)
}

pub(crate) async fn sleep_until(wake: Option<Instant>) {
    match wake {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
