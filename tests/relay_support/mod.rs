//! Harness of the hall relay tests, on top of the shared one (`tests/common`): a real Debian
//! `mosquitto` on a free loopback port with its own configuration file (persistence on, so a
//! subscriber's session and its queued messages survive a broker restart, as on a hall's
//! broker), `eboardctl relay` as a child process, and an MQTT subscriber that records every
//! message it gets.
//!
//! A test crate using this module declares `mod common;` beside `mod relay_support;`.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rumqttc::{AsyncClient, Event, Incoming, MqttOptions, QoS};
use serde_json::Value;
use tokio::process::{Child, Command};
use tokio::sync::Notify;

use crate::common::{die_with_parent, spawn, within};

/// The longest wait for anything that crosses the broker.
pub const WAIT: Duration = Duration::from_secs(30);

/// A free TCP port on the loopback interface (the broker binds it right after).
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    l.local_addr().expect("local address").port()
}

/// A mosquitto broker of the test's own, stopped when dropped.
pub struct Broker {
    pub port: u16,
    /// A second listener with TLS, when started with [`Broker::start_tls`]: (port, the CA's
    /// certificate file that signed the broker's certificate for `localhost`).
    pub tls: Option<(u16, PathBuf)>,
    dir: PathBuf,
    child: Option<Child>,
}

impl Broker {
    /// Starts mosquitto on a free loopback port, its configuration and database in `dir`.
    pub async fn start(dir: &Path) -> Broker {
        let mut b = Broker {
            port: free_port(),
            tls: None,
            dir: dir.to_path_buf(),
            child: None,
        };
        b.restart().await;
        b
    }

    /// Like [`Broker::start`], plus a TLS listener with a certificate for `localhost` signed
    /// by a CA made here (with `openssl`).
    pub async fn start_tls(dir: &Path) -> Broker {
        let run = |args: &[&str]| {
            let out = std::process::Command::new("openssl")
                .args(args)
                .current_dir(dir)
                .output()
                .expect("openssl is installed (Debian package openssl)");
            assert!(out.status.success(), "openssl {args:?}: {out:?}");
        };
        run(&[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=eboardd test CA",
        ]);
        run(&[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=localhost",
        ]);
        std::fs::write(
            dir.join("san.ext"),
            "subjectAltName=DNS:localhost,IP:127.0.0.1\n",
        )
        .expect("write san.ext");
        run(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.pem",
            "-days",
            "2",
            "-extfile",
            "san.ext",
        ]);
        let mut b = Broker {
            port: free_port(),
            tls: Some((free_port(), dir.join("ca.pem"))),
            dir: dir.to_path_buf(),
            child: None,
        };
        b.restart().await;
        b
    }

    pub fn url(&self) -> String {
        format!("mqtt://127.0.0.1:{}", self.port)
    }

    /// (Re)starts it on the same port with the same database; returns once it listens.
    pub async fn restart(&mut self) {
        assert!(self.child.is_none(), "the broker is running already");
        let conf = self.dir.join("mosquitto.conf");
        let tls = match &self.tls {
            Some((port, _)) => format!(
                "listener {port} 127.0.0.1\n\
                 cafile {dir}/ca.pem\n\
                 certfile {dir}/server.pem\n\
                 keyfile {dir}/server.key\n",
                dir = self.dir.display()
            ),
            None => String::new(),
        };
        std::fs::write(
            &conf,
            tls + &format!(
                "listener {port} 127.0.0.1\n\
                 allow_anonymous true\n\
                 persistence true\n\
                 persistence_location {dir}/\n\
                 # no limit on the messages queued for a subscriber that is away\n\
                 max_queued_messages 0\n\
                 max_inflight_messages 0\n\
                 # stay root when started as root (the test's files are root's)\n\
                 user root\n\
                 log_dest stderr\n\
                 log_type error\n\
                 log_type warning\n\
                 log_type notice\n\
                 log_type information\n",
                port = self.port,
                dir = self.dir.display()
            ),
        )
        .expect("write mosquitto.conf");
        let log = self.dir.join("mosquitto.log");
        let child = spawn::start_mosquitto(&conf, &log)
            .await
            .unwrap_or_else(|e| panic!("{e:#}"));
        self.child = Some(child);
    }

    /// Stops it as an operator would (SIGTERM: it saves its database) and waits for the exit.
    pub async fn stop(&mut self) {
        let mut child = self.child.take().expect("the broker is running");
        spawn::terminate(&mut child, "mosquitto", WAIT)
            .await
            .unwrap_or_else(|e| panic!("{e:#}"));
    }
}

