//! A board's `org.eboardd.Bridge1.Board` properties as the client reads them off the bus.
//!
//! D-Bus hands properties over as variants (from `GetManagedObjects`, `InterfacesAdded` and
//! `PropertiesChanged`). They are converted once, here, to JSON values ([`dict_to_json`]) —
//! the form the hall model, the web bridge and the relay keep — and read into the contract's
//! [`BoardProps`] (the same struct the daemon serves its properties from) for eboardctl's
//! `status`, `list` and `watch`.

use serde_json::{Map, Value};
use zbus::Variant;

pub use eboard_core::contract::props::{Battery, BoardProps, Claim, IllegalCounts};

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
    fn nested_variants_and_dicts_convert() {
        let inner = Variant::new(Variant::from("x"));
        assert_eq!(variant_to_json(&inner), json!("x"));
        let mut map = HashMap::new();
        map.insert("k".to_owned(), "v".to_owned());
        assert_eq!(variant_to_json(&Variant::from(map)), json!({"k": "v"}));
    }
}
