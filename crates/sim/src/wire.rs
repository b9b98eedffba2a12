//! The pty side every simulated device shares: a pseudo-terminal behind an optional stable
//! link, board time (scaled or stepped), a tap of what was written, the one task that owns a
//! device and its pty, and the handle that talks to that task.
//!
//! A device (`Device`: the DGT board with its clock, the Millennium board) is pure: it takes
//! the host's bytes and its physical actions at a board time and says what it writes when.
//! `spawn` puts it behind a pty and returns a `Control`; unplugging closes the pty and
//! removes the link (as the device node of a real USB board disappears), replugging puts a
//! fresh pty behind the same path.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context as _;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _, ReadHalf, WriteHalf};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_serial::{SerialPort as _, SerialStream};

/// A simulated device as the pty task drives it.
pub(crate) trait Device: Send + 'static {
    /// A physical action on the device.
    type Action: Send + 'static;
    /// The device's state at one moment, as a test reads it.
    type Snapshot: Send + 'static;
    /// How the logs name it.
    const NAME: &'static str;

    /// Take the host's bytes.
    fn receive(&mut self, bytes: &[u8], now: u64);
    /// Everything due to be written by `now`.
    fn poll(&mut self, now: u64) -> Vec<u8>;
    /// When the device next has something to write.
    fn next_deadline(&mut self, now: u64) -> Option<u64>;
    fn act(&mut self, action: Self::Action, now: u64);
    fn snapshot(&mut self, now: u64, plugged: bool, dropped_bytes: u64) -> Self::Snapshot;
    /// The pty closed: the device loses its power (USB) or only its link (on a battery).
    fn unplugged(&mut self, now: u64);
    /// A new pty is behind the link.
    fn replugged(&mut self, now: u64);
}

/// A question about the device, answered by the task that owns it.
type Inspect<D> = Box<dyn FnOnce(&D) + Send>;

enum Request<D: Device> {
    Advance(u64, oneshot::Sender<()>),
    Act(D::Action, oneshot::Sender<u64>),
    Snapshot(oneshot::Sender<D::Snapshot>),
    Inspect(Inspect<D>),
    Unplug(oneshot::Sender<()>),
    Replug(oneshot::Sender<anyhow::Result<()>>),
    Shutdown(oneshot::Sender<()>),
}

/// Start `device` on a new pty (a symlink at `link` if given), its time `speed` times the
/// wall clock (`f64::INFINITY`: stepped, only through [`Control::sleep`]). Needs a tokio
/// runtime with I/O and time enabled.
pub(crate) fn spawn<D: Device>(
    device: D,
    link: Option<PathBuf>,
    speed: f64,
    tap: bool,
) -> anyhow::Result<Control<D>> {
    anyhow::ensure!(
        speed > 0.0,
        "simulator speed must be a positive number, got {speed}"
    );
    let port = Port::open(link.as_deref())?;
    let slave_path = Arc::new(Mutex::new(port.slave_path.clone()));
    let time = if speed.is_finite() {
        TimeBase::Scaled {
            start: Instant::now(),
            speed,
        }
    } else {
        TimeBase::Stepped(Arc::new(AtomicU64::new(0)))
    };
    let (tap, tap_rx) = if tap {
        let (t, r) = mpsc::unbounded_channel();
        (Some(t), Some(r))
    } else {
        (None, None)
    };
    let (tx, rx) = mpsc::unbounded_channel();
    let task = Task {
        device,
        time: time.clone(),
        link: link.clone(),
        port: Some(port),
        slave_path: slave_path.clone(),
        tap,
        dropped_bytes: 0,
    };
    let task = tokio::spawn(task.run(rx));
    Ok(Control {
        tx,
        link,
        slave_path,
        time,
        speed,
        tap: Mutex::new(tap_rx),
        task: Mutex::new(Some(task)),
    })
}

/// Control of a running simulated device. Dropping it stops the simulator.
pub(crate) struct Control<D: Device> {
    tx: mpsc::UnboundedSender<Request<D>>,
    link: Option<PathBuf>,
    slave_path: Arc<Mutex<PathBuf>>,
    time: TimeBase,
    speed: f64,
    tap: Mutex<Option<TapReceiver>>,
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

fn take<T>(m: &Mutex<Option<T>>) -> Option<T> {
    match m.lock() {
        Ok(mut v) => v.take(),
        Err(poisoned) => poisoned.into_inner().take(),
    }
}

impl<D: Device> Control<D> {
    /// The path a host should open: the link if one was asked for, else the current slave
    /// device (which changes on every replug).
    pub(crate) fn path(&self) -> PathBuf {
        match &self.link {
            Some(link) => link.clone(),
            None => self.slave_path(),
        }
    }

