//! Scenario steps and board options on a real pty, checked through the decoder: takebacks,
//! illegal placements, adjustments, flag falls, new games, unplugged moves, orientation,
//! missing / silent clocks, a slow board, line noise.

mod session_support;
mod sim_support;

use std::time::Duration;

use eboard_core::board::{Orientation, Placement};
use eboard_core::dgt::{ClockReading, Decoder, Message};
use eboard_sim::{
    BoardOptions, ClockPresence, ClockSetup, Noise, NoiseOptions, Pace, Scenario, ScenarioOptions,
    SimBoard, SimHandle, SimOptions, Step,
};
use session_support::placement_after;
use shakmaty::Square;
use sim_support::{Collector, attach, decode_clean, reconstruct};

async fn connected(board: BoardOptions, host: &[u8]) -> (SimHandle, Collector) {
    let sim = SimBoard::spawn(SimOptions {
        board,
        speed: f64::INFINITY,
        ..SimOptions::default()
    })
    .await
    .unwrap();
    let collector = attach(&sim, &sim.path(), host).await;
    (sim, collector)
}

fn opts(seed: u64) -> ScenarioOptions {
    ScenarioOptions {
        pace: Pace::quick(),
        noise: Noise::Noisy,
        seed,
        ..ScenarioOptions::default()
    }
}

fn moves(sans: &[&str]) -> Step {
    Step::Moves(sans.iter().map(|s| s.to_string()).collect())
}

fn clocks(messages: &[Message]) -> Vec<ClockReading> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::ClockTimes(t) => Some(*t),
            _ => None,
        })
        .collect()
}

async fn finish(sim: SimHandle, collector: Collector) -> Vec<Message> {
    let (chunks, _port) = collector.finish(Duration::from_millis(50)).await;
    sim.shutdown().await;
    decode_clean(&chunks.concat())
}

#[tokio::test]
async fn takeback_illegal_placements_and_adjustments() {
    let (sim, collector) = connected(BoardOptions::default(), &[0x42, 0x4B]).await;
    let mut scenario = Scenario::new(&sim, opts(5));
    scenario
        .run(&[
            moves(&["e4", "e5", "Nf3"]),
            Step::TakeBack(1),
            // White's bishop cannot reach f3 from f1: put there, then taken back by hand.
            Step::IllegalPlacement {
                from: Square::F1,
                to: Square::F3,
            },
            Step::CorrectIllegal,
            Step::Adjust(Square::E4),
            moves(&["Nc3"]),
            // Black's illegal placement, completed by a press, then restored.
            Step::IllegalPlacement {
                from: Square::D8,
                to: Square::D5,
            },
            Step::PressClock,
            Step::CorrectIllegal,
        ])
        .await
        .unwrap();
    assert_eq!(scenario.played().uci, ["e2e4", "e7e5", "b1c3"]);
    let messages = finish(sim, collector).await;
    assert_eq!(
        reconstruct(&messages),
        placement_after(&["e4", "e5", "Nc3"])
    );
    // The illegal queen placement was on the wire: d5 held a black queen at some point.
    let d5 = Orientation::Normal.field_of_square(Square::D5);
    assert!(messages.iter().any(|m| matches!(m,
        Message::FieldUpdate { field, content: Some(p) } if *field == d5 && p.role == shakmaty::Role::Queen)));
    // Its press handed the clock to White: the last reading has the left (White) display running.
    assert!(clocks(&messages).last().unwrap().status.left_running);
}

#[tokio::test]
async fn flag_fall_then_new_game() {
    let board = BoardOptions {
        clock_setup: ClockSetup {
            base_ms: 5_000,
            increment_ms: 0,
        },
        ..BoardOptions::default()
    };
    let (sim, collector) = connected(board, &[0x42, 0x43]).await;
    let mut scenario = Scenario::new(&sim, opts(6));
    scenario
        .run(&[moves(&["d4", "d5"]), Step::FlagFall])
        .await
        .unwrap();
    let flagged = sim.snapshot().await.unwrap().clock;
    assert!(
        flagged.left_flags.flag_fallen,
        "White (left) to move ran out: {flagged:?}"
    );
    assert_eq!(flagged.left.as_millis(), 0);
    assert!(!flagged.right_flags.flag_fallen);
    scenario
        .run(&[
            Step::NewGame {
                clock: ClockSetup::default(),
            },
            Step::Pause(1_500),
            moves(&["c4"]),
        ])
        .await
        .unwrap();
    let messages = finish(sim, collector).await;
    let readings = clocks(&messages);
    assert!(readings.iter().any(|t| t.left_flags.flag_fallen));
    // After the reset: 3:02 each, stopped, White's display to run — then c4 started it.
    assert!(readings.iter().any(|t| t.left.as_millis() == 182_000
        && t.right.as_millis() == 182_000
        && !t.status.running
        && t.status.left_running));
    assert_eq!(reconstruct(&messages), placement_after(&["c4"]));
    // UPDATE mode repeats the reading while the clock stands still: about one a second.
    assert!(readings.len() >= 5);
}

