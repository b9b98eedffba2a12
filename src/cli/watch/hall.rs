//! Hall updates → the watch view's events, for either source of [`HallUpdate`]s: the local
//! bus ([`Naming::Bus`]) or a hall's broker ([`Naming::Hall`], `eboardctl watch --mqtt`).
//!
//! [`Adapter`] (pure) remembers which boards the view has. On the bus a board's "path" is its
//! object path and its name its `Name`; in a hall its "path" is its hall id `<rig>/<board id>`
//! and its name `<rig>/<Name>`, since two rigs may well both have a `board-1`. The loop in
//! `watch`'s loop (`follow`) then feeds the same [`Model`](super::model::Model), screen and lines.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::client::event::WatchEvent;
use crate::client::props::BoardProps;
use crate::client::{HallUpdate, Props};
use eboard_core::contract::board_path;
use eboard_core::session::Event;

/// How the source names its boards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Naming {
    /// The local bus: ids are object ids; the first snapshot is the start, not a restart.
    Bus,
    /// A hall's broker: ids are `<rig>/<board id>`.
    Hall,
}

/// Hall updates → watch events, remembering which boards the view has.
#[derive(Debug)]
pub struct Adapter {
    naming: Naming,
    known: BTreeSet<String>,
    /// Whether a snapshot has been seen (on the bus, only later ones mean "started again").
    seen: bool,
}

impl Default for Adapter {
    fn default() -> Self {
        Adapter::new(Naming::Hall)
    }
}

/// The name to show for a hall board: `<rig>/<Name>` (the id when it has no name).
fn hall_name(id: &str, name: Option<&str>) -> String {
    match (id.split_once('/'), name) {
        (Some((rig, _)), Some(n)) if !n.is_empty() => format!("{rig}/{n}"),
        _ => id.to_owned(),
    }
}

impl Adapter {
    pub fn new(naming: Naming) -> Self {
        Adapter {
            naming,
            known: BTreeSet::new(),
            seen: false,
        }
    }

    /// The view's key for a source's board id.
    fn path(&self, id: &str) -> String {
        match self.naming {
            Naming::Bus => board_path(id),
            Naming::Hall => id.to_owned(),
        }
    }

    fn board_props(&self, id: &str, props: &Props) -> Box<BoardProps> {
        let mut p = BoardProps::from_map(props);
        if self.naming == Naming::Hall {
            p.name = hall_name(id, props.get("Name").and_then(Value::as_str));
        }
        Box::new(p)
    }

