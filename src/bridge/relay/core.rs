//! The relay's pure core: what the boards of this rig do (as [`HallUpdate`]s from the bus) in,
//! what to publish on the broker out, and which publications the broker has confirmed.
//!
//! No I/O, no clock: the shell tells it when the broker connection comes and goes, hands it
//! each update, asks [`Relay::poll_transmit`] what to send next, and reports which packet id
//! each publication got and which the broker acknowledged. That is all it takes to keep the
//! contract's promises (section 6) through any fault:
//!
//! - events (`<board>/event`, QoS 1) are numbered per board when they happen and kept, in
//!   order, until the broker acknowledged them; publications in flight when the connection
//!   drops are sent again after the reconnect (a consumer may see a duplicate `seq`, never a
//!   reordering). At most `max_queued` events wait; past that the oldest are dropped, which
//!   consumers see as a gap in `seq`, and the shell is told loudly;
//! - retained topics (`status`, `<board>/state`, `<board>/pgn`) are not queued: only their
//!   latest value matters, so a board is marked dirty and its current value is published when
//!   the window allows, and every one is republished after each (re)connect (a restarted
//!   broker may have lost them);
//! - a board that leaves the rig gets empty retained payloads on `state` and `pgn`, which
//!   deletes them on the broker;
//! - each run of the relay has its own id (`Config::run`, made by the shell from the start
//!   time and the process id): every event carries it as `"run"`, and it is retained on
//!   `<prefix>/<rig>/run` (after `status`, at every connect), so a reader scopes `seq` by run:
//!   a restarted relay's `seq` 1 is a new count, a resent `seq` 1 of the same run a repeat.
//!   `status` stays the contract's plain `online`/`offline`.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde_json::Value;

use crate::client::{HallUpdate, Props};
use crate::mqtt::topics::{Kind, RigTopics};

pub use crate::mqtt::{OFFLINE, ONLINE};

/// The contract's minimum for events kept while the broker is away.
pub const MIN_QUEUED: usize = 10_000;

/// How the core is set up.
#[derive(Debug, Clone)]
pub struct Config {
    pub topics: RigTopics,
    /// Events kept while they cannot be delivered (at least [`MIN_QUEUED`]).
    pub max_queued: usize,
    /// Publications handed to the MQTT client and not yet acknowledged, at most. Must not
    /// exceed the client's in-flight limit, so the client never holds one back.
    pub window: usize,
    /// This run's id (`mqtt::is_run_id`).
    pub run: String,
}

/// One message to publish (always QoS 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Publication {
    /// The core's own number for it, to match the packet id the client gives it.
    pub id: u64,
    pub topic: String,
    pub payload: String,
    pub retain: bool,
}

/// Something the operator must hear about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// The event queue is full: from now on the oldest events are dropped until the broker
    /// takes them again.
    QueueFull { limit: usize },
    /// The broker is back; this many events were dropped while it was away.
    Dropped { count: u64 },
}

/// An event waiting for the broker.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Event {
    id: u64,
    topic: String,
    payload: String,
}

/// What a publication handed to the client was, so a lost connection can redo it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Handed {
    Event(Event),
    State(String),
    Pgn(String),
    ClearState(String),
    ClearPgn(String),
    Status,
    Run,
}

