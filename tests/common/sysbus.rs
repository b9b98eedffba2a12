//! A private bus run as the system bus is: Debian's deny-by-default `system.conf` policy with
//! the shipped `dbus/org.eboardd.Bridge1.conf` included the way `/usr/share/dbus-1/system.d/`
//! is, the daemon as user `eboardd`, callers as real Unix identities through `setpriv` (the bus
//! decides by the peer's credentials). For tests that need the system bus's policy or its
//! limits (`max_message_size` is 32 MiB there, 1 GB on a session bus); they need root.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The system bus's default `max_message_size` (dbus-daemon's built-in value).
pub const SYSTEM_MAX_MESSAGE: usize = 32 << 20;

/// Debian's `system.conf` default policy listening in `dir`, the shipped policy included from
/// `dir/system.d`, and `max_message_size` when given (else the built-in 32 MiB).
pub fn bus_config(dir: &Path, max_message_size: Option<usize>) -> String {
    let limit = max_message_size
        .map(|n| format!("  <limit name=\"max_message_size\">{n}</limit>\n"))
        .unwrap_or_default();
    format!(
        r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={dir}/bus</listen>
  <auth>EXTERNAL</auth>
{limit}  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus.Introspectable"/>
  </policy>
  <includedir>{dir}/system.d</includedir>
</busconfig>
"#,
        dir = dir.display()
    )
}

/// Kills and reaps a child when dropped.
pub struct Reaped(pub Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A private system-like bus in `dir` (which must exist and be reachable by the parties).
pub struct SystemBus {
    pub address: String,
    _child: Reaped,
}

impl SystemBus {
    pub fn start(dir: &Path, max_message_size: Option<usize>) -> SystemBus {
        let system_d = dir.join("system.d");
        std::fs::create_dir_all(&system_d).expect("system.d");
        let policy = Path::new(env!("CARGO_MANIFEST_DIR")).join("dbus/org.eboardd.Bridge1.conf");
        std::fs::copy(policy, system_d.join("org.eboardd.Bridge1.conf")).expect("copy policy");
        let config = dir.join("system.conf");
        std::fs::write(&config, bus_config(dir, max_message_size)).expect("bus config");
        let mut child = Command::new("dbus-daemon")
            .arg(format!("--config-file={}", config.display()))
            .args(["--nofork", "--print-address"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting dbus-daemon");
        let out = child.stdout.take().expect("stdout is piped");
        let child = Reaped(child);
        let mut address = String::new();
        BufReader::new(out)
            .read_line(&mut address)
            .expect("dbus-daemon printed its address");
        SystemBus {
            address: address.trim().to_owned(),
            _child: child,
        }
    }
}

/// The `eboardd` user and group, created for the test when missing and removed afterwards.
pub struct ServiceUser {
    pub uid: u32,
    pub gid: u32,
    created_user: bool,
    created_group: bool,
}

impl ServiceUser {
    pub fn ensure() -> ServiceUser {
        let created_group = lookup("group", "eboardd").is_none();
        if created_group {
            run("groupadd", &["--system", "eboardd"]);
        }
        let created_user = lookup("passwd", "eboardd").is_none();
        if created_user {
            run(
                "useradd",
                &[
                    "--system",
                    "--gid",
                    "eboardd",
                    "--no-create-home",
                    "--home-dir",
                    "/",
                    "--shell",
                    "/usr/sbin/nologin",
                    "eboardd",
                ],
            );
        }
        ServiceUser {
            uid: lookup("passwd", "eboardd").expect("user eboardd exists"),
            gid: lookup("group", "eboardd").expect("group eboardd exists"),
            created_user,
            created_group,
        }
    }
}

impl Drop for ServiceUser {
    fn drop(&mut self) {
        if self.created_user {
            let _ = Command::new("userdel").arg("eboardd").status();
        }
        if self.created_group && lookup("group", "eboardd").is_some() {
            let _ = Command::new("groupdel").arg("eboardd").status();
        }
    }
}

/// `nobody`/`nogroup`, used numerically (no name lookup).
pub const NOBODY: u32 = 65534;

/// The numeric id of a user or group from `getent`.
pub fn lookup(database: &str, name: &str) -> Option<u32> {
    let out = Command::new("getent")
        .args([database, name])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8_lossy(&out.stdout)
        .split(':')
        .nth(2)?
        .trim()
        .parse()
        .ok()
}

fn run(program: &str, args: &[&str]) {
    let status = Command::new(program)
        .args(args)
        .status()
        .unwrap_or_else(|e| panic!("running {program}: {e}"));
    assert!(status.success(), "{program} {args:?} failed: {status}");
}

/// `program` run as `uid`/`gid` with exactly the supplementary `groups` (none when empty).
pub fn as_user(program: &Path, uid: u32, gid: u32, groups: &[u32]) -> Command {
    let mut cmd = Command::new("setpriv");
    cmd.arg(format!("--reuid={uid}"))
        .arg(format!("--regid={gid}"));
    if groups.is_empty() {
        cmd.arg("--clear-groups");
    } else {
        let list: Vec<String> = groups.iter().map(u32::to_string).collect();
        cmd.arg(format!("--groups={}", list.join(",")));
    }
    cmd.arg("--").arg(program);
    cmd
}

/// Copies `from` into `dir` as `name`, executable by everyone.
pub fn install_copy(from: &Path, dir: &Path, name: &str) -> PathBuf {
    let to = dir.join(name);
    std::fs::copy(from, &to).unwrap_or_else(|e| panic!("copying {}: {e}", from.display()));
    std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    to
}

/// How long a party may take to answer.
pub const PARTY_WAIT: Duration = Duration::from_secs(120);
