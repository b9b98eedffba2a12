//! Storage problems met at the start, each said in `StorageProblem` and healed without a
//! restart, through the `eboardd` binary on a private bus with simulated boards: a full disk
//! before `games/` exists (no space: a real small ext4 on a loop device, or a tmpfs where no
//! loop device can be had; no inodes: a tmpfs — CI runs as root), a
//! journal of a newer format, a directory in place of a journal and of its lock, a FIFO in
//! place of a journal, the board list and the commit log, a board list that had to be set
//! aside, and a file put in place of a journal after the start (kept, never appended to).
//!
//! In every case the board is on the bus from the start and its moves are published; once
//! the problem is gone the daemon journals them by itself, which a `kill -9` and a restart
//! prove.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::disk::{Disk, tmpfs};
use common::events::Events;
use common::proxies::{self, ManagerProxy};
use common::rig::{port_args, quick, ready_to_play, sim_ports, wait_moves};
use common::sim::{corpus_games, sim_board};
use common::{Bus, Daemon, WAIT, code};
use eboard_sim::{BoardOptions, Scenario, SimHandle, Step};

const SPEED: f64 = 10.0;

/// `StorageProblem` as the daemon has it now (no cached value).
async fn storage_problem(conn: &zbus::Connection) -> String {
    ManagerProxy::builder(conn)
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
        .unwrap()
        .storage_problem()
        .await
        .unwrap()
}