/// The relay's state.
#[derive(Debug)]
pub struct Relay {
    config: Config,
    /// The boards as last reported by the bus.
    boards: BTreeMap<String, Props>,
    /// The last `seq` given per board; kept for the relay's whole run, also when a board
    /// leaves and comes back, so a board's `seq` never goes back while the relay runs.
    seq: BTreeMap<String, u64>,
    queue: VecDeque<Event>,
    /// Handed to the client, waiting for its packet id (in the order handed).
    unassigned: VecDeque<u64>,
    /// Handed to the client: by the core's id.
    handed: BTreeMap<u64, Handed>,
    /// Packet id → the core's id, once the client has sent it.
    inflight: BTreeMap<u16, u64>,
    dirty_state: BTreeSet<String>,
    dirty_pgn: BTreeSet<String>,
    /// Boards whose retained `state` / `pgn` are to be cleared.
    clear_state: BTreeSet<String>,
    clear_pgn: BTreeSet<String>,
    /// What was last published (and not lost) per board, to skip repeats.
    sent_state: BTreeMap<String, String>,
    sent_pgn: BTreeMap<String, String>,
    status_dirty: bool,
    /// The run id is to be published (at every connect).
    run_dirty: bool,
    /// Whether the daemon is there (its boards are live).
    source_up: bool,
    /// Whether a snapshot of the bus has been seen since the relay started.
    seen_snapshot: bool,
    /// Boards with a retained `state` on the broker seen before the first snapshot.
    retained_seen: BTreeSet<String>,
    /// A clean stop is under way: the status says `offline` whatever the bus does.
    stopping: bool,
    connected: bool,
    next_id: u64,
    dropped_since_connect: u64,
    dropped_total: u64,
    notices: Vec<Notice>,
}

impl Relay {
    pub fn new(config: Config) -> Self {
        Relay {
            config,
            boards: BTreeMap::new(),
            seq: BTreeMap::new(),
            queue: VecDeque::new(),
            unassigned: VecDeque::new(),
            handed: BTreeMap::new(),
            inflight: BTreeMap::new(),
            dirty_state: BTreeSet::new(),
            dirty_pgn: BTreeSet::new(),
            clear_state: BTreeSet::new(),
            clear_pgn: BTreeSet::new(),
            sent_state: BTreeMap::new(),
            sent_pgn: BTreeMap::new(),
            status_dirty: true,
            run_dirty: true,
            source_up: false,
            seen_snapshot: false,
            retained_seen: BTreeSet::new(),
            stopping: false,
            connected: false,
            next_id: 1,
            dropped_since_connect: 0,
            dropped_total: 0,
            notices: Vec::new(),
        }
    }

