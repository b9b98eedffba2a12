//! The local bus as a source of [`HallUpdate`]s: [`watch_bus`].
//!
//! It subscribes before it reads the boards (so nothing falls between the two), drops the
//! signals the daemon sent before its `GetManagedObjects` reply (so nothing goes back in
//! time), and follows eboardd going away and coming back (name owner changes) and the bus
//! itself going away, reconnecting with backoff. Decoding the contract's signals is shared with
//! `eboardctl watch` ([`crate::client::event`]).

use std::collections::HashMap;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;
use zbus::message::{Message, Type};
use zbus::{MatchRule, MessageStream, OwnedVariant};

use crate::client::board_id;
use crate::client::bus::{BusChoice, connect};
use crate::client::error::CtlError;
use crate::client::event::{WatchEvent, decode};
use crate::client::hall::{HallUpdate, Props};
use crate::client::props::dict_to_json;
use eboard_core::contract::{
    BOARD_INTERFACE, BUS_NAME, DBUS_NAME, MANAGER_PATH, OBJECT_MANAGER_INTERFACE, is_not_running,
};

/// The longest wait between two attempts to reach the bus.
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// The first wait after a failed attempt.
const MIN_BACKOFF: Duration = Duration::from_millis(100);
/// How long the daemon may take to answer `GetManagedObjects` before it is taken as gone.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Follows the boards on `bus` and sends every change to `tx`: a `Snapshot` on connect and
/// after every reconnect, then every update in the order the bus delivered them; `SourceDown`
/// whenever the bus or the daemon goes away. Retries with backoff and never gives up; returns
/// only when the receiver of `tx` is gone (nobody is listening any more).
pub async fn watch_bus(bus: BusChoice, tx: mpsc::Sender<HallUpdate>) {
    let mut follower = Follower {
        tx,
        up: None,
        backoff: MIN_BACKOFF,
    };
    loop {
        match follower.follow(&bus).await {
            Stop::ReceiverGone => return,
            Stop::Down(reason) => {
                if follower.down(reason).await.is_err() {
                    return;
                }
            }
        }
        // While the source is down nothing is sent, so a receiver that went away would not be
        // noticed by a send: watch for it here.
        tokio::select! {
            _ = tokio::time::sleep(follower.backoff) => {}
            _ = follower.tx.closed() => return,
        }
        follower.backoff = (follower.backoff * 2).min(MAX_BACKOFF);
    }
}

/// Why one connection's follow ended.
enum Stop {
    /// The bus is gone or unreachable (the reason, for people).
    Down(String),
    /// Nobody reads the updates any more.
    ReceiverGone,
}

struct Gone;

impl From<Gone> for Stop {
    fn from(_: Gone) -> Self {
        Stop::ReceiverGone
    }
}

struct Follower {
    tx: mpsc::Sender<HallUpdate>,
    /// Whether the last state sent was "up" (None before anything was sent).
    up: Option<bool>,
    backoff: Duration,
}

impl Follower {
    async fn send(&self, update: HallUpdate) -> Result<(), Gone> {
        self.tx.send(update).await.map_err(|_| Gone)
    }

    /// Sends `SourceDown` once per outage.
    async fn down(&mut self, reason: String) -> Result<(), Gone> {
        if self.up != Some(false) {
            self.up = Some(false);
            self.send(HallUpdate::SourceDown { reason }).await?;
        }
        Ok(())
    }

