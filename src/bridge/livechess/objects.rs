//! The LiveChess objects of one board (contract section 8): EBOARD, CLOCK and the `sources`
//! entry, built from the board's contract properties ([`BoardProps`]). Pure: the reading time
//! is passed in.
//!
//! Every object has exactly the keys the contract lists — LiveChess's clients build typed
//! records from them and fail on a key they do not know.

use std::collections::{BTreeMap, HashSet};

use serde_json::{Value, json};

use crate::client::BoardProps;

/// The standard start position, the `start` of a game with no `FEN` tag.
pub const START_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// The placement shown while the board has not reported one yet: an empty board, so a
/// client comparing placements sees "not matching" rather than a malformed FEN field.
const EMPTY_PLACEMENT: &str = "8/8/8/8/8/8/8/8";

/// The board's `serialnr`: its `SerialNumber`, or its name when it reports none.
pub fn serialnr(props: &BoardProps) -> &str {
    if props.serial_number.is_empty() {
        &props.name
    } else {
        &props.serial_number
    }
}

/// Every board's `serialnr`, one of its own, from `(board id, table number, reported)` where
/// `reported` is [`serialnr`] of the board's own properties. Two boards of one model can
/// report the same serial number (and a board with none is named by its name), but a client
/// looks a board up by `serialnr` and takes the first match: so the boards claim theirs in
/// table order (numbered boards by number, then the others, each by board id) and a board
/// whose one is taken gets `<reported>-<board id>` (with `-2`, `-3`, … should even that be
/// taken). It depends on the configuration and on what the boards report, not on the order
/// they connected in, so it is the same after a restart.
pub fn distinct_serialnrs<'a>(
    boards: impl IntoIterator<Item = (&'a str, u32, &'a str)>,
) -> BTreeMap<String, String> {
    let mut order: Vec<(&str, u32, &str)> = boards.into_iter().collect();
    order.sort_by_key(|&(id, number, _)| (number == 0, number, id));
    // Reported ones first, so that a derived name never takes a board's own.
    let mut taken: HashSet<String> = HashSet::new();
    let mut first: HashSet<&str> = HashSet::new();
    let mut out = BTreeMap::new();
    for &(id, _, reported) in &order {
        if first.insert(reported) {
            taken.insert(reported.to_owned());
            out.insert(id.to_owned(), reported.to_owned());
        }
    }
    for &(id, _, reported) in &order {
        if out.contains_key(id) {
            continue;
        }
        let derived = format!("{reported}-{id}");
        let mut candidate = derived.clone();
        let mut n = 2;
        while taken.contains(&candidate) {
            candidate = format!("{derived}-{n}");
            n += 1;
        }
        taken.insert(candidate.clone());
        out.insert(id.to_owned(), candidate);
    }
    out
}

/// The port's file name (`ttyACM0`), LiveChess's `source`.
pub fn source(props: &BoardProps) -> &str {
    props.port.rsplit('/').next().unwrap_or(&props.port)
}

/// `ACTIVE` while the board answers on its serial line, else `INACTIVE`.
pub fn state(props: &BoardProps) -> &'static str {
    if props.connected {
        "ACTIVE"
    } else {
        "INACTIVE"
    }
}

/// What needs the arbiter, as a short text (`null` when nothing does): an open gap, an
/// illegal placement standing on the board.
pub fn comment(props: &BoardProps) -> Value {
    if !props.gap.is_empty() {
        json!(format!("gap: {}", props.gap))
    } else if !props.pending_illegal.is_empty() {
        json!(format!("illegal placement: {}", props.pending_illegal))
    } else {
        Value::Null
    }
}

/// The sensed placement from White's side (`Placement` is already orientation corrected).
pub fn placement(props: &BoardProps) -> &str {
    if props.placement.is_empty() {
        EMPTY_PLACEMENT
    } else {
        &props.placement
    }
}

/// A clock reading as LiveChess gives it: whole seconds left for White and Black, and which
/// clock runs (`Some(true)` White's, `Some(false)` Black's, `None` stopped). `None` without
/// a clock. Comparable, so a feed can tell whether the clock changed.
pub type ClockReading = Option<(u64, u64, Option<bool>)>;

/// The board's clock reading (see [`ClockReading`]).
pub fn clock_reading(props: &BoardProps) -> ClockReading {
    if !props.clock_connected {
        return None;
    }
    let run = match props.clock_running.as_str() {
        "white" => Some(true),
        "black" => Some(false),
        _ => None,
    };
    Some((props.white_time_ms / 1000, props.black_time_ms / 1000, run))
}

