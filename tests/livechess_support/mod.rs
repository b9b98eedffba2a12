//! What the LiveChess API's tests share: `eboardctl livechess` under test on a private bus,
//! a WebSocket client speaking its JSON calls, and numbered simulated boards with their
//! daemon (from the shared rig).

#![allow(dead_code)]

use std::time::Duration;

use eboard_core::chesslink::{AutoReport, settings::AUTO_REPORT};
use eboard_sim::chesslink::{ChessLinkHandle, ChessLinkSim, ChessLinkSimOptions};
use eboard_sim::{BoardOptions, Scenario, SimHandle};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::process::{Child, Command};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::common::{Bus, Daemon, WAIT, bridge, rig, within};

/// `eboardctl livechess` under test.
pub struct LiveChess {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
}

impl LiveChess {
    /// Starts `eboardctl --bus <address> livechess --listen 127.0.0.1:0` plus `extra`.
    pub async fn start(address: &str, extra: &[&str]) -> LiveChess {
        Self::start_with(address, extra, |_| {}).await
    }

    /// The same, with `configure` having its say on the command (limits, environment).
    pub async fn start_with(
        address: &str,
        extra: &[&str],
        configure: impl FnOnce(&mut Command),
    ) -> LiveChess {
        let (child, listening, mut lines) = bridge::start_bridge(
            address,
            "livechess",
            "127.0.0.1:0",
            extra,
            configure,
            "listening on ws://",
            |_| {},
        )
        .await;
        let addr = listening.trim_end_matches("/api/v1.0").to_owned();
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        LiveChess { child, addr }
    }