    pub fn events(&mut self, update: HallUpdate) -> Vec<WatchEvent> {
        match update {
            HallUpdate::Snapshot(boards) => {
                let now: BTreeSet<String> = boards.iter().map(|(id, _)| self.path(id)).collect();
                let mut out = Vec::new();
                if self.naming == Naming::Hall || self.seen {
                    out.push(WatchEvent::DaemonStarted);
                }
                self.seen = true;
                for gone in self.known.difference(&now) {
                    out.push(WatchEvent::Removed { path: gone.clone() });
                }
                let mut added: Vec<(String, Box<BoardProps>)> = boards
                    .iter()
                    .map(|(id, props)| (self.path(id), self.board_props(id, props)))
                    .collect();
                if self.naming == Naming::Bus {
                    // The bus view lists boards by name, as `list` does.
                    added.sort_by(|a, b| a.1.name.cmp(&b.1.name).then_with(|| a.0.cmp(&b.0)));
                }
                out.extend(
                    added
                        .into_iter()
                        .map(|(path, props)| WatchEvent::Board { path, props }),
                );
                self.known = now;
                out
            }
            HallUpdate::Added { board, props } => {
                let path = self.path(&board);
                self.known.insert(path.clone());
                let props = self.board_props(&board, &props);
                vec![WatchEvent::Board { path, props }]
            }
            HallUpdate::Removed { board } => {
                let path = self.path(&board);
                self.known.remove(&path);
                vec![WatchEvent::Removed { path }]
            }
            HallUpdate::Changed { board, mut changed } => {
                if self.naming == Naming::Hall
                    && let Some(Value::String(n)) = changed.get("Name")
                {
                    let shown = hall_name(&board, Some(n));
                    changed.insert("Name".into(), Value::from(shown));
                }
                vec![WatchEvent::Changed {
                    path: self.path(&board),
                    changed,
                }]
            }
            HallUpdate::Signal {
                board,
                member,
                args,
            } => {
                // A member this version does not know (or malformed arguments) is shown by
                // its property changes only.
                match Event::from_signal_args(&member, args) {
                    Some(signal) => vec![WatchEvent::Signal {
                        path: self.path(&board),
                        signal,
                    }],
                    None => Vec::new(),
                }
            }
            HallUpdate::SourceDown { .. } => {
                self.known.clear();
                vec![WatchEvent::DaemonStopped]
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(v: Value) -> Props {
        v.as_object().expect("object").clone()
    }

    #[test]
    fn hall_updates_become_watch_events_with_rig_names() {
        let mut a = Adapter::default();
        let out = a.events(HallUpdate::Snapshot(vec![
            (
                "r1/board_1".into(),
                p(json!({"Name": "board-1", "State": "playing"})),
            ),
            ("r2/board_1".into(), p(json!({"Name": "board-1"}))),
        ]));
        assert_eq!(out[0], WatchEvent::DaemonStarted);
        let names: Vec<String> = out[1..]
            .iter()
            .map(|e| match e {
                WatchEvent::Board { props, .. } => props.name.clone(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(names, vec!["r1/board-1", "r2/board-1"]);

        let out = a.events(HallUpdate::Signal {
            board: "r1/board_1".into(),
            member: "MovePlayed".into(),
            args: p(json!({"ply": 1, "san": "e4", "uci": "e2e4", "fen": "f", "white_ms": 5, "black_ms": 6})),
        });
        assert_eq!(
            out,
            vec![WatchEvent::Signal {
                path: "r1/board_1".into(),
                signal: Event::MovePlayed {
                    ply: 1,
                    san: "e4".into(),
                    uci: "e2e4".into(),
                    fen: "f".into(),
                    white_ms: 5,
                    black_ms: 6
                }
            }]
        );
        let unknown = a.events(HallUpdate::Signal {
            board: "r1/board_1".into(),
            member: "SomethingNew".into(),
            args: Props::new(),
        });
        assert!(unknown.is_empty());

        // A new snapshot without r2's board removes it from the view.
        let out = a.events(HallUpdate::Snapshot(vec![(
            "r1/board_1".into(),
            p(json!({"Name": "board-1"})),
        )]));
        assert!(out.contains(&WatchEvent::Removed {
            path: "r2/board_1".into()
        }));
        assert_eq!(
            a.events(HallUpdate::SourceDown { reason: "x".into() }),
            vec![WatchEvent::DaemonStopped]
        );
    }

    #[test]
    fn bus_boards_are_object_paths_and_the_first_snapshot_is_the_start() {
        let mut a = Adapter::new(Naming::Bus);
        let out = a.events(HallUpdate::Snapshot(vec![
            ("board_1".into(), p(json!({"Name": "board-1"}))),
            ("board_2".into(), p(json!({"Name": "board 2"}))),
        ]));
        let boards: Vec<(String, String)> = out
            .iter()
            .map(|e| match e {
                WatchEvent::Board { path, props } => (path.clone(), props.name.clone()),
                other => panic!("the first snapshot is only boards: {other:?}"),
            })
            .collect();
        assert_eq!(
            boards,
            vec![
                (board_path("board_2"), "board 2".to_owned()),
                (board_path("board_1"), "board-1".to_owned())
            ],
            "by name, as list shows them"
        );
        let out = a.events(HallUpdate::Changed {
            board: "board_1".into(),
            changed: p(json!({"Name": "renamed"})),
        });
        assert_eq!(
            out,
            vec![WatchEvent::Changed {
                path: board_path("board_1"),
                changed: p(json!({"Name": "renamed"}))
            }]
        );
        assert_eq!(
            a.events(HallUpdate::SourceDown { reason: "x".into() }),
            vec![WatchEvent::DaemonStopped]
        );
        let out = a.events(HallUpdate::Snapshot(vec![]));
        assert_eq!(
            out,
            vec![WatchEvent::DaemonStarted],
            "a later snapshot is a restart"
        );
    }
}