/// CLOCK `{"white", "black", "run", "time"}` of a reading taken at `now_ms`, or `null`.
pub fn clock_json(reading: ClockReading, now_ms: u64) -> Value {
    match reading {
        None => Value::Null,
        Some((white, black, run)) => {
            json!({"white": white, "black": black, "run": run, "time": now_ms})
        }
    }
}

/// `battery` as DGT LiveChess fills it: a string with the battery's charge for a board that
/// has a battery — a number followed by `%` for a Bluetooth board ("87%") — and null for a
/// board without one (the USB board of the real answer quoted in lila #20307).
pub fn battery(props: &BoardProps) -> Value {
    if props.battery.known() {
        Value::from(format!("{}%", props.battery.percent))
    } else {
        Value::Null
    }
}

/// EBOARD `{"serialnr", "source", "state", "battery", "comment", "board", "flipped",
/// "clock"}`.
pub fn eboard(props: &BoardProps, flipped: bool, now_ms: u64) -> Value {
    json!({
        "serialnr": serialnr(props),
        "source": source(props),
        "state": state(props),
        "battery": battery(props),
        "comment": comment(props),
        "board": placement(props),
        "flipped": flipped,
        "clock": clock_json(clock_reading(props), now_ms),
    })
}

/// One `sources` entry: `{"type": "serial", "device", "name", "present", "active",
/// "status"}`. A board the daemon serves is present (its port is configured); it is active
/// while it answers.
pub fn source_entry(props: &BoardProps) -> Value {
    let status = if !props.connected {
        "not answering".to_owned()
    } else if !props.gap.is_empty() {
        format!("connected, gap: {}", props.gap)
    } else {
        format!("connected, {}", props.state)
    };
    json!({
        "type": "serial",
        "device": props.port,
        "name": props.name,
        "present": true,
        "active": props.connected,
        "status": status,
    })
}

/// The FEN the board's game starts from: the `FEN` tag of its `Pgn`, else the standard start.
/// Read with a line scan, not a PGN parse: it runs on every feed message.
pub fn start_fen(props: &BoardProps) -> &str {
    props
        .pgn
        .lines()
        .take_while(|line| line.starts_with('['))
        .find_map(|line| {
            line.strip_prefix("[FEN \"")
                .and_then(|rest| rest.strip_suffix("\"]"))
        })
        .unwrap_or(START_FEN)
}

