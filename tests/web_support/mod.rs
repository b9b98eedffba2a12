//! What the web bridge's tests share: `eboardctl serve` under test on a private bus, an SSE
//! reader, simulated boards with their daemon, and a headless Chromium driven over the
//! DevTools protocol ([`browser`]).

#![allow(dead_code)]

pub mod browser;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use eboard_sim::{Scenario, SimHandle};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};

use crate::common::{Bus, Daemon, WAIT, bridge, rig, within};

/// `eboardctl serve` under test.
pub struct Serve {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// Every line it printed on stderr so far.
    pub log: Arc<Mutex<Vec<String>>>,
}

impl Serve {
    /// Starts `eboardctl --bus <address> serve --listen 127.0.0.1:0` plus `extra`.
    pub async fn start(address: &str, extra: &[&str]) -> Serve {
        Self::start_on(address, "127.0.0.1:0", extra).await
    }

    /// The same on a given address (to restart a bridge where its clients expect it).
    pub async fn start_on(address: &str, listen: &str, extra: &[&str]) -> Serve {
        Self::start_with(address, listen, extra, |_| {}).await
    }

    /// The same, with `configure` having its say on the command (limits, environment).
    pub async fn start_with(
        address: &str,
        listen: &str,
        extra: &[&str],
        configure: impl FnOnce(&mut Command),
    ) -> Serve {
        let log = Arc::new(Mutex::new(Vec::new()));
        let (child, base, mut lines) = bridge::start_bridge(
            address,
            "serve",
            listen,
            extra,
            configure,
            "listening on ",
            |line| log.lock().unwrap().push(line.to_owned()),
        )
        .await;
        let keep = log.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                keep.lock().unwrap().push(line);
            }
        });
        Serve { child, base, log }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn pid(&self) -> u32 {
        self.child.id().expect("serve running")
    }

    /// Kills the bridge and waits until it is gone.
    pub async fn kill(&mut self) {
        self.child.start_kill().expect("kill serve");
        within(WAIT, "serve to exit", self.child.wait())
            .await
            .expect("wait");
    }

    /// GET `path`: (status, body).
    pub async fn get(&self, path: &str) -> (u16, String) {
        let res = within(WAIT, path, reqwest::get(self.url(path)))
            .await
            .unwrap_or_else(|e| panic!("GET {path}: {e}"));
        let status = res.status().as_u16();
        (status, res.text().await.expect("body"))
    }

    /// GET `path` as JSON.
    pub async fn json(&self, path: &str) -> Value {
        let (status, body) = self.get(path).await;
        assert_eq!(status, 200, "GET {path}: {body}");
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("GET {path} not JSON ({e}): {body}"))
    }

    /// Opens `/api/events` with `query` (e.g. `?board=x`) and an optional `Last-Event-ID`.
    pub async fn events(&self, query: &str, last_id: Option<u64>) -> Sse {
        let mut req = reqwest::Client::new().get(self.url(&format!("/api/events{query}")));
        if let Some(id) = last_id {
            req = req.header("Last-Event-ID", id.to_string());
        }
        let res = within(WAIT, "the event stream", req.send())
            .await
            .expect("event stream");
        assert_eq!(res.status().as_u16(), 200, "event stream refused");
        assert!(
            res.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/event-stream")
        );
        Sse {
            body: res,
            buf: Vec::new(),
        }
    }
}

/// One Server-Sent Event.
#[derive(Debug, Clone, PartialEq)]
pub struct SseEvent {
    pub id: u64,
    pub event: String,
    pub data: Value,
}

/// An open event stream.
pub struct Sse {
    body: reqwest::Response,
    buf: Vec<u8>,
}

impl Sse {
    /// The next event with data (`None` when the stream ended).
    pub async fn next(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(end) = self.buf.windows(2).position(|w| w == b"\n\n") {
                // A block ends on ASCII, so it never splits a character.
                let raw: Vec<u8> = self.buf.drain(..end + 2).collect();
                let block = String::from_utf8(raw).expect("UTF-8 events");
                let (mut id, mut event, mut data) = (None, String::from("message"), None);
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        id = v.trim().parse().ok();
                    } else if let Some(v) = line.strip_prefix("event:") {
                        event = v.trim().to_owned();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data = Some(serde_json::from_str(v.trim()).expect("data is JSON"));
                    }
                }
                if let (Some(id), Some(data)) = (id, data) {
                    return Some(SseEvent { id, event, data });
                }
                continue;
            }
            match self.body.chunk().await {
                Ok(Some(chunk)) => self.buf.extend_from_slice(&chunk),
                _ => return None,
            }
        }
    }

    /// Events until one satisfies `pred` (included); panics after [`WAIT`] × 3.
    pub async fn until(&mut self, what: &str, pred: impl Fn(&SseEvent) -> bool) -> Vec<SseEvent> {
        let next = async || {
            self.next()
                .await
                .unwrap_or_else(|| panic!("stream ended before {what}"))
        };
        bridge::until_one(WAIT * 3, what, next, pred).await
    }
}

