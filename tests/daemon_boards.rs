//! End-to-end, the DGT boards besides the USB e-board: the real eboardd on a private bus and
//! the simulator's boards on ptys.
//!
//! - A Bluetooth e-board is named `dgt-bluetooth` and its battery published; its link drops
//!   (1–30 s of board time, several per game, some in a time scramble, one its battery
//!   running out) lose no move, invent none and accuse nobody. While the board keeps its
//!   power its memory covers the gap; the drop of a board whose battery ran out is a gap like
//!   an unplugged board's, which the arbiter answers when the board alone cannot bound it.
//! - A Revelation II is named `dgt-revelation2`; a firmware that turns its own reporting
//!   round (3.25) set up with Black on the connector side is never turned a second time, and
//!   an older one (3.21) is turned by the daemon, with and without a clock; text goes to its
//!   own display with 0x0D.
//!
//! Every wait is on an event (a property, a signal, the simulator's state), never on a timer.

mod common;

use common::events::{Events, accusations};
use common::proxies;
use common::rig::{quick, ready_to_play, sans, wait_moves};
use common::sim::sim_board;
use common::{Setup, wait_property};
use eboard_core::board::Orientation;
use eboard_sim::{
    Action, BoardOptions, ClockPresence, Pace, Scenario, ScenarioOptions, SimBattery, SimHandle,
    Step, bluetooth_board, default_game, revelation_board,
};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Board time runs this much faster than the wall clock: a 30 s drop takes 3 s.
const SPEED: f64 = 10.0;

/// The daemon serving one simulated board `id` with `opts`, the board in update mode and the
/// game started.
async fn served(id: &str, opts: BoardOptions, extra: &[&str]) -> (Setup, SimHandle, Events) {
    let dir = tempfile::tempdir().unwrap();
    let sim = sim_board(dir.path(), id, SPEED, opts).await;
    let port = sim.path().display().to_string();
    let mut args = vec!["--port", port.as_str()];
    args.extend(extra);
    let s = Setup::start_in(dir, &args).await;
    let mut events = Events::start(&s.conn, id).await;
    ready_to_play(&sim, &mut events).await;
    (s, sim, events)
}

/// A game's moves in SAN, as the `Moves` property has them, and in UCI.
fn san_list(game: &eboard_sim::PgnGame) -> (Vec<String>, Vec<String>) {
    use shakmaty::{CastlingMode, san::SanPlus, uci::UciMove};
    let mut pos = game.start_position().unwrap();
    game.moves()
        .unwrap()
        .into_iter()
        .map(|m| {
            let uci = UciMove::from_move(m, CastlingMode::Standard).to_string();
            (
                SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string(),
                uci,
            )
        })
        .unzip()
}

