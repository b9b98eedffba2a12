//! The properties of one board (`org.eboardd.Bridge1.Board`): the contract's table of them,
//! declared once below with `board_properties!` (name, D-Bus type, field and Rust type), and
//! the plain value [`BoardProps`] generated from it for both sides of the bus: the daemon's
//! session renders its state into a [`BoardProps`] and the D-Bus layer serves its fields
//! ([`BoardProps::wire_value`], [`BoardProps::changes`]), and every client (eboardctl, the web
//! bridge, the relay) reads the same struct back from what the bus hands over
//! ([`BoardProps::apply`]).
//!
//! Adding a property is one line in the list below (and its `<property>` in the shipped XML,
//! and its value in the session's view, which the compiler asks for). The contract's words
//! (rules, state, player, result, …) stay their wire text here, so a client keeps a word a
//! newer daemon added instead of dropping the board.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use serde_json::{Map, Value};

/// A claim available right now: `(player, kind, detail)` in the contract's `Claims` property.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(from = "(String, String, String)")]
pub struct Claim {
    pub player: String,
    pub kind: String,
    pub detail: String,
}

impl Claim {
    /// The claim as the contract's D-Bus structure `(sss)`.
    pub fn to_tuple(&self) -> (String, String, String) {
        (self.player.clone(), self.kind.clone(), self.detail.clone())
    }
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

impl From<IllegalCounts> for (u32, u32) {
    fn from(c: IllegalCounts) -> Self {
        (c.white, c.black)
    }
}

/// The board's battery (`Battery`, `(ib)`): percent 0–100 and whether it charges; (-1, false)
/// for a board without a battery or before its first report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "(i32, bool)")]
pub struct Battery {
    pub percent: i32,
    pub charging: bool,
}

impl Battery {
    /// A battery reported by the board (percent ≥ 0).
    pub fn known(&self) -> bool {
        self.percent >= 0
    }
}

impl Default for Battery {
    fn default() -> Self {
        Battery {
            percent: -1,
            charging: false,
        }
    }
}

impl From<(i32, bool)> for Battery {
    fn from((percent, charging): (i32, bool)) -> Self {
        Battery { percent, charging }
    }
}

impl From<Battery> for (i32, bool) {
    fn from(b: Battery) -> Self {
        (b.percent, b.charging)
    }
}

board_properties! {
    /// Every property of one board. Serialises with the D-Bus property names as keys, so the
    /// JSON of `eboardctl status --json` reads like the contract's table.
    pub struct BoardProps;

    /// The board's name (configuration, `--port`, `AddBoard`).
    "Name": "s" => name: String,
    /// The table number, 0 when none.
    "Number": "u" => number: u32,
    /// `standard` or `chess960`.
    "Variant": "s" => variant: String,
    /// Where the board is plugged in.
    "Port": "s" => port: String,
    /// The serial link is up.
    "Connected": "b" => connected: bool,
    "SerialNumber": "s" => serial_number: String,
    "FirmwareVersion": "s" => firmware_version: String,
    /// `dgt`, `dgt-bluetooth`, `dgt-revelation2`, `chesslink`; empty until known.
    "BoardModel": "s" => board_model: String,
    /// The clock on the board's cable: `dgt3000`, `dgt-xl`, empty until known.
    "ClockModel": "s" => clock_model: String,
    /// (percent, charging) as the board last reported it.
    "Battery": "(ib)" => battery: Battery,
    "Rules": "s" => rules: String,
    "Edition": "s" => edition: String,
    /// `waiting`, `playing` or `finished`.
    "State": "s" => state: String,
    "Fen": "s" => fen: String,
    "Placement": "s" => placement: String,
    "InSync": "b" => in_sync: bool,
    /// `white` or `black`.
    "Turn": "s" => turn: String,
    "Moves": "as" => moves: Vec<String>,
    "Pgn": "s" => pgn: String,
    "ClockConnected": "b" => clock_connected: bool,
    "WhiteTimeMs": "t" => white_time_ms: u64,
    "BlackTimeMs": "t" => black_time_ms: u64,
    /// `white`, `black` or `none`.
    "ClockRunning": "s" => clock_running: String,
    "Claims": "a(sss)" => claims: Vec<Claim>,
    "PendingIllegal": "s" => pending_illegal: String,
    /// What is being done about moves made while nothing was read (empty: nothing).
    "Gap": "s" => gap: String,
    "IllegalMoves": "(uu)" => illegal_moves: IllegalCounts,
    "Result": "s" => result: String,
    "Termination": "s" => termination: String,
}

impl BoardProps {
    /// Properties from a `a{sv}` dictionary already converted to JSON (by the client's
    /// `dict_to_json`). Unknown names are ignored (a newer daemon may add properties); missing
    /// ones keep their defaults.
    pub fn from_map(map: &Map<String, Value>) -> Self {
        let mut props = BoardProps::default();
        for (name, value) in map {
            props.apply(name, value);
        }
        props
    }
}

/// A value of one of the contract's D-Bus types, borrowed from where it lives (a property of
/// [`BoardProps`], an argument of a signal event): what the daemon turns into a D-Bus value
/// with one exhaustive match, so a type added here is a compile error there until the daemon
/// knows how to send it. The core names no D-Bus library.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WireValue<'a> {
    /// `s`
    Text(&'a str),
    /// `u`
    U32(u32),
    /// `t`
    U64(u64),
    /// `b`
    Bool(bool),
    /// `as`
    Texts(&'a [String]),
    /// `a(sss)`
    Claims(&'a [Claim]),
    /// `(uu)`
    Counts(IllegalCounts),
    /// `(ib)`
    Battery(Battery),
}

impl WireValue<'_> {
    /// The value's D-Bus type signature.
    pub const fn signature(&self) -> &'static str {
        match self {
            WireValue::Text(_) => "s",
            WireValue::U32(_) => "u",
            WireValue::U64(_) => "t",
            WireValue::Bool(_) => "b",
            WireValue::Texts(_) => "as",
            WireValue::Claims(_) => "a(sss)",
            WireValue::Counts(_) => "(uu)",
            WireValue::Battery(_) => "(ib)",
        }
    }
}

/// What the Rust type of a property's field is on the bus: its D-Bus signature, its value,
/// and the strings it holds. One implementation per type; `board_properties!` checks that a
/// property's declared signature is its type's.
pub trait PropertyType: PartialEq + DeserializeOwned {
    /// The D-Bus type signature of every value of the type.
    const SIGNATURE: &'static str;
    /// The value as the contract types it.
    fn wire(&self) -> WireValue<'_>;
    /// Every string the value holds (none for numbers and flags).
    fn texts(&self) -> impl Iterator<Item = &String>;
    /// [`PropertyType::texts`], to change them in place.
    fn texts_mut(&mut self) -> impl Iterator<Item = &mut String>;
}

/// A type that holds no text.
macro_rules! plain_property_type {
    ($ty:ty, $signature:literal, $variant:ident) => {
        impl PropertyType for $ty {
            const SIGNATURE: &'static str = $signature;
            fn wire(&self) -> WireValue<'_> {
                WireValue::$variant(*self)
            }
            fn texts(&self) -> impl Iterator<Item = &String> {
                std::iter::empty()
            }
            fn texts_mut(&mut self) -> impl Iterator<Item = &mut String> {
                std::iter::empty()
            }
        }
    };
}

