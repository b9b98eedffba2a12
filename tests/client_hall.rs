//! The shared client model against the real eboardd on a private bus: `watch_bus` sends a
//! snapshot, every change in order, and follows the daemon restarting and the bus going away.

mod common;

use common::board::FakeBoard;
use common::{Bus, Daemon, WAIT, within};
use eboardd::client::bus::BusChoice;
use eboardd::client::{Hall, HallUpdate, watch_bus};
use tokio::sync::mpsc;

/// Receives updates (applying them to `hall`) until one satisfies `pred`; returns it.
async fn until(
    rx: &mut mpsc::Receiver<HallUpdate>,
    hall: &mut Hall,
    what: &str,
    pred: impl Fn(&HallUpdate, &Hall) -> bool,
) -> HallUpdate {
    within(WAIT, what, async {
        loop {
            let update = rx.recv().await.expect("watch_bus keeps sending");
            hall.apply(&update);
            if pred(&update, hall) {
                return update;
            }
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn follows_boards_and_daemon_restarts_and_bus_loss() {
    let dir = tempfile::tempdir().unwrap();
    let mut bus = Bus::start(dir.path()).await;
    let board = FakeBoard::new(dir.path(), "hall.1");
    let port = board.path_str();
    let (tx, mut rx) = mpsc::channel(64);
    let watcher = tokio::spawn(watch_bus(BusChoice::Address(bus.address.clone()), tx));
    let mut hall = Hall::default();

    // No daemon yet: the source says so, once.
    let first = until(
        &mut rx,
        &mut hall,
        "SourceDown before eboardd runs",
        |_, _| true,
    )
    .await;
    assert!(
        matches!(&first, HallUpdate::SourceDown { reason } if reason.contains("not running")),
        "{first:?}"
    );

    let mut daemon = Daemon::spawn(&bus, dir.path(), &["--port", &port]);
    daemon.wait_for_name(&bus.client().await).await;
    until(&mut rx, &mut hall, "the board connected", |_, h| {
        h.source_up
            && h.boards
                .get("hall_1")
                .is_some_and(|p| p["Connected"] == true)
    })
    .await;
    let props = &hall.boards["hall_1"];
    assert_eq!(props["Name"], "hall.1");
    assert_eq!(props["Port"], port.as_str());
    assert!(props.contains_key("Moves") && props.contains_key("IllegalMoves"));

    // eboardd stops: SourceDown; it starts again: a Snapshot with the board.
    daemon.signal(nix::sys::signal::Signal::SIGTERM);
    daemon.wait(WAIT).await;
    until(&mut rx, &mut hall, "SourceDown after SIGTERM", |u, _| {
        matches!(u, HallUpdate::SourceDown { .. })
    })
    .await;
    assert!(!hall.source_up);
    let mut daemon = Daemon::spawn(&bus, dir.path(), &["--port", &port]);
    daemon.wait_for_name(&bus.client().await).await;
    let snap = until(
        &mut rx,
        &mut hall,
        "a snapshot after the restart",
        |u, _| matches!(u, HallUpdate::Snapshot(_)),
    )
    .await;
    match snap {
        HallUpdate::Snapshot(boards) => {
            assert_eq!(
                boards.iter().map(|b| b.0.as_str()).collect::<Vec<_>>(),
                ["hall_1"]
            )
        }
        other => panic!("{other:?}"),
    }

    // The bus itself goes away: SourceDown, and watch_bus keeps trying (does not return).
    bus.kill();
    until(
        &mut rx,
        &mut hall,
        "SourceDown after the bus died",
        |u, _| matches!(u, HallUpdate::SourceDown { .. }),
    )
    .await;
    assert!(!watcher.is_finished(), "watch_bus must keep retrying");
    drop(daemon);
    // Nobody listens any more: it returns.
    drop(rx);
    within(WAIT, "watch_bus to return", watcher).await.unwrap();
}