    pub fn pid(&self) -> u32 {
        self.child.id().expect("livechess running")
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn ws_url(&self) -> String {
        format!("ws://{}/api/v1.0", self.addr)
    }

    /// GET `path`: (status, JSON body).
    pub async fn get(&self, path: &str) -> (u16, Value) {
        let res = within(WAIT, path, reqwest::get(self.url(path)))
            .await
            .unwrap_or_else(|e| panic!("GET {path}: {e}"));
        let status = res.status().as_u16();
        let body = res.text().await.expect("body");
        let json = serde_json::from_str(&body)
            .unwrap_or_else(|e| panic!("GET {path} is not JSON ({e}): {body}"));
        (status, json)
    }

    /// GET `path`, which must answer 200.
    pub async fn json(&self, path: &str) -> Value {
        let (status, body) = self.get(path).await;
        assert_eq!(status, 200, "GET {path}: {body}");
        body
    }

    /// Opens the WebSocket, as a program (no `Origin`) or as a page from `origin`.
    pub async fn connect(&self, origin: Option<&str>) -> Result<Ws, u16> {
        self.connect_as(origin, None).await
    }

    /// [`LiveChess::connect`] with a `User-Agent` (none: as tungstenite sends, without).
    pub async fn connect_as(&self, origin: Option<&str>, agent: Option<&str>) -> Result<Ws, u16> {
        let mut req = self.ws_url().into_client_request().expect("request");
        if let Some(o) = origin {
            req.headers_mut().insert("Origin", o.parse().unwrap());
        }
        if let Some(a) = agent {
            req.headers_mut().insert("User-Agent", a.parse().unwrap());
        }
        match within(
            WAIT,
            "the WebSocket handshake",
            tokio_tungstenite::connect_async(req),
        )
        .await
        {
            Ok((stream, _)) => Ok(Ws {
                stream,
                feeds: Vec::new(),
            }),
            Err(tokio_tungstenite::tungstenite::Error::Http(res)) => Err(res.status().as_u16()),
            Err(e) => panic!("WebSocket handshake: {e}"),
        }
    }

    /// Waits until `eboards` lists `n` boards, all ACTIVE, with a clock, their serial number
    /// and their pieces read.
    pub async fn wait_active(&self, n: usize) -> Value {
        within(WAIT * 3, "every board active with a clock", async {
            loop {
                let boards = self.json("/api/v1.0/eboards").await;
                let list = boards.as_array().unwrap();
                if list.len() == n
                    && list.iter().all(|b| {
                        b["state"] == "ACTIVE"
                            && !b["clock"].is_null()
                            && b["board"] != "8/8/8/8/8/8/8/8"
                            && b["serialnr"]
                                .as_str()
                                .is_some_and(|s| s.starts_with(char::is_numeric))
                    })
                {
                    return boards;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await
    }
}

/// A WebSocket client of the API. Feed messages that arrive while waiting for an answer are
/// kept in `feeds`.
pub struct Ws {
    stream: tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
    pub feeds: Vec<Value>,
}

impl Ws {
    pub async fn send_text(&mut self, text: &str) {
        self.stream
            .send(Message::Text(text.into()))
            .await
            .expect("send");
    }

    /// The next JSON message.
    pub async fn next(&mut self) -> Value {
        within(WAIT * 3, "a message from the API", async {
            loop {
                match self.stream.next().await {
                    Some(Ok(Message::Text(t))) => {
                        return serde_json::from_str(t.as_str()).expect("a JSON message");
                    }
                    Some(Ok(_)) => {}
                    other => panic!("the WebSocket ended: {other:?}"),
                }
            }
        })
        .await
    }

    /// The close code the server ends the socket with, skipping other messages (`None`: it
    /// ended without a close frame).
    pub async fn close_code(&mut self) -> Option<u16> {
        within(WAIT * 3, "the WebSocket to be closed", async {
            loop {
                match self.stream.next().await {
                    Some(Ok(Message::Close(frame))) => return frame.map(|f| u16::from(f.code)),
                    Some(Ok(_)) => {}
                    _ => return None,
                }
            }
        })
        .await
    }

    /// Sends `text` and returns the answer or error with `id` (feeds meanwhile kept).
    pub async fn request(&mut self, text: &str, id: &Value) -> Value {
        self.send_text(text).await;
        loop {
            let msg = self.next().await;
            if msg["response"] == "feed" {
                self.feeds.push(msg);
            } else if msg["id"] == *id {
                return msg;
            } else {
                panic!("an answer to another request: {msg}");
            }
        }
    }

    /// `{"id": id, "call": call, "param": param}`.
    pub async fn call(&mut self, id: u64, call: &str, param: Value) -> Value {
        let text = json!({"id": id, "call": call, "param": param}).to_string();
        self.request(&text, &json!(id)).await
    }

    /// Subscribes feed `feed` to the board with `serialnr` (`eboardevent`), as request `id`;
    /// returns the answer.
    pub async fn subscribe(&mut self, id: u64, feed: u64, serialnr: &str) -> Value {
        let param = json!({"feed": "eboardevent", "id": feed, "param": {"serialnr": serialnr}});
        self.call(id, "subscribe", param).await
    }

    /// Calls `method` with `param` on the board of feed 1, as request `id`; returns the answer.
    pub async fn call_method(&mut self, id: u64, method: &str, param: Value) -> Value {
        let call = json!({"id": 1, "method": method, "param": param});
        self.call(id, "call", call).await
    }

    /// The next feed message (a kept one first).
    pub async fn next_feed(&mut self) -> Value {
        if !self.feeds.is_empty() {
            return self.feeds.remove(0);
        }
        let msg = self.next().await;
        assert_eq!(msg["response"], "feed", "not a feed message: {msg}");
        msg
    }

    /// Feed messages until one satisfies `pred` (included).
    pub async fn feed_until(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Vec<Value> {
        bridge::until_one(WAIT * 6, what, async || self.next_feed().await, pred).await
    }
}

/// Numbered simulated boards (`lc1` is table 1, …), eboardd serving them from a config file,
/// and the bridge on top.
pub struct Rig {
    pub sims: Vec<SimHandle>,
    pub daemon: Daemon,
    pub livechess: LiveChess,
    pub bus: Bus,
    pub conn: zbus::Connection,
    pub dir: tempfile::TempDir,
}

impl Rig {
    /// A new connection of a program (no `Origin`), which the bridge lets in.
    pub async fn program(&self) -> Ws {
        self.livechess
            .connect(None)
            .await
            .expect("a program is let in")
    }

    pub async fn start(boards: usize, livechess_args: &[&str]) -> Rig {
        Rig::start_with(boards, livechess_args, own_serial).await
    }

    /// [`Rig::start`] with board `i`'s identity and behaviour from `board(i)`.
    pub async fn start_with(
        boards: usize,
        livechess_args: &[&str],
        board: impl Fn(usize) -> BoardOptions,
    ) -> Rig {
        let dir = tempfile::tempdir().expect("temp dir");
        let names: Vec<String> = (1..=boards).map(|i| format!("lc{i}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let (sims, ports) = rig::spawn_sims_with(dir.path(), &names, board).await;
        let config = dir.path().join("eboardd.toml");
        let text: String = names
            .iter()
            .zip(&ports)
            .enumerate()
            .map(|(i, (name, port))| {
                format!(
                    "[[board]]\nname = \"{name}\"\nport = \"{port}\"\nnumber = {}\n",
                    i + 1
                )
            })
            .collect();
        std::fs::write(&config, text).expect("config");
        let bus = Bus::start(dir.path()).await;
        let mut daemon = Daemon::spawn(&bus, dir.path(), &["--config", config.to_str().unwrap()]);
        let conn = bus.client().await;
        daemon.wait_for_name(&conn).await;
        let livechess = LiveChess::start(&bus.address, livechess_args).await;
        Rig {
            sims,
            daemon,
            livechess,
            bus,
            conn,
            dir,
        }
    }

    /// A quick, clean scenario on board `i`.
    pub fn scenario(&self, i: usize) -> Scenario<'_> {
        rig::clean_scenario(&self.sims[i], 11 + i as u64)
    }

    /// A mixed hall: a DGT board `lc1` with its clock at table 1 and a simulated Millennium
    /// ChessLink board `cl` (`protocol = "chesslink"`, no clock, no battery, no serial number)
    /// at table 2, its reports switched on by the daemon; then the bridge.
    pub async fn start_with_chesslink(livechess_args: &[&str]) -> (Rig, ChessLinkHandle) {
        let dir = tempfile::tempdir().expect("temp dir");
        let (sims, ports) = rig::spawn_sims_with(dir.path(), &["lc1"], own_serial).await;
        let cl_port = dir.path().join("cl");
        let cl = ChessLinkSim::spawn(ChessLinkSimOptions {
            link: Some(cl_port.clone()),
            ..ChessLinkSimOptions::default()
        })
        .await
        .expect("the simulated ChessLink board");
        let config = dir.path().join("eboardd.toml");
        std::fs::write(
            &config,
            format!(
                "[[board]]\nname = \"lc1\"\nport = \"{}\"\nnumber = 1\n\n\
                 [[board]]\nname = \"cl\"\nport = \"{}\"\nnumber = 2\nprotocol = \"chesslink\"\n",
                ports[0],
                cl_port.display()
            ),
        )
        .expect("config");
        let bus = Bus::start(dir.path()).await;
        let mut daemon = Daemon::spawn(&bus, dir.path(), &["--config", config.to_str().unwrap()]);
        let conn = bus.client().await;
        daemon.wait_for_name(&conn).await;
        cl.wait_for_option(AUTO_REPORT, AutoReport::OnChange.code(), WAIT)
            .await
            .expect("the daemon switches the ChessLink board's reports on");
        let livechess = LiveChess::start(&bus.address, livechess_args).await;
        let rig = Rig {
            sims,
            daemon,
            livechess,
            bus,
            conn,
            dir,
        };
        (rig, cl)
    }
}

/// Simulated boards like the shared rig's, each with a serial number of its own (as real
/// boards have: the serial number is how LiveChess's clients name a board), `20001`, ….
pub async fn spawn_sims(dir: &std::path::Path, names: &[&str]) -> (Vec<SimHandle>, Vec<String>) {
    rig::spawn_sims_with(dir, names, own_serial).await
}

/// Board `i`'s options in [`spawn_sims`]: a serial number of its own.
pub fn own_serial(i: usize) -> BoardOptions {
    BoardOptions {
        serial: format!("{}", 20001 + i),
        long_serial: format!("{}", 3_000_020_001u64 + i as u64),
        ..BoardOptions::default()
    }
}

/// The sorted keys of a JSON object.
pub fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .cloned()
        .collect();
    k.sort();
    k
}

/// Asserts that `v` is an object with exactly `want`'s keys.
pub fn assert_keys(what: &str, v: &Value, want: &[&str]) {
    let mut want: Vec<String> = want.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(keys(v), want, "{what}: {v}");
}

/// The contract's key sets (section 8).
pub const EBOARD: &[&str] = &[
    "serialnr", "source", "state", "battery", "comment", "board", "flipped", "clock",
];
pub const CLOCK: &[&str] = &["white", "black", "run", "time"];
pub const EVENT: &[&str] = &[
    "serialnr", "flipped", "board", "clock", "start", "san", "match",
];
pub const SOURCE: &[&str] = &["type", "device", "name", "present", "active", "status"];
pub const CALL: &[&str] = &["response", "id", "param", "time"];
pub const PLAYER: &[&str] = &[
    "fname",
    "mname",
    "lname",
    "title",
    "federation",
    "gender",
    "fideid",
];

/// Checks an EBOARD and its CLOCK.
pub fn check_eboard(v: &Value) {
    assert_keys("EBOARD", v, EBOARD);
    if !v["clock"].is_null() {
        assert_keys("CLOCK", &v["clock"], CLOCK);
    }
}
