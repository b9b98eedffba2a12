//! The verdicts of `eboardctl doctor`: facts about the host in, one [`Check`] per line out.
//!
//! Pure: the gathering shell ([`super`]) reads the bus, the files and the devices into
//! [`Facts`]; everything that decides what passes, what fails and which command fixes it is
//! here, so each case is unit-tested without a machine set up for it.

use std::path::PathBuf;

/// The group of the service user: it may open the board ttys and steer games on the bus.
pub const GROUP: &str = "eboardd";
/// The udev rule's file name, as the package and `make install` place it.
pub const RULE_FILE: &str = "70-eboardd.rules";
/// Below this much free space a state or PGN directory is reported as nearly full. PGN files
/// are small, but a day's journal of a 200-board hall is tens of megabytes.
pub const MIN_FREE_BYTES: u64 = 100 * 1024 * 1024;

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Check {
    /// Short name of what was checked (`daemon`, `group`, `board b1`, …).
    pub check: String,
    pub ok: bool,
    /// What was found.
    pub detail: String,
    /// For a failed check: the command (or the step) that fixes it.
    pub fix: Option<String>,
}

impl Check {
    fn pass(check: impl Into<String>, detail: impl Into<String>) -> Check {
        Check {
            check: check.into(),
            ok: true,
            detail: detail.into(),
            fix: None,
        }
    }

    fn fail(check: impl Into<String>, detail: impl Into<String>, fix: impl Into<String>) -> Check {
        Check {
            check: check.into(),
            ok: false,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }
}

/// Everything the checks look at.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// The bus as messages name it (`system bus`, `bus at unix:path=…`).
    pub bus: String,
    /// The bus as `--bus` takes it (`system`, `session` or an address).
    pub bus_arg: String,
    /// The configuration file read, and what was wrong with it.
    pub config: Option<PathBuf>,
    pub config_error: Option<String>,
    pub daemon: Daemon,
    /// Whether ModemManager owns its name on the bus (`None`: could not ask).
    pub modem_manager: Option<bool>,
    pub user: User,
    pub udev: Udev,
    /// The serial devices of the daemon's boards and of the boards udev has seen.
    pub ports: Vec<Port>,
    /// The state directory, then the PGN directory.
    pub dirs: Vec<Dir>,
    /// Installed bridge units (`eboardd-*.service` other than the board helper).
    pub bridges: Vec<Unit>,
}

/// What the bus says about the daemon.
#[derive(Debug, Clone, Default)]
pub enum Daemon {
    /// The bus itself cannot be reached.
    NoBus(String),
    /// Nobody owns the name.
    #[default]
    NotRunning,
    Running {
        version: String,
        storage_problem: String,
        boards: Vec<Board>,
    },
}

/// One board as the daemon serves it.
#[derive(Debug, Clone, Default)]
pub struct Board {
    pub name: String,
    pub port: String,
    pub connected: bool,
    pub firmware: String,
    pub serial: String,
    pub clock_connected: bool,
    /// Its `BoardModel` (`chesslink`: a board that has no clock).
    pub model: String,
}

/// The user running doctor.
#[derive(Debug, Clone, Default)]
pub struct User {
    pub name: String,
    pub uid: u32,
    /// The group exists on this host.
    pub group_exists: bool,
    /// The group is among this process's groups (takes effect at login).
    pub in_group_now: bool,
    /// The group database lists the user as a member (maybe since after this login).
    pub listed_in_group: bool,
}

/// What udev has been given and what it has seen.
#[derive(Debug, Clone, Default)]
pub struct Udev {
    /// Where the rule was found, if anywhere.
    pub rule: Option<PathBuf>,
    /// The directories searched for it.
    pub searched: Vec<PathBuf>,
    /// The rule's links (`/dev/eboard/by-path/…`) with the device each points to.
    pub seen: Vec<(PathBuf, PathBuf)>,
}

