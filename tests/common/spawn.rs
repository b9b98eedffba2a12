//! Starting (and stopping) the real helper processes of the end-to-end tests and of the load benchmarks: a
//! private `dbus-daemon` and a `mosquitto`, each a child that dies with its parent. Written
//! once and included by both (`tests/common` declares it, the benches by `#[path]`), because
//! neither is product code: eboardd's own private bus (`daemon::bus`, the demo's) does not tie
//! its child to the parent or close inherited descriptors, which a harness must.
//!
//! Failures are `anyhow` errors with their cause: a test unwraps them into a panic, a
//! benchmark reports them and exits.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::Context as _;
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, Command};

/// How long a helper may take to say it is ready.
const READY: Duration = Duration::from_secs(30);

/// Give a child a parent-death signal, so it dies with the test even on a panic, and keep
/// it from inheriting the test's other descriptors: a pty master created by the test (fake
/// boards, the simulator) and inherited by the daemon would never hang up on unplug.
pub fn die_with_parent(cmd: &mut Command) {
    // SAFETY: only async-signal-safe syscalls (prctl, fcntl) run between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
                .map_err(std::io::Error::from)?;
            for fd in 3..4096 {
                let flags = nix::libc::fcntl(fd, nix::libc::F_GETFD);
                if flags >= 0 {
                    nix::libc::fcntl(fd, nix::libc::F_SETFD, flags | nix::libc::FD_CLOEXEC);
                }
            }
            Ok(())
        });
    }
}

/// `dbus-daemon --session` listening in `dir/bus`, killed when its handle drops: the child
/// and the address it printed.
pub async fn start_bus(dir: &Path) -> anyhow::Result<(Child, String)> {
    let socket_dir = dir.join("bus");
    std::fs::create_dir_all(&socket_dir)
        .with_context(|| format!("cannot create {}", socket_dir.display()))?;
    let mut cmd = Command::new("dbus-daemon");
    cmd.arg("--session")
        .arg("--nofork")
        .arg("--print-address=1")
        .arg(format!("--address=unix:dir={}", socket_dir.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    die_with_parent(&mut cmd);
    let mut child = cmd
        .spawn()
        .context("cannot start dbus-daemon (Debian package dbus-daemon)")?;
    let stdout = child.stdout.take().context("dbus-daemon has no stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let address = tokio::time::timeout(READY, lines.next_line())
        .await
        .with_context(|| format!("dbus-daemon printed no address in {READY:?}"))??
        .context("dbus-daemon exited before printing its address")?;
    // Keep draining stdout so the bus never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok((child, address))
}

/// The mosquitto binary (Debian puts it in /usr/sbin, which a user's PATH may lack).
fn mosquitto_binary() -> Option<PathBuf> {
    let sbin = PathBuf::from("/usr/sbin/mosquitto");
    if sbin.exists() {
        return Some(sbin);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("mosquitto"))
            .find(|p| p.exists())
    })
}

/// `mosquitto -c conf`, returned once it says it is running (the configuration must log
/// `information` to stderr); every line it logs is appended to `log`. Killed when dropped.
pub async fn start_mosquitto(conf: &Path, log: &Path) -> anyhow::Result<Child> {
    let binary =
        mosquitto_binary().context("mosquitto is not installed (Debian package mosquitto)")?;
    let mut cmd = Command::new(binary);
    cmd.arg("-c")
        .arg(conf)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    die_with_parent(&mut cmd);
    let mut child = cmd.spawn().context("cannot start mosquitto")?;
    let stderr = child.stderr.take().context("mosquitto has no stderr")?;
    let mut lines = BufReader::new(stderr).lines();
    tokio::time::timeout(READY, async {
        while let Some(line) = lines.next_line().await? {
            append(log, &line);
            if line.contains(" running") {
                return anyhow::Ok(());
            }
        }
        anyhow::bail!("mosquitto exited at start; see {}", log.display())
    })
    .await
    .with_context(|| format!("mosquitto did not start in {READY:?}"))??;
    let log = log.to_path_buf();
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            append(&log, &line);
        }
    });
    Ok(child)
}

/// Stops `child` as an operator would — SIGTERM — and waits at most `limit` for its exit.
pub async fn terminate(
    child: &mut Child,
    what: &str,
    limit: Duration,
) -> anyhow::Result<std::process::ExitStatus> {
    let pid = child
        .id()
        .with_context(|| format!("{what} has already exited"))?;
    let pid = nix::unistd::Pid::from_raw(pid as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM)
        .with_context(|| format!("cannot send SIGTERM to {what}"))?;
    tokio::time::timeout(limit, child.wait())
        .await
        .with_context(|| format!("{what} did not exit within {limit:?} of SIGTERM"))?
        .with_context(|| format!("cannot wait for {what}"))
}

fn append(path: &Path, line: &str) {
    use std::io::Write;
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = writeln!(f, "{line}");
    }
}
