//! Harness of the eboardctl end-to-end tests: a private `dbus-daemon` per test, the
//! `eboardctl` binary run as a child process, a tmux session for the full-screen view, and a
//! stand-in for the daemon that serves the D-Bus contract (section 2) exactly, so every
//! client behaviour — including each named error — can be driven on demand.
//!
//! Every child is killed when its handle drops and gets a parent-death signal; every wait has
//! a timeout.

#![allow(dead_code)]

pub mod contract;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// The longest wait for anything that should happen promptly.
pub const WAIT: Duration = Duration::from_secs(15);

/// Gives a child a parent-death signal, so it dies with the test even on a panic.
pub fn die_with_parent(cmd: &mut Command) {
    // SAFETY: only an async-signal-safe syscall runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
                .map_err(std::io::Error::from)
        });
    }
}

/// Awaits `fut`, panicking with `what` if it takes longer than `limit`.
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
    _child: Child,
}

impl Bus {
    pub async fn start(dir: &Path) -> Bus {
        let socket_dir = dir.join("bus");
        std::fs::create_dir_all(&socket_dir).expect("bus dir");
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
        let mut child = cmd.spawn().expect("dbus-daemon must be installed");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut lines = BufReader::new(stdout).lines();
        let address = within(WAIT, "dbus-daemon's address", lines.next_line())
            .await
            .expect("reading dbus-daemon's stdout")
            .expect("dbus-daemon printed no address");
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Bus {
            address,
            _child: child,
        }
    }
}

/// What one eboardctl run printed, and how it ended.
#[derive(Debug)]
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// The binary under test.
pub fn eboardctl() -> &'static str {
    env!("CARGO_BIN_EXE_eboardctl")
}

/// Runs `eboardctl --bus <address> args…` to completion.
pub async fn ctl(address: &str, args: &[&str]) -> Output {
    let mut cmd = Command::new(eboardctl());
    cmd.arg("--bus")
        .arg(address)
        .args(args)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    die_with_parent(&mut cmd);
    let out = within(WAIT, &format!("eboardctl {args:?}"), cmd.output())
        .await
        .expect("run eboardctl");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A long-running `eboardctl … watch` whose stdout is read line by line.
pub struct Watch {
    child: Child,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    /// Every line read so far.
    pub seen: Vec<String>,
}

impl Watch {
    pub fn spawn(address: &str, args: &[&str]) -> Watch {
        let mut cmd = Command::new(eboardctl());
        cmd.arg("--bus")
            .arg(address)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        die_with_parent(&mut cmd);
        let mut child = cmd.spawn().expect("spawn eboardctl watch");
        let stdout = child.stdout.take().expect("piped stdout");
        Watch {
            child,
            lines: BufReader::new(stdout).lines(),
            seen: Vec::new(),
        }
    }

    /// Reads lines until one satisfies `pred`; returns it.
    pub async fn until(&mut self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let seen = &mut self.seen;
        let lines = &mut self.lines;
        within(WAIT, what, async {
            loop {
                let line = lines
                    .next_line()
                    .await
                    .expect("reading watch output")
                    .unwrap_or_else(|| panic!("watch ended before {what}; saw {seen:#?}"));
                seen.push(line.clone());
                if pred(&line) {
                    return line;
                }
            }
        })
        .await
    }

    /// Sends SIGINT and returns the exit code.
    pub async fn interrupt(mut self) -> i32 {
        if let Some(pid) = self.child.id() {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGINT,
            );
        }
        let status = within(WAIT, "watch to exit", self.child.wait())
            .await
            .expect("wait for watch");
        status.code().unwrap_or(-1)
    }
}

/// Whether tmux is installed (the full-screen test needs a real terminal).
pub fn have_tmux() -> bool {
    std::process::Command::new("tmux")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// A detached tmux server on its own socket running one command in a fixed-size window.
pub struct Tmux {
    socket: PathBuf,
}

impl Tmux {
    pub async fn start(dir: &Path, cols: u16, rows: u16, command: &[String]) -> Tmux {
        let socket = dir.join("tmux.sock");
        let tmux = Tmux { socket };
        let mut args: Vec<String> = vec![
            "new-session".into(),
            "-d".into(),
            "-s".into(),
            "t".into(),
            "-x".into(),
            cols.to_string(),
            "-y".into(),
            rows.to_string(),
        ];
        // One argument string: tmux hands it to a shell; quote each word.
        let quoted: Vec<String> = command
            .iter()
            .map(|w| format!("'{}'", w.replace('\'', "'\\''")))
            .collect();
        args.push(quoted.join(" "));
        let out = tmux.run(&args).await;
        assert!(out.status.success(), "tmux new-session failed: {out:?}");
        tmux
    }

    async fn run(&self, args: &[String]) -> std::process::Output {
        let mut cmd = Command::new("tmux");
        cmd.arg("-S")
            .arg(&self.socket)
            .args(args)
            .env("TERM", "xterm-256color")
            .stdin(Stdio::null())
            .kill_on_drop(true);
        within(WAIT, "tmux", cmd.output()).await.expect("run tmux")
    }

    /// The visible screen; with `escapes`, including colour escapes.
    pub async fn capture(&self, escapes: bool) -> String {
        let mut args: Vec<String> =
            vec!["capture-pane".into(), "-p".into(), "-t".into(), "t".into()];
        if escapes {
            args.push("-e".into());
        }
        String::from_utf8_lossy(&self.run(&args).await.stdout).into_owned()
    }

    /// Polls the screen until `pred` holds; returns that screen.
    pub async fn until(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let screen = self.capture(false).await;
            if pred(&screen) {
                return screen;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "timed out waiting for {what}; screen:\n{screen}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    pub async fn send_keys(&self, keys: &str) {
        let args: Vec<String> = vec!["send-keys".into(), "-t".into(), "t".into(), keys.into()];
        self.run(&args).await;
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// The eboardd binary under test, on a private bus, killed when dropped.
pub struct Eboardd {
    child: Child,
    pub log: PathBuf,
}

impl Eboardd {
    /// Starts `eboardd --bus <bus> --state-dir <dir>/state args…` and waits until it owns its
    /// name.
    pub async fn start(bus: &Bus, dir: &Path, args: &[&str]) -> Eboardd {
        let log = dir.join("eboardd.log");
        let file = std::fs::File::create(&log).expect("daemon log file");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_eboardd"));
        cmd.arg("--bus")
            .arg(&bus.address)
            .arg("--state-dir")
            .arg(dir.join("state"))
            .arg("--log-format")
            .arg("text")
            .args(args)
            .env_remove("NOTIFY_SOCKET")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(file)
            .kill_on_drop(true);
        die_with_parent(&mut cmd);
        let mut daemon = Eboardd {
            child: cmd.spawn().expect("spawn eboardd"),
            log,
        };
        let conn = within(
            WAIT,
            "a client connection",
            zbus::connection::Builder::address(bus.address.as_str()).build(),
        )
        .await
        .expect("client connection");
        let dbus = zbus::fdo::DBusProxy::new(&conn).await.expect("bus proxy");
        let name = zbus::names::BusName::try_from(contract::BUS_NAME).expect("bus name");
        let deadline = tokio::time::Instant::now() + WAIT;
        while !dbus.name_has_owner(name.clone()).await.unwrap_or(false) {
            if let Ok(Some(status)) = daemon.child.try_wait() {
                panic!(
                    "eboardd exited ({status}) before owning its name:\n{}",
                    daemon.log()
                );
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "eboardd did not own its name in time:\n{}",
                daemon.log()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        daemon
    }

    /// What the daemon logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}
