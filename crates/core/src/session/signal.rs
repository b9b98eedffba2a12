//! The contract's board signals are the session's own [`Event`]s: which events are signals,
//! under which member name, and their arguments as JSON by the contract's argument names —
//! the form `eboardctl watch --json`, the web bridge's `/api/events` and the relay's MQTT
//! `event` messages carry — both ways.
//!
//! There is no second signal type: the seven signal variants of [`Event`] carry exactly the
//! signal's arguments, named as `contract::SIGNALS` names them (a test checks every variant
//! against the table), so a signal's JSON is the event's own serde form with the member in
//! place of the journal's tag. On the bus the daemon writes these arguments in the table's
//! order and types (`daemon::dbus::signal_body`) and the client reads a body back into the
//! same value (`client::event::board_signal`).

use serde_json::{Map, Value};

use super::Event;
use crate::contract::{self, Signal, WireValue};
use crate::vocab::{GameResult, Player, Termination};

/// The key under which the journal's serde form names the variant.
const TAG: &str = "event";

impl Event {
    /// The member name of the contract signal this event is published as; `None` for the
    /// journal-only [`Event::Record`].
    pub const fn member(&self) -> Option<&'static str> {
        match self {
            Event::GameStarted { .. } => Some("GameStarted"),
            Event::MovePlayed { .. } => Some("MovePlayed"),
            Event::MoveRetracted { .. } => Some("MoveRetracted"),
            Event::IllegalPlacement { .. } => Some("IllegalPlacement"),
            Event::IllegalMoveCompleted { .. } => Some("IllegalMoveCompleted"),
            Event::FlagFell { .. } => Some("FlagFell"),
            Event::GameEnded { .. } => Some("GameEnded"),
            Event::Record(_) => None,
        }
    }

    /// The contract's entry for the signal this event is (`None`: not a signal).
    pub fn signal(&self) -> Option<&'static Signal> {
        contract::board_signal_named(self.member()?)
    }

    /// The signal's arguments in the contract's order and types, borrowed from the event:
    /// the body the daemon sends, built without going through JSON. `None` for the
    /// journal-only [`Event::Record`]. (A test checks them against [`Event::signal_args`] and
    /// the table's signatures for every signal.)
    pub fn signal_values(&self) -> Option<Vec<WireValue<'_>>> {
        use WireValue::{Text, U32, U64};
        Some(match self {
            Event::GameStarted { fen } => vec![Text(fen)],
            Event::MovePlayed {
                ply,
                san,
                uci,
                fen,
                white_ms,
                black_ms,
            } => vec![
                U32(*ply),
                Text(san),
                Text(uci),
                Text(fen),
                U64(*white_ms),
                U64(*black_ms),
            ],
            Event::MoveRetracted { ply, fen } => vec![U32(*ply), Text(fen)],
            Event::IllegalPlacement {
                player,
                description,
                placement,
            } => vec![Text(player.as_str()), Text(description), Text(placement)],
            Event::IllegalMoveCompleted {
                player,
                count,
                description,
            } => vec![Text(player.as_str()), U32(*count), Text(description)],
            Event::FlagFell { player } => vec![Text(player.as_str())],
            Event::GameEnded {
                result,
                termination,
            } => vec![Text(result.as_str()), Text(termination.as_str())],
            Event::Record(_) => return None,
        })
    }

    /// The member and the arguments by the contract's names, for a signal event.
    pub fn signal_args(&self) -> Option<(&'static str, Map<String, Value>)> {
        let member = self.member()?;
        let Ok(Value::Object(mut args)) = serde_json::to_value(self) else {
            return None;
        };
        args.remove(TAG);
        Some((member, args))
    }

    /// The signal `member` with these arguments (by the contract's names; others are
    /// ignored). `None` for a member that is no board signal, a missing argument, or one of
    /// the wrong type or outside the contract's words (a player that is not white or black):
    /// a misbehaving peer's signal is dropped, never guessed at.
    pub fn from_signal_args(member: &str, mut args: Map<String, Value>) -> Option<Event> {
        let signal = contract::board_signal_named(member)?;
        args.insert(TAG.into(), Value::from(journal_tag(signal.name)));
        let event: Event = serde_json::from_value(Value::Object(args)).ok()?;
        (event.member() == Some(signal.name)).then_some(event)
    }
}

/// The journal's tag of a member (`MovePlayed` → `move-played`): the `rename_all =
/// "kebab-case"` of [`Event`]'s serde form.
fn journal_tag(member: &str) -> String {
    let mut tag = String::with_capacity(member.len() + 4);
    for (i, c) in member.char_indices() {
        if c.is_ascii_uppercase() && i > 0 {
            tag.push('-');
        }
        tag.push(c.to_ascii_lowercase());
    }
    tag
}