/// A serial device and whether the daemon's user may open it.
#[derive(Debug, Clone, Default)]
pub struct Port {
    pub path: String,
    pub exists: bool,
    /// `owner:group mode` for the message, e.g. `root:eboardd 0660`.
    pub ownership: String,
    /// The daemon's user (or the service user when the daemon is not running) may read and
    /// write it; `None`: that user is unknown here.
    pub openable_by_daemon: Option<bool>,
    /// Who that user is, for the message.
    pub daemon_user: String,
}

/// A directory the daemon writes.
#[derive(Debug, Clone)]
pub struct Dir {
    /// `state` or `pgn`.
    pub role: String,
    pub path: PathBuf,
    /// The closest existing directory (the path itself when it exists).
    pub existing: PathBuf,
    pub read_only_fs: bool,
    /// `access(W_OK)` for the caller on `existing`: `Err` with the reason.
    pub writable: Result<(), String>,
    pub free_bytes: Option<u64>,
}

/// A bridge's systemd unit.
#[derive(Debug, Clone, Default)]
pub struct Unit {
    pub name: String,
    pub path: PathBuf,
    /// `ActiveState` and `UnitFileState` from systemd; `None` when systemd is not running here
    /// (a container, a chroot) or the unit is a template.
    pub active: Option<String>,
    pub enabled: Option<String>,
}

/// The report: one check per line, in a fixed order.
pub fn verdicts(facts: &Facts) -> Vec<Check> {
    let mut out = Vec::new();
    out.push(config(facts));
    out.push(daemon(facts));
    out.push(group(&facts.user));
    out.extend(udev(facts));
    out.push(modem_manager(facts));
    out.extend(facts.ports.iter().map(port));
    if let Daemon::Running { boards, .. } = &facts.daemon {
        out.extend(boards_lines(boards, facts));
    }
    out.extend(facts.dirs.iter().map(|d| dir(d, &facts.daemon, facts)));
    if let Daemon::Running {
        storage_problem, ..
    } = &facts.daemon
    {
        out.push(storage(storage_problem, facts));
    }
    out.extend(bridges(&facts.bridges));
    out
}

/// All checks passed.
pub fn all_ok(checks: &[Check]) -> bool {
    checks.iter().all(|c| c.ok)
}

/// The text report: `✓ check: detail`, and under each ✗ the fix.
pub fn render(checks: &[Check]) -> String {
    let mut text = String::new();
    for c in checks {
        let mark = if c.ok { '✓' } else { '✗' };
        text.push_str(&format!("{mark} {}: {}\n", c.check, c.detail));
        if let Some(fix) = &c.fix {
            text.push_str(&format!("    fix: {fix}\n"));
        }
    }
    let failed = checks.iter().filter(|c| !c.ok).count();
    if failed == 0 {
        text.push_str(&format!("all {} checks passed\n", checks.len()));
    } else {
        text.push_str(&format!("{failed} of {} checks failed\n", checks.len()));
    }
    text
}

/// The JSON report for scripts.
pub fn to_json(checks: &[Check]) -> serde_json::Value {
    serde_json::json!({ "ok": all_ok(checks), "checks": checks })
}

fn config_name(facts: &Facts) -> String {
    facts
        .config
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "/etc/eboardd/eboardd.toml".into())
}

fn config(facts: &Facts) -> Check {
    match (&facts.config, &facts.config_error) {
        (_, Some(error)) => Check::fail(
            "config",
            error.clone(),
            format!(
                "sudoedit {} (then sudo systemctl restart eboardd)",
                config_name(facts)
            ),
        ),
        (Some(path), None) => Check::pass("config", format!("{} reads cleanly", path.display())),
        (None, None) => Check::pass("config", "no configuration file: built-in defaults"),
    }
}

/// How to start the daemon on the bus the user chose.
fn start_daemon(bus: &str) -> String {
    match bus {
        "system" => "sudo systemctl enable --now eboardd".into(),
        other => format!("eboardd --bus {other}"),
    }
}

