//! Harness of the `eboardctl broadcast` tests: a stand-in of lichess's push endpoint on a
//! loopback port (axum) that records every request and answers as the test scripts it, and
//! the broadcaster run as a child process with its own runtime folder.
//!
//! A test crate using this module declares `mod common;` and `mod ctl_support;` beside it.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use eboard_sim::pgn::{PgnGame, parse_games};
use tokio::process::{Child, Command};
use tokio::time::Instant;

use crate::common::{die_with_parent, within};

/// The token the tests push with; it must never show in the broadcaster's output.
pub const TOKEN: &str = "lip_Sh0uldNeverBePrinted42";

/// One request the stand-in got.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: Method,
    pub path: String,
    pub content_type: String,
    pub authorization: String,
    pub body: String,
    pub at: Instant,
    /// The HTTP status it was answered with.
    pub answered: u16,
}

impl Request {
    /// The body's games (pgn-reader, through the simulator's reader).
    pub fn games(&self) -> Vec<PgnGame> {
        parse_games(&self.body)
    }
}

/// A scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// This status, `Retry-After` when given, and a JSON `{"error": …}` body.
    Status(u16, Option<&'static str>),
    /// This status and, as a proxy might, every request header echoed in the error text,
    /// with a terminal escape sequence after them.
    Echo(u16),
    /// This status with this body as it is (a captive portal's page, say).
    Body(u16, &'static str),
    /// This redirect status to `Location:` [`Lichess::ELSEWHERE`] on this stand-in, where
    /// any request is answered 200 with a well-formed answer (so a push that followed it
    /// would look taken) and recorded.
    Redirect(u16),
}

#[derive(Default)]
struct Shared {
    requests: Vec<Request>,
    script: VecDeque<Reply>,
    /// When set: the game at this index of each body is refused with this text.
    refuse: Option<(usize, String)>,
}

/// The stand-in of `POST /api/broadcast/round/{id}/push`.
#[derive(Clone)]
pub struct Lichess {
    shared: Arc<Mutex<Shared>>,
    changed: Arc<tokio::sync::Notify>,
    pub url: String,
}

impl Lichess {
    /// Serves on a free loopback port until the test ends.
    pub async fn start() -> Lichess {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let me = Lichess {
            shared: Arc::default(),
            changed: Arc::default(),
            url,
        };
        let state = me.clone();
        // Every path and method lands here, so a wrong one is recorded (and refused with
        // 404), not lost.
        let app = axum::Router::new().fallback(
            move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
                let state = state.clone();
                async move { state.answer(method, uri, headers, body) }
            },
        );
        tokio::spawn(async move { axum::serve(listener, app).await });
        me
    }

    fn answer(&self, method: Method, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
        let header = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string()
        };
        let mut shared = self.shared.lock().unwrap();
        let body = String::from_utf8_lossy(&body).into_owned();
        let is_push = method == Method::POST
            && uri.path().starts_with("/api/broadcast/round/")
            && uri.path().ends_with("/push");
        let elsewhere = uri.path() == Self::ELSEWHERE;
        // Only a push takes its scripted reply.
        let scripted = if is_push {
            shared.script.pop_front()
        } else {
            None
        };
        let (status, response) = match (is_push, scripted) {
            (false, _) if elsewhere => (200, per_game(&body, None)),
            (false, _) => (404, error_response(404, None, "no such endpoint")),
            (true, Some(Reply::Status(code, retry))) => {
                (code, error_response(code, retry, "scripted refusal"))
            }
            (true, Some(Reply::Echo(code))) => {
                let echoed: Vec<String> = headers
                    .iter()
                    .map(|(k, v)| format!("{k}: {}", v.to_str().unwrap_or("?")))
                    .collect();
                let text = format!("proxy: {}\n\u{1b}]0;owned\u{7}\u{1b}[2J", echoed.join("\n"));
                (code, error_response(code, None, &text))
            }
            (true, Some(Reply::Body(code, text))) => (
                code,
                (StatusCode::from_u16(code).unwrap(), text).into_response(),
            ),
            (true, Some(Reply::Redirect(code))) => (
                code,
                (
                    StatusCode::from_u16(code).unwrap(),
                    [("location", format!("{}{}", self.url, Self::ELSEWHERE))],
                    "",
                )
                    .into_response(),
            ),
            (true, None) => (200, per_game(&body, shared.refuse.as_ref())),
        };
        shared.requests.push(Request {
            method,
            path: uri.path().to_string(),
            content_type: header("content-type"),
            authorization: header("authorization"),
            body,
            at: Instant::now(),
            answered: status,
        });
        drop(shared);
        self.changed.notify_waiters();
        response
    }

    /// Where [`Reply::Redirect`] points.
    pub const ELSEWHERE: &'static str = "/elsewhere";

    /// Forgets the replies not used yet (pushes are answered per game again).
    pub fn clear_script(&self) {
        self.shared.lock().unwrap().script.clear();
    }

    /// Answers the next pushes so, in turn (then per game again).
    pub fn script(&self, replies: &[Reply]) {
        self.shared
            .lock()
            .unwrap()
            .script
            .extend(replies.iter().cloned());
    }

    /// Refuses the game at `index` of every body with `text` (`None`: takes them all).
    pub fn refuse_game(&self, refuse: Option<(usize, &str)>) {
        self.shared.lock().unwrap().refuse = refuse.map(|(i, t)| (i, t.to_string()));
    }

    pub fn requests(&self) -> Vec<Request> {
        self.shared.lock().unwrap().requests.clone()
    }

    /// Waits until some request satisfies `pred`; returns it.
    pub async fn wait_for(
        &self,
        what: &str,
        limit: Duration,
        pred: impl Fn(&Request) -> bool,
    ) -> Request {
        within(limit, what, async {
            loop {
                let notified = self.changed.notified();
                if let Some(r) = self.requests().into_iter().find(|r| pred(r)) {
                    return r;
                }
                notified.await;
            }
        })
        .await
    }
}

