//! Shared harness of the end-to-end tests: a private `dbus-daemon` per test, the `eboardd`
//! binary under test, fake boards on pseudo-terminals and D-Bus client proxies.
//!
//! Every child process is killed when its handle drops and also gets a parent-death signal,
//! so a panicking test leaves nothing behind. Every wait has a timeout.

#![allow(dead_code)]

pub mod board;
pub mod bridge;
pub mod disk;
pub mod events;
pub mod proxies;
pub mod require;
pub mod rig;
pub mod sim;
pub mod spawn;
pub mod sysbus;
pub mod xml;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::process::{Child, Command};

pub use spawn::die_with_parent;

/// The default wait for anything the daemon should do promptly.
pub const WAIT: Duration = Duration::from_secs(10);

/// Await `fut`, panicking with `what` if it takes longer than `limit`.
pub async fn within<T>(
    limit: Duration,
    what: &str,
    fut: impl std::future::Future<Output = T>,
) -> T {
    match tokio::time::timeout(limit, fut).await {
        Ok(v) => v,
        Err(_) => panic!("timed out after {limit:?} waiting for {what}"),
    }
}

/// A private message bus, gone when dropped.
pub struct Bus {
    pub address: String,
    child: Child,
}

impl Bus {
    pub async fn start(dir: &Path) -> Bus {
        let (child, address) = spawn::start_bus(dir)
            .await
            .unwrap_or_else(|e| panic!("{e:#}"));
        Bus { address, child }
    }

    /// A client connection to this bus.
    pub async fn client(&self) -> zbus::Connection {
        within(
            WAIT,
            "a client connection",
            zbus::connection::Builder::address(self.address.as_str()).build(),
        )
        .await
        .expect("client connection")
    }
}

/// The `eboardd` binary under test.
pub struct Daemon {
    child: Child,
    pub stderr_path: PathBuf,
}

/// The path of the binary under test.
pub fn eboardd() -> &'static str {
    env!("CARGO_BIN_EXE_eboardd")
}

impl Daemon {
    /// Start `eboardd --bus <bus> --state-dir <dir>/state` plus `args`.
    pub fn spawn(bus: &Bus, dir: &Path, args: &[&str]) -> Daemon {
        Self::spawn_env(bus, dir, args, &[])
    }

