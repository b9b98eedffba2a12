//! The shipped system-bus policy (`dbus/org.eboardd.Bridge1.conf`) enforced by a real
//! dbus-daemon.
//!
//! A private bus runs with a system-bus configuration (Debian's deny-by-default rules) that
//! includes the policy the way `/usr/share/dbus-1/system.d/` is included. Every party runs as a
//! real Unix identity through `setpriv`, because the bus decides by the peer credentials:
//!
//! - the real `eboardd --bus ADDRESS`, as user `eboardd`, owns `org.eboardd.Bridge1`;
//! - a client in group `eboardd` (not user eboardd) adds a board on a pseudo-terminal and calls
//!   `NewGame`, `SetPosition`, `AddBoard` and `RemoveBoard`: the bus delivers them (eboardd's
//!   own answer, success or one of its errors, is accepted; only the bus's AccessDenied fails);
//!   root does the same;
//! - an unprivileged client (`nobody`, no groups) introspects, reads properties, lists the boards
//!   with `GetManagedObjects` and receives eboardd's `InterfacesAdded` signal for that board, but
//!   gets AccessDenied from the bus on `SetPosition`, `NewGame`, `TakeBack`, `Adjudicate`,
//!   `AddBoard`, `RemoveBoard` and `Properties.Set`, cannot own the name, and changes nothing.
//!
//! It needs root (to switch users), `setpriv` and `dbus-daemon`; without them it prints why and
//! passes, except under `CI=true`, where that fails. It creates the `eboardd` user and group if they are missing and removes them again.
//!
//! The same test binary plays every party: `policy_role` does nothing unless the environment
//! names a role, and the orchestrating test runs a copy of the binary under `setpriv` with the
//! role set.

#[path = "common/require.rs"]
mod require;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

const ROLE_ENV: &str = "EBOARDD_POLICY_TEST_ROLE";
const BUS_ENV: &str = "EBOARDD_POLICY_TEST_BUS";
const BOARD_ENV: &str = "EBOARDD_POLICY_TEST_BOARD";
const SERVICE: &str = "org.eboardd.Bridge1";
const MANAGER_PATH: &str = "/org/eboardd/Bridge1";
const MANAGER_IFACE: &str = "org.eboardd.Bridge1";
const BOARD_IFACE: &str = "org.eboardd.Bridge1.Board";
const ACCESS_DENIED: &str = "org.freedesktop.DBus.Error.AccessDenied";
const START_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
const OTHER_FEN: &str = "4k3/8/8/8/8/8/8/4K2R w K - 0 1";
const NAMED: &str = "bus name";
const PROPERTIES: &str = "org.freedesktop.DBus.Properties";
const INTROSPECTABLE: &str = "org.freedesktop.DBus.Introspectable";
const OBJECT_MANAGER: &str = "org.freedesktop.DBus.ObjectManager";
/// `nobody`/`nogroup` on Debian and most distributions; used numerically so that no name lookup
/// is involved.
const NOBODY: u32 = 65534;
const WAIT: Duration = Duration::from_secs(20);

/// Debian's `system.conf` default policy, a listening socket in `dir`, and the shipped policy
/// through `<includedir>` as on an installed system. `<user>` is left out: the bus runs as the
/// test's user.
fn bus_config(dir: &Path) -> String {
    format!(
        r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={dir}/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
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
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus.Properties"/>
    <deny send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"
          send_member="UpdateActivationEnvironment"/>
    <deny send_destination="org.freedesktop.DBus"
          send_interface="org.freedesktop.DBus.Debug.Stats"/>
    <deny send_destination="org.freedesktop.DBus"
          send_interface="org.freedesktop.systemd1.Activator"/>
  </policy>
  <includedir>{dir}/system.d</includedir>
</busconfig>
"#,
        dir = dir.display()
    )
}

// ---------------------------------------------------------------------------------------------
// The parties (run in a child process; see `policy_role`).

mod roles {
    use super::*;
    use std::future::poll_fn;
    use std::pin::Pin;
    use zbus::export::futures_core::Stream;

    fn say(line: &str) {
        let mut out = std::io::stdout().lock();
        // The parent reads these lines; if it is gone there is nobody to tell.
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }

