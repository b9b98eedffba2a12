//! The MQTT side of the relay benchmark: a mosquitto of its own on a free loopback port, and
//! a subscriber on its own thread and runtime that notes when each message arrives.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use rumqttc::{AsyncClient, Event, Incoming, MqttOptions, QoS};
use tokio::process::Child;
use tokio::sync::{Notify, oneshot};

use super::client::Moves;
use super::harness::OwnThread;
use super::procs::spawn::start_mosquitto;

/// mosquitto, killed when dropped.
pub struct Broker {
    pub port: u16,
    child: Child,
}

impl Broker {
    pub async fn start(dir: &Path) -> anyhow::Result<Broker> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let conf = dir.join("mosquitto.conf");
        std::fs::write(
            &conf,
            format!(
                "listener {port} 127.0.0.1\nallow_anonymous true\nuser root\n\
                 max_queued_messages 0\nlog_dest stderr\nlog_type error\nlog_type notice\nlog_type information\n"
            ),
        )?;
        let child = start_mosquitto(&conf, &dir.join("mosquitto.log")).await?;
        Ok(Broker { port, child })
    }

    pub fn pid(&self) -> Option<i32> {
        self.child.id().map(|p| p as i32)
    }
}

/// One board's events.
#[derive(Debug, Default)]
pub struct BoardEvents {
    /// `GameStarted` events: game 1 is the one the relay's first `state` showed.
    pub games_started: u32,
    /// `MovePlayed` events by (game, ply), as the D-Bus client files them.
    pub moves: Moves,
}

/// What the subscriber got.
#[derive(Debug, Default)]
pub struct Got {
    /// By board id, repeats of a `seq` dropped.
    pub boards: HashMap<String, BoardEvents>,
    pub last_seq: HashMap<String, u64>,
    pub seq_gaps: u64,
    pub repeats: u64,
    /// Board ids whose `state` has come.
    pub states: HashSet<String>,
    /// Messages and payload bytes by topic kind (status, state, event, pgn), with arrival.
    pub arrivals: Vec<(Instant, &'static str, usize)>,
}

/// What the subscriber got, and the news that it got more.
#[derive(Clone)]
pub struct Shared {
    got: Arc<Mutex<Got>>,
    news: Arc<Notify>,
}

impl Shared {
    /// Every message is told to `news`'s waiters.
    pub fn new(news: Arc<Notify>) -> Shared {
        Shared {
            got: Arc::default(),
            news,
        }
    }

    pub fn lock(&self) -> MutexGuard<'_, Got> {
        self.got.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn file(&self, topic: &str, payload: &[u8], at: Instant) {
        self.file_locked(topic, payload, at);
        self.news.notify_waiters();
    }

    fn file_locked(&self, topic: &str, payload: &[u8], at: Instant) {
        let mut parts = topic.rsplit('/');
        let kind: &'static str = match parts.next() {
            Some("event") => "event",
            Some("state") => "state",
            Some("pgn") => "pgn",
            Some("status") => "status",
            _ => "other",
        };
        let board = parts.next().unwrap_or("").to_owned();
        let mut got = self.lock();
        got.arrivals.push((at, kind, payload.len()));
        if kind == "state" {
            got.states.insert(board);
            return;
        }
        if kind != "event" {
            return;
        }
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(payload) else {
            return;
        };
        let seq = v["seq"].as_u64().unwrap_or(0);
        let last = got.last_seq.get(&board).copied().unwrap_or(0);
        if seq <= last {
            got.repeats += 1;
            return;
        }
        if last > 0 && seq != last + 1 {
            got.seq_gaps += 1;
        }
        got.last_seq.insert(board.clone(), seq);
        let events = got.boards.entry(board).or_default();
        match v["member"].as_str() {
            Some("GameStarted") => events.games_started += 1,
            Some("MovePlayed") => {
                let game = events.games_started + 1;
                let ply = v["ply"].as_u64().unwrap_or(0) as u32;
                let uci = v["uci"].as_str().unwrap_or("").to_owned();
                events.moves.entry((game, ply)).or_default().push((uci, at));
            }
            _ => {}
        }
    }
}

/// The subscriber's thread; [`Subscriber::stop`] or dropping it ends it.
pub struct Subscriber {
    thread: OwnThread,
}

impl Subscriber {
    /// Subscribes to `filter` and returns once the broker confirmed.
    pub async fn start(port: u16, filter: String, shared: Shared) -> anyhow::Result<Subscriber> {
        let (ready_tx, ready_rx) = oneshot::channel::<()>();
        let thread = OwnThread::spawn("mqtt-subscriber", move |mut stop_rx| async move {
            let mut o = MqttOptions::new("relay-bench-subscriber", "127.0.0.1", port);
            o.set_max_packet_size(1 << 20, 1 << 20);
            let (client, mut events) = AsyncClient::new(o, 16);
            let mut ready = Some(ready_tx);
            loop {
                tokio::select! {
                    _ = &mut stop_rx => break,
                    e = events.poll() => match e {
                        Ok(Event::Incoming(Incoming::ConnAck(_))) => {
                            let _ = client.subscribe(filter.clone(), QoS::AtLeastOnce).await;
                        }
                        Ok(Event::Incoming(Incoming::SubAck(_))) => {
                            if let Some(r) = ready.take() {
                                let _ = r.send(());
                            }
                        }
                        Ok(Event::Incoming(Incoming::Publish(p))) => {
                            shared.file(&p.topic, &p.payload, Instant::now());
                        }
                        Ok(_) => {}
                        Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
                    },
                }
            }
        })?;
        tokio::time::timeout(Duration::from_secs(30), ready_rx)
            .await
            .context("the subscriber did not subscribe in 30 s")??;
        Ok(Subscriber { thread })
    }

    pub fn stop(&mut self) {
        self.thread.stop();
    }
}
