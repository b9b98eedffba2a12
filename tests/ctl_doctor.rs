//! `eboardctl doctor` through the real binary, against the real eboardd on a private bus and
//! simulated boards on ptys: a healthy rig passes every check (exit 0); then each check fails
//! in turn — no daemon, ModemManager without the udev rule, a board that does not answer, a
//! board without a clock, a read-only state directory, a user outside the group — and the
//! report shows the fix (text and `--json`, exit 1).

mod common;
mod ctl_support;

use std::path::{Path, PathBuf};
use std::process::Stdio;

use common::sim::sim_board;
use common::{Bus, Daemon, wait_property};
use ctl_support::{Output, ctl, eboardctl, output};
use eboard_sim::{BoardOptions, ClockPresence, SimHandle};

/// The directories doctor is pointed at instead of the system's: an empty rules dir or one
/// holding the repository's rule, no `/dev/eboard` links, no installed units.
struct Paths {
    state: PathBuf,
    rules: PathBuf,
    links: PathBuf,
    units: PathBuf,
}

impl Paths {
    fn new(dir: &Path, with_rule: bool) -> Paths {
        let rules = dir.join("rules.d");
        std::fs::create_dir_all(&rules).unwrap();
        if with_rule {
            std::fs::copy(
                concat!(env!("CARGO_MANIFEST_DIR"), "/udev/70-eboardd.rules"),
                rules.join("70-eboardd.rules"),
            )
            .unwrap();
        }
        let links = dir.join("dev-eboard");
        let units = dir.join("units");
        std::fs::create_dir_all(&units).unwrap();
        Paths {
            state: dir.join("state"),
            rules,
            links,
            units,
        }
    }

    /// `doctor` and its path flags.
    fn args(&self) -> Vec<String> {
        let mut args = vec!["doctor".to_string()];
        for (flag, path) in [
            ("--state-dir", &self.state),
            ("--udev-rules-dir", &self.rules),
            ("--links-dir", &self.links),
            ("--unit-dir", &self.units),
        ] {
            args.push(flag.into());
            args.push(path.display().to_string());
        }
        args
    }
}

async fn doctor(address: &str, paths: &Paths, json: bool) -> Output {
    let mut args = paths.args();
    if json {
        args.insert(0, "--json".into());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ctl(address, &args).await
}

/// The report's line for `check` (`✓ check: …` or `✗ check: …`) and the fix under it.
fn line<'a>(out: &'a Output, check: &str) -> (&'a str, Option<&'a str>) {
    let lines: Vec<&str> = out.stdout.lines().collect();
    let at = lines
        .iter()
        .position(|l| {
            l[l.char_indices().nth(2).map_or(0, |(i, _)| i)..].starts_with(&format!("{check}:"))
        })
        .unwrap_or_else(|| panic!("no line for {check}:\n{}", out.stdout));
    let fix = lines
        .get(at + 1)
        .and_then(|l| l.trim_start().strip_prefix("fix: "));
    (lines[at], fix)
}

fn passes(out: &Output, check: &str) -> String {
    let (l, fix) = line(out, check);
    assert!(
        l.starts_with('✓') && fix.is_none(),
        "{check} should pass:\n{}",
        out.stdout
    );
    l.to_string()
}

