//! The hall relay end to end with real parts: per rig a private `dbus-daemon`, the `eboardd`
//! binary serving simulated boards on pseudo-terminals, and `eboardctl relay`; one real
//! `mosquitto` on a loopback port for the hall; MQTT subscribers in the test.

mod common;
mod ctl_support;
mod relay_support;

use std::collections::BTreeMap;
use std::sync::Arc;

use eboard_sim::{Pace, Scenario, SimHandle, Step};
use serde_json::Value;

use common::rig::{self, moves};
use common::{Bus, Daemon, within};
use relay_support::{Broker, Got, Relay, Subscriber, WAIT, board_events, has_retained, retained};

/// One rig: its own bus, eboardd with simulated boards, and (once started) its relay.
struct Rig {
    name: String,
    dir: tempfile::TempDir,
    bus: Bus,
    daemon: Daemon,
    /// (board id, simulator)
    boards: Vec<(String, Arc<SimHandle>)>,
    relay: Option<Relay>,
}

impl Rig {
    async fn start(name: &str, boards: &[&str]) -> Rig {
        let dir = tempfile::tempdir().expect("temp dir");
        let (sims, ports) = rig::spawn_sims(dir.path(), boards).await;
        let sims: Vec<(String, Arc<SimHandle>)> = boards
            .iter()
            .map(|b| rig::board_id(b))
            .zip(sims.into_iter().map(Arc::new))
            .collect();
        let bus = Bus::start(dir.path()).await;
        let mut daemon = Daemon::spawn(&bus, dir.path(), &rig::port_args(&ports));
        daemon.wait_for_name(&bus.client().await).await;
        Rig {
            name: name.to_owned(),
            dir,
            bus,
            daemon,
            boards: sims,
            relay: None,
        }
    }

    fn start_relay(&mut self, broker: &Broker) {
        let url = broker.url();
        self.relay = Some(Relay::spawn(
            &self.bus.address,
            self.dir.path(),
            &["--mqtt", &url, "--rig", &self.name, "--prefix", "hall"],
        ));
    }

    /// Stops eboardd (SIGTERM) and starts it again with the same state directory and the
    /// ports of `keep` only.
    async fn restart_daemon(&mut self, keep: &[&str]) {
        self.daemon.signal(nix::sys::signal::Signal::SIGTERM);
        self.daemon.wait(WAIT).await;
        let mut args: Vec<String> = Vec::new();
        for b in keep {
            args.push("--port".into());
            args.push(self.dir.path().join(b).display().to_string());
        }
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        self.daemon = Daemon::spawn(&self.bus, self.dir.path(), &refs);
        self.daemon.wait_for_name(&self.bus.client().await).await;
    }

    fn topic(&self, board: &str, kind: &str) -> String {
        format!("hall/{}/{board}/{kind}", self.name)
    }

    /// Every board's properties as JSON, straight from the daemon.
    async fn properties(&self) -> BTreeMap<String, Value> {
        rig::dbus_boards(&self.bus.client().await).await
    }

    /// Waits until every board of the rig is playing with its clock, as a game needs.
    async fn ready(&self) {
        within(WAIT, "the boards in the start position", async {
            loop {
                let props = self.properties().await;
                if props.len() == self.boards.len()
                    && props
                        .values()
                        .all(|p| p["State"] == "playing" && p["ClockConnected"] == true)
                {
                    return;
                }
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
        })
        .await;
    }
}

fn scenario(sim: &SimHandle, seed: u64) -> Scenario<'_> {
    let quick = Pace {
        think_ms: (40, 80),
        press_ms: (10, 30),
        hand_ms: (10, 20),
    };
    // Plain handling: what is tested here is the relay, not move reconstruction.
    rig::clean_scenario_paced(sim, seed, quick)
}

/// The SANs of the `MovePlayed` events, checking each ply follows the one before.
fn played(events: &[Value]) -> Vec<String> {
    let mut out = Vec::new();
    for e in events.iter().filter(|e| e["member"] == "MovePlayed") {
        assert_eq!(e["ply"], out.len() + 1, "ply out of order: {e}");
        out.push(e["san"].as_str().expect("san").to_owned());
    }
    out
}

