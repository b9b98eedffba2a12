//! What `watch` reacts to, decoded from D-Bus messages into plain values: the contract's board
//! signals, property changes, boards appearing and disappearing, and the daemon coming and
//! going. Decoding is a pure function of a message, so it is tested with hand-built messages.

use std::collections::HashMap;

use serde_json::{Map, Value};
use zbus::message::{Body, Message, Type};
use zbus::{OwnedVariant, Structure};

use crate::client::props::{BoardProps, dict_to_json, variant_to_json};
use eboard_core::contract::{
    BOARD_INTERFACE, BUS_NAME, DBUS_NAME, OBJECT_MANAGER_INTERFACE, PROPERTIES_INTERFACE,
    board_signal_named,
};
use eboard_core::session::Event;

/// Everything `watch` reacts to.
#[derive(Debug, Clone, PartialEq)]
pub enum WatchEvent {
    /// A board with all its properties: at start, on `InterfacesAdded`, after a daemon restart.
    Board {
        path: String,
        props: Box<BoardProps>,
    },
    /// A board went away (`InterfacesRemoved`).
    Removed { path: String },
    /// `PropertiesChanged` on a board: the changed properties as JSON.
    Changed {
        path: String,
        changed: Map<String, Value>,
    },
    /// A board signal, as the daemon's own event (one of its signal variants).
    Signal { path: String, signal: Event },
    /// Nobody owns the daemon's name any more.
    DaemonStopped,
    /// The daemon's name has an owner again (boards are fetched anew).
    DaemonStarted,
}

impl WatchEvent {
    /// The board object the event is about, if any.
    pub fn path(&self) -> Option<&str> {
        match self {
            WatchEvent::Board { path, .. }
            | WatchEvent::Removed { path }
            | WatchEvent::Changed { path, .. }
            | WatchEvent::Signal { path, .. } => Some(path),
            WatchEvent::DaemonStopped | WatchEvent::DaemonStarted => None,
        }
    }
}

/// Decodes one message into an event. Messages that are not about boards (another interface
/// on the same object, a malformed body from a misbehaving peer) give `None`: a watcher must
/// not stop because of them.
pub fn decode(msg: &Message) -> Option<WatchEvent> {
    if msg.message_type() != Type::Signal {
        return None;
    }
    let header = msg.header();
    let interface = header.interface()?.as_str();
    let member = header.member()?.as_str();
    let path = header.path()?.as_str().to_owned();
    let body = msg.body();
    match (interface, member) {
        (DBUS_NAME, "NameOwnerChanged") => {
            let (name, _old, new): (String, String, String) = body.deserialize().ok()?;
            if name != BUS_NAME {
                return None;
            }
            Some(if new.is_empty() {
                WatchEvent::DaemonStopped
            } else {
                WatchEvent::DaemonStarted
            })
        }
        (PROPERTIES_INTERFACE, "PropertiesChanged") => {
            let (iface, changed, invalidated): (
                String,
                HashMap<String, OwnedVariant>,
                Vec<String>,
            ) = body.deserialize().ok()?;
            if iface != BOARD_INTERFACE {
                return None;
            }
            // The contract announces values with the change; an invalidation without one
            // carries nothing to show, so it is dropped rather than guessed at.
            let _ = invalidated;
            Some(WatchEvent::Changed {
                path,
                changed: dict_to_json(&changed),
            })
        }
        (OBJECT_MANAGER_INTERFACE, "InterfacesAdded") => {
            type Added = HashMap<String, HashMap<String, OwnedVariant>>;
            let (object, ifaces): (zbus::OwnedObjectPath, Added) = body.deserialize().ok()?;
            let props = ifaces.get(BOARD_INTERFACE)?;
            Some(WatchEvent::Board {
                path: object.to_string(),
                props: Box::new(BoardProps::from_map(&dict_to_json(props))),
            })
        }
        (OBJECT_MANAGER_INTERFACE, "InterfacesRemoved") => {
            let (object, ifaces): (zbus::OwnedObjectPath, Vec<String>) = body.deserialize().ok()?;
            ifaces
                .iter()
                .any(|i| i == BOARD_INTERFACE)
                .then(|| WatchEvent::Removed {
                    path: object.to_string(),
                })
        }
        (BOARD_INTERFACE, _) => Some(WatchEvent::Signal {
            path,
            signal: board_signal(member, &body)?,
        }),
        _ => None,
    }
}