#[tokio::test]
async fn moves_made_while_unplugged_show_in_the_next_dump() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("board");
    let sim = SimBoard::spawn(SimOptions {
        link: Some(link.clone()),
        speed: f64::INFINITY,
        ..SimOptions::default()
    })
    .await
    .unwrap();
    let collector = attach(&sim, &link, &[0x42, 0x4B]).await;
    let mut scenario = Scenario::new(&sim, opts(7));
    scenario
        .run(&[moves(&["e4"]), Step::Unplug, moves(&["c5", "Nf3"])])
        .await
        .unwrap();
    let (before, _old_port) = collector.finish(Duration::from_millis(50)).await;
    assert_eq!(
        reconstruct(&decode_clean(&before.concat())),
        placement_after(&["e4"])
    );
    scenario.run(&[Step::Replug]).await.unwrap();
    let collector = attach(&sim, &link, &[0x42, 0x4B]).await;
    scenario.run(&[moves(&["d6"])]).await.unwrap();
    let messages = finish(sim, collector).await;
    let Message::BoardDump(fields) = &messages[0] else {
        panic!("a dump first: {:?}", messages[0]);
    };
    assert_eq!(
        Placement::from_wire(fields, Orientation::Normal),
        placement_after(&["e4", "c5", "Nf3"])
    );
    assert_eq!(
        reconstruct(&messages),
        placement_after(&["e4", "c5", "Nf3", "d6"])
    );
}

#[tokio::test]
async fn reversed_board_without_clock() {
    let board = BoardOptions {
        orientation: Orientation::Reversed,
        clock: ClockPresence::Absent,
        ..BoardOptions::default()
    };
    let version = [0x2B, 0x03, 0x03, 0x09, 0x00];
    let mut host = vec![0x42, 0x41, 0x43];
    host.extend_from_slice(&version);
    let (sim, collector) = connected(board, &host).await;
    let mut scenario = Scenario::new(
        &sim,
        ScenarioOptions {
            press_clock: false,
            ..opts(8)
        },
    );
    scenario
        .run(&[moves(&["e4", "e5"]), Step::Pause(3_000)])
        .await
        .unwrap();
    let messages = finish(sim, collector).await;
    let Message::BoardDump(fields) = &messages[0] else {
        panic!("a dump first");
    };
    assert_eq!(
        Placement::start_orientation(fields),
        Some(Orientation::Reversed)
    );
    assert!(
        !messages.iter().any(|m| matches!(m, Message::ClockAck(_))),
        "no clock, no ack"
    );
    let readings = clocks(&messages);
    assert!(readings.len() >= 3, "UPDATE repeats the no-clock status");
    assert!(readings.iter().all(|t| !t.status.connected));
    assert_eq!(reconstruct(&messages), placement_after(&["e4", "e5"]));
}

#[tokio::test]
async fn clock_acks_present_and_silent() {
    let version = [0x2B, 0x03, 0x03, 0x09, 0x00];
    for (presence, acks) in [
        (ClockPresence::Present, 1),
        (ClockPresence::NotAnswering, 0),
    ] {
        let mut host = vec![0x4B];
        host.extend_from_slice(&version);
        let board = BoardOptions {
            clock: presence,
            ..BoardOptions::default()
        };
        let (sim, collector) = connected(board, &host).await;
        // Let the command reach the board before collecting stops.
        for _ in 0..100 {
            if sim.snapshot().await.unwrap().stats.clock_commands == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let messages = finish(sim, collector).await;
        let got: Vec<_> = messages
            .iter()
            .filter_map(|m| match m {
                Message::ClockAck(a) => Some(a.bytes),
                _ => None,
            })
            .collect();
        assert_eq!(got.len(), acks, "{presence:?}");
        if acks == 1 {
            assert_eq!(got[0], [0x10, 0x09, 0x20, 0x00], "DGT 3000 version 2.0");
        }
    }
}

#[tokio::test]
async fn slow_board_answers_late() {
    let board = BoardOptions {
        answer_delay_ms: 400,
        ..BoardOptions::default()
    };
    let (sim, collector) = connected(board, &[0x44, 0x4D]).await;
    for _ in 0..100 {
        if sim.snapshot().await.unwrap().stats.commands == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    sim.sleep(399).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(collector.len(), 0, "nothing before the delay is over");
    sim.sleep(1).await;
    let messages = finish(sim, collector).await;
    assert_eq!(
        messages,
        [Message::Version {
            major: 3,
            minor: 10
        }]
    );
}

#[tokio::test]
async fn line_noise_is_skipped_by_the_decoder() {
    let board = BoardOptions {
        noise: Some(NoiseOptions {
            mean_interval_ms: 500,
            max_len: 3,
            high_bit: false,
            seed: 9,
        }),
        ..BoardOptions::default()
    };
    let (sim, collector) = connected(board, &[0x42, 0x4B]).await;
    let mut scenario = Scenario::new(&sim, opts(10));
    scenario
        .run(&[moves(&["e4", "c5", "Nf3", "d6", "d4", "cxd4"])])
        .await
        .unwrap();
    let noise = sim.snapshot().await.unwrap().stats.noise_bytes;
    let (chunks, _port) = collector.finish(Duration::from_millis(50)).await;
    sim.shutdown().await;
    let (messages, stats) = Decoder::decode_all(&chunks.concat());
    assert!(noise > 0);
    assert_eq!(stats.skipped_bytes, noise);
    assert_eq!(
        reconstruct(&messages),
        placement_after(&["e4", "c5", "Nf3", "d6", "d4", "cxd4"])
    );
}
