//! `eboardctl broadcast` (contract section 9): this rig's games of a round pushed straight to
//! a lichess broadcast round, as the Lichess Broadcaster app does from a round folder, without
//! the folder or the app.
//!
//! [`round`] picks the round's games from the hall and writes the body; [`pacing`] decides
//! when a push may go; [`answer`] reads lichess's answers; [`core`] puts them together (pure,
//! time passed in); [`state`] is the small file through which `status` and `watch` show how
//! the pushes fare; [`token`] reads the token without ever showing it. This module is the
//! shell: the bus source ([`crate::client::watch_bus`]), one HTTP push at a time (reqwest),
//! the clock, the terminal and the state file.

pub mod answer;
pub mod core;
pub mod pacing;
pub mod round;
pub mod state;
pub mod token;

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::bridge::broadcast::answer::Answer;
use crate::bridge::broadcast::core::{Broadcaster, Notice, Report};
use crate::bridge::broadcast::round::{MAX_GAMES, Selection};
use crate::bridge::broadcast::state::StateFile;
use crate::bridge::broadcast::token::Token;
use crate::client::HallUpdate;
use crate::client::bus::BusChoice;
use crate::client::error::CtlError;

/// How long one push may take before it counts as a network failure.
const PUSH_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a stop waits for a push on its way.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// What the broadcaster is told to do.
#[derive(Debug, Clone)]
pub struct BroadcastOptions {
    pub bus: BusChoice,
    /// lichess, without a trailing `/` (`https://lichess.org`).
    pub url: String,
    /// The lichess broadcast round id.
    pub round_id: String,
    pub token: Token,
    pub selection: Selection,
}

impl BroadcastOptions {
    /// `POST` here.
    pub fn endpoint(&self) -> String {
        format!("{}/api/broadcast/round/{}/push", self.url, self.round_id)
    }
}

/// Writes a line for the operator on stderr; under systemd with the journal's priority
/// prefix, so refusals stand out in `journalctl -p err`.
fn say(notice: &Notice) {
    let (priority, text) = match notice {
        Notice::Info(t) => (6, t),
        Notice::Warning(t) => (4, t),
        Notice::Error(t) => (3, t),
    };
    if std::env::var_os("JOURNAL_STREAM").is_some() {
        eprintln!("<{priority}>{text}");
    } else {
        eprintln!("eboardctl broadcast: {text}");
    }
}

/// Runs the broadcaster until `stop` completes (SIGINT/SIGTERM in the command). Returns an
/// error for what retrying cannot fix: more than [`MAX_GAMES`] games at start (a usage
/// error), or lichess refusing the token or the round.
pub async fn run(
    opts: BroadcastOptions,
    stop: impl std::future::Future<Output = ()>,
) -> Result<(), CtlError> {
    let http = reqwest::Client::builder()
        .timeout(PUSH_TIMEOUT)
        // A redirect is lichess's answer or nobody's: a POST followed elsewhere (reqwest
        // would turn it into a GET on 301-303) could be taken as pushed (see `answer`).
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!(
            "eboardd/",
            env!("CARGO_PKG_VERSION"),
            " (eboardctl broadcast)"
        ))
        .build()
        .map_err(|e| CtlError::Other(format!("cannot set up the HTTP client: {e}")))?;
    let (tx, mut rx) = mpsc::channel::<HallUpdate>(4096);
    let source = tokio::spawn(crate::client::watch_bus(opts.bus.clone(), tx));
    let mut shell = Shell {
        core: Broadcaster::new(opts.selection.clone()),
        state_path: state::file_for(&opts.round_id, |k| std::env::var(k).ok()),
        written: None,
        warned_state: false,
    };
    say(&Notice::Info(format!(
        "pushing this rig's games from the {} to {}",
        opts.bus,
        opts.endpoint()
    )));
    let started = Instant::now();
    let now = || started.elapsed().as_millis() as u64;
    let mut in_flight: Option<JoinHandle<Answer>> = None;
    let mut first = true;
    tokio::pin!(stop);
    let result = loop {
        shell.show(&opts);
        if let Some(why) = shell.core.stopped() {
            break Err(CtlError::Other(why.to_string()));
        }
        if let Some(body) = shell.core.poll_push(now()) {
            in_flight = Some(tokio::spawn(push(http.clone(), opts.clone(), body)));
        }
        let wake = shell.core.wake_at();
        tokio::select! {
            update = rx.recv() => match update {
                Some(u) => {
                    if first && let HallUpdate::Snapshot(_) = u {
                        first = false;
                        shell.core.on_update(&u);
                        let n = shell.core.round().len();
                        if n > MAX_GAMES {
                            break Err(CtlError::Usage(format!(
                                "the round has {n} games on this rig; a lichess broadcast round \
                                 takes at most {MAX_GAMES}: choose with --boards N-M"
                            )));
                        }
                    } else {
                        shell.core.on_update(&u);
                    }
                }
                None => break Err(CtlError::Other("the bus source stopped".into())),
            },
            answer = async { in_flight.as_mut().expect("guarded").await }, if in_flight.is_some() => {
                in_flight = None;
                let answer = answer.unwrap_or_else(|e| {
                    answer::unreachable(&opts.url, &format!("the push failed: {e}"))
                });
                shell.core.on_answer(now(), answer);
            }
            _ = tokio::time::sleep_until(started + Duration::from_millis(wake.unwrap_or(0))),
                if wake.is_some() => {}
            _ = &mut stop => {
                if let Some(push) = in_flight.take()
                    && let Ok(Ok(answer)) = tokio::time::timeout(STOP_GRACE, push).await
                {
                    shell.core.on_answer(now(), answer);
                }
                shell.show(&opts);
                say(&Notice::Info("stopped".into()));
                break Ok(());
            }
        }
    };
    source.abort();
    // Nobody is pushing any more: `status` stops showing this broadcaster.
    let _ = std::fs::remove_file(&shell.state_path);
    if let Err(e) = &result {
        say(&Notice::Error(e.to_string()));
    }
    result
}

