//! A board's `org.eboardd.Bridge1.Board` properties as one plain value: the client model's
//! typed read of the [`Props`](crate::client::Props) the bridges keep.
//!
//! D-Bus hands properties over as variants (from `GetManagedObjects`, `InterfacesAdded` and
//! `PropertiesChanged`). They are converted once, here, to JSON values ([`dict_to_json`]) —
//! the form the hall model, the web bridge and the relay keep — and read into a typed
//! [`BoardProps`] for eboardctl's `status`, `list` and `watch`. The names are the contract
//! table's (`crate::contract::BOARD_PROPERTIES`, checked by a test) and each value is parsed by
//! its field's type, so a property's name, type and parsing exist once.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use zbus::Variant;

pub use crate::contract::BOARD_INTERFACE;

use crate::client::Props;

/// A claim available right now: `(player, kind, detail)` in the contract's `Claims` property.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(from = "(String, String, String)")]
pub struct Claim {
    pub player: String,
    pub kind: String,
    pub detail: String,
}

impl From<(String, String, String)> for Claim {
    fn from((player, kind, detail): (String, String, String)) -> Self {
        Claim {
            player,
            kind,
            detail,
        }
    }
}

/// Completed illegal moves so far (`IllegalMoves`, `(uu)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(from = "(u32, u32)")]
pub struct IllegalCounts {
    pub white: u32,
    pub black: u32,
}

impl From<(u32, u32)> for IllegalCounts {
    fn from((white, black): (u32, u32)) -> Self {
        IllegalCounts { white, black }
    }
}

/// Every property of one board. Serialises with the D-Bus property names as keys, so the JSON
/// of `eboardctl status --json` reads like the contract's table.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct BoardProps {
    pub name: String,
    pub number: u32,
    pub variant: String,
    pub port: String,
    pub connected: bool,
    pub serial_number: String,
    pub firmware_version: String,
    pub rules: String,
    pub edition: String,
    pub state: String,
    pub fen: String,
    pub placement: String,
    pub in_sync: bool,
    pub turn: String,
    pub moves: Vec<String>,
    pub pgn: String,
    pub clock_connected: bool,
    pub white_time_ms: u64,
    pub black_time_ms: u64,
    pub clock_running: String,
    pub claims: Vec<Claim>,
    pub pending_illegal: String,
    pub gap: String,
    pub illegal_moves: IllegalCounts,
    pub result: String,
    pub termination: String,
}

impl BoardProps {
    /// Properties from a `a{sv}` dictionary already converted to JSON (see [`variant_to_json`]).
    /// Unknown names are ignored (a newer daemon may add properties); missing ones keep their
    /// defaults.
    pub fn from_map(map: &Props) -> Self {
        let mut props = BoardProps::default();
        for (name, value) in map {
            props.apply(name, value);
        }
        props
    }

    /// Sets one property from its JSON form. Returns false when the name is unknown or the
    /// value does not have the field's type (the property is then left as it was).
    pub fn apply(&mut self, name: &str, value: &Value) -> bool {
        /// The value read as the slot's type (u32 refuses what does not fit, u64 negatives).
        fn set<T: DeserializeOwned>(slot: &mut T, value: &Value) -> bool {
            match T::deserialize(value) {
                Ok(v) => {
                    *slot = v;
                    true
                }
                Err(_) => false,
            }
        }
        match name {
            "Name" => set(&mut self.name, value),
            "Number" => set(&mut self.number, value),
            "Variant" => set(&mut self.variant, value),
            "Port" => set(&mut self.port, value),
            "Connected" => set(&mut self.connected, value),
            "SerialNumber" => set(&mut self.serial_number, value),
            "FirmwareVersion" => set(&mut self.firmware_version, value),
            "Rules" => set(&mut self.rules, value),
            "Edition" => set(&mut self.edition, value),
            "State" => set(&mut self.state, value),
            "Fen" => set(&mut self.fen, value),
            "Placement" => set(&mut self.placement, value),
            "InSync" => set(&mut self.in_sync, value),
            "Turn" => set(&mut self.turn, value),
            "Moves" => set(&mut self.moves, value),
            "Pgn" => set(&mut self.pgn, value),
            "ClockConnected" => set(&mut self.clock_connected, value),
            "WhiteTimeMs" => set(&mut self.white_time_ms, value),
            "BlackTimeMs" => set(&mut self.black_time_ms, value),
            "ClockRunning" => set(&mut self.clock_running, value),
            "Claims" => set(&mut self.claims, value),
            "PendingIllegal" => set(&mut self.pending_illegal, value),
            "Gap" => set(&mut self.gap, value),
            "IllegalMoves" => set(&mut self.illegal_moves, value),
            "Result" => set(&mut self.result, value),
            "Termination" => set(&mut self.termination, value),
            // A newer daemon may have more; they are kept in the hall's `Props`, not here.
            _ => false,
        }
    }
}