/// A time scramble: a ply every 70–250 ms of board time.
fn scramble() -> Pace {
    Pace {
        think_ms: (70, 250),
        press_ms: (10, 30),
        hand_ms: (10, 30),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bluetooth_board_shows_its_battery_and_loses_no_move_to_its_drops() {
    let id = "bt1";
    let (s, sim, events) = served(id, bluetooth_board(15), &[]).await;
    let b = proxies::board(&s.conn, id).await;
    let mut model = b.receive_board_model_changed().await;
    wait_property(&mut model, "BoardModel = dgt-bluetooth", |m| {
        m == "dgt-bluetooth"
    })
    .await;
    let mut battery = b.receive_battery_changed().await;
    wait_property(&mut battery, "Battery = (15, false)", |v| *v == (15, false)).await;

    let (game, ucis) = san_list(&default_game());
    let mut rng = SmallRng::seed_from_u64(42);
    // Six drops over the game, the last two in a scramble, the fourth the battery running
    // out (the board switches off: its memory has nothing for that gap).
    let drops = [8usize, 19, 30, 41, 55, 66];
    let mut played = 0;
    let mut connected = b.receive_connected_changed().await;
    let mut sc = Scenario::new(
        &sim,
        ScenarioOptions {
            noise: eboard_sim::Noise::Clean,
            ..quick(100)
        },
    );
    for (k, &at) in drops.iter().enumerate() {
        if k == 4 {
            sc.set_pace(scramble());
        }
        sc.run(&[Step::Moves(game[played..at].to_vec())])
            .await
            .unwrap();
        played = at;
        wait_moves(&events, &game[..played]).await;
        let battery_out = k == 3;
        if battery_out {
            sim.act(Action::SetBattery(SimBattery {
                percent: 0,
                charging: false,
            }))
            .await
            .unwrap();
        }
        sc.step(&Step::Unplug).await.unwrap();
        wait_property(&mut connected, "Connected = false", |c| !*c).await;
        // 1–30 s without a link; up to two plies made meanwhile (one when the board is off:
        // nothing logs them, so the board alone must tell).
        let during = if battery_out {
            1
        } else {
            rng.random_range(0..=2)
        };
        let down_ms: u64 = rng.random_range(1_000..=30_000);
        sc.run(&[
            Step::Pause(down_ms / 2),
            Step::Moves(game[played..played + during].to_vec()),
            Step::Pause(down_ms / 2),
        ])
        .await
        .unwrap();
        played += during;
        if battery_out {
            sim.act(Action::SetBattery(SimBattery {
                percent: 40,
                charging: true,
            }))
            .await
            .unwrap();
        }
        sc.step(&Step::Replug).await.unwrap();
        wait_property(&mut connected, "Connected = true", |c| *c).await;
        if battery_out {
            wait_property(&mut battery, "Battery = (40, true)", |v| *v == (40, true)).await;
            // The board was off: its memory has nothing of the gap and the clock has no
            // increment to count presses by, so the daemon cannot bound the plies made and
            // asks the arbiter, who answers from the scoresheets.
            let mut gap = b.receive_gap_changed().await;
            wait_property(&mut gap, "Gap waiting for the arbiter", |g| {
                g.contains("ResolveGap")
            })
            .await;
            b.resolve_gap(&ucis[played - during..played]).await.unwrap();
            wait_property(&mut gap, "Gap closed", |g| g.is_empty()).await;
        }
    }
    sc.run(&[Step::Moves(game[played..].to_vec())])
        .await
        .unwrap();
    wait_moves(&events, &game).await;
    let now = proxies::fresh(&s.conn, id).await;
    assert_eq!(
        now.moves().await.unwrap(),
        game,
        "no move lost, none invented"
    );
    assert_eq!(now.gap().await.unwrap(), "");
    assert!(
        accusations(&events.all()).is_empty(),
        "nobody accused: {:?}",
        accusations(&events.all())
    );
    assert_eq!(now.board_model().await.unwrap(), "dgt-bluetooth");
    assert_eq!(now.battery().await.unwrap(), (40, true));
}

/// A USB board has no battery: `Battery` stays (-1, false), and it is named `dgt`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_usb_board_is_dgt_without_a_battery() {
    let id = "usb1";
    let (s, _sim, _events) = served(id, BoardOptions::default(), &[]).await;
    let b = proxies::board(&s.conn, id).await;
    let mut model = b.receive_board_model_changed().await;
    wait_property(&mut model, "BoardModel = dgt", |m| m == "dgt").await;
    let now = proxies::fresh(&s.conn, id).await;
    assert_eq!(now.battery().await.unwrap(), (-1, false));
    assert_eq!(now.serial_number().await.unwrap(), "13116");
}

/// A Revelation II set up with Black's pieces on the connector side: the game is read the
/// right way round whatever its firmware does, and never turned a second time.
async fn revelation_reversed(id: &str, firmware: (u8, u8), clock: ClockPresence) {
    let opts = BoardOptions {
        orientation: Orientation::Reversed,
        clock,
        ..revelation_board(firmware)
    };
    let (s, sim, events) = served(id, opts, &[]).await;
    let b = proxies::board(&s.conn, id).await;
    let mut model = b.receive_board_model_changed().await;
    wait_property(&mut model, "BoardModel = dgt-revelation2", |m| {
        m == "dgt-revelation2"
    })
    .await;
    let line = sans(&["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6", "O-O"]);
    let mut sc = Scenario::new(
        &sim,
        ScenarioOptions {
            noise: eboard_sim::Noise::Clean,
            ..quick(5)
        },
    );
    sc.run(&[Step::Moves(line.clone())]).await.unwrap();
    wait_moves(&events, &line).await;
    let now = proxies::fresh(&s.conn, id).await;
    assert_eq!(now.moves().await.unwrap(), line);
    assert_eq!(
        now.placement().await.unwrap(),
        "r1bqkb1r/1ppp1ppp/p1n2n2/4p3/B3P3/5N2/PPPP1PPP/RNBQ1RK1"
    );
    assert!(accusations(&events.all()).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revelation_that_turns_itself_is_not_turned_again_with_a_clock() {
    revelation_reversed("rev_new_clock", (3, 25), ClockPresence::Present).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revelation_that_turns_itself_is_not_turned_again_without_a_clock() {
    revelation_reversed("rev_new", (3, 25), ClockPresence::Absent).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_older_revelation_is_turned_by_the_daemon_with_a_clock() {
    revelation_reversed("rev_old_clock", (3, 21), ClockPresence::Present).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_older_revelation_is_turned_by_the_daemon_without_a_clock() {
    revelation_reversed("rev_old", (3, 21), ClockPresence::Absent).await;
}

/// The cabling check's text reaches a Revelation II's own display (0x0D) from firmware 3.25.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_goes_to_a_revelations_own_display() {
    let id = "rev_text";
    let (s, sim, _events) = served(id, revelation_board((3, 25)), &[]).await;
    let b = proxies::board(&s.conn, id).await;
    let mut model = b.receive_board_model_changed().await;
    wait_property(&mut model, "BoardModel = dgt-revelation2", |m| {
        m == "dgt-revelation2"
    })
    .await;
    let mut clock = b.receive_clock_connected_changed().await;
    wait_property(&mut clock, "ClockConnected", |c| *c).await;
    // Eleven characters: more than a DGT 3000 shows, as many as the Revelation's display.
    b.show_clock_message("TABLE 12 OK").await.unwrap();
    let snap = sim.snapshot().await.unwrap();
    assert!(
        snap.display_text.as_deref() == Some("TABLE 12 OK") || snap.stats.clock_texts >= 1,
        "{snap:?}"
    );
    assert!(snap.stats.clock_texts >= 1);
    let err = b.show_clock_message("TWELVE CHARS").await.unwrap_err();
    assert!(
        proxies::error_message(&err).contains("Revelation II"),
        "{err}"
    );
}