    /// One connection to the bus, until it breaks.
    async fn follow(&mut self, bus: &BusChoice) -> Stop {
        let conn = match connect(bus).await {
            Ok(c) => c,
            Err(e) => return Stop::Down(e.to_string()),
        };
        let (mut signals, mut owners) = match subscribe(&conn).await {
            Ok(s) => s,
            Err(e) => return Stop::Down(format!("subscribing on the {bus}: {e}")),
        };
        let lost = || Stop::Down(format!("the connection to the {bus} was lost"));
        loop {
            // Read the boards; when the daemon is not running, wait for its name to get an owner.
            let stale = match snapshot(&conn, bus).await {
                Ok((boards, stale)) => {
                    self.up = Some(true);
                    self.backoff = MIN_BACKOFF;
                    if let Err(g) = self.send(HallUpdate::Snapshot(boards)).await {
                        return g.into();
                    }
                    stale
                }
                Err(SnapshotError::NotRunning(reason)) => {
                    if let Err(g) = self.down(reason).await {
                        return g.into();
                    }
                    loop {
                        match next_message(&mut owners).await {
                            Some(Ok(msg)) if decode(&msg) == Some(WatchEvent::DaemonStarted) => {
                                break;
                            }
                            Some(Ok(_)) => {}
                            _ => return lost(),
                        }
                    }
                    continue;
                }
                Err(SnapshotError::Failed(reason)) => return Stop::Down(reason),
            };
            // Forward until the daemon goes away (then read again) or the bus does (then return).
            loop {
                let msg = tokio::select! {
                    m = next_message(&mut signals) => m,
                    m = next_message(&mut owners) => m,
                };
                let msg = match msg {
                    Some(Ok(msg)) => msg,
                    _ => return lost(),
                };
                if is_stale(&msg, &stale) {
                    continue;
                }
                match to_update(&msg) {
                    Decoded::Update(update) => {
                        if let Err(g) = self.send(update).await {
                            return g.into();
                        }
                    }
                    Decoded::DaemonStopped => {
                        let reason = format!("eboardd stopped (nobody owns {BUS_NAME})");
                        if let Err(g) = self.down(reason).await {
                            return g.into();
                        }
                    }
                    // A new owner: the boards are read again (they may all be new).
                    Decoded::DaemonStarted => break,
                    Decoded::Nothing => {}
                }
            }
        }
    }
}

/// The two subscriptions: everything under the manager's object tree from the daemon, and
/// the daemon's name changing owner.
async fn subscribe(conn: &zbus::Connection) -> zbus::Result<(MessageStream, MessageStream)> {
    let rule = MatchRule::builder()
        .msg_type(Type::Signal)
        .sender(BUS_NAME)
        .path_namespace(MANAGER_PATH)
        .build()?;
    let owner_rule = MatchRule::builder()
        .msg_type(Type::Signal)
        .sender(DBUS_NAME)
        .interface(DBUS_NAME)
        .member("NameOwnerChanged")
        .arg(0, BUS_NAME)
        .build()?;
    let signals = MessageStream::for_match_rule(rule, conn, None).await?;
    let owners = MessageStream::for_match_rule(owner_rule, conn, None).await?;
    Ok((signals, owners))
}

enum SnapshotError {
    /// Nobody owns the daemon's name.
    NotRunning(String),
    /// Anything else: the connection is not usable.
    Failed(String),
}

/// Which sender's messages, below which serial, predate a snapshot.
pub type Stale = Option<(String, u32)>;

/// `GetManagedObjects`: every board with its properties, and where the answer stands among
/// the daemon's messages.
async fn snapshot(
    conn: &zbus::Connection,
    bus: &BusChoice,
) -> Result<(Vec<(String, Props)>, Stale), SnapshotError> {
    let call = conn.call_method(
        Some(BUS_NAME),
        MANAGER_PATH,
        Some(OBJECT_MANAGER_INTERFACE),
        "GetManagedObjects",
        &(),
    );
    let reply = match tokio::time::timeout(CALL_TIMEOUT, call).await {
        Err(_) => {
            return Err(SnapshotError::Failed(format!(
                "eboardd did not answer GetManagedObjects on the {bus} within {CALL_TIMEOUT:?}"
            )));
        }
        Ok(Err(e)) => {
            let not_running = crate::client::error::dbus_error_parts(&e)
                .is_some_and(|(name, _)| is_not_running(&name));
            let text = CtlError::from_call(e, &bus.to_string()).to_string();
            return Err(if not_running {
                SnapshotError::NotRunning(text)
            } else {
                SnapshotError::Failed(text)
            });
        }
        Ok(Ok(reply)) => reply,
    };
    let (objects, stale) = managed_boards(&reply).map_err(|e| {
        SnapshotError::Failed(format!(
            "the daemon's GetManagedObjects reply on the {bus} is not a{{oa{{sa{{sv}}}}}}: {e}"
        ))
    })?;
    let mut boards: Vec<(String, Props)> = objects
        .into_iter()
        .map(|(path, props)| (board_id(&path).to_owned(), props))
        .collect();
    boards.sort_by(|a, b| a.0.cmp(&b.0));
    Ok((boards, stale))
}