/// Wait until `StorageProblem` satisfies `pred`; returns it.
async fn wait_storage(conn: &zbus::Connection, what: &str, pred: impl Fn(&str) -> bool) -> String {
    let deadline = tokio::time::Instant::now() + WAIT * 2;
    loop {
        let now = storage_problem(conn).await;
        if pred(&now) {
            return now;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}; StorageProblem is {now:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Simulated boards `names` in `dir` and a private bus.
struct Hall {
    sims: Vec<SimHandle>,
    names: Vec<String>,
    bus: Bus,
}

impl Hall {
    async fn new(dir: &Path, names: &[&str]) -> Hall {
        let mut sims = Vec::new();
        for name in names {
            sims.push(sim_board(dir, name, SPEED, BoardOptions::default()).await);
        }
        Hall {
            sims,
            names: names.iter().map(|n| n.to_string()).collect(),
            bus: Bus::start(dir).await,
        }
    }

    /// eboardd serving every board, owning its name: the start did not hang.
    async fn serve(&self, dir: &Path) -> (Daemon, zbus::Connection) {
        let ports = sim_ports(&self.sims);
        let mut daemon = Daemon::spawn(&self.bus, dir, &port_args(&ports));
        let conn = self.bus.client().await;
        daemon.wait_for_name(&conn).await;
        (daemon, conn)
    }
}

/// The moves every test plays.
fn game() -> Vec<String> {
    corpus_games(1, 60..=120).remove(0).sans[..10].to_vec()
}

/// Every board is on the bus and publishes the moves played on it: `sans[from..]` played
/// (each board's scenario goes on from where it stopped), `sans` seen.
async fn play_on_every_board(
    hall: &Hall,
    scenarios: &mut [Scenario<'_>],
    events: &mut [Events],
    sans: &[String],
    from: usize,
) {
    for (i, (sc, ev)) in scenarios.iter_mut().zip(events.iter_mut()).enumerate() {
        if from == 0 {
            ready_to_play(&hall.sims[i], ev).await;
        }
        sc.run(&[Step::Moves(sans[from..].to_vec())]).await.unwrap();
        wait_moves(ev, sans).await;
    }
}

/// A scenario per board.
fn scenarios(hall: &Hall) -> Vec<Scenario<'_>> {
    hall.sims
        .iter()
        .enumerate()
        .map(|(i, sim)| Scenario::new(sim, quick(30 + i as u64)))
        .collect()
}

/// The whole story for one kind of problem: `expect` (every fragment) is said from the start
/// while the moves are published; after `heal` the problem clears by itself and the moves
/// are journalled: after a `kill -9` the restarted daemon has every one of them.
async fn said_then_healed(
    dir: &Path,
    hall: &Hall,
    expect: &[&str],
    heal: impl FnOnce(),
) -> (Daemon, zbus::Connection) {
    let sans = game();
    let (mut daemon, conn) = hall.serve(dir).await;
    let mut events = Vec::new();
    for name in &hall.names {
        events.push(Events::start(&conn, name).await);
    }
    let said = wait_storage(&conn, "the problem said", |p| {
        expect.iter().all(|e| p.contains(e))
    })
    .await;
    let mut scs = scenarios(hall);
    play_on_every_board(hall, &mut scs, &mut events, &sans[..6], 0).await;
    // Still said while it lasts, and the moves are held in memory meanwhile.
    let now = storage_problem(&conn).await;
    assert!(
        expect.iter().all(|e| now.contains(e)) && now.contains("journal records"),
        "{now} (first said: {said})"
    );

    heal();
    wait_storage(&conn, "the problem cleared", str::is_empty).await;
    play_on_every_board(hall, &mut scs, &mut events, &sans, 6).await;
    let log = daemon.stderr();
    daemon.kill9().await;

    let (again, conn) = hall.serve(dir).await;
    for name in &hall.names {
        let b = proxies::fresh(&conn, name).await;
        assert_eq!(
            b.moves().await.unwrap(),
            sans,
            "board {name} restored after kill -9; the first daemon's log:\n{log}\nthe second's:\n{}",
            again.stderr()
        );
    }
    assert_eq!(storage_problem(&conn).await, "", "{}", again.stderr());
    (again, conn)
}

fn games(dir: &Path) -> PathBuf {
    dir.join("state/games")
}

/// A 4 MiB ext4 file system on `dir/state` (a loop device), without blocks kept for root: a
/// disk where, once full, even a directory cannot be made — as on the SD card of the issue.
fn small_ext4(dir: &Path) -> Result<Disk, String> {
    let mkfs = common::require::find_tool("mkfs.ext4").ok_or("no mkfs.ext4")?;
    let image = dir.join("disk.img");
    std::fs::File::create(&image)
        .and_then(|f| f.set_len(4 << 20))
        .map_err(|e| e.to_string())?;
    let run = |cmd: &mut std::process::Command| {
        let out = cmd.output().map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
        }
    };
    run(std::process::Command::new(mkfs)
        .args(["-q", "-F", "-m", "0"])
        .arg(&image))?;
    let mount = dir.join("state");
    std::fs::create_dir_all(&mount).unwrap();
    run(std::process::Command::new("mount")
        .args(["-o", "loop"])
        .arg(&image)
        .arg(&mount))?;
    // Unmounted (and the loop device freed) when dropped, as a tmpfs is.
    Ok(Disk::Tmpfs {
        filler: mount.join("filler"),
        mount,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_start_on_a_full_disk_serves_the_board_and_heals() {
    let dir = tempfile::tempdir().unwrap();
    if !common::require::require_root("mounting a small file system") {
        return;
    }
    // A full ext4 refuses even `games/`; where no loop device can be had, a full tmpfs (which
    // still makes directories, so the inode test below covers a `games/` that cannot be made).
    let (disk, real) = match small_ext4(dir.path()) {
        Ok(d) => (d, true),
        Err(why) => {
            eprintln!("no small ext4 ({why}): a full tmpfs instead");
            (tmpfs(dir.path()).expect("a tmpfs"), false)
        }
    };
    disk.fill();
    let probe = std::fs::create_dir(dir.path().join("state/probe"));
    if real {
        let e = probe.expect_err("a full ext4 makes no directory");
        assert_eq!(e.raw_os_error(), Some(nix::libc::ENOSPC));
    }
    assert!(!games(dir.path()).exists());
    let hall = Hall::new(dir.path(), &["full0"]).await;
    let (_daemon, _conn) =
        said_then_healed(dir.path(), &hall, &["disk full"], || disk.free()).await;
    drop(disk);
}

/// A tmpfs on `dir/state` with room but few inodes, every one of them used by `filler/`.
fn tmpfs_without_inodes(dir: &Path) -> Option<(Disk, PathBuf)> {
    if !common::require::require_root("mounting a tmpfs with few inodes") {
        return None;
    }
    let mount = dir.join("state");
    std::fs::create_dir_all(&mount).unwrap();
    let out = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=4m,nr_inodes=32,mode=0755"])
        .arg("eboardd-test")
        .arg(&mount)
        .output()
        .expect("mount");
    if !out.status.success() {
        common::require::skip_or_fail(&format!(
            "mount failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
        return None;
    }
    let filler = mount.join("filler");
    std::fs::create_dir(&filler).unwrap();
    for n in 0.. {
        match std::fs::File::create(filler.join(n.to_string())) {
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(nix::libc::ENOSPC) => break,
            Err(e) => panic!("filling the inodes: {e}"),
        }
    }
    let disk = Disk::Tmpfs {
        filler: mount.join("unused"),
        mount,
    };
    Some((disk, filler))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_start_without_free_inodes_serves_the_board_and_heals() {
    let dir = tempfile::tempdir().unwrap();
    let Some((disk, filler)) = tmpfs_without_inodes(dir.path()) else {
        return;
    };
    assert!(
        std::fs::create_dir(games(dir.path())).is_err(),
        "no inode left"
    );
    let hall = Hall::new(dir.path(), &["inodes0"]).await;
    let (_daemon, _conn) = said_then_healed(dir.path(), &hall, &["no free inodes"], || {
        std::fs::remove_dir_all(&filler).unwrap()
    })
    .await;
    drop(disk);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_in_place_of_a_journal_or_its_lock_is_waited_out() {
    let dir = tempfile::tempdir().unwrap();
    let journal = games(dir.path()).join("dirj.journal");
    let lock = games(dir.path()).join("dirl.journal.lock");
    std::fs::create_dir_all(&journal).unwrap();
    std::fs::create_dir_all(&lock).unwrap();
    // Something in the directory, which must not be touched.
    std::fs::write(journal.join("note"), "mine").unwrap();
    let hall = Hall::new(dir.path(), &["dirj", "dirl"]).await;
    let expect = [
        "dirj.journal: cannot open it: ",
        "dirj.journal is a directory, not a regular file",
        "dirl.journal.lock is a directory",
    ];
    let (_daemon, _conn) = said_then_healed(dir.path(), &hall, &expect, || {
        assert_eq!(
            std::fs::read_to_string(journal.join("note")).unwrap(),
            "mine"
        );
        std::fs::remove_dir_all(&journal).unwrap();
        std::fs::remove_dir(&lock).unwrap();
    })
    .await;
}

/// A FIFO nobody writes to: opening it for reading the usual way waits forever.
fn fifo(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    nix::unistd::mkfifo(path, nix::sys::stat::Mode::S_IRWXU).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_in_place_of_a_state_file_never_blocks_the_start_or_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let journal = games(dir.path()).join("fifo.journal");
    let list = dir.path().join("state/boards.json");
    let log = games(dir.path()).join("commit.log");
    fifo(&journal);
    fifo(&list);
    fifo(&log);
    let hall = Hall::new(dir.path(), &["fifo"]).await;
    let expect = [
        "fifo.journal: cannot open it: ",
        "fifo.journal is a FIFO, not a regular file",
        "boards.json: cannot read it (",
        "boards.json is a FIFO",
        "commit.log is a FIFO",
    ];

    // The start does not hang, the problem is said, and SIGTERM ends the daemon at once.
    let (mut daemon, conn) = hall.serve(dir.path()).await;
    wait_storage(&conn, "the FIFOs named", |p| {
        expect.iter().all(|e| p.contains(e))
    })
    .await;
    daemon.signal(nix::sys::signal::Signal::SIGTERM);
    assert_eq!(code(daemon.wait(WAIT).await), 0, "{}", daemon.stderr());

    // Served again, and healed once they are gone.
    let (_daemon, _conn) = said_then_healed(dir.path(), &hall, &expect, || {
        std::fs::remove_file(&journal).unwrap();
        std::fs::remove_file(&list).unwrap();
        std::fs::remove_file(&log).unwrap();
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_journal_of_a_newer_format_is_kept_aside_and_said_until_seen_to() {
    let dir = tempfile::tempdir().unwrap();
    let journal = games(dir.path()).join("newer.journal");
    std::fs::create_dir_all(games(dir.path())).unwrap();
    let future = "# eboardd-journal 99\n{\"from\": \"the future\"}\n";
    std::fs::write(&journal, future).unwrap();
    let kept = games(dir.path()).join("newer.journal.newer-1");
    let hall = Hall::new(dir.path(), &["newer"]).await;
    let sans = game();

    // Served from the board; the newer file is kept, never written over, and said.
    let (mut daemon, conn) = hall.serve(dir.path()).await;
    let mut events = vec![Events::start(&conn, "newer").await];
    let said = wait_storage(&conn, "the newer journal said", |p| {
        p.contains("written by a newer eboardd") && p.contains(&*kept.to_string_lossy())
    })
    .await;
    assert!(said.contains("# eboardd-journal 99"), "{said}");
    play_on_every_board(&hall, &mut scenarios(&hall), &mut events, &sans, 0).await;
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), future);
    daemon.kill9().await;

    // The moves were journalled meanwhile (in a fresh journal); the kept file is still said
    // after the restart, until someone moves it away.
    let (_again, conn) = hall.serve(dir.path()).await;
    let b = proxies::fresh(&conn, "newer").await;
    assert_eq!(b.moves().await.unwrap(), sans);
    let said = storage_problem(&conn).await;
    assert!(
        said.contains(&*kept.to_string_lossy()) && said.contains("newer eboardd"),
        "{said}"
    );
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), future);
    std::fs::rename(&kept, dir.path().join("looked-at")).unwrap();
    wait_storage(&conn, "the problem cleared", str::is_empty).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_board_list_set_aside_is_said_until_seen_to() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("boards.json"), "{ not json").unwrap();
    let kept = state.join("boards.json.unreadable-1");
    let hall = Hall::new(dir.path(), &[]).await;

    let (mut daemon, conn) = hall.serve(dir.path()).await;
    let said = wait_storage(&conn, "the list set aside", |p| {
        p.contains("kept as") && p.contains(&*kept.to_string_lossy())
    })
    .await;
    assert!(said.contains("add them again"), "{said}");
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "{ not json");
    daemon.signal(nix::sys::signal::Signal::SIGTERM);
    assert_eq!(code(daemon.wait(WAIT).await), 0);

    // Still said after a restart, until the file is moved away.
    let (_again, conn) = hall.serve(dir.path()).await;
    assert!(
        storage_problem(&conn)
            .await
            .contains(&*kept.to_string_lossy())
    );
    std::fs::remove_file(&kept).unwrap();
    wait_storage(&conn, "the problem cleared", str::is_empty).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_put_in_place_of_a_journal_after_the_start_is_kept_never_appended_to() {
    let dir = tempfile::tempdir().unwrap();
    let journal = games(dir.path()).join("put.journal");
    std::fs::create_dir_all(&journal).unwrap();
    let kept = games(dir.path()).join("put.journal.unread-1");
    let hall = Hall::new(dir.path(), &["put"]).await;
    let sans = game();

    let (mut daemon, conn) = hall.serve(dir.path()).await;
    let mut events = vec![Events::start(&conn, "put").await];
    wait_storage(&conn, "the directory said", |p| {
        p.contains("put.journal is a directory")
    })
    .await;
    let mut scs = scenarios(&hall);
    play_on_every_board(&hall, &mut scs, &mut events, &sans[..4], 0).await;

    // Someone puts a file there (a journal from elsewhere, say): this run did not read it, so
    // it is kept as it is, and the board's game goes into a fresh journal.
    std::fs::remove_dir(&journal).unwrap();
    let other = "# eboardd-journal 2\n";
    std::fs::write(&journal, other).unwrap();
    let said = wait_storage(&conn, "the file kept aside", |p| {
        p.contains(&*kept.to_string_lossy()) && !p.contains("cannot open it")
    })
    .await;
    assert!(said.contains("unreadable at start"), "{said}");
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), other);
    play_on_every_board(&hall, &mut scs, &mut events, &sans, 4).await;
    daemon.kill9().await;

    // Every move is in the fresh journal; the kept file is said until it is moved away.
    let (again, conn) = hall.serve(dir.path()).await;
    let b = proxies::fresh(&conn, "put").await;
    assert_eq!(b.moves().await.unwrap(), sans, "{}", again.stderr());
    assert!(
        storage_problem(&conn)
            .await
            .contains(&*kept.to_string_lossy())
    );
    std::fs::remove_file(&kept).unwrap();
    wait_storage(&conn, "the problem cleared", str::is_empty).await;
}
