//! Harness of the eboardctl end-to-end tests, on top of the shared one (`tests/common`: the
//! private bus, the eboardd binary, parent-death signals, timeouts): the `eboardctl` binary
//! run as a child process, a tmux session for the full-screen view, and a stand-in for the
//! daemon that serves the D-Bus contract (section 2) exactly, so every client behaviour —
//! including each named error — can be driven on demand.
//!
//! A test crate using this module declares `mod common;` beside `mod ctl_support;`.

#![allow(dead_code)]

pub mod contract;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::common::{die_with_parent, within};

/// The longest wait for an eboardctl run, its output or a tmux screen: longer than the shared
/// [`crate::common::WAIT`], as each of these starts a fresh client process.
pub const WAIT: Duration = Duration::from_secs(15);

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
    ctl_with(address, args, |_| {}).await
}

/// [`ctl`], `env(cmd)` setting the command's environment first.
pub async fn ctl_with(address: &str, args: &[&str], env: impl FnOnce(&mut Command)) -> Output {
    let mut cmd = Command::new(eboardctl());
    cmd.arg("--bus")
        .arg(address)
        .args(args)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    env(&mut cmd);
    output(cmd, &format!("eboardctl {args:?}")).await
}

/// Runs `cmd` (`what`, for the timeout's message) to completion within [`WAIT`].
pub async fn output(mut cmd: Command, what: &str) -> Output {
    die_with_parent(&mut cmd);
    let out = within(WAIT, what, cmd.output())
        .await
        .unwrap_or_else(|e| panic!("run {what}: {e}"));
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
        Watch::spawn_with(address, args, |_| {})
    }

    /// [`Watch::spawn`], `env(cmd)` setting the command's environment first.
    pub fn spawn_with(address: &str, args: &[&str], env: impl FnOnce(&mut Command)) -> Watch {
        let mut cmd = Command::new(eboardctl());
        cmd.arg("--bus")
            .arg(address)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        env(&mut cmd);
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
        self.until_within(WAIT, what, pred).await
    }

    /// [`Watch::until`], waiting at most `limit`.
    pub async fn until_within(
        &mut self,
        limit: Duration,
        what: &str,
        pred: impl Fn(&str) -> bool,
    ) -> String {
        let seen = &mut self.seen;
        let lines = &mut self.lines;
        within(limit, what, async {
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

/// Whether tmux is installed (the full-screen tests need a real terminal); under CI a missing
/// tmux fails the test.
pub fn require_tmux() -> bool {
    crate::common::require::require_tool("tmux", "tmux")
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