/// A `GetManagedObjects` reply read once for every client (the bridges here, eboardctl's
/// `list`/`status`): each board object's path with its properties as JSON, and which sender's
/// messages, below which serial, the reply already reflects.
pub fn managed_boards(reply: &Message) -> zbus::Result<(Vec<(String, Props)>, Stale)> {
    type Managed = HashMap<zbus::OwnedObjectPath, HashMap<String, HashMap<String, OwnedVariant>>>;
    let objects: Managed = reply.body().deserialize()?;
    let boards = objects
        .iter()
        .filter_map(|(path, ifaces)| {
            let props = ifaces.get(BOARD_INTERFACE)?;
            Some((path.to_string(), dict_to_json(props)))
        })
        .collect();
    let header = reply.header();
    let stale = header
        .sender()
        .map(|s| (s.to_string(), header.primary().serial_num().get()));
    Ok((boards, stale))
}

/// A message from the snapshot's sender with a lower serial was sent before the snapshot, so
/// the snapshot already shows it.
fn is_stale(msg: &Message, stale: &Stale) -> bool {
    let header = msg.header();
    match (stale, header.sender()) {
        (Some((sender, serial)), Some(from)) => {
            from.as_str() == sender && header.primary().serial_num().get() < *serial
        }
        _ => false,
    }
}

/// What one message means for the hall.
#[derive(Debug, PartialEq)]
enum Decoded {
    Update(HallUpdate),
    DaemonStopped,
    DaemonStarted,
    Nothing,
}

/// Decodes a message. `InterfacesAdded` is read here, keeping every property generic; the
/// rest is the decoder `eboardctl watch` uses.
fn to_update(msg: &Message) -> Decoded {
    let header = msg.header();
    if header.interface().map(|i| i.as_str()) == Some(OBJECT_MANAGER_INTERFACE)
        && header.member().map(|m| m.as_str()) == Some("InterfacesAdded")
    {
        type Added = HashMap<String, HashMap<String, OwnedVariant>>;
        let Ok((object, ifaces)) = msg.body().deserialize::<(zbus::OwnedObjectPath, Added)>()
        else {
            return Decoded::Nothing;
        };
        return match ifaces.get(BOARD_INTERFACE) {
            Some(props) => Decoded::Update(HallUpdate::Added {
                board: board_id(object.as_str()).to_owned(),
                props: dict_to_json(props),
            }),
            None => Decoded::Nothing,
        };
    }
    match decode(msg) {
        Some(event) => from_watch_event(event),
        None => Decoded::Nothing,
    }
}

