//! End-to-end: every method's arguments are bounded. On a private bus run as the system bus
//! (the shipped policy, the daemon as user `eboardd`), a caller in group `eboardd` calls every
//! method with an argument of 40 MB — on a bus whose `max_message_size` lets it through — and of
//! just under the system bus's 32 MiB on a bus with the default limit. Each call is refused
//! with the contract's error for the method (`InvalidArgument`; `InvalidFen` for `SetPosition`,
//! `ClaimNotAvailable` for `AcceptClaim`; the bus's `InvalidArgs` for an extra argument to a
//! method that takes none) and a short message; the daemon keeps its name (an error that echoed
//! the argument would be larger than the bus allows, and the bus would drop the daemon with
//! every board), its log shows it received each call, and its board goes on (`Properties.Set`
//! and an unknown method with the same argument get zbus's own short errors): a piece lifted on
//! it is seen, and small calls still work.
//!
//! It needs root (to switch users), `setpriv` and `dbus-daemon`; without them it prints why and
//! passes, except under `CI=true`, where that fails. The same test binary plays the caller:
//! `bounds_role` does nothing unless the environment names the role.

mod common;

use std::collections::HashMap;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use common::board::FakeBoard;
use common::sysbus::{
    NOBODY, PARTY_WAIT, Reaped, SYSTEM_MAX_MESSAGE, ServiceUser, SystemBus, as_user, install_copy,
};

const ROLE_ENV: &str = "EBOARDD_BOUNDS_TEST_ROLE";
const BUS_ENV: &str = "EBOARDD_BOUNDS_TEST_BUS";
const SIZE_ENV: &str = "EBOARDD_BOUNDS_TEST_SIZE";
const SERVICE: &str = "org.eboardd.Bridge1";
const MANAGER_PATH: &str = "/org/eboardd/Bridge1";
/// The board the calls go to: a simulated board with a DGT 3000, so that a clock message
/// reaches the clock's own checks.
const BOARD_PATH: &str = "/org/eboardd/Bridge1/Board/tc";
const BOARD_IFACE: &str = "org.eboardd.Bridge1.Board";
const INVALID_ARGUMENT: &str = "org.eboardd.Bridge1.Error.InvalidArgument";
const INVALID_ARGS: &str = "org.freedesktop.DBus.Error.InvalidArgs";
const INVALID_FEN: &str = "org.eboardd.Bridge1.Error.InvalidFen";
const NOT_AVAILABLE: &str = "org.eboardd.Bridge1.Error.ClaimNotAvailable";
/// Every refusal is a sentence, not an echo: far under this.
const SHORT: usize = 400;

mod caller {
    use super::*;

    /// The name and message of a failed call, whether zbus maps the name or not.
    fn name_and_message(e: &zbus::Error) -> (String, String) {
        match e {
            zbus::Error::MethodError(name, msg, _) => {
                (name.to_string(), msg.clone().unwrap_or_default())
            }
            zbus::Error::FDO(fdo) => {
                use zbus::DBusError;
                (
                    fdo.name().to_string(),
                    fdo.description().unwrap_or_default().to_owned(),
                )
            }
            other => (format!("not a method error: {other}"), String::new()),
        }
    }

    async fn owner(conn: &zbus::Connection) -> Result<String, String> {
        let dbus = zbus::fdo::DBusProxy::new(conn)
            .await
            .map_err(|e| e.to_string())?;
        dbus.get_name_owner(SERVICE.try_into().unwrap())
            .await
            .map(|o| o.to_string())
            .map_err(|e| format!("{SERVICE} has no owner: {e}"))
    }

