//! The bodies of the messages a board publishes, written straight from the contract's values
//! ([`WireValue`], borrowed from the snapshot or the event) into the message: no tree of
//! `Variant`s, no copy of a string, no hash map in between.
//!
//! A `PropertiesChanged` is the most frequent message a board sends (clock times every
//! second, squares on every lift and put, Fen/Moves/Pgn on every move). Built the generic way
//! (a `Variant` per value, `Moves` an array of every SAN of the game, collected into a
//! `HashMap` for `fdo::Properties::properties_changed`) it cost more of the daemon's CPU than
//! anything else the board does. The types here serialise the same D-Bus values through serde,
//! each with its signature known statically from its [`WireValue`] kind. The unit tests check
//! that every body decodes to what the generic builders made.
//!
//! Every string goes through [`dbus_text`] here, at the very last step, whatever its source:
//! a NUL never reaches the bus (see `dbus.rs`, "D-Bus's rules for strings").

use serde::ser::{
    Serialize, SerializeMap, SerializeSeq, SerializeStruct, SerializeTuple, Serializer,
};
use zbus::names::{InterfaceName, MemberName};
use zbus::wire::{DynamicType, Signature, Type};

use eboard_core::contract::{Claim, WireValue};
use eboard_core::session::Event;

use super::dbus_text;

/// `org.freedesktop.DBus.Properties`, the interface of `PropertiesChanged`.
pub const PROPERTIES_INTERFACE: InterfaceName<'static> =
    InterfaceName::from_static_str_unchecked("org.freedesktop.DBus.Properties");

/// The member of the standard signal announcing changed properties.
pub const PROPERTIES_CHANGED: MemberName<'static> =
    MemberName::from_static_str_unchecked("PropertiesChanged");

/// The body of `org.freedesktop.DBus.Properties.PropertiesChanged`, `(s a{sv} as)`: the
/// interface, the changed properties with their new values (in the order given: the contract
/// table's), and no invalidated property (every new value is sent).
pub struct PropertiesChangedBody<'a> {
    pub interface: &'a str,
    pub changed: &'a [(&'static str, WireValue<'a>)],
}

impl Type for PropertiesChangedBody<'_> {
    const SIGNATURE: &'static Signature = <(
        &str,
        std::collections::HashMap<&str, zbus::Variant<'_>>,
        Vec<&str>,
    )>::SIGNATURE;
}

impl Serialize for PropertiesChangedBody<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut body = serializer.serialize_tuple(3)?;
        body.serialize_element(&*dbus_text(self.interface))?;
        body.serialize_element(&ChangedDict(self.changed))?;
        body.serialize_element::<[&str]>(&[])?;
        body.end()
    }
}

/// The `a{sv}` of changed properties.
struct ChangedDict<'a>(&'a [(&'static str, WireValue<'a>)]);

impl Serialize for ChangedDict<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut dict = serializer.serialize_map(Some(self.0.len()))?;
        for (name, value) in self.0 {
            dict.serialize_entry(name, &AsVariant(*value))?;
        }
        dict.end()
    }
}

/// The arguments of the signal an event is published as, in the contract's order and types.
pub struct SignalBody<'a> {
    args: Vec<WireValue<'a>>,
}

impl<'a> SignalBody<'a> {
    /// The body of the signal `event` is: its arguments taken straight from the event
    /// (`session::Event::signal_values`), each of the D-Bus type the contract's table gives
    /// it. `None` for an event that is not a signal, or (never sent) whose arguments do not
    /// have the table's number and types.
    pub fn of(event: &'a Event) -> Option<Self> {
        let signal = event.signal()?;
        let args = event.signal_values()?;
        let typed = args.len() == signal.args.len()
            && (signal.args.iter())
                .zip(&args)
                .all(|((_, signature), value)| value.signature() == *signature);
        typed.then_some(SignalBody { args })
    }
}

impl SignalBody<'_> {
    /// Whether the body, serialised as it is sent and read back as a client reads it, holds
    /// only D-Bus strings ([`super::holds_only_dbus_text`]): the check the fuzz target makes.
    pub fn sends_only_dbus_text(&self) -> zbus::Result<bool> {
        let msg = zbus::Message::signal("/", "org.eboardd.Check", "Check").build(self)?;
        let body = msg.body();
        let read: zbus::Structure<'_> = body.deserialize()?;
        Ok(read.fields().iter().all(super::holds_only_dbus_text))
    }
}

impl DynamicType for SignalBody<'_> {
    fn signature(&self) -> Signature {
        Signature::structure(
            self.args
                .iter()
                .map(|v| wire_signature(v).clone())
                .collect::<Vec<_>>(),
        )
    }
}

