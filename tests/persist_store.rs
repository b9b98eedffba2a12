//! The state directory end to end, with the `eboardd` binary on a private bus and a simulated
//! board: a disk that fills up during a game (a real small tmpfs when run as root, the
//! daemon's fault injector otherwise), journals of the version-1 format, and boards added
//! with `AddBoard` across restarts and removals.

mod common;

use std::path::Path;

use common::disk::{
    Disk, tmpfs_or_injector, wait_problem, wait_problem_over, watch_storage_problem,
};
use common::events::Events;
use common::proxies::{self, ManagerProxy};
use common::rig::{quick, ready_to_play, wait_moves};
use common::sim::{corpus_games, sim_board};
use common::{Daemon, Setup, WAIT, code, within};
use eboard_sim::{BoardOptions, Scenario, Step};

const SPEED: f64 = 10.0;

/// The walk-through: moves, the disk fills up, moves, space comes back, moves,
/// `kill -9`, restart: every move is there, and the problem was on the bus meanwhile.
async fn full_disk_during_a_game(dir: tempfile::TempDir, disk: Disk) {
    let game = corpus_games(1, 60..=120).remove(0);
    let sans = game.sans.clone();
    let sim = sim_board(dir.path(), "full", SPEED, BoardOptions::default()).await;
    let port = sim.path().display().to_string();
    let env = disk.env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let bus = common::Bus::start(dir.path()).await;
    let mut daemon = Daemon::spawn_env(&bus, dir.path(), &["--port", &port], &env);
    let conn = bus.client().await;
    daemon.wait_for_name(&conn).await;
    let problems = watch_storage_problem(&conn);
    let mut events = Events::start(&conn, "full").await;
    ready_to_play(&sim, &mut events).await;
    let mut sc = Scenario::new(&sim, quick(21));

    // 1. Moves while the disk takes everything.
    sc.run(&[Step::Moves(sans[..12].to_vec())]).await.unwrap();
    wait_moves(&events, &sans[..12]).await;
    assert!(problems.lock().unwrap().iter().all(|p| p.is_empty()));

    // 2. The disk fills up: the moves keep coming on the bus, and the bus says so.
    disk.fill();
    sc.run(&[Step::Moves(sans[12..44].to_vec())]).await.unwrap();
    wait_moves(&events, &sans[..44]).await;
    wait_problem(&problems, "the journal's problem on the bus", |seen| {
        seen.iter()
            .any(|p| p.contains("disk full") && p.contains("journal records"))
    })
    .await;

    // 3. Space comes back: the daemon catches up by itself and says so.
    disk.free();
    wait_problem_over(&problems).await;
    sc.run(&[Step::Moves(sans[44..56].to_vec())]).await.unwrap();
    wait_moves(&events, &sans[..56]).await;
    let b = proxies::fresh(&conn, "full").await;
    let before = b.moves().await.unwrap();
    assert_eq!(before, sans[..56].to_vec());
    let log = daemon.stderr();
    // One error when an episode begins and one line when it ends, not one per failed write.
    // (On a real small disk there may be two episodes: emptying the commit log at the first
    // failure gives its room back to the journals for a moment.)
    let began = log.matches("storage problem: state directory").count();
    let ended = log
        .matches("storage works again (was: state directory")
        .count();
    assert!(
        (1..=3).contains(&began) && began == ended,
        "one error per episode in the log:\n{log}"
    );

    // 4. kill -9 and restart: every move is back.
    daemon.kill9().await;
    let mut again = Daemon::spawn_env(&bus, dir.path(), &["--port", &port], &env);
    again.wait_for_name(&conn).await;
    let b = proxies::fresh(&conn, "full").await;
    assert_eq!(
        b.moves().await.unwrap(),
        before,
        "restored after the restart; the first daemon's log:\n{log}\nthe second's:\n{}",
        again.stderr()
    );
    let manager = ManagerProxy::new(&conn).await.unwrap();
    assert_eq!(manager.storage_problem().await.unwrap(), "");
    // The journal has no damage to report: nothing journalled was hurt by the failed writes.
    assert!(
        !again.stderr().contains("journal damage"),
        "{}",
        again.stderr()
    );
    drop(disk);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_disk_with_the_fault_injector() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("faults");
    full_disk_during_a_game(dir, Disk::Injected { file }).await;
}

