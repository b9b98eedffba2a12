//! End-to-end: the daemon on a private bus — its name, the manager object, the
//! ObjectManager, adding and removing boards, and the board properties.

mod common;

use common::proxies::{self, ManagerProxy};
use common::{Setup, WAIT, next, within};
use zbus::fdo::ObjectManagerProxy;

const BOARD_IFACE: &str = "org.eboardd.Bridge1.Board";

async fn object_manager(conn: &zbus::Connection) -> ObjectManagerProxy<'static> {
    ObjectManagerProxy::builder(conn)
        .destination("org.eboardd.Bridge1")
        .path("/org/eboardd/Bridge1")
        .build()
        .await
        .unwrap()
}

/// The object paths that carry the board interface.
async fn board_paths(om: &ObjectManagerProxy<'_>) -> Vec<String> {
    let objects = om.get_managed_objects().await.unwrap();
    let mut paths: Vec<String> = objects
        .into_iter()
        .filter(|(_, ifaces)| ifaces.keys().any(|i| i.as_str() == BOARD_IFACE))
        .map(|(p, _)| p.to_string())
        .collect();
    paths.sort();
    paths
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn name_version_and_configured_boards() {
    let s = Setup::start(&[
        "--port",
        "/nonexistent/ttyACM0",
        "--port",
        "/nonexistent/board.2",
    ])
    .await;
    let manager = ManagerProxy::new(&s.conn).await.unwrap();
    assert_eq!(manager.version().await.unwrap(), env!("CARGO_PKG_VERSION"));

    let om = object_manager(&s.conn).await;
    assert_eq!(
        board_paths(&om).await,
        [
            "/org/eboardd/Bridge1/Board/board_2",
            "/org/eboardd/Bridge1/Board/ttyACM0"
        ]
    );

    // Properties are readable on a board whose device is absent.
    let b = proxies::board(&s.conn, "board_2").await;
    assert_eq!(b.name().await.unwrap(), "board.2");
    assert_eq!(b.port().await.unwrap(), "/nonexistent/board.2");
    assert!(!b.connected().await.unwrap());
    assert_eq!(b.result().await.unwrap(), "*");
    assert!(["white", "black"].contains(&b.turn().await.unwrap().as_str()));
    assert!(["waiting", "playing", "finished"].contains(&b.state().await.unwrap().as_str()));
    assert!(["white", "black", "none"].contains(&b.clock_running().await.unwrap().as_str()));
    let _: (u32, u32) = b.illegal_moves().await.unwrap();
    let _: Vec<(String, String, String)> = b.claims().await.unwrap();
    let _: Vec<String> = b.moves().await.unwrap();
    let _: u64 = b.white_time_ms().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_and_remove_boards() {
    let s = Setup::start(&[]).await;
    let manager = ManagerProxy::new(&s.conn).await.unwrap();
    let om = object_manager(&s.conn).await;
    assert!(board_paths(&om).await.is_empty());

    let mut added = om.receive_interfaces_added().await.unwrap();
    let mut removed = om.receive_interfaces_removed().await.unwrap();

    let path = manager.add_board("/nonexistent/dgt-board.1").await.unwrap();
    assert_eq!(path.as_str(), "/org/eboardd/Bridge1/Board/dgt_board_1");
    let signal = within(WAIT, "InterfacesAdded", async {
        loop {
            let s = next(&mut added).await.unwrap();
            let args = s.args().unwrap();
            if args.interfaces_and_properties().contains_key(BOARD_IFACE) {
                return args.object_path().to_string();
            }
        }
    })
    .await;
    assert_eq!(signal, path.as_str());
    assert_eq!(board_paths(&om).await, [path.to_string()]);
    let b = proxies::board(&s.conn, "dgt_board_1").await;
    assert_eq!(b.name().await.unwrap(), "dgt-board.1");

    // The same port, or another port with the same object id, is refused.
    let e = manager
        .add_board("/nonexistent/dgt-board.1")
        .await
        .unwrap_err();
    assert_eq!(
        proxies::error_name(&e),
        "org.eboardd.Bridge1.Error.InvalidArgument"
    );
    let e = manager.add_board("/other/dgt-board_1").await.unwrap_err();
    assert_eq!(
        proxies::error_name(&e),
        "org.eboardd.Bridge1.Error.InvalidArgument"
    );
    assert!(proxies::error_message(&e).contains("dgt_board_1"), "{e}");
    // A relative path cannot be served by a system daemon.
    let e = manager.add_board("ttyACM0").await.unwrap_err();
    assert_eq!(
        proxies::error_name(&e),
        "org.eboardd.Bridge1.Error.InvalidArgument"
    );
    let e = manager.add_board("").await.unwrap_err();
    assert_eq!(
        proxies::error_name(&e),
        "org.eboardd.Bridge1.Error.InvalidArgument"
    );

    manager.remove_board(&path.as_ref()).await.unwrap();
    let gone = within(WAIT, "InterfacesRemoved", async {
        loop {
            let s = next(&mut removed).await.unwrap();
            let args = s.args().unwrap();
            if args.interfaces().iter().any(|i| i.as_str() == BOARD_IFACE) {
                return args.object_path().to_string();
            }
        }
    })
    .await;
    assert_eq!(gone, path.as_str());
    assert!(board_paths(&om).await.is_empty());

    // Removing it again, or something that is not a board, is an InvalidArgument.
    let e = manager.remove_board(&path.as_ref()).await.unwrap_err();
    assert_eq!(
        proxies::error_name(&e),
        "org.eboardd.Bridge1.Error.InvalidArgument"
    );
    let e = manager
        .remove_board(&"/org/eboardd/Bridge1".try_into().unwrap())
        .await
        .unwrap_err();
    assert_eq!(
        proxies::error_name(&e),
        "org.eboardd.Bridge1.Error.InvalidArgument"
    );

    // And it can be added back.
    let again = manager.add_board("/nonexistent/dgt-board.1").await.unwrap();
    assert_eq!(again, path);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_calls_are_refused_and_harmless() {
    let mut s = Setup::start(&["--port", "/nonexistent/m"]).await;
    let raw = zbus::Proxy::new(
        &s.conn,
        "org.eboardd.Bridge1",
        "/org/eboardd/Bridge1/Board/m",
        BOARD_IFACE,
    )
    .await
    .unwrap();
    // Wrong argument types, too many and too few arguments, unknown members.
    assert!(raw.call_method("SetPosition", &(42u32,)).await.is_err());
    assert!(raw.call_method("SetPosition", &("a", "b")).await.is_err());
    assert!(raw.call_method("AcceptClaim", &("white",)).await.is_err());
    assert!(raw.call_method("SetTags", &("not a dict",)).await.is_err());
    assert!(raw.call_method("NoSuchMethod", &()).await.is_err());
    // Properties are read-only.
    let props = zbus::fdo::PropertiesProxy::builder(&s.conn)
        .destination("org.eboardd.Bridge1")
        .path("/org/eboardd/Bridge1/Board/m")
        .build()
        .await
        .unwrap();
    let iface = zbus::names::InterfaceName::try_from(BOARD_IFACE).unwrap();
    let value = zbus::Variant::from("1-0");
    assert!(props.set(iface.clone(), "Result", &value).await.is_err());
    assert!(props.get(iface, "NoSuchProperty").await.is_err());
    // A long argument is just refused or handled, never fatal.
    let long = "x".repeat(1 << 20);
    let _ = raw.call_method("SetPosition", &(long.as_str(),)).await;
    let manager = ManagerProxy::new(&s.conn).await.unwrap();
    let _ = manager.add_board(&format!("/{long}")).await;

    assert!(s.daemon.exited().is_none(), "{}", s.daemon.stderr());
    let b = proxies::board(&s.conn, "m").await;
    assert_eq!(b.result().await.unwrap(), "*");
    assert_eq!(manager.version().await.unwrap(), env!("CARGO_PKG_VERSION"));
}

/// Ends the processes a shell started for a test (by their ids), also when the test fails.
struct Pids(Vec<i32>);

impl Drop for Pids {
    fn drop(&mut self) {
        for pid in &self.0 {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(*pid),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
    }
}

/// The README's second recipe on a machine without a session bus, as it says to run it: in a
/// shell started by `dbus-run-session`, a simulated board on a pty link, `eboardd --bus
/// session --port LINK --state-dir DIR`, and a client with `--bus session` in that same
/// session answers with the board.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_recipe_works_under_dbus_run_session() {
    use tokio::io::{AsyncBufReadExt, BufReader};

    let dir = tempfile::tempdir().unwrap();
    let runtime = dir.path().join("runtime");
    std::fs::create_dir(&runtime).unwrap();
    let link = dir.path().join("dgt0");
    let state = dir.path().join("eb");
    let eboardctl = env!("CARGO_BIN_EXE_eboardctl");
    // The recipe's lines, with the simulator's id and the session's address told to the test.
    let script = r#"
        "$1" simulate --link "$3" &
        printf '%s %s\n' "$!" "$DBUS_SESSION_BUS_ADDRESS"
        exec "$2" --bus session --port "$3" --state-dir "$4"
    "#;
    let mut cmd = tokio::process::Command::new("dbus-run-session");
    cmd.args(["--", "sh", "-c", script, "sh", eboardctl, common::eboardd()])
        .arg(&link)
        .arg(&state)
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .env("XDG_RUNTIME_DIR", &runtime)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    common::die_with_parent(&mut cmd);
    let mut session = cmd.spawn().expect("dbus-run-session (Debian package dbus)");
    let mut out = BufReader::new(session.stdout.take().unwrap());
    let mut line = String::new();
    within(WAIT, "the session's address", out.read_line(&mut line))
        .await
        .unwrap();
    let (sim, address) = line.trim().split_once(' ').expect("pid and address");
    let mut pids = Pids(vec![sim.parse().unwrap()]);
    let conn = zbus::connection::Builder::address(address)
        .build()
        .await
        .unwrap();
    let dbus = zbus::fdo::DBusProxy::new(&conn).await.unwrap();
    let mut owners = dbus.receive_name_owner_changed().await.unwrap();
    if !dbus
        .name_has_owner("org.eboardd.Bridge1".try_into().unwrap())
        .await
        .unwrap()
    {
        within(WAIT, "eboardd on the session bus", async {
            loop {
                let s = next(&mut owners).await.unwrap();
                let args = s.args().unwrap();
                if args.name().as_str() == "org.eboardd.Bridge1" && args.new_owner().is_some() {
                    return;
                }
            }
        })
        .await;
    }
    let owner = dbus
        .get_connection_unix_process_id("org.eboardd.Bridge1".try_into().unwrap())
        .await
        .unwrap();
    pids.0.push(owner as i32);
    let b = proxies::board(&conn, "dgt0").await;
    let mut connected = b.receive_connected_changed().await;
    common::wait_property(&mut connected, "the simulated board connected", |c| *c).await;

    // A client in that session (`--bus session` finds it through the environment).
    let status = tokio::process::Command::new(eboardctl)
        .args(["--bus", "session", "status", "dgt0"])
        .env("DBUS_SESSION_BUS_ADDRESS", address)
        .env("XDG_RUNTIME_DIR", &runtime)
        .stdin(std::process::Stdio::null())
        .output();
    let status = within(WAIT, "eboardctl status", status).await.unwrap();
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(
        status.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&status.stderr)
    );
    assert!(text.contains("dgt0"), "{text}");

    // SIGTERM to eboardd ends the session cleanly: it exits 0, and so does dbus-run-session.
    let daemon = pids.0.pop().unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(daemon),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let exit = within(WAIT, "dbus-run-session to end", session.wait())
        .await
        .unwrap();
    assert!(exit.success(), "{exit}");
}