/// The boards as `eboards` lists them: connected first, then in table order (the lichess
/// connector takes the first board, so the one in use must come first).
pub fn eboards_order<'a, I>(boards: I) -> Vec<(&'a str, &'a BoardProps)>
where
    I: IntoIterator<Item = (&'a str, &'a BoardProps)>,
{
    let mut list: Vec<(&str, &BoardProps)> = boards.into_iter().collect();
    let key = |p: &BoardProps| {
        let number = if p.number > 0 {
            (0u8, p.number)
        } else {
            (1u8, 0)
        };
        (!p.connected, number)
    };
    list.sort_by(|a, b| key(a.1).cmp(&key(b.1)).then_with(|| a.0.cmp(b.0)));
    list
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A connected board with a clock, Black's running, after 1. e4.
    pub(crate) fn board() -> BoardProps {
        BoardProps {
            name: "board-1".into(),
            number: 1,
            port: "/dev/ttyACM0".into(),
            connected: true,
            serial_number: "3000147740".into(),
            state: "playing".into(),
            placement: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR".into(),
            in_sync: true,
            moves: vec!["e4".into()],
            clock_connected: true,
            white_time_ms: 5_676_900,
            black_time_ms: 7_190_000,
            clock_running: "black".into(),
            result: "*".into(),
            pgn: "[Event \"?\"]\n[Result \"*\"]\n\n1. e4 *\n".into(),
            ..BoardProps::default()
        }
    }

    #[test]
    fn eboard_reads_like_livechess() {
        let v = eboard(&board(), false, 1_503_845_105_357);
        assert_eq!(
            v,
            json!({"serialnr": "3000147740", "source": "ttyACM0", "state": "ACTIVE",
                   "battery": null, "comment": null,
                   "board": "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR",
                   "flipped": false,
                   "clock": {"white": 5676, "black": 7190, "run": false,
                             "time": 1_503_845_105_357u64}})
        );
    }

    #[test]
    fn battery_is_a_percentage_string_or_null() {
        let mut b = board();
        assert_eq!(battery(&b), Value::Null);
        b.battery = (87, false).into();
        assert_eq!(battery(&b), json!("87%"));
        assert_eq!(eboard(&b, false, 0)["battery"], json!("87%"));
        b.battery = (5, true).into();
        assert_eq!(battery(&b), json!("5%"));
    }

    #[test]
    fn serial_number_falls_back_to_the_name_and_no_clock_is_null() {
        let mut b = board();
        b.serial_number.clear();
        b.clock_connected = false;
        b.connected = false;
        b.placement.clear();
        let v = eboard(&b, true, 0);
        assert_eq!(v["serialnr"], "board-1");
        assert_eq!(v["clock"], Value::Null);
        assert_eq!(v["state"], "INACTIVE");
        assert_eq!(v["board"], EMPTY_PLACEMENT);
        assert_eq!(v["flipped"], true);
    }

    #[test]
    fn clock_run_follows_the_running_side() {
        let mut b = board();
        for (running, run) in [
            ("white", json!(true)),
            ("black", json!(false)),
            ("none", json!(null)),
        ] {
            b.clock_running = running.into();
            assert_eq!(clock_json(clock_reading(&b), 5)["run"], run, "{running}");
        }
    }

    #[test]
    fn comment_names_what_needs_the_arbiter() {
        let mut b = board();
        b.pending_illegal = "Ke2 with the king in check".into();
        assert_eq!(
            comment(&b),
            json!("illegal placement: Ke2 with the king in check")
        );
        b.gap = "reading the board's memory".into();
        assert_eq!(comment(&b), json!("gap: reading the board's memory"));
    }

    #[test]
    fn start_is_the_fen_tag_or_the_standard_start() {
        let mut b = board();
        assert_eq!(start_fen(&b), START_FEN);
        let fen = "4k3/8/8/8/8/8/8/4K2R w K - 0 1";
        b.pgn = format!("[Event \"?\"]\n[SetUp \"1\"]\n[FEN \"{fen}\"]\n\n*\n");
        assert_eq!(start_fen(&b), fen);
    }

    #[test]
    fn connected_boards_come_first_then_table_order() {
        let mut a = board();
        a.connected = false;
        a.number = 1;
        let mut b = board();
        b.number = 3;
        let mut c = board();
        c.number = 2;
        let mut d = board();
        d.number = 0;
        let order = eboards_order([("a", &a), ("b", &b), ("c", &c), ("d", &d)]);
        let ids: Vec<&str> = order.iter().map(|(id, _)| *id).collect();
        assert_eq!(ids, ["c", "b", "d", "a"]);
    }

    #[test]
    fn sources_entry_has_the_contract_keys() {
        let v = source_entry(&board());
        let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort();
        assert_eq!(
            keys,
            ["active", "device", "name", "present", "status", "type"]
        );
        assert_eq!(v["device"], "/dev/ttyACM0");
    }

    #[test]
    fn every_board_gets_a_serialnr_of_its_own() {
        // Tables 2 and 1 report the same number, table 3 the same, an unnumbered board too;
        // one reports none (named by its name).
        let boards = [
            ("b2", 2, "13116"),
            ("b1", 1, "13116"),
            ("b3", 3, "13116"),
            ("b0", 0, "13116"),
            ("b4", 4, "b4"),
            ("b5", 5, "777"),
        ];
        let got = distinct_serialnrs(boards);
        let want: BTreeMap<String, String> = [
            ("b1", "13116"),
            ("b2", "13116-b2"),
            ("b3", "13116-b3"),
            ("b0", "13116-b0"),
            ("b4", "b4"),
            ("b5", "777"),
        ]
        .into_iter()
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
        .collect();
        assert_eq!(got, want);
        // The order the boards are listed in (connected) does not matter.
        let mut reversed = boards;
        reversed.reverse();
        assert_eq!(distinct_serialnrs(reversed), want);
    }

    #[test]
    fn a_derived_serialnr_never_takes_a_reported_one() {
        let got = distinct_serialnrs([("a", 1, "7"), ("b", 2, "7"), ("c", 3, "7-b")]);
        assert_eq!(got["a"], "7");
        assert_eq!(got["c"], "7-b");
        assert_eq!(got["b"], "7-b-2");
    }
}
