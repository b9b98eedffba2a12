//! The hall model: every board as last seen, kept current by applying [`HallUpdate`]s.
//!
//! Properties stay generic JSON under their D-Bus names ([`Props`]) rather than a fixed
//! struct, so a daemon that gains a property (Gap, Number, Variant…) shows it everywhere
//! without a change here. Pure: no I/O, no clock.

use std::collections::BTreeMap;

use serde_json::Value;

/// Board properties under their D-Bus names as JSON (t/u → number, as → array, a(sss) → array
/// of arrays, (uu) → array). Generic over whatever properties the daemon has.
pub type Props = serde_json::Map<String, Value>;

/// One change of the hall, in the order the source saw it.
#[derive(Debug, Clone, PartialEq)]
pub enum HallUpdate {
    /// The whole current set of boards (on connect and every reconnect); boards not in it are
    /// gone.
    Snapshot(Vec<(String, Props)>),
    /// A board appeared, with all its properties.
    Added { board: String, props: Props },
    /// A board went away.
    Removed { board: String },
    /// Some properties of a board changed (from `PropertiesChanged`).
    Changed { board: String, changed: Props },
    /// A board signal with its arguments under the contract's names (section 2), e.g. member
    /// "MovePlayed", args {"ply":3,"san":"Nf3","uci":"g1f3","fen":..,"white_ms":..,"black_ms":..}.
    Signal {
        board: String,
        member: String,
        args: Props,
    },
    /// The source (the bus, the daemon, the broker) went away; a Snapshot follows when it is
    /// back.
    SourceDown { reason: String },
}

impl HallUpdate {
    /// The board this update is about, if it is about one board.
    pub fn board(&self) -> Option<&str> {
        match self {
            HallUpdate::Added { board, .. }
            | HallUpdate::Removed { board }
            | HallUpdate::Changed { board, .. }
            | HallUpdate::Signal { board, .. } => Some(board),
            HallUpdate::Snapshot(_) | HallUpdate::SourceDown { .. } => None,
        }
    }
}

/// The boards as last seen, kept current by [`Hall::apply`].
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Hall {
    /// Board id → its properties.
    pub boards: BTreeMap<String, Props>,
    /// Whether the source is there now. While it is down the boards are kept as last seen
    /// (a page can still show them, marked stale).
    pub source_up: bool,
}

impl Hall {
    /// Applies one update. Signals change nothing here: every fact they carry also arrives as
    /// a property change, which is the one source of truth for the state.
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
                // A change for a board not (yet) known starts it with what is known: the
                // source may deliver a change before the board's full properties.
                let props = self.boards.entry(board.clone()).or_default();
                for (name, value) in changed {
                    props.insert(name.clone(), value.clone());
                }
            }
            HallUpdate::Signal { .. } => {}
            HallUpdate::SourceDown { .. } => self.source_up = false,
        }
    }

    /// The board ids in table order (see [`table_order`]).
    pub fn ordered(&self) -> Vec<(&String, &Props)> {
        let mut boards: Vec<(&String, &Props)> = self.boards.iter().collect();
        boards.sort_by(|a, b| table_order((a.0, a.1), (b.0, b.1)));
        boards
    }
}

/// The table number of a board: its `Number` property, `None` when missing or 0 (no number).
pub fn table_number(props: &Props) -> Option<u64> {
    props
        .get("Number")
        .and_then(Value::as_u64)
        .filter(|&n| n > 0)
}

/// Table order, as the hall is laid out: numbered boards by number, then the boards without a
/// number (0 or missing), each group by id.
pub fn table_order(a: (&String, &Props), b: (&String, &Props)) -> std::cmp::Ordering {
    let key = |props: &Props| match table_number(props) {
        Some(n) => (0u8, n),
        None => (1u8, 0),
    };
    key(a.1).cmp(&key(b.1)).then_with(|| a.0.cmp(b.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn props(v: Value) -> Props {
        v.as_object().expect("object").clone()
    }

    #[test]
    fn snapshot_replaces_and_changes_merge() {
        let mut hall = Hall::default();
        hall.apply(&HallUpdate::Added {
            board: "old".into(),
            props: props(json!({"Name": "old"})),
        });
        hall.apply(&HallUpdate::Snapshot(vec![(
            "b1".into(),
            props(json!({"Name": "b1", "Moves": [], "WhiteTimeMs": 1000})),
        )]));
        assert!(hall.source_up);
        assert_eq!(hall.boards.keys().collect::<Vec<_>>(), vec!["b1"]);
        hall.apply(&HallUpdate::Changed {
            board: "b1".into(),
            changed: props(json!({"Moves": ["e4"], "Gap": ""})),
        });
        let b1 = &hall.boards["b1"];
        assert_eq!(b1["Moves"], json!(["e4"]));
        assert_eq!(b1["Gap"], json!(""), "unknown properties are kept too");
        assert_eq!(
            b1["WhiteTimeMs"],
            json!(1000),
            "others are left as they were"
        );
    }

    #[test]
    fn signals_change_nothing_and_source_down_keeps_boards() {
        let mut hall = Hall::default();
        hall.apply(&HallUpdate::Snapshot(vec![("b".into(), Props::new())]));
        let before = hall.clone();
        hall.apply(&HallUpdate::Signal {
            board: "b".into(),
            member: "MovePlayed".into(),
            args: props(json!({"ply": 1})),
        });
        assert_eq!(hall, before);
        hall.apply(&HallUpdate::SourceDown {
            reason: "bus gone".into(),
        });
        assert!(!hall.source_up);
        assert_eq!(hall.boards.len(), 1);
        hall.apply(&HallUpdate::Removed { board: "b".into() });
        assert!(hall.boards.is_empty());
    }

    #[test]
    fn change_before_add_starts_the_board() {
        let mut hall = Hall::default();
        hall.apply(&HallUpdate::Changed {
            board: "x".into(),
            changed: props(json!({"Fen": "f"})),
        });
        assert_eq!(hall.boards["x"]["Fen"], json!("f"));
    }

    #[test]
    fn table_order_numbers_first_then_ids() {
        let mut hall = Hall::default();
        hall.apply(&HallUpdate::Snapshot(vec![
            ("zeta".into(), props(json!({"Number": 0}))),
            ("b10".into(), props(json!({"Number": 10}))),
            ("alpha".into(), props(json!({}))),
            ("b2".into(), props(json!({"Number": 2}))),
            ("a2".into(), props(json!({"Number": 2}))),
        ]));
        let ids: Vec<&str> = hall.ordered().iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(ids, vec!["a2", "b2", "b10", "alpha", "zeta"]);
    }
}