plain_property_type!(u32, "u", U32);
plain_property_type!(u64, "t", U64);
plain_property_type!(bool, "b", Bool);
plain_property_type!(IllegalCounts, "(uu)", Counts);
plain_property_type!(Battery, "(ib)", Battery);

impl PropertyType for String {
    const SIGNATURE: &'static str = "s";
    fn wire(&self) -> WireValue<'_> {
        WireValue::Text(self)
    }
    fn texts(&self) -> impl Iterator<Item = &String> {
        std::iter::once(self)
    }
    fn texts_mut(&mut self) -> impl Iterator<Item = &mut String> {
        std::iter::once(self)
    }
}

impl PropertyType for Vec<String> {
    const SIGNATURE: &'static str = "as";
    fn wire(&self) -> WireValue<'_> {
        WireValue::Texts(self)
    }
    fn texts(&self) -> impl Iterator<Item = &String> {
        self.iter()
    }
    fn texts_mut(&mut self) -> impl Iterator<Item = &mut String> {
        self.iter_mut()
    }
}

impl PropertyType for Vec<Claim> {
    const SIGNATURE: &'static str = "a(sss)";
    fn wire(&self) -> WireValue<'_> {
        WireValue::Claims(self)
    }
    fn texts(&self) -> impl Iterator<Item = &String> {
        self.iter().flat_map(|c| [&c.player, &c.kind, &c.detail])
    }
    fn texts_mut(&mut self) -> impl Iterator<Item = &mut String> {
        self.iter_mut()
            .flat_map(|c| [&mut c.player, &mut c.kind, &mut c.detail])
    }
}

/// Sets `slot` from its JSON form, read as the slot's type (u32 refuses what does not fit,
/// u64 negatives); false, leaving the slot as it was, when the value is not of that type.
pub(crate) fn set_from_json<T: DeserializeOwned>(slot: &mut T, value: &Value) -> bool {
    match T::deserialize(value) {
        Ok(v) => {
            *slot = v;
            true
        }
        Err(_) => false,
    }
}