/// On a real (tmpfs) filesystem when run as root, as CI does; without root the fault
/// injector stands in for the small filesystem, and the test says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_disk_on_a_small_filesystem() {
    let dir = tempfile::tempdir().unwrap();
    let disk = tmpfs_or_injector(dir.path());
    full_disk_during_a_game(dir, disk).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_1_journal_still_restores() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/journal-v1");
    let games = dir.path().join("state/games");
    std::fs::create_dir_all(&games).unwrap();
    std::fs::copy(
        fixture.join("games/board_1.journal"),
        games.join("board_1.journal"),
    )
    .unwrap();
    let expected = std::fs::read_to_string(fixture.join("board_1.expected.pgn")).unwrap();
    // No device behind the port: the board is served from its journal alone.
    let port = dir.path().join("board_1").display().to_string();
    let s = Setup::start_in(dir, &["--port", &port]).await;
    let b = proxies::fresh(&s.conn, "board_1").await;
    let moves = b.moves().await.unwrap();
    assert_eq!(
        moves.join(" "),
        "e4 e5 Nf3 Nc6 Bb5 a6 Ba4 Nf6 O-O Be7 Re1 b5 Bb3 d6"
    );
    assert_eq!(b.rules().await.unwrap(), "rapid");
    assert_eq!(b.pgn().await.unwrap(), expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn added_boards_come_back_after_a_restart_until_removed() {
    let dir = tempfile::tempdir().unwrap();
    let sim = sim_board(dir.path(), "added1", SPEED, BoardOptions::default()).await;
    let port = sim.path().display().to_string();
    let mut s = Setup::start_in(dir, &[]).await;
    let manager = ManagerProxy::new(&s.conn).await.unwrap();
    let mut events = Events::start(&s.conn, "added1").await;
    let path = manager.add_board(&port).await.unwrap();
    assert_eq!(path.as_str(), "/org/eboardd/Bridge1/Board/added1");
    ready_to_play(&sim, &mut events).await;
    let b = proxies::board(&s.conn, "added1").await;
    b.set_rules("blitz").await.unwrap();
    let first: Vec<String> = ["e4", "c5", "Nf3", "d6"].map(String::from).to_vec();
    let mut sc = Scenario::new(&sim, quick(5));
    sc.run(&[Step::Moves(first.clone())]).await.unwrap();
    wait_moves(&events, &first).await;

    // kill -9, then a plain restart with no --port: the added board is served again.
    s.daemon.kill9().await;
    let mut again = Daemon::spawn(&s.bus, s.dir.path(), &[]);
    again.wait_for_name(&s.conn).await;
    let b = proxies::fresh(&s.conn, "added1").await;
    assert_eq!(b.moves().await.unwrap(), first);
    assert_eq!(b.port().await.unwrap(), port);
    assert_eq!(b.rules().await.unwrap(), "blitz");
    let live = s.dir.path().join("state/pgn/live/added1.pgn");
    within(WAIT, "the live PGN rewritten", async {
        while !live.exists() {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await;

    // RemoveBoard: gone from the bus, its live PGN out of live/, and not back after a restart.
    let manager = ManagerProxy::new(&s.conn).await.unwrap();
    manager
        .remove_board(&zbus::ObjectPath::try_from("/org/eboardd/Bridge1/Board/added1").unwrap())
        .await
        .unwrap();
    assert!(!live.exists(), "the live PGN left live/");
    let moved = s.dir.path().join("state/pgn/removed/added1-1.pgn");
    let text = std::fs::read_to_string(&moved).expect("the live PGN moved to removed/");
    assert!(
        text.contains("1. e4 c5 2. Nf3 d6") || text.contains("1. e4"),
        "{text}"
    );
    again.signal(nix::sys::signal::Signal::SIGTERM);
    assert_eq!(code(again.wait(WAIT).await), 0);
    let mut third = Daemon::spawn(&s.bus, s.dir.path(), &[]);
    third.wait_for_name(&s.conn).await;
    let om = zbus::fdo::ObjectManagerProxy::builder(&s.conn)
        .destination("org.eboardd.Bridge1")
        .path("/org/eboardd/Bridge1")
        .build()
        .await
        .unwrap();
    let objects = om.get_managed_objects().await.unwrap();
    assert!(
        objects.keys().all(|p| !p.as_str().ends_with("/added1")),
        "a removed board stays removed: {:?}",
        objects.keys().collect::<Vec<_>>()
    );
    // Its game is kept in the state directory all the same.
    assert!(s.dir.path().join("state/games/added1.journal").exists());
}