    /// [`Daemon::spawn`] with extra environment variables.
    pub fn spawn_env(bus: &Bus, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Daemon {
        let state = dir.join("state");
        let mut full: Vec<String> = vec![
            "--bus".into(),
            bus.address.clone(),
            "--state-dir".into(),
            state.display().to_string(),
            "--log-format".into(),
            "text".into(),
        ];
        full.extend(args.iter().map(|s| s.to_string()));
        Self::spawn_raw_env(dir, &full, env)
    }

    /// Start the binary with exactly these arguments.
    pub fn spawn_raw(dir: &Path, args: &[String]) -> Daemon {
        Self::spawn_raw_env(dir, args, &[])
    }

    fn spawn_raw_env(dir: &Path, args: &[String], env: &[(&str, &str)]) -> Daemon {
        let stderr_path = dir.join(format!("eboardd-{}.log", unique()));
        let log = std::fs::File::create(&stderr_path).unwrap();
        let mut cmd = Command::new(eboardd());
        cmd.args(args)
            .env("RUST_LOG", "eboardd=debug,info")
            .env_remove("NOTIFY_SOCKET")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .kill_on_drop(true);
        die_with_parent(&mut cmd);
        let child = cmd.spawn().expect("spawn eboardd");
        Daemon { child, stderr_path }
    }

    pub fn pid(&self) -> i32 {
        self.child.id().expect("daemon still running") as i32
    }

    pub fn signal(&self, sig: nix::sys::signal::Signal) {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.pid()), sig).unwrap();
    }

    /// `kill -9`, then the wait for the process to be gone by that signal.
    pub async fn kill9(&mut self) {
        self.signal(nix::sys::signal::Signal::SIGKILL);
        assert_eq!(code(self.wait(WAIT).await), 128 + 9);
    }

    /// Wait for the process to exit.
    pub async fn wait(&mut self, limit: Duration) -> ExitStatus {
        within(limit, "eboardd to exit", self.child.wait())
            .await
            .unwrap()
    }

    /// Whether the process has exited already (without waiting).
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().unwrap()
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }

    /// Wait until the daemon owns its name on `conn`'s bus.
    pub async fn wait_for_name(&mut self, conn: &zbus::Connection) {
        let dbus = zbus::fdo::DBusProxy::new(conn).await.unwrap();
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            if dbus
                .name_has_owner("org.eboardd.Bridge1".try_into().unwrap())
                .await
                .unwrap()
            {
                return;
            }
            if let Some(status) = self.exited() {
                panic!(
                    "eboardd exited ({status}) before owning its name:\n{}",
                    self.stderr()
                );
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "eboardd did not own its name in time:\n{}",
                self.stderr()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// A process-unique number for file names.
pub fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// Exit code, or 128 + signal number.
pub fn code(status: ExitStatus) -> i32 {
    status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

/// A bus, a daemon on it with `args`, and a client: the usual start of a test.
pub struct Setup {
    pub dir: tempfile::TempDir,
    pub bus: Bus,
    pub daemon: Daemon,
    pub conn: zbus::Connection,
}

impl Setup {
    pub async fn start(args: &[&str]) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        Self::start_in(dir, args).await
    }

    pub async fn start_in(dir: tempfile::TempDir, args: &[&str]) -> Setup {
        let bus = Bus::start(dir.path()).await;
        let mut daemon = Daemon::spawn(&bus, dir.path(), args);
        let conn = bus.client().await;
        daemon.wait_for_name(&conn).await;
        Setup {
            dir,
            bus,
            daemon,
            conn,
        }
    }
}

/// The next item of a stream (zbus signal and property streams are `Unpin`).
pub async fn next<S>(stream: &mut S) -> Option<S::Item>
where
    S: futures_core::Stream + Unpin,
{
    std::future::poll_fn(|cx| std::pin::Pin::new(&mut *stream).poll_next(cx)).await
}

/// Wait (at most [`WAIT`]) until a property stream shows a value satisfying `pred`; returns it.
/// A property stream yields the current value first, so no change can be missed.
pub async fn wait_property<T, F>(
    stream: &mut zbus::proxy::PropertyStream<'_, T>,
    what: &str,
    pred: F,
) -> T
where
    T: serde::de::DeserializeOwned + zbus::Type + Unpin,
    F: Fn(&T) -> bool,
{
    within(WAIT, what, async {
        loop {
            let changed = next(stream).await.expect("property stream ended");
            let value = changed.get().await.expect("property value");
            if pred(&value) {
                return value;
            }
        }
    })
    .await
}

impl Bus {
    /// Kill the bus (as if the system bus went away).
    pub fn kill(&mut self) {
        let _ = self.child.start_kill();
    }
}

/// The one record file (`--record DIR`) the daemon wrote into `dir`.
pub fn record_file(dir: &Path) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "record"))
        .collect();
    assert_eq!(files.len(), 1, "one record file: {files:?}");
    files.into_iter().next().unwrap()
}

/// The daemon's `Pgn` as a record: without the clock tags (`WhiteClock`, `BlackClock`,
/// `ReferenceTime`), which say how the clock stands now; a decoded capture has no "now".
pub fn record_without_clock_tags(pgn: &str) -> String {
    pgn.lines()
        .filter(|l| {
            !["[WhiteClock ", "[BlackClock ", "[ReferenceTime "]
                .iter()
                .any(|t| l.starts_with(t))
        })
        .map(|l| format!("{l}\n"))
        .collect()
}