    /// The rig's `status` as it should stand now.
    pub fn status(&self) -> &'static str {
        if self.source_up && !self.stopping {
            ONLINE
        } else {
            OFFLINE
        }
    }

    /// Events waiting or unacknowledged.
    pub fn queued_events(&self) -> usize {
        self.queue.len()
            + self
                .handed
                .values()
                .filter(|h| matches!(h, Handed::Event(_)))
                .count()
    }

    /// Events dropped because the queue was full, since the relay started.
    pub fn dropped_total(&self) -> u64 {
        self.dropped_total
    }

    /// The boards as last reported.
    pub fn boards(&self) -> &BTreeMap<String, Props> {
        &self.boards
    }

    /// What the operator must hear about since the last call.
    pub fn take_notices(&mut self) -> Vec<Notice> {
        std::mem::take(&mut self.notices)
    }

    /// One update from the bus.
    pub fn on_update(&mut self, update: HallUpdate) {
        match update {
            HallUpdate::Snapshot(boards) => {
                let now: BTreeMap<String, Props> = boards.into_iter().collect();
                let gone: Vec<String> = self
                    .boards
                    .keys()
                    .filter(|b| !now.contains_key(*b))
                    .cloned()
                    .collect();
                for board in gone {
                    self.remove(&board);
                }
                for board in std::mem::take(&mut self.retained_seen) {
                    if !now.contains_key(&board) {
                        self.clear_state.insert(board.clone());
                        self.clear_pgn.insert(board);
                    }
                }
                // After a daemon (re)start every state and PGN goes out again, also those that
                // look unchanged: consumers may have marked the rig's boards stale meanwhile.
                self.sent_state.clear();
                self.sent_pgn.clear();
                for (board, props) in now {
                    self.add(board, props);
                }
                self.seen_snapshot = true;
                self.set_source(true);
            }
            HallUpdate::Added { board, props } => self.add(board, props),
            HallUpdate::Removed { board } => self.remove(&board),
            HallUpdate::Changed { board, changed } => {
                let props = self.boards.entry(board.clone()).or_default();
                let pgn = changed.contains_key("Pgn");
                for (k, v) in changed {
                    props.insert(k, v);
                }
                self.clear_state.remove(&board);
                self.clear_pgn.remove(&board);
                self.dirty_state.insert(board.clone());
                if pgn {
                    self.dirty_pgn.insert(board);
                }
            }
            HallUpdate::Signal {
                board,
                member,
                args,
            } => self.event(&board, member, args),
            HallUpdate::SourceDown { .. } => self.set_source(false),
        }
    }

    /// A retained `state` of this rig seen on the broker (read back at connect): a board the
    /// bus does not have any more left while the relay was not running, so its topics go.
    pub fn on_retained_state(&mut self, board: &str) {
        if !self.seen_snapshot {
            self.retained_seen.insert(board.to_owned());
        } else if !self.boards.contains_key(board) {
            self.clear_state.insert(board.to_owned());
            self.clear_pgn.insert(board.to_owned());
        }
    }

    /// A clean stop begins: `offline` is published next.
    pub fn shut_down(&mut self) {
        self.stopping = true;
        self.status_dirty = true;
    }

    fn set_source(&mut self, up: bool) {
        if self.source_up != up {
            self.source_up = up;
            self.status_dirty = true;
        }
    }

    fn add(&mut self, board: String, props: Props) {
        self.clear_state.remove(&board);
        self.clear_pgn.remove(&board);
        self.dirty_state.insert(board.clone());
        self.dirty_pgn.insert(board.clone());
        self.boards.insert(board, props);
    }

    fn remove(&mut self, board: &str) {
        if self.boards.remove(board).is_some() {
            self.dirty_state.remove(board);
            self.dirty_pgn.remove(board);
            self.sent_state.remove(board);
            self.sent_pgn.remove(board);
            self.clear_state.insert(board.to_owned());
            self.clear_pgn.insert(board.to_owned());
        }
    }

    fn event(&mut self, board: &str, member: String, args: Props) {
        let seq = self.seq.entry(board.to_owned()).or_insert(0);
        *seq += 1;
        let mut payload = serde_json::Map::new();
        payload.insert("seq".into(), Value::from(*seq));
        payload.insert("run".into(), Value::from(self.config.run.as_str()));
        payload.insert("member".into(), Value::from(member));
        for (k, v) in args {
            // The envelope's names win over an argument that happened to share them.
            if !matches!(k.as_str(), "seq" | "run" | "member") {
                payload.insert(k, v);
            }
        }
        let id = self.take_id();
        self.queue.push_back(Event {
            id,
            topic: self.config.topics.board(board, Kind::Event),
            payload: Value::Object(payload).to_string(),
        });
        let limit = self.config.max_queued.max(1);
        while self.queued_events() > limit {
            if self.queue.pop_front().is_none() {
                break;
            }
            if self.dropped_since_connect == 0 {
                self.notices.push(Notice::QueueFull { limit });
            }
            self.dropped_since_connect += 1;
            self.dropped_total += 1;
        }
    }

    fn take_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// The broker accepted the connection: everything retained is published again (status
    /// first), then the waiting events, in order.
    pub fn on_connected(&mut self) {
        self.requeue();
        self.connected = true;
        self.status_dirty = true;
        self.run_dirty = true;
        self.sent_state.clear();
        self.sent_pgn.clear();
        self.dirty_state.extend(self.boards.keys().cloned());
        self.dirty_pgn.extend(self.boards.keys().cloned());
        if self.dropped_since_connect > 0 {
            self.notices.push(Notice::Dropped {
                count: self.dropped_since_connect,
            });
            self.dropped_since_connect = 0;
        }
    }

    /// The connection is gone: what was handed over and not acknowledged is done again.
    pub fn on_disconnected(&mut self) {
        self.connected = false;
        self.requeue();
    }

    fn requeue(&mut self) {
        self.unassigned.clear();
        self.inflight.clear();
        let handed = std::mem::take(&mut self.handed);
        // Events go back before the ones that never left, in their original order (the map
        // is ordered by id, and every handed event is older than every queued one).
        for (_, h) in handed.into_iter().rev() {
            match h {
                Handed::Event(e) => self.queue.push_front(e),
                Handed::State(b) => {
                    if self.boards.contains_key(&b) {
                        self.dirty_state.insert(b);
                    }
                }
                Handed::Pgn(b) => {
                    if self.boards.contains_key(&b) {
                        self.dirty_pgn.insert(b);
                    }
                }
                Handed::ClearState(b) => {
                    if !self.boards.contains_key(&b) {
                        self.clear_state.insert(b);
                    }
                }
                Handed::ClearPgn(b) => {
                    if !self.boards.contains_key(&b) {
                        self.clear_pgn.insert(b);
                    }
                }
                Handed::Status => self.status_dirty = true,
                Handed::Run => self.run_dirty = true,
            }
        }
    }

    /// The next message to publish, if the connection is up and the window has room.
    pub fn poll_transmit(&mut self) -> Option<Publication> {
        if !self.connected || self.handed.len() >= self.config.window {
            return None;
        }
        let topics = self.config.topics.clone();
        if self.status_dirty {
            self.status_dirty = false;
            let topic = topics.status();
            return Some(self.hand(Handed::Status, topic, self.status().to_owned(), true));
        }
        if self.run_dirty {
            self.run_dirty = false;
            let run = self.config.run.clone();
            return Some(self.hand(Handed::Run, topics.run(), run, true));
        }
        if let Some(e) = self.queue.pop_front() {
            let (topic, payload) = (e.topic.clone(), e.payload.clone());
            let id = e.id;
            self.handed.insert(id, Handed::Event(e));
            self.unassigned.push_back(id);
            return Some(Publication {
                id,
                topic,
                payload,
                retain: false,
            });
        }
        if let Some(board) = self.clear_state.pop_first() {
            let topic = topics.board(&board, Kind::State);
            return Some(self.hand(Handed::ClearState(board), topic, String::new(), true));
        }
        if let Some(board) = self.clear_pgn.pop_first() {
            let topic = topics.board(&board, Kind::Pgn);
            return Some(self.hand(Handed::ClearPgn(board), topic, String::new(), true));
        }
        while let Some(board) = self.dirty_state.pop_first() {
            let Some(props) = self.boards.get(&board) else {
                continue;
            };
            let json = Value::Object(props.clone()).to_string();
            if self.sent_state.get(&board) == Some(&json) {
                continue;
            }
            self.sent_state.insert(board.clone(), json.clone());
            let topic = topics.board(&board, Kind::State);
            return Some(self.hand(Handed::State(board), topic, json, true));
        }
        while let Some(board) = self.dirty_pgn.pop_first() {
            let Some(props) = self.boards.get(&board) else {
                continue;
            };
            let pgn = props
                .get("Pgn")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            if self.sent_pgn.get(&board) == Some(&pgn) {
                continue;
            }
            self.sent_pgn.insert(board.clone(), pgn.clone());
            let topic = topics.board(&board, Kind::Pgn);
            return Some(self.hand(Handed::Pgn(board), topic, pgn, true));
        }
        None
    }

    fn hand(&mut self, what: Handed, topic: String, payload: String, retain: bool) -> Publication {
        let id = self.take_id();
        self.handed.insert(id, what);
        self.unassigned.push_back(id);
        Publication {
            id,
            topic,
            payload,
            retain,
        }
    }

    /// The client sent the oldest publication handed to it under packet id `pkid`.
    pub fn on_sent(&mut self, pkid: u16) {
        if let Some(id) = self.unassigned.pop_front() {
            self.inflight.insert(pkid, id);
        }
    }

    /// The broker acknowledged packet `pkid`.
    pub fn on_acked(&mut self, pkid: u16) {
        if let Some(id) = self.inflight.remove(&pkid) {
            self.handed.remove(&id);
        }
    }

    /// Whether nothing is waiting or unacknowledged (a clean shutdown may go).
    pub fn idle(&self) -> bool {
        self.handed.is_empty()
            && self.queue.is_empty()
            && self.clear_state.is_empty()
            && self.clear_pgn.is_empty()
            && self.dirty_state.is_empty()
            && self.dirty_pgn.is_empty()
            && !self.status_dirty
            && !self.run_dirty
    }
}

