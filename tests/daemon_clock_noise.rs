//! One noisy clock frame never decides a game, end to end: the crate's simulator on a pty
//! sends garbled copies of its clock's frame (BWTIME) between its own frames — the White flag
//! bit, the Black flag bit, the lever bit, a jump of eight hours — to the `eboardd` binary,
//! and a zbus client on a private bus sees the game go on (no `FlagFell`, no
//! `IllegalMoveCompleted`, no `GameEnded`); the real flag fall afterwards is still called.

mod common;

use common::Setup;
use common::events::{Ev, Event, Events};
use common::rig::{quick, ready_to_play, sans, wait_moves};
use common::sim::sim_board;
use eboard_core::vocab::{GameResult, Player, Termination};
use eboard_sim::{Action, BoardOptions, ClockSetup, Scenario, Step};

/// Payload masks of single-bit flips (payload bytes P0..P6 of the BWTIME frame).
const WHITE_FLAG: [u8; 7] = [0, 0, 0, 0x10, 0, 0, 0]; // P3 bit 4: left display (White's)
const BLACK_FLAG: [u8; 7] = [0x10, 0, 0, 0, 0, 0, 0]; // P0 bit 4: right display (Black's)
const LEVER: [u8; 7] = [0, 0, 0, 0, 0, 0, 0x02]; // P6 bit 1
const EIGHT_HOURS: [u8; 7] = [0, 0, 0, 0x08, 0, 0, 0]; // P3 bit 3: White's hours

fn decisive(events: &Events) -> Vec<String> {
    events
        .all()
        .iter()
        .filter(|e| {
            matches!(
                e,
                Ev::Signal(
                    Event::FlagFell { .. }
                        | Event::IllegalMoveCompleted { .. }
                        | Event::GameEnded { .. }
                )
            )
        })
        .map(|e| format!("{e:?}"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbled_clock_frames_decide_nothing_and_the_real_flag_still_falls() {
    let dir = tempfile::tempdir().unwrap();
    let board = BoardOptions {
        clock_setup: ClockSetup {
            base_ms: 60_000,
            increment_ms: 0,
        },
        ..BoardOptions::default()
    };
    let sim = sim_board(dir.path(), "noise", 10.0, board).await;
    let port = sim.path().display().to_string();
    let s = Setup::start_in(dir, &["--port", &port, "--rules", "rapid"]).await;
    let mut events = Events::start(&s.conn, "noise").await;
    ready_to_play(&sim, &mut events).await;
    let mut sc = Scenario::new(&sim, quick(7));
    sc.run(&[Step::Moves(sans(&["e4", "e5", "Nf3"]))])
        .await
        .unwrap();
    wait_moves(&events, &sans(&["e4", "e5", "Nf3"])).await;
    // Black thinks; between the clock's own frames (one a second), each garbled frame.
    for mask in [WHITE_FLAG, BLACK_FLAG, LEVER, EIGHT_HOURS] {
        sim.sleep(1_500).await;
        sim.act(Action::GarbleClockFrame(mask)).await.unwrap();
    }
    sim.sleep(2_000).await;
    // The game goes on: Black's reply is published, and nothing was decided.
    sc.run(&[Step::Moves(sans(&["Nc6"]))]).await.unwrap();
    wait_moves(&events, &sans(&["e4", "e5", "Nf3", "Nc6"])).await;
    assert_eq!(
        decisive(&events),
        Vec::<String>::new(),
        "{}",
        events.describe()
    );
    // Now White lets his flag really fall: it is called.
    sc.run(&[Step::FlagFall]).await.unwrap();
    let flag = events.next_signal("FlagFell").await;
    assert_eq!(
        flag,
        Event::FlagFell {
            player: Player::White
        }
    );
    let ended = events.next_signal("GameEnded").await;
    assert_eq!(
        ended,
        Event::GameEnded {
            result: GameResult::BlackWins,
            termination: Termination::TimeForfeit
        }
    );
    assert!(
        !events
            .all()
            .iter()
            .any(|e| matches!(e, Ev::Signal(Event::IllegalMoveCompleted { .. }))),
        "{}",
        events.describe()
    );
}
