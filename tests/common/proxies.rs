//! Client-side proxies of the contract's interfaces.

use std::collections::HashMap;

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

#[zbus::proxy(
    interface = "org.eboardd.Bridge1.Board",
    default_service = "org.eboardd.Bridge1"
)]
pub trait Board {
    fn new_game(&self) -> zbus::Result<()>;
    fn set_position(&self, fen: &str) -> zbus::Result<()>;
    fn set_tags(&self, tags: HashMap<&str, &str>) -> zbus::Result<()>;
    fn set_rules(&self, rules: &str) -> zbus::Result<()>;
    fn take_back(&self) -> zbus::Result<()>;
    fn accept_claim(&self, player: &str, kind: &str, detail: &str) -> zbus::Result<()>;
    fn adjudicate(&self, result: &str, reason: &str) -> zbus::Result<()>;
    fn resolve_gap(&self, moves: &[&str]) -> zbus::Result<()>;
    fn reject_claim(&self, player: &str, kind: &str, detail: &str) -> zbus::Result<()>;
    fn show_clock_message(&self, text: &str) -> zbus::Result<()>;

    #[zbus(property)]
    fn name(&self) -> zbus::Result<String>;
    #[zbus(property)]
    fn number(&self) -> zbus::Result<u32>;
    #[zbus(property)]
    fn variant(&self) -> zbus::Result<String>;
    #[zbus(property)]
    fn port(&self) -> zbus::Result<String>;
    #[zbus(property)]
    fn connected(&self) -> zbus::Result<bool>;
    #[zbus(property)]
    fn serial_number(&self) -> zbus::Result<String>;
    #[zbus(property)]
    fn firmware_version(&self) -> zbus::Result<String>;
    #[zbus(property)]
    fn rules(&self) -> zbus::Result<String>;
    #[zbus(property)]
    fn edition(&self) -> zbus::Result<String>;
    #[zbus(property)]
    fn state(&self) -> zbus::Result<String>;
    #[zbus(property)]
    fn fen(&self) -> zbus::Result<String>;
    #[zbus(property)]
    fn placement(&self) -> zbus::Result<String>;
    #[zbus(property)]
    fn in_sync(&self) -> zbus::Result<bool>;
    #[zbus(property)]
    fn turn(&self) -> zbus::Result<String>;
    #[zbus(property)]
    fn moves(&self) -> zbus::Result<Vec<String>>;
    #[zbus(property)]
    fn pgn(&self) -> zbus::Result<String>;
    #[zbus(property)]
    fn clock_connected(&self) -> zbus::Result<bool>;
    #[zbus(property)]
    fn white_time_ms(&self) -> zbus::Result<u64>;
    #[zbus(property)]
    fn black_time_ms(&self) -> zbus::Result<u64>;
    #[zbus(property)]
    fn clock_running(&self) -> zbus::Result<String>;
    #[zbus(property)]
    fn claims(&self) -> zbus::Result<Vec<(String, String, String)>>;
    #[zbus(property)]
    fn pending_illegal(&self) -> zbus::Result<String>;
    #[zbus(property)]
    fn gap(&self) -> zbus::Result<String>;
    #[zbus(property)]
    fn illegal_moves(&self) -> zbus::Result<(u32, u32)>;
    #[zbus(property)]
    fn result(&self) -> zbus::Result<String>;
    #[zbus(property)]
    fn termination(&self) -> zbus::Result<String>;

    #[zbus(signal)]
    fn game_started(&self, fen: String) -> zbus::Result<()>;
    #[zbus(signal)]
    fn move_played(
        &self,
        ply: u32,
        san: String,
        uci: String,
        fen: String,
        white_ms: u64,
        black_ms: u64,
    ) -> zbus::Result<()>;
    #[zbus(signal)]
    fn move_retracted(&self, ply: u32, fen: String) -> zbus::Result<()>;
    #[zbus(signal)]
    fn illegal_placement(
        &self,
        player: String,
        description: String,
        placement: String,
    ) -> zbus::Result<()>;
    #[zbus(signal)]
    fn illegal_move_completed(
        &self,
        player: String,
        count: u32,
        description: String,
    ) -> zbus::Result<()>;
    #[zbus(signal)]
    fn flag_fell(&self, player: String) -> zbus::Result<()>;
    #[zbus(signal)]
    fn game_ended(&self, result: String, termination: String) -> zbus::Result<()>;
}

/// A board proxy for the object id `id`.
pub async fn board<'a>(conn: &zbus::Connection, id: &str) -> BoardProxy<'a> {
    BoardProxy::builder(conn)
        .path(format!("/org/eboardd/Bridge1/Board/{id}"))
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
        .path(format!("/org/eboardd/Bridge1/Board/{id}"))
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
        .unwrap()
}
