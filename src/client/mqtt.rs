//! A broker as the source of the client model: every board the relays of a hall publish
//! (contract section 6) as [`HallUpdate`]s, boards named `<rig>/<board id>`. Shared by
//! `eboardctl watch --mqtt` and `serve --mqtt`.
//!
//! A broker is a shared place anyone on the venue's network may publish to, so nothing it
//! hands over is taken on trust. [`Feed`] (pure: topic + payload in, updates out) reads every
//! message through the contract's tables, as the bus client does:
//!
//! - an `event` is decoded by `session::Event::from_signal_args` — only the contract's
//!   members, every argument of its type — and re-rendered from the decoded value, so what
//!   goes on is exactly the contract's arguments (a `board` or any other extra key in the
//!   payload is gone; the board always comes from the topic);
//! - a retained `state` is read property by property against the contract's table
//!   (`contract::BoardProps::apply`): a property of the wrong type or one the contract does
//!   not have is left out, the others are kept;
//! - rig names and board ids are checked (`mqtt::topics::check_rig`, `is_board_id`), payloads
//!   have a size bound, and the hall has a bound on boards (and on rigs), [`DEFAULT_MAX_BOARDS`]
//!   unless `--max-boards` says otherwise, and on its states' bytes ([`MAX_HALL_BYTES`]);
//! - whatever is refused is counted by reason ([`BrokerHealth`]), for `/api/health` and the
//!   bridge's log line, and nothing else happens: a refused message changes nothing.
//!
//! MQTT has no "end of the retained messages" mark, so after each (re)connect the feed gathers
//! the retained `state`s into one [`HallUpdate::Snapshot`], which it sends when the first live
//! message arrives or when the broker has been quiet for a moment ([`Feed::on_quiet`], timed
//! by the shell). Events are checked against their per-board `seq`, scoped by the relay's
//! `run` (see `bridge::relay::core`): within a run a `seq` not above the last one is a repeat
//! (QoS 1 may deliver twice) and dropped, and a jump is counted as lost; a new `run` starts a
//! new count. An event without `run` (a relay older than run ids) is read as before: `seq` 1
//! starts a new count. A rig whose `status` says `offline` has its boards marked
//! `RigOnline: false` and `Connected: false` until its relay is back and republishes their
//! state.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rumqttc::v5::mqttbytes::QoS;
use rumqttc::v5::{AsyncClient, Event, Incoming};
use serde::Serialize;
use serde_json::Value;
use tokio::sync::mpsc::Sender;
use tokio::time::Instant;

use crate::client::{BoardProps, HallUpdate, Props};
use crate::mqtt::broker::{Broker, describe};
use crate::mqtt::topics::{self, Kind, Topic};
use crate::mqtt::{OFFLINE, ONLINE, backoff, is_run_id};
use eboard_core::contract;
use eboard_core::session::Event as Signal;

/// How long the broker must be quiet after the last retained message before the boards
/// gathered so far are taken as the whole hall.
pub const QUIET: Duration = Duration::from_millis(300);

/// The key the feed adds to a board's properties: whether its rig's relay is online.
pub const RIG_ONLINE: &str = "RigOnline";

/// The boards of a hall, at most, unless `--max-boards` says otherwise (the same bound holds
/// for rigs).
pub const DEFAULT_MAX_BOARDS: usize = 1_000;

/// The largest `event` payload read: a signal's arguments are a few hundred bytes.
pub const MAX_EVENT_BYTES: usize = 16 * 1024;

/// The largest `state` payload read: the `Pgn` of a long game is some tens of kB.
pub const MAX_STATE_BYTES: usize = 512 * 1024;

/// The most the hall's states may take together (their payloads' bytes): 1,000 boards of
/// 64 KB, several times a real hall's. Without it, `--max-boards` states of up to
/// [`MAX_STATE_BYTES`] each would be half a gigabyte.
pub const MAX_HALL_BYTES: usize = 64 << 20;

/// Rigs named in [`BrokerHealth::over_bound_by_rig`] at most; refusals of further rigs are
/// summed under [`OTHER_RIGS`], so a flood of made-up rig names cannot grow the count itself.
pub const MAX_RIGS_NAMED: usize = 64;

/// The key under which refusals of rigs past [`MAX_RIGS_NAMED`] are summed.
pub const OTHER_RIGS: &str = "(other rigs)";

/// Why a message (or one property of a `state`) from the broker was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Refusal {
    /// A topic outside the tree (contract section 6), or a rig or board id that is not one.
    BadTopic,
    /// A payload over its size bound.
    Oversized,
    /// A payload that is not a JSON object.
    NotJson,
    /// A `status` that is neither `online`, `offline` nor empty.
    BadStatus,
    /// A `run` (topic or event field) that is not a run id.
    BadRun,
    /// An event without a `seq` of 1 or more.
    BadSeq,
    /// An event whose member is not a contract signal, or whose arguments are not the
    /// signal's (missing, of the wrong type, outside the contract's words).
    BadEvent,
    /// A property of a `state` whose value does not have the contract's type.
    BadProperty,
    /// A property of a `state` the contract does not have.
    UnknownProperty,
    /// A board (or rig) past the hall's bound.
    OverBound,
    /// A `state` that would take the hall's states past [`MAX_HALL_BYTES`].
    HallFull,
}

