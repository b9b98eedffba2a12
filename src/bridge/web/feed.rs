//! The bridge's own model: the hall, the last move of each board, and the numbered log of
//! events that `/api/events` streams and replays. Pure: updates in, events out.
//!
//! Every [`HallUpdate`] becomes zero or more [`Event`]s named after the D-Bus member they stand
//! for (`MovePlayed`, `PropertiesChanged`, `InterfacesAdded`, `InterfacesRemoved`, …), plus the
//! bridge's own `LastMove` (the squares to mark) and `SourceDown` / `SourceUp`. A snapshot
//! after a reconnect is turned into the changes it implies, so a client that missed nothing
//! from the bridge's point of view needs no reload. The log keeps the newest events (at least
//! 10,000) for clients that reconnect with `Last-Event-ID`, within [`LOG_BYTES`] together
//! with the hall's current properties: a broker anyone may publish to can send big events
//! and big states, and they must not fill the memory (a reconnect older than what is kept
//! gets a reset snapshot, the truth all the same).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::bridge::web::lastmove::{LastMove, last_move};
use crate::client::{Hall, HallUpdate, Props};

/// The fewest events the log keeps (contract section 5) while they fit in [`LOG_BYTES`].
pub const MIN_HISTORY: usize = 10_000;

/// The most the log's events and the hall's properties may take together: 10,000 events of
/// 12 KB on average (a move's `PropertiesChanged` with a long game's PGN is a few KB). The
/// log gives way to the hall: it keeps what the hall leaves of this.
pub const LOG_BYTES: usize = 128 << 20;

/// What a JSON value costs in memory, near enough: its texts plus a word or two each.
fn value_bytes(v: &Value) -> usize {
    16 + match v {
        Value::String(s) => s.len(),
        Value::Array(a) => a.iter().map(value_bytes).sum(),
        Value::Object(o) => o.iter().map(|(k, v)| k.len() + 16 + value_bytes(v)).sum(),
        _ => 0,
    }
}

/// What one event costs in the log, near enough: its texts and their bookkeeping.
pub fn event_bytes(event: &Event) -> usize {
    event.data.len() + event.member.len() + event.board.as_ref().map_or(0, String::len) + 96
}

/// One event as `/api/events` sends it.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Counts up by one per event.
    pub id: u64,
    /// The SSE event name: the D-Bus member, or the bridge's own.
    pub member: String,
    /// The board it is about (`None`: about the source, for every client).
    pub board: Option<String>,
    /// The `data:` line: a JSON object with `board` and the arguments by name.
    pub data: String,
}

/// What a client reconnecting with `Last-Event-ID` can be given.
#[derive(Debug, Clone, PartialEq)]
pub enum Replay {
    /// Exactly the events after that id (maybe none).
    Events(Vec<Arc<Event>>),
    /// The id is older than the log, or not one of this run's: events were lost.
    Lost,
}

/// The hall plus its event log.
#[derive(Debug)]
pub struct Feed {
    hall: Hall,
    last_moves: HashMap<String, LastMove>,
    log: VecDeque<Arc<Event>>,
    capacity: usize,
    /// What the log's events take ([`event_bytes`]); with `hall_bytes`, at most `max_bytes`.
    bytes: usize,
    max_bytes: usize,
    /// What each board's properties take ([`value_bytes`]), and their sum.
    board_bytes: HashMap<String, usize>,
    hall_bytes: usize,
    next_id: u64,
}

impl Feed {
    /// An empty feed whose first event gets `first_id` (> 0) and whose log keeps `capacity`
    /// events (at least [`MIN_HISTORY`]).
    pub fn new(first_id: u64, capacity: usize) -> Feed {
        Self::with_bytes(first_id, capacity, LOG_BYTES)
    }

    /// [`Feed::new`] whose log keeps at most `max_bytes` of events (the newest one always).
    pub fn with_bytes(first_id: u64, capacity: usize, max_bytes: usize) -> Feed {
        Feed {
            hall: Hall::default(),
            last_moves: HashMap::new(),
            log: VecDeque::new(),
            capacity: capacity.max(MIN_HISTORY),
            bytes: 0,
            max_bytes,
            board_bytes: HashMap::new(),
            hall_bytes: 0,
            next_id: first_id.max(1),
        }
    }

