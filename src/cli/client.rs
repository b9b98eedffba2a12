//! The D-Bus side of eboardctl: the board proxy, listing boards through the ObjectManager and
//! finding a board by name or id. Only what the contract (section 2) promises is used.

use std::collections::HashMap;

use zbus::Connection;

use crate::client::board_id;
use crate::client::error::CtlError;
use crate::client::props::BoardProps;
use eboard_core::contract::OBJECT_MANAGER_INTERFACE;
pub use eboard_core::contract::{BOARD_PATH_PREFIX, BUS_NAME, MANAGER_PATH};

/// `org.eboardd.Bridge1.Board`: its methods, and its properties for a client that reads
/// one property or follows its changes (the tests do; eboardctl reads all of them in one go
/// through `GetManagedObjects`). The signals are decoded by `client::event::board_signal`.
/// The attribute takes literals only: they are `contract::BOARD_INTERFACE` and
/// `contract::BUS_NAME`, and the tests against the stand-in (built from the contract module)
/// would fail on any difference.
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
    fn resolve_gap(&self, moves: &[String]) -> zbus::Result<()>;
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
    fn board_model(&self) -> zbus::Result<String>;
    #[zbus(property)]
    fn battery(&self) -> zbus::Result<(i32, bool)>;
    #[zbus(property)]
    fn clock_model(&self) -> zbus::Result<String>;
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
}

/// All boards at one moment, and which message of which sender that moment is.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub boards: Vec<BoardEntry>,
    /// The daemon's unique bus name.
    pub sender: Option<String>,
    /// The serial number of the reply among the daemon's messages.
    pub serial: u32,
}

/// One board as seen on the bus.
#[derive(Debug, Clone, PartialEq)]
pub struct BoardEntry {
    pub path: String,
    pub props: BoardProps,
}

/// A connection plus the name of its bus for messages.
pub struct Client {
    pub conn: Connection,
    pub bus: String,
}

impl Client {
    /// Every board the daemon serves, sorted by name then path.
    pub async fn boards(&self) -> Result<Vec<BoardEntry>, CtlError> {
        Ok(self.snapshot().await?.boards)
    }

    /// Every board, with where the answer came from: signals the daemon sent before this
    /// reply are already reflected in it (a watcher drops them rather than going back in time).
    pub async fn snapshot(&self) -> Result<Snapshot, CtlError> {
        let reply = self
            .conn
            .call_method(
                Some(BUS_NAME),
                MANAGER_PATH,
                Some(OBJECT_MANAGER_INTERFACE),
                "GetManagedObjects",
                &(),
            )
            .await
            .map_err(|e| CtlError::from_call(e, &self.bus))?;
        let (objects, stale) = crate::client::source::managed_boards(&reply).map_err(|e| {
            CtlError::Other(format!(
                "the daemon's GetManagedObjects reply on the {} is not a{{oa{{sa{{sv}}}}}}: {e}",
                self.bus
            ))
        })?;
        let mut boards: Vec<BoardEntry> = objects
            .into_iter()
            .map(|(path, props)| BoardEntry {
                path,
                props: BoardProps::from_map(&props),
            })
            .collect();
        sort_boards(&mut boards);
        let (sender, serial) = match stale {
            Some((sender, serial)) => (Some(sender), serial),
            None => (None, 0),
        };
        Ok(Snapshot {
            boards,
            sender,
            serial,
        })
    }

    /// The board named `wanted` (its `Name`, its id or its object path).
    pub async fn board(&self, wanted: &str) -> Result<BoardEntry, CtlError> {
        let boards = self.boards().await?;
        resolve(&boards, wanted).cloned()
    }

    /// A proxy for the board at `path`.
    pub async fn board_proxy(&self, path: &str) -> Result<BoardProxy<'static>, CtlError> {
        BoardProxy::builder(&self.conn)
            .path(path.to_owned())
            .cache_properties(zbus::proxy::CacheProperties::No)
            .build()
            .await
            .map_err(|e| CtlError::from_call(e, &self.bus))
    }
}

/// Stable display order: by name, then by path.
pub fn sort_boards(boards: &mut [BoardEntry]) {
    boards.sort_by(|a, b| {
        a.props
            .name
            .cmp(&b.props.name)
            .then_with(|| a.path.cmp(&b.path))
    });
}

/// Does `wanted` designate this board? Its `Name`, its object id, or its full object path.
pub fn matches(entry: &BoardEntry, wanted: &str) -> bool {
    entry.props.name == wanted || entry.path == wanted || board_id(&entry.path) == wanted
}

/// Finds the board `wanted` designates (see [`matches`]).
pub fn resolve<'a>(boards: &'a [BoardEntry], wanted: &str) -> Result<&'a BoardEntry, CtlError> {
    boards
        .iter()
        .find(|b| matches(b, wanted))
        .ok_or_else(|| CtlError::NoSuchBoard {
            wanted: wanted.to_owned(),
            known: boards.iter().map(|b| b.props.name.clone()).collect(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, id: &str) -> BoardEntry {
        BoardEntry {
            path: format!("{BOARD_PATH_PREFIX}{id}"),
            props: BoardProps {
                name: name.into(),
                ..Default::default()
            },
        }
    }

    #[test]
    fn boards_are_found_by_name_id_or_path() {
        let boards = vec![entry("board-1", "board_1"), entry("ttyACM0", "ttyACM0")];
        assert_eq!(
            resolve(&boards, "board-1").map(|b| &b.path),
            Ok(&boards[0].path)
        );
        assert_eq!(
            resolve(&boards, "board_1").map(|b| &b.path),
            Ok(&boards[0].path)
        );
        assert_eq!(
            resolve(&boards, "/org/eboardd/Bridge1/Board/ttyACM0").map(|b| &b.path),
            Ok(&boards[1].path)
        );
        match resolve(&boards, "board-9") {
            Err(CtlError::NoSuchBoard { known, .. }) => {
                assert_eq!(known, vec!["board-1", "ttyACM0"])
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn boards_sort_by_name() {
        let mut boards = vec![entry("b", "b"), entry("a", "z"), entry("a", "y")];
        sort_boards(&mut boards);
        let ids: Vec<&str> = boards.iter().map(|b| board_id(&b.path)).collect();
        assert_eq!(ids, vec!["y", "z", "b"]);
    }
}
