//! End-to-end: the running daemon's introspection equals the XML shipped in `dbus/`; and the
//! library's contract module (names, property/method/signal tables, error names), which the
//! daemon, eboardctl, the bridges and the tests' stand-in all use, equals it too.

mod common;

use common::Setup;
use common::xml::interface_members;
use eboard_core::contract::{
    self, BOARD_INTERFACE, BOARD_PROPERTIES, ErrorName, MANAGER_INTERFACE, MANAGER_PATH,
    MANAGER_PROPERTIES, METHODS, SIGNALS,
};

async fn introspect(conn: &zbus::Connection, path: &str) -> String {
    let proxy = zbus::fdo::IntrospectableProxy::builder(conn)
        .destination(contract::BUS_NAME)
        .path(path.to_owned())
        .build()
        .await
        .unwrap();
    proxy.introspect().await.unwrap()
}

fn shipped(iface: &str) -> String {
    let path = format!("{}/dbus/{iface}.xml", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn check(live: &str, iface: &str) {
    let live = interface_members(live, iface).expect("the daemon implements the interface");
    let file = interface_members(&shipped(iface), iface).expect("the file has the interface");
    assert!(!file.is_empty());
    assert_eq!(
        live, file,
        "{iface}: running daemon (left) vs shipped XML (right)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_daemon_matches_shipped_xml() {
    let s = Setup::start(&["--port", "/nonexistent/b1"]).await;
    let manager = introspect(&s.conn, MANAGER_PATH).await;
    check(&manager, MANAGER_INTERFACE);
    assert!(
        interface_members(&manager, contract::OBJECT_MANAGER_INTERFACE).is_some(),
        "the manager object implements the ObjectManager"
    );
    let board = introspect(&s.conn, &contract::board_path("b1")).await;
    check(&board, BOARD_INTERFACE);
}

/// The contract module's members of `iface`, in the canonical form of [`interface_members`].
fn table_members(iface: &str) -> Vec<String> {
    let args = |dir: &str, args: &[contract::Arg]| -> Vec<String> {
        args.iter()
            .map(|(name, sig)| format!("{dir} {name} {sig}"))
            .collect()
    };
    let mut out: Vec<String> = Vec::new();
    for p in MANAGER_PROPERTIES.iter().chain(BOARD_PROPERTIES) {
        if p.interface == iface {
            let mut parts = vec![format!("{} read", p.signature)];
            if p.constant {
                parts.push("@org.freedesktop.DBus.Property.EmitsChangedSignal=const".into());
            }
            out.push(format!("property {}({})", p.name, parts.join(", ")));
        }
    }
    for m in METHODS.iter().filter(|m| m.interface == iface) {
        let mut parts = args("in", m.inputs);
        parts.extend(args("out", m.outputs));
        out.push(format!("method {}({})", m.name, parts.join(", ")));
    }
    for sig in SIGNALS.iter().filter(|s| s.interface == iface) {
        out.push(format!(
            "signal {}({})",
            sig.name,
            args("", sig.args).join(", ")
        ));
    }
    out.sort();
    out
}

#[test]
fn contract_tables_match_shipped_xml() {
    for iface in [MANAGER_INTERFACE, BOARD_INTERFACE] {
        let file = interface_members(&shipped(iface), iface).expect("the file has the interface");
        assert_eq!(
            table_members(iface),
            file,
            "{iface}: contract module (left) vs shipped XML (right)"
        );
    }
    // The newer members are there, with their types.
    let board = table_members(BOARD_INTERFACE);
    for member in [
        "property Gap(s read)",
        "property Number(u read)",
        "property Variant(s read)",
        "method ResolveGap(in moves as)",
        "method RejectClaim(in player s, in kind s, in detail s)",
        "method ShowClockMessage(in text s)",
    ] {
        assert!(board.contains(&member.to_owned()), "{member} in {board:#?}");
    }
    assert!(table_members(MANAGER_INTERFACE).contains(&"property StorageProblem(s read)".into()));
}

#[test]
fn table_check_sees_a_wrong_type() {
    // The comparison above is not vacuous: a table entry of the wrong type differs.
    let file = interface_members(&shipped(BOARD_INTERFACE), BOARD_INTERFACE).unwrap();
    let mut tables = table_members(BOARD_INTERFACE);
    let i = tables
        .iter()
        .position(|m| m == "property Number(u read)")
        .expect("Number is in the table");
    tables[i] = "property Number(t read)".into();
    tables.sort();
    assert_ne!(tables, file);
}

#[test]
fn daemon_errors_are_the_contract_names() {
    use eboardd::daemon::dbus::BridgeError;
    use zbus::DBusError;
    let m = || "m".to_owned();
    let errors = [
        (BridgeError::InvalidFen(m()), ErrorName::InvalidFen),
        (
            BridgeError::InvalidArgument(m()),
            ErrorName::InvalidArgument,
        ),
        (
            BridgeError::NothingToTakeBack(m()),
            ErrorName::NothingToTakeBack,
        ),
        (
            BridgeError::ClaimNotAvailable(m()),
            ErrorName::ClaimNotAvailable,
        ),
        (BridgeError::ListenOnly(m()), ErrorName::ListenOnly),
        (BridgeError::NoClock(m()), ErrorName::NoClock),
        (BridgeError::ClockTimeout(m()), ErrorName::ClockTimeout),
        (BridgeError::Busy(m()), ErrorName::Busy),
    ];
    assert_eq!(errors.len(), ErrorName::ALL.len());
    for (err, name) in errors {
        assert_eq!(err.name().as_str(), name.name());
    }
}

#[test]
fn canonical_form_sees_differences() {
    let a = r#"<node><interface name="x.Y"><method name="M"><arg name="a" type="s" direction="in"/></method>
        <property name="P" type="s" access="read"/></interface></node>"#;
    let b = r#"<node><!-- c --><interface name="x.Y">
        <property name="P" type="s" access="read"/>
        <method name="M"><arg name="a" type="s" direction="in"/></method></interface></node>"#;
    let c = a.replace("type=\"s\" direction", "type=\"u\" direction");
    assert_eq!(interface_members(a, "x.Y"), interface_members(b, "x.Y"));
    assert_ne!(interface_members(a, "x.Y"), interface_members(&c, "x.Y"));
    assert_eq!(interface_members(a, "x.Z"), None);
}
