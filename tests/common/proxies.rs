//! Client-side proxies of the contract's interfaces.

use eboard_core::contract::board_path;

#[zbus::proxy(
    interface = "org.eboardd.Bridge1",
    default_service = "org.eboardd.Bridge1",
    default_path = "/org/eboardd/Bridge1"
)]
pub trait Manager {
    fn add_board(&self, port: &str) -> zbus::Result<zbus::OwnedObjectPath>;
    fn remove_board(&self, board: &zbus::ObjectPath<'_>) -> zbus::Result<()>;
    #[zbus(property)]
    fn version(&self) -> zbus::Result<String>;
    #[zbus(property)]
    fn storage_problem(&self) -> zbus::Result<String>;
}

/// The board interface's proxy is the client's own: one declaration of its methods and
/// properties for eboardctl and the tests.
pub use eboardd::cli::client::BoardProxy;

/// A board proxy for the object id `id`.
pub async fn board<'a>(conn: &zbus::Connection, id: &str) -> BoardProxy<'a> {
    BoardProxy::builder(conn)
        .path(board_path(id))
        .build()
        .await
        .unwrap()
}

/// The D-Bus error name of a failed call.
pub fn error_name(e: &zbus::Error) -> String {
    match e {
        zbus::Error::MethodError(name, _, _) => name.to_string(),
        other => format!("not a method error: {other}"),
    }
}

/// The message of a failed call.
pub fn error_message(e: &zbus::Error) -> String {
    match e {
        zbus::Error::MethodError(_, msg, _) => msg.clone().unwrap_or_default(),
        other => other.to_string(),
    }
}

/// A board proxy that reads every property from the daemon (no cache), for checks right
/// after a method call or a signal: a cached proxy may not have processed the matching
/// `PropertiesChanged` yet.
pub async fn fresh<'a>(conn: &zbus::Connection, id: &str) -> BoardProxy<'a> {
    BoardProxy::builder(conn)
        .path(board_path(id))
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
        .unwrap()
}