pub use crate::mqtt::backoff;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn relay(max_queued: usize, window: usize) -> Relay {
        Relay::new(Config {
            topics: RigTopics::new("eb", "rig1"),
            max_queued,
            window,
            run: "run-1".into(),
        })
    }

    fn props(v: Value) -> Props {
        v.as_object().expect("object").clone()
    }

    fn move_played(board: &str, ply: u32, san: &str) -> HallUpdate {
        HallUpdate::Signal {
            board: board.into(),
            member: "MovePlayed".into(),
            args: props(
                json!({"ply": ply, "san": san, "uci": "", "fen": "", "white_ms": 1, "black_ms": 2}),
            ),
        }
    }

    /// A broker that takes everything: each publication sent under the next packet id and
    /// acknowledged at once.
    fn deliver(r: &mut Relay, pkid: &mut u16) -> Vec<Publication> {
        let mut out = Vec::new();
        while let Some(p) = r.poll_transmit() {
            *pkid = pkid.wrapping_add(1).max(1);
            r.on_sent(*pkid);
            r.on_acked(*pkid);
            out.push(p);
        }
        out
    }

    fn topics_of(ps: &[Publication]) -> Vec<&str> {
        ps.iter().map(|p| p.topic.as_str()).collect()
    }

    fn seqs(ps: &[Publication]) -> Vec<u64> {
        ps.iter()
            .filter(|p| p.topic.ends_with("/event"))
            .map(|p| {
                serde_json::from_str::<Value>(&p.payload).expect("json")["seq"]
                    .as_u64()
                    .expect("seq")
            })
            .collect()
    }

    #[test]
    fn live_boards_are_published_with_status_state_pgn_and_numbered_events() {
        let mut r = relay(MIN_QUEUED, 10);
        let mut pkid = 0;
        assert_eq!(
            r.poll_transmit(),
            None,
            "nothing before the broker is there"
        );
        r.on_update(HallUpdate::Snapshot(vec![(
            "b1".into(),
            props(json!({"Name": "b1", "Pgn": "[Event \"x\"]\n\n*", "Moves": []})),
        )]));
        r.on_connected();
        let first = deliver(&mut r, &mut pkid);
        assert_eq!(
            topics_of(&first),
            vec![
                "eb/rig1/status",
                "eb/rig1/run",
                "eb/rig1/b1/state",
                "eb/rig1/b1/pgn"
            ]
        );
        assert_eq!(first[0].payload, "online");
        assert_eq!(first[1].payload, "run-1", "the run id, retained");
        assert!(first.iter().all(|p| p.retain));
        let state: Value = serde_json::from_str(&first[2].payload).expect("json");
        assert_eq!(state["Name"], "b1");
        assert_eq!(first[3].payload, "[Event \"x\"]\n\n*");

        r.on_update(move_played("b1", 1, "e4"));
        r.on_update(HallUpdate::Changed {
            board: "b1".into(),
            changed: props(json!({"Moves": ["e4"]})),
        });
        r.on_update(move_played("b1", 2, "e5"));
        let next = deliver(&mut r, &mut pkid);
        assert_eq!(
            topics_of(&next),
            vec!["eb/rig1/b1/event", "eb/rig1/b1/event", "eb/rig1/b1/state"]
        );
        assert!(!next[0].retain);
        let e: Value = serde_json::from_str(&next[0].payload).expect("json");
        assert_eq!(
            e,
            json!({"seq": 1, "run": "run-1", "member": "MovePlayed", "ply": 1, "san": "e4", "uci": "", "fen": "", "white_ms": 1, "black_ms": 2})
        );
        assert_eq!(seqs(&next), vec![1, 2]);
        assert!(r.idle());

        // A change that leaves the state as it was is not published again.
        r.on_update(HallUpdate::Changed {
            board: "b1".into(),
            changed: props(json!({"Moves": ["e4"]})),
        });
        assert_eq!(deliver(&mut r, &mut pkid), vec![]);
    }

    #[test]
    fn a_lost_connection_sends_the_unacknowledged_again_in_order() {
        let mut r = relay(MIN_QUEUED, 4);
        r.on_update(HallUpdate::Snapshot(vec![(
            "b1".into(),
            props(json!({"Name": "b1"})),
        )]));
        r.on_connected();
        let mut pkid = 0;
        deliver(&mut r, &mut pkid);
        for ply in 1..=6 {
            r.on_update(move_played("b1", ply, "x"));
        }
        // The window lets four go; two are sent and one of them acknowledged.
        let handed: Vec<Publication> = std::iter::from_fn(|| r.poll_transmit()).collect();
        assert_eq!(seqs(&handed), vec![1, 2, 3, 4]);
        r.on_sent(7);
        r.on_sent(8);
        r.on_acked(7);
        r.on_disconnected();
        assert_eq!(r.poll_transmit(), None);
        // Meanwhile the game goes on.
        r.on_update(move_played("b1", 7, "y"));
        assert_eq!(r.queued_events(), 6);
        r.on_connected();
        let again = deliver(&mut r, &mut pkid);
        assert_eq!(topics_of(&again)[0], "eb/rig1/status");
        assert_eq!(seqs(&again), vec![2, 3, 4, 5, 6, 7]);
        assert!(
            topics_of(&again).contains(&"eb/rig1/b1/state"),
            "retained state republished after a reconnect"
        );
        assert!(r.idle());
    }

    #[test]
    fn a_full_queue_drops_the_oldest_loudly_and_keeps_the_state() {
        let mut r = relay(3, 10);
        r.on_update(HallUpdate::Snapshot(vec![(
            "b1".into(),
            props(json!({"Name": "b1"})),
        )]));
        for ply in 1..=5 {
            r.on_update(move_played("b1", ply, "x"));
        }
        assert_eq!(r.queued_events(), 3);
        assert_eq!(r.take_notices(), vec![Notice::QueueFull { limit: 3 }]);
        assert_eq!(r.dropped_total(), 2);
        r.on_connected();
        assert_eq!(r.take_notices(), vec![Notice::Dropped { count: 2 }]);
        let mut pkid = 0;
        let out = deliver(&mut r, &mut pkid);
        assert_eq!(seqs(&out), vec![3, 4, 5], "the gap shows in seq");
        assert!(topics_of(&out).contains(&"eb/rig1/b1/state"));
        assert!(topics_of(&out).contains(&"eb/rig1/b1/pgn"));
    }

    #[test]
    fn removed_boards_get_their_retained_topics_cleared() {
        let mut r = relay(MIN_QUEUED, 10);
        let mut pkid = 0;
        r.on_update(HallUpdate::Snapshot(vec![
            ("b1".into(), props(json!({"Name": "b1"}))),
            ("b2".into(), props(json!({"Name": "b2"}))),
        ]));
        r.on_connected();
        deliver(&mut r, &mut pkid);
        r.on_update(HallUpdate::Removed { board: "b1".into() });
        let out = deliver(&mut r, &mut pkid);
        assert_eq!(topics_of(&out), vec!["eb/rig1/b1/state", "eb/rig1/b1/pgn"]);
        assert!(out.iter().all(|p| p.retain && p.payload.is_empty()));
        // A snapshot without b2 (the daemon restarted without it) clears it too; one that
        // brings it back before anything was sent does not.
        r.on_disconnected();
        r.on_update(HallUpdate::SourceDown {
            reason: "gone".into(),
        });
        r.on_update(HallUpdate::Snapshot(vec![]));
        r.on_update(HallUpdate::Added {
            board: "b2".into(),
            props: props(json!({"Name": "b2"})),
        });
        r.on_connected();
        let out = deliver(&mut r, &mut pkid);
        assert_eq!(
            topics_of(&out),
            vec![
                "eb/rig1/status",
                "eb/rig1/run",
                "eb/rig1/b2/state",
                "eb/rig1/b2/pgn"
            ]
        );
        assert!(!out[2].payload.is_empty());
    }

    #[test]
    fn boards_left_behind_by_an_earlier_run_are_cleared() {
        let mut r = relay(MIN_QUEUED, 10);
        let mut pkid = 0;
        r.on_connected();
        // The broker hands back retained states before the bus answered.
        r.on_retained_state("old");
        r.on_retained_state("b1");
        r.on_update(HallUpdate::Snapshot(vec![(
            "b1".into(),
            props(json!({"Name": "b1"})),
        )]));
        let out = deliver(&mut r, &mut pkid);
        let t = topics_of(&out);
        assert!(
            t.contains(&"eb/rig1/old/state") && t.contains(&"eb/rig1/old/pgn"),
            "{t:?}"
        );
        assert!(
            !t.contains(&"eb/rig1/b1/state")
                || !out
                    .iter()
                    .any(|p| p.topic == "eb/rig1/b1/state" && p.payload.is_empty())
        );
        // After the snapshot, a stray retained state is cleared at once.
        r.on_retained_state("older");
        let out = deliver(&mut r, &mut pkid);
        assert_eq!(
            topics_of(&out),
            vec!["eb/rig1/older/state", "eb/rig1/older/pgn"]
        );
    }

    #[test]
    fn the_status_follows_the_daemon_and_the_stop() {
        let mut r = relay(MIN_QUEUED, 10);
        let mut pkid = 0;
        r.on_connected();
        let out = deliver(&mut r, &mut pkid);
        assert_eq!(out[0].payload, "offline", "no daemon seen yet");
        r.on_update(HallUpdate::Snapshot(vec![]));
        assert_eq!(deliver(&mut r, &mut pkid)[0].payload, "online");
        r.on_update(HallUpdate::SourceDown {
            reason: "eboardd stopped".into(),
        });
        assert_eq!(deliver(&mut r, &mut pkid)[0].payload, "offline");
        r.on_update(HallUpdate::Snapshot(vec![]));
        assert_eq!(deliver(&mut r, &mut pkid)[0].payload, "online");
        r.shut_down();
        let out = deliver(&mut r, &mut pkid);
        assert_eq!(
            (out[0].topic.as_str(), out[0].payload.as_str()),
            ("eb/rig1/status", "offline")
        );
    }

    #[test]
    fn seq_is_per_board_and_survives_a_board_leaving() {
        let mut r = relay(MIN_QUEUED, 100);
        let mut pkid = 0;
        r.on_update(HallUpdate::Snapshot(vec![]));
        r.on_connected();
        r.on_update(move_played("a", 1, "e4"));
        r.on_update(move_played("b", 1, "d4"));
        r.on_update(HallUpdate::Removed { board: "a".into() });
        r.on_update(move_played("a", 1, "c4"));
        let out = deliver(&mut r, &mut pkid);
        let by_board = |b: &str| {
            let t = format!("eb/rig1/{b}/event");
            seqs(
                &out.iter()
                    .filter(|p| p.topic == t)
                    .cloned()
                    .collect::<Vec<_>>(),
            )
        };
        assert_eq!(by_board("a"), vec![1, 2]);
        assert_eq!(by_board("b"), vec![1]);
    }
}