/// `a == b`, usable in a constant (the signature check of `board_properties!`).
pub(crate) const fn same_text(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::BOARD_PROPERTIES;
    use serde_json::json;

    /// A JSON value of D-Bus type `signature`, as the client converts it.
    fn sample(signature: &str) -> Value {
        match signature {
            "s" => json!("x"),
            "b" => json!(true),
            "u" | "t" => json!(7),
            "as" => json!(["e4"]),
            "a(sss)" => json!([["white", "fifty-moves", ""]]),
            "(uu)" => json!([1, 2]),
            "(ib)" => json!([87, true]),
            other => panic!("no sample for D-Bus type {other}"),
        }
    }

    /// `clone_from` reuses the target's memory: it must still copy every property, whatever
    /// the target held before.
    #[test]
    fn clone_from_equals_its_source_whatever_it_overwrites() {
        let mut from = BoardProps::default();
        from.texts_mut()
            .enumerate()
            .for_each(|(i, s)| *s = format!("text {i}"));
        from.number = 7;
        from.connected = true;
        from.in_sync = true;
        from.clock_connected = true;
        from.white_time_ms = 1;
        from.black_time_ms = 2;
        from.battery = (55, true).into();
        from.illegal_moves = (1, 2).into();
        from.moves = vec!["e4".into(), "e5".into()];
        from.claims = vec![crate::contract::Claim {
            player: "white".into(),
            kind: "draw".into(),
            detail: String::new(),
        }];
        let mut into = BoardProps {
            moves: vec!["d4".into(); 5],
            pgn: "an older and longer text".repeat(10),
            ..BoardProps::default()
        };
        into.clone_from(&from);
        assert_eq!(into, from);
        // Every property differs from the default: none was left out of the copy.
        assert_eq!(
            BoardProps::default().changes(&into).len(),
            BOARD_PROPERTIES.len()
        );
        into.clone_from(&BoardProps::default());
        assert_eq!(into, BoardProps::default());
    }

    #[test]
    fn the_struct_has_exactly_the_contract_properties() {
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

    /// Each property's value has its table signature, and `changes` names exactly the
    /// properties set to another value, in the table's order, with their new values.
    #[test]
    fn wire_values_and_changes_follow_the_table() {
        let old = BoardProps::default();
        for p in BOARD_PROPERTIES {
            let value = old.wire_value(p.name).expect("a value");
            assert_eq!(value.signature(), p.signature, "{}", p.name);
        }
        assert_eq!(old.wire_value("Version"), None);
        assert!(old.changes(&old.clone()).is_empty());
        // Every other property set, from the end of the table backwards.
        let mut new = old.clone();
        let picked: Vec<_> = BOARD_PROPERTIES.iter().rev().step_by(2).collect();
        for p in &picked {
            assert!(new.apply(p.name, &sample(p.signature)), "{}", p.name);
        }
        let changed = old.changes(&new);
        let names: Vec<&str> = changed.iter().map(|(n, _)| *n).collect();
        let mut want: Vec<&str> = picked.iter().map(|p| p.name).collect();
        want.reverse();
        assert_eq!(names, want);
        for (name, value) in changed {
            assert_eq!(Some(value), new.wire_value(name), "{name}");
        }
    }

    /// Every property that holds text is among [`BoardProps::texts`] (and `texts_mut`), so a
    /// check on outgoing text cannot miss one added later.
    #[test]
    fn texts_lists_every_string_of_every_property() {
        for p in BOARD_PROPERTIES {
            let marked = match p.signature {
                "s" => json!("\u{1}"),
                "as" => json!(["e4", "\u{1}"]),
                "a(sss)" => json!([["white", "fifty-moves", "\u{1}"], ["\u{1}", "x", "y"]]),
                _ => continue,
            };
            let mut props = BoardProps::default();
            assert!(props.apply(p.name, &marked), "{}", p.name);
            let marks = |props: &BoardProps| props.texts().filter(|s| s.contains('\u{1}')).count();
            let want = marked.to_string().matches("\\u0001").count();
            assert_eq!(marks(&props), want, "{} in texts()", p.name);
            props.texts_mut().for_each(|s| *s = s.replace('\u{1}', "x"));
            assert_eq!(marks(&props), 0, "{} in texts_mut()", p.name);
        }
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
    fn numbers_out_of_range_are_refused() {
        let mut props = BoardProps::default();
        assert!(!props.apply("Number", &json!(u64::from(u32::MAX) + 1)));
        assert!(!props.apply("IllegalMoves", &json!([1, -1])));
        assert!(!props.apply("IllegalMoves", &json!([1, 2, 3])));
        assert!(!props.apply("Battery", &json!([i64::from(i32::MAX) + 1, false])));
        assert!(!props.apply("Battery", &json!([50])));
        assert_eq!(props, BoardProps::default());
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
        assert_eq!(v["Battery"], json!({"percent": -1, "charging": false}));
        assert_eq!(v["BoardModel"], "");
    }

    #[test]
    fn claims_and_counts_convert_to_the_dbus_shapes() {
        let claim = Claim::from(("white".into(), "fifty-moves".into(), "g1f3".into()));
        assert_eq!(
            claim.to_tuple(),
            ("white".into(), "fifty-moves".into(), "g1f3".into())
        );
        let counts = IllegalCounts::from((1, 2));
        assert_eq!(<(u32, u32)>::from(counts), (1, 2));
    }
}
