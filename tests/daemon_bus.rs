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