    /// One call that must be refused with `want` and a short message, the daemon keeping its
    /// name (the same connection: it was not dropped and restarted).
    async fn refused<B>(
        conn: &zbus::Connection,
        owner_before: &str,
        label: &str,
        (path, iface, method): (&str, &str, &str),
        body: &B,
        want: &str,
    ) -> Result<(), String>
    where
        B: serde::Serialize + zbus::zvariant::DynamicType,
    {
        let e = match conn
            .call_method(Some(SERVICE), path, Some(iface), method, body)
            .await
        {
            Ok(_) => return Err(format!("{label}: accepted")),
            Err(e) => e,
        };
        let (name, message) = name_and_message(&e);
        // `want` empty: any named error will do (zbus's own, for a member the contract lacks).
        if name != want && !(want.is_empty() && name.starts_with("org.freedesktop.DBus.Error.")) {
            return Err(format!(
                "{label}: {name} ({}), not {want}",
                &message[..message.len().min(SHORT)]
            ));
        }
        if message.len() > SHORT {
            return Err(format!("{label}: a {} byte message", message.len()));
        }
        let now = owner(conn).await?;
        if now != owner_before {
            return Err(format!(
                "{label}: the daemon lost its name ({owner_before} → {now})"
            ));
        }
        println!("refused {label}: {message}");
        Ok(())
    }

    pub async fn run(address: &str, size: usize) -> Result<(), String> {
        let conn = zbus::connection::Builder::address(address)
            .build()
            .await
            .map_err(|e| format!("connecting: {e}"))?;
        let before = owner(&conn).await?;
        let big = "Q".repeat(size);
        let big_name = format!("A{}", "b".repeat(size - 1));
        let big_path =
            zbus::ObjectPath::try_from(format!("{MANAGER_PATH}/Board/{}", "b".repeat(size - 40)))
                .map_err(|e| e.to_string())?;
        // Each item of `as` takes 12 bytes on the wire.
        let many_moves = vec!["e2e4"; size / 12];
        let b = |m| (BOARD_PATH, BOARD_IFACE, m);
        let m = |m| (MANAGER_PATH, SERVICE, m);
        let big = big.as_str();
        let o = before.as_str();
        let c = &conn;
        let ia = INVALID_ARGUMENT;
        refused(c, o, "ShowClockMessage", b("ShowClockMessage"), &(big,), ia).await?;
        refused(
            c,
            o,
            "AcceptClaim detail",
            b("AcceptClaim"),
            &("white", "threefold-repetition", big),
            NOT_AVAILABLE,
        )
        .await?;
        refused(
            c,
            o,
            "AcceptClaim player",
            b("AcceptClaim"),
            &(big, "threefold-repetition", ""),
            NOT_AVAILABLE,
        )
        .await?;
        refused(
            c,
            o,
            "AcceptClaim kind",
            b("AcceptClaim"),
            &("white", big, ""),
            NOT_AVAILABLE,
        )
        .await?;
        refused(
            c,
            o,
            "RejectClaim detail",
            b("RejectClaim"),
            &("white", "fifty-moves", big),
            ia,
        )
        .await?;
        refused(
            c,
            o,
            "RejectClaim player",
            b("RejectClaim"),
            &(big, "fifty-moves", ""),
            ia,
        )
        .await?;
        refused(
            c,
            o,
            "RejectClaim kind",
            b("RejectClaim"),
            &("white", big, ""),
            ia,
        )
        .await?;
        refused(c, o, "SetRules", b("SetRules"), &(big,), ia).await?;
        refused(c, o, "Adjudicate result", b("Adjudicate"), &(big, "x"), ia).await?;
        refused(
            c,
            o,
            "Adjudicate reason",
            b("Adjudicate"),
            &("1-0", big),
            ia,
        )
        .await?;
        refused(c, o, "SetPosition", b("SetPosition"), &(big,), INVALID_FEN).await?;
        let tags = HashMap::from([("White", big)]);
        refused(c, o, "SetTags value", b("SetTags"), &(tags,), ia).await?;
        let tags = HashMap::from([(big_name.as_str(), "x")]);
        refused(c, o, "SetTags name", b("SetTags"), &(tags,), ia).await?;
        refused(c, o, "ResolveGap move", b("ResolveGap"), &(vec![big],), ia).await?;
        refused(
            c,
            o,
            "ResolveGap moves",
            b("ResolveGap"),
            &(many_moves,),
            ia,
        )
        .await?;
        refused(c, o, "AddBoard", m("AddBoard"), &(big,), ia).await?;
        refused(c, o, "RemoveBoard", m("RemoveBoard"), &(big_path,), ia).await?;
        // The methods without arguments: an extra one is refused by the signature check.
        refused(c, o, "NewGame", b("NewGame"), &(big,), INVALID_ARGS).await?;
        refused(c, o, "TakeBack", b("TakeBack"), &(big,), INVALID_ARGS).await?;

        // What is not a contract method is zbus's to refuse, as shortly.
        let props = "org.freedesktop.DBus.Properties";
        let set = (BOARD_IFACE, "Fen", zbus::Variant::from(big));
        refused(c, o, "Properties.Set", (BOARD_PATH, props, "Set"), &set, "").await?;
        refused(c, o, "an unknown method", b("NoSuchMethod"), &(big,), "").await?;

        // The board still takes calls.
        conn.call_method(
            Some(SERVICE),
            BOARD_PATH,
            Some(BOARD_IFACE),
            "SetTags",
            &(HashMap::from([("White", "Alice")]),),
        )
        .await
        .map_err(|e| format!("a small SetTags: {e}"))?;
        Ok(())
    }
}