impl Serialize for SignalBody<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut body = serializer.serialize_tuple(self.args.len())?;
        for value in &self.args {
            body.serialize_element(&Plain(*value))?;
        }
        body.end()
    }
}

/// The static D-Bus signature of a value of `value`'s kind (what [`WireValue::signature`]
/// spells as text), taken from the Rust type each kind is sent as.
fn wire_signature(value: &WireValue<'_>) -> &'static Signature {
    match value {
        WireValue::Text(_) => <&str>::SIGNATURE,
        WireValue::U32(_) => u32::SIGNATURE,
        WireValue::U64(_) => u64::SIGNATURE,
        WireValue::Bool(_) => bool::SIGNATURE,
        WireValue::Texts(_) => <Vec<&str>>::SIGNATURE,
        WireValue::Claims(_) => <Vec<(&str, &str, &str)>>::SIGNATURE,
        WireValue::Counts(_) => <(u32, u32)>::SIGNATURE,
        WireValue::Battery(_) => <(i32, bool)>::SIGNATURE,
    }
}

/// A value inside a variant (`v`): its signature, then the value (the form zbus's own
/// `as_variant::Serialize` writes).
struct AsVariant<'a>(WireValue<'a>);

impl Serialize for AsVariant<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut variant = serializer.serialize_struct("Variant", 2)?;
        variant.serialize_field("signature", wire_signature(&self.0))?;
        variant.serialize_field("value", &Plain(self.0))?;
        variant.end()
    }
}

/// A value as its own D-Bus type, every string made sendable.
struct Plain<'a>(WireValue<'a>);

impl Serialize for Plain<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            WireValue::Text(s) => serializer.serialize_str(&dbus_text(s)),
            WireValue::U32(n) => serializer.serialize_u32(n),
            WireValue::U64(n) => serializer.serialize_u64(n),
            WireValue::Bool(b) => serializer.serialize_bool(b),
            WireValue::Texts(list) => {
                let mut array = serializer.serialize_seq(Some(list.len()))?;
                for s in list {
                    array.serialize_element(&*dbus_text(s))?;
                }
                array.end()
            }
            WireValue::Claims(claims) => {
                let mut array = serializer.serialize_seq(Some(claims.len()))?;
                for claim in claims {
                    array.serialize_element(&ClaimTuple(claim))?;
                }
                array.end()
            }
            WireValue::Counts(counts) => <(u32, u32)>::from(counts).serialize(serializer),
            WireValue::Battery(battery) => <(i32, bool)>::from(battery).serialize(serializer),
        }
    }
}

/// A claim as the contract's `(sss)`: player, kind, detail.
struct ClaimTuple<'a>(&'a Claim);

