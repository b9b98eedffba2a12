//! A broker as the source of the client model: every board the relays of a hall publish
//! (contract section 6) as [`HallUpdate`]s, boards named `<rig>/<board id>`. Shared by
//! `eboardctl watch --mqtt` and `serve --mqtt`.
//!
//! [`Feed`] is the pure part: topic + payload in, updates out. MQTT has no "end of the
//! retained messages" mark, so after each (re)connect the feed gathers the retained `state`s
//! into one [`HallUpdate::Snapshot`], which it sends when the first live message arrives or
//! when the broker has been quiet for a moment ([`Feed::on_quiet`], timed by the shell).
//! Events are checked against their per-board `seq`: a repeat (QoS 1 may deliver twice) is
//! dropped, `seq` 1 starts a new count (the relay restarted), and a jump is counted as lost.
//! A rig whose `status` says `offline` has its boards marked `RigOnline: false` and
//! `Connected: false` until its relay is back and republishes their state.

use std::collections::BTreeMap;
use std::time::Duration;

use rumqttc::{AsyncClient, Event, Incoming, QoS};
use serde_json::Value;
use tokio::sync::mpsc::Sender;
use tokio::time::Instant;

use crate::client::{HallUpdate, Props};
use crate::mqtt::broker::{Broker, describe};
use crate::mqtt::topics::{self, Kind, Topic};
use crate::mqtt::{OFFLINE, ONLINE, backoff};

/// How long the broker must be quiet after the last retained message before the boards
/// gathered so far are taken as the whole hall.
pub const QUIET: Duration = Duration::from_millis(300);

/// The key the feed adds to a board's properties: whether its rig's relay is online.
pub const RIG_ONLINE: &str = "RigOnline";

/// The hall as the broker shows it, turned into updates.
#[derive(Debug)]
pub struct Feed {
    prefix: String,
    /// While gathering the retained states after a connect: the boards so far.
    gathering: Option<BTreeMap<String, Props>>,
    /// Boards known to the consumer (sent in a snapshot or added since).
    known: BTreeMap<String, String>,
    /// The last `status` of each rig.
    rigs: BTreeMap<String, bool>,
    last_seq: BTreeMap<String, u64>,
    /// Events that were missing (jumps in `seq`) and messages that were not understood.
    pub lost_events: u64,
    pub bad_messages: u64,
}

impl Feed {
    pub fn new(prefix: &str) -> Self {
        Feed {
            prefix: prefix.to_owned(),
            gathering: None,
            known: BTreeMap::new(),
            rigs: BTreeMap::new(),
            last_seq: BTreeMap::new(),
            lost_events: 0,
            bad_messages: 0,
        }
    }