/// Entry point of the caller process. Without the role variable this test has nothing to do.
#[test]
fn bounds_role() {
    if std::env::var(ROLE_ENV).is_err() {
        return;
    }
    let address = std::env::var(BUS_ENV).unwrap_or_default();
    let size: usize = std::env::var(SIZE_ENV)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    match runtime.block_on(caller::run(&address, size)) {
        Ok(()) => {
            println!("ok");
            std::process::exit(0);
        }
        Err(e) => {
            println!("FAIL: {e}");
            std::process::exit(1);
        }
    }
}

/// Runs the caller as `nobody` with group `eboardd`; its output once it exited.
fn run_caller(exe: &Path, address: &str, size: usize, gid: u32) -> (bool, String) {
    let mut cmd = as_user(exe, NOBODY, NOBODY, &[gid]);
    cmd.args([
        "--exact",
        "bounds_role",
        "--nocapture",
        "--test-threads=1",
        "--quiet",
    ])
    .env(ROLE_ENV, "caller")
    .env(BUS_ENV, address)
    .env(SIZE_ENV, size.to_string())
    .env_remove("DBUS_SESSION_BUS_ADDRESS")
    .env_remove("DBUS_SYSTEM_BUS_ADDRESS")
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::inherit());
    let mut child = cmd.spawn().expect("starting the caller");
    let mut out = child.stdout.take().expect("stdout is piped");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = out.read_to_string(&mut text);
        text
    });
    let started = std::time::Instant::now();
    let mut child = Reaped(child);
    let status = loop {
        if let Some(status) = child.0.try_wait().expect("waiting for the caller") {
            break status;
        }
        assert!(
            started.elapsed() < PARTY_WAIT,
            "the caller did not finish in {PARTY_WAIT:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let text = reader.join().unwrap_or_default();
    (status.success() && text.lines().any(|l| l == "ok"), text)
}

/// Prints the daemon's log when the test fails.
struct DaemonLog(std::path::PathBuf);

impl Drop for DaemonLog {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "eboardd's log:\n{}",
                std::fs::read_to_string(&self.0).unwrap_or_default()
            );
        }
    }
}