/// The failed line and its fix.
fn fails(out: &Output, check: &str) -> (String, String) {
    let (l, fix) = line(out, check);
    assert!(l.starts_with('✗'), "{check} should fail:\n{}", out.stdout);
    let fix = fix.unwrap_or_else(|| panic!("{check} has no fix:\n{}", out.stdout));
    (l.to_string(), fix.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_daemon_it_says_how_to_start_it() {
    let dir = tempfile::tempdir().unwrap();
    let bus = Bus::start(dir.path()).await;
    let paths = Paths::new(dir.path(), false);
    // ModemManager on the bus, and no udev rule to keep it off the boards.
    let mm = bus.client().await;
    mm.request_name("org.freedesktop.ModemManager1")
        .await
        .expect("own ModemManager's name");

    let out = doctor(&bus.address, &paths, false).await;
    assert_eq!(out.code, 1, "{out:?}");
    let (detail, fix) = fails(&out, "daemon");
    assert!(detail.contains("eboardd is not running"), "{detail}");
    assert_eq!(fix, format!("eboardd --bus {}", bus.address));
    let (_, fix) = fails(&out, "udev rule");
    assert!(fix.contains("apt install ./eboardd_"), "{fix}");
    let (detail, fix) = fails(&out, "ModemManager");
    assert!(detail.contains("probes the boards"), "{detail}");
    assert!(
        fix.contains("sudo systemctl disable --now ModemManager"),
        "{fix}"
    );
    fails(&out, "udev boards");
    passes(&out, "bridges");
    assert!(
        out.stdout.trim_end().ends_with("checks failed"),
        "{}",
        out.stdout
    );
    assert!(out.stderr.contains("checks failed"), "{out:?}");

    // The same for scripts.
    let out = doctor(&bus.address, &paths, true).await;
    assert_eq!(out.code, 1, "{out:?}");
    let report: serde_json::Value =
        serde_json::from_str(out.stdout.trim()).expect("one JSON object");
    assert_eq!(report["ok"], false);
    let daemon = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "daemon")
        .expect("a daemon check");
    assert_eq!(daemon["ok"], false);
    assert_eq!(daemon["fix"], format!("eboardd --bus {}", bus.address));
}

/// A daemon serving these boards (each a port in `dir`) with its client connected.
/// One simulated board, "good", connected to its daemon: a rig doctor finds healthy. (The
/// fields drop in order: the directory last.)
struct Good {
    paths: Paths,
    _daemon: Daemon,
    bus: Bus,
    _sim: SimHandle,
    _dir: tempfile::TempDir,
}

impl Good {
    async fn start() -> Good {
        let dir = tempfile::tempdir().unwrap();
        let sim = sim_board(dir.path(), "good", 1.0, BoardOptions::default()).await;
        let (bus, daemon, conn) = daemon_with(dir.path(), &[sim.path().to_path_buf()]).await;
        wait_connected(&conn, "good", true).await;
        let paths = Paths::new(dir.path(), true);
        Good {
            paths,
            _daemon: daemon,
            bus,
            _sim: sim,
            _dir: dir,
        }
    }
}

async fn daemon_with(dir: &Path, ports: &[PathBuf]) -> (Bus, Daemon, zbus::Connection) {
    let config = dir.join("eboardd.toml");
    let boards: String = ports
        .iter()
        .map(|p| format!("[[board]]\nport = \"{}\"\n", p.display()))
        .collect();
    std::fs::write(&config, boards).unwrap();
    let bus = Bus::start(dir).await;
    let mut daemon = Daemon::spawn(&bus, dir, &["--config", config.to_str().unwrap()]);
    let conn = bus.client().await;
    daemon.wait_for_name(&conn).await;
    (bus, daemon, conn)
}

async fn wait_connected(conn: &zbus::Connection, id: &str, clock: bool) {
    let proxy = common::proxies::board(conn, id).await;
    let mut connected = proxy.receive_connected_changed().await;
    wait_property(&mut connected, "the board answers", |c| *c).await;
    let mut firmware = proxy.receive_firmware_version_changed().await;
    wait_property(&mut firmware, "the board's firmware", |f| !f.is_empty()).await;
    if clock {
        let mut stream = proxy.receive_clock_connected_changed().await;
        wait_property(&mut stream, "the clock reports", |c| *c).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_healthy_rig_passes_every_check() {
    // Root passes the group check (see the test below for a user outside the group).
    if !common::require::require_root("the group check passes for root or a member") {
        return;
    }
    let good = Good::start().await;
    let (bus, paths) = (&good.bus, &good.paths);

    let out = doctor(&bus.address, paths, false).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(passes(&out, "daemon").contains("owns org.eboardd.Bridge1"));
    let board = passes(&out, "board good");
    assert!(
        board.contains("firmware 3.10") && board.contains("serial "),
        "{board}"
    );
    passes(&out, "clock good");
    passes(&out, "state dir");
    passes(&out, "storage");
    passes(&out, "udev rule");
    assert!(out.stdout.contains("checks passed"), "{}", out.stdout);
    let out = doctor(&bus.address, paths, true).await;
    assert_eq!(out.code, 0, "{out:?}");
    let report: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(report["ok"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_board_and_a_board_without_clock_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let no_clock = sim_board(
        dir.path(),
        "noclock",
        1.0,
        BoardOptions {
            clock: ClockPresence::Absent,
            ..BoardOptions::default()
        },
    )
    .await;
    // A tty that opens but where nothing ever answers (a wrong port, a board switched off).
    let pty = nix::pty::openpty(None, None).unwrap();
    let silent = nix::unistd::ttyname(&pty.slave).unwrap();
    let (bus, _daemon, conn) =
        daemon_with(dir.path(), &[no_clock.path().to_path_buf(), silent.clone()]).await;
    wait_connected(&conn, "noclock", false).await;
    let paths = Paths::new(dir.path(), true);

    let out = doctor(&bus.address, &paths, false).await;
    assert_eq!(out.code, 1, "{out:?}");
    passes(&out, "board noclock");
    let (detail, fix) = fails(&out, "clock noclock");
    assert!(detail.contains("no clock answers"), "{detail}");
    assert!(
        fix.contains("clock socket") && fix.contains("eboardctl clock-message noclock"),
        "{fix}"
    );
    let silent_name = silent.file_name().unwrap().to_str().unwrap().to_string();
    let (detail, fix) = fails(&out, &format!("board {silent_name}"));
    assert!(
        detail.contains(&format!("does not answer on {}", silent.display())),
        "{detail}"
    );
    assert!(fix.contains("USB cable"), "{fix}");
    // The port itself is there and may be opened: the board is what does not answer.
    passes(&out, &format!("port {}", silent.display()));
    drop(pty);
}

/// Runs `eboardctl --bus ADDRESS ARGS…` under `wrapper` (setpriv, unshare): the binary is
/// given as `{ctl}` in the wrapper's arguments.
async fn wrapped(wrapper: &[&str], ctl_path: &str, address: &str, args: &[String]) -> Output {
    let mut full: Vec<String> = wrapper
        .iter()
        .map(|a| a.replace("{ctl}", ctl_path))
        .collect();
    full.extend(["--bus".to_string(), address.to_string()]);
    full.extend(args.iter().cloned());
    let mut cmd = tokio::process::Command::new(&full[0]);
    cmd.args(&full[1..]).stdin(Stdio::null()).kill_on_drop(true);
    output(cmd, &format!("{full:?}")).await
}

/// Whether this run is root and has `tool` (of `package`), which the test needs for `why`;
/// says so when not.
fn root_with(why: &str, tool: &str, package: &str) -> bool {
    common::require::require_root(why) && common::require::require_tool(tool, package)
}

/// Lets every user into `path` (mode 0755).
fn open_to_all(path: &Path) {
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_state_directory_fails_with_the_fix() {
    if !root_with(
        "a read-only bind mount in a private mount namespace",
        "unshare",
        "util-linux",
    ) {
        return;
    }
    let good = Good::start().await;
    let (bus, paths) = (&good.bus, &good.paths);
    std::fs::create_dir_all(&paths.state).unwrap();
    // The state directory read-only for doctor alone: a bind mount in its own mount namespace.
    let state = paths.state.display().to_string();
    let script = format!(
        "mount --bind {state} {state} && mount -o remount,bind,ro {state} && exec \"$0\" \"$@\""
    );
    let wrapper = [
        "unshare",
        "-m",
        "--propagation",
        "private",
        "sh",
        "-c",
        &script,
        "{ctl}",
    ];
    let out = wrapped(&wrapper, eboardctl(), &bus.address, &paths.args()).await;
    assert_eq!(out.code, 1, "{out:?}");
    let (detail, fix) = fails(&out, "state dir");
    assert!(detail.contains("read-only file system"), "{detail}");
    assert!(fix.contains("remount it read-write"), "{fix}");
    passes(&out, "board good");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_outside_the_group_is_told_how_to_join() {
    if !root_with("setpriv to another user", "setpriv", "util-linux") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Where `nobody` may run the binary from (the build tree may be private to root).
    let bin_dir = tempfile::tempdir().unwrap();
    open_to_all(bin_dir.path());
    let ctl_copy = bin_dir.path().join("eboardctl");
    std::fs::copy(eboardctl(), &ctl_copy).unwrap();
    let bus = Bus::start(dir.path()).await;
    // The bus socket and the test directory must be reachable for nobody.
    open_to_all(dir.path());
    let paths = Paths::new(dir.path(), true);
    let wrapper = [
        "setpriv",
        "--reuid=nobody",
        "--regid=nogroup",
        "--clear-groups",
        "{ctl}",
    ];
    let out = wrapped(
        &wrapper,
        ctl_copy.to_str().unwrap(),
        &bus.address,
        &paths.args(),
    )
    .await;
    assert_eq!(out.code, 1, "{out:?}");
    let (detail, fix) = fails(&out, "group");
    assert!(
        detail.contains("nobody") || detail.contains("no group eboardd"),
        "{detail}"
    );
    assert!(fix.contains("sudo usermod -aG eboardd nobody"), "{fix}");
}
