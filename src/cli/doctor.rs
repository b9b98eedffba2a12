//! `eboardctl doctor`: checks this host as a rig and says, for each problem, what fixes it.
//!
//! A thin gathering shell: it asks the bus (the daemon, its boards, ModemManager), reads the
//! group database, the udev rule directories and `/dev/eboard`, stats the ports and the state
//! and PGN directories, and asks systemd about the bridges' units; the verdicts are the pure
//! [`checks`]. Every system path it reads can be pointed elsewhere by a flag, so the tests run
//! it against directories of their own.

pub mod checks;

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use nix::unistd::{AccessFlags, Gid, Group, Uid, User};

use crate::cli::client::Client;
use crate::cli::{Globals, print_json, print_text};
use crate::client::bus;
use crate::client::error::CtlError;
use crate::daemon::config::{Config, DEFAULT_CONFIG_PATH};
use checks::{Board, Daemon, Dir, Facts, GROUP, Port, RULE_FILE, Udev, Unit};
use eboard_core::contract::{BUS_NAME, MANAGER_INTERFACE, MANAGER_PATH};

/// Where udev reads rules, in its order of precedence.
const UDEV_RULES_DIRS: [&str; 5] = [
    "/etc/udev/rules.d",
    "/run/udev/rules.d",
    "/usr/local/lib/udev/rules.d",
    "/usr/lib/udev/rules.d",
    "/lib/udev/rules.d",
];
/// Where systemd reads system units, in its order of precedence.
const UNIT_DIRS: [&str; 4] = [
    "/etc/systemd/system",
    "/usr/local/lib/systemd/system",
    "/usr/lib/systemd/system",
    "/lib/systemd/system",
];
/// The udev rule's links.
const LINKS_DIR: &str = "/dev/eboard";
/// ModemManager's bus name.
const MODEM_MANAGER: &str = "org.freedesktop.ModemManager1";
/// The helper unit the udev rule starts: part of the daemon, not a bridge.
const BOARD_HELPER_UNIT: &str = "eboardd-board@.service";

/// `eboardctl doctor` flags. The defaults are the installed system's paths.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct DoctorArgs {
    /// The daemon's configuration, for its state and PGN directories
    /// [default: /etc/eboardd/eboardd.toml if it exists].
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The daemon's state directory, when it runs with --state-dir [default: from the
    /// configuration, else /var/lib/eboardd].
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// A directory to look for the udev rule in (repeatable) [default: udev's rule directories].
    #[arg(long, value_name = "DIR")]
    pub udev_rules_dir: Vec<PathBuf>,
    /// Where the udev rule's links are [default: /dev/eboard].
    #[arg(long, value_name = "DIR")]
    pub links_dir: Option<PathBuf>,
    /// A directory to look for the bridges' units in (repeatable) [default: systemd's system
    /// unit directories].
    #[arg(long, value_name = "DIR")]
    pub unit_dir: Vec<PathBuf>,
}

/// `eboardctl doctor` on its own runtime: it runs whether or not the daemon is there.
pub fn main(globals: &Globals, args: &DoctorArgs) -> Result<(), CtlError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CtlError::Other(format!("cannot start the async runtime: {e}")))?
        .block_on(run(globals, args))
}

/// Runs every check and prints the report; fails (exit 1) unless every check passed.
pub async fn run(globals: &Globals, args: &DoctorArgs) -> Result<(), CtlError> {
    let facts = gather(globals, args).await;
    let report = checks::verdicts(&facts);
    if globals.json {
        print_json(&checks::to_json(&report))?;
    } else {
        print_text(checks::render(&report).trim_end())?;
    }
    let failed = report.iter().filter(|c| !c.ok).count();
    if failed == 0 {
        Ok(())
    } else {
        Err(CtlError::Other(format!(
            "{failed} of {} checks failed",
            report.len()
        )))
    }
}