/// One bus with `max_message_size` (`None`: the system bus's default), one daemon as user
/// eboardd with a board, and the caller's arguments of `size` bytes.
async fn scenario(user: &ServiceUser, max_message_size: Option<usize>, size: usize) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let bus = SystemBus::start(dir.path(), max_message_size);
    let exe = install_copy(&std::env::current_exe().unwrap(), dir.path(), "caller");
    let eboardd = install_copy(Path::new(common::eboardd()), dir.path(), "eboardd");
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    std::os::unix::fs::chown(&state, Some(user.uid), Some(user.gid)).unwrap();
    // The board the calls go to, with a clock; and a witness board that must go on.
    let clocked = common::sim::sim_board(dir.path(), "tc", 1.0, Default::default()).await;
    std::os::unix::fs::chown(clocked.slave_path(), Some(user.uid), Some(user.gid)).unwrap();
    let board = FakeBoard::new(dir.path(), "tb");
    let pty = std::fs::canonicalize(&board.path).unwrap();
    std::os::unix::fs::chown(&pty, Some(user.uid), Some(user.gid)).unwrap();

    let log_path = dir.path().join("eboardd.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let _log = DaemonLog(log_path.clone());
    let daemon = as_user(&eboardd, user.uid, user.gid, &[])
        .args(["--bus", &bus.address, "--log-format", "text", "--port"])
        .arg(&board.path)
        .arg("--port")
        .arg(clocked.path())
        .arg("--state-dir")
        .arg(&state)
        .env("RUST_LOG", "eboardd=debug,info")
        .env_remove("NOTIFY_SOCKET")
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .expect("starting eboardd");
    let _daemon = Reaped(daemon);

    // Root watches (reading is open to everyone).
    let conn = zbus::connection::Builder::address(bus.address.as_str())
        .build()
        .await
        .unwrap();
    let dbus = zbus::fdo::DBusProxy::new(&conn).await.unwrap();
    let owner = common::within(common::WAIT, "eboardd to own its name", async {
        loop {
            if let Ok(owner) = dbus.get_name_owner(SERVICE.try_into().unwrap()).await {
                return owner.to_string();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    let b = common::proxies::board(&conn, "tb").await;
    let mut placement = b.receive_placement_changed().await;
    common::wait_property(&mut placement, "the start position", |p| {
        p == "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"
    })
    .await;
    let c = common::proxies::board(&conn, "tc").await;
    let mut clock = c.receive_clock_connected_changed().await;
    common::wait_property(&mut clock, "the clock reports", |c| *c).await;

    let address = bus.address.clone();
    let gid = user.gid;
    let (ok, out) = tokio::task::spawn_blocking(move || run_caller(&exe, &address, size, gid))
        .await
        .unwrap();
    assert!(ok, "the caller ({size} bytes) failed:\n{out}");
    assert_eq!(
        out.lines().filter(|l| l.starts_with("refused ")).count(),
        21,
        "{out}"
    );

    // Still the same daemon on the bus, and it really received each call.
    let now = dbus
        .get_name_owner(SERVICE.try_into().unwrap())
        .await
        .unwrap();
    assert_eq!(now.to_string(), owner, "the daemon kept its connection");
    let log = std::fs::read_to_string(&log_path).unwrap();
    for method in [
        "ShowClockMessage",
        "AcceptClaim",
        "SetTags",
        "ResolveGap",
        "AddBoard",
        "RemoveBoard",
    ] {
        assert!(
            log.contains(&format!("refused {method}:")),
            "{method} reached the daemon:\n{log}"
        );
    }
    assert!(
        log.lines().all(|l| l.len() < 2000),
        "every log line is short"
    );
    // Its board goes on: a pawn lifted from e2 is seen, and the small SetTags took.
    board.send(&common::board::field_update(52, 0)).await;
    common::wait_property(&mut placement, "e2 lifted", |p| {
        p == "rnbqkbnr/pppppppp/8/8/8/8/PPPP1PPP/RNBQKBNR"
    })
    .await;
    let fresh = common::proxies::fresh(&conn, "tc").await;
    let pgn = fresh.pgn().await.unwrap();
    assert!(
        pgn.contains("[White \"Alice\"]") && pgn.len() < 4096,
        "{pgn}"
    );
    assert!(
        fresh.clock_connected().await.unwrap(),
        "the clock is still served"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_method_refuses_a_huge_argument_and_the_daemon_stays_on_the_bus() {
    if std::env::var_os(ROLE_ENV).is_some() {
        return; // the caller process runs only `bounds_role`
    }
    if !common::require::require_root("the test switches users (CI runs it as root)")
        || !common::require::require_tools(&[
            ("setpriv", "util-linux"),
            ("dbus-daemon", "dbus"),
            ("getent", "libc-bin"),
            ("groupadd", "passwd"),
            ("useradd", "passwd"),
        ])
    {
        return;
    }
    let user = ServiceUser::ensure();
    // 40 MB through a bus that carries it.
    scenario(&user, Some(64 << 20), 40_000_000).await;
    // Just under the system bus's own limit, on a bus with that limit.
    scenario(&user, None, SYSTEM_MAX_MESSAGE - (64 << 10)).await;
}