impl Refusal {
    pub const fn as_str(self) -> &'static str {
        match self {
            Refusal::BadTopic => "bad-topic",
            Refusal::Oversized => "oversized",
            Refusal::NotJson => "not-json",
            Refusal::BadStatus => "bad-status",
            Refusal::BadRun => "bad-run",
            Refusal::BadSeq => "bad-seq",
            Refusal::BadEvent => "bad-event",
            Refusal::BadProperty => "bad-property",
            Refusal::UnknownProperty => "unknown-property",
            Refusal::OverBound => "over-bound",
            Refusal::HallFull => "hall-full",
        }
    }
}

/// One rig as the broker shows it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RigHealth {
    /// Its `status` (`None`: not seen yet).
    pub online: Option<bool>,
    /// Its relay's run id (`None`: not published, an older relay).
    pub run: Option<String>,
}

/// What the feed refused and lost so far: the broker part of `/api/health`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct BrokerHealth {
    /// The bound on boards (and rigs).
    pub max_boards: usize,
    /// Messages and properties refused, in all.
    pub refused: u64,
    /// The same by reason ([`Refusal::as_str`]).
    pub refused_by_reason: BTreeMap<&'static str, u64>,
    /// Boards refused past the bound, by rig (at most [`MAX_RIGS_NAMED`] named).
    pub over_bound_by_rig: BTreeMap<String, u64>,
    /// Events missing within a relay's run (jumps in `seq`).
    pub lost_events: u64,
    /// The rigs seen (at most the bound).
    pub rigs: BTreeMap<String, RigHealth>,
}

/// The broker part of the health, shared between the feed's task and whoever shows it.
pub type SharedHealth = Arc<Mutex<BrokerHealth>>;

/// Where a board's events stand: the relay run they belong to and the last `seq` taken.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SeqMark {
    run: Option<String>,
    seq: u64,
}

/// The hall as the broker shows it, turned into updates.
#[derive(Debug)]
pub struct Feed {
    prefix: String,
    max_boards: usize,
    /// While gathering the retained states after a connect: the boards so far.
    gathering: Option<BTreeMap<String, Props>>,
    /// Boards known to the consumer (sent in a snapshot or added since) → their rig.
    known: BTreeMap<String, String>,
    /// Boards whose events were taken → where their count stands (kept across reconnects,
    /// so a QoS 1 repeat after one is still recognised).
    last_seq: BTreeMap<String, SeqMark>,
    health: BrokerHealth,
    /// Whether [`Feed::health`] changed since [`Feed::take_health`].
    health_changed: bool,
    /// The payload bytes of each board's state taken (known or being gathered), and their
    /// sum, within [`MAX_HALL_BYTES`].
    state_bytes: BTreeMap<String, usize>,
    hall_bytes: usize,
}

impl Feed {
    /// A feed of the hall under `prefix` with at most `max_boards` boards (and rigs).
    pub fn new(prefix: &str, max_boards: usize) -> Self {
        let max_boards = max_boards.max(1);
        Feed {
            prefix: prefix.to_owned(),
            max_boards,
            gathering: None,
            known: BTreeMap::new(),
            last_seq: BTreeMap::new(),
            health: BrokerHealth {
                max_boards,
                ..BrokerHealth::default()
            },
            health_changed: true,
            state_bytes: BTreeMap::new(),
            hall_bytes: 0,
        }
    }

    /// Board `id`'s state now takes `bytes` (0: gone); false, and nothing changed, when that
    /// would take the hall past [`MAX_HALL_BYTES`].
    fn hold_state(&mut self, id: &str, bytes: usize) -> bool {
        let old = self.state_bytes.get(id).copied().unwrap_or(0);
        let total = self.hall_bytes - old + bytes;
        if bytes > old && total > MAX_HALL_BYTES {
            return false;
        }
        self.hall_bytes = total;
        if bytes == 0 {
            self.state_bytes.remove(id);
        } else {
            self.state_bytes.insert(id.to_owned(), bytes);
        }
        true
    }

    /// What the hall's states take, in payload bytes.
    pub fn hall_bytes(&self) -> usize {
        self.hall_bytes
    }

    /// Whether the retained states are still being gathered.
    pub fn gathering(&self) -> bool {
        self.gathering.is_some()
    }

    /// What was refused and lost so far.
    pub fn health(&self) -> &BrokerHealth {
        &self.health
    }

    /// The health, when it changed since the last call.
    pub fn take_health(&mut self) -> Option<BrokerHealth> {
        std::mem::take(&mut self.health_changed).then(|| self.health.clone())
    }

    /// Connected and subscribed: the retained messages come next.
    pub fn on_connected(&mut self) {
        self.gathering = Some(BTreeMap::new());
    }

