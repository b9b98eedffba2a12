//! The processes under measurement: a private `dbus-daemon`, the `eboardd` binary, and the
//! figures read from `/proc` about them (CPU time, peak and current memory).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::Context as _;
use tokio::process::{Child, Command};

/// The helpers' start-up, shared with the end-to-end tests.
#[allow(dead_code)] // not every benchmark starts a broker
#[path = "../../tests/common/spawn.rs"]
pub mod spawn;

pub use spawn::die_with_parent;

/// A private message bus, killed when dropped.
pub struct Bus {
    pub address: String,
    child: Child,
}

impl Bus {
    pub async fn start(dir: &Path) -> anyhow::Result<Bus> {
        let (child, address) = spawn::start_bus(dir).await?;
        Ok(Bus { address, child })
    }

    pub fn pid(&self) -> Option<i32> {
        self.child.id().map(|p| p as i32)
    }
}

/// The daemon under test, killed when dropped.
pub struct Daemon {
    child: Child,
    pub log: PathBuf,
}

impl Daemon {
    /// `eboardd --bus ADDRESS --state-dir DIR/state --log-format text --port …`, logging to
    /// `DIR/eboardd.log` at the daemon's default level.
    pub fn spawn(
        binary: &Path,
        bus: &Bus,
        dir: &Path,
        ports: &[PathBuf],
    ) -> anyhow::Result<Daemon> {
        Self::start(binary, bus, dir, |cmd| {
            for port in ports {
                cmd.arg("--port").arg(port);
            }
        })
    }

    /// `eboardd` serving the boards of the configuration file `config` (not `--port`).
    pub fn spawn_config(
        binary: &Path,
        bus: &Bus,
        dir: &Path,
        config: &Path,
    ) -> anyhow::Result<Daemon> {
        Self::start(binary, bus, dir, |cmd| {
            cmd.arg("--config").arg(config);
        })
    }

    /// The command line both spawns share; `boards(cmd)` adds where the boards come from.
    fn start(
        binary: &Path,
        bus: &Bus,
        dir: &Path,
        boards: impl FnOnce(&mut Command),
    ) -> anyhow::Result<Daemon> {
        let log = dir.join("eboardd.log");
        let mut cmd = Command::new(binary);
        cmd.arg("--bus")
            .arg(&bus.address)
            .arg("--state-dir")
            .arg(dir.join("state"))
            .arg("--log-format")
            .arg("text");
        boards(&mut cmd);
        let file = std::fs::File::create(&log)
            .with_context(|| format!("cannot create {}", log.display()))?;
        cmd.env_remove("RUST_LOG")
            .env_remove("NOTIFY_SOCKET")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(file)
            .kill_on_drop(true);
        die_with_parent(&mut cmd);
        let child = cmd
            .spawn()
            .with_context(|| format!("cannot start {}", binary.display()))?;
        Ok(Daemon { child, log })
    }

    pub fn pid(&self) -> anyhow::Result<i32> {
        self.child
            .id()
            .map(|p| p as i32)
            .context("eboardd has already exited")
    }

    /// Whether the process has exited already, and how.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// SIGTERM, then wait for the exit: returns the exit status and how long it took.
    pub async fn terminate(&mut self) -> anyhow::Result<(std::process::ExitStatus, Duration)> {
        let start = std::time::Instant::now();
        let status = spawn::terminate(&mut self.child, "eboardd", Duration::from_secs(10)).await?;
        Ok((status, start.elapsed()))
    }

    /// Lines of the daemon's log at WARN or ERROR level.
    pub fn complaints(&self) -> Vec<String> {
        complaints_in(&self.log)
    }
}

/// Lines of a daemon's log at WARN or ERROR level.
pub fn complaints_in(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains(" WARN ") || l.contains(" ERROR "))
        .map(str::to_owned)
        .collect()
}

/// Wait until someone owns `name` on the bus of `conn`.
pub async fn wait_for_name(
    conn: &zbus::Connection,
    name: &str,
    daemon: &mut Daemon,
    limit: Duration,
) -> anyhow::Result<()> {
    let dbus = zbus::fdo::DBusProxy::new(conn).await?;
    let deadline = tokio::time::Instant::now() + limit;
    let bus_name = zbus::names::BusName::try_from(name)?;
    loop {
        if dbus.name_has_owner(bus_name.clone()).await? {
            return Ok(());
        }
        if let Some(status) = daemon.exited() {
            anyhow::bail!(
                "eboardd exited ({status}) before owning {name}; see {}",
                daemon.log.display()
            );
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "eboardd did not own {name} within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Clock ticks per second of `/proc/<pid>/stat` times.
pub fn clock_ticks_per_second() -> u64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .filter(|&t| t > 0)
        // USER_HZ is 100 on every mainstream Linux architecture.
        .unwrap_or(100)
}

/// User + system CPU time of a process so far, in clock ticks.
pub fn cpu_ticks(pid: i32) -> anyhow::Result<u64> {
    cpu_ticks_at(&format!("/proc/{pid}/stat"))
}

fn cpu_ticks_at(path: &str) -> anyhow::Result<u64> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {path}"))?;
    // The command name (field 2) may contain spaces: fields are counted after its ')'.
    let rest = text
        .rsplit_once(')')
        .map(|(_, r)| r)
        .with_context(|| format!("{path} has no command field"))?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After ')': field 3 (state) is index 0, so utime (14) is 11 and stime (15) is 12.
    let field = |i: usize| -> anyhow::Result<u64> {
        fields
            .get(i)
            .with_context(|| format!("{path} is too short"))?
            .parse()
            .with_context(|| format!("{path}: field {} is not a number", i + 3))
    };
    Ok(field(11)? + field(12)?)
}

/// utime + stime of the threads of `pid` named `name` (`/proc/<pid>/task/*/comm`), in clock
/// ticks; 0 when there is none.
pub fn thread_cpu_ticks(pid: i32, name: &str) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .flatten()
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim_end() == name)
        })
        .filter_map(|t| {
            let tid: i32 = t.file_name().to_str()?.parse().ok()?;
            cpu_ticks_at(&format!("/proc/{pid}/task/{tid}/stat")).ok()
        })
        .sum()
}

/// A `kB` figure (e.g. `VmHWM`, `VmRSS`) or count (`Threads`) from `/proc/<pid>/status`.
pub fn status_value(pid: i32, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}
