//! `eboardctl clock-message` / `ShowClockMessage` against the real eboardd and the simulator
//! on ptys: the simulated DGT 3000 shows the text and acknowledges it, the times come back
//! (0x03) after a few seconds, a clock that never acknowledges gets the command twice, and a
//! board without a clock or a listen-only board is refused with a named error.

mod common;
mod ctl_support;

use std::time::Duration;

use common::proxies::fresh;
use common::sim::sim_board;
use common::{Bus, Daemon, WAIT, wait_property, within};
use ctl_support::ctl;
use eboard_sim::{BoardOptions, ClockPresence, SimHandle};

async fn display(sim: &SimHandle) -> Option<String> {
    sim.snapshot().await.unwrap().display_text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clock_shows_the_message_and_refusals_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let with = |clock| BoardOptions {
        clock,
        ..BoardOptions::default()
    };
    let ok = sim_board(dir.path(), "c1", 1.0, with(ClockPresence::Present)).await;
    let absent = sim_board(dir.path(), "c2", 1.0, with(ClockPresence::Absent)).await;
    let mute = sim_board(dir.path(), "c3", 1.0, with(ClockPresence::NotAnswering)).await;
    let quiet = sim_board(dir.path(), "c4", 1.0, with(ClockPresence::Present)).await;
    let config = dir.path().join("eboardd.toml");
    let port = |n: &str| dir.path().join(n).display().to_string();
    std::fs::write(
        &config,
        format!(
            "[[board]]\nport = \"{}\"\n[[board]]\nport = \"{}\"\n[[board]]\nport = \"{}\"\n\
             [[board]]\nport = \"{}\"\nlisten_only = true\n",
            port("c1"),
            port("c2"),
            port("c3"),
            port("c4")
        ),
    )
    .unwrap();
    let bus = Bus::start(dir.path()).await;
    let mut daemon = Daemon::spawn(&bus, dir.path(), &["--config", config.to_str().unwrap()]);
    let conn = bus.client().await;
    daemon.wait_for_name(&conn).await;
    for (id, clock) in [("c1", true), ("c2", false), ("c3", true)] {
        let b = fresh(&conn, id).await;
        let proxy = common::proxies::board(&conn, id).await;
        let mut connected = proxy.receive_connected_changed().await;
        wait_property(&mut connected, "the board answers", |c| *c).await;
        if clock {
            let mut stream = proxy.receive_clock_connected_changed().await;
            wait_property(&mut stream, "the clock reports", |c| *c).await;
        }
        drop(b);
    }

    // The DGT 3000 shows it and acknowledges it; eboardctl returns after the ack.
    let before = ok.snapshot().await.unwrap().stats;
    let out = ctl(&bus.address, &["clock-message", "c1", "BOARD", "7"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains("the clock shows \"BOARD 7\""),
        "{out:?}"
    );
    assert_eq!(display(&ok).await.as_deref(), Some("BOARD 7 "));
    let after = ok.snapshot().await.unwrap().stats;
    assert_eq!(
        after.clock_texts,
        before.clock_texts + 1,
        "sent once: it was acked"
    );
    assert!(after.acks_sent > before.acks_sent);
    // Then the times come back.
    within(WAIT, "the times back on the display (0x03)", async {
        while display(&ok).await.is_some() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;

    // Too long for a DGT 3000.
    let out = ctl(&bus.address, &["clock-message", "c1", "NINE CHARS"]).await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("Error.InvalidArgument") && out.stderr.contains("at most 8"),
        "{out:?}"
    );

    // No clock behind the board.
    let out = ctl(&bus.address, &["clock-message", "c2", "HELLO"]).await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("org.eboardd.Bridge1.Error.NoClock"),
        "{out:?}"
    );

    // A clock that never acknowledges: sent, sent again once, then a named error.
    let before = mute.snapshot().await.unwrap().stats.clock_texts;
    let out = ctl(&bus.address, &["clock-message", "c3", "HELLO"]).await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .contains("org.eboardd.Bridge1.Error.ClockTimeout"),
        "{out:?}"
    );
    assert_eq!(mute.snapshot().await.unwrap().stats.clock_texts, before + 2);

    // Listen-only: eboardd never writes to the board.
    let out = ctl(&bus.address, &["clock-message", "c4", "HELLO"]).await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("org.eboardd.Bridge1.Error.ListenOnly"),
        "{out:?}"
    );
    assert_eq!(
        quiet.snapshot().await.unwrap().stats.commands,
        0,
        "nothing was written"
    );

    for sim in [&ok, &absent, &mute, &quiet] {
        sim.shutdown().await;
    }
}
