//! End-to-end: command line and process behaviour — exit codes 0/1/2, messages naming what
//! is wrong, shutdown on SIGTERM/SIGINT.

mod common;

use std::time::Duration;

use common::{Bus, Daemon, Setup, code};
use nix::sys::signal::Signal;

async fn run_to_exit(args: &[&str]) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let mut d = Daemon::spawn_raw(dir.path(), &args);
    let status = d.wait(Duration::from_secs(10)).await;
    (code(status), d.stderr())
}

#[tokio::test]
async fn bad_arguments_exit_2_with_a_message() {
    for (args, needle) in [
        (&["--rules", "bullet"][..], "bullet"),
        (&["--bus", "sesion"][..], "sesion"),
        (&["--log-format", "xml"][..], "xml"),
        (&["--no-such-flag"][..], "--no-such-flag"),
        (&["--port"][..], "--port"),
    ] {
        let (c, err) = run_to_exit(args).await;
        assert_eq!(c, 2, "{args:?}: {err}");
        assert!(
            err.contains(needle),
            "{args:?}: message should name {needle:?}: {err}"
        );
    }
}

#[tokio::test]
async fn help_and_version_exit_0() {
    assert_eq!(run_to_exit(&["--help"]).await.0, 0);
    let (c, _) = run_to_exit(&["--version"]).await;
    assert_eq!(c, 0);
}

#[tokio::test]
async fn missing_configuration_file_exits_2_naming_it() {
    let (c, err) = run_to_exit(&["--config", "/nonexistent/eboardd.toml"]).await;
    assert_eq!(c, 2, "{err}");
    assert!(err.contains("/nonexistent/eboardd.toml"), "{err}");
}

#[tokio::test]
async fn bad_configuration_exits_2_naming_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("eboardd.toml");
    std::fs::write(
        &path,
        "[daemon]\nrules = \"standard\"\n\n[[board]]\nport = \"/dev/x\"\ncolour = \"red\"\n",
    )
    .unwrap();
    let p = path.display().to_string();
    let (c, err) = run_to_exit(&["--config", &p]).await;
    assert_eq!(c, 2, "{err}");
    assert!(
        err.contains(&format!("{p}:6")),
        "names the file and line: {err}"
    );
    assert!(err.contains("colour"), "names the key: {err}");
}

