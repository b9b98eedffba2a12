//! End-to-end: the running daemon's introspection equals the XML shipped in `dbus/`.

mod common;

use common::Setup;
use common::xml::interface_members;

async fn introspect(conn: &zbus::Connection, path: &str) -> String {
    let proxy = zbus::fdo::IntrospectableProxy::builder(conn)
        .destination("org.eboardd.Bridge1")
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
    let manager = introspect(&s.conn, "/org/eboardd/Bridge1").await;
    check(&manager, "org.eboardd.Bridge1");
    assert!(
        interface_members(&manager, "org.freedesktop.DBus.ObjectManager").is_some(),
        "the manager object implements the ObjectManager"
    );
    let board = introspect(&s.conn, "/org/eboardd/Bridge1/Board/b1").await;
    check(&board, "org.eboardd.Bridge1.Board");
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