fn error_response(code: u16, retry: Option<&str>, text: &str) -> Response {
    let status = StatusCode::from_u16(code).unwrap();
    let body = serde_json::json!({ "error": text }).to_string();
    match retry {
        Some(r) => (status, [("retry-after", r.to_string())], body).into_response(),
        None => (status, body).into_response(),
    }
}

/// lichess's answer to a body: per game its tags and moves, or an error.
fn per_game(body: &str, refuse: Option<&(usize, String)>) -> Response {
    let games: Vec<serde_json::Value> = parse_games(body)
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let tags: serde_json::Map<String, serde_json::Value> = g
                .tags
                .iter()
                .map(|(k, v)| (k.clone(), serde_json::Value::from(v.clone())))
                .collect();
            match refuse {
                Some((at, text)) if *at == i => serde_json::json!({"tags": tags, "error": text}),
                _ => serde_json::json!({"tags": tags, "moves": g.sans.len()}),
            }
        })
        .collect();
    (
        StatusCode::OK,
        serde_json::json!({ "games": games }).to_string(),
    )
        .into_response()
}

/// `eboardctl broadcast` as a child: its stdout and stderr go to files in `dir`, its runtime
/// folder is `dir/run`.
pub struct Broadcaster {
    pub child: Child,
    pub out: PathBuf,
    pub err: PathBuf,
}

/// The environment the broadcaster and the status readers share.
pub fn runtime_env(dir: &Path) -> Vec<(String, String)> {
    vec![(
        "XDG_RUNTIME_DIR".into(),
        dir.join("run").display().to_string(),
    )]
}

impl Broadcaster {
    pub fn spawn(address: &str, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Broadcaster {
        let n = crate::common::unique();
        let out = dir.join(format!("broadcast-{n}.out"));
        let err = dir.join(format!("broadcast-{n}.err"));
        let mut cmd = Command::new(crate::ctl_support::eboardctl());
        cmd.arg("--bus")
            .arg(address)
            .arg("broadcast")
            .args(args)
            .env_remove("LICHESS_TOKEN")
            .env_remove("RUNTIME_DIRECTORY")
            .env_remove("JOURNAL_STREAM")
            .envs(runtime_env(dir))
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out).unwrap())
            .stderr(std::fs::File::create(&err).unwrap())
            .kill_on_drop(true);
        die_with_parent(&mut cmd);
        let child = cmd.spawn().expect("spawn eboardctl broadcast");
        Broadcaster { child, out, err }
    }

    /// What it printed so far, stdout then stderr.
    pub fn output(&self) -> String {
        let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
        format!("{}{}", read(&self.out), read(&self.err))
    }

    /// Waits for it to exit; its exit code.
    pub async fn exit_code(&mut self, limit: Duration) -> i32 {
        let status = within(limit, "eboardctl broadcast to exit", self.child.wait())
            .await
            .unwrap();
        crate::common::code(status)
    }
}

/// Writes the token to `dir/token` with `mode`.
pub fn token_file(dir: &Path, mode: u32) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("token");
    std::fs::write(&path, format!("{TOKEN}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    path
}

/// Runs `eboardctl --bus <address> args…` with the runtime folder of `dir` to completion.
pub async fn ctl_in(dir: &Path, address: &str, args: &[&str]) -> crate::ctl_support::Output {
    crate::ctl_support::ctl_with(address, args, |cmd| {
        cmd.env_remove("LICHESS_TOKEN").envs(runtime_env(dir));
    })
    .await
}

/// `eboardctl --bus <address> watch args…` (one line per event: stdout is a pipe) with the
/// runtime folder of `dir`; waits for a line holding `want` and returns it.
pub async fn watch_until(dir: &Path, address: &str, args: &[&str], want: &str) -> String {
    let args = [&["watch"], args].concat();
    let mut watch = crate::ctl_support::Watch::spawn_with(address, &args, |cmd| {
        cmd.envs(runtime_env(dir));
    });
    let what = format!("watch to say {want:?}");
    watch
        .until_within(Duration::from_secs(60), &what, |line| line.contains(want))
        .await
}
