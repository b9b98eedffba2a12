//! The storage corners of a hall's SD card, each through the `eboardd` binary on a private
//! bus with a simulated board: the commit log on a disk that fills up (a real small tmpfs
//! as root), a journal writer that dies, a commit log that cannot be applied, a failed
//! cut-back that leaves a torn record mid-file, a board list that cannot be read, and a
//! clock-message queue that is full. The faults no real disk gives on demand come from the
//! daemon's fault file (`EBOARDD_STORAGE_FAULTS`).

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::disk::{
    Disk, tmpfs_or_injector, wait_problem, wait_problem_over, watch_storage_problem,
};
use common::events::Events;
use common::proxies::{self, ManagerProxy};
use common::rig::{port_args, quick, ready_to_play, sim_ports, wait_moves};
use common::sim::{corpus_games, sim_board};
use common::{Bus, Daemon, WAIT, code, within};
use eboard_sim::{BoardOptions, ClockPresence, Scenario, SimHandle, Step};
use eboardd::daemon::commit_log::HEADER;
use eboardd::daemon::faults::FAULTS_ENV;

const SPEED: f64 = 10.0;

fn faults_env(file: &Path) -> Vec<(&'static str, String)> {
    vec![(FAULTS_ENV, file.display().to_string())]
}

fn as_refs<'a>(env: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    env.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

fn commit_log(dir: &Path) -> PathBuf {
    dir.join("state/games/commit.log")
}

fn log_len(dir: &Path) -> u64 {
    std::fs::metadata(commit_log(dir)).map_or(0, |m| m.len())
}

const EMPTY_LOG: u64 = HEADER.len() as u64 + 1;