async fn gather(globals: &Globals, args: &DoctorArgs) -> Facts {
    let mut facts = Facts {
        bus: globals.bus.to_string(),
        bus_arg: bus_arg(globals),
        ..Facts::default()
    };
    let config_path = args
        .config
        .clone()
        .or_else(|| Some(PathBuf::from(DEFAULT_CONFIG_PATH)).filter(|p| p.exists()));
    let config = match Config::load(args.config.as_deref()) {
        Ok(config) => config,
        Err(e) => {
            facts.config_error = Some(e.to_string());
            Config::default()
        }
    };
    facts.config = config_path;
    let mut daemon_uid = None;
    match bus::connect(&globals.bus).await {
        Err(e) => facts.daemon = Daemon::NoBus(e.to_string()),
        Ok(conn) => {
            let dbus = zbus::fdo::DBusProxy::new(&conn).await.ok();
            facts.modem_manager = match &dbus {
                Some(dbus) => has_owner(dbus, MODEM_MANAGER).await,
                None => None,
            };
            if let Some(dbus) = &dbus
                && has_owner(dbus, BUS_NAME).await == Some(true)
            {
                daemon_uid = dbus
                    .get_connection_unix_user(BUS_NAME.try_into().expect("a valid bus name"))
                    .await
                    .ok();
                facts.daemon = daemon_facts(conn, globals).await;
            }
        }
    }
    facts.user = user_facts();
    facts.udev = udev_facts(args);
    facts.ports = port_facts(&facts, daemon_uid);
    let state_dir = args
        .state_dir
        .clone()
        .unwrap_or_else(|| config.daemon.state_dir.clone());
    let pgn_dir = config
        .daemon
        .pgn_dir
        .clone()
        .unwrap_or_else(|| state_dir.join("pgn"));
    facts.dirs = vec![dir_facts("state", &state_dir), dir_facts("pgn", &pgn_dir)];
    facts.bridges = bridge_units(args);
    facts
}

/// The bus as `--bus` takes it, for the fix lines.
fn bus_arg(globals: &Globals) -> String {
    use crate::client::bus::BusChoice;
    match &globals.bus {
        BusChoice::System => "system".into(),
        BusChoice::Session => "session".into(),
        BusChoice::Address(a) => a.clone(),
    }
}

async fn has_owner(dbus: &zbus::fdo::DBusProxy<'_>, name: &str) -> Option<bool> {
    let name = zbus::names::BusName::try_from(name).ok()?;
    dbus.name_has_owner(name).await.ok()
}

async fn daemon_facts(conn: zbus::Connection, globals: &Globals) -> Daemon {
    let manager = zbus::fdo::PropertiesProxy::builder(&conn)
        .destination(BUS_NAME)
        .path(MANAGER_PATH);
    let iface = zbus::names::InterfaceName::try_from(MANAGER_INTERFACE).expect("valid name");
    let (mut version, mut storage_problem) = (String::new(), String::new());
    if let Ok(props) = manager.build().await
        && let Ok(all) = props.get_all(iface).await
    {
        let text = |key: &str| {
            all.get(key)
                .and_then(|v| String::try_from(v.try_clone().ok()?).ok())
                .unwrap_or_default()
        };
        version = text("Version");
        storage_problem = text("StorageProblem");
    }
    let client = Client {
        conn,
        bus: globals.bus.to_string(),
    };
    let boards = client
        .boards()
        .await
        .unwrap_or_default()
        .into_iter()
        .map(|b| Board {
            name: b.props.name,
            port: b.props.port,
            connected: b.props.connected,
            firmware: b.props.firmware_version,
            serial: b.props.serial_number,
            clock_connected: b.props.clock_connected,
            model: b.props.board_model,
        })
        .collect();
    Daemon::Running {
        version,
        storage_problem,
        boards,
    }
}

