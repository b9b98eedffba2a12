//! The hot-plug helper (`systemd/eboardd-board`, run by `eboardd-board@.service`) against a bus.
//!
//! A private dbus-daemon and a stand-in manager with the contract's `AddBoard`/`RemoveBoard`
//! and board `Port` property; the helper runs as systemd would run it (with
//! `RUNTIME_DIRECTORY`), pointed at the private bus and at a directory of stand-in device
//! nodes. Checked: a plugged board is added under its port and removed on unplug; a port the
//! daemon already serves (a configured board) is neither added twice nor removed on unplug;
//! unplugging while the daemon is gone succeeds; bad kernel names are refused.
//! Needs `dbus-daemon` and `busctl`; skips with a printed reason without them.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const MANAGER_PATH: &str = "/org/eboardd/Bridge1";

/// Calls the stand-in received, in order.
type Calls = Arc<Mutex<Vec<String>>>;

struct Manager {
    calls: Calls,
}

/// The contract's object id: the port's file name with everything outside [A-Za-z0-9_]
/// replaced by `_`.
fn board_id(port: &str) -> String {
    let name = Path::new(port)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("board");
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[zbus::interface(name = "org.eboardd.Bridge1")]
impl Manager {
    async fn add_board(
        &self,
        port: String,
        #[zbus(object_server)] server: &zbus::ObjectServer,
    ) -> zbus::fdo::Result<zbus::OwnedObjectPath> {
        let path = format!("{MANAGER_PATH}/Board/{}", board_id(&port));
        self.calls
            .lock()
            .map_err(|e| zbus::fdo::Error::Failed(e.to_string()))?
            .push(format!("AddBoard {port}"));
        server
            .at(path.as_str(), Board { port })
            .await
            .map_err(|e| zbus::fdo::Error::Failed(e.to_string()))?;
        zbus::OwnedObjectPath::try_from(path).map_err(|e| zbus::fdo::Error::Failed(e.to_string()))
    }

    async fn remove_board(
        &self,
        board: zbus::OwnedObjectPath,
        #[zbus(object_server)] server: &zbus::ObjectServer,
    ) -> zbus::fdo::Result<()> {
        self.calls
            .lock()
            .map_err(|e| zbus::fdo::Error::Failed(e.to_string()))?
            .push(format!("RemoveBoard {}", board.as_str()));
        let removed = server
            .remove::<Board, _>(board.as_str())
            .await
            .map_err(|e| zbus::fdo::Error::Failed(e.to_string()))?;
        if removed {
            Ok(())
        } else {
            Err(zbus::fdo::Error::InvalidArgs(format!(
                "no board {}",
                board.as_str()
            )))
        }
    }
}

struct Board {
    port: String,
}

#[zbus::interface(name = "org.eboardd.Bridge1.Board")]
impl Board {
    #[zbus(property)]
    fn port(&self) -> String {
        self.port.clone()
    }
}

struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn have(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program} >/dev/null")])
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// A private allow-all bus; returns the process and its address.
fn start_bus(dir: &Path) -> (Reaped, String) {
    let config = dir.join("bus.conf");
    std::fs::write(
        &config,
        format!(
            r#"<busconfig>
  <type>session</type>
  <listen>unix:path={}/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"#,
            dir.display()
        ),
    )
    .expect("bus config");
    let mut bus = Command::new("dbus-daemon")
        .arg(format!("--config-file={}", config.display()))
        .args(["--nofork", "--print-address"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting dbus-daemon");
    let mut line = String::new();
    BufReader::new(bus.stdout.take().expect("stdout is piped"))
        .read_line(&mut line)
        .expect("reading the bus address");
    (Reaped(bus), line.trim().to_owned())
}

/// Runs the helper as its unit would, against the private bus and the stand-in device dir.
fn helper(address: &str, dev: &Path, runtime: &Path, args: &[&str]) -> Output {
    std::fs::create_dir_all(runtime).expect("runtime dir");
    Command::new("sh")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("systemd/eboardd-board"))
        .args(args)
        .env("EBOARDD_BUS", format!("--address={address}"))
        .env("EBOARDD_DEV_DIR", dev)
        .env("RUNTIME_DIRECTORY", runtime)
        .output()
        .expect("running eboardd-board")
}

fn ok(out: &Output, what: &str) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{what} failed: {text}");
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hotplug_helper_adds_and_removes_boards() {
    for tool in ["dbus-daemon", "busctl"] {
        if !have(tool) {
            eprintln!("skipped: {tool} is not installed");
            return;
        }
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let dev = dir.path().join("dev");
    std::fs::create_dir(&dev).expect("dev dir");
    for tty in ["ttyACM0", "ttyACM1"] {
        std::fs::write(dev.join(tty), "").expect("stand-in device node");
    }
    let (bus, address) = start_bus(dir.path());

    let calls = Calls::default();
    let conn = zbus::connection::Builder::address(address.as_str())
        .name("org.eboardd.Bridge1")
        .serve_at(
            MANAGER_PATH,
            Manager {
                calls: calls.clone(),
            },
        )
        .build()
        .await
        .expect("stand-in daemon on the private bus");
    // A configured board the daemon serves by itself, on ttyACM1 under another name.
    std::os::unix::fs::symlink(dev.join("ttyACM1"), dir.path().join("table-7")).expect("symlink");
    let configured = format!("{MANAGER_PATH}/Board/board_7");
    conn.object_server()
        .at(
            configured.as_str(),
            Board {
                port: dir.path().join("table-7").display().to_string(),
            },
        )
        .await
        .expect("configured board");

    let run = |args: &'static [&'static str], unit: &str| {
        let address = address.clone();
        let dev = dev.clone();
        let runtime = dir.path().join("run").join(unit);
        tokio::task::spawn_blocking(move || helper(&address, &dev, &runtime, args))
    };

    // Plugged in: added under its port, the object path kept for unplugging.
    let out = run(&["attach", "ttyACM0"], "ttyACM0").await.expect("join");
    let text = ok(&out, "attach ttyACM0");
    let port0 = dev.join("ttyACM0").display().to_string();
    assert_eq!(
        calls.lock().expect("calls").clone(),
        vec![format!("AddBoard {port0}")]
    );
    let kept = std::fs::read_to_string(dir.path().join("run/ttyACM0/path")).expect("path kept");
    assert_eq!(
        kept.trim(),
        format!("{MANAGER_PATH}/Board/ttyACM0"),
        "{text}"
    );

    // The configured board's device: left to the daemon, both ways.
    let out = run(&["attach", "ttyACM1"], "ttyACM1").await.expect("join");
    let text = ok(&out, "attach ttyACM1");
    assert!(text.contains("already served as"), "{text}");
    assert!(!dir.path().join("run/ttyACM1/path").exists());
    let out = run(&["detach", "ttyACM1"], "ttyACM1").await.expect("join");
    ok(&out, "detach ttyACM1");
    assert_eq!(
        calls.lock().expect("calls").len(),
        1,
        "nothing added or removed for ttyACM1"
    );

    // Unplugged: exactly the added board is removed.
    let out = run(&["detach", "ttyACM0"], "ttyACM0").await.expect("join");
    ok(&out, "detach ttyACM0");
    assert_eq!(
        calls.lock().expect("calls").last().cloned(),
        Some(format!("RemoveBoard {MANAGER_PATH}/Board/ttyACM0"))
    );
    assert!(!dir.path().join("run/ttyACM0/path").exists());
    let still = conn
        .object_server()
        .interface::<_, Board>(configured.as_str())
        .await;
    assert!(still.is_ok(), "the configured board must stay");

    // Bad input is refused before anything is called.
    for bad in [
        &["attach", "../ttyACM0"][..],
        &["attach"][..],
        &["frobnicate", "x"][..],
    ] {
        let out = run(bad, "bad").await.expect("join");
        assert!(!out.status.success(), "{bad:?} was accepted");
    }

    // A device that vanished before the unit ran.
    let out = run(&["attach", "ttyACM5"], "ttyACM5").await.expect("join");
    assert!(
        !out.status.success(),
        "attach of a missing device succeeded"
    );

    // Attached, then the daemon goes away: unplugging must still succeed.
    let out = run(&["attach", "ttyACM0"], "ttyACM0").await.expect("join");
    ok(&out, "attach ttyACM0 again");
    drop(conn);
    drop(bus);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let out = run(&["detach", "ttyACM0"], "ttyACM0").await.expect("join");
    let text = ok(&out, "detach without a daemon");
    assert!(text.contains("could not remove"), "{text}");
}