    /// The connection is gone.
    pub fn on_disconnected(&mut self, reason: String) -> Vec<HallUpdate> {
        self.gathering = None;
        vec![HallUpdate::SourceDown { reason }]
    }

    /// The broker has been quiet for [`QUIET`]: the gathered boards are the hall.
    pub fn on_quiet(&mut self) -> Vec<HallUpdate> {
        match self.gathering.take() {
            Some(boards) => {
                let mut boards: Vec<(String, Props)> = boards.into_iter().collect();
                for (id, props) in &mut boards {
                    self.mark_rig(id, props);
                }
                self.known = boards
                    .iter()
                    .map(|(id, _)| (id.clone(), rig_of(id).to_owned()))
                    .collect();
                // Counts of boards that are gone meanwhile go with them (and stop counting
                // against the bound).
                let known = &self.known;
                self.last_seq.retain(|id, _| known.contains_key(id));
                self.state_bytes.retain(|id, _| known.contains_key(id));
                self.hall_bytes = self.state_bytes.values().sum();
                vec![HallUpdate::Snapshot(boards)]
            }
            None => Vec::new(),
        }
    }

    fn refuse(&mut self, why: Refusal) {
        self.health.refused += 1;
        *self
            .health
            .refused_by_reason
            .entry(why.as_str())
            .or_insert(0) += 1;
        self.health_changed = true;
    }

    /// Whether board `id` of `rig` may be in the hall: known already, or room for one more.
    fn admit(&mut self, rig: &str, id: &str) -> bool {
        let gathered = self.gathering.as_ref().is_some_and(|g| g.contains_key(id));
        if gathered || self.known.contains_key(id) || self.last_seq.contains_key(id) {
            return true;
        }
        let gathered = self.gathering.as_ref().map_or(0, BTreeMap::len);
        // The boards are the union of the three sets: at least the largest of them, so a
        // full hall refuses a flood of made-up boards without counting the union each time.
        let at_least = self.known.len().max(self.last_seq.len()).max(gathered);
        if at_least < self.max_boards {
            let mut all: BTreeSet<&String> = self.known.keys().collect();
            all.extend(self.last_seq.keys());
            if let Some(g) = &self.gathering {
                all.extend(g.keys());
            }
            if all.len() < self.max_boards {
                return true;
            }
        }
        self.refuse(Refusal::OverBound);
        let named = &mut self.health.over_bound_by_rig;
        let key = if named.contains_key(rig) || named.len() < MAX_RIGS_NAMED {
            rig.to_owned()
        } else {
            OTHER_RIGS.to_owned()
        };
        *named.entry(key).or_insert(0) += 1;
        false
    }

    /// The rig's entry, made if there is room for one more rig.
    fn rig_entry(&mut self, rig: &str) -> Option<&mut RigHealth> {
        if !self.health.rigs.contains_key(rig) {
            if self.health.rigs.len() >= self.max_boards {
                self.refuse(Refusal::OverBound);
                return None;
            }
            self.health
                .rigs
                .insert(rig.to_owned(), RigHealth::default());
        }
        self.health_changed = true;
        self.health.rigs.get_mut(rig)
    }

    fn mark_rig(&self, id: &str, props: &mut Props) {
        let online = self
            .health
            .rigs
            .get(rig_of(id))
            .and_then(|r| r.online)
            .unwrap_or(true);
        props.insert(RIG_ONLINE.into(), Value::from(online));
        if !online {
            props.insert("Connected".into(), Value::from(false));
        }
    }

    /// One message from the broker.
    pub fn on_message(&mut self, topic: &str, payload: &[u8], retained: bool) -> Vec<HallUpdate> {
        let parsed = match topics::parse(&self.prefix, topic) {
            Some(Topic::Status { rig }) | Some(Topic::Run { rig })
                if topics::check_rig(rig).is_err() =>
            {
                None
            }
            Some(Topic::Board { rig, board, .. })
                if topics::check_rig(rig).is_err() || !topics::is_board_id(board) =>
            {
                None
            }
            other => other,
        };
        let Some(parsed) = parsed else {
            self.refuse(Refusal::BadTopic);
            return Vec::new();
        };
        let mut out = Vec::new();
        if !retained && self.gathering.is_some() {
            // Live traffic: the retained messages are all in.
            out.extend(self.on_quiet());
        }
        match parsed {
            Topic::Status { rig } => out.extend(self.status(rig, payload)),
            Topic::Run { rig } => self.run(rig, payload),
            Topic::Board { rig, board, kind } => {
                let id = format!("{rig}/{board}");
                match kind {
                    Kind::State => out.extend(self.state(rig, id, payload)),
                    Kind::Event => out.extend(self.event(rig, id, payload)),
                    // The state carries the `Pgn` property already.
                    Kind::Pgn => {}
                }
            }
        }
        out
    }

