//! The DGT XL through the contract: the real eboardd, a private bus and the simulated XL on
//! a pty. Its version names it (`ClockModel` "dgt-xl", announced by `PropertiesChanged`), the
//! cabling check's text reaches its six 7-segment digits through acknowledgements of the
//! undocumented (0x20, 0, 0, 0) kind without stalling the link, its option 13 (periods ended
//! by its own move counter) is judged from the record when a press made no move, and its
//! time-ended options behave like a DGT 3000's FIDE modes.

mod common;
mod ctl_support;

use std::time::Duration;

use common::events::{Ev, Event, Events};
use common::proxies::board;
use common::rig::{clean_scenario, moves, ready_to_play, sans, wait_moves};
use common::sim::sim_board;
use common::{Bus, Daemon, WAIT, wait_property, within};
use ctl_support::ctl;
use eboard_sim::{BoardOptions, ClockKind, ClockPresence, ClockSide, SimHandle};

fn xl(quirky_acks: bool) -> BoardOptions {
    BoardOptions {
        clock_kind: ClockKind::Xl { quirky_acks },
        ..BoardOptions::default()
    }
}

async fn display(sim: &SimHandle) -> Option<String> {
    sim.snapshot().await.unwrap().display_text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_xl_is_named_shows_the_cabling_check_and_its_quirky_acks_never_stall() {
    let dir = tempfile::tempdir().unwrap();
    let sim = sim_board(dir.path(), "xl", 1.0, xl(true)).await;
    let three = sim_board(dir.path(), "d3", 1.0, BoardOptions::default()).await;
    let _none = sim_board(
        dir.path(),
        "nc",
        1.0,
        BoardOptions {
            clock: ClockPresence::Absent,
            ..BoardOptions::default()
        },
    )
    .await;
    let bus = Bus::start(dir.path()).await;
    let conn = bus.client().await;
    let mut events = Events::start(&conn, "xl").await;
    let port = |n: &str| dir.path().join(n).display().to_string();
    let mut daemon = Daemon::spawn(
        &bus,
        dir.path(),
        &[
            "--port",
            &port("xl"),
            "--port",
            &port("d3"),
            "--port",
            &port("nc"),
        ],
    );
    daemon.wait_for_name(&conn).await;
    let proxy = board(&conn, "xl").await;
    let mut model = proxy.receive_clock_model_changed().await;
    wait_property(&mut model, "ClockModel dgt-xl", |m| m == "dgt-xl").await;
    events
        .wait_until("PropertiesChanged naming ClockModel", |all| {
            all.iter().any(
                |e| matches!(e, Ev::Changed(names, _) if names.iter().any(|n| n == "ClockModel")),
            )
        })
        .await;
    let other = board(&conn, "d3").await;
    let mut model3 = other.receive_clock_model_changed().await;
    wait_property(&mut model3, "ClockModel dgt3000", |m| m == "dgt3000").await;
    // Without a clock: empty (the board answers, no clock reports, no version comes).
    let bare = board(&conn, "nc").await;
    let mut connected = bare.receive_connected_changed().await;
    wait_property(&mut connected, "the clock-less board answers", |c| *c).await;
    assert_eq!(bare.clock_model().await.unwrap(), "");

    // The cabling check: six characters on the XL's 7-segment digits, acknowledged with
    // (0x20, 0, 0, 0): eboardctl returns at once, the text went out once, not again.
    let before = sim.snapshot().await.unwrap().stats;
    let out = ctl(&bus.address, &["clock-message", "xl", "BOARD7"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(display(&sim).await.as_deref(), Some("board7"));
    let after = sim.snapshot().await.unwrap().stats;
    assert_eq!(after.clock_texts, before.clock_texts + 1, "sent once");
    let status = ctl(&bus.address, &["status", "xl"]).await;
    assert!(status.stdout.contains("Clock  DGT XL"), "{status:?}");
    // The times come back (END, answered the same way), and the next message goes at once.
    within(WAIT, "the times back on the XL", async {
        while display(&sim).await.is_some() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    let out = ctl(&bus.address, &["clock-message", "xl", "b 12"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(display(&sim).await.as_deref(), Some("b 12"));
    // Seven characters do not fit six digits: named, nothing sent.
    let out = ctl(&bus.address, &["clock-message", "xl", "TOOLONG"]).await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("at most 6"), "{out:?}");
    // The DGT 3000 next to it still gets its eight ASCII characters.
    let out = ctl(&bus.address, &["clock-message", "d3", "BOARD 7"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(display(&three).await.as_deref(), Some("BOARD 7 "));

    // The link goes on: a game is followed on the XL's board.
    ready_to_play(&sim, &mut events).await;
    let mut play = clean_scenario(&sim, 5);
    play.step(&moves(&["e4", "e5", "Nf3"])).await.unwrap();
    wait_moves(&events, &sans(&["e4", "e5", "Nf3"])).await;
    drop(daemon);
}

/// Waits until board `id`'s `Pgn` (read from the daemon, not a cache) contains `needle`
/// once its lines are joined; returns it.
async fn wait_pgn(conn: &zbus::Connection, id: &str, needle: &str) -> String {
    let proxy = common::proxies::fresh(conn, id).await;
    let mut last = String::new();
    let found = tokio::time::timeout(WAIT, async {
        loop {
            last = proxy.pgn().await.unwrap().replace('\n', " ");
            if last.contains(needle) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    assert!(found.is_ok(), "{id}: no {needle:?} in the Pgn: {last}");
    last
}

/// Runs `eboardd --config` on the simulated boards named in `boards` (name, options, the
/// `[[board]]` table's extra lines).
async fn start(
    dir: &std::path::Path,
    boards: &[(&str, BoardOptions, &str)],
) -> (Vec<SimHandle>, Bus, Daemon, zbus::Connection) {
    let mut sims = Vec::new();
    let mut config = String::new();
    for (name, opts, extra) in boards {
        sims.push(sim_board(dir, name, 1.0, opts.clone()).await);
        config.push_str(&format!(
            "[[board]]\nport = \"{}\"\n{extra}\n",
            dir.join(name).display()
        ));
    }
    let path = dir.join("eboardd.toml");
    std::fs::write(&path, config).unwrap();
    let bus = Bus::start(dir).await;
    let conn = bus.client().await;
    let mut daemon = Daemon::spawn(&bus, dir, &["--config", path.to_str().unwrap()]);
    daemon.wait_for_name(&conn).await;
    (sims, bus, daemon, conn)
}

/// Option 13 scaled down (100 min for 40 moves, 50 min for 20, then 10 min, 30 s a move): 4
/// moves in 5 s, 2 in 6 s, then 5 s, 1 s a move.
const OPTION_13: &str = "4/5+1:2/6+1:5+1";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn option_13_a_press_without_a_move_is_told_and_the_period_judged_from_the_record() {
    let dir = tempfile::tempdir().unwrap();
    let opts = BoardOptions {
        time_control: Some(OPTION_13.parse().unwrap()),
        clock_by_counter: true,
        ..xl(false)
    };
    let extra = format!(
        "time_control = \"{OPTION_13}\"\nclock_periods = \"moves\"\nedition = \"fide-2005\"\n\
         white_display = \"left\""
    );
    let (sims, _bus, daemon, conn) = start(dir.path(), &[("x13", opts, &extra)]).await;
    let sim = &sims[0];
    let mut events = Events::start(&conn, "x13").await;
    let proxy = board(&conn, "x13").await;
    ready_to_play(sim, &mut events).await;
    let mut play = clean_scenario(sim, 7);
    play.step(&moves(&["e4", "e5"])).await.unwrap();
    wait_moves(&events, &sans(&["e4", "e5"])).await;
    // White presses without a move; Black presses back without one: the XL counts both.
    sim.press_lever(ClockSide::Left).await.unwrap();
    sim.sleep(300).await;
    sim.press_lever(ClockSide::Right).await.unwrap();
    let told = wait_pgn(
        &conn,
        "x13",
        "Clock move counter 1 ahead for White: it counted 2 presses",
    )
    .await;
    assert!(
        told.contains("Clock move counter 1 ahead for Black"),
        "{told}"
    );
    assert!(
        told.contains(
            "it will add period 2 at his move 3 instead of 4. The period is judged from the \
             record (6.4)"
        ),
        "{told}"
    );
    // Told before it matters: the clock has not added period 2 yet.
    assert_eq!(proxy.moves().await.unwrap().len(), 2);
    // White's 3rd move is the clock's 4th press: period 2 added early. Then White thinks
    // until his display is down to what was added: his period 1 is gone with 3 of 4 moves.
    play.step(&moves(&["Nf3", "Nc6", "Bc4", "Nf6"]))
        .await
        .unwrap();
    wait_moves(&events, &sans(&["e4", "e5", "Nf3", "Nc6", "Bc4", "Nf6"])).await;
    let fell = within(Duration::from_secs(30), "White's flag in period 1", async {
        events.next_signal("FlagFell").await
    })
    .await;
    assert!(
        matches!(&fell, Event::FlagFell { player } if *player == eboard_core::vocab::Player::White),
        "{fell:?}"
    );
    wait_pgn(
        &conn,
        "x13",
        "White completed 3 of the 4 moves due when his time for period 1 ran out (the clock's \
         move counter had added period 2 early)",
    )
    .await;
    let now = common::proxies::fresh(&conn, "x13").await;
    assert_eq!(now.result().await.unwrap(), "0-1");
    drop(daemon);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_xl_s_time_ended_options_are_judged_like_a_dgt_3000() {
    // Options 8, 9, 17, 18: the period ends when a player's time runs out (steady flag, the
    // next period added to both sides); 4 moves in 3 s, then 5 s.
    let control = "4/3+1:5+1";
    let opts = |clock_kind| BoardOptions {
        time_control: Some(control.parse().unwrap()),
        clock_kind,
        ..BoardOptions::default()
    };
    let extra = format!("time_control = \"{control}\"\nwhite_display = \"left\"");
    for (id, kind, model) in [
        ("xt", ClockKind::Xl { quirky_acks: false }, "dgt-xl"),
        ("dt", ClockKind::Dgt3000, "dgt3000"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (sims, _bus, daemon, conn) = start(dir.path(), &[(id, opts(kind), &extra)]).await;
        let mut events = Events::start(&conn, id).await;
        let proxy = board(&conn, id).await;
        ready_to_play(&sims[0], &mut events).await;
        let mut play = clean_scenario(&sims[0], 3);
        play.step(&moves(&["e4", "e5", "Nf3", "Nc6", "Bc4", "Nf6"]))
            .await
            .unwrap();
        let fell = events.next_signal("FlagFell").await;
        assert!(
            matches!(&fell, Event::FlagFell { player } if *player == eboard_core::vocab::Player::White),
            "{id}: {fell:?}"
        );
        wait_pgn(
            &conn,
            id,
            "White completed 3 of the 4 moves due when his time for period 1 ran out",
        )
        .await;
        assert_eq!(proxy.clock_model().await.unwrap(), model);
        drop(daemon);
    }
}
