//! An oversized message on the hall's broker costs the relay and `serve --mqtt` one log
//! line, not their connection: a real `mosquitto` (no size limit, as by default), a rig with
//! a simulated board, the real eboardd and `eboardctl relay`, and `eboardctl serve --mqtt`.
//!
//! A neighbour leaves a 2 MiB retained `state` under the rig's topics (over the readers'
//! 512 KiB bound, within the 4 MiB packet they take) and a 5 MiB one (over the packet bound:
//! under MQTT 5 the broker does not send it to them), and later publishes a 2 MiB event.
//! Each bridge says what it refused, the games go on reaching `serve`, and the broker saw
//! one connection of each, in MQTT 5 (a reader in a reconnect loop would connect twice a
//! second).

mod common;
mod relay_support;
mod web_support;

use std::time::Duration;

use common::rig::{self, moves};
use common::{Bus, Daemon, within};
use eboard_sim::{Pace, Scenario, SimHandle};
use relay_support::{Broker, Relay, WAIT};
use rumqttc::{AsyncClient, Event, Incoming, MqttOptions, QoS};
use serde_json::Value;
use web_support::Serve;

const RIG: &str = "rig-o";

fn topic(rest: &str) -> String {
    format!("hall/{RIG}/{rest}")
}

/// Publishes big messages at QoS 1 as a neighbour would, and waits for the broker's
/// acknowledgements.
async fn publish_big(port: u16, messages: &[(String, usize, bool)]) {
    let mut o = MqttOptions::new(format!("neighbour-{}", common::unique()), "127.0.0.1", port);
    o.set_max_packet_size(16 << 20, 16 << 20);
    let (client, mut events) = AsyncClient::new(o, messages.len() + 4);
    within(WAIT, "the broker to take the big messages", async {
        let mut acked = 0;
        loop {
            match events.poll().await.expect("broker") {
                Event::Incoming(Incoming::ConnAck(_)) => {
                    for (topic, size, retain) in messages {
                        // Valid JSON, so only the size is wrong with it.
                        let payload = format!("{{\"Name\":\"{}\"}}", "x".repeat(*size));
                        client
                            .publish(topic.clone(), QoS::AtLeastOnce, *retain, payload)
                            .await
                            .unwrap();
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
}

/// Waits until `text()` holds `want`.
async fn until_logged(what: &str, want: &str, text: impl Fn() -> String) -> String {
    within(WAIT, what, async {
        loop {
            let t = text();
            if t.contains(want) {
                return t;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
}

/// Polls `path` on the bridge until its JSON satisfies `pred`.
async fn until_json(serve: &Serve, path: &str, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
    within(WAIT * 2, what, async {
        loop {
            let (status, body) = serve.get(path).await;
            if status == 200
                && let Ok(v) = serde_json::from_str::<Value>(&body)
                && pred(&v)
            {
                return v;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
}

/// The broker's log lines of new connections by a client id starting with `id`.
fn connections(broker_log: &str, id: &str) -> Vec<String> {
    broker_log
        .lines()
        .filter(|l| l.contains("New client connected") && l.contains(&format!(" as {id}")))
        .map(str::to_owned)
        .collect()
}

fn scenario(sim: &SimHandle) -> Scenario<'_> {
    Scenario::new(
        sim,
        eboard_sim::ScenarioOptions {
            pace: Pace {
                think_ms: (100, 200),
                press_ms: (20, 40),
                hand_ms: (10, 30),
            },
            noise: eboard_sim::Noise::Clean,
            seed: 46,
            press_clock: true,
        },
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_messages_are_refused_and_the_bridges_stay_connected() {
    let dir = tempfile::tempdir().expect("temp dir");
    let broker = Broker::start(dir.path()).await;
    publish_big(
        broker.port,
        &[
            (topic("ghost/state"), 2 << 20, true),
            (topic("giant/state"), 5 << 20, true),
        ],
    )
    .await;

    // serve --mqtt: the 2 MiB state is read and refused; the 5 MiB one never comes.
    let url = broker.url();
    let serve = Serve::start("session", &["--mqtt", &url, "--prefix", "hall"]).await;
    let log = || serve.log.lock().unwrap().join("\n");
    until_logged("serve to say it refused the big state", "oversized 1", log).await;

    // The rig and its relay: the relay reads its rig's retained states back at connect.
    let (sims, ports) = rig::spawn_sims(dir.path(), &["board-1"]).await;
    let bus = Bus::start(dir.path()).await;
    let mut daemon = Daemon::spawn(&bus, dir.path(), &rig::port_args(&ports));
    daemon.wait_for_name(&bus.client().await).await;
    let relay = Relay::spawn(
        &bus.address,
        dir.path(),
        &["--mqtt", &url, "--rig", RIG, "--prefix", "hall"],
    );
    let said = until_logged(
        "the relay to say it refused the big state",
        "refused an oversized message",
        || relay.log_text(),
    )
    .await;
    assert!(said.contains(&topic("ghost/state")), "{said}");
    assert!(
        !said.contains("giant"),
        "over the packet bound, never sent: {said}"
    );

    // The games go on reaching serve through the relay and the broker.
    let board = format!("{RIG}/board_1");
    until_json(&serve, "/api/boards", "the rig's board on serve", |v| {
        v.as_array()
            .is_some_and(|a| a.iter().any(|b| b["Id"] == board.as_str()))
    })
    .await;
    let mut s = scenario(&sims[0]);
    s.run(&[moves(&["e4", "e5"])]).await.expect("moves");
    let path = format!("/api/boards/{board}");
    until_json(&serve, &path, "two moves on serve", |v| {
        v["Moves"].as_array().is_some_and(|m| m.len() == 2)
    })
    .await;

    // A big live event: refused too, and the next moves still come.
    publish_big(broker.port, &[(topic("board_1/event"), 2 << 20, false)]).await;
    until_json(&serve, "/api/health", "the big event refused", |h| {
        h["broker"]["refused_by_reason"]["oversized"] == 2
    })
    .await;
    s.run(&[moves(&["Nf3", "Nc6"])]).await.expect("moves");
    until_json(&serve, &path, "four moves on serve", |v| {
        v["Moves"].as_array().is_some_and(|m| m.len() == 4)
    })
    .await;
    // A second line about refusals (the first was the retained state's).
    until_logged("serve to say it refused the big event", "second", || {
        let lines = log().matches("(oversized 1)").count();
        if lines >= 2 {
            "second".into()
        } else {
            String::new()
        }
    })
    .await;

    // One connection each, in MQTT 5, through all of it; neither said it lost the broker.
    let broker_log = std::fs::read_to_string(dir.path().join("mosquitto.log")).unwrap();
    let relay_conns = connections(&broker_log, &format!("eboardd-relay-{RIG}"));
    let serve_conns = connections(&broker_log, "eboardctl-");
    assert_eq!(relay_conns.len(), 1, "{broker_log}");
    assert_eq!(serve_conns.len(), 1, "{broker_log}");
    assert!(relay_conns[0].contains("(p5,"), "{}", relay_conns[0]);
    assert!(serve_conns[0].contains("(p5,"), "{}", serve_conns[0]);
    let relay_log = relay.log_text();
    assert!(!relay_log.contains("lost the broker"), "{relay_log}");
    assert!(!log().contains("source down"), "{}", log());
    assert_eq!(relay.stop().await, 0);
}