/// The shell's own state around the core.
struct Shell {
    core: Broadcaster,
    state_path: PathBuf,
    /// The report last written to the state file.
    written: Option<Report>,
    warned_state: bool,
}

impl Shell {
    /// Says the core's notices and writes the state file when the report changed.
    fn show(&mut self, opts: &BroadcastOptions) {
        for notice in self.core.take_notices() {
            say(&notice);
        }
        let report = self.core.report();
        if self.written.as_ref() == Some(report) {
            return;
        }
        let file = StateFile {
            round_id: opts.round_id.clone(),
            url: opts.url.clone(),
            pid: std::process::id(),
            updated_ms: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0),
            report: report.clone(),
        };
        match state::write(&self.state_path, &file) {
            Ok(()) => self.written = Some(file.report),
            Err(e) if !self.warned_state => {
                self.warned_state = true;
                say(&Notice::Warning(format!(
                    "cannot write {} ({e}): `eboardctl status` will not show the broadcast",
                    self.state_path.display()
                )));
            }
            Err(_) => {}
        }
    }
}

/// One push: the body to lichess, its answer read.
async fn push(http: reqwest::Client, opts: BroadcastOptions, body: String) -> Answer {
    let sent = http
        .post(opts.endpoint())
        .header(reqwest::header::CONTENT_TYPE, "text/plain")
        .bearer_auth(opts.token.expose())
        .body(body)
        .send()
        .await;
    match sent {
        Ok(response) => {
            let status = response.status().as_u16();
            let header = |name| {
                response
                    .headers()
                    .get(name)
                    .map(|v: &reqwest::header::HeaderValue| {
                        opts.token.redact(&String::from_utf8_lossy(v.as_bytes()))
                    })
            };
            let retry_after = header(reqwest::header::RETRY_AFTER);
            let location = header(reqwest::header::LOCATION);
            let text = opts.token.redact(&bounded_text(response).await);
            answer::read(
                status,
                retry_after.as_deref(),
                location.as_deref(),
                &text,
                &opts.round_id,
            )
        }
        Err(e) => answer::unreachable(&opts.url, &describe(&e)),
    }
}

/// The most of an answer's body read: lichess's answer to a round's push is a few KB, and a
/// server (or a proxy) that sends more must not fill the memory.
const MAX_ANSWER: usize = 1 << 20;

/// The answer's body as text, cut at [`MAX_ANSWER`] bytes (then not JSON, so only its status
/// counts).
async fn bounded_text(mut response: reqwest::Response) -> String {
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        let room = MAX_ANSWER - body.len();
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() == MAX_ANSWER {
            break;
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

/// A reqwest failure in a few words, with its causes (the URL is the caller's to say).
fn describe(e: &reqwest::Error) -> String {
    use std::error::Error;
    let mut text = if e.is_timeout() {
        "no answer in time".to_string()
    } else if e.is_connect() {
        "no connection".to_string()
    } else {
        "the request failed".to_string()
    };
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(&format!(": {c}"));
        cause = c.source();
    }
    text
}