fn daemon(facts: &Facts) -> Check {
    let bus = &facts.bus;
    let system = facts.bus_arg == "system";
    match &facts.daemon {
        Daemon::NoBus(error) => Check::fail(
            "daemon",
            error.clone(),
            if system {
                "sudo systemctl start dbus".to_string()
            } else {
                match facts.bus_arg.as_str() {
                    // No session bus is the usual case over SSH: the one command that gives one.
                    "session" => "dbus-run-session -- bash, then start eboardd and run eboardctl in that shell"
                        .to_string(),
                    address => format!("start a dbus-daemon on {address}, or pass the address it has to --bus"),
                }
            },
        ),
        Daemon::NotRunning => Check::fail(
            "daemon",
            format!("eboardd is not running: nobody owns org.eboardd.Bridge1 on the {bus}"),
            start_daemon(&facts.bus_arg),
        ),
        Daemon::Running { version, .. } => Check::pass(
            "daemon",
            format!("eboardd {version} owns org.eboardd.Bridge1 on the {bus}"),
        ),
    }
}

fn group(user: &User) -> Check {
    let who = &user.name;
    if user.uid == 0 {
        return Check::pass("group", "root may open the boards and steer games");
    }
    if user.in_group_now {
        return Check::pass(
            "group",
            format!("{who} is in group {GROUP}: may steer games and open the boards"),
        );
    }
    if user.listed_in_group {
        return Check::fail(
            "group",
            format!("{who} was added to group {GROUP} after this login"),
            format!("log out and in again (or run: newgrp {GROUP})"),
        );
    }
    let add = format!("sudo usermod -aG {GROUP} {who}, then log out and in again");
    if user.group_exists {
        Check::fail(
            "group",
            format!("{who} is not in group {GROUP}: may watch but not steer games"),
            add,
        )
    } else {
        Check::fail(
            "group",
            format!("there is no group {GROUP} (the package creates it)"),
            format!("sudo apt install ./eboardd_*.deb, then {add}"),
        )
    }
}

