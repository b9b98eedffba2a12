//! The properties of one board (`org.eboardd.Bridge1.Board`) as one plain value, written down
//! once for both sides of the bus: the daemon's session renders its state into a
//! [`BoardProps`] and the D-Bus layer serves its fields, and every client (eboardctl, the web
//! bridge, the relay) reads the same struct back from what the bus hands over.
//!
//! The names are the contract table's ([`BOARD_PROPERTIES`](super::BOARD_PROPERTIES), checked
//! by a test against the fields); the contract's words (rules, state, player, result, …) stay
//! their wire text here, so a client keeps a word a newer daemon added instead of dropping the
//! board. Reading a value from its JSON form is [`BoardProps::apply`], by the field's type, so a
//! property's name, type and parsing exist once.

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

/// Every property of one board. Serialises with the D-Bus property names as keys, so the JSON
/// of `eboardctl status --json` reads like the contract's table.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct BoardProps {
    /// The board's name (configuration, `--port`, `AddBoard`).
    pub name: String,
    /// The table number, 0 when none.
    pub number: u32,
    /// `standard` or `chess960`.
    pub variant: String,
    /// Where the board is plugged in.
    pub port: String,
    /// The serial link is up.
    pub connected: bool,
    pub serial_number: String,
    pub firmware_version: String,
    /// `dgt`, `dgt-bluetooth`, `dgt-revelation2`, `chesslink`; empty until known.
    pub board_model: String,
    /// The clock on the board's cable: `dgt3000`, `dgt-xl`, empty until known.
    pub clock_model: String,
    /// (percent, charging) as the board last reported it.
    pub battery: Battery,
    pub rules: String,
    pub edition: String,
    /// `waiting`, `playing` or `finished`.
    pub state: String,
    pub fen: String,
    pub placement: String,
    pub in_sync: bool,
    /// `white` or `black`.
    pub turn: String,
    pub moves: Vec<String>,
    pub pgn: String,
    pub clock_connected: bool,
    pub white_time_ms: u64,
    pub black_time_ms: u64,
    /// `white`, `black` or `none`.
    pub clock_running: String,
    pub claims: Vec<Claim>,
    pub pending_illegal: String,
    /// What is being done about moves made while nothing was read (empty: nothing).
    pub gap: String,
    pub illegal_moves: IllegalCounts,
    pub result: String,
    pub termination: String,
}

impl BoardProps {
    /// Every string the properties hold (the `s` properties, each move, each claim's three
    /// fields), for checks on text that leaves the daemon (see `daemon::dbus::sendable`).
    pub fn texts(&self) -> impl Iterator<Item = &String> {
        [
            &self.name,
            &self.variant,
            &self.port,
            &self.serial_number,
            &self.firmware_version,
            &self.board_model,
            &self.clock_model,
            &self.rules,
            &self.edition,
            &self.state,
            &self.fen,
            &self.placement,
            &self.turn,
            &self.pgn,
            &self.clock_running,
            &self.pending_illegal,
            &self.gap,
            &self.result,
            &self.termination,
        ]
        .into_iter()
        .chain(&self.moves)
        .chain(
            self.claims
                .iter()
                .flat_map(|c| [&c.player, &c.kind, &c.detail]),
        )
    }

    /// [`BoardProps::texts`], to change them in place.
    pub fn texts_mut(&mut self) -> impl Iterator<Item = &mut String> {
        [
            &mut self.name,
            &mut self.variant,
            &mut self.port,
            &mut self.serial_number,
            &mut self.firmware_version,
            &mut self.board_model,
            &mut self.clock_model,
            &mut self.rules,
            &mut self.edition,
            &mut self.state,
            &mut self.fen,
            &mut self.placement,
            &mut self.turn,
            &mut self.pgn,
            &mut self.clock_running,
            &mut self.pending_illegal,
            &mut self.gap,
            &mut self.result,
            &mut self.termination,
        ]
        .into_iter()
        .chain(&mut self.moves)
        .chain(
            self.claims
                .iter_mut()
                .flat_map(|c| [&mut c.player, &mut c.kind, &mut c.detail]),
        )
    }

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
            "BoardModel" => set(&mut self.board_model, value),
            "ClockModel" => set(&mut self.clock_model, value),
            "Battery" => set(&mut self.battery, value),
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
            // Outside text from the bus: a newer daemon may have more; the hall keeps them as
            // JSON, this struct does not.
            _ => false,
        }
    }
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
