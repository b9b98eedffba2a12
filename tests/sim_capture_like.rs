//! The simulator's bytes for a scripted game (the moves of shared capture 1, played with
//! human handling on a 3+2 clock) decode exactly like the real capture does: the same message
//! kinds, a dump in the same layout, clock status bits with the same meanings, the same
//! increment behaviour, and field updates that lead to the game's final position.

mod captures;
mod sim_support;

use std::collections::BTreeSet;
use std::time::Duration;

use eboard_core::board::{Orientation, Placement};
use eboard_core::dgt::{ClockReading, Decoder, Message};
use eboard_sim::{Noise, Pace, Scenario, ScenarioOptions, SimBoard, SimOptions, Step};
use shakmaty::{Chess, Position};
use sim_support::attach;

#[derive(Debug)]
struct Summary {
    kinds: BTreeSet<&'static str>,
    skipped: u64,
    dumps: usize,
    orientation: Option<Orientation>,
    clocks: Vec<ClockReading>,
    final_placement: Placement,
}

fn kind(m: &Message) -> &'static str {
    match m {
        Message::BoardDump(_) => "dump",
        Message::FieldUpdate { .. } => "field",
        Message::ClockTimes(_) => "clock",
        Message::ClockAck(_) => "ack",
        Message::ClockEmpty => "clock-empty",
        _ => "other",
    }
}

fn summarise(bytes: &[u8]) -> Summary {
    let (messages, stats) = Decoder::decode_all(bytes);
    assert!(
        matches!(messages.first(), Some(Message::BoardDump(_))),
        "a dump comes first"
    );
    let mut orientation = None;
    let mut placement = Placement::empty();
    let mut clocks = Vec::new();
    let mut dumps = 0;
    for m in &messages {
        match m {
            Message::BoardDump(fields) => {
                dumps += 1;
                orientation = Placement::start_orientation(fields);
                placement = Placement::from_wire(fields, orientation.unwrap_or_default());
            }
            Message::FieldUpdate { field, content } => {
                let o = orientation.unwrap_or_default();
                placement.set(o.square_of_field(*field).expect("field in range"), *content);
            }
            Message::ClockTimes(t) => clocks.push(*t),
            _ => {}
        }
    }
    Summary {
        kinds: messages.iter().map(kind).collect(),
        skipped: stats.skipped_bytes,
        dumps,
        orientation,
        clocks,
        final_placement: placement,
    }
}

fn secs(t: eboard_core::dgt::DisplayTime) -> i64 {
    (t.as_millis() / 1000) as i64
}

/// The bit meanings the real DGT 3000 shows, checked message by message.
fn check_clock_semantics(clocks: &[ClockReading], what: &str) -> usize {
    let mut presses = 0;
    for t in clocks {
        let s = t.status;
        assert!(s.connected, "{what}: {t:?}");
        assert!(
            s.left_running != s.right_running,
            "{what}: one display runs: {t:?}"
        );
        assert_eq!(
            s.lever_left_down, s.right_running,
            "{what}: lever bit: {t:?}"
        );
        assert!(
            t.left_flags.time_per_move && t.right_flags.time_per_move,
            "{what}: Fischer"
        );
    }
    for pair in clocks.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        if !(a.status.running && b.status.running) {
            continue;
        }
        let (dl, dr) = (secs(b.left) - secs(a.left), secs(b.right) - secs(a.right));
        if a.status.left_running == b.status.left_running {
            // Bit 3 = the left display counts; bit 4 = the right one.
            if a.status.left_running {
                assert!(dr == 0 && dl <= 0, "{what}: left runs {a:?} → {b:?}");
            } else {
                assert!(dl == 0 && dr <= 0, "{what}: right runs {a:?} → {b:?}");
            }
        } else {
            // A press: the presser's display gains the 2 s increment, less under a second.
            presses += 1;
            let (gain, other) = if a.status.left_running {
                (dl, dr)
            } else {
                (dr, dl)
            };
            assert!((1..=2).contains(&gain), "{what}: increment {a:?} → {b:?}");
            assert!((-1..=0).contains(&other), "{what}: {a:?} → {b:?}");
        }
    }
    presses
}

#[tokio::test]
async fn scripted_game_decodes_like_capture_one() {
    let moves = captures::moves(1);
    let real = summarise(&captures::bytes(1));

    let sim = SimBoard::spawn(SimOptions {
        speed: f64::INFINITY,
        ..SimOptions::default()
    })
    .await
    .unwrap();
    // What the capture's host evidently did: a dump, then UPDATE_NICE.
    let collector = attach(&sim, &sim.path(), &[0x40, 0x42, 0x4B]).await;
    let mut scenario = Scenario::new(
        &sim,
        ScenarioOptions {
            pace: Pace {
                think_ms: (1_000, 4_000),
                ..Pace::human()
            },
            noise: Noise::Noisy,
            seed: 11,
            ..ScenarioOptions::default()
        },
    );
    for mv in &moves {
        scenario.play_move(mv).await.unwrap();
    }
    // The capture ends with the clock stopped.
    scenario
        .run(&[Step::Pause(700), Step::StartStop, Step::Pause(2_000)])
        .await
        .unwrap();
    let (chunks, _port) = collector.finish(Duration::from_millis(100)).await;
    let snapshot = sim.snapshot().await.unwrap();
    assert_eq!(snapshot.dropped_bytes, 0);
    sim.shutdown().await;
    let bytes: Vec<u8> = chunks.concat();
    let simulated = summarise(&bytes);

    // Same message kinds, nothing skipped, one dump in the same layout.
    assert_eq!(simulated.kinds, real.kinds);
    assert_eq!(real.kinds, BTreeSet::from(["clock", "dump", "field"]));
    assert_eq!((simulated.skipped, real.skipped), (0, 0));
    assert_eq!((simulated.dumps, real.dumps), (1, 1));
    assert_eq!(simulated.orientation, Some(Orientation::Normal));
    assert_eq!(real.orientation, Some(Orientation::Normal));

    // Field updates lead to the game's final position in both.
    let mut end = Chess::default();
    for mv in &moves {
        end.play_unchecked(*mv);
    }
    let end = Placement::from_board(end.board());
    assert_eq!(real.final_placement, end, "real capture");
    assert_eq!(simulated.final_placement, end, "simulated");

    // Clock: same first reading, same bit meanings, a press per ply, stopped at the end.
    assert_eq!(simulated.clocks[0], real.clocks[0]);
    let real_presses = check_clock_semantics(&real.clocks, "capture 1");
    let sim_presses = check_clock_semantics(&simulated.clocks, "simulator");
    assert_eq!(sim_presses, moves.len(), "one press per ply");
    assert!(
        real_presses + 2 >= moves.len(),
        "{real_presses} presses in the capture"
    );
    let (last_real, last_sim) = (
        real.clocks.last().unwrap(),
        simulated.clocks.last().unwrap(),
    );
    assert!(!last_real.status.running && !last_sim.status.running);
    // About one clock message per second while running, as in the capture.
    let per_ply = |s: &Summary| s.clocks.len() as f64 / moves.len() as f64;
    assert!(per_ply(&simulated) > 2.0 && per_ply(&real) > 2.0);
}