/// One event of every signal variant, in the contract's order: the shells' tests check that
/// each of their renderings (D-Bus, the watch line, the clients) covers every signal.
pub fn every_signal() -> Vec<Event> {
    vec![
        Event::GameStarted { fen: "f0".into() },
        Event::MovePlayed {
            ply: 3,
            san: "Nf3".into(),
            uci: "g1f3".into(),
            fen: "f1".into(),
            white_ms: 1,
            black_ms: 2,
        },
        Event::MoveRetracted {
            ply: 2,
            fen: "f2".into(),
        },
        Event::IllegalPlacement {
            player: Player::White,
            description: "Ke1-e3".into(),
            placement: "p3".into(),
        },
        Event::IllegalMoveCompleted {
            player: Player::Black,
            count: 2,
            description: "Ra8-a1".into(),
        },
        Event::FlagFell {
            player: Player::Black,
        },
        Event::GameEnded {
            result: GameResult::Draw,
            termination: Termination::FlagFallDraw,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::RecordFact;
    use serde_json::json;

    #[test]
    fn every_contract_signal_is_one_variant_with_the_contract_argument_names() {
        let events = every_signal();
        let members: Vec<_> = events.iter().filter_map(Event::member).collect();
        let table: Vec<_> = contract::SIGNALS.iter().map(|s| s.name).collect();
        assert_eq!(members, table);
        for e in &events {
            let signal = e.signal().expect("a signal");
            let (member, args) = e.signal_args().expect("arguments");
            assert_eq!(member, signal.name);
            let mut names: Vec<&str> = args.keys().map(String::as_str).collect();
            let mut want: Vec<&str> = signal.args.iter().map(|(n, _)| *n).collect();
            names.sort_unstable();
            want.sort_unstable();
            assert_eq!(names, want, "{member}");
            assert_eq!(journal_tag(member), serde_json::to_value(e).unwrap()[TAG]);
        }
        let record = Event::Record(RecordFact::Comment { text: "x".into() });
        assert_eq!(record.member(), None);
        assert_eq!(record.signal_args(), None);
    }

    /// The values the daemon sends are the JSON arguments, in the table's order and types,
    /// for every signal and every word a signal carries.
    #[test]
    fn signal_values_are_the_arguments_in_the_table_order() {
        let mut events = every_signal();
        for player in Player::ALL {
            events.push(Event::FlagFell { player: *player });
        }
        for result in GameResult::ALL {
            for termination in Termination::ALL {
                events.push(Event::GameEnded {
                    result: *result,
                    termination: *termination,
                });
            }
        }
        for e in &events {
            let signal = e.signal().expect("a signal");
            let (_, args) = e.signal_args().expect("arguments");
            let values = e.signal_values().expect("values");
            assert_eq!(values.len(), signal.args.len(), "{}", signal.name);
            for ((name, signature), value) in signal.args.iter().zip(values) {
                assert_eq!(value.signature(), *signature, "{}.{name}", signal.name);
                let json = match value {
                    WireValue::Text(s) => json!(s),
                    WireValue::U32(n) => json!(n),
                    WireValue::U64(n) => json!(n),
                    other => panic!("{}.{name}: {other:?} is no signal argument", signal.name),
                };
                assert_eq!(args[*name], json, "{}.{name}", signal.name);
            }
        }
        let record = Event::Record(RecordFact::Comment { text: "x".into() });
        assert_eq!(record.signal_values(), None);
    }

    #[test]
    fn arguments_round_trip_and_keep_the_contract_words() {
        for e in every_signal() {
            let (member, args) = e.signal_args().unwrap();
            assert_eq!(Event::from_signal_args(member, args), Some(e));
        }
        let (_, args) = every_signal()[5].signal_args().unwrap();
        assert_eq!(Value::Object(args), json!({"player": "black"}));
    }

    #[test]
    fn foreign_or_malformed_arguments_give_nothing() {
        let args = |v: Value| v.as_object().unwrap().clone();
        // A member the contract does not have, and the journal-only variant.
        assert_eq!(Event::from_signal_args("SomethingNew", Map::new()), None);
        assert_eq!(
            Event::from_signal_args("Record", args(json!({"fact": "comment", "text": "x"}))),
            None
        );
        // A missing argument, a wrong type, a word outside the contract.
        assert_eq!(
            Event::from_signal_args("MoveRetracted", args(json!({"ply": 1}))),
            None
        );
        assert_eq!(
            Event::from_signal_args("MoveRetracted", args(json!({"ply": "1", "fen": "f"}))),
            None
        );
        assert_eq!(
            Event::from_signal_args("FlagFell", args(json!({"player": "purple"}))),
            None
        );
        // The member is the contract's, not the journal's tag.
        assert_eq!(
            Event::from_signal_args("flag-fell", args(json!({"player": "white"}))),
            None
        );
        // An extra argument a newer daemon might add is ignored.
        assert_eq!(
            Event::from_signal_args("FlagFell", args(json!({"player": "white", "x": 1}))),
            Some(Event::FlagFell {
                player: Player::White
            })
        );
    }
}
