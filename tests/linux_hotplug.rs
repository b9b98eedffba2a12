//! The hot-plug helper (`systemd/eboardd-board`, run by `eboardd-board@.service`) against the
//! real `eboardd` on a private bus.
//!
//! The helper runs as systemd would run it (with `RUNTIME_DIRECTORY`), pointed at the private
//! bus and at a directory of stand-in device names that link to pseudo-terminals. Checked: a
//! plugged-in board is added under its port and removed on unplug; a tty the daemon already
//! serves (a board given on the command line, under another name) is neither added twice nor
//! removed on unplug; unplugging while the daemon is gone succeeds; bad arguments are refused.
//! Needs `dbus-daemon` and `busctl`; skips with a printed reason without them (under `CI=true`
//! that is a failure).

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::Setup;

const MANAGER_PATH: &str = "/org/eboardd/Bridge1";

/// The helper as its unit runs it, against `address` and the stand-in device dir.
struct Helper {
    address: String,
    dev: PathBuf,
    run: PathBuf,
}

impl Helper {
    /// Runs `eboardd-board ARGS` with the runtime directory of unit instance `unit`.
    async fn run(&self, args: &[&str], unit: &str) -> Output {
        let runtime = self.run.join(unit);
        std::fs::create_dir_all(&runtime).expect("runtime dir");
        let mut cmd = tokio::process::Command::new("sh");
        cmd.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("systemd/eboardd-board"))
            .args(args)
            .env("EBOARDD_BUS", format!("--address={}", self.address))
            .env("EBOARDD_DEV_DIR", &self.dev)
            .env("RUNTIME_DIRECTORY", &runtime);
        common::within(common::WAIT, "eboardd-board", cmd.output())
            .await
            .expect("running eboardd-board")
    }

    fn kept(&self, unit: &str) -> Option<String> {
        std::fs::read_to_string(self.run.join(unit).join("path"))
            .ok()
            .map(|s| s.trim().to_owned())
    }
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn ok(out: &Output, what: &str) -> String {
    let text = text(out);
    assert!(out.status.success(), "{what} failed: {text}");
    text
}

/// The board object paths eboardd serves now.
async fn boards(conn: &zbus::Connection) -> Vec<String> {
    let proxy = zbus::fdo::ObjectManagerProxy::builder(conn)
        .destination("org.eboardd.Bridge1")
        .path(MANAGER_PATH)
        .build()
        .await
        .expect("object manager proxy");
    let objects = proxy
        .get_managed_objects()
        .await
        .expect("GetManagedObjects");
    let mut paths: Vec<String> = objects
        .keys()
        .map(|p| p.as_str().to_owned())
        .filter(|p| p.starts_with(&format!("{MANAGER_PATH}/Board/")))
        .collect();
    paths.sort();
    paths
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hotplug_helper_adds_and_removes_boards() {
    if !common::require::require_tools(&[("dbus-daemon", "dbus"), ("busctl", "systemd")]) {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let dev = dir.path().join("dev");
    std::fs::create_dir(&dev).expect("dev dir");
    // Two ttys: the master sides keep them alive; only eboardd opens the slave sides.
    let mut masters = Vec::new();
    for tty in ["ttyACM0", "ttyACM1"] {
        let (master, slave) = serialport::TTYPort::pair().expect("pseudo-terminal");
        let name = serialport::SerialPort::name(&slave).expect("pty name");
        drop(slave);
        std::os::unix::fs::symlink(&name, dev.join(tty)).expect("device link");
        masters.push(master);
    }
    // A board eboardd serves from the start, on ttyACM1 under a name of its own.
    let table = dir.path().join("table-7");
    std::os::unix::fs::symlink(dev.join("ttyACM1"), &table).expect("link");
    let table = table.display().to_string();
    let mut setup = Setup::start_in(dir, &["--port", &table]).await;
    let configured = format!("{MANAGER_PATH}/Board/table_7");
    assert_eq!(boards(&setup.conn).await, vec![configured.clone()]);

    let helper = Helper {
        address: setup.bus.address.clone(),
        dev: dev.clone(),
        run: setup.dir.path().join("run"),
    };

    // Plugged in: added under its port, the object path kept for the unplug.
    let out = helper.run(&["attach", "ttyACM0"], "ttyACM0").await;
    let said = ok(&out, "attach ttyACM0");
    let added = format!("{MANAGER_PATH}/Board/ttyACM0");
    assert_eq!(
        helper.kept("ttyACM0").as_deref(),
        Some(added.as_str()),
        "{said}"
    );
    assert_eq!(
        boards(&setup.conn).await,
        vec![configured.clone(), added.clone()]
    );
    let port: String = setup
        .conn
        .call_method(
            Some("org.eboardd.Bridge1"),
            added.as_str(),
            Some("org.freedesktop.DBus.Properties"),
            "Get",
            &("org.eboardd.Bridge1.Board", "Port"),
        )
        .await
        .expect("Port")
        .body()
        .deserialize::<zbus::OwnedVariant>()
        .ok()
        .and_then(|v| String::try_from(&*v).ok())
        .expect("Port is a string");
    assert_eq!(port, dev.join("ttyACM0").display().to_string());

    // The configured board's tty: left to the daemon, both ways.
    let out = helper.run(&["attach", "ttyACM1"], "ttyACM1").await;
    let said = ok(&out, "attach ttyACM1");
    assert!(
        said.contains(&format!("already served as {configured}")),
        "{said}"
    );
    assert_eq!(helper.kept("ttyACM1"), None);
    let out = helper.run(&["detach", "ttyACM1"], "ttyACM1").await;
    ok(&out, "detach ttyACM1");
    assert_eq!(
        boards(&setup.conn).await,
        vec![configured.clone(), added.clone()]
    );

    // Unplugged: exactly the added board goes.
    let out = helper.run(&["detach", "ttyACM0"], "ttyACM0").await;
    ok(&out, "detach ttyACM0");
    assert_eq!(helper.kept("ttyACM0"), None);
    assert_eq!(boards(&setup.conn).await, vec![configured.clone()]);

    // Bad input is refused before anything is called.
    for bad in [
        &["attach", "../ttyACM0"][..],
        &["attach", "ttyACM0", "x"][..],
        &["attach"][..],
        &["frobnicate", "x"][..],
    ] {
        let out = helper.run(bad, "bad").await;
        assert!(
            !out.status.success(),
            "{bad:?} was accepted: {}",
            text(&out)
        );
    }
    // A tty that vanished before its unit ran.
    let out = helper.run(&["attach", "ttyACM5"], "ttyACM5").await;
    assert!(!out.status.success(), "attach of a missing tty succeeded");
    assert_eq!(boards(&setup.conn).await, vec![configured.clone()]);

    // Plugged in again, then eboardd stops first (as on `systemctl stop eboardd`): the unplug
    // still succeeds.
    let out = helper.run(&["attach", "ttyACM0"], "ttyACM0").await;
    ok(&out, "attach ttyACM0 again");
    assert_eq!(helper.kept("ttyACM0").as_deref(), Some(added.as_str()));
    setup.daemon.signal(nix::sys::signal::Signal::SIGTERM);
    let status = setup.daemon.wait(common::WAIT).await;
    assert!(status.success(), "eboardd exited with {status}");
    let out = helper.run(&["detach", "ttyACM0"], "ttyACM0").await;
    let said = ok(&out, "detach without a daemon");
    assert!(said.contains("could not remove"), "{said}");
    drop(masters);
}