/// Waits until the retained `state` and `pgn` of every board of `rig` equal the daemon's
/// properties (read both again until they agree: the clock may be ticking).
async fn retained_match_daemon(rig: &Rig, broker: &Broker) {
    within(WAIT, "retained state = the daemon's properties", async {
        loop {
            let props = rig.properties().await;
            let mut topics = Vec::new();
            for (id, _) in &rig.boards {
                topics.push(rig.topic(id, "state"));
                topics.push(rig.topic(id, "pgn"));
            }
            let got = retained(broker.port, &topics).await;
            let all = rig.boards.iter().all(|(id, _)| {
                let state: Value =
                    serde_json::from_slice(&got[&rig.topic(id, "state")]).expect("state is JSON");
                let pgn = String::from_utf8_lossy(&got[&rig.topic(id, "pgn")]).into_owned();
                state == props[id] && pgn == props[id]["Pgn"].as_str().expect("Pgn")
            });
            if all {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    })
    .await;
}

/// Two rigs, two relays, one broker: a subscriber sees every move of every board with a
/// contiguous `seq`, and at the end each board's retained `state` and `pgn` equal what its
/// daemon says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_rigs_play_and_the_hall_sees_every_move() {
    let dir = tempfile::tempdir().expect("temp dir");
    let broker = Broker::start(dir.path()).await;
    let sub = Subscriber::start(broker.port, "hall-test-subscriber", "hall/#", true).await;

    let mut rig_a = Rig::start("rig-a", &["board-1", "board-2"]).await;
    let mut rig_b = Rig::start("rig-b", &["board-1"]).await;
    rig_a.ready().await;
    rig_b.ready().await;
    rig_a.start_relay(&broker);
    rig_b.start_relay(&broker);
    sub.until("both rigs online", |got| {
        let online = |rig: &str| {
            got.iter()
                .any(|g| g.topic == format!("hall/{rig}/status") && g.payload == b"online")
        };
        (online("rig-a") && online("rig-b")).then_some(())
    })
    .await;

    // The hall in eboardctl: one JSON line per event, and the full-screen view in tmux.
    let url = broker.url();
    let watch_args = [
        "--json",
        "watch",
        "--mqtt",
        url.as_str(),
        "--prefix",
        "hall",
    ];
    let mut watch = ctl_support::Watch::spawn(&rig_a.bus.address, &watch_args);
    for path in ["rig-a/board_1", "rig-a/board_2", "rig-b/board_1"] {
        let line = watch
            .until(&format!("{path} in watch --mqtt"), |l| {
                l.contains("\"event\":\"Board\"") && l.contains(&format!("\"path\":\"{path}\""))
            })
            .await;
        let rig = path.split('/').next().unwrap();
        assert!(
            line.contains(&format!("\"board\":\"{rig}/board-")),
            "{line}"
        );
    }
    let tmux_dir = tempfile::tempdir().expect("temp dir");
    let tmux = if ctl_support::require_tmux() {
        let command: Vec<String> = [
            ctl_support::eboardctl(),
            "watch",
            "--mqtt",
            &url,
            "--prefix",
            "hall",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let tmux = ctl_support::Tmux::start(tmux_dir.path(), 160, 60, &command).await;
        tmux.until("the hall's panels", |s| {
            s.contains("rig-a/board-1")
                && s.contains("rig-a/board-2")
                && s.contains("rig-b/board-1")
        })
        .await;
        Some(tmux)
    } else {
        None // the full-screen part only; the rest of the test runs
    };

    let games: [&[&str]; 3] = [
        &[
            "e4", "c5", "Nf3", "d6", "d4", "cxd4", "Nxd4", "Nf6", "Nc3", "a6",
        ],
        &["d4", "Nf6", "c4", "e6", "Nc3", "Bb4", "Qc2", "O-O"],
        &[
            "e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6", "O-O", "Be7",
        ],
    ];
    let (mut s1, mut s2, mut s3) = (
        scenario(&rig_a.boards[0].1, 1),
        scenario(&rig_a.boards[1].1, 2),
        scenario(&rig_b.boards[0].1, 3),
    );
    let steps: Vec<[Step; 1]> = games.iter().map(|g| [moves(g)]).collect();
    let (r1, r2, r3) = tokio::join!(s1.run(&steps[0]), s2.run(&steps[1]), s3.run(&steps[2]));
    r1.expect("game 1");
    r2.expect("game 2");
    r3.expect("game 3");

    let boards = [
        (rig_a.topic("board_1", "event"), games[0]),
        (rig_a.topic("board_2", "event"), games[1]),
        (rig_b.topic("board_1", "event"), games[2]),
    ];
    for (topic, game) in &boards {
        let events = sub
            .until(&format!("every move on {topic}"), |got| {
                let events = board_events(got, topic);
                (played(&events).len() == game.len()).then_some(events)
            })
            .await;
        assert_eq!(played(&events), *game, "{topic}");
        assert_eq!(events[0]["seq"], 1, "{topic}: the count starts at 1");
        let first_move = &events.iter().find(|e| e["member"] == "MovePlayed").unwrap();
        for key in ["ply", "san", "uci", "fen", "white_ms", "black_ms"] {
            assert!(first_move.get(key).is_some(), "{key} in {first_move}");
        }
    }
    retained_match_daemon(&rig_a, &broker).await;
    retained_match_daemon(&rig_b, &broker).await;

    // watch --mqtt saw every move of every board, in order.
    let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let total: usize = games.iter().map(|g| g.len()).sum();
    while seen.values().map(Vec::len).sum::<usize>() < total {
        let line = watch
            .until("MovePlayed in watch --mqtt", |l| {
                l.contains("\"event\":\"MovePlayed\"")
            })
            .await;
        let v: Value = serde_json::from_str(&line).expect("JSON line");
        let list = seen
            .entry(v["path"].as_str().expect("path").to_owned())
            .or_default();
        assert_eq!(v["ply"], list.len() + 1, "{line}");
        list.push(v["san"].as_str().expect("san").to_owned());
    }
    assert_eq!(seen["rig-a/board_1"], games[0]);
    assert_eq!(seen["rig-a/board_2"], games[1]);
    assert_eq!(seen["rig-b/board_1"], games[2]);
    assert_eq!(watch.interrupt().await, 0);
    if let Some(tmux) = &tmux {
        tmux.until("the last moves on screen", |s| {
            s.contains("5. Nc3 a6") && s.contains("3. Nc3 Bb4") && s.contains("5. O-O Be7")
        })
        .await;
        tmux.send_keys("C-c").await;
    }

    for rig in [&mut rig_a, &mut rig_b] {
        let relay = rig.relay.take().expect("relay");
        assert_eq!(relay.stop().await, 0);
    }
    let status = retained(
        broker.port,
        &[
            "hall/rig-a/status".to_owned(),
            "hall/rig-b/status".to_owned(),
        ],
    )
    .await;
    assert!(
        status.values().all(|v| v == b"offline"),
        "a stopped relay says offline: {status:?}"
    );
    for (_, sim) in rig_a.boards.iter().chain(&rig_b.boards) {
        sim.shutdown().await;
    }
}

/// The broker stops in the middle of a game and comes back later, with moves made meanwhile:
/// the subscriber has every move in order, and the retained topics are current.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_restart_loses_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut broker = Broker::start(dir.path()).await;
    let sub = Subscriber::start(broker.port, "restart-test-subscriber", "hall/#", true).await;
    let mut rig = Rig::start("rig-r", &["board-1"]).await;
    rig.ready().await;
    rig.start_relay(&broker);
    let topic = rig.topic("board_1", "event");

    let game = [
        "e4", "c5", "Nf3", "d6", "d4", "cxd4", "Nxd4", "Nf6", "Nc3", "a6", "Be3", "e5", "Nb3",
        "Be6",
    ];
    let mut s = scenario(&rig.boards[0].1, 9);
    s.run(&[moves(&game[..4])]).await.expect("first moves");
    sub.until("the first moves", |got| {
        (played(&board_events(got, &topic)).len() == 4).then_some(())
    })
    .await;

    broker.stop().await;
    s.run(&[moves(&game[4..10])])
        .await
        .expect("moves while the broker is away");
    // The daemon has them (the last one may still be held for its dwell); the relay keeps them.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let props = rig.properties().await;
        let n = props["board_1"]["Moves"].as_array().map(Vec::len);
        if n == Some(10) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the daemon never had the 10 moves: {n:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }

    broker.restart().await;
    s.run(&[moves(&game[10..])])
        .await
        .expect("moves after the restart");
    let events = sub
        .until("every move after the restart", |got| {
            let events = board_events(got, &topic);
            (played(&events).len() == game.len()).then_some(events)
        })
        .await;
    assert_eq!(played(&events), game);
    retained_match_daemon(&rig, &broker).await;
    let log = rig.relay.as_ref().expect("relay").log_text();
    assert!(log.contains("lost the broker"), "the relay said so: {log}");
    rig.boards[0].1.shutdown().await;
}

/// The messages on `topic` received after the first `from` messages.
fn since<'a>(got: &'a [Got], from: usize, topic: &'a str) -> impl Iterator<Item = &'a Got> + 'a {
    got.iter().skip(from).filter(move |g| g.topic == topic)
}