#[tokio::test]
async fn duplicate_board_ids_exit_2() {
    let (c, err) = run_to_exit(&["--port", "/dev/x/b-1", "--port", "/dev/y/b_1"]).await;
    assert_eq!(c, 2, "{err}");
    assert!(err.contains("b_1"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_and_sigint_exit_0_promptly() {
    for sig in [Signal::SIGTERM, Signal::SIGINT] {
        let mut s = Setup::start(&["--port", "/nonexistent/x"]).await;
        let t = std::time::Instant::now();
        s.daemon.signal(sig);
        let status = s.daemon.wait(Duration::from_secs(5)).await;
        assert_eq!(code(status), 0, "{sig}: {}", s.daemon.stderr());
        // Not a wall-clock assertion on the test's success, only a diagnostic.
        eprintln!("{sig}: exited in {:?}", t.elapsed());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_daemon_on_the_same_bus_exits_1() {
    let s = Setup::start(&[]).await;
    let mut second = Daemon::spawn(&s.bus, s.dir.path(), &[]);
    let status = second.wait(Duration::from_secs(10)).await;
    assert_eq!(code(status), 1, "{}", second.stderr());
    assert!(
        second.stderr().contains("already owned"),
        "{}",
        second.stderr()
    );
}

#[tokio::test]
async fn unreachable_bus_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let addr = format!("unix:path={}/no-bus", dir.path().display());
    let (c, err) = run_to_exit(&[
        "--bus",
        &addr,
        "--state-dir",
        &dir.path().display().to_string(),
    ])
    .await;
    assert_eq!(c, 1, "{err}");
    assert!(err.contains("cannot connect"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unusable_state_dir_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let bus = Bus::start(dir.path()).await;
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let state = file.join("state").display().to_string();
    let args = vec![
        "--bus".to_string(),
        bus.address.clone(),
        "--state-dir".into(),
        state,
    ];
    let mut d = Daemon::spawn_raw(dir.path(), &args);
    let status = d.wait(Duration::from_secs(10)).await;
    assert_eq!(code(status), 1, "{}", d.stderr());
    assert!(d.stderr().contains("state directory"), "{}", d.stderr());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn losing_the_bus_exits_1() {
    let mut s = Setup::start(&["--port", "/nonexistent/x"]).await;
    s.bus.kill();
    let status = s.daemon.wait(Duration::from_secs(10)).await;
    assert_eq!(code(status), 1, "{}", s.daemon.stderr());
    assert!(s.daemon.stderr().contains("bus"), "{}", s.daemon.stderr());
}

/// Start a daemon with exactly these extra arguments (no `--log-format` from the harness).
async fn start_raw(dir: &std::path::Path, bus: &Bus, extra: &[&str]) -> Daemon {
    let mut args = vec![
        "--bus".to_string(),
        bus.address.clone(),
        "--state-dir".to_string(),
        dir.join("state").display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let mut d = Daemon::spawn_raw(dir, &args);
    let conn = bus.client().await;
    d.wait_for_name(&conn).await;
    d
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_logs_are_json_lines() {
    let dir = tempfile::tempdir().unwrap();
    let bus = Bus::start(dir.path()).await;
    let mut d = start_raw(
        dir.path(),
        &bus,
        &["--log-format", "json", "--port", "/nonexistent/j"],
    )
    .await;
    d.signal(Signal::SIGTERM);
    assert_eq!(code(d.wait(Duration::from_secs(5)).await), 0);
    let log = d.stderr();
    let lines: Vec<&str> = log.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(!lines.is_empty());
    for line in lines {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(v.get("level").is_some(), "{line}");
    }
    assert!(
        log.contains("\"board\""),
        "the board span is in the JSON: {log}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn journald_format_runs_with_or_without_a_journal() {
    let dir = tempfile::tempdir().unwrap();
    let bus = Bus::start(dir.path()).await;
    let mut d = start_raw(dir.path(), &bus, &["--log-format", "journald"]).await;
    d.signal(Signal::SIGTERM);
    assert_eq!(
        code(d.wait(Duration::from_secs(5)).await),
        0,
        "{}",
        d.stderr()
    );
    if !std::path::Path::new("/run/systemd/journal/socket").exists() {
        assert!(
            d.stderr().contains("journald"),
            "falls back to text: {}",
            d.stderr()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_is_notified_once_the_name_is_owned() {
    let dir = tempfile::tempdir().unwrap();
    let bus = Bus::start(dir.path()).await;
    let socket_path = dir.path().join("notify");
    let socket = tokio::net::UnixDatagram::bind(&socket_path).unwrap();
    let mut cmd = tokio::process::Command::new(common::eboardd());
    cmd.args([
        "--bus",
        &bus.address,
        "--state-dir",
        &dir.path().join("state").display().to_string(),
        "--port",
        "/nonexistent/n",
    ])
    .env("NOTIFY_SOCKET", &socket_path)
    .stdin(std::process::Stdio::null())
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null())
    .kill_on_drop(true);
    common::die_with_parent(&mut cmd);
    let _child = cmd.spawn().unwrap();
    let mut buf = [0u8; 256];
    let n = common::within(common::WAIT, "READY=1", socket.recv(&mut buf))
        .await
        .unwrap();
    let message = String::from_utf8_lossy(&buf[..n]);
    assert!(message.contains("READY=1"), "{message}");
    // By then the name is owned and the boards are on the bus.
    let conn = bus.client().await;
    let dbus = zbus::fdo::DBusProxy::new(&conn).await.unwrap();
    assert!(
        dbus.name_has_owner("org.eboardd.Bridge1".try_into().unwrap())
            .await
            .unwrap()
    );
    let b = common::proxies::fresh(&conn, "n").await;
    assert_eq!(b.port().await.unwrap(), "/nonexistent/n");
}

/// `--bus session` on a machine without a session bus (over SSH, a headless rig): exit 1 with a
/// message that says how to get one, from eboardd and from eboardctl alike.
#[tokio::test]
async fn no_session_bus_says_how_to_get_one() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = dir.path().join("runtime");
    std::fs::create_dir(&runtime).unwrap();
    let state = dir.path().join("state");
    for (program, args) in [
        (
            common::eboardd(),
            vec![
                "--bus",
                "session",
                "--port",
                "/nonexistent/dgt0",
                "--state-dir",
                state.to_str().unwrap(),
            ],
        ),
        (
            env!("CARGO_BIN_EXE_eboardctl"),
            vec!["--bus", "session", "list"],
        ),
    ] {
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(&args)
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .env_remove("DISPLAY")
            .env("XDG_RUNTIME_DIR", &runtime)
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true);
        common::die_with_parent(&mut cmd);
        let out = common::within(Duration::from_secs(20), program, cmd.output())
            .await
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{program}: {err}");
        assert!(
            err.contains("no session bus") && err.contains("dbus-run-session -- bash"),
            "{program}: names the way out: {err}"
        );
        assert!(
            err.contains(&runtime.join("bus").display().to_string()),
            "{program}: says where it looked: {err}"
        );
    }
    assert!(
        std::fs::read_dir(&runtime).unwrap().next().is_none(),
        "nothing was created in the runtime directory"
    );
}
