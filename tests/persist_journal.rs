//! The game journal under `kill -9`: a child process (this test binary, re-run in a special
//! mode) appends events as fast as it can and acknowledges each returned append on stdout; it
//! is killed with SIGKILL at random points, many times over one journal. After every kill the
//! reopened journal must hold every acknowledged event, at most the one append in flight
//! beyond, and exactly the current game as rotation defines it. Torn tails are added by hand
//! too and must be dropped with a warning.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use eboard_core::session::{Event, RecordFact};
use eboard_core::vocab::{Edition, GameResult, Player, Rules, Termination};
use eboardd::daemon::journal::{Damage, Journal, carry_over, encode_lines, journal_path};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const CHILD_ENV: &str = "EBOARDD_TEST_JOURNAL_CHILD";
const START_ENV: &str = "EBOARDD_TEST_JOURNAL_START";

/// The i-th event of the deterministic stream the child appends: mostly moves, with new games
/// (rotations), tags, rules changes, early warnings and game ends mixed in.
fn event(i: u64) -> Event {
    let ply = u32::try_from(i % 1000).unwrap_or(0);
    match i {
        _ if i.is_multiple_of(41) => Event::GameStarted {
            fen: format!("start {i}"),
        },
        _ if i % 17 == 5 => Event::Record(RecordFact::Tags {
            tags: vec![("Round".into(), i.to_string())],
        }),
        _ if i % 29 == 7 => Event::Record(RecordFact::Rules {
            rules: if i.is_multiple_of(2) {
                Rules::Rapid
            } else {
                Rules::Blitz
            },
            edition: Edition::Fide2005,
        }),
        _ if i % 13 == 3 => Event::IllegalPlacement {
            player: Player::White,
            description: format!("placement {i}"),
            placement: "8/8/8/8/8/8/8/8".into(),
        },
        _ if i % 37 == 36 => Event::GameEnded {
            result: GameResult::WhiteWins,
            termination: Termination::ALL[i as usize % Termination::ALL.len()],
        },
        _ => Event::MovePlayed {
            ply,
            san: "Nf3".into(),
            uci: "g1f3".into(),
            fen: format!(
                "position after event {i} {}",
                "x".repeat((i % 7) as usize * 40)
            ),
            white_ms: i * 1000,
            black_ms: i * 999,
        },
    }
}

/// What the journal must hold after events `0..n` were appended: the current game only.
fn model(n: u64) -> Vec<Event> {
    let mut current: Vec<Event> = Vec::new();
    for i in 0..n {
        let e = event(i);
        if matches!(e, Event::GameStarted { .. })
            && current
                .iter()
                .any(|c| matches!(c, Event::GameStarted { .. }))
        {
            current = carry_over(&current);
        }
        current.push(e);
    }
    current
}

/// The child's side: append events from START_ENV on, acknowledging each, until killed.
#[test]
fn journal_child() {
    let Some(path) = std::env::var_os(CHILD_ENV) else {
        return; // a normal test run: nothing to do
    };
    let start: u64 = std::env::var(START_ENV)
        .ok()
        .and_then(|s| s.parse().ok())
        .expect("start index");
    let (mut journal, _, _) = Journal::open(Path::new(&path)).expect("open journal");
    let mut out = std::io::stdout().lock();
    let mut i = start;
    loop {
        // Sometimes a batch (as one serial message can cause several events).
        let batch: Vec<Event> = if i.is_multiple_of(5) {
            (i..i + 3).map(event).collect()
        } else {
            vec![event(i)]
        };
        journal.append_all(&batch).expect("append");
        i += batch.len() as u64;
        use std::io::Write;
        writeln!(out, "ack {i}").expect("ack");
        out.flush().expect("flush");
    }
}