/// The other faults: a board removed (its retained topics are cleared), eboardd restarted
/// (the rig goes offline and back online with every state republished, `seq` goes on), the
/// relay restarted (everything republished, `seq` starts again at 1 as the README says).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removal_daemon_restart_and_relay_restart() {
    let dir = tempfile::tempdir().expect("temp dir");
    let broker = Broker::start(dir.path()).await;
    let sub = Subscriber::start(broker.port, "faults-test-subscriber", "hall/#", true).await;
    let mut rig = Rig::start("rig-f", &["board-1", "board-2"]).await;
    rig.ready().await;
    rig.start_relay(&broker);
    let (event, state, status) = (
        rig.topic("board_1", "event"),
        rig.topic("board_1", "state"),
        "hall/rig-f/status".to_owned(),
    );
    let gone_state = rig.topic("board_2", "state");
    let gone_pgn = rig.topic("board_2", "pgn");
    sub.until("board 2's state", |got| {
        got.iter().any(|g| g.topic == gone_state).then_some(())
    })
    .await;
    assert!(has_retained(broker.port, &gone_state, &status).await);

    let sim = rig.boards[0].1.clone();
    let mut s = scenario(&sim, 5);
    s.run(&[moves(&["e4", "e5"])]).await.expect("moves");
    sub.until("two moves", |got| {
        (played(&board_events(got, &event)).len() == 2).then_some(())
    })
    .await;

    // A board removed from the rig: its retained topics are cleared.
    let conn = rig.bus.client().await;
    let path = zbus::ObjectPath::try_from("/org/eboardd/Bridge1/Board/board_2").unwrap();
    conn.call_method(
        Some("org.eboardd.Bridge1"),
        "/org/eboardd/Bridge1",
        Some("org.eboardd.Bridge1"),
        "RemoveBoard",
        &(path,),
    )
    .await
    .expect("RemoveBoard");
    let (_, removed) = rig.boards.pop().expect("board 2");
    sub.until("board 2 cleared", |got| {
        let cleared = |t: &str| got.iter().any(|g| g.topic == t && g.payload.is_empty());
        (cleared(&gone_state) && cleared(&gone_pgn)).then_some(())
    })
    .await;
    assert!(!has_retained(broker.port, &gone_state, &status).await);
    assert!(!has_retained(broker.port, &gone_pgn, &status).await);

    // eboardd restarted (without board 2): offline, then online with the state again.
    let mark = sub.snapshot().len();
    rig.restart_daemon(&["board-1"]).await;
    sub.until("offline, online and the state again", |got| {
        let st: Vec<&[u8]> = since(got, mark, &status)
            .map(|g| g.payload.as_slice())
            .collect();
        let pos = st.iter().position(|p| *p == b"offline")?;
        st[pos..].contains(&b"online".as_slice()).then_some(())?;
        since(got, mark, &state).next().map(|_| ())
    })
    .await;
    rig.ready().await;
    s.run(&[moves(&["Nf3", "Nc6"])])
        .await
        .expect("moves after the daemon restart");
    let events = sub
        .until("four moves", |got| {
            let e = board_events(got, &event);
            (played(&e).len() == 4).then_some(e)
        })
        .await;
    assert_eq!(played(&events), ["e4", "e5", "Nf3", "Nc6"], "seq went on");
    let old_run = events[0]["run"]
        .as_str()
        .expect("events carry the relay's run id")
        .to_owned();
    assert!(events.iter().all(|e| e["run"] == old_run.as_str()));
    assert!(!has_retained(broker.port, &gone_state, &status).await);

    // The relay restarted: offline, online, everything republished, seq from 1 again.
    let mark = sub.snapshot().len();
    assert_eq!(rig.relay.take().expect("relay").stop().await, 0);
    rig.start_relay(&broker);
    sub.until("the relay back with the state", |got| {
        since(got, mark, &status)
            .any(|g| g.payload == b"online")
            .then_some(())?;
        since(got, mark, &state).next().map(|_| ())
    })
    .await;
    s.run(&[moves(&["Bb5"])])
        .await
        .expect("a move after the relay restart");
    let first = sub
        .until("the move after the relay restart", |got| {
            since(got, mark, &event).next().map(Got::json)
        })
        .await;
    assert_eq!(first["seq"], 1, "a new relay run counts from 1: {first}");
    let new_run = first["run"].as_str().expect("run id").to_owned();
    assert_ne!(new_run, old_run, "each relay run has its own id");
    let run_topic = "hall/rig-f/run".to_owned();
    let kept = retained(broker.port, std::slice::from_ref(&run_topic)).await;
    assert_eq!(
        kept[&run_topic],
        new_run.as_bytes(),
        "the retained run is the new one"
    );
    assert_eq!(
        (first["member"].as_str(), first["san"].as_str()),
        (Some("MovePlayed"), Some("Bb5"))
    );
    retained_match_daemon(&rig, &broker).await;
    for (_, sim) in &rig.boards {
        sim.shutdown().await;
    }
    removed.shutdown().await;
}