/// Converts any D-Bus value to JSON: strings, object paths and signatures become strings,
/// numbers numbers, arrays and structures arrays, dictionaries objects (keys as text), nested
/// variants their content. File descriptors become `null`.
pub fn variant_to_json(value: &Variant<'_>) -> Value {
    match value {
        Variant::U8(n) => Value::from(*n),
        Variant::Bool(b) => Value::from(*b),
        Variant::I16(n) => Value::from(*n),
        Variant::U16(n) => Value::from(*n),
        Variant::I32(n) => Value::from(*n),
        Variant::U32(n) => Value::from(*n),
        Variant::I64(n) => Value::from(*n),
        Variant::U64(n) => Value::from(*n),
        Variant::F64(n) => Value::from(*n),
        Variant::Str(s) => Value::from(&**s),
        Variant::Signature(s) => Value::from(s.to_string()),
        Variant::ObjectPath(p) => Value::from(p.as_str()),
        Variant::Variant(inner) => variant_to_json(inner),
        Variant::Array(a) => Value::Array(a.inner().iter().map(variant_to_json).collect()),
        Variant::Structure(s) => Value::Array(s.fields().iter().map(variant_to_json).collect()),
        Variant::Dict(d) => Value::Object(
            d.iter()
                .map(|(k, v)| {
                    let key = match variant_to_json(k) {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    (key, variant_to_json(v))
                })
                .collect(),
        ),
        #[cfg(unix)]
        Variant::Fd(_) => Value::Null,
    }
}

/// A `a{sv}` property dictionary as a JSON object.
pub fn dict_to_json<'a, V>(
    dict: impl IntoIterator<Item = (&'a String, &'a V)>,
) -> Map<String, Value>
where
    V: std::ops::Deref<Target = Variant<'static>> + 'a,
{
    dict.into_iter()
        .map(|(k, v)| (k.clone(), variant_to_json(v)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::HashMap;
    use zbus::OwnedVariant;

    fn owned(v: Variant<'_>) -> OwnedVariant {
        v.try_to_owned().expect("owned variant")
    }

    /// A property dictionary as the daemon sends it, with the contract's D-Bus types.
    pub(crate) fn sample_dict() -> HashMap<String, OwnedVariant> {
        let mut d = HashMap::new();
        d.insert("Name".to_owned(), owned(Variant::from("board-1")));
        d.insert("Connected".to_owned(), owned(Variant::from(true)));
        d.insert("WhiteTimeMs".to_owned(), owned(Variant::from(61_000u64)));
        d.insert(
            "Moves".to_owned(),
            owned(Variant::from(vec!["e4".to_owned(), "e5".to_owned()])),
        );
        d.insert(
            "Claims".to_owned(),
            owned(Variant::from(vec![(
                "white".to_owned(),
                "threefold-repetition".to_owned(),
                "g1f3".to_owned(),
            )])),
        );
        d.insert(
            "IllegalMoves".to_owned(),
            owned(Variant::from((1u32, 2u32))),
        );
        d.insert("FutureProperty".to_owned(), owned(Variant::from(7i32)));
        d
    }

    #[test]
    fn dbus_dictionary_becomes_typed_properties() {
        let dict = sample_dict();
        let props = BoardProps::from_map(&dict_to_json(&dict));
        assert_eq!(props.name, "board-1");
        assert!(props.connected);
        assert_eq!(props.white_time_ms, 61_000);
        assert_eq!(props.moves, vec!["e4", "e5"]);
        assert_eq!(
            props.claims,
            vec![Claim {
                player: "white".into(),
                kind: "threefold-repetition".into(),
                detail: "g1f3".into()
            }]
        );
        assert_eq!(props.illegal_moves, IllegalCounts { white: 1, black: 2 });
    }

    #[test]
    fn wrong_shapes_are_refused_and_leave_the_old_value() {
        let mut props = BoardProps {
            name: "keep".into(),
            ..Default::default()
        };
        assert!(!props.apply("Name", &json!(3)));
        assert!(!props.apply("IllegalMoves", &json!([1])));
        assert!(!props.apply("Claims", &json!([["white", "x"]])));
        assert!(!props.apply("WhiteTimeMs", &json!(-5)));
        assert!(!props.apply("NoSuchProperty", &json!("x")));
        assert_eq!(props.name, "keep");
        assert!(props.apply("Claims", &json!([])));
    }

    #[test]
    fn json_uses_the_dbus_property_names() {
        let props = BoardProps {
            fen: "8/8/8/8/8/8/8/8 w - - 0 1".into(),
            ..Default::default()
        };
        let v = serde_json::to_value(&props).expect("serialises");
        assert_eq!(v["Fen"], "8/8/8/8/8/8/8/8 w - - 0 1");
        assert_eq!(v["WhiteTimeMs"], 0);
        assert_eq!(v["IllegalMoves"], json!({"white": 0, "black": 0}));
        assert!(v.get("InSync").is_some());
        assert!(v.get("SerialNumber").is_some());
    }

    #[test]
    fn nested_variants_and_dicts_convert() {
        let inner = Variant::new(Variant::from("x"));
        assert_eq!(variant_to_json(&inner), json!("x"));
        let mut map = HashMap::new();
        map.insert("k".to_owned(), "v".to_owned());
        assert_eq!(variant_to_json(&Variant::from(map)), json!({"k": "v"}));
    }

    /// A JSON value of D-Bus type `signature`, as [`variant_to_json`] makes it.
    fn sample(signature: &str) -> Value {
        match signature {
            "s" => json!("x"),
            "b" => json!(true),
            "u" | "t" => json!(7),
            "as" => json!(["e4"]),
            "a(sss)" => json!([["white", "fifty-moves", ""]]),
            "(uu)" => json!([1, 2]),
            other => panic!("no sample for D-Bus type {other}"),
        }
    }

    #[test]
    fn the_model_has_exactly_the_contract_properties() {
        use crate::contract::BOARD_PROPERTIES;
        let v = serde_json::to_value(BoardProps::default()).expect("serialises");
        let mut fields: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        let mut table: Vec<&str> = BOARD_PROPERTIES.iter().map(|p| p.name).collect();
        fields.sort();
        table.sort();
        assert_eq!(fields, table);
        for p in BOARD_PROPERTIES {
            let mut props = BoardProps::default();
            assert!(
                props.apply(p.name, &sample(p.signature)),
                "{} ({})",
                p.name,
                p.signature
            );
            assert_ne!(props, BoardProps::default(), "{} was set", p.name);
            // A value of another type is refused.
            let wrong = if p.signature == "s" {
                json!(1)
            } else {
                json!("x")
            };
            assert!(!props.apply(p.name, &wrong), "{} refuses {wrong}", p.name);
        }
    }

    #[test]
    fn numbers_out_of_range_are_refused() {
        let mut props = BoardProps::default();
        assert!(!props.apply("Number", &json!(u64::from(u32::MAX) + 1)));
        assert!(!props.apply("IllegalMoves", &json!([1, -1])));
        assert!(!props.apply("IllegalMoves", &json!([1, 2, 3])));
        assert_eq!(props, BoardProps::default());
    }
}
