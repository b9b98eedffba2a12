//! What building one board message costs: a `PropertiesChanged` and a `MovePlayed` signal,
//! the way the daemon writes them (`daemon::dbus::{PropertiesChangedBody, SignalBody}`, straight
//! from the contract's values) against the generic way (a `Variant` per value, collected into
//! a `HashMap`; a `Structure` of owned values), for the changes a board makes most: a clock
//! tick (one time), a lifted piece (`Placement`), and a move at ply 40 (Fen, Placement, Turn,
//! Moves of 40 SANs, Pgn, both times, ClockRunning).
//!
//! `cargo bench --bench wire_body`: nanoseconds per message built (no bus involved). Under
//! `cargo test` (no `--bench` argument) a short smoke run.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hint::black_box;
use std::time::Instant;

use eboard_core::contract::{BOARD_INTERFACE, BoardProps, board_path};
use eboard_core::session::Event;
use eboardd::daemon::dbus::{
    PROPERTIES_CHANGED, PROPERTIES_INTERFACE, PropertiesChangedBody, SignalBody, property_value,
    variant,
};
use zbus::Message;
use zbus::names::InterfaceName;

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let rounds = if full { 200_000 } else { 200 };
    let path = board_path("b001");

    let base = BoardProps {
        fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".into(),
        placement: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR".into(),
        turn: "white".into(),
        white_time_ms: 300_000,
        black_time_ms: 300_000,
        ..Default::default()
    };
    let tick = BoardProps {
        white_time_ms: 299_000,
        ..base.clone()
    };
    let lift = BoardProps {
        placement: "rnbqkbnr/pppppppp/8/8/8/8/PPPP1PPP/RNBQKBNR".into(),
        ..base.clone()
    };
    let sans: Vec<String> = ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6"]
        .iter()
        .cycle()
        .take(40)
        .map(|s| s.to_string())
        .collect();
    let pgn = format!("[Event \"Club\"]\n\n{} *", sans.join(" "));
    let moved = BoardProps {
        fen: "r1bqkb1r/1ppp1ppp/p1n2n2/4p3/B3P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 2 5".into(),
        placement: "r1bqkb1r/1ppp1ppp/p1n2n2/4p3/B3P3/5N2/PPPP1PPP/RNBQK2R".into(),
        turn: "black".into(),
        moves: sans,
        pgn,
        white_time_ms: 281_250,
        black_time_ms: 290_125,
        clock_running: "black".into(),
        ..base.clone()
    };

    println!("== building one message (ns each; {rounds} rounds) ==");
    for (what, new) in [
        ("clock tick", &tick),
        ("lift", &lift),
        ("move at ply 40", &moved),
    ] {
        let ours = time(rounds, || {
            let changed = base.changes(new);
            let body = PropertiesChangedBody {
                interface: BOARD_INTERFACE,
                changed: &changed,
            };
            Message::signal(path.as_str(), PROPERTIES_INTERFACE, PROPERTIES_CHANGED)
                .build(&body)
                .unwrap()
        });
        let generic = time(rounds, || {
            let map: HashMap<&str, zbus::Variant<'_>> = base
                .changes(new)
                .into_iter()
                .map(|(name, _)| (name, property_value(new, name).unwrap()))
                .collect();
            let iface = InterfaceName::from_static_str_unchecked(BOARD_INTERFACE);
            let body = (iface, map, Cow::<[&str]>::Borrowed(&[]));
            Message::signal(
                path.as_str(),
                "org.freedesktop.DBus.Properties",
                "PropertiesChanged",
            )
            .build(&body)
            .unwrap()
        });
        println!(
            "PropertiesChanged, {what:<15} direct {ours:>6.0}  generic {generic:>6.0}  ({:+.0}%)",
            (ours / generic - 1.0) * 100.0
        );
    }

    let event = Event::MovePlayed {
        ply: 40,
        san: "Nf3".into(),
        uci: "g1f3".into(),
        fen: moved.fen.clone(),
        white_ms: 281_250,
        black_ms: 290_125,
    };
    let ours = time(rounds, || {
        let body = SignalBody::of(&event).unwrap();
        Message::signal(path.as_str(), BOARD_INTERFACE, "MovePlayed")
            .build(&body)
            .unwrap()
    });
    let generic = time(rounds, || {
        let mut body = zbus::wire::StructureBuilder::new();
        for value in event.signal_values().unwrap() {
            body = body.append_field(zbus::Variant::from(variant(value).try_to_owned().unwrap()));
        }
        let body = body.build().unwrap();
        Message::signal(path.as_str(), BOARD_INTERFACE, "MovePlayed")
            .build(&body)
            .unwrap()
    });
    println!(
        "MovePlayed signal                  direct {ours:>6.0}  generic {generic:>6.0}  ({:+.0}%)",
        (ours / generic - 1.0) * 100.0
    );
}

/// Nanoseconds per call of `build`, best of three runs of `rounds` calls.
fn time(rounds: u32, mut build: impl FnMut() -> Message) -> f64 {
    (0..3)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..rounds {
                black_box(build());
            }
            start.elapsed().as_nanos() as f64 / f64::from(rounds)
        })
        .fold(f64::INFINITY, f64::min)
}