/// The watch decoder's event as a hall update.
fn from_watch_event(event: WatchEvent) -> Decoded {
    match event {
        WatchEvent::Board { path, props } => {
            // Only InterfacesAdded gives this, and it is read above; keep it correct anyway.
            let props = match serde_json::to_value(&*props) {
                Ok(Value::Object(map)) => map,
                _ => Props::new(),
            };
            Decoded::Update(HallUpdate::Added {
                board: board_id(&path).to_owned(),
                props,
            })
        }
        WatchEvent::Removed { path } => Decoded::Update(HallUpdate::Removed {
            board: board_id(&path).to_owned(),
        }),
        WatchEvent::Changed { path, changed } => Decoded::Update(HallUpdate::Changed {
            board: board_id(&path).to_owned(),
            changed,
        }),
        WatchEvent::Signal { path, signal } => match signal.signal_args() {
            // The arguments under the contract's names: what the bridges publish.
            Some((member, args)) => Decoded::Update(HallUpdate::Signal {
                board: board_id(&path).to_owned(),
                member: member.to_owned(),
                args,
            }),
            None => Decoded::Nothing,
        },
        WatchEvent::DaemonStopped => Decoded::DaemonStopped,
        WatchEvent::DaemonStarted => Decoded::DaemonStarted,
    }
}

/// The next item of a message stream.
async fn next_message(stream: &mut MessageStream) -> Option<zbus::Result<Message>> {
    use futures_core::Stream;
    std::future::poll_fn(|cx| std::pin::Pin::new(&mut *stream).poll_next(cx)).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use eboard_core::session::Event;
    use serde_json::json;

    #[test]
    fn signals_keep_the_contract_argument_names() {
        let decoded = from_watch_event(WatchEvent::Signal {
            path: "/org/eboardd/Bridge1/Board/b_1".into(),
            signal: Event::MovePlayed {
                ply: 3,
                san: "Nf3".into(),
                uci: "g1f3".into(),
                fen: "fen".into(),
                white_ms: 1,
                black_ms: 2,
            },
        });
        let expected = json!({"ply": 3, "san": "Nf3", "uci": "g1f3", "fen": "fen",
                              "white_ms": 1, "black_ms": 2});
        assert_eq!(
            decoded,
            Decoded::Update(HallUpdate::Signal {
                board: "b_1".into(),
                member: "MovePlayed".into(),
                args: expected.as_object().unwrap().clone(),
            })
        );
    }

    /// What the web bridge's `/api/events` and the relay's MQTT `event` carry for every
    /// signal: the member and the arguments by the contract's names, with the contract's words.
    #[test]
    fn every_signal_is_published_by_member_and_contract_argument_names() {
        let want = [
            ("GameStarted", json!({"fen": "f0"})),
            (
                "MovePlayed",
                json!({"ply": 3, "san": "Nf3", "uci": "g1f3", "fen": "f1",
                       "white_ms": 1, "black_ms": 2}),
            ),
            ("MoveRetracted", json!({"ply": 2, "fen": "f2"})),
            (
                "IllegalPlacement",
                json!({"player": "white", "description": "Ke1-e3", "placement": "p3"}),
            ),
            (
                "IllegalMoveCompleted",
                json!({"player": "black", "count": 2, "description": "Ra8-a1"}),
            ),
            ("FlagFell", json!({"player": "black"})),
            (
                "GameEnded",
                json!({"result": "1/2-1/2", "termination": "flag-fall-draw"}),
            ),
        ];
        let events = eboard_core::session::signal::every_signal();
        assert_eq!(events.len(), want.len());
        for (signal, (member, args)) in events.into_iter().zip(want) {
            let decoded = from_watch_event(WatchEvent::Signal {
                path: "/org/eboardd/Bridge1/Board/b_1".into(),
                signal,
            });
            assert_eq!(
                decoded,
                Decoded::Update(HallUpdate::Signal {
                    board: "b_1".into(),
                    member: member.into(),
                    args: args.as_object().unwrap().clone(),
                })
            );
        }
    }

    #[test]
    fn removals_and_changes_name_the_board_id() {
        let removed = from_watch_event(WatchEvent::Removed {
            path: "/org/eboardd/Bridge1/Board/x".into(),
        });
        assert_eq!(
            removed,
            Decoded::Update(HallUpdate::Removed { board: "x".into() })
        );
        assert_eq!(
            from_watch_event(WatchEvent::DaemonStopped),
            Decoded::DaemonStopped
        );
    }
}