fn user_facts() -> checks::User {
    let uid = Uid::current();
    let user = User::from_uid(uid).ok().flatten();
    let name = user
        .as_ref()
        .map(|u| u.name.clone())
        .unwrap_or_else(|| uid.to_string());
    let group = Group::from_name(GROUP).ok().flatten();
    let (in_group_now, listed_in_group) = match &group {
        Some(g) => {
            let now = nix::unistd::getgroups()
                .map(|gs| gs.contains(&g.gid))
                .unwrap_or(false)
                || Gid::current() == g.gid;
            let listed = g.mem.contains(&name) || user.as_ref().is_some_and(|u| u.gid == g.gid);
            (now, listed)
        }
        None => (false, false),
    };
    checks::User {
        name,
        uid: uid.as_raw(),
        group_exists: group.is_some(),
        in_group_now,
        listed_in_group,
    }
}

fn udev_facts(args: &DoctorArgs) -> Udev {
    let searched: Vec<PathBuf> = if args.udev_rules_dir.is_empty() {
        UDEV_RULES_DIRS.iter().map(PathBuf::from).collect()
    } else {
        args.udev_rules_dir.clone()
    };
    let rule = searched
        .iter()
        .map(|d| d.join(RULE_FILE))
        .find(|p| p.is_file());
    let links = args
        .links_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(LINKS_DIR));
    let mut seen = seen_links(&links);
    seen.sort();
    Udev {
        rule,
        searched,
        seen,
    }
}

/// The rule's links below `links` — USB boards under `by-path`, bound Bluetooth links under
/// `by-bluetooth` — each with the device it points to.
fn seen_links(links: &Path) -> Vec<(PathBuf, PathBuf)> {
    ["by-path", "by-bluetooth"]
        .iter()
        .flat_map(|kind| std::fs::read_dir(links.join(kind)).into_iter().flatten())
        .flatten()
        .map(|e| {
            let link = e.path();
            let dev = std::fs::canonicalize(&link).unwrap_or_else(|_| link.clone());
            (link, dev)
        })
        .collect()
}

/// The ports of the daemon's boards and of the boards udev has seen, each once.
fn port_facts(facts: &Facts, daemon_uid: Option<u32>) -> Vec<Port> {
    // The daemon's user, else the service user the package creates.
    let user = match daemon_uid {
        Some(uid) => User::from_uid(Uid::from_raw(uid)).ok().flatten(),
        None => User::from_name(GROUP).ok().flatten(),
    };
    let mut paths: BTreeMap<PathBuf, String> = BTreeMap::new();
    // Ports the daemon has open: whatever their mode says, it can.
    let mut open: Vec<String> = Vec::new();
    if let Daemon::Running { boards, .. } = &facts.daemon {
        for b in boards {
            let real = std::fs::canonicalize(&b.port).unwrap_or_else(|_| PathBuf::from(&b.port));
            paths.entry(real).or_insert_with(|| b.port.clone());
            if b.connected {
                open.push(b.port.clone());
            }
        }
    }
    for (link, dev) in &facts.udev.seen {
        paths
            .entry(dev.clone())
            .or_insert_with(|| link.display().to_string());
    }
    paths
        .values()
        .map(|path| match std::fs::metadata(path) {
            Err(_) => Port {
                path: path.clone(),
                exists: false,
                ..Port::default()
            },
            Ok(meta) => Port {
                path: path.clone(),
                exists: true,
                ownership: format!(
                    "{}:{} {:04o}",
                    user_name(meta.uid()),
                    group_name(meta.gid()),
                    meta.mode() & 0o7777
                ),
                openable_by_daemon: if open.contains(path) {
                    Some(true)
                } else {
                    user.as_ref().map(|u| may_open(u, &meta))
                },
                daemon_user: user
                    .as_ref()
                    .map(|u| format!("the daemon's user {}", u.name))
                    .unwrap_or_else(|| "the daemon's user".into()),
            },
        })
        .collect()
}

/// Whether `user` may read and write a file with this owner, group and mode.
fn may_open(user: &User, meta: &std::fs::Metadata) -> bool {
    let mode = meta.mode();
    if user.uid.is_root() || mode & 0o006 == 0o006 {
        return true;
    }
    if meta.uid() == user.uid.as_raw() {
        return mode & 0o600 == 0o600;
    }
    let name = std::ffi::CString::new(user.name.clone()).unwrap_or_default();
    let groups = nix::unistd::getgrouplist(&name, user.gid).unwrap_or_default();
    groups.contains(&Gid::from_raw(meta.gid())) && mode & 0o060 == 0o060
}

