//! The client side of the D-Bus contract: one model of the boards as seen from outside the
//! daemon (on the bus, or on a broker the relays of a hall publish to), shared by eboardctl's
//! verbs, watch, serve and relay.
//!
//! Stand-in with the agreed API until the shared client model lands; the real `watch_bus` and
//! `Hall` come with it.

pub mod mqtt;

use std::collections::BTreeMap;

/// Board properties under their D-Bus names as JSON.
pub type Props = serde_json::Map<String, serde_json::Value>;

/// What happens to the boards of a source, in the order the source reported it.
#[derive(Debug, Clone, PartialEq)]
pub enum HallUpdate {
    /// The whole current set of boards (on connect and every reconnect); boards not in it are gone.
    Snapshot(Vec<(String, Props)>),
    Added {
        board: String,
        props: Props,
    },
    Removed {
        board: String,
    },
    Changed {
        board: String,
        changed: Props,
    },
    /// A board signal with its arguments under the contract's names.
    Signal {
        board: String,
        member: String,
        args: Props,
    },
    /// The source went away; a Snapshot follows when it is back.
    SourceDown {
        reason: String,
    },
}

/// Pure: the boards as last seen, kept current by `apply`.
#[derive(Debug, Default, Clone)]
pub struct Hall {
    pub boards: BTreeMap<String, Props>,
    pub source_up: bool,
}

impl Hall {
    pub fn apply(&mut self, update: &HallUpdate) {
        match update {
            HallUpdate::Snapshot(boards) => {
                self.boards = boards.iter().cloned().collect();
                self.source_up = true;
            }
            HallUpdate::Added { board, props } => {
                self.boards.insert(board.clone(), props.clone());
            }
            HallUpdate::Removed { board } => {
                self.boards.remove(board);
            }
            HallUpdate::Changed { board, changed } => {
                if let Some(p) = self.boards.get_mut(board) {
                    for (k, v) in changed {
                        p.insert(k.clone(), v.clone());
                    }
                }
            }
            HallUpdate::Signal { .. } => {}
            HallUpdate::SourceDown { .. } => self.source_up = false,
        }
    }
}

/// The local bus as a source (stand-in: the shared model's version replaces it).
pub async fn watch_bus(
    _bus: crate::cli::bus::BusChoice,
    _tx: tokio::sync::mpsc::Sender<HallUpdate>,
) {
    std::future::pending::<()>().await
}