/// `eboardctl relay` for one rig.
pub struct Relay {
    child: Child,
    pub log: PathBuf,
}

impl Relay {
    pub fn spawn(bus_address: &str, dir: &Path, args: &[&str]) -> Relay {
        let log = dir.join(format!("relay-{}.log", crate::common::unique()));
        let file = std::fs::File::create(&log).expect("relay log");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_eboardctl"));
        cmd.arg("--bus")
            .arg(bus_address)
            .arg("relay")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(file)
            .kill_on_drop(true);
        die_with_parent(&mut cmd);
        let child = cmd.spawn().expect("spawn eboardctl relay");
        Relay { child, log }
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGTERM, and its exit code.
    pub async fn stop(mut self) -> i32 {
        let status = spawn::terminate(&mut self.child, "the relay", WAIT)
            .await
            .unwrap_or_else(|e| panic!("{e:#}"));
        crate::common::code(status)
    }
}

/// One message as a subscriber got it.
#[derive(Debug, Clone, PartialEq)]
pub struct Got {
    pub topic: String,
    pub payload: Vec<u8>,
    pub retain: bool,
}

impl Got {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.payload)
            .unwrap_or_else(|e| panic!("{}: not JSON ({e}): {:?}", self.topic, self.text()))
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.payload).into_owned()
    }
}

/// An MQTT subscriber in the test: a persistent session (QoS 1, fixed client id), so what is
/// published while it is cut off by a broker restart reaches it afterwards, as it would a
/// hall's consumer. It reconnects by itself.
pub struct Subscriber {
    pub got: Arc<Mutex<Vec<Got>>>,
    news: Arc<Notify>,
    task: tokio::task::JoinHandle<()>,
}

impl Subscriber {
    pub async fn start(port: u16, client_id: &str, filter: &str, persistent: bool) -> Subscriber {
        let mut o = MqttOptions::new(client_id, "127.0.0.1", port);
        o.set_clean_session(!persistent)
            .set_keep_alive(Duration::from_secs(5))
            .set_max_packet_size(1 << 20, 1 << 20);
        let (client, mut events) = AsyncClient::new(o, 16);
        let got = Arc::new(Mutex::new(Vec::new()));
        let news = Arc::new(Notify::new());
        let subscribed = Arc::new(Notify::new());
        let (g, n, s, f) = (
            got.clone(),
            news.clone(),
            subscribed.clone(),
            filter.to_owned(),
        );
        let task = tokio::spawn(async move {
            loop {
                match events.poll().await {
                    Ok(Event::Incoming(Incoming::ConnAck(_))) => {
                        let _ = client.subscribe(f.clone(), QoS::AtLeastOnce).await;
                    }
                    Ok(Event::Incoming(Incoming::SubAck(_))) => s.notify_one(),
                    Ok(Event::Incoming(Incoming::Publish(p))) => {
                        g.lock().unwrap().push(Got {
                            topic: p.topic.clone(),
                            payload: p.payload.to_vec(),
                            retain: p.retain,
                        });
                        n.notify_waiters();
                    }
                    Ok(_) => {}
                    // The broker is away (a test restarts it): try again shortly.
                    Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
                }
            }
        });
        within(WAIT, "the subscription", subscribed.notified()).await;
        Subscriber { got, news, task }
    }

    /// Waits until `pred` holds for everything received so far.
    pub async fn until<T>(&self, what: &str, pred: impl Fn(&[Got]) -> Option<T>) -> T {
        within(WAIT, what, async {
            loop {
                let notified = self.news.notified();
                tokio::pin!(notified);
                notified.as_mut().enable();
                if let Some(v) = pred(&self.got.lock().unwrap()) {
                    return v;
                }
                notified.await;
            }
        })
        .await
    }