    /// The current slave device (`/dev/pts/N`).
    pub(crate) fn slave_path(&self) -> PathBuf {
        match self.slave_path.lock() {
            Ok(p) => p.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    pub(crate) fn speed(&self) -> f64 {
        self.speed
    }

    /// Board time now, ms since the simulator started.
    pub(crate) fn now(&self) -> u64 {
        self.time.now()
    }

    /// Every chunk written to the pty with its board time (with the `tap` option; `None`
    /// after the first call).
    pub(crate) fn take_tap(&self) -> Option<TapReceiver> {
        take(&self.tap)
    }

    async fn call<T>(
        &self,
        make: impl FnOnce(oneshot::Sender<T>) -> Request<D>,
    ) -> anyhow::Result<T> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(make(reply))
            .map_err(|_| anyhow::anyhow!("the simulator has stopped"))?;
        rx.await
            .map_err(|_| anyhow::anyhow!("the simulator stopped before answering"))
    }

    /// Wait `board_ms` of board time: `board_ms / speed` on the wall clock, or, with stepped
    /// time, advance the board's time at once (everything due on the way is sent in order).
    pub(crate) async fn sleep(&self, board_ms: u64) {
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
    pub(crate) async fn act(&self, action: D::Action) -> anyhow::Result<u64> {
        self.call(|r| Request::Act(action, r)).await
    }

    pub(crate) async fn snapshot(&self) -> anyhow::Result<D::Snapshot> {
        self.call(Request::Snapshot).await
    }

    /// Ask the device something its snapshot does not carry.
    pub(crate) async fn inspect<T: Send + 'static>(
        &self,
        ask: impl FnOnce(&D) -> T + Send + 'static,
    ) -> anyhow::Result<T> {
        self.call(|reply| {
            Request::Inspect(Box::new(move |device: &D| {
                let _ = reply.send(ask(device));
            }))
        })
        .await
    }

    /// Pull the plug: the pty closes (the host reads end-of-file) and the link goes away.
    pub(crate) async fn unplug(&self) -> anyhow::Result<()> {
        self.call(Request::Unplug).await
    }

    /// Plug back in: a new pty behind the same link.
    pub(crate) async fn replug(&self) -> anyhow::Result<()> {
        self.call(Request::Replug).await?
    }

    /// Stop the simulator, close the pty and remove the link.
    pub(crate) async fn shutdown(&self) {
        let _ = self.call(Request::Shutdown).await;
        if let Some(task) = take(&self.task) {
            let _ = task.await;
        }
    }
}

impl<D: Device> Drop for Control<D> {
    fn drop(&mut self) {
        let (reply, _) = oneshot::channel();
        let _ = self.tx.send(Request::Shutdown(reply));
    }
}

/// The one task that owns a device and its pty.
struct Task<D: Device> {
    device: D,
    time: TimeBase,
    link: Option<PathBuf>,
    port: Option<Port>,
    slave_path: Arc<Mutex<PathBuf>>,
    tap: Option<mpsc::UnboundedSender<(u64, Vec<u8>)>>,
    dropped_bytes: u64,
}

enum Wake<D: Device> {
    Read(std::io::Result<usize>),
    Request(Option<Request<D>>),
    Timer,
}

impl<D: Device> Task<D> {
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Request<D>>) {
        let mut buf = [0u8; 512];
        loop {
            self.flush();
            let now = self.time.now();
            let wake = self.device.next_deadline(now).map(|t| {
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
                Wake::Read(Ok(n)) if n > 0 => {
                    let now = self.time.now();
                    self.device.receive(&buf[..n], now);
                }
                Wake::Read(result) => {
                    // Neither end of file nor an error can happen while the slave is held
                    // open; do not spin on them.
                    if let Err(e) = result {
                        tracing::warn!("{}: pty read failed: {e}", D::NAME);
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
        tracing::info!("{} stopped", D::NAME);
    }

    /// Returns false when the task should stop.
    async fn handle(&mut self, request: Request<D>) -> bool {
        let now = self.time.now();
        match request {
            Request::Act(action, reply) => {
                self.device.act(action, now);
                // What this action makes the device say goes out before the caller continues.
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
                let snapshot = self
                    .device
                    .snapshot(now, self.port.is_some(), self.dropped_bytes);
                let _ = reply.send(snapshot);
            }
            Request::Inspect(ask) => ask(&self.device),
            Request::Unplug(reply) => {
                if let Some(port) = self.port.take() {
                    if let Some(link) = &self.link {
                        remove_link(link);
                    }
                    port.close().await;
                    self.device.unplugged(now);
                    tracing::info!("{} unplugged", D::NAME);
                }
                let _ = reply.send(());
            }
            Request::Replug(reply) => {
                let result = if self.port.is_some() {
                    Ok(())
                } else {
                    Port::open(self.link.as_deref()).map(|port| {
                        if let Ok(mut p) = self.slave_path.lock() {
                            *p = port.slave_path.clone();
                        }
                        self.device.replugged(now);
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

    /// Stepped time: visit every deadline up to `now + ms` so each message leaves at its own
    /// time.
    fn advance(&mut self, clock: &AtomicU64, now: u64, ms: u64) {
        let target = now.saturating_add(ms);
        let mut at = now;
        while let Some(next) = self.device.next_deadline(at).filter(|&t| t <= target) {
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

    /// Hand everything due to the writer; while unplugged the bytes go nowhere.
    fn flush(&mut self) {
        let now = self.time.now();
        let bytes = self.device.poll(now);
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

/// Output chunks queued for a host that reads slowly before bytes are dropped (a whole game
/// at stepped speed fits many times over).
const WRITE_QUEUE_CHUNKS: usize = 65_536;

/// How long an unplug waits for the host to read what was sent before the plug was pulled.
const UNPLUG_GRACE: Duration = Duration::from_millis(500);

/// Every chunk the board wrote to the pty, with the board time it was written at.
pub type TapReceiver = mpsc::UnboundedReceiver<(u64, Vec<u8>)>;

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