/// The board signal `member` of `org.eboardd.Bridge1.Board` carried by `body`, as the event
/// the daemon published it from. `None` for a member the contract does not have, a body whose
/// types are not the contract's signature, or words that are not the contract's (a player
/// that is neither white nor black): a malformed signal is dropped, not guessed at.
///
/// Nothing here is written per signal: the contract's table gives the argument types (checked
/// against the body) and names, and `session::Event::from_signal_args` reads the arguments
/// by those names — the same way a signal relayed as JSON over MQTT is read.
pub fn board_signal(member: &str, body: &Body) -> Option<Event> {
    let signal = board_signal_named(member)?;
    let fields: Structure<'_> = body.deserialize().ok()?;
    let fields = fields.fields();
    let types_match = fields.len() == signal.args.len()
        && fields
            .iter()
            .zip(signal.args)
            .all(|(value, (_, signature))| value.value_signature().to_string() == *signature);
    if !types_match {
        return None;
    }
    let args: Map<String, Value> = signal
        .args
        .iter()
        .zip(fields)
        .map(|((name, _), value)| ((*name).to_owned(), variant_to_json(value)))
        .collect();
    Event::from_signal_args(member, args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use zbus::Variant;

    const P: &str = "/org/eboardd/Bridge1/Board/board_1";

    fn signal<B>(path: &str, iface: &str, member: &str, body: &B) -> Message
    where
        B: serde::Serialize + zbus::DynamicType,
    {
        Message::signal(path, iface, member)
            .build(body)
            .expect("signal builds")
    }

    #[test]
    fn board_signals_decode_with_their_arguments() {
        let m = signal(
            P,
            BOARD_INTERFACE,
            "MovePlayed",
            &(1u32, "e4", "e2e4", "fen", 60_000u64, 59_000u64),
        );
        assert_eq!(
            decode(&m),
            Some(WatchEvent::Signal {
                path: P.into(),
                signal: Event::MovePlayed {
                    ply: 1,
                    san: "e4".into(),
                    uci: "e2e4".into(),
                    fen: "fen".into(),
                    white_ms: 60_000,
                    black_ms: 59_000
                }
            })
        );
        let m = signal(
            P,
            BOARD_INTERFACE,
            "IllegalMoveCompleted",
            &("black", 2u32, "Ke8-e6"),
        );
        assert!(matches!(
            decode(&m),
            Some(WatchEvent::Signal {
                signal: Event::IllegalMoveCompleted { count: 2, .. },
                ..
            })
        ));
        let m = signal(P, BOARD_INTERFACE, "FlagFell", &("white",));
        assert!(matches!(
            decode(&m),
            Some(WatchEvent::Signal {
                signal: Event::FlagFell { .. },
                ..
            })
        ));
    }

    /// Every signal, built with the contract's signature, decodes into the event the daemon
    /// publishes it from.
    #[test]
    fn every_board_signal_decodes_into_the_daemons_event() {
        let b = BOARD_INTERFACE;
        let bodies = [
            signal(P, b, "GameStarted", &("f0",)),
            signal(P, b, "MovePlayed", &(3u32, "Nf3", "g1f3", "f1", 1u64, 2u64)),
            signal(P, b, "MoveRetracted", &(2u32, "f2")),
            signal(P, b, "IllegalPlacement", &("white", "Ke1-e3", "p3")),
            signal(P, b, "IllegalMoveCompleted", &("black", 2u32, "Ra8-a1")),
            signal(P, b, "FlagFell", &("black",)),
            signal(P, b, "GameEnded", &("1/2-1/2", "flag-fall-draw")),
        ];
        let decoded: Vec<Option<WatchEvent>> = bodies.iter().map(decode).collect();
        let want: Vec<Option<WatchEvent>> = eboard_core::session::signal::every_signal()
            .into_iter()
            .map(|signal| {
                Some(WatchEvent::Signal {
                    path: P.into(),
                    signal,
                })
            })
            .collect();
        assert_eq!(decoded, want);
        // The full range of the contract's integer types survives.
        let m = signal(P, b, "MovePlayed", &(u32::MAX, "", "", "", u64::MAX, 0u64));
        assert!(matches!(
            decode(&m),
            Some(WatchEvent::Signal {
                signal: Event::MovePlayed {
                    ply: u32::MAX,
                    white_ms: u64::MAX,
                    ..
                },
                ..
            })
        ));
        // The daemon's encoder writes exactly these bytes with this signature (a one-argument
        // body is the argument, not a structure around it).
        for (m, event) in bodies
            .iter()
            .zip(eboard_core::session::signal::every_signal())
        {
            let member = event.member().unwrap_or_default();
            let body = crate::daemon::dbus::SignalBody::of(&event).expect("a body");
            let ours = Message::signal(P, b, member)
                .build(&body)
                .expect("signal builds");
            assert_eq!(ours.body().signature(), m.body().signature(), "{member}");
            assert_eq!(
                ours.body().data().bytes(),
                m.body().data().bytes(),
                "{member}"
            );
        }
        // The bodies above have the contract's signatures.
        for m in &bodies {
            let member = m
                .header()
                .member()
                .map(|n| n.to_string())
                .unwrap_or_default();
            let table =
                eboard_core::contract::board_signal_named(&member).expect("a contract signal");
            let args: String = table.args.iter().map(|(_, t)| *t).collect();
            // zbus writes a body of several arguments as one structure.
            let signature = if table.args.len() == 1 {
                args
            } else {
                format!("({args})")
            };
            assert_eq!(m.body().signature().to_string(), signature, "{member}");
        }
    }

    #[test]
    fn malformed_or_foreign_messages_are_ignored() {
        // Wrong argument types for the contract's signature.
        let m = signal(P, BOARD_INTERFACE, "MovePlayed", &("e4",));
        assert_eq!(decode(&m), None);
        let m = signal(P, BOARD_INTERFACE, "GameStarted", &(1u32,));
        assert_eq!(decode(&m), None);
        let m = signal(P, BOARD_INTERFACE, "FlagFell", &("white", "extra"));
        assert_eq!(decode(&m), None);
        // A number of the other width (`t` where the contract says `u`), a missing argument.
        let m = signal(P, BOARD_INTERFACE, "MoveRetracted", &(2u64, "f"));
        assert_eq!(decode(&m), None);
        let m = signal(P, BOARD_INTERFACE, "MoveRetracted", &(2u32,));
        assert_eq!(decode(&m), None);
        let m = signal(P, BOARD_INTERFACE, "GameStarted", &());
        assert_eq!(decode(&m), None);
        // The right types, but words outside the contract.
        let m = signal(P, BOARD_INTERFACE, "FlagFell", &("purple",));
        assert_eq!(decode(&m), None);
        let m = signal(P, BOARD_INTERFACE, "GameEnded", &("1-0", ""));
        assert_eq!(decode(&m), None);
        let m = signal(P, BOARD_INTERFACE, "IllegalPlacement", &("", "d", "p"));
        assert_eq!(decode(&m), None);
        let m = signal(P, BOARD_INTERFACE, "NoSuchSignal", &("x",));
        assert_eq!(decode(&m), None);
        let m = signal(P, "org.example.Other", "MovePlayed", &("x",));
        assert_eq!(decode(&m), None);
    }

    #[test]
    fn property_changes_carry_their_values() {
        let mut changed: HashMap<&str, Variant<'_>> = HashMap::new();
        changed.insert("WhiteTimeMs", Variant::from(12_000u64));
        changed.insert("ClockRunning", Variant::from("black"));
        let m = signal(
            P,
            "org.freedesktop.DBus.Properties",
            "PropertiesChanged",
            &(BOARD_INTERFACE, changed, Vec::<String>::new()),
        );
        match decode(&m) {
            Some(WatchEvent::Changed { path, changed }) => {
                assert_eq!(path, P);
                assert_eq!(changed["WhiteTimeMs"], json!(12_000));
                assert_eq!(changed["ClockRunning"], json!("black"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn boards_appear_and_disappear() {
        let mut props: HashMap<&str, Variant<'_>> = HashMap::new();
        props.insert("Name", Variant::from("board-1"));
        let mut ifaces = HashMap::new();
        ifaces.insert(BOARD_INTERFACE, props);
        let path = zbus::ObjectPath::try_from(P).expect("path");
        let m = signal(
            "/org/eboardd/Bridge1",
            "org.freedesktop.DBus.ObjectManager",
            "InterfacesAdded",
            &(path.clone(), ifaces),
        );
        match decode(&m) {
            Some(WatchEvent::Board { path, props }) => {
                assert_eq!(path, P);
                assert_eq!(props.name, "board-1");
            }
            other => panic!("{other:?}"),
        }
        let m = signal(
            "/org/eboardd/Bridge1",
            "org.freedesktop.DBus.ObjectManager",
            "InterfacesRemoved",
            &(path, vec![BOARD_INTERFACE]),
        );
        assert_eq!(decode(&m), Some(WatchEvent::Removed { path: P.into() }));
    }

    #[test]
    fn daemon_owner_changes() {
        let cases = [
            ((BUS_NAME, ":1.4", ""), Some(WatchEvent::DaemonStopped)),
            ((BUS_NAME, "", ":1.9"), Some(WatchEvent::DaemonStarted)),
            (("org.other", "", ":1.9"), None),
        ];
        for (owners, want) in cases {
            let m = signal(
                "/org/freedesktop/DBus",
                DBUS_NAME,
                "NameOwnerChanged",
                &owners,
            );
            assert_eq!(decode(&m), want, "{owners:?}");
        }
    }
}
