//! The two real captures, decoded and tracked, give exactly the moves played.

use eboardd::board::Orientation;
use eboardd::cli::decode::decode;
use eboardd::tracker::TrackerEvent;

fn capture(n: u32) -> (Vec<eboardd::capture::Chunk>, Vec<String>) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/captures");
    let bytes = std::fs::read_to_string(format!("{dir}/{n}.inbytes")).expect("capture readable");
    let uci = std::fs::read_to_string(format!("{dir}/{n}.uci")).expect("moves readable");
    let moves = uci
        .split_whitespace()
        .filter(|t| !t.ends_with('.') && *t != "*")
        .map(str::to_string)
        .collect();
    (
        eboardd::capture::parse(&bytes).expect("capture parses"),
        moves,
    )
}

fn check(n: u32, orientation: Orientation) {
    let (chunks, want) = capture(n);
    let decoded = decode(&chunks);
    for e in &decoded.events {
        if !matches!(e.event, TrackerEvent::InSync(_)) {
            println!("{}", eboardd::cli::decode::event_line(e));
        }
    }
    println!("corrections: {}", decoded.corrections);
    assert_eq!(decoded.games.len(), 1);
    assert_eq!(decoded.games[0].uci, want);
    assert!(matches!(
        decoded.events.first().map(|e| &e.event),
        Some(TrackerEvent::GameStarted { orientation: o }) if *o == orientation
    ));
    assert!(
        !decoded
            .events
            .iter()
            .any(|e| matches!(e.event, TrackerEvent::IllegalPlacement { .. })),
        "no illegal placement in a legal game"
    );
}

#[test]
fn capture_1_reconstructed_exactly() {
    check(1, Orientation::Normal);
}

#[test]
fn capture_2_reversed_with_en_passant_reconstructed_exactly() {
    check(2, Orientation::Reversed);
}