    /// The events the log keeps now, and what they take.
    pub fn kept(&self) -> (usize, usize) {
        (self.log.len(), self.bytes)
    }

    /// What the hall's properties take now ([`LOG_BYTES`] holds them and the log).
    pub fn hall_bytes(&self) -> usize {
        self.hall_bytes
    }

    /// Counts what board `id`'s properties take now (nothing once it is gone).
    fn measure(&mut self, id: &str) {
        let now = self.hall.boards.get(id).map_or(0, |props| {
            props
                .iter()
                .map(|(k, v)| k.len() + 16 + value_bytes(v))
                .sum()
        });
        let old = match now {
            0 => self.board_bytes.remove(id),
            n => self.board_bytes.insert(id.to_owned(), n),
        };
        self.hall_bytes = self.hall_bytes + now - old.unwrap_or(0);
    }

    pub fn hall(&self) -> &Hall {
        &self.hall
    }

    /// The last move of a board, when its moves replay.
    pub fn last_move(&self, board: &str) -> Option<&LastMove> {
        self.last_moves.get(board)
    }

    /// The id of the newest event (the one before the first when there is none).
    pub fn last_id(&self) -> u64 {
        self.next_id - 1
    }

    /// Applies an update; returns the events it caused (also appended to the log, which
    /// then lets go of its oldest ones if the hall grew into its room).
    pub fn apply(&mut self, update: HallUpdate) -> Vec<Arc<Event>> {
        let touched: Vec<String> = match &update {
            HallUpdate::Snapshot(_) | HallUpdate::SourceDown { .. } => Vec::new(),
            HallUpdate::Added { board, .. }
            | HallUpdate::Removed { board }
            | HallUpdate::Changed { board, .. } => vec![board.clone()],
            HallUpdate::Signal { .. } => return self.apply_update(update),
        };
        let whole = matches!(update, HallUpdate::Snapshot(_));
        let out = self.apply_update(update);
        if whole {
            self.board_bytes.clear();
            self.hall_bytes = 0;
            let ids: Vec<String> = self.hall.boards.keys().cloned().collect();
            ids.iter().for_each(|id| self.measure(id));
        }
        touched.iter().for_each(|id| self.measure(id));
        self.trim(0);
        out
    }

    fn apply_update(&mut self, update: HallUpdate) -> Vec<Arc<Event>> {
        let mut out = Vec::new();
        match update {
            HallUpdate::Snapshot(boards) => {
                let was_up = self.hall.source_up;
                let fresh: HashMap<&String, &Props> = boards.iter().map(|(b, p)| (b, p)).collect();
                let gone: Vec<String> = self
                    .hall
                    .boards
                    .keys()
                    .filter(|b| !fresh.contains_key(b))
                    .cloned()
                    .collect();
                for board in gone {
                    self.push(&mut out, "InterfacesRemoved", Some(&board), Map::new());
                }
                for (board, props) in &boards {
                    match self.hall.boards.get(board) {
                        None => self.push_added(&mut out, board, props),
                        Some(old) => {
                            let changed: Props = props
                                .iter()
                                .filter(|(k, v)| old.get(*k) != Some(*v))
                                .map(|(k, v)| (k.clone(), v.clone()))
                                .collect();
                            if !changed.is_empty() {
                                self.push_changed(&mut out, board, changed);
                            }
                        }
                    }
                }
                self.hall.apply(&HallUpdate::Snapshot(boards.clone()));
                self.last_moves
                    .retain(|b, _| self.hall.boards.contains_key(b));
                for (board, _) in &boards {
                    self.refresh_last_move(&mut out, board);
                }
                if !was_up {
                    self.push(&mut out, "SourceUp", None, Map::new());
                }
            }
            HallUpdate::Added { board, props } => {
                self.push_added(&mut out, &board, &props);
                self.hall.apply(&HallUpdate::Added {
                    board: board.clone(),
                    props,
                });
                self.refresh_last_move(&mut out, &board);
            }
            HallUpdate::Removed { board } => {
                self.push(&mut out, "InterfacesRemoved", Some(&board), Map::new());
                self.last_moves.remove(&board);
                self.hall.apply(&HallUpdate::Removed { board });
            }
            HallUpdate::Changed { board, changed } => {
                let moves = changed.contains_key("Moves") || changed.contains_key("Pgn");
                self.push_changed(&mut out, &board, changed.clone());
                self.hall.apply(&HallUpdate::Changed {
                    board: board.clone(),
                    changed,
                });
                if moves {
                    self.refresh_last_move(&mut out, &board);
                }
            }
            HallUpdate::Signal {
                board,
                member,
                args,
            } => self.push(&mut out, &member, Some(&board), args),
            HallUpdate::SourceDown { reason } => {
                let mut args = Map::new();
                args.insert("reason".into(), Value::String(reason.clone()));
                self.push(&mut out, "SourceDown", None, args);
                self.hall.apply(&HallUpdate::SourceDown { reason });
            }
        }
        out
    }