fn udev(facts: &Facts) -> Vec<Check> {
    let u = &facts.udev;
    let rule = match &u.rule {
        Some(path) => Check::pass("udev rule", format!("{} is installed", path.display())),
        None => Check::fail(
            "udev rule",
            format!(
                "{RULE_FILE} is in none of {}",
                u.searched
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            "sudo apt install ./eboardd_*.deb (or sudo make install), then unplug and replug the boards",
        ),
    };
    let served: Vec<&str> = match &facts.daemon {
        Daemon::Running { boards, .. } => boards.iter().map(|b| b.port.as_str()).collect(),
        _ => Vec::new(),
    };
    let seen = if u.seen.is_empty() {
        if served.is_empty() {
            Check::fail(
                "udev boards",
                "udev has seen no board (nothing in /dev/eboard/by-path or by-bluetooth)",
                "plug a board in (or bind a Bluetooth board: rfcomm bind); an older board on an \
                 FTDI cable needs the opt-in line of the rule (see the README's install notes)",
            )
        } else {
            Check::pass(
                "udev boards",
                "udev has seen no board; the daemon serves configured ports",
            )
        }
    } else {
        let names: Vec<String> = u
            .seen
            .iter()
            .map(|(link, dev)| format!("{} -> {}", link.display(), dev.display()))
            .collect();
        // A board udev has seen that the daemon does not serve: its helper unit did not run.
        let unserved: Vec<&(PathBuf, PathBuf)> = u
            .seen
            .iter()
            .filter(|(link, dev)| {
                !served.iter().any(|p| {
                    std::path::Path::new(p) == link.as_path()
                        || std::path::Path::new(p) == dev.as_path()
                })
            })
            .collect();
        match (&facts.daemon, unserved.first()) {
            (Daemon::Running { .. }, Some((_, dev))) => Check::fail(
                "udev boards",
                format!(
                    "udev has seen {}; the daemon does not serve {}",
                    names.join(", "),
                    dev.display()
                ),
                format!(
                    "sudo udevadm trigger --action=add {} (or unplug and replug it)",
                    dev.display()
                ),
            ),
            _ => Check::pass("udev boards", format!("udev has seen {}", names.join(", "))),
        }
    };
    vec![rule, seen]
}

fn modem_manager(facts: &Facts) -> Check {
    match (facts.modem_manager, &facts.udev.rule) {
        (Some(false), _) => Check::pass("ModemManager", "not running"),
        (None, _) => Check::pass(
            "ModemManager",
            "could not ask the bus; assuming not running",
        ),
        (Some(true), Some(_)) => Check::pass(
            "ModemManager",
            "running; the udev rule keeps it off the boards (ID_MM_DEVICE_IGNORE)",
        ),
        (Some(true), None) => Check::fail(
            "ModemManager",
            "running, and without the udev rule it probes the boards' ttys (its AT probes are \
             valid DGT commands)",
            "install the udev rule (sudo apt install ./eboardd_*.deb), or sudo systemctl disable --now ModemManager",
        ),
    }
}

fn port(p: &Port) -> Check {
    let name = format!("port {}", p.path);
    if !p.exists {
        return Check::fail(
            name,
            "no such device",
            "plug the board in, or correct its `port` in the configuration",
        );
    }
    match p.openable_by_daemon {
        Some(true) | None => Check::pass(
            name,
            format!("{}, {} may open it", p.ownership, p.daemon_user),
        ),
        Some(false) => Check::fail(
            name,
            format!("{}: {} cannot open it", p.ownership, p.daemon_user),
            format!(
                "install the udev rule, then sudo udevadm trigger --action=change {}",
                p.path
            ),
        ),
    }
}

fn boards_lines(boards: &[Board], facts: &Facts) -> Vec<Check> {
    if boards.is_empty() {
        return vec![Check::fail(
            "boards",
            "the daemon serves no board",
            format!(
                "plug a board in, or add [[board]] port = \"/dev/eboard/by-path/…\" to {}",
                config_name(facts)
            ),
        )];
    }
    let mut out = Vec::new();
    for b in boards {
        let name = format!("board {}", b.name);
        out.push(if b.connected {
            let firmware = if b.firmware.is_empty() {
                "firmware not reported yet".to_string()
            } else {
                format!("firmware {}", b.firmware)
            };
            let serial = if b.serial.is_empty() {
                String::new()
            } else {
                format!(", serial {}", b.serial)
            };
            Check::pass(name, format!("answers on {}, {firmware}{serial}", b.port))
        } else {
            Check::fail(
                name,
                format!(
                    "does not answer on {}: neither a DGT board's questions nor a Millennium \
                     ChessLink board's were answered (an FTDI port is asked both ways)",
                    b.port
                ),
                format!(
                    "check the board's USB cable and that {} is the board (eboardctl status {}); \
                     if it is some other serial device, remove it from the configuration, or \
                     name the board's protocol (protocol = \"dgt\" or \"chesslink\")",
                    b.port, b.name
                ),
            )
        });
        let clock = format!("clock {}", b.name);
        out.push(if b.model == "chesslink" {
            Check::pass(clock, "a Millennium ChessLink board has no clock")
        } else if b.clock_connected {
            Check::pass(clock, "a clock answers through this board")
        } else {
            Check::fail(
                clock,
                "no clock answers through this board",
                format!(
                    "plug the clock's cable into this board's clock socket and switch the clock on; \
                     a clock on the wrong board shows: eboardctl clock-message {} HELLO",
                    b.name
                ),
            )
        });
    }
    out
}

fn dir(d: &Dir, daemon: &Daemon, facts: &Facts) -> Check {
    let name = format!("{} dir", d.role);
    let path = d.path.display();
    let where_ = if d.existing == d.path {
        format!("{path}")
    } else {
        format!(
            "{path} (missing; eboardd creates it in {})",
            d.existing.display()
        )
    };
    if d.read_only_fs {
        return Check::fail(
            name,
            format!("{where_} is on a read-only file system"),
            format!(
                "remount it read-write, or set {}_dir in {} to a writable place",
                d.role,
                config_name(facts)
            ),
        );
    }
    if let Some(free) = d.free_bytes
        && free < MIN_FREE_BYTES
    {
        return Check::fail(
            name,
            format!("{where_}: only {} MiB free", free / (1024 * 1024)),
            "free some space (old PGNs can go to another disk), or move the directory to a larger disk",
        );
    }
    let free = d
        .free_bytes
        .map(|f| format!(", {} MiB free", f / (1024 * 1024)))
        .unwrap_or_default();
    match (&d.writable, daemon) {
        (Ok(()), _) => Check::pass(name, format!("{where_} is writable{free}")),
        // The caller is not the daemon's user: the daemon's own word counts.
        (
            Err(_),
            Daemon::Running {
                storage_problem, ..
            },
        ) if storage_problem.is_empty() => {
            Check::pass(name, format!("{where_}: the daemon writes there{free}"))
        }
        (Err(why), _) => Check::fail(
            name,
            format!("{where_} is not writable: {why}"),
            format!(
                "sudo install -d -o eboardd -g eboardd -m 0750 {} (or run doctor with sudo to check as root)",
                d.path.display()
            ),
        ),
    }
}

fn storage(problem: &str, facts: &Facts) -> Check {
    if problem.is_empty() {
        Check::pass("storage", "the daemon reports no storage problem")
    } else {
        Check::fail(
            "storage",
            format!("the daemon reports: {problem} (games are kept in memory meanwhile)"),
            format!(
                "free space or fix the directory named; the daemon catches up by itself (state_dir and pgn_dir are set in {})",
                config_name(facts)
            ),
        )
    }
}

fn bridges(units: &[Unit]) -> Vec<Check> {
    if units.is_empty() {
        return vec![Check::pass("bridges", "no bridge unit installed")];
    }
    units
        .iter()
        .map(|u| {
            let name = format!("unit {}", u.name);
            let active = u.active.as_deref();
            let enabled = u.enabled.as_deref();
            match (active, enabled) {
                (None, _) => Check::pass(
                    name,
                    format!(
                        "installed ({}); its state is not known here",
                        u.path.display()
                    ),
                ),
                (Some("failed"), _) => Check::fail(
                    name,
                    "failed",
                    format!(
                        "journalctl -u {0} says why; then sudo systemctl restart {0}",
                        u.name
                    ),
                ),
                (Some("active"), _) => Check::pass(name, "running"),
                (Some(state), Some("enabled")) => Check::fail(
                    name,
                    format!("enabled but {state}"),
                    format!("sudo systemctl start {}", u.name),
                ),
                (Some(state), enabled) => Check::pass(
                    name,
                    format!(
                        "installed, {state}, {} (sudo systemctl enable --now {} to use it)",
                        enabled.unwrap_or("not enabled"),
                        u.name
                    ),
                ),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(name: &str) -> Board {
        Board {
            name: name.into(),
            port: format!("/dev/eboard/by-path/{name}"),
            connected: true,
            firmware: "3.10".into(),
            serial: "13116".into(),
            clock_connected: true,
            model: "dgt".into(),
        }
    }

    fn healthy() -> Facts {
        Facts {
            bus: "system bus".into(),
            bus_arg: "system".into(),
            config: Some("/etc/eboardd/eboardd.toml".into()),
            config_error: None,
            daemon: Daemon::Running {
                version: "0.1.0".into(),
                storage_problem: String::new(),
                boards: vec![board("b1")],
            },
            modem_manager: Some(true),
            user: User {
                name: "arbiter".into(),
                uid: 1000,
                group_exists: true,
                in_group_now: true,
                listed_in_group: true,
            },
            udev: Udev {
                rule: Some("/usr/lib/udev/rules.d/70-eboardd.rules".into()),
                searched: vec!["/usr/lib/udev/rules.d".into()],
                seen: vec![("/dev/eboard/by-path/b1".into(), "/dev/ttyACM0".into())],
            },
            ports: vec![Port {
                path: "/dev/eboard/by-path/b1".into(),
                exists: true,
                ownership: "root:eboardd 0660".into(),
                openable_by_daemon: Some(true),
                daemon_user: "eboardd".into(),
            }],
            dirs: vec![Dir {
                role: "state".into(),
                path: "/var/lib/eboardd".into(),
                existing: "/var/lib/eboardd".into(),
                read_only_fs: false,
                writable: Err("permission denied".into()),
                free_bytes: Some(10 * MIN_FREE_BYTES),
            }],
            bridges: vec![Unit {
                name: "eboardd-web.service".into(),
                path: "/usr/lib/systemd/system/eboardd-web.service".into(),
                active: Some("inactive".into()),
                enabled: Some("disabled".into()),
            }],
        }
    }

    fn failed(facts: &Facts) -> Vec<Check> {
        verdicts(facts).into_iter().filter(|c| !c.ok).collect()
    }

    fn only_failure(facts: &Facts) -> Check {
        let f = failed(facts);
        assert_eq!(f.len(), 1, "{f:#?}");
        f.into_iter().next().unwrap()
    }

    #[test]
    fn a_healthy_rig_passes_every_check() {
        let checks = verdicts(&healthy());
        assert!(all_ok(&checks), "{checks:#?}");
        let text = render(&checks);
        assert!(text.contains("✓ board b1: answers on /dev/eboard/by-path/b1, firmware 3.10"));
        assert!(text.ends_with(&format!("all {} checks passed\n", checks.len())));
        assert_eq!(to_json(&checks)["ok"], true);
    }

    #[test]
    fn each_failure_names_its_fix() {
        let mut f = healthy();
        f.daemon = Daemon::NotRunning;
        let c = failed(&f);
        assert_eq!(c[0].check, "daemon");
        assert_eq!(
            c[0].fix.as_deref(),
            Some("sudo systemctl enable --now eboardd")
        );
        // Without the daemon, the state dir cannot be vouched for by it.
        assert!(c.iter().any(|c| c.check == "state dir"));

        let mut f = healthy();
        f.user.in_group_now = false;
        f.user.listed_in_group = false;
        let c = only_failure(&f);
        assert_eq!(
            c.fix.as_deref(),
            Some("sudo usermod -aG eboardd arbiter, then log out and in again")
        );

        let mut f = healthy();
        f.user.in_group_now = false;
        assert!(only_failure(&f).fix.unwrap().contains("newgrp eboardd"));

        let mut f = healthy();
        f.udev.rule = None;
        let c = failed(&f);
        assert_eq!(c.len(), 2, "the rule and ModemManager: {c:#?}");
        assert!(
            c[1].fix
                .as_deref()
                .unwrap()
                .contains("disable --now ModemManager")
        );

        let mut f = healthy();
        if let Daemon::Running { boards, .. } = &mut f.daemon {
            boards[0].clock_connected = false;
        }
        let c = only_failure(&f);
        assert_eq!(c.check, "clock b1");
        assert!(c.fix.unwrap().contains("eboardctl clock-message b1"));

        let mut f = healthy();
        if let Daemon::Running { boards, .. } = &mut f.daemon {
            boards[0].connected = false;
        }
        assert_eq!(only_failure(&f).check, "board b1");
        assert!(
            only_failure(&f)
                .detail
                .contains("neither a DGT board's questions nor a Millennium"),
            "a port that answers neither protocol says so"
        );

        // A ChessLink board has no clock: nothing to fix about it.
        let mut f = healthy();
        if let Daemon::Running { boards, .. } = &mut f.daemon {
            boards[0].model = "chesslink".into();
            boards[0].clock_connected = false;
        }
        let text = render(&verdicts(&f));
        assert!(
            text.contains("✓ clock b1: a Millennium ChessLink board has no clock"),
            "{text}"
        );

        let mut f = healthy();
        f.ports[0].openable_by_daemon = Some(false);
        assert!(only_failure(&f).fix.unwrap().contains("udevadm trigger"));

        let mut f = healthy();
        f.ports[0].exists = false;
        assert_eq!(only_failure(&f).detail, "no such device");
    }

    #[test]
    fn directories_fail_when_read_only_full_or_reported() {
        let mut f = healthy();
        f.dirs[0].read_only_fs = true;
        assert!(only_failure(&f).detail.contains("read-only file system"));

        let mut f = healthy();
        f.dirs[0].free_bytes = Some(MIN_FREE_BYTES - 1);
        assert!(only_failure(&f).detail.contains("MiB free"));

        let mut f = healthy();
        if let Daemon::Running {
            storage_problem, ..
        } = &mut f.daemon
        {
            *storage_problem = "state directory: disk full".into();
        }
        // The daemon's word fails both its directory (not writable by the caller) and storage.
        let c = failed(&f);
        assert_eq!(
            c.iter().map(|c| c.check.as_str()).collect::<Vec<_>>(),
            ["state dir", "storage"]
        );
    }

    #[test]
    fn boards_udev_saw_but_the_daemon_does_not_serve_are_named() {
        let mut f = healthy();
        f.udev
            .seen
            .push(("/dev/eboard/by-path/b2".into(), "/dev/ttyACM1".into()));
        let c = only_failure(&f);
        assert_eq!(c.check, "udev boards");
        assert_eq!(
            c.fix.as_deref(),
            Some("sudo udevadm trigger --action=add /dev/ttyACM1 (or unplug and replug it)")
        );

        let mut f = healthy();
        f.udev.seen.clear();
        assert!(all_ok(&verdicts(&f)), "configured ports are enough");
        if let Daemon::Running { boards, .. } = &mut f.daemon {
            boards.clear();
        }
        f.ports.clear();
        let names: Vec<String> = failed(&f).into_iter().map(|c| c.check).collect();
        assert_eq!(names, ["udev boards", "boards"]);
    }

    #[test]
    fn bridge_units_fail_only_when_broken() {
        let mut f = healthy();
        f.bridges[0].active = Some("failed".into());
        assert!(
            only_failure(&f)
                .fix
                .unwrap()
                .starts_with("journalctl -u eboardd-web.service")
        );
        f.bridges[0].active = Some("inactive".into());
        f.bridges[0].enabled = Some("enabled".into());
        assert_eq!(
            only_failure(&f).fix.as_deref(),
            Some("sudo systemctl start eboardd-web.service")
        );
        f.bridges[0].active = None;
        assert!(all_ok(&verdicts(&f)));
        f.bridges.clear();
        assert!(render(&verdicts(&f)).contains("✓ bridges: no bridge unit installed"));
    }

    #[test]
    fn a_bad_configuration_is_named_with_the_file() {
        let mut f = healthy();
        f.config_error = Some("/etc/eboardd/eboardd.toml:3: key `rules`: unknown".into());
        let c = only_failure(&f);
        assert_eq!(c.check, "config");
        assert!(
            c.fix
                .unwrap()
                .starts_with("sudoedit /etc/eboardd/eboardd.toml")
        );
        let text = render(&verdicts(&f));
        assert!(text.contains("✗ config: /etc/eboardd/eboardd.toml:3"));
        assert!(text.contains("    fix: sudoedit"));
        assert!(text.ends_with("1 of 12 checks failed\n"), "{text}");
    }
}