    /// Whether the retained states are still being gathered.
    pub fn gathering(&self) -> bool {
        self.gathering.is_some()
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
                vec![HallUpdate::Snapshot(boards)]
            }
            None => Vec::new(),
        }
    }

    fn mark_rig(&self, id: &str, props: &mut Props) {
        let online = self.rigs.get(rig_of(id)).copied().unwrap_or(true);
        props.insert(RIG_ONLINE.into(), Value::from(online));
        if !online {
            props.insert("Connected".into(), Value::from(false));
        }
    }

    /// One message from the broker.
    pub fn on_message(&mut self, topic: &str, payload: &[u8], retained: bool) -> Vec<HallUpdate> {
        let Some(parsed) = topics::parse(&self.prefix, topic) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if !retained && self.gathering.is_some() {
            // Live traffic: the retained messages are all in.
            out.extend(self.on_quiet());
        }
        match parsed {
            Topic::Status { rig } => out.extend(self.status(rig, payload)),
            Topic::Board { rig, board, kind } => {
                let id = format!("{rig}/{board}");
                match kind {
                    Kind::State => out.extend(self.state(id, payload)),
                    Kind::Event => out.extend(self.event(id, payload)),
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
            // Cleared (empty) or unknown: not ours to interpret.
            _ => {
                if !payload.is_empty() {
                    self.bad_messages += 1;
                }
                return Vec::new();
            }
        };
        let before = self.rigs.insert(rig.to_owned(), online);
        if before == Some(online) || self.gathering.is_some() {
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

    fn state(&mut self, id: String, payload: &[u8]) -> Vec<HallUpdate> {
        if payload.is_empty() {
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
        let Some(props) = object(payload) else {
            self.bad_messages += 1;
            return Vec::new();
        };
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
            self.known.insert(id.clone(), rig_of(&id).to_owned());
            vec![HallUpdate::Added { board: id, props }]
        }
    }

    fn event(&mut self, id: String, payload: &[u8]) -> Vec<HallUpdate> {
        let Some(mut args) = object(payload) else {
            self.bad_messages += 1;
            return Vec::new();
        };
        let seq = args.remove("seq").and_then(|v| v.as_u64());
        let member = match args.remove("member") {
            Some(Value::String(m)) => m,
            _ => {
                self.bad_messages += 1;
                return Vec::new();
            }
        };
        let Some(seq) = seq else {
            self.bad_messages += 1;
            return Vec::new();
        };
        let last = self.last_seq.get(&id).copied().unwrap_or(0);
        if seq != 1 && seq <= last {
            // A QoS 1 repeat.
            return Vec::new();
        }
        if seq > 1 && last > 0 && seq > last + 1 {
            self.lost_events += seq - last - 1;
        }
        self.last_seq.insert(id.clone(), seq);
        vec![HallUpdate::Signal {
            board: id,
            member,
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
pub async fn watch_broker(broker: Broker, prefix: String, tx: Sender<HallUpdate>) {
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
    let mut feed = Feed::new(&prefix);
    let mut attempt = 0u32;
    let mut down_told = false;
    loop {
        let (client, mut events) = AsyncClient::new(options.clone(), 16);
        let mut quiet_at: Option<Instant> = None;
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
                        attempt = 0;
                        down_told = false;
                        let _ = client.try_subscribe(topics::hall_filter(&prefix), QoS::AtLeastOnce);
                        Vec::new()
                    }
                    Ok(Event::Incoming(Incoming::SubAck(_))) => {
                        feed.on_connected();
                        quiet_at = Some(Instant::now() + QUIET);
                        Vec::new()
                    }
                    Ok(Event::Incoming(Incoming::Publish(p))) => {
                        if p.retain && feed.gathering() {
                            quiet_at = Some(Instant::now() + QUIET);
                        }
                        feed.on_message(&p.topic, &p.payload, p.retain)
                    }
                    Ok(_) => Vec::new(),
                    Err(e) => break describe(&e),
                },
                _ = quiet => {
                    quiet_at = None;
                    feed.on_quiet()
                }
            };
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

    #[test]
    fn retained_states_become_one_snapshot() {
        let mut f = Feed::new("eb");
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
        let mut f = Feed::new("eb");
        f.on_connected();
        f.on_message("eb/r1/b1/state", &state("b1"), true);
        let out = f.on_message(
            "eb/r1/b1/event",
            json!({"seq": 1, "member": "MovePlayed", "ply": 1, "san": "e4"})
                .to_string()
                .as_bytes(),
            false,
        );
        assert!(matches!(&out[0], HallUpdate::Snapshot(b) if b.len() == 1));
        assert_eq!(
            out[1],
            HallUpdate::Signal {
                board: "r1/b1".into(),
                member: "MovePlayed".into(),
                args: p(json!({"ply": 1, "san": "e4"}))
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
    }

    #[test]
    fn seq_drops_repeats_counts_gaps_and_restarts_at_one() {
        let mut f = Feed::new("eb");
        f.on_connected();
        f.on_quiet();
        let ev = |seq: u64| {
            json!({"seq": seq, "member": "FlagFell", "player": "white"})
                .to_string()
                .into_bytes()
        };
        let mut delivered = Vec::new();
        for seq in [1, 2, 2, 3, 6, 5, 1, 2] {
            delivered.push(!f.on_message("eb/r/b/event", &ev(seq), false).is_empty());
        }
        assert_eq!(
            delivered,
            vec![true, true, false, true, true, false, true, true]
        );
        assert_eq!(f.lost_events, 2);
    }

    #[test]
    fn an_offline_rig_marks_its_boards() {
        let mut f = Feed::new("eb");
        f.on_connected();
        f.on_message("eb/r1/b1/state", &state("b1"), true);
        f.on_message("eb/r2/b1/state", &state("b1"), true);
        f.on_message("eb/r2/status", b"offline", true);
        let snap = f.on_quiet();
        let HallUpdate::Snapshot(boards) = &snap[0] else {
            panic!("{snap:?}")
        };
        assert_eq!(boards[1].1["RigOnline"], false);
        assert_eq!(boards[1].1["Connected"], false);
        assert_eq!(boards[0].1["RigOnline"], true);
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
    fn garbage_is_counted_and_ignored() {
        let mut f = Feed::new("eb");
        f.on_connected();
        f.on_quiet();
        assert!(f.on_message("eb/r/b/state", b"{not json", false).is_empty());
        assert!(f.on_message("eb/r/b/state", b"[1,2]", false).is_empty());
        assert!(
            f.on_message("eb/r/b/event", br#"{"member":"X"}"#, false)
                .is_empty()
        );
        assert!(
            f.on_message("eb/r/b/event", br#"{"seq":1}"#, false)
                .is_empty()
        );
        assert!(f.on_message("eb/r/status", b"maybe", false).is_empty());
        assert_eq!(f.bad_messages, 5);
        assert!(
            f.on_message("other/r/b/state", &state("x"), false)
                .is_empty()
        );
        assert_eq!(
            f.on_disconnected("gone".into()),
            vec![HallUpdate::SourceDown {
                reason: "gone".into()
            }]
        );
    }
}