impl Serialize for ClaimTuple<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Claim {
            player,
            kind,
            detail,
        } = self.0;
        (&*dbus_text(player), &*dbus_text(kind), &*dbus_text(detail)).serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;
    use std::collections::HashMap;

    use eboard_core::contract::{BOARD_INTERFACE, BOARD_PROPERTIES, BoardProps, board_path};
    use eboard_core::session::signal::every_signal;
    use eboard_core::session::{Event, RecordFact};
    use eboard_core::vocab::{GameResult, Player, Termination};
    use serde_json::{Value as Json, json};
    use zbus::{Message, OwnedVariant, Structure, Variant};

    use super::*;
    use crate::daemon::dbus::{changed_properties, property_value, signal_body};

    /// What a client reads from a `PropertiesChanged`.
    type Decoded = (String, HashMap<String, OwnedVariant>, Vec<String>);

    fn path() -> zbus::ObjectPath<'static> {
        zbus::ObjectPath::try_from(board_path("b")).unwrap()
    }

    /// The message the daemon sends now.
    fn sent(old: &BoardProps, new: &BoardProps) -> Message {
        let changed = old.changes(new);
        let body = PropertiesChangedBody {
            interface: BOARD_INTERFACE,
            changed: &changed,
        };
        Message::signal(path(), PROPERTIES_INTERFACE, PROPERTIES_CHANGED)
            .build(&body)
            .unwrap()
    }

    /// The message the daemon sent before: `Variant`s in a `HashMap`, the tuple zbus's
    /// `fdo::Properties::properties_changed` emits.
    fn reference(old: &BoardProps, new: &BoardProps) -> Message {
        let map: HashMap<&str, Variant<'_>> = changed_properties(old, new).into_iter().collect();
        let iface = InterfaceName::from_static_str_unchecked(BOARD_INTERFACE);
        let body = (iface, map, Cow::<[&str]>::Borrowed(&[]));
        Message::signal(
            path(),
            "org.freedesktop.DBus.Properties",
            "PropertiesChanged",
        )
        .build(&body)
        .unwrap()
    }

    /// Values and properties from a seeded generator, so every run checks the same pairs.
    struct Rng(rand::rngs::SmallRng);
    impl Rng {
        fn seeded(seed: u64) -> Rng {
            Rng(rand::SeedableRng::seed_from_u64(seed))
        }
        fn below(&mut self, n: u64) -> u64 {
            rand::Rng::random_range(&mut self.0, 0..n)
        }
        fn text(&mut self) -> String {
            const TEXTS: [&str; 7] = [
                "",
                "e4",
                "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1",
                "♔ Ölçü – 名人戦 🏁",
                "[Event \"x\"]\n\n1. e4 e5 *",
                "threefold-repetition",
                "a\tb\\c\"d",
            ];
            TEXTS[self.below(TEXTS.len() as u64) as usize].to_owned()
        }
        /// A value of the D-Bus type `signature`, in the JSON form `BoardProps::apply` reads.
        fn json(&mut self, signature: &str) -> Json {
            match signature {
                "s" => json!(self.text()),
                "u" => Json::from([0, 1, 7, u32::MAX][self.below(4) as usize]),
                "t" => Json::from([0, 1, 299_999, u64::MAX][self.below(4) as usize]),
                "b" => json!(self.below(2) == 1),
                "as" => {
                    // Empty, short, or a long game (up to 300 plies).
                    let len = [0, 1, 3, 300][self.below(4) as usize];
                    Json::from((0..len).map(|_| self.text()).collect::<Vec<_>>())
                }
                "a(sss)" => {
                    let len = self.below(3);
                    let claims: Vec<Json> = (0..len)
                        .map(|_| json!([self.text(), self.text(), self.text()]))
                        .collect();
                    Json::from(claims)
                }
                "(uu)" => json!([self.below(5), u32::MAX - self.below(2) as u32]),
                "(ib)" => {
                    let percent = [-1, 0, 42, 100][self.below(4) as usize];
                    json!([percent, self.below(2) == 1])
                }
                other => panic!("no generator for the property type {other}"),
            }
        }
        /// Properties where each one is changed from `base` with probability `1/odds`.
        fn props(&mut self, base: &BoardProps, odds: u64) -> BoardProps {
            let mut props = base.clone();
            for p in BOARD_PROPERTIES {
                if self.below(odds) == 0 {
                    let value = self.json(p.signature);
                    assert!(props.apply(p.name, &value), "{} = {value}", p.name);
                }
            }
            props
        }
    }

    /// For many pairs of properties (every property type, long and empty lists, unicode, the
    /// extreme numbers, one change or all of them), the new body says exactly what the
    /// `Variant`/`HashMap` one said; a single change is the same bytes; the dict keeps the
    /// table's order.
    #[test]
    fn properties_changed_carries_what_the_variant_map_carried() {
        let mut rng = Rng::seeded(0x9e37_79b9_7f4a_7c15);
        let mut old = BoardProps::default();
        let mut compared = [0usize; 3];
        for round in 0..600 {
            let new = rng.props(&old, [1, 2, 6, 30][round % 4]);
            let (ours, theirs) = (sent(&old, &new), reference(&old, &new));
            assert_eq!(ours.body().signature(), theirs.body().signature());
            assert_eq!(ours.body().signature().to_string(), "(sa{sv}as)");
            let ours_read: Decoded = ours.body().deserialize().unwrap();
            let theirs_read: Decoded = theirs.body().deserialize().unwrap();
            assert_eq!(ours_read, theirs_read, "round {round}");
            // Independently of the old builder: each changed property with its own value.
            let changed = old.changes(&new);
            assert_eq!(ours_read.0, BOARD_INTERFACE);
            assert_eq!(ours_read.1.len(), changed.len());
            assert!(ours_read.2.is_empty());
            for (name, _) in &changed {
                let want = property_value(&new, name).unwrap().try_to_owned().unwrap();
                assert_eq!(ours_read.1[*name], want, "{name}");
            }
            if changed.len() <= 1 {
                assert_eq!(ours.body().data().bytes(), theirs.body().data().bytes());
            }
            compared[changed.len().min(2)] += 1;
            old = new;
        }
        assert!(compared.iter().all(|&n| n > 20), "{compared:?}");
    }

    /// The dict's entries are written in the table's order (a `HashMap` had none).
    #[test]
    fn changed_properties_are_written_in_the_table_order() {
        let new = BoardProps {
            connected: true,
            moves: vec!["e4".into(), "e5".into()],
            white_time_ms: 5,
            illegal_moves: (1, 2).into(),
            ..Default::default()
        };
        let msg = sent(&BoardProps::default(), &new);
        let body = msg.body();
        let bytes = body.data().bytes();
        // Where each key is: a D-Bus string is its length, its bytes and a NUL.
        let at = |name: &str| {
            let mut key = (name.len() as u32).to_le_bytes().to_vec();
            key.extend_from_slice(name.as_bytes());
            key.push(0);
            bytes.windows(key.len()).position(|w| w == key).unwrap()
        };
        let mut names = ["IllegalMoves", "WhiteTimeMs", "Moves", "Connected"];
        names.sort_by_key(|n| at(n));
        let table: Vec<&str> = BOARD_PROPERTIES
            .iter()
            .map(|p| p.name)
            .filter(|n| ["Connected", "Moves", "WhiteTimeMs", "IllegalMoves"].contains(n))
            .collect();
        assert_eq!(names.to_vec(), table);
    }

    /// A NUL that got this far (the snapshot is cleaned before, see `sendable`) still does not
    /// reach the bus: it is sent as U+FFFD.
    #[test]
    fn a_nul_is_never_written() {
        let new = BoardProps {
            fen: "8/8\u{0}".into(),
            moves: vec!["e4\u{0}".into()],
            claims: vec![("white".into(), "\u{0}".into(), String::new()).into()],
            ..Default::default()
        };
        let read: Decoded = sent(&BoardProps::default(), &new)
            .body()
            .deserialize()
            .unwrap();
        let text = format!("{read:?}");
        assert!(!text.contains('\0') && !text.contains("\\0"), "{text}");
        assert_eq!(
            read.1["Fen"],
            OwnedVariant::from(zbus::Str::from("8/8\u{FFFD}"))
        );
    }

    /// The signals of `every_signal` with other texts: unicode, empty, a NUL; extreme numbers.
    fn signals() -> Vec<Event> {
        let mut events = every_signal();
        for text in ["", "♔ Ölçü – 名人戦", "Nf3\u{0}+"] {
            events.extend([
                Event::GameStarted { fen: text.into() },
                Event::MovePlayed {
                    ply: u32::MAX,
                    san: text.into(),
                    uci: "e7e8q".into(),
                    fen: text.into(),
                    white_ms: u64::MAX,
                    black_ms: 0,
                },
                Event::MoveRetracted {
                    ply: 0,
                    fen: text.into(),
                },
                Event::IllegalPlacement {
                    player: Player::Black,
                    description: text.into(),
                    placement: text.into(),
                },
                Event::IllegalMoveCompleted {
                    player: Player::White,
                    count: 7,
                    description: text.into(),
                },
                Event::FlagFell {
                    player: Player::White,
                },
                Event::GameEnded {
                    result: GameResult::WhiteWins,
                    termination: Termination::Checkmate,
                },
            ]);
        }
        events
    }

    /// Every signal of the contract's table, with every argument type: the new body is the
    /// same bytes of the same signature as the `Structure` of owned values, and decodes to it.
    #[test]
    fn signal_bodies_are_the_bytes_of_the_structure_bodies() {
        let mut members = std::collections::BTreeSet::new();
        for event in signals() {
            let member = event.member().unwrap();
            members.insert(member);
            let ours = SignalBody::of(&event).unwrap_or_else(|| panic!("{member}: no body"));
            let theirs = signal_body(&event).unwrap();
            let ours = Message::signal(path(), BOARD_INTERFACE, member)
                .build(&ours)
                .unwrap();
            let theirs = Message::signal(path(), BOARD_INTERFACE, member)
                .build(&theirs)
                .unwrap();
            assert_eq!(
                ours.body().signature(),
                theirs.body().signature(),
                "{member}"
            );
            assert_eq!(
                ours.body().data().bytes(),
                theirs.body().data().bytes(),
                "{member}"
            );
            let (ours, theirs) = (ours.body(), theirs.body());
            let read: Structure<'_> = ours.deserialize().unwrap();
            let want: Structure<'_> = theirs.deserialize().unwrap();
            assert_eq!(read, want, "{member}");
            assert!(read.fields().iter().all(super::super::holds_only_dbus_text));
            let body = SignalBody::of(&event).unwrap();
            assert!(body.sends_only_dbus_text().unwrap(), "{member}");
        }
        let table: std::collections::BTreeSet<_> = eboard_core::contract::SIGNALS
            .iter()
            .filter(|s| s.interface == BOARD_INTERFACE)
            .map(|s| s.name)
            .collect();
        assert_eq!(members, table);
        let record = Event::Record(RecordFact::Comment { text: "x".into() });
        assert!(SignalBody::of(&record).is_none());
    }
}