fn user_name(uid: u32) -> String {
    User::from_uid(Uid::from_raw(uid))
        .ok()
        .flatten()
        .map_or_else(|| uid.to_string(), |u| u.name)
}

fn group_name(gid: u32) -> String {
    Group::from_gid(Gid::from_raw(gid))
        .ok()
        .flatten()
        .map_or_else(|| gid.to_string(), |g| g.name)
}

fn dir_facts(role: &str, path: &Path) -> Dir {
    let existing = path
        .ancestors()
        .find(|p| p.is_dir())
        .unwrap_or(Path::new("/"))
        .to_path_buf();
    let stat = nix::sys::statvfs::statvfs(&existing).ok();
    let read_only_fs = stat
        .as_ref()
        .is_some_and(|s| s.flags().contains(nix::sys::statvfs::FsFlags::ST_RDONLY));
    // The statvfs field types are 32 bits wide on some targets.
    #[allow(clippy::useless_conversion)]
    let free_bytes = stat
        .as_ref()
        .map(|s| u64::from(s.blocks_available()) * u64::from(s.fragment_size()));
    let writable = nix::unistd::access(&existing, AccessFlags::W_OK | AccessFlags::X_OK)
        .map_err(|e| e.desc().to_string());
    Dir {
        role: role.into(),
        path: path.to_path_buf(),
        existing,
        read_only_fs,
        writable,
        free_bytes,
    }
}

/// Installed `eboardd-*.service` units other than the board helper, each once (the first
/// directory wins, as in systemd), with their state when systemd runs here.
fn bridge_units(args: &DoctorArgs) -> Vec<Unit> {
    let dirs: Vec<PathBuf> = if args.unit_dir.is_empty() {
        UNIT_DIRS.iter().map(PathBuf::from).collect()
    } else {
        args.unit_dir.clone()
    };
    let mut units: BTreeMap<String, PathBuf> = BTreeMap::new();
    for dir in &dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("eboardd-")
                && name.ends_with(".service")
                && name != BOARD_HELPER_UNIT
            {
                units.entry(name).or_insert_with(|| entry.path());
            }
        }
    }
    let systemd_runs = Path::new("/run/systemd/system").is_dir();
    units
        .into_iter()
        .map(|(name, path)| {
            let (active, enabled) = if systemd_runs && !name.ends_with("@.service") {
                (
                    systemctl_show(&name, "ActiveState"),
                    systemctl_show(&name, "UnitFileState"),
                )
            } else {
                (None, None)
            };
            Unit {
                name,
                path,
                active,
                enabled,
            }
        })
        .collect()
}

fn systemctl_show(unit: &str, property: &str) -> Option<String> {
    let out = std::process::Command::new("systemctl")
        .args(["show", "--value", "-p", property, unit])
        .output()
        .ok()?;
    let value = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !value.is_empty()).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usb_and_bluetooth_links_are_both_seen() {
        let dir = tempfile::tempdir().unwrap();
        let links = dir.path().join("eboard");
        for kind in ["by-path", "by-bluetooth"] {
            std::fs::create_dir_all(links.join(kind)).unwrap();
        }
        let (usb, rfcomm) = (dir.path().join("ttyACM0"), dir.path().join("rfcomm0"));
        std::fs::write(&usb, "").unwrap();
        std::fs::write(&rfcomm, "").unwrap();
        let usb_link = links.join("by-path/pci-0000:00:14.0-usb-0:1:1.0");
        let bt_link = links.join("by-bluetooth/00:1E:C0:12:34:56");
        std::os::unix::fs::symlink(&usb, &usb_link).unwrap();
        std::os::unix::fs::symlink(&rfcomm, &bt_link).unwrap();
        let mut seen = seen_links(&links);
        seen.sort();
        assert_eq!(seen, vec![(bt_link, rfcomm), (usb_link, usb)]);
        assert!(seen_links(&dir.path().join("none")).is_empty());
    }
}