/// `mqtts://` with `--ca`: the relay checks the broker's certificate against the given CA and
/// publishes; without `--ca` (the system store does not know that CA) it refuses the broker,
/// says why, and keeps trying.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_with_the_brokers_ca() {
    let dir = tempfile::tempdir().expect("temp dir");
    let broker = Broker::start_tls(dir.path()).await;
    let (tls_port, ca) = broker.tls.clone().expect("TLS listener");
    let sub = Subscriber::start(broker.port, "tls-test-subscriber", "hall/#", false).await;
    let rig = Rig::start("rig-t", &["board-1"]).await;
    let url = format!("mqtts://localhost:{tls_port}");
    let ca = ca.display().to_string();
    let trusted = Relay::spawn(
        &rig.bus.address,
        rig.dir.path(),
        &[
            "--mqtt", &url, "--ca", &ca, "--rig", "rig-t", "--prefix", "hall",
        ],
    );
    let untrusted = Relay::spawn(
        &rig.bus.address,
        rig.dir.path(),
        &["--mqtt", &url, "--rig", "rig-u", "--prefix", "hall"],
    );
    let state = rig.topic("board_1", "state");
    let got = sub
        .until("the state over TLS", |got| {
            got.iter().find(|g| g.topic == state).cloned()
        })
        .await;
    assert_eq!(got.json()["Name"], "board-1");
    within(WAIT, "the untrusted relay to say why", async {
        loop {
            let log = untrusted.log_text();
            if log.contains("cannot reach the broker") {
                assert!(log.contains("ertificate") || log.contains("TLS"), "{log}");
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    })
    .await;
    assert!(
        !sub.snapshot()
            .iter()
            .any(|g| g.topic.starts_with("hall/rig-u/")),
        "nothing from the relay that does not trust the broker"
    );
    assert_eq!(trusted.stop().await, 0);
    assert_eq!(untrusted.stop().await, 0);
    rig.boards[0].1.shutdown().await;
}

/// `eboardctl serve --mqtt`: the web bridge's JSON API and PGN from the broker, boards named
/// `<rig>/<board id>`, current as the games go on, through a relay restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_from_the_broker() {
    let dir = tempfile::tempdir().expect("temp dir");
    let broker = Broker::start(dir.path()).await;
    let mut rig = Rig::start("rig-s", &["board-1"]).await;
    rig.ready().await;
    rig.start_relay(&broker);
    let port = relay_support::free_port();
    let listen = format!("127.0.0.1:{port}");
    let url = broker.url();
    let mut serve = tokio::process::Command::new(env!("CARGO_BIN_EXE_eboardctl"));
    serve
        .args([
            "serve", "--listen", &listen, "--mqtt", &url, "--prefix", "hall",
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true);
    common::die_with_parent(&mut serve);
    let _serve = serve.spawn().expect("spawn eboardctl serve");
    let http = reqwest::Client::new();
    let base = format!("http://{listen}");
    // Polls `path` until `pred` accepts its JSON.
    let until = |path: String, what: &'static str, pred: Box<dyn Fn(&Value) -> bool + Send>| {
        let http = http.clone();
        let base = base.clone();
        async move {
            within(WAIT, what, async {
                loop {
                    if let Ok(r) = http.get(format!("{base}{path}")).send().await
                        && r.status().is_success()
                        && let Ok(v) = r.json::<Value>().await
                        && pred(&v)
                    {
                        return v;
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
            })
            .await
        }
    };
    let list = until(
        "/api/boards".into(),
        "the hall's board in /api/boards",
        Box::new(|v| v.as_array().is_some_and(|a| a.len() == 1)),
    )
    .await;
    assert_eq!(list[0]["Id"], "rig-s/board_1", "{list}");
    assert_eq!(list[0]["Name"], "board-1");

    let sim = rig.boards[0].1.clone();
    let mut s = scenario(&sim, 11);
    let game = ["d4", "d5", "c4", "e6", "Nc3", "Nf6"];
    s.run(&[moves(&game)]).await.expect("moves");
    let board = until(
        "/api/boards/rig-s/board_1".into(),
        "the moves in /api/boards/<id>",
        Box::new(move |v| v["Moves"].as_array().is_some_and(|m| m.len() == 6)),
    )
    .await;
    let seen: Vec<&str> = board["Moves"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(seen, game);
    // The PGN the bridge serves is the daemon's Pgn property.
    within(WAIT, "the PGN from the broker", async {
        loop {
            let want = rig.properties().await["board_1"]["Pgn"]
                .as_str()
                .unwrap()
                .to_owned();
            let got = http
                .get(format!("{base}/pgn/rig-s/board_1.pgn"))
                .send()
                .await
                .expect("GET pgn")
                .text()
                .await
                .expect("body");
            if got.trim_end() == want.trim_end() {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    })
    .await;
    let missing = http
        .get(format!("{base}/api/boards/rig-x/board_1"))
        .send()
        .await
        .expect("GET");
    assert_eq!(missing.status(), 404);

    // A relay restart: the bridge keeps the board and follows the new count.
    assert_eq!(rig.relay.take().expect("relay").stop().await, 0);
    rig.start_relay(&broker);
    s.run(&[moves(&["Bg5"])])
        .await
        .expect("a move after the relay restart");
    until(
        "/api/boards/rig-s/board_1".into(),
        "the move after the relay restart",
        Box::new(|v| v["Moves"].as_array().is_some_and(|m| m.len() == 7)),
    )
    .await;
    sim.shutdown().await;
}
