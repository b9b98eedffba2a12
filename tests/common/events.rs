//! Records every signal of one board object as a client receives it, in order.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;
use zbus::{MatchRule, MessageStream, OwnedVariant};

use super::{WAIT, next, within};

/// A received board signal.
#[derive(Debug, Clone, PartialEq)]
pub enum Ev {
    GameStarted(String),
    MovePlayed {
        ply: u32,
        san: String,
        uci: String,
        fen: String,
        white_ms: u64,
        black_ms: u64,
    },
    MoveRetracted(u32, String),
    IllegalPlacement {
        player: String,
        description: String,
    },
    IllegalMoveCompleted {
        player: String,
        count: u32,
        description: String,
    },
    FlagFell(String),
    GameEnded(String, String),
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
            .path(format!("/org/eboardd/Bridge1/Board/{id}"))
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
            Ev::MovePlayed { ply, san, .. } => {
                let ply = *ply as usize;
                let base = *base.get_or_insert(ply.saturating_sub(1));
                out.truncate(ply.saturating_sub(1 + base));
                out.push(san.clone());
            }
            Ev::MoveRetracted(ply, _) => {
                if let Some(base) = base {
                    out.truncate((*ply as usize).saturating_sub(1 + base));
                }
            }
            Ev::GameStarted(_) => {
                out.clear();
                base = Some(0);
            }
            _ => {}
        }
    }
    out
}

fn parse(msg: &zbus::Message) -> Option<Ev> {
    let header = msg.header();
    let iface = header.interface()?.to_string();
    let member = header.member()?.to_string();
    let body = msg.body();
    if iface == "org.freedesktop.DBus.Properties" && member == "PropertiesChanged" {
        let (_, changed, _): (String, HashMap<String, OwnedVariant>, Vec<String>) =
            body.deserialize().ok()?;
        let mut names: Vec<String> = changed.keys().cloned().collect();
        names.sort();
        return Some(Ev::Changed(names, changed));
    }
    if iface != "org.eboardd.Bridge1.Board" {
        return None;
    }
    Some(match member.as_str() {
        "GameStarted" => Ev::GameStarted(body.deserialize().ok()?),
        "MovePlayed" => {
            let (ply, san, uci, fen, white_ms, black_ms) = body.deserialize().ok()?;
            Ev::MovePlayed {
                ply,
                san,
                uci,
                fen,
                white_ms,
                black_ms,
            }
        }
        "MoveRetracted" => {
            let (ply, fen) = body.deserialize().ok()?;
            Ev::MoveRetracted(ply, fen)
        }
        "IllegalPlacement" => {
            let (player, description, _placement): (String, String, String) =
                body.deserialize().ok()?;
            Ev::IllegalPlacement {
                player,
                description,
            }
        }
        "IllegalMoveCompleted" => {
            let (player, count, description) = body.deserialize().ok()?;
            Ev::IllegalMoveCompleted {
                player,
                count,
                description,
            }
        }
        "FlagFell" => Ev::FlagFell(body.deserialize().ok()?),
        "GameEnded" => {
            let (r, t) = body.deserialize().ok()?;
            Ev::GameEnded(r, t)
        }
        _ => return None,
    })
}