    pub fn snapshot(&self) -> Vec<Got> {
        self.got.lock().unwrap().clone()
    }
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The events of one board's `event` topic in arrival order, QoS 1 repeats of the `seq` just
/// seen dropped (a consumer's rule); panics on any other break of the count.
pub fn board_events(got: &[Got], topic: &str) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let mut last = 0u64;
    for g in got.iter().filter(|g| g.topic == topic) {
        let v = g.json();
        let seq = v["seq"].as_u64().unwrap_or_else(|| panic!("no seq: {v}"));
        if seq <= last {
            // At least once: a resend of something already seen.
            assert!(
                out.iter().any(|e| e["seq"] == seq && *e == v),
                "{topic}: seq {seq} after {last} is not a repeat of what was seen: {v}"
            );
            continue;
        }
        assert_eq!(seq, last + 1, "{topic}: seq jumped from {last} to {seq}");
        last = seq;
        out.push(v);
    }
    out
}

/// The last retained value a fresh subscriber gets for each of `topics`.
pub async fn retained(port: u16, topics: &[String]) -> BTreeMap<String, Vec<u8>> {
    let id = format!("retained-reader-{}", crate::common::unique());
    let mut o = MqttOptions::new(id, "127.0.0.1", port);
    o.set_max_packet_size(1 << 20, 1 << 20);
    let (client, mut events) = AsyncClient::new(o, 16);
    let mut out = BTreeMap::new();
    within(WAIT, "the retained messages", async {
        loop {
            match events.poll().await.expect("broker") {
                Event::Incoming(Incoming::ConnAck(_)) => {
                    for t in topics {
                        client.subscribe(t.clone(), QoS::AtLeastOnce).await.unwrap();
                    }
                }
                Event::Incoming(Incoming::Publish(p)) if p.retain => {
                    out.insert(p.topic.clone(), p.payload.to_vec());
                    if topics.iter().all(|t| out.contains_key(t)) {
                        return;
                    }
                }
                _ => {}
            }
        }
    })
    .await;
    let _ = client.disconnect().await;
    out
}

/// Whether the broker holds a retained message on `topic`. Asked together with `marker`, a
/// topic known to be retained: the broker answers subscriptions in order, so once the
/// marker's retained message is in, one for `topic` would have come before it.
pub async fn has_retained(port: u16, topic: &str, marker: &str) -> bool {
    let id = format!("retained-probe-{}", crate::common::unique());
    let (client, mut events) = AsyncClient::new(MqttOptions::new(id, "127.0.0.1", port), 16);
    let mut found = false;
    within(WAIT, "the marker's retained message", async {
        loop {
            match events.poll().await.expect("broker") {
                Event::Incoming(Incoming::ConnAck(_)) => {
                    client.subscribe(topic, QoS::AtLeastOnce).await.unwrap();
                    client.subscribe(marker, QoS::AtLeastOnce).await.unwrap();
                }
                Event::Incoming(Incoming::Publish(p)) if p.retain => {
                    if p.topic == topic {
                        found = true;
                    }
                    if p.topic == marker {
                        return;
                    }
                }
                _ => {}
            }
        }
    })
    .await;
    let _ = client.disconnect().await;
    found
}

/// Publishes `messages` (topic, payload, retained) in order at QoS 1 as a client of its own,
/// and returns once the broker has acknowledged every one: what a neighbour on the hall's
/// broker can do.
pub async fn publish(port: u16, messages: &[(String, Vec<u8>, bool)]) {
    let id = format!("publisher-{}", crate::common::unique());
    let mut o = MqttOptions::new(id, "127.0.0.1", port);
    o.set_max_packet_size(4 << 20, 4 << 20);
    let (client, mut events) = AsyncClient::new(o, messages.len().max(1) + 4);
    let mut acked = 0;
    within(WAIT, "the broker to take every message", async {
        loop {
            match events.poll().await.expect("broker") {
                Event::Incoming(Incoming::ConnAck(_)) => {
                    for (topic, payload, retain) in messages {
                        client
                            .publish(topic.clone(), QoS::AtLeastOnce, *retain, payload.clone())
                            .await
                            .unwrap();
                    }
                    if messages.is_empty() {
                        return;
                    }
                }
                Event::Incoming(Incoming::PubAck(_)) => {
                    acked += 1;
                    if acked == messages.len() {
                        return;
                    }
                }
                _ => {}
            }
        }
    })
    .await;
    let _ = client.disconnect().await;
    let _ = tokio::time::timeout(Duration::from_secs(1), events.poll()).await;
}
