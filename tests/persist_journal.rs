//! The game journal under `kill -9`: a child process (this test binary, re-run in a special
//! mode) appends events as fast as it can and acknowledges each returned append on stdout; it
//! is killed with SIGKILL at random points, many times over one journal. After every kill the
//! reopened journal must hold every acknowledged event, at most the one append in flight
//! beyond, and exactly the current game as rotation defines it. Torn tails are added by hand
//! too and must be dropped with a warning.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use eboardd::daemon::journal::{Damage, Journal, carry_over, encode_lines, journal_path};
use eboardd::session::{Edition, Event, RecordFact, Rules};
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
            player: "white".into(),
            description: format!("placement {i}"),
            placement: "8/8/8/8/8/8/8/8".into(),
        },
        _ if i % 37 == 36 => Event::GameEnded {
            result: "1-0".into(),
            termination: format!("checkmate {i}"),
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
    let rounds = if cfg!(debug_assertions) { 25 } else { 60 };
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
