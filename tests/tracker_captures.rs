//! The two real captures, decoded and run through the session as eboardd runs them, give
//! exactly the moves played.

mod captures;

use eboard_core::board::Orientation;
use eboard_core::session::Event;

/// `eboardctl decode`'s pipeline over a capture, for a board named like the capture file.
fn decode(chunks: &[eboard_core::capture::Chunk]) -> eboardd::cli::decode::Decoded {
    let config = eboardd::cli::decode::session_config_for("1.inbytes".as_ref());
    eboardd::cli::decode::decode(chunks, &[], config, "2026-01-02")
}

/// Capture `n`'s reads and its moves in UCI.
fn capture(n: u32) -> (Vec<eboard_core::capture::Chunk>, Vec<String>) {
    (captures::chunks(n), captures::uci(n))
}

fn check(n: u32, orientation: Orientation) {
    let (chunks, want) = capture(n);
    let decoded = decode(&chunks);
    for e in &decoded.events {
        println!("{}", eboardd::cli::decode::event_line(e));
    }
    println!("corrections: {}", decoded.corrections);
    assert_eq!(decoded.games.len(), 1);
    assert_eq!(decoded.games[0].uci, want);
    assert_eq!(decoded.orientation, Some(orientation));
    assert!(
        decoded
            .events
            .iter()
            .find(|e| !matches!(e.event, Event::Record(_)))
            .is_some_and(|e| matches!(e.event, Event::GameStarted { .. })),
        "the game starts before anything else happens"
    );
    assert!(
        !decoded.events.iter().any(|e| matches!(
            e.event,
            Event::IllegalPlacement { .. } | Event::IllegalMoveCompleted { .. }
        )),
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

#[test]
fn decode_prints_pgn_that_replays_to_the_same_moves() {
    for n in [1, 2] {
        let (chunks, want) = capture(n);
        let decoded = decode(&chunks);
        let text = &decoded.games[0].pgn;
        assert!(text.contains("[Board \"1.inbytes\"]"), "{text}");
        assert!(text.contains("[Date \"2026.01.02\"]"), "{text}");
        // Read the PGN back with SAN parsing: the same moves, all legal.
        let mut pos = shakmaty::Chess::default();
        let mut got = Vec::new();
        for token in pgn_moves(text).iter() {
            let san: shakmaty::san::SanPlus = token.parse().expect("SAN");
            let m = san.san.to_move(&pos).expect("legal SAN");
            got.push(shakmaty::uci::UciMove::from_standard(m).to_string());
            shakmaty::Position::play_unchecked(&mut pos, m);
        }
        assert_eq!(got, want, "capture {n}");
    }
}

#[test]
fn decode_command_runs_on_both_captures_and_names_a_missing_file() {
    for n in [1, 2] {
        for events in [false, true] {
            let args = eboardd::cli::decode::DecodeArgs {
                capture: captures::path(n, "inbytes").into(),
                events,
            };
            eboardd::cli::decode::run(&args).expect("decodes");
        }
    }
    let args = eboardd::cli::decode::DecodeArgs {
        capture: "no/such/capture".into(),
        events: false,
    };
    let err = eboardd::cli::decode::run(&args).unwrap_err();
    assert!(format!("{err:#}").contains("no/such/capture"));
}

#[test]
fn events_carry_their_stream_position() {
    let (chunks, _) = capture(2);
    let decoded = decode(&chunks);
    let moves: Vec<_> = decoded
        .events
        .iter()
        .filter(|e| matches!(e.event, Event::MovePlayed { .. }))
        .collect();
    // Positions only move forward through the stream.
    assert!(moves.windows(2).all(|w| w[0].pos.byte < w[1].pos.byte));
    let line = eboardd::cli::decode::event_line(moves[0]);
    assert!(line.contains("MovePlayed 1. e4 (e2e4)"), "{line}");
    // The en passant capture b2b4 a4b3 is there.
    assert!(
        decoded
            .events
            .iter()
            .any(|e| matches!(&e.event, Event::MovePlayed { san, .. } if san == "axb3"))
    );
}

/// The main line's SAN tokens of the first game of a PGN text (comments and clock stamps
/// skipped), read with `pgn-reader`.
fn pgn_moves(text: &str) -> Vec<String> {
    eboard_sim::parse_games(text)
        .into_iter()
        .next()
        .map(|g| g.sans)
        .unwrap_or_default()
}
