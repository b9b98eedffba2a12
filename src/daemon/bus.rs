//! Getting onto a bus: the session, system or an explicit address, and a private
//! `dbus-daemon` for the demo when no session bus is reachable.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, bail};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use zbus::Connection;

use super::settings::BusChoice;

/// Connect to the chosen bus. Failing to reach the session bus says how to get one.
pub async fn connect(bus: &BusChoice) -> anyhow::Result<Connection> {
    match bus.builder().build().await {
        Ok(conn) => Ok(conn),
        Err(e) => match bus.connect_hint() {
            Some(hint) => bail!("cannot connect to the {bus}: {e}; {hint}"),
            None => Err(e).with_context(|| format!("cannot connect to the {bus}")),
        },
    }
}

/// A `dbus-daemon` started for this process; killed (and its directory removed) on drop.
pub struct PrivateBus {
    pub address: String,
    child: Child,
    dir: PathBuf,
}

impl PrivateBus {
    /// Start `dbus-daemon --session` listening in a fresh directory under `parent`.
    pub async fn start(parent: &Path) -> anyhow::Result<PrivateBus> {
        let dir = parent.join(format!("eboardd-bus-{}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let mut child = Command::new("dbus-daemon")
            .arg("--session")
            .arg("--nofork")
            .arg("--print-address=1")
            .arg(format!("--address=unix:dir={}", dir.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .context("cannot start dbus-daemon (is the `dbus-daemon` program installed?)")?;
        let stdout = child.stdout.take().context("dbus-daemon has no stdout")?;
        let mut line = String::new();
        let mut stdout = BufReader::new(stdout);
        let read = stdout.read_line(&mut line);
        match tokio::time::timeout(Duration::from_secs(5), read).await {
            Ok(Ok(n)) if n > 0 => {}
            Ok(Ok(_)) => bail!("dbus-daemon exited without printing its address"),
            Ok(Err(e)) => bail!("cannot read dbus-daemon's address: {e}"),
            Err(_) => bail!("dbus-daemon did not print its address within 5 s"),
        }
        Ok(PrivateBus {
            address: line.trim().to_owned(),
            child,
            dir,
        })
    }
}

impl Drop for PrivateBus {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