    /// The events after `after`, for a client reconnecting with `Last-Event-ID: after`.
    pub fn since(&self, after: u64) -> Replay {
        if after > self.last_id() {
            return Replay::Lost;
        }
        let oldest = self.log.front().map_or(self.next_id, |e| e.id);
        if after + 1 < oldest {
            return Replay::Lost;
        }
        // Ids are consecutive, so the position in the log follows from the id.
        let skip = (after + 1 - oldest) as usize;
        Replay::Events(self.log.iter().skip(skip).cloned().collect())
    }

    /// A `Snapshot` event (not logged) with every board, or only `only`, in table order: each
    /// as `{board, properties, last_move}`, plus whether the source is up and whether it is
    /// a `reset` (the client asked to resume from an id that cannot be replayed exactly, so
    /// what it holds is to be thrown away). Its id is the newest event's, so a client that
    /// reconnects with it misses nothing.
    pub fn snapshot_event(&self, only: Option<&str>, reset: bool) -> Event {
        let boards: Vec<Value> = self
            .hall
            .ordered()
            .into_iter()
            .filter(|(id, _)| only.is_none_or(|o| o == id.as_str()))
            .map(|(id, props)| {
                json!({
                    "board": id,
                    "properties": props,
                    "last_move": self.last_moves.get(id.as_str()),
                })
            })
            .collect();
        let data = json!({"boards": boards, "source_up": self.hall.source_up, "reset": reset});
        Event {
            id: self.last_id(),
            member: "Snapshot".into(),
            board: None,
            data: data.to_string(),
        }
    }

    fn push_added(&mut self, out: &mut Vec<Arc<Event>>, board: &str, props: &Props) {
        let mut args = Map::new();
        args.insert("properties".into(), Value::Object(props.clone()));
        self.push(out, "InterfacesAdded", Some(board), args);
    }

    fn push_changed(&mut self, out: &mut Vec<Arc<Event>>, board: &str, changed: Props) {
        let mut args = Map::new();
        args.insert("changed".into(), Value::Object(changed));
        self.push(out, "PropertiesChanged", Some(board), args);
    }

    /// Recomputes a board's last move; a `LastMove` event when it changed.
    fn refresh_last_move(&mut self, out: &mut Vec<Arc<Event>>, board: &str) {
        let Some(props) = self.hall.boards.get(board) else {
            return;
        };
        let now = last_move(props);
        if now.as_ref() == self.last_moves.get(board) {
            return;
        }
        let args = match serde_json::to_value(&now) {
            Ok(Value::Object(map)) => map,
            _ => {
                let mut m = Map::new();
                for k in ["uci", "san", "from", "to"] {
                    m.insert(k.into(), Value::Null);
                }
                m
            }
        };
        match now {
            Some(lm) => self.last_moves.insert(board.to_owned(), lm),
            None => self.last_moves.remove(board),
        };
        self.push(out, "LastMove", Some(board), args);
    }

    fn push(
        &mut self,
        out: &mut Vec<Arc<Event>>,
        member: &str,
        board: Option<&str>,
        args: Map<String, Value>,
    ) {
        let mut data = args;
        // The board is the bridge's own word, whatever a source's arguments say.
        match board {
            Some(b) => data.insert("board".into(), Value::String(b.to_owned())),
            None => data.remove("board"),
        };
        let event = Arc::new(Event {
            id: self.next_id,
            member: member.to_owned(),
            board: board.map(str::to_owned),
            data: Value::Object(data).to_string(),
        });
        self.next_id += 1;
        let size = event_bytes(&event);
        self.trim(size);
        self.bytes += size;
        self.log.push_back(event.clone());
        out.push(event);
    }