    fn status(&mut self, rig: &str, payload: &[u8]) -> Vec<HallUpdate> {
        let online = match payload {
            p if p == ONLINE.as_bytes() => true,
            p if p == OFFLINE.as_bytes() => false,
            // Cleared: nothing to say.
            [] => return Vec::new(),
            _ => {
                self.refuse(Refusal::BadStatus);
                return Vec::new();
            }
        };
        let gathering = self.gathering.is_some();
        let Some(entry) = self.rig_entry(rig) else {
            return Vec::new();
        };
        let before = entry.online.replace(online);
        if before == Some(online) || gathering {
            return Vec::new();
        }
        self.known
            .iter()
            .filter(|(_, r)| r.as_str() == rig)
            .map(|(id, _)| {
                let mut changed = Props::new();
                changed.insert(RIG_ONLINE.into(), Value::from(online));
                if !online {
                    changed.insert("Connected".into(), Value::from(false));
                }
                HallUpdate::Changed {
                    board: id.clone(),
                    changed,
                }
            })
            .collect()
    }

    fn run(&mut self, rig: &str, payload: &[u8]) {
        if payload.is_empty() {
            return;
        }
        let Some(run) = std::str::from_utf8(payload).ok().filter(|r| is_run_id(r)) else {
            self.refuse(Refusal::BadRun);
            return;
        };
        let run = run.to_owned();
        if let Some(entry) = self.rig_entry(rig) {
            entry.run = Some(run);
        }
    }

    /// A state's properties read one by one against the contract's table: those of the
    /// contract's type are kept, each other one is refused.
    fn checked_props(&mut self, raw: Props) -> Props {
        let mut typed = BoardProps::default();
        let mut out = Props::new();
        for (name, value) in raw {
            if contract::board_property(&name).is_none() {
                self.refuse(Refusal::UnknownProperty);
            } else if !typed.apply(&name, &value) {
                self.refuse(Refusal::BadProperty);
            } else {
                out.insert(name, value);
            }
        }
        out
    }

    fn state(&mut self, rig: &str, id: String, payload: &[u8]) -> Vec<HallUpdate> {
        if payload.is_empty() {
            self.hold_state(&id, 0);
            if let Some(g) = &mut self.gathering {
                g.remove(&id);
                return Vec::new();
            }
            self.last_seq.remove(&id);
            return match self.known.remove(&id) {
                Some(_) => vec![HallUpdate::Removed { board: id }],
                None => Vec::new(),
            };
        }
        if payload.len() > MAX_STATE_BYTES {
            self.refuse(Refusal::Oversized);
            return Vec::new();
        }
        let Some(raw) = object(payload) else {
            self.refuse(Refusal::NotJson);
            return Vec::new();
        };
        let props = self.checked_props(raw);
        if !self.admit(rig, &id) {
            return Vec::new();
        }
        if !self.hold_state(&id, payload.len()) {
            self.refuse(Refusal::HallFull);
            return Vec::new();
        }
        if let Some(g) = &mut self.gathering {
            g.insert(id, props);
            return Vec::new();
        }
        if self.known.contains_key(&id) {
            vec![HallUpdate::Changed {
                board: id,
                changed: props,
            }]
        } else {
            let mut props = props;
            self.mark_rig(&id, &mut props);
            self.known.insert(id.clone(), rig.to_owned());
            vec![HallUpdate::Added { board: id, props }]
        }
    }

    fn event(&mut self, rig: &str, id: String, payload: &[u8]) -> Vec<HallUpdate> {
        if payload.len() > MAX_EVENT_BYTES {
            self.refuse(Refusal::Oversized);
            return Vec::new();
        }
        let Some(mut args) = object(payload) else {
            self.refuse(Refusal::NotJson);
            return Vec::new();
        };
        let Some(seq) = args
            .remove("seq")
            .and_then(|v| v.as_u64())
            .filter(|&s| s > 0)
        else {
            self.refuse(Refusal::BadSeq);
            return Vec::new();
        };
        let run = match args.remove("run") {
            None => None,
            Some(Value::String(r)) if is_run_id(&r) => Some(r),
            Some(_) => {
                self.refuse(Refusal::BadRun);
                return Vec::new();
            }
        };
        // Through the contract's table: the member must be a signal, every argument of its
        // type; what goes on is rendered from the decoded signal, nothing of the payload else.
        let decoded = match args.remove("member") {
            Some(Value::String(member)) => Signal::from_signal_args(&member, args),
            _ => None,
        };
        let Some((member, args)) = decoded.as_ref().and_then(Signal::signal_args) else {
            self.refuse(Refusal::BadEvent);
            return Vec::new();
        };
        if !self.admit(rig, &id) {
            return Vec::new();
        }
        let mark = SeqMark { run, seq };
        match self.last_seq.get(&id) {
            Some(last) if last.run == mark.run => {
                // The same run (or two events of relays without run ids).
                let restarted = mark.run.is_none() && seq == 1;
                if seq <= last.seq && !restarted {
                    // A QoS 1 repeat.
                    return Vec::new();
                }
                if seq > last.seq + 1 && !restarted {
                    self.health.lost_events += seq - last.seq - 1;
                    self.health_changed = true;
                }
            }
            // A new run of the relay: its count starts at 1.
            Some(_) if seq > 1 => {
                self.health.lost_events += seq - 1;
                self.health_changed = true;
            }
            Some(_) | None => {}
        }
        self.last_seq.insert(id.clone(), mark);
        vec![HallUpdate::Signal {
            board: id,
            member: member.to_owned(),
            args,
        }]
    }
}

