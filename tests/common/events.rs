//! Records every signal of one board object as a client receives it, in order.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;
use zbus::{MatchRule, MessageStream, OwnedVariant};

use eboard_core::contract::{BOARD_INTERFACE, PROPERTIES_INTERFACE, board_path};
pub use eboard_core::session::Event;
use eboardd::client::event::board_signal;

use super::{WAIT, next, within};

/// What a client receives on a board's object, decoded by the client's own decoder.
#[derive(Debug, Clone, PartialEq)]
pub enum Ev {
    /// A board signal, as the daemon's event it was published from
    /// ([`eboardd::client::event::board_signal`]).
    Signal(Event),
    /// `PropertiesChanged`: the names of the changed properties, sorted.
    Changed(Vec<String>, HashMap<String, OwnedVariant>),
}

/// The signals of one board, recorded in the background.
pub struct Events {
    seen: Arc<Mutex<Vec<Ev>>>,
    notify: Arc<Notify>,
    cursor: usize,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Events {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Events {
    /// Subscribe (before triggering anything) to the board with object id `id`.
    pub async fn start(conn: &zbus::Connection, id: &str) -> Events {
        let rule = MatchRule::builder()
            .msg_type(zbus::message::Type::Signal)
            .path(board_path(id))
            .build()
            .unwrap();
        let mut stream = MessageStream::for_match_rule(rule, conn, None)
            .await
            .unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let notify = Arc::new(Notify::new());
        let task = {
            let (seen, notify) = (seen.clone(), notify.clone());
            tokio::spawn(async move {
                while let Some(Ok(msg)) = next(&mut stream).await {
                    if let Some(ev) = parse(&msg) {
                        seen.lock().unwrap().push(ev);
                        notify.notify_waiters();
                    }
                }
            })
        };
        Events {
            seen,
            notify,
            cursor: 0,
            task,
        }
    }

    /// Everything received so far.
    pub fn all(&self) -> Vec<Ev> {
        self.seen.lock().unwrap().clone()
    }

    /// The moves played so far (SAN), see [`sans_of`].
    pub fn sans(&self) -> Vec<String> {
        sans_of(&self.all())
    }

    /// Wait for the next event after the previous match that satisfies `pred`.
    pub async fn next_matching(&mut self, what: &str, pred: impl Fn(&Ev) -> bool) -> Ev {
        let seen = self.seen.clone();
        let notify = self.notify.clone();
        let start = self.cursor;
        let (index, ev) = within(WAIT, what, async {
            loop {
                let notified = notify.notified();
                {
                    let all = seen.lock().unwrap();
                    if let Some((i, ev)) = all.iter().enumerate().skip(start).find(|(_, e)| pred(e))
                    {
                        return (i, ev.clone());
                    }
                }
                notified.await;
            }
        })
        .await;
        self.cursor = index + 1;
        ev
    }

    /// Wait for the next signal `member` (`"GameEnded"`, …) after the previous match.
    pub async fn next_signal(&mut self, member: &str) -> Event {
        let ev = self
            .next_matching(
                member,
                |e| matches!(e, Ev::Signal(ev) if ev.member() == Some(member)),
            )
            .await;
        match ev {
            Ev::Signal(ev) => ev,
            Ev::Changed(..) => unreachable!("a property change is no signal"),
        }
    }

    /// Wait until `pred` holds for everything received so far (`pred` must not call back
    /// into `self`: it runs under the lock).
    pub async fn wait_until(&self, what: &str, pred: impl Fn(&[Ev]) -> bool) {
        let seen = self.seen.clone();
        let notify = self.notify.clone();
        let wait = async {
            loop {
                let notified = notify.notified();
                if pred(&seen.lock().unwrap()) {
                    return;
                }
                notified.await;
            }
        };
        if tokio::time::timeout(WAIT, wait).await.is_err() {
            panic!(
                "timed out after {WAIT:?} waiting for {what}; signals so far:\n{}",
                self.describe()
            );
        }
    }

    /// The received signals other than `PropertiesChanged`, one per line.
    pub fn describe(&self) -> String {
        self.all()
            .iter()
            .filter(|e| !matches!(e, Ev::Changed(..)))
            .map(|e| format!("  {e:?}"))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The moves of the current game (SAN) after these events: `MovePlayed` in order, minus
/// retracted ones, restarting at each `GameStarted`.
pub fn sans_of(events: &[Ev]) -> Vec<String> {
    // Recording may start mid-game (after a restart): plies count from the first one seen.
    let mut base: Option<usize> = None;
    let mut out: Vec<String> = Vec::new();
    for ev in events {
        match ev {
            Ev::Signal(Event::MovePlayed { ply, san, .. }) => {
                let ply = *ply as usize;
                let base = *base.get_or_insert(ply.saturating_sub(1));
                out.truncate(ply.saturating_sub(1 + base));
                out.push(san.clone());
            }
            Ev::Signal(Event::MoveRetracted { ply, .. }) => {
                if let Some(base) = base {
                    out.truncate((*ply as usize).saturating_sub(1 + base));
                }
            }
            Ev::Signal(Event::GameStarted { .. }) => {
                out.clear();
                base = Some(0);
            }
            _ => {}
        }
    }
    out
}

/// A `PropertiesChanged` or a board signal; anything else (or a malformed body) is `None`.
fn parse(msg: &zbus::Message) -> Option<Ev> {
    let header = msg.header();
    let iface = header.interface()?.as_str();
    let member = header.member()?.as_str();
    let body = msg.body();
    match iface {
        PROPERTIES_INTERFACE if member == "PropertiesChanged" => {
            let (_, changed, _): (String, HashMap<String, OwnedVariant>, Vec<String>) =
                body.deserialize().ok()?;
            let mut names: Vec<String> = changed.keys().cloned().collect();
            names.sort();
            Some(Ev::Changed(names, changed))
        }
        BOARD_INTERFACE => board_signal(member, &body).map(Ev::Signal),
        _ => None,
    }
}

/// A file read after every signal of one board, as a client polling it on each change could
/// have seen it; stops when dropped.
pub struct FileReadings {
    /// Each text read, in order (a missing file is no reading).
    pub texts: Arc<Mutex<Vec<String>>>,
    reader: tokio::task::JoinHandle<()>,
}

impl FileReadings {
    /// Reads `file` after every signal of board `id` from now on.
    pub fn start(conn: &zbus::Connection, id: &str, file: std::path::PathBuf) -> FileReadings {
        let texts = Arc::new(Mutex::new(Vec::<String>::new()));
        let (out, conn, id) = (texts.clone(), conn.clone(), id.to_owned());
        let reader = tokio::spawn(async move {
            let watch = Events::start(&conn, &id).await;
            let mut count = 0;
            loop {
                watch
                    .wait_until("another signal", |all| all.len() > count)
                    .await;
                count = watch.all().len();
                if let Ok(text) = std::fs::read_to_string(&file) {
                    out.lock().unwrap().push(text);
                }
            }
        });
        FileReadings { texts, reader }
    }

    /// Stops reading.
    pub fn stop(&self) {
        self.reader.abort();
    }

    /// The texts read so far.
    pub fn texts(&self) -> Vec<String> {
        self.texts.lock().unwrap().clone()
    }
}

impl Drop for FileReadings {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// The accusations among these events: `IllegalPlacement` and `IllegalMoveCompleted` (what a
/// gap, a move in progress or line noise must never become).
pub fn accusations(events: &[Ev]) -> Vec<Ev> {
    events
        .iter()
        .filter(|e| {
            matches!(
                e,
                Ev::Signal(Event::IllegalPlacement { .. })
                    | Ev::Signal(Event::IllegalMoveCompleted { .. })
            )
        })
        .cloned()
        .collect()
}

impl Events {
    /// Panic, listing the signals received, if anybody was accused.
    pub fn assert_nobody_accused(&self) {
        assert!(accusations(&self.all()).is_empty(), "{}", self.describe());
    }
}