    /// Lets go of the oldest events until `room` more bytes (and one more event) fit beside
    /// the hall; with no `room`, until what is kept fits (the newest event stays whatever
    /// its size).
    fn trim(&mut self, room: usize) {
        let (extra, keep) = if room > 0 { (1, 0) } else { (0, 1) };
        let max = self.max_bytes.saturating_sub(self.hall_bytes);
        while self.log.len() > keep
            && (self.log.len() + extra > self.capacity || self.bytes + room > max)
        {
            if let Some(old) = self.log.pop_front() {
                self.bytes -= event_bytes(&old);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(v: Value) -> Props {
        v.as_object().unwrap().clone()
    }

    fn members(events: &[Arc<Event>]) -> Vec<&str> {
        events.iter().map(|e| e.member.as_str()).collect()
    }

    fn data(e: &Event) -> Value {
        serde_json::from_str(&e.data).unwrap()
    }

    #[test]
    fn signals_and_changes_become_numbered_events() {
        let mut feed = Feed::new(100, 0);
        let ev = feed.apply(HallUpdate::Snapshot(vec![(
            "b1".into(),
            props(json!({"Name": "b1", "Moves": []})),
        )]));
        assert_eq!(members(&ev), ["InterfacesAdded", "SourceUp"]);
        assert_eq!(ev[0].id, 100);
        assert_eq!(data(&ev[0])["properties"]["Name"], "b1");
        let ev = feed.apply(HallUpdate::Signal {
            board: "b1".into(),
            member: "MovePlayed".into(),
            args: props(json!({"ply": 1, "san": "e4", "uci": "e2e4"})),
        });
        assert_eq!(members(&ev), ["MovePlayed"]);
        assert_eq!(
            data(&ev[0]),
            json!({"board": "b1", "ply": 1, "san": "e4", "uci": "e2e4"})
        );
        let ev = feed.apply(HallUpdate::Changed {
            board: "b1".into(),
            changed: props(json!({"Moves": ["e4"]})),
        });
        assert_eq!(members(&ev), ["PropertiesChanged", "LastMove"]);
        assert_eq!(
            data(&ev[0]),
            json!({"board": "b1", "changed": {"Moves": ["e4"]}})
        );
        assert_eq!(data(&ev[1])["from"], "e2");
        assert_eq!(feed.last_id(), 104);
        assert_eq!(feed.last_move("b1").unwrap().to, "e4");
    }

    #[test]
    fn a_snapshot_after_reconnect_is_told_as_changes() {
        let mut feed = Feed::new(1, 0);
        feed.apply(HallUpdate::Snapshot(vec![
            ("a".into(), props(json!({"State": "playing", "Fen": "x"}))),
            ("gone".into(), props(json!({}))),
        ]));
        feed.apply(HallUpdate::SourceDown {
            reason: "eboardd stopped".into(),
        });
        assert!(!feed.hall().source_up);
        let ev = feed.apply(HallUpdate::Snapshot(vec![
            ("a".into(), props(json!({"State": "finished", "Fen": "x"}))),
            ("new".into(), props(json!({}))),
        ]));
        assert_eq!(
            members(&ev),
            [
                "InterfacesRemoved",
                "PropertiesChanged",
                "InterfacesAdded",
                "SourceUp"
            ]
        );
        assert_eq!(data(&ev[0]), json!({"board": "gone"}));
        assert_eq!(data(&ev[1])["changed"], json!({"State": "finished"}));
        // The same snapshot again says nothing.
        let again = feed.apply(HallUpdate::Snapshot(vec![
            ("a".into(), props(json!({"State": "finished", "Fen": "x"}))),
            ("new".into(), props(json!({}))),
        ]));
        assert!(again.is_empty(), "{again:?}");
    }

    #[test]
    fn replay_gives_exactly_what_was_missed_or_says_lost() {
        let mut feed = Feed::new(1, MIN_HISTORY);
        for ply in 1..=(MIN_HISTORY as u64 + 50) {
            feed.apply(HallUpdate::Signal {
                board: "b".into(),
                member: "MovePlayed".into(),
                args: props(json!({"ply": ply})),
            });
        }
        let last = feed.last_id();
        assert_eq!(last, MIN_HISTORY as u64 + 50);
        match feed.since(last - 3) {
            Replay::Events(ev) => {
                assert_eq!(
                    ev.iter().map(|e| e.id).collect::<Vec<_>>(),
                    [last - 2, last - 1, last]
                )
            }
            Replay::Lost => panic!("lost"),
        }
        assert_eq!(feed.since(last), Replay::Events(vec![]));
        // The oldest kept is 51: after 50 everything is there, after 49 one is lost.
        match feed.since(50) {
            Replay::Events(ev) => assert_eq!(ev.len(), MIN_HISTORY),
            Replay::Lost => panic!("lost"),
        }
        assert_eq!(feed.since(49), Replay::Lost);
        assert_eq!(feed.since(last + 1), Replay::Lost, "an id of another run");
    }

    #[test]
    fn the_log_is_bounded_by_bytes_too() {
        let mut feed = Feed::with_bytes(1, MIN_HISTORY, 10_000);
        let big = "x".repeat(3000);
        for ply in 1..=10u64 {
            feed.apply(HallUpdate::Signal {
                board: "b".into(),
                member: "MovePlayed".into(),
                args: props(json!({"ply": ply, "san": big})),
            });
        }
        let (events, bytes) = feed.kept();
        assert_eq!(events, 3, "three of about 3.1 KB fit in 10 KB");
        assert!(bytes <= 10_000, "{bytes}");
        match feed.since(feed.last_id() - 3) {
            Replay::Events(ev) => assert_eq!(ev.len(), 3),
            Replay::Lost => panic!("lost"),
        }
        assert_eq!(feed.since(feed.last_id() - 4), Replay::Lost);
    }

    #[test]
    fn snapshot_event_is_in_table_order_and_filters() {
        let mut feed = Feed::new(1, 0);
        feed.apply(HallUpdate::Snapshot(vec![
            ("x".into(), props(json!({"Number": 2}))),
            ("y".into(), props(json!({"Number": 1, "Moves": ["d4"]}))),
        ]));
        let snap = feed.snapshot_event(None, false);
        assert_eq!(snap.id, feed.last_id());
        let v = data(&snap);
        assert_eq!(v["source_up"], true);
        assert_eq!(v["reset"], false);
        assert_eq!(data(&feed.snapshot_event(None, true))["reset"], true);
        assert_eq!(v["boards"][0]["board"], "y");
        assert_eq!(v["boards"][0]["last_move"]["uci"], "d2d4");
        assert_eq!(v["boards"][1]["last_move"], Value::Null);
        let only = data(&feed.snapshot_event(Some("x"), false));
        assert_eq!(only["boards"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn the_board_in_the_data_is_the_bridges_own() {
        let mut feed = Feed::new(1, 0);
        let ev = feed.apply(HallUpdate::Signal {
            board: "r/b".into(),
            member: "FlagFell".into(),
            args: props(json!({"board": "elsewhere", "player": "white"})),
        });
        assert_eq!(data(&ev[0]), json!({"board": "r/b", "player": "white"}));
        let ev = feed.apply(HallUpdate::SourceDown { reason: "x".into() });
        assert_eq!(data(&ev[0]), json!({"reason": "x"}));
    }

    #[test]
    fn a_retraction_moves_the_last_move_back() {
        let mut feed = Feed::new(1, 0);
        feed.apply(HallUpdate::Snapshot(vec![(
            "b".into(),
            props(json!({"Moves": ["e4", "e5"]})),
        )]));
        let ev = feed.apply(HallUpdate::Changed {
            board: "b".into(),
            changed: props(json!({"Moves": ["e4"]})),
        });
        assert_eq!(data(&ev[1])["uci"], "e2e4");
        let ev = feed.apply(HallUpdate::Changed {
            board: "b".into(),
            changed: props(json!({"Moves": []})),
        });
        assert_eq!(
            data(&ev[1]),
            json!({"board": "b", "uci": null, "san": null, "from": null, "to": null})
        );
    }
}