fn rig_of(id: &str) -> &str {
    id.split('/').next().unwrap_or(id)
}

fn object(payload: &[u8]) -> Option<Props> {
    match serde_json::from_slice::<Value>(payload).ok()? {
        Value::Object(m) => Some(m),
        _ => None,
    }
}

/// Follows the hall under `prefix` on the broker, sending every update to `tx`, through
/// broker restarts and unreachable spells (reconnecting with backoff), until `tx` closes.
/// At most `max_boards` boards; what is refused and lost is kept current in `health`.
pub async fn watch_broker(
    broker: Broker,
    prefix: String,
    max_boards: usize,
    health: Option<SharedHealth>,
    tx: Sender<HallUpdate>,
) {
    let client_id = format!("eboardctl-{}-{}", std::process::id(), unique());
    let options = match broker.options(&client_id, None) {
        Ok(o) => o,
        Err(e) => {
            let _ = tx
                .send(HallUpdate::SourceDown {
                    reason: e.to_string(),
                })
                .await;
            return;
        }
    };
    let mut feed = Feed::new(&prefix, max_boards);
    let share = |feed: &mut Feed| {
        if let (Some(shared), Some(now)) = (&health, feed.take_health()) {
            *shared.lock().unwrap_or_else(|p| p.into_inner()) = now;
        }
    };
    share(&mut feed);
    let mut attempt = 0u32;
    let mut down_told = false;
    loop {
        let (client, mut events) = AsyncClient::new(options.clone(), 16);
        let mut quiet_at: Option<Instant> = None;
        // Subscribed, and the hall gathered: only then does the backoff start again from
        // its shortest wait, so a connection that breaks before it was of use (whatever
        // the broker does to it) is retried ever more slowly, not twice a second.
        let mut subscribed = false;
        let mut settled = false;
        let reason = loop {
            let quiet = async {
                match quiet_at {
                    Some(t) => tokio::time::sleep_until(t).await,
                    None => std::future::pending().await,
                }
            };
            let updates = tokio::select! {
                event = events.poll() => match event {
                    Ok(Event::Incoming(Incoming::ConnAck(_))) => {
                        let _ = client.try_subscribe(topics::hall_filter(&prefix), QoS::AtLeastOnce);
                        Vec::new()
                    }
                    Ok(Event::Incoming(Incoming::SubAck(_))) => {
                        subscribed = true;
                        feed.on_connected();
                        quiet_at = Some(Instant::now() + QUIET);
                        Vec::new()
                    }
                    Ok(Event::Incoming(Incoming::Publish(p))) => {
                        if p.retain && feed.gathering() {
                            quiet_at = Some(Instant::now() + QUIET);
                        }
                        // MQTT topics are UTF-8; one that is not is outside the tree.
                        let topic = std::str::from_utf8(&p.topic).unwrap_or("\u{fffd}");
                        let out = feed.on_message(topic, &p.payload, p.retain);
                        share(&mut feed);
                        out
                    }
                    Ok(_) => Vec::new(),
                    Err(e) => break describe(&e),
                },
                _ = quiet => {
                    quiet_at = None;
                    feed.on_quiet()
                }
            };
            if subscribed && !settled && !feed.gathering() {
                settled = true;
                attempt = 0;
                down_told = false;
            }
            for u in updates {
                if tx.send(u).await.is_err() {
                    return;
                }
            }
        };
        if !down_told {
            down_told = true;
            for u in feed.on_disconnected(format!("broker {}: {reason}", broker.url)) {
                if tx.send(u).await.is_err() {
                    return;
                }
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(backoff(attempt)) => {}
            _ = tx.closed() => return,
        }
        attempt = attempt.saturating_add(1);
    }
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(v: Value) -> Props {
        v.as_object().expect("object").clone()
    }

    fn state(name: &str) -> Vec<u8> {
        json!({"Name": name, "Connected": true})
            .to_string()
            .into_bytes()
    }

    fn feed() -> Feed {
        let mut f = Feed::new("eb", DEFAULT_MAX_BOARDS);
        f.on_connected();
        f.on_quiet();
        f
    }

    fn moved(seq: u64, run: Option<&str>) -> Vec<u8> {
        let mut v = json!({"seq": seq, "member": "MovePlayed", "ply": 1, "san": "e4",
            "uci": "e2e4", "fen": "f", "white_ms": 1, "black_ms": 2});
        if let Some(r) = run {
            v["run"] = json!(r);
        }
        v.to_string().into_bytes()
    }

    fn refused(f: &Feed, why: Refusal) -> u64 {
        f.health()
            .refused_by_reason
            .get(why.as_str())
            .copied()
            .unwrap_or(0)
    }

    #[test]
    fn retained_states_become_one_snapshot() {
        let mut f = Feed::new("eb", DEFAULT_MAX_BOARDS);
        f.on_connected();
        assert!(f.on_message("eb/r1/status", b"online", true).is_empty());
        assert!(
            f.on_message("eb/r1/b1/state", &state("b1"), true)
                .is_empty()
        );
        assert!(
            f.on_message("eb/r2/b1/state", &state("b1"), true)
                .is_empty()
        );
        assert!(f.on_message("eb/r1/b1/pgn", b"*", true).is_empty());
        let snap = f.on_quiet();
        let want =
            |connected: bool| p(json!({"Name": "b1", "Connected": connected, "RigOnline": true}));
        assert_eq!(
            snap,
            vec![HallUpdate::Snapshot(vec![
                ("r1/b1".into(), want(true)),
                ("r2/b1".into(), want(true))
            ])]
        );
        assert!(f.on_quiet().is_empty(), "one snapshot per connect");
    }

    #[test]
    fn live_traffic_ends_the_gathering_and_then_flows() {
        let mut f = Feed::new("eb", DEFAULT_MAX_BOARDS);
        f.on_connected();
        f.on_message("eb/r1/b1/state", &state("b1"), true);
        let out = f.on_message("eb/r1/b1/event", &moved(1, Some("run-1")), false);
        assert!(matches!(&out[0], HallUpdate::Snapshot(b) if b.len() == 1));
        assert_eq!(
            out[1],
            HallUpdate::Signal {
                board: "r1/b1".into(),
                member: "MovePlayed".into(),
                args: p(json!({"ply": 1, "san": "e4", "uci": "e2e4", "fen": "f",
                    "white_ms": 1, "black_ms": 2}))
            }
        );
        let out = f.on_message("eb/r1/b1/state", &state("b1"), false);
        assert!(matches!(&out[0], HallUpdate::Changed { board, .. } if board == "r1/b1"));
        let out = f.on_message("eb/r1/b2/state", &state("b2"), false);
        assert!(matches!(&out[0], HallUpdate::Added { board, .. } if board == "r1/b2"));
        let out = f.on_message("eb/r1/b2/state", b"", false);
        assert_eq!(
            out,
            vec![HallUpdate::Removed {
                board: "r1/b2".into()
            }]
        );
        assert!(f.on_message("eb/r1/b2/state", b"", false).is_empty());
        assert_eq!(f.health().refused, 0);
    }

    #[test]
    fn seq_is_scoped_by_run_repeats_dropped_gaps_counted() {
        let mut f = feed();
        let mut delivered = Vec::new();
        let sent = [
            (1, "a"),
            (2, "a"),
            (2, "a"),
            (1, "a"), // a resent first event: shown once
            (3, "a"),
            (6, "a"),
            (5, "a"),
            (1, "b"), // the relay restarted: a new count
            (2, "b"),
            (2, "b"),
            (4, "c"), // another restart, its first three missed
        ];
        for (seq, run) in sent {
            delivered.push(
                !f.on_message("eb/r/b/event", &moved(seq, Some(run)), false)
                    .is_empty(),
            );
        }
        assert_eq!(
            delivered,
            vec![
                true, true, false, false, true, true, false, true, true, false, true
            ]
        );
        assert_eq!(f.health().lost_events, 2 + 3);
        assert_eq!(f.health().refused, 0);
    }

    #[test]
    fn events_without_a_run_restart_at_one_as_before() {
        let mut f = feed();
        let mut delivered = Vec::new();
        for seq in [1, 2, 2, 3, 6, 5, 1, 2] {
            delivered.push(
                !f.on_message("eb/r/b/event", &moved(seq, None), false)
                    .is_empty(),
            );
        }
        assert_eq!(
            delivered,
            vec![true, true, false, true, true, false, true, true]
        );
        assert_eq!(f.health().lost_events, 2);
    }

    #[test]
    fn an_offline_rig_marks_its_boards() {
        let mut f = Feed::new("eb", DEFAULT_MAX_BOARDS);
        f.on_connected();
        f.on_message("eb/r1/b1/state", &state("b1"), true);
        f.on_message("eb/r2/b1/state", &state("b1"), true);
        f.on_message("eb/r2/status", b"offline", true);
        f.on_message("eb/r2/run", b"18c-2a", true);
        let snap = f.on_quiet();
        let HallUpdate::Snapshot(boards) = &snap[0] else {
            panic!("{snap:?}")
        };
        assert_eq!(boards[1].1["RigOnline"], false);
        assert_eq!(boards[1].1["Connected"], false);
        assert_eq!(boards[0].1["RigOnline"], true);
        assert_eq!(
            f.health().rigs["r2"],
            RigHealth {
                online: Some(false),
                run: Some("18c-2a".into())
            }
        );
        let out = f.on_message("eb/r1/status", b"offline", false);
        assert_eq!(
            out,
            vec![HallUpdate::Changed {
                board: "r1/b1".into(),
                changed: p(json!({"RigOnline": false, "Connected": false}))
            }]
        );
        let out = f.on_message("eb/r1/status", b"online", false);
        assert_eq!(
            out,
            vec![HallUpdate::Changed {
                board: "r1/b1".into(),
                changed: p(json!({"RigOnline": true}))
            }]
        );
    }

    #[test]
    fn events_go_through_the_contract_table() {
        let mut f = feed();
        let ev = |v: Value| v.to_string().into_bytes();
        let cases: Vec<(Value, Refusal)> = vec![
            // A newline in the member (it would end an SSE stream), an unknown member.
            (
                json!({"seq": 1, "member": "MovePlayed\nevent: x", "ply": 1}),
                Refusal::BadEvent,
            ),
            (json!({"seq": 1, "member": "Explode"}), Refusal::BadEvent),
            (json!({"seq": 1, "member": 7}), Refusal::BadEvent),
            (json!({"seq": 1}), Refusal::BadEvent),
            // Wrong argument types, a missing argument, a word outside the contract.
            (
                json!({"seq": 1, "member": "MovePlayed", "ply": "one", "san": "e4",
                    "uci": "e2e4", "fen": "f", "white_ms": 1, "black_ms": 2}),
                Refusal::BadEvent,
            ),
            (
                json!({"seq": 1, "member": "MoveRetracted", "ply": 1}),
                Refusal::BadEvent,
            ),
            (
                json!({"seq": 1, "member": "FlagFell", "player": "purple"}),
                Refusal::BadEvent,
            ),
            (
                json!({"member": "FlagFell", "player": "white"}),
                Refusal::BadSeq,
            ),
            (
                json!({"seq": 0, "member": "FlagFell", "player": "white"}),
                Refusal::BadSeq,
            ),
            (
                json!({"seq": -1, "member": "FlagFell", "player": "white"}),
                Refusal::BadSeq,
            ),
            (
                json!({"seq": 1, "run": "a b", "member": "FlagFell", "player": "white"}),
                Refusal::BadRun,
            ),
            (
                json!({"seq": 1, "run": 5, "member": "FlagFell", "player": "white"}),
                Refusal::BadRun,
            ),
        ];
        for (payload, why) in &cases {
            let before = refused(&f, *why);
            assert!(
                f.on_message("eb/r/b/event", &ev(payload.clone()), false)
                    .is_empty(),
                "{payload}"
            );
            assert_eq!(refused(&f, *why), before + 1, "{payload}");
        }
        assert!(f.on_message("eb/r/b/event", b"[1]", false).is_empty());
        assert!(f.on_message("eb/r/b/event", b"{no", false).is_empty());
        let big = vec![b' '; MAX_EVENT_BYTES + 1];
        assert!(f.on_message("eb/r/b/event", &big, false).is_empty());
        assert_eq!(refused(&f, Refusal::NotJson), 2);
        assert_eq!(refused(&f, Refusal::Oversized), 1);
        assert_eq!(f.health().refused, cases.len() as u64 + 3);
        // `board` and extra keys in the payload never reach the update.
        let out = f.on_message(
            "eb/r/b/event",
            &ev(
                json!({"seq": 1, "run": "x", "member": "FlagFell", "player": "white",
                "board": "other/board", "extra": "<script>"}),
            ),
            false,
        );
        assert_eq!(
            out,
            vec![HallUpdate::Signal {
                board: "r/b".into(),
                member: "FlagFell".into(),
                args: p(json!({"player": "white"}))
            }]
        );
    }

    #[test]
    fn states_are_read_property_by_property() {
        let mut f = feed();
        let out = f.on_message(
            "eb/r/b/state",
            json!({"Name": "b", "Number": "seven", "Moves": ["e4"], "Evil": 1,
                "RigOnline": "yes", "WhiteTimeMs": -5})
            .to_string()
            .as_bytes(),
            false,
        );
        assert_eq!(
            out,
            vec![HallUpdate::Added {
                board: "r/b".into(),
                props: p(json!({"Name": "b", "Moves": ["e4"], "RigOnline": true}))
            }]
        );
        assert_eq!(refused(&f, Refusal::BadProperty), 2);
        assert_eq!(refused(&f, Refusal::UnknownProperty), 2);
        let big = vec![b' '; MAX_STATE_BYTES + 1];
        assert!(f.on_message("eb/r/b/state", &big, false).is_empty());
        assert!(f.on_message("eb/r/b/state", b"[1,2]", false).is_empty());
        assert!(f.on_message("eb/r/status", b"maybe", false).is_empty());
        assert!(f.on_message("eb/r/run", b"two words", false).is_empty());
        assert_eq!(refused(&f, Refusal::Oversized), 1);
        assert_eq!(refused(&f, Refusal::NotJson), 1);
        assert_eq!(refused(&f, Refusal::BadStatus), 1);
        assert_eq!(refused(&f, Refusal::BadRun), 1);
    }

    #[test]
    fn topics_rigs_and_board_ids_are_checked() {
        let mut f = feed();
        let long_rig = format!("eb/{}/b/state", "r".repeat(topics::MAX_RIG_LEN + 1));
        for topic in [
            "eb/r/b/other",
            "eb/r/b/state/x",
            "eb/r/bad-id/state",
            "eb/r/b\n1/state",
            "eb/r\nx/b/state",
            "eb/$r/b/state",
            "eb/r\u{7}/status",
            long_rig.as_str(),
            "elsewhere/r/b/state",
        ] {
            assert!(
                f.on_message(topic, &state("x"), false).is_empty(),
                "{topic}"
            );
        }
        assert_eq!(refused(&f, Refusal::BadTopic), 9);
        assert_eq!(
            f.on_disconnected("gone".into()),
            vec![HallUpdate::SourceDown {
                reason: "gone".into()
            }]
        );
    }

    #[test]
    fn the_hall_has_a_bound_on_boards_counted_per_rig() {
        let mut f = Feed::new("eb", 3);
        f.on_connected();
        f.on_message("eb/good/b1/state", &state("b1"), true);
        f.on_message("eb/good/b2/state", &state("b2"), true);
        let snap = f.on_quiet();
        assert!(matches!(&snap[0], HallUpdate::Snapshot(b) if b.len() == 2));
        for n in 0..10 {
            let topic = format!("eb/flood/b{n}/state");
            f.on_message(&topic, &state("x"), false);
        }
        // One flood board got the last place; the others were refused, counted for that rig.
        assert_eq!(f.health().over_bound_by_rig["flood"], 9);
        // Events for more made-up boards are refused the same way; known boards go on.
        assert!(
            f.on_message("eb/flood/z/event", &moved(1, Some("x")), false)
                .is_empty()
        );
        assert_eq!(f.health().over_bound_by_rig["flood"], 10);
        assert!(
            !f.on_message("eb/good/b1/event", &moved(1, Some("x")), false)
                .is_empty()
        );
        assert_eq!(
            f.on_message("eb/good/b1/state", &state("b1"), false).len(),
            1
        );
        // A board that leaves makes room.
        f.on_message("eb/good/b2/state", b"", false);
        assert_eq!(
            f.on_message("eb/flood/b9/state", &state("x"), false).len(),
            1
        );
        // Rigs are bounded too, and named rigs in the count are bounded.
        let mut f = Feed::new("eb", 2);
        f.on_connected();
        f.on_quiet();
        for n in 0..5 {
            f.on_message(&format!("eb/r{n}/status"), b"online", false);
        }
        assert_eq!(f.health().rigs.len(), 2);
        assert_eq!(refused(&f, Refusal::OverBound), 3);
        let mut f = Feed::new("eb", 1);
        f.on_connected();
        f.on_quiet();
        for n in 0..(MAX_RIGS_NAMED + 10) {
            f.on_message(&format!("eb/r{n}/b/state"), &state("x"), false);
        }
        let named = &f.health().over_bound_by_rig;
        assert_eq!(named.len(), MAX_RIGS_NAMED + 1);
        assert_eq!(named[OTHER_RIGS], 9);
    }

    #[test]
    fn the_halls_states_have_a_bound_in_bytes() {
        let mut f = feed();
        let big = |name: &str| {
            json!({"Name": name, "Pgn": "x".repeat(MAX_STATE_BYTES - 100)})
                .to_string()
                .into_bytes()
        };
        let fit = MAX_HALL_BYTES / big("b0").len();
        for n in 0..fit {
            assert_eq!(
                f.on_message(&format!("eb/r/b{n}/state"), &big("b"), false)
                    .len(),
                1
            );
        }
        assert!(
            f.on_message("eb/r/extra/state", &big("x"), false)
                .is_empty()
        );
        assert_eq!(refused(&f, Refusal::HallFull), 1);
        assert!(f.hall_bytes() <= MAX_HALL_BYTES);
        // A known board's state may shrink or stay, and a board that leaves makes room.
        assert_eq!(f.on_message("eb/r/b0/state", &state("b0"), false).len(), 1);
        assert_eq!(f.on_message("eb/r/b1/state", b"", false).len(), 1);
        assert_eq!(f.on_message("eb/r/extra/state", &big("x"), false).len(), 1);
        assert_eq!(refused(&f, Refusal::HallFull), 1);
        assert!(f.hall_bytes() <= MAX_HALL_BYTES);
    }

    #[test]
    fn health_is_handed_out_when_it_changes() {
        let mut f = feed();
        assert!(f.take_health().is_some());
        assert!(f.take_health().is_none());
        f.on_message("eb/r/b/state", &state("b"), false);
        assert!(f.take_health().is_none(), "a good state changes no count");
        f.on_message("eb/r/b/state", b"{", false);
        assert_eq!(f.take_health().map(|h| h.refused), Some(1));
    }
}