/// Wait until `done` holds, polling the file system.
async fn wait_for(what: &str, done: impl Fn() -> bool) {
    within(WAIT * 2, what, async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
}

/// A daemon serving the simulated boards `names` with `env`, and a client.
async fn serve(
    dir: &Path,
    bus: &Bus,
    sims: &[&SimHandle],
    env: &[(&str, &str)],
) -> (Daemon, zbus::Connection) {
    let ports = sim_ports(sims.iter().copied());
    let mut daemon = Daemon::spawn_env(bus, dir, &port_args(&ports), env);
    let conn = bus.client().await;
    daemon.wait_for_name(&conn).await;
    (daemon, conn)
}

/// The nearly full card: the commit log must not be what keeps writes failing. It is
/// emptied when the journals refuse writes, not written while they do, and empty again as
/// soon as the journals took everything held.
async fn commit_log_on_a_full_disk(dir: tempfile::TempDir, disk: Disk) {
    let sans = corpus_games(1, 60..=120).remove(0).sans;
    let sim = sim_board(dir.path(), "cl", SPEED, BoardOptions::default()).await;
    let bus = Bus::start(dir.path()).await;
    let env = disk.env();
    let (mut daemon, conn) = serve(dir.path(), &bus, &[&sim], &as_refs(&env)).await;
    let problems = watch_storage_problem(&conn);
    let mut events = Events::start(&conn, "cl").await;
    ready_to_play(&sim, &mut events).await;
    let mut sc = Scenario::new(&sim, quick(8));
    sc.run(&[Step::Moves(sans[..10].to_vec())]).await.unwrap();
    wait_moves(&events, &sans[..10]).await;
    assert!(
        log_len(dir.path()) > EMPTY_LOG,
        "group commit wrote the log"
    );

    disk.fill();
    sc.run(&[Step::Moves(sans[10..30].to_vec())]).await.unwrap();
    wait_moves(&events, &sans[..30]).await;
    wait_problem(&problems, "the journal's problem", |seen| {
        seen.iter().any(|p| p.contains("journal records"))
    })
    .await;
    wait_for("the commit log emptied while writes fail", || {
        log_len(dir.path()) == EMPTY_LOG
    })
    .await;
    sc.run(&[Step::Moves(sans[30..36].to_vec())]).await.unwrap();
    wait_moves(&events, &sans[..36]).await;
    assert_eq!(log_len(dir.path()), EMPTY_LOG, "not written while failing");

    disk.free();
    wait_problem_over(&problems).await;
    wait_for("the commit log empty once the journals took it", || {
        log_len(dir.path()) == EMPTY_LOG
    })
    .await;
    sc.run(&[Step::Moves(sans[36..40].to_vec())]).await.unwrap();
    wait_moves(&events, &sans[..40]).await;

    daemon.kill9().await;
    let (again, conn) = serve(dir.path(), &bus, &[&sim], &as_refs(&env)).await;
    let b = proxies::fresh(&conn, "cl").await;
    assert_eq!(
        b.moves().await.unwrap(),
        sans[..40].to_vec(),
        "{}",
        again.stderr()
    );
    drop(disk);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_commit_log_takes_no_room_while_the_disk_is_full() {
    let dir = tempfile::tempdir().unwrap();
    let disk = tmpfs_or_injector(dir.path());
    commit_log_on_a_full_disk(dir, disk).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_journal_writer_shows_in_storage_problem() {
    let dir = tempfile::tempdir().unwrap();
    let faults = dir.path().join("faults");
    let sim = sim_board(dir.path(), "dead", SPEED, BoardOptions::default()).await;
    let bus = Bus::start(dir.path()).await;
    let env = faults_env(&faults);
    let (daemon, conn) = serve(dir.path(), &bus, &[&sim], &as_refs(&env)).await;
    let problems = watch_storage_problem(&conn);
    let mut events = Events::start(&conn, "dead").await;
    ready_to_play(&sim, &mut events).await;
    let mut sc = Scenario::new(&sim, quick(3));
    let line: Vec<String> = ["e4", "e5", "Nf3", "Nc6"].map(String::from).to_vec();
    sc.run(&[Step::Moves(line[..2].to_vec())]).await.unwrap();
    wait_moves(&events, &line[..2]).await;
    std::fs::write(&faults, "panic:writer").unwrap();
    sc.run(&[Step::Moves(line[2..].to_vec())]).await.unwrap();
    // The game goes on from memory, and the bus and the log say the journal does not.
    wait_moves(&events, &line).await;
    wait_problem(&problems, "the stopped writer on the bus", |seen| {
        seen.iter()
            .any(|p| p.contains("journal writer has stopped"))
    })
    .await;
    let log = daemon.stderr();
    assert!(
        log.contains("storage problem: the journal writer has stopped"),
        "{log}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recovery_keeps_a_commit_log_it_cannot_apply() {
    let dir = tempfile::tempdir().unwrap();
    let keep = sim_board(dir.path(), "keep", SPEED, BoardOptions::default()).await;
    let other = sim_board(dir.path(), "other", SPEED, BoardOptions::default()).await;
    let bus = Bus::start(dir.path()).await;
    let (mut daemon, conn) = serve(dir.path(), &bus, &[&keep, &other], &[]).await;
    let mut events = Events::start(&conn, "keep").await;
    ready_to_play(&keep, &mut events).await;
    let line: Vec<String> = ["d4", "d5", "c4", "e6", "Nc3", "Nf6"]
        .map(String::from)
        .to_vec();
    Scenario::new(&keep, quick(4))
        .run(&[Step::Moves(line.clone())])
        .await
        .unwrap();
    wait_moves(&events, &line).await;
    daemon.kill9().await;

    // The machine went down: the journal lost its last line (the log has it), and the journal
    // cannot be opened at the next start (here: a directory stands in its place).
    let journal = dir.path().join("state/games/keep.journal");
    let away = dir.path().join("keep.journal.away");
    std::fs::rename(&journal, &away).unwrap();
    let text = std::fs::read_to_string(&away).unwrap();
    let cut = text.trim_end_matches('\n').rfind('\n').unwrap() + 1;
    std::fs::OpenOptions::new()
        .write(true)
        .open(&away)
        .unwrap()
        .set_len(cut as u64)
        .unwrap();
    std::fs::create_dir(&journal).unwrap();
    let log_before = std::fs::read(commit_log(dir.path())).unwrap();
    assert!(log_before.len() as u64 > EMPTY_LOG);

    // The next start serves the other board (which writes), keeps the log and says so.
    let (mut second, conn) = serve(dir.path(), &bus, &[&keep, &other], &[]).await;
    let manager = ManagerProxy::new(&conn).await.unwrap();
    let problem = manager.storage_problem().await.unwrap();
    assert!(
        problem.contains("commit log") && problem.contains("kept"),
        "{problem}"
    );
    let mut events = Events::start(&conn, "other").await;
    ready_to_play(&other, &mut events).await;
    let moves: Vec<String> = ["e4", "c5"].map(String::from).to_vec();
    Scenario::new(&other, quick(5))
        .run(&[Step::Moves(moves.clone())])
        .await
        .unwrap();
    wait_moves(&events, &moves).await;
    second.signal(nix::sys::signal::Signal::SIGTERM);
    assert_eq!(code(second.wait(WAIT).await), 0);
    let log = second.stderr();
    assert!(log.contains("kept: cannot put back its lines"), "{log}");
    assert_eq!(
        std::fs::read(commit_log(dir.path())).unwrap(),
        log_before,
        "the log is left as it was"
    );

    // Once the journal can be opened, the kept log puts its last line back.
    std::fs::remove_dir(&journal).unwrap();
    std::fs::rename(&away, &journal).unwrap();
    let (third, conn) = serve(dir.path(), &bus, &[&keep, &other], &[]).await;
    let b = proxies::fresh(&conn, "keep").await;
    assert_eq!(b.moves().await.unwrap(), line, "{}", third.stderr());
    let manager = ManagerProxy::new(&conn).await.unwrap();
    assert_eq!(manager.storage_problem().await.unwrap(), "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_torn_record_left_mid_file_is_skipped_and_what_follows_restored() {
    let dir = tempfile::tempdir().unwrap();
    let faults = dir.path().join("faults");
    let sans = corpus_games(1, 60..=120).remove(0).sans;
    let sim = sim_board(dir.path(), "torn", SPEED, BoardOptions::default()).await;
    let bus = Bus::start(dir.path()).await;
    let env = faults_env(&faults);
    let (mut daemon, conn) = serve(dir.path(), &bus, &[&sim], &as_refs(&env)).await;
    let problems = watch_storage_problem(&conn);
    let mut events = Events::start(&conn, "torn").await;
    ready_to_play(&sim, &mut events).await;
    let mut sc = Scenario::new(&sim, quick(6));
    sc.run(&[Step::Moves(sans[..6].to_vec())]).await.unwrap();
    wait_moves(&events, &sans[..6]).await;
    // Appends fail half-way, and cutting them back fails too: torn bytes stay in the file.
    std::fs::write(&faults, "ENOSPC truncate:EIO").unwrap();
    sc.run(&[Step::Moves(sans[6..12].to_vec())]).await.unwrap();
    wait_moves(&events, &sans[..12]).await;
    wait_problem(&problems, "the journal's problem", |seen| {
        seen.iter().any(|p| p.contains("journal records"))
    })
    .await;
    // Writes work again; cut-backs still do not.
    std::fs::write(&faults, "truncate:EIO").unwrap();
    wait_problem_over(&problems).await;
    sc.run(&[Step::Moves(sans[12..16].to_vec())]).await.unwrap();
    wait_moves(&events, &sans[..16]).await;
    daemon.kill9().await;

    std::fs::write(&faults, "").unwrap();
    let (again, conn) = serve(dir.path(), &bus, &[&sim], &as_refs(&env)).await;
    let b = proxies::fresh(&conn, "torn").await;
    assert_eq!(
        b.moves().await.unwrap(),
        sans[..16].to_vec(),
        "{}",
        again.stderr()
    );
    assert!(
        !again.stderr().contains("journal damage"),
        "{}",
        again.stderr()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreadable_board_list_is_never_written_over_with_less() {
    let dir = tempfile::tempdir().unwrap();
    let faults = dir.path().join("faults");
    let env = faults_env(&faults);
    let bus = Bus::start(dir.path()).await;
    // No device behind these ports: the boards are remembered all the same.
    let port = |n: &str| dir.path().join(n).display().to_string();
    let list = dir.path().join("state/boards.json");
    let (mut first, conn) = serve(dir.path(), &bus, &[], &as_refs(&env)).await;
    let manager = ManagerProxy::new(&conn).await.unwrap();
    manager.add_board(&port("adda")).await.unwrap();
    first.signal(nix::sys::signal::Signal::SIGTERM);
    assert_eq!(code(first.wait(WAIT).await), 0);
    assert!(std::fs::read_to_string(&list).unwrap().contains("adda"));

    // The next start cannot read the list (a transient read error).
    std::fs::write(&faults, "read:EIO").unwrap();
    let (mut second, conn) = serve(dir.path(), &bus, &[], &as_refs(&env)).await;
    let problems = watch_storage_problem(&conn);
    let manager = ManagerProxy::new(&conn).await.unwrap();
    manager.add_board(&port("addb")).await.unwrap();
    wait_problem(&problems, "the unreadable list on the bus", |seen| {
        seen.iter().any(|p| p.contains("not written over"))
    })
    .await;
    let text = std::fs::read_to_string(&list).unwrap();
    assert!(text.contains("adda") && !text.contains("addb"), "{text}");
    // It can be read again: this run's board joins the ones it holds.
    std::fs::write(&faults, "").unwrap();
    wait_problem_over(&problems).await;
    let text = std::fs::read_to_string(&list).unwrap();
    assert!(text.contains("adda") && text.contains("addb"), "{text}");
    second.signal(nix::sys::signal::Signal::SIGTERM);
    assert_eq!(code(second.wait(WAIT).await), 0);
    assert!(
        second.stderr().contains("cannot read it"),
        "{}",
        second.stderr()
    );

    let (_third, conn) = serve(dir.path(), &bus, &[], &[]).await;
    for id in ["adda", "addb"] {
        let b = proxies::fresh(&conn, id).await;
        assert_eq!(b.port().await.unwrap(), port(id));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clock_message_queue_is_bounded_with_a_named_error() {
    let dir = tempfile::tempdir().unwrap();
    // A clock that reports but never acknowledges: every message waits its full time.
    let options = BoardOptions {
        clock: ClockPresence::NotAnswering,
        ..BoardOptions::default()
    };
    let sim = sim_board(dir.path(), "mute", 1.0, options).await;
    let bus = Bus::start(dir.path()).await;
    let (_daemon, conn) = serve(dir.path(), &bus, &[&sim], &[]).await;
    let proxy = proxies::board(&conn, "mute").await;
    let mut connected = proxy.receive_connected_changed().await;
    common::wait_property(&mut connected, "the board answers", |c| *c).await;
    let mut clock = proxy.receive_clock_connected_changed().await;
    common::wait_property(&mut clock, "the clock reports", |c| *c).await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    for n in 0..eboard_core::dgt::clock_channel::MAX_QUEUED + 4 {
        let proxy = proxies::board(&conn, "mute").await;
        let tx = tx.clone();
        tokio::spawn(async move {
            let _ = tx.send(proxy.show_clock_message(&format!("m{n}")).await);
        });
    }
    // The first answer is a refusal: the others wait for a clock that never acknowledges.
    let first = within(WAIT, "a message refused as Busy", rx.recv())
        .await
        .expect("an answer");
    let e = first.expect_err("the first answer is a refusal");
    assert_eq!(proxies::error_name(&e), "org.eboardd.Bridge1.Error.Busy");
    let msg = proxies::error_message(&e);
    assert!(
        msg.contains("16 clock messages are already waiting"),
        "{msg}"
    );
}