/// A private bus, simulated boards linked as `dir/<name>`, eboardd serving them, and
/// `eboardctl serve` on top.
pub struct Rig {
    pub sims: Vec<SimHandle>,
    pub daemon: Daemon,
    pub serve: Serve,
    pub bus: Bus,
    pub conn: zbus::Connection,
    pub ports: Vec<String>,
    pub dir: tempfile::TempDir,
}

impl Rig {
    pub async fn start(names: &[&str], serve_args: &[&str]) -> Rig {
        let dir = tempfile::tempdir().expect("temp dir");
        let (sims, ports) = rig::spawn_sims(dir.path(), names).await;
        let bus = Bus::start(dir.path()).await;
        let daemon = spawn_daemon(&bus, dir.path(), &ports).await;
        let conn = bus.client().await;
        let serve = Serve::start(&bus.address, serve_args).await;
        Rig {
            sims,
            daemon,
            serve,
            bus,
            conn,
            ports,
            dir,
        }
    }

    /// A scenario on board `i` with quick, clean handling.
    pub fn scenario(&self, i: usize) -> Scenario<'_> {
        scenario(&self.sims[i], i)
    }

    /// Waits until the bridge shows every board connected and in sync.
    pub async fn wait_ready(&self, ids: &[&str]) {
        within(WAIT * 2, "every board connected on the bridge", async {
            loop {
                let boards = self.serve.json("/api/boards").await;
                let ready = ids.iter().all(|id| {
                    boards.as_array().unwrap().iter().any(|b| {
                        b["Id"] == *id && b["Connected"] == true && b["ClockConnected"] == true
                    })
                });
                if ready {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await
    }
}

impl Rig {
    /// Waits until the bridge shows the board connected (after a daemon restart the clock
    /// reports only once it runs).
    pub async fn wait_connected(&self, id: &str) {
        within(WAIT * 2, "the board connected again", async {
            loop {
                let (status, body) = self.serve.get(&format!("/api/boards/{id}")).await;
                if status == 200 && body.contains("\"Connected\":true") {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await
    }
}

/// A scenario on a simulated board with quick, clean handling (`seed` varies the hands).
pub fn scenario(sim: &SimHandle, seed: usize) -> Scenario<'_> {
    rig::clean_scenario(sim, 7 + seed as u64)
}

/// eboardd on `bus` serving `ports`, once it owns its name.
pub async fn spawn_daemon(bus: &Bus, dir: &Path, ports: &[String]) -> Daemon {
    let mut daemon = Daemon::spawn(bus, dir, &rig::port_args(ports));
    daemon.wait_for_name(&bus.client().await).await;
    daemon
}

/// Every board's properties as D-Bus gives them, as JSON by id.
pub async fn dbus_boards(conn: &zbus::Connection) -> serde_json::Map<String, Value> {
    crate::common::rig::dbus_boards(conn).await
}

/// A raw HTTP/1.1 request, so the path reaches the server exactly as written (an HTTP client
/// library would normalise `..` away). Returns (status, head and body); status 0 when the
/// connection closed without an answer.
pub async fn raw(base: &str, method: &str, path: &str) -> (u16, String) {
    raw_with(base, method, path, b"").await
}

/// [`raw`] with more header lines (raw bytes, each line ending in CRLF), so a test can send
/// what no client library would: huge, non-UTF-8 or malformed headers.
pub async fn raw_with(base: &str, method: &str, path: &str, headers: &[u8]) -> (u16, String) {
    let addr = base.trim_start_matches("http://");
    let mut s = within(WAIT, "connect", tokio::net::TcpStream::connect(addr))
        .await
        .unwrap();
    let mut req =
        format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n").into_bytes();
    req.extend_from_slice(headers);
    req.extend_from_slice(b"Content-Length: 0\r\n\r\n");
    // A server may answer and close before it has read a huge request: that is an answer.
    let _ = s.write_all(&req).await;
    let mut out = Vec::new();
    // Event streams never end: read what comes first.
    let _ = tokio::time::timeout(Duration::from_secs(2), s.read_to_end(&mut out)).await;
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        // Closed without an answer (a server may refuse a malformed request so).
        .unwrap_or(0);
    (status, text)
}