#[test]
fn kill_9_loses_no_acknowledged_event() {
    let dir = tempfile::tempdir().unwrap();
    let path = journal_path(dir.path(), "board_1");
    let exe = std::env::current_exe().unwrap();
    let mut rng = SmallRng::seed_from_u64(0x6b696c6c);
    let mut on_file = 0u64; // events 0..on_file are in the journal
    let rounds = 25;
    let mut torn_seen = 0;
    for round in 0..rounds {
        let mut child = Command::new(&exe)
            .args([
                "journal_child",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, &path)
            .env(START_ENV, on_file.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let kill_after = rng.random_range(1..80);
        let mut acked = on_file;
        let mut seen = 0;
        while seen < kill_after {
            let Some(Ok(line)) = lines.next() else {
                panic!("child ended early in round {round}");
            };
            if let Some(n) = line.strip_prefix("ack ") {
                acked = n.parse().unwrap();
                seen += 1;
            }
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        // Acknowledgements already in the pipe count too.
        for line in lines.map_while(Result::ok) {
            if let Some(n) = line.strip_prefix("ack ") {
                acked = n.parse().unwrap();
            }
        }

        // Sometimes also tear the tail by hand, as a crash in the middle of a write would.
        let torn = round % 3 == 1;
        if torn {
            let line = encode_lines(&[event(999_999)]).unwrap();
            let cut = rng.random_range(1..line.len());
            let mut bytes = std::fs::read(&path).unwrap();
            bytes.extend_from_slice(&line.as_bytes()[..cut]);
            std::fs::write(&path, bytes).unwrap();
        }

        let (journal, restored, warning) = Journal::open(&path).unwrap();
        drop(journal);
        // At most one batch (3 events) in flight beyond the last acknowledgement.
        let n = (acked..=acked + 3)
            .find(|&n| restored == model(n))
            .unwrap_or_else(|| {
                panic!(
                    "round {round}: journal holds {} events, none of the allowed states \
                     after {acked} acknowledged",
                    restored.len()
                )
            });
        if torn {
            let w = warning.expect("torn tail reported");
            assert_eq!(w.kind, Damage::TornTail, "{w}");
            torn_seen += 1;
        } else if let Some(w) = warning {
            // A real torn write can happen when the kill lands inside write(); it is dropped.
            assert_eq!(w.kind, Damage::TornTail, "round {round}: {w}");
        }
        on_file = n;
    }
    assert!(torn_seen > 0);
    assert!(on_file > 100, "only {on_file} events appended in total");
    // Rotations happened: the archive holds finished games.
    let archived = std::fs::read_dir(dir.path().join("games/archive"))
        .unwrap()
        .count();
    assert!(archived > 2, "{archived} archived games");
    println!(
        "{rounds} kills, {on_file} events appended, {archived} games archived, \
         {torn_seen} torn tails added by hand"
    );
}

// ----- the journal writer (group commit) with the records of real games -----------------

const WRITER_CHILD_ENV: &str = "EBOARDD_TEST_WRITER_CHILD";
const WRITER_GROUP_ENV: &str = "EBOARDD_TEST_WRITER_GROUP";
const BOARDS: usize = 3;

/// The journalled records of board `b`'s game, one batch per input that caused any, with
/// the moves the game has after each batch.
fn board_game(b: usize) -> Vec<(Vec<Event>, Vec<String>)> {
    use eboard_core::session::is_journalled;
    use eboard_sim::feed::{Feeder, long_game};
    let mut feeder = Feeder::new(board_config(b), 100 + b as u64);
    let mut batches = vec![(feeder.start(), Vec::new())];
    for mv in long_game(120, 100 + b as u64) {
        let events = feeder.play(mv);
        batches.push((events, feeder.session.view().moves.clone()));
    }
    batches
        .into_iter()
        .map(|(batch, moves)| {
            let batch: Vec<Event> = batch.into_iter().filter(is_journalled).collect();
            (batch, moves)
        })
        .filter(|(batch, _)| !batch.is_empty())
        .collect()
}

fn board_records(b: usize) -> Vec<Vec<Event>> {
    board_game(b).into_iter().map(|(batch, _)| batch).collect()
}

fn board_config(b: usize) -> eboard_core::session::SessionConfig {
    eboard_core::session::SessionConfig {
        name: format!("w{b}"),
        ..Default::default()
    }
}

/// The child's side: restore every board, check it holds a prefix of its game's records, and
/// go on appending the rest through one writer, acknowledging each durable append.
#[test]
fn writer_child() {
    let Some(dir) = std::env::var_os(WRITER_CHILD_ENV) else {
        return; // a normal test run: nothing to do
    };
    let group = std::env::var_os(WRITER_GROUP_ENV).is_some();
    let dir = std::path::PathBuf::from(dir);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        use eboardd::daemon::writer::{Config, Outcome, Writer};
        let games = dir.join("games");
        std::fs::create_dir_all(&games).unwrap();
        // With group commit, a checkpoint every kilobyte of log: kills land while journals
        // are synced aside and a retired log is still there.
        let writer = Writer::start(
            &games,
            Config {
                group,
                checkpoint_bytes: 1024,
                ..Config::default()
            },
            eboardd::daemon::health::Health::new(),
        )
        .unwrap();
        let (acks, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        let mut tasks = Vec::new();
        for b in 0..BOARDS {
            let path = journal_path(&dir, &format!("w{b}"));
            let (journal, restored, _) = Journal::open(&path).unwrap();
            let batches = board_records(b);
            let flat: Vec<Event> = batches.iter().flatten().cloned().collect();
            assert_eq!(restored, flat[..restored.len()], "board {b}: not a prefix");
            // Go on from the first batch not entirely on file (a kill may have cut one).
            let mut done = 0;
            let mut next = 0;
            while next < batches.len() && done + batches[next].len() <= restored.len() {
                done += batches[next].len();
                next += 1;
            }
            let rest_of_cut: Vec<Event> = flat[restored.len()..done.max(restored.len())].to_vec();
            let key = writer.register(&format!("w{b}"), journal);
            let writer = writer.clone();
            let acks = acks.clone();
            tasks.push(tokio::spawn(async move {
                let mut on_file = restored.len();
                let mut pending = Vec::new();
                if !rest_of_cut.is_empty() {
                    pending.push(rest_of_cut);
                }
                pending.extend(batches[next..].iter().cloned());
                for batch in pending {
                    let n = batch.len();
                    assert_eq!(writer.append(key, batch).await, Outcome::Durable);
                    on_file += n;
                    acks.send(format!("ack {b} {on_file}")).unwrap();
                }
                acks.send(format!("done {b}")).unwrap();
            }));
        }
        drop(acks);
        let mut out = std::io::stdout().lock();
        while let Some(line) = rx.recv().await {
            use std::io::Write;
            writeln!(out, "{line}").unwrap();
            out.flush().unwrap();
        }
        for t in tasks {
            t.await.unwrap();
        }
    });
}

#[test]
fn kill_9_through_the_writer_loses_no_durable_record() {
    use eboard_core::session::Session;
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut rng = SmallRng::seed_from_u64(0x77726974);
    let flat: Vec<Vec<Event>> = (0..BOARDS)
        .map(|b| board_records(b).into_iter().flatten().collect())
        .collect();
    let mut acked = [0usize; BOARDS];
    let mut rounds = 0;
    let mut finished = false;
    while !finished {
        rounds += 1;
        assert!(rounds < 200, "the games never finished");
        let mut cmd = Command::new(&exe);
        cmd.args(["writer_child", "--exact", "--nocapture", "--test-threads=1"])
            .env(WRITER_CHILD_ENV, dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if rounds % 2 == 0 {
            cmd.env(WRITER_GROUP_ENV, "1");
        }
        let mut child = cmd.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let kill_after = rng.random_range(1..40);
        let mut seen = 0;
        let mut done = 0;
        let mut other = Vec::new();
        let note =
            |line: &str, acked: &mut [usize; BOARDS], done: &mut usize, other: &mut Vec<String>| {
                // libtest's own "test writer_child ... " may share the line.
                let parts: Vec<&str> = line.split_whitespace().collect();
                let at = parts
                    .iter()
                    .position(|p| *p == "ack" || *p == "done")
                    .unwrap_or(parts.len());
                match &parts[at..] {
                    ["ack", b, n] => {
                        let b: usize = b.parse().unwrap();
                        acked[b] = acked[b].max(n.parse().unwrap());
                    }
                    ["done", _] => *done += 1,
                    _ => other.push(line.to_owned()),
                }
            };
        while seen < kill_after && done < BOARDS {
            let Some(Ok(line)) = lines.next() else {
                let mut err = String::new();
                use std::io::Read;
                let _ = child.stderr.take().unwrap().read_to_string(&mut err);
                panic!(
                    "child ended early in round {rounds}:\n{err}\n{}",
                    other.join("\n")
                );
            };
            note(&line, &mut acked, &mut done, &mut other);
            seen += 1;
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        for line in lines.map_while(Result::ok) {
            note(&line, &mut acked, &mut done, &mut other);
        }
        finished = done == BOARDS;

        for (b, want) in flat.iter().enumerate() {
            let path = journal_path(dir.path(), &format!("w{b}"));
            let (journal, restored, _) = Journal::open(&path).unwrap();
            drop(journal);
            assert!(
                restored.len() >= acked[b],
                "round {rounds}, board {b}: {} records on file, {} acknowledged",
                restored.len(),
                acked[b]
            );
            assert_eq!(restored, want[..restored.len()], "board {b}: not a prefix");
            // And the session rebuilt from it has the moves of the whole batches on file
            // (a batch cut by the kill was not acknowledged, and adds at most its own move).
            let session = Session::restore(board_config(b), &restored);
            let moves = &session.view().moves;
            let game = board_game(b);
            let mut covered = 0;
            let mut whole = Vec::new();
            let mut next = None;
            for (batch, after) in &game {
                if covered + batch.len() <= restored.len() {
                    covered += batch.len();
                    whole = after.clone();
                } else {
                    next = Some(after.clone());
                    break;
                }
            }
            assert!(
                *moves == whole || Some(moves) == next.as_ref(),
                "round {rounds}, board {b}: restored {moves:?}, on file {whole:?}"
            );
        }
    }
    // The whole games are on file in the end, and restore to every move.
    for (b, want) in flat.iter().enumerate() {
        let path = journal_path(dir.path(), &format!("w{b}"));
        let (_, restored, _) = Journal::open(&path).unwrap();
        assert_eq!(&restored, want);
        let session = eboard_core::session::Session::restore(board_config(b), &restored);
        assert_eq!(session.view().moves.len(), 120, "board {b}");
    }
    println!("{rounds} kills through the writer, {BOARDS} boards, every durable record kept");
}

/// A checkpoint syncs the journals aside (its own thread) while the groups go on into a new
/// commit log; once they are synced the retired log goes, and nothing is lost on the way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkpoints_aside_keep_every_record_and_leave_no_retired_log() {
    use eboardd::daemon::commit_log::{HEADER, log_path, retired_path};
    use eboardd::daemon::writer::{Config, Outcome, Writer};
    use std::sync::atomic::Ordering;
    // Records that never rotate the journal (a GameStarted would).
    let tag = |i: u32| {
        Event::Record(RecordFact::Tags {
            tags: vec![("Round".into(), i.to_string())],
        })
    };
    let dir = tempfile::tempdir().unwrap();
    let games = dir.path().join("games");
    std::fs::create_dir_all(&games).unwrap();
    let writer = Writer::start(
        &games,
        Config {
            checkpoint_bytes: 2048,
            ..Config::default()
        },
        eboardd::daemon::health::Health::new(),
    )
    .unwrap();
    let boards = 8;
    let mut tasks = Vec::new();
    for b in 0..boards {
        let (journal, _, _) = Journal::open(&journal_path(dir.path(), &format!("c{b}"))).unwrap();
        let key = writer.register(&format!("c{b}"), journal);
        let writer = writer.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..150 {
                assert_eq!(writer.append(key, vec![tag(i)]).await, Outcome::Durable);
            }
            assert!(writer.close(key).await);
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let aside = writer.stats().checkpoints_aside.load(Ordering::Relaxed);
    assert!(aside >= 2, "{aside} checkpoints aside");
    drop(writer);
    // The thread's last checkpoint (every handle gone) empties the log, and no retired log
    // is left behind.
    let header_only = format!("{HEADER}\n");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::fs::read_to_string(log_path(&games)).ok().as_deref() != Some(&header_only)
        || retired_path(&games).exists()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the commit log was never emptied (retired log there: {})",
            retired_path(&games).exists()
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    for b in 0..boards {
        let (_, events, _) = Journal::open(&journal_path(dir.path(), &format!("c{b}"))).unwrap();
        let want: Vec<Event> = (0..150).map(tag).collect();
        assert_eq!(events, want, "board {b}");
    }
}