    async fn connect(address: &str) -> Result<zbus::Connection, String> {
        zbus::connection::Builder::address(address)
            .build()
            .await
            .map_err(|e| format!("connecting to {address}: {e}"))
    }

    async fn call(
        conn: &zbus::Connection,
        path: &str,
        iface: &str,
        method: &str,
        body: &(impl serde::Serialize + zbus::Type),
    ) -> Result<zbus::Message, zbus::Error> {
        conn.call_method(Some(SERVICE), path, Some(iface), method, body)
            .await
    }

    async fn get_string(
        conn: &zbus::Connection,
        path: &str,
        iface: &str,
        name: &str,
    ) -> Result<String, String> {
        let reply = call(
            conn,
            path,
            "org.freedesktop.DBus.Properties",
            "Get",
            &(iface, name),
        )
        .await
        .map_err(|e| format!("Get {iface}.{name} on {path}: {e}"))?;
        let value: zbus::OwnedVariant = reply
            .body()
            .deserialize()
            .map_err(|e| format!("Get {iface}.{name} reply: {e}"))?;
        String::try_from(&*value).map_err(|e| format!("{iface}.{name} is not a string: {e}"))
    }

    /// The call must be refused by the bus, not answered by the service.
    async fn expect_denied(
        conn: &zbus::Connection,
        path: &str,
        iface: &str,
        method: &str,
        body: &(impl serde::Serialize + zbus::Type),
    ) -> Result<(), String> {
        match call(conn, path, iface, method, body).await {
            Err(e) if is_access_denied(&e) => {
                say(&format!("denied {method}: {e}"));
                Ok(())
            }
            Err(e) => Err(format!("{method}: expected {ACCESS_DENIED}, got error {e}")),
            Ok(_) => Err(format!(
                "{method}: expected {ACCESS_DENIED}, but the call went through"
            )),
        }
    }

    /// zbus maps the well-known error names to `fdo::Error` variants, others stay by name.
    fn is_access_denied(e: &zbus::Error) -> bool {
        match e {
            zbus::Error::FDO(fdo) => matches!(**fdo, zbus::fdo::Error::AccessDenied(_)),
            zbus::Error::MethodError(name, _, _) => name.as_str() == ACCESS_DENIED,
            _ => false,
        }
    }

    /// Waits until eboardd owns its name.
    pub async fn setup(address: &str) -> Result<(), String> {
        let conn = connect(address).await?;
        for _ in 0..200 {
            let reply = conn
                .call_method(
                    Some("org.freedesktop.DBus"),
                    "/org/freedesktop/DBus",
                    Some("org.freedesktop.DBus"),
                    "NameHasOwner",
                    &(SERVICE,),
                )
                .await
                .map_err(|e| format!("NameHasOwner: {e}"))?;
            if reply
                .body()
                .deserialize::<bool>()
                .map_err(|e| e.to_string())?
            {
                say(NAMED);
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err(format!("eboardd did not take {SERVICE} within 20 s"))
    }

    /// Everything anyone may do, then the mutating calls that must be refused.
    pub async fn reader(address: &str) -> Result<(), String> {
        let conn = connect(address).await?;

        let version = get_string(&conn, MANAGER_PATH, MANAGER_IFACE, "Version").await?;
        say(&format!("read Version = {version}"));
        let xml = call(&conn, MANAGER_PATH, INTROSPECTABLE, "Introspect", &())
            .await
            .map_err(|e| format!("Introspect: {e}"))?;
        let xml: String = xml.body().deserialize().map_err(|e| e.to_string())?;
        if !xml.contains(MANAGER_IFACE) {
            return Err("introspection does not show the manager interface".into());
        }

        // Every signal eboardd sends: the board the arbiter adds arrives as InterfacesAdded,
        // then whatever its commands cause.
        let rule = zbus::MatchRule::builder()
            .msg_type(zbus::message::Type::Signal)
            .sender(SERVICE)
            .build()
            .map_err(|e| e.to_string())?;
        let mut signals = zbus::MessageStream::for_match_rule(rule, &conn, None)
            .await
            .map_err(|e| format!("subscribing to eboardd's signals: {e}"))?;
        say("subscribed");
        let board = loop {
            let next = poll_fn(|cx| Pin::new(&mut signals).poll_next(cx));
            let msg = tokio::time::timeout(WAIT, next)
                .await
                .map_err(|_| "no InterfacesAdded signal arrived".to_string())?
                .ok_or("the signal stream ended")?
                .map_err(|e| format!("receiving a signal: {e}"))?;
            let header = msg.header();
            let member = header.member().map(|m| m.to_string()).unwrap_or_default();
            say(&format!("signal {member}"));
            if member == "InterfacesAdded" {
                let (path, _): (
                    zbus::OwnedObjectPath,
                    HashMap<String, HashMap<String, zbus::OwnedVariant>>,
                ) = msg
                    .body()
                    .deserialize()
                    .map_err(|e| format!("InterfacesAdded body: {e}"))?;
                break path.as_str().to_owned();
            }
        };
        say(&format!("board {board}"));

        // Wait until the arbiter is done, so that only our own calls could change the game.
        tokio::task::spawn_blocking(|| {
            let mut line = String::new();
            std::io::stdin().read_line(&mut line).map(|_| line)
        })
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("waiting for the go-ahead: {e}"))?;

        let before = get_string(&conn, &board, BOARD_IFACE, "Fen").await?;
        say(&format!("read Fen = {before}"));
        call(&conn, &board, PROPERTIES, "GetAll", &(BOARD_IFACE,))
            .await
            .map_err(|e| format!("GetAll: {e}"))?;
        call(
            &conn,
            MANAGER_PATH,
            OBJECT_MANAGER,
            "GetManagedObjects",
            &(),
        )
        .await
        .map_err(|e| format!("GetManagedObjects: {e}"))?;
        let xml = call(&conn, &board, INTROSPECTABLE, "Introspect", &())
            .await
            .map_err(|e| format!("Introspect: {e}"))?;
        let xml: String = xml.body().deserialize().map_err(|e| e.to_string())?;
        if !xml.contains(BOARD_IFACE) {
            return Err("introspection does not show the board interface".into());
        }
        say("read GetAll, GetManagedObjects, Introspect");

        expect_denied(&conn, &board, BOARD_IFACE, "SetPosition", &(START_FEN,)).await?;
        expect_denied(&conn, &board, BOARD_IFACE, "NewGame", &()).await?;
        expect_denied(&conn, &board, BOARD_IFACE, "TakeBack", &()).await?;
        expect_denied(&conn, &board, BOARD_IFACE, "Adjudicate", &("1-0", "test")).await?;
        expect_denied(
            &conn,
            &board,
            BOARD_IFACE,
            "RejectClaim",
            &("white", "fifty-moves", ""),
        )
        .await?;
        expect_denied(
            &conn,
            MANAGER_PATH,
            MANAGER_IFACE,
            "AddBoard",
            &("/dev/ttyACM9",),
        )
        .await?;
        let path = zbus::OwnedObjectPath::try_from(board.clone()).map_err(|e| e.to_string())?;
        expect_denied(&conn, MANAGER_PATH, MANAGER_IFACE, "RemoveBoard", &(&path,)).await?;
        expect_denied(
            &conn,
            &board,
            PROPERTIES,
            "Set",
            &(BOARD_IFACE, "Fen", zbus::Variant::from(START_FEN)),
        )
        .await?;
        match conn.request_name(SERVICE).await {
            Err(e) if is_access_denied(&e) => say(&format!("denied owning the name: {e}")),
            Err(e) => return Err(format!("owning {SERVICE}: expected AccessDenied, got {e}")),
            Ok(()) => return Err(format!("an unprivileged client could own {SERVICE}")),
        }
        // The refused calls changed nothing.
        let after = get_string(&conn, &board, BOARD_IFACE, "Fen").await?;
        if after != before {
            return Err(format!("Fen changed to {after} by refused calls"));
        }
        Ok(())
    }

    /// A mutating call the bus must deliver: eboardd's answer, success or one of its own
    /// errors, shows it got through; only the bus's AccessDenied is a failure.
    async fn delivered(
        conn: &zbus::Connection,
        path: &str,
        iface: &str,
        method: &str,
        body: &(impl serde::Serialize + zbus::Type),
    ) -> Result<Option<zbus::Message>, String> {
        match call(conn, path, iface, method, body).await {
            Ok(reply) => {
                say(&format!("called {method}"));
                Ok(Some(reply))
            }
            Err(e) if is_access_denied(&e) => Err(format!("{method} refused by the bus: {e}")),
            Err(e) => {
                say(&format!("called {method}, eboardd answered: {e}"));
                Ok(None)
            }
        }
    }

    /// Adds a board on `port` (printing its path) and uses the mutating methods.
    pub async fn arbiter(address: &str, port: &str) -> Result<(), String> {
        let conn = connect(address).await?;
        let board = if port.starts_with("/org/") {
            port.to_owned() // a board added before: just use it
        } else {
            let reply = call(&conn, MANAGER_PATH, MANAGER_IFACE, "AddBoard", &(port,))
                .await
                .map_err(|e| format!("AddBoard {port}: {e}"))?;
            let path: zbus::OwnedObjectPath =
                reply.body().deserialize().map_err(|e| e.to_string())?;
            say(&format!("board {}", path.as_str()));
            path.as_str().to_owned()
        };
        if delivered(&conn, &board, BOARD_IFACE, "NewGame", &())
            .await?
            .is_some()
        {
            let fen = get_string(&conn, &board, BOARD_IFACE, "Fen").await?;
            if !fen.starts_with(placement(START_FEN)) {
                return Err(format!("NewGame did not take effect: Fen = {fen}"));
            }
        }
        if delivered(&conn, &board, BOARD_IFACE, "SetPosition", &(OTHER_FEN,))
            .await?
            .is_some()
        {
            let fen = get_string(&conn, &board, BOARD_IFACE, "Fen").await?;
            if !fen.starts_with(placement(OTHER_FEN)) {
                return Err(format!("SetPosition did not take effect: Fen = {fen}"));
            }
        }
        let reply = call(
            &conn,
            MANAGER_PATH,
            MANAGER_IFACE,
            "AddBoard",
            &("/dev/ttyACM99",),
        )
        .await
        .map_err(|e| format!("AddBoard: {e}"))?;
        let path: zbus::OwnedObjectPath = reply.body().deserialize().map_err(|e| e.to_string())?;
        call(&conn, MANAGER_PATH, MANAGER_IFACE, "RemoveBoard", &(&path,))
            .await
            .map_err(|e| format!("RemoveBoard: {e}"))?;
        say(&format!(
            "called AddBoard and RemoveBoard ({})",
            path.as_str()
        ));
        Ok(())
    }

    fn placement(fen: &str) -> &str {
        fen.split(' ').next().unwrap_or(fen)
    }
}

/// Entry point of the child processes. Without the role variable this test has nothing to do.
#[test]
fn policy_role() {
    let Ok(role) = std::env::var(ROLE_ENV) else {
        return;
    };
    let address = std::env::var(BUS_ENV).unwrap_or_default();
    // For the arbiter: the serial port to add a board on, or the object path of one.
    let board = std::env::var(BOARD_ENV).unwrap_or_default();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let result = runtime.block_on(async {
        match role.as_str() {
            "setup" => roles::setup(&address).await,
            "reader" => roles::reader(&address).await,
            "arbiter" => roles::arbiter(&address, &board).await,
            other => Err(format!("unknown role {other}")),
        }
    });
    match result {
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

// ---------------------------------------------------------------------------------------------
// The orchestration (runs as root).

/// Kills and reaps a child when dropped, so that a failing assertion leaves nothing behind.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Lines of a child's stdout, available with a timeout.
struct Lines {
    rx: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Lines {
    fn of(child: &mut Child) -> Lines {
        let out = child.stdout.take().expect("stdout is piped");
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Lines {
            rx,
            seen: Vec::new(),
        }
    }

    /// Waits for a line equal to `want`; panics with everything seen so far otherwise.
    fn expect(&mut self, who: &str, want: &str) {
        loop {
            match self.rx.recv_timeout(WAIT) {
                Ok(line) => {
                    let done = line == want;
                    let failed = line.starts_with("FAIL");
                    self.seen.push(line);
                    assert!(!failed, "{who} failed:\n{}", self.seen.join("\n"));
                    if done {
                        return;
                    }
                }
                Err(_) => panic!("{who}: no line {want:?}; output:\n{}", self.seen.join("\n")),
            }
        }
    }
}

/// The `eboardd` user and group, created for the test when missing and removed afterwards.
struct ServiceUser {
    uid: u32,
    gid: u32,
    created_user: bool,
    created_group: bool,
}

impl ServiceUser {
    fn ensure() -> ServiceUser {
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
        let uid = lookup("passwd", "eboardd").expect("user eboardd exists");
        let gid = lookup("group", "eboardd").expect("group eboardd exists");
        ServiceUser {
            uid,
            gid,
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
        // userdel may already have removed a group of the same name.
        if self.created_group && lookup("group", "eboardd").is_some() {
            let _ = Command::new("groupdel").arg("eboardd").status();
        }
    }
}

/// The numeric id of a user or group from `getent`.
fn lookup(database: &str, name: &str) -> Option<u32> {
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

/// `program` as `uid`/`gid` with exactly the supplementary `groups` (none when empty), or as
/// ourselves (root) when `ids` is None.
fn as_user(program: &Path, ids: Option<(u32, u32, &[u32])>) -> Command {
    match ids {
        Some((uid, gid, groups)) => {
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
        None => Command::new(program),
    }
}

/// Runs this test binary's `policy_role` as `name`, with `board` in its environment.
fn role(
    exe: &Path,
    address: &str,
    name: &str,
    board: &str,
    ids: Option<(u32, u32, &[u32])>,
) -> Child {
    let mut cmd = as_user(exe, ids);
    cmd.args([
        "--exact",
        "policy_role",
        "--nocapture",
        "--test-threads=1",
        "--quiet",
    ])
    .env(ROLE_ENV, name)
    .env(BUS_ENV, address)
    .env(BOARD_ENV, board)
    .env_remove("DBUS_SESSION_BUS_ADDRESS")
    .env_remove("DBUS_SYSTEM_BUS_ADDRESS")
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::inherit());
    cmd.spawn()
        .unwrap_or_else(|e| panic!("starting the {name} role: {e}"))
}

/// Copies `from` into `dir` as `name`, executable by everyone.
fn install_copy(from: &Path, dir: &Path, name: &str) -> PathBuf {
    let to = dir.join(name);
    std::fs::copy(from, &to).unwrap_or_else(|e| panic!("copying {}: {e}", from.display()));
    std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    to
}

/// Prints eboardd's log when the test fails, so that a refusal on its side can be told from one
/// by the bus.
struct DaemonLog(PathBuf);

impl Drop for DaemonLog {
    fn drop(&mut self) {
        if thread::panicking() {
            let log = std::fs::read_to_string(&self.0).unwrap_or_default();
            eprintln!("eboardd's log:\n{log}");
        }
    }
}

fn policy_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("dbus/org.eboardd.Bridge1.conf")
}

#[test]
fn system_bus_policy_is_enforced() {
    if std::env::var_os(ROLE_ENV).is_some() {
        return; // a child playing a role: only `policy_role` runs there
    }
    if !require::require_root("the policy test switches users (CI runs it as root)")
        || !require::require_tools(&[
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
    let dir = tempfile::tempdir().expect("temp dir");
    // The unprivileged parties must reach the socket and run the binary copy.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let system_d = dir.path().join("system.d");
    std::fs::create_dir(&system_d).expect("system.d");
    std::fs::copy(policy_file(), system_d.join("org.eboardd.Bridge1.conf")).expect("copy policy");
    let config = dir.path().join("system.conf");
    std::fs::write(&config, bus_config(dir.path())).expect("bus config");
    let exe = install_copy(
        &std::env::current_exe().expect("current exe"),
        dir.path(),
        "roles",
    );
    let eboardd = install_copy(
        Path::new(env!("CARGO_BIN_EXE_eboardd")),
        dir.path(),
        "eboardd",
    );
    let state = dir.path().join("state");
    std::fs::create_dir(&state).expect("state dir");
    std::os::unix::fs::chown(&state, Some(user.uid), Some(user.gid)).expect("chown state dir");

    // The bus. Its stderr is collected: a policy file it cannot parse is only logged.
    let mut bus = Command::new("dbus-daemon")
        .arg(format!("--config-file={}", config.display()))
        .args(["--nofork", "--print-address"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting dbus-daemon");
    let bus_err = bus.stderr.take().expect("stderr is piped");
    let bus_log = thread::spawn(move || {
        BufReader::new(bus_err)
            .lines()
            .map_while(Result::ok)
            .collect::<Vec<_>>()
    });
    let bus_out = Lines::of(&mut bus);
    let bus = Reaped(bus);
    let address = bus_out
        .rx
        .recv_timeout(WAIT)
        .expect("dbus-daemon printed its address");

    // eboardd as its unit runs it, as user eboardd (with /etc/eboardd/eboardd.toml if there is
    // one, as on a rig).
    let log_path = dir.path().join("eboardd.log");
    let log_file = std::fs::File::create(&log_path).expect("log file");
    let _log = DaemonLog(log_path);
    let daemon = as_user(&eboardd, Some((user.uid, user.gid, &[])))
        .arg("--bus")
        .arg(&address)
        .arg("--state-dir")
        .arg(&state)
        .args(["--log-format", "text"])
        .env_remove("NOTIFY_SOCKET")
        .stdin(Stdio::null())
        .stdout(log_file.try_clone().expect("log file"))
        .stderr(log_file)
        .spawn()
        .expect("starting eboardd");
    let daemon = Reaped(daemon);

    // A board on a pseudo-terminal the service user may open. Nothing answers on it, which does
    // not matter here: the board object exists and takes commands.
    let (_master, slave) = serialport::TTYPort::pair().expect("pseudo-terminal");
    let port = serialport::SerialPort::name(&slave).expect("pty name");
    // Only the daemon opens the slave side (it locks it); the master keeps the pty alive.
    drop(slave);
    std::os::unix::fs::chown(&port, Some(user.uid), Some(user.gid)).expect("chown pty");

    let mut setup = role(&exe, &address, "setup", "", Some((NOBODY, NOBODY, &[])));
    let mut setup_out = Lines::of(&mut setup);
    let _setup = Reaped(setup);
    setup_out.expect("eboardd", NAMED);

    let mut reader = role(&exe, &address, "reader", "", Some((NOBODY, NOBODY, &[])));
    let mut reader_out = Lines::of(&mut reader);
    let mut reader = Reaped(reader);
    reader_out.expect("unprivileged reader", "subscribed");

    // Group eboardd (not user eboardd) is what lets the arbiter in.
    let mut arbiter = role(
        &exe,
        &address,
        "arbiter",
        &port,
        Some((NOBODY, NOBODY, &[user.gid][..])),
    );
    let mut arbiter_out = Lines::of(&mut arbiter);
    let _arbiter = Reaped(arbiter);
    arbiter_out.expect("arbiter (group eboardd)", "ok");
    let board = arbiter_out
        .seen
        .iter()
        .find_map(|l| l.strip_prefix("board "))
        .expect("AddBoard returned a path")
        .to_owned();

    // The arbiter is done: let the reader try its forbidden calls.
    let mut go = reader.0.stdin.take().expect("reader stdin");
    writeln!(go, "go").expect("go-ahead to the reader");
    reader_out.expect("unprivileged reader", "ok");
    let status = reader.0.wait().expect("reader exit");
    assert!(status.success(), "reader exited with {status}");
    let reader_log = reader_out.seen.join("\n");
    for want in [
        "signal InterfacesAdded",
        "denied SetPosition",
        "denied NewGame",
        "denied AddBoard",
        "denied owning the name",
    ] {
        assert!(
            reader_log.contains(want),
            "reader output lacks {want:?}:\n{reader_log}"
        );
    }

    // Root is not exempt from bus policy; the policy lets it in explicitly.
    let mut root = role(&exe, &address, "arbiter", &board, None);
    let mut root_out = Lines::of(&mut root);
    let _root = Reaped(root);
    root_out.expect("root", "ok");

    drop(daemon);
    drop(bus);
    let log = bus_log.join().unwrap_or_default();
    // Refusals are logged too; anything else (a policy it could not parse, an unknown user or
    // group name) is a complaint.
    let complaints: Vec<&String> = log
        .iter()
        .filter(|l| {
            !l.trim().is_empty()
                && !l.contains("fd limit")
                && !l.contains("Rejected send message")
                && !l.contains("is not allowed to own the service")
        })
        .collect();
    assert!(
        complaints.is_empty(),
        "dbus-daemon complained:\n{complaints:?}"
    );
    println!(
        "reader:\n{reader_log}\narbiter:\n{}",
        arbiter_out.seen.join("\n")
    );
}
