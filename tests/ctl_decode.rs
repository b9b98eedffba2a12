//! `eboardctl decode` prints what eboardd records: every shared capture is replayed into the
//! real daemon (a real pty, a private `dbus-daemon`) at the pace decode assumes for a capture
//! without timestamps, and the daemon's `Pgn` property must equal decode's PGN of the same
//! file — tags, move text, clock comments, segments, result and termination. The daemon's own
//! `--record` file of that replay (the times it really saw) decodes to the same PGN too.
//!
//! Pace: decode gives untimed reads [`UNTIMED_GAP_MS`] apart, as `eboardctl replay` plays them,
//! so both see the same times (the daemon up to scheduling jitter, which is what the record
//! comparison pins down). All captures run concurrently; the longest takes about 40 s.

mod captures;
mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use eboard_core::capture::{self, Chunk};
use eboardd::cli::decode::{self, UNTIMED_GAP_MS};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;
use tokio_serial::SerialPort as _;

use common::{Bus, Daemon, proxies, record_file, record_without_clock_tags};

/// Every `*.inbytes` capture of the shared captures, in name order.
fn shared_captures() -> Vec<PathBuf> {
    let dir = captures::dir();
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "inbytes"))
        .collect();
    found.sort();
    assert!(
        found.len() >= 2,
        "the shared captures are missing: {found:?}"
    );
    found
}

/// Play `chunks` into `master` at decode's pace for untimed reads, starting at the host's
/// first byte (the daemon's handshake), and keep the line open afterwards (the caller drops
/// it): a board that goes quiet is still there, so its last moves become final.
async fn play(
    mut master: tokio_serial::SerialStream,
    chunks: Vec<Chunk>,
) -> tokio_serial::SerialStream {
    let mut buf = [0u8; 256];
    let n = common::within(
        Duration::from_secs(30),
        "the daemon's handshake",
        master.read(&mut buf),
    )
    .await
    .expect("read the handshake");
    assert!(n > 0, "the daemon closed the line");
    let start = Instant::now();
    for (i, chunk) in chunks.iter().enumerate() {
        assert!(
            chunk.at_ms.is_none(),
            "the shared captures carry no timestamps"
        );
        let due = start + Duration::from_millis(i as u64 * UNTIMED_GAP_MS);
        // Drain what the daemon writes (probes, requests) while waiting, as a board would
        // read it: nothing here answers, a capture cannot.
        loop {
            tokio::select! {
                _ = tokio::time::sleep_until(due) => break,
                r = master.read(&mut buf) => { r.expect("read from the daemon"); }
            }
        }
        master.write_all(&chunk.bytes).await.expect("write a chunk");
    }
    master.flush().await.ok();
    master
}

async fn daemon_matches_decode(path: PathBuf) {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let text = std::fs::read_to_string(&path).unwrap();
    let chunks = capture::parse(&text).unwrap();
    // What `eboardctl decode <capture>` prints (its `run` is this plus stdout).
    let today = decode::today();
    let decoded = decode::decode(&chunks, &[], decode::session_config_for(&path), &today);
    assert_eq!(decoded.games.len(), 1, "{name}: one game");
    let want = decoded.games[0].pgn.clone();
    assert!(
        !decoded.games[0].san.is_empty(),
        "{name}: moves were played"
    );

    let dir = tempfile::tempdir().unwrap();
    let records = dir.path().join("records");
    std::fs::create_dir_all(&records).unwrap();
    // The board's port carries the capture's file name, so the daemon names the board (and
    // its `Board` tag) as decode does for that file.
    let link = dir.path().join(&name);
    let (master, slave) = tokio_serial::SerialStream::pair().expect("a pseudo-terminal");
    eboard_sim::wire::make_link(Path::new(&slave.name().unwrap()), &link).unwrap();
    let bus = Bus::start(dir.path()).await;
    let mut daemon = Daemon::spawn(
        &bus,
        dir.path(),
        &[
            "--port",
            link.to_str().unwrap(),
            "--record",
            records.to_str().unwrap(),
        ],
    );
    let conn = bus.client().await;
    daemon.wait_for_name(&conn).await;
    let id = name.replace(|c: char| !c.is_ascii_alphanumeric() && c != '_', "_");
    let board = proxies::board(&conn, &id).await;
    let mut pgn_changes = board.receive_pgn_changed().await;

    let master = play(master, chunks.clone()).await;
    // The daemon's final record: the PGN once every move is final and nothing changes.
    let mut last = record_without_clock_tags(&board.pgn().await.unwrap_or_default());
    let settled = tokio::time::timeout(Duration::from_secs(30), async {
        while last != want {
            let Some(changed) = common::next(&mut pgn_changes).await else {
                break;
            };
            last = record_without_clock_tags(&changed.get().await.unwrap_or_default());
        }
    })
    .await;
    if settled.is_err() {
        last = record_without_clock_tags(&board.pgn().await.unwrap_or_default());
    }
    assert_eq!(
        last,
        want,
        "{name}: the daemon's Pgn differs from decode's (daemon log {})",
        daemon.stderr_path.display()
    );
    // Termination and result are the session's, not a placeholder.
    let state = board.state().await.unwrap();
    let result = decoded.events.iter().find_map(|e| match &e.event {
        eboard_core::session::Event::GameEnded { result, .. } => Some(*result),
        _ => None,
    });
    match result {
        Some(result) => {
            assert_eq!(state, "finished", "{name}");
            assert!(
                want.contains(&format!("[Result \"{result}\"]")),
                "{name}: {want}"
            );
        }
        None => assert_eq!(state, "playing", "{name}"),
    }

    // The daemon's own recording of this replay, with the times it saw, decodes alike.
    drop(master);
    drop(daemon);
    let text = std::fs::read_to_string(record_file(&records)).unwrap();
    let recorded = capture::parse(&text).unwrap();
    assert!(recorded.iter().all(|c| c.at_ms.is_some()));
    let link = capture::link_notes(&text);
    assert_eq!(
        link.first().map(|n| n.change),
        Some(capture::LinkChange::Opened),
        "{name}: the record notes the port opening"
    );
    let again = decode::decode(&recorded, &link, decode::session_config_for(&path), &today);
    assert_eq!(again.games.len(), 1, "{name}: one game in the record");
    assert_eq!(again.games[0].pgn, want, "{name}: the record decodes alike");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decode_prints_what_the_daemon_records_for_every_shared_capture() {
    let runs: Vec<_> = shared_captures()
        .into_iter()
        .map(|p| tokio::spawn(daemon_matches_decode(p)))
        .collect();
    for run in runs {
        run.await.expect("capture run");
    }
}

/// A capture in the shared format (base64 lines, no timestamps) from raw reads.
fn capture_text(reads: &[Vec<u8>]) -> String {
    use base64::Engine as _;
    reads
        .iter()
        .map(|r| base64::engine::general_purpose::STANDARD.encode(r) + "\n")
        .collect()
}

fn eboardctl_decode(path: &Path) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_eboardctl"))
        .arg("decode")
        .arg(path)
        .output()
        .expect("run eboardctl decode")
}

#[test]
fn a_capture_ending_in_mate_prints_the_result_and_termination() {
    use common::board::{dump_message, field_update, start_position};
    // Fool's mate, one sensor change per read: 1. f3 e5 2. g4 Qh4#.
    let mut reads = vec![dump_message(&start_position())];
    for (field, code) in [
        (53, 0),
        (45, 1),
        (12, 0),
        (28, 7),
        (54, 0),
        (38, 1),
        (3, 0),
        (39, 12),
    ] {
        reads.push(field_update(field, code));
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mate.inbytes");
    std::fs::write(&path, capture_text(&reads)).unwrap();
    let out = eboardctl_decode(&path);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pgn = String::from_utf8(out.stdout).unwrap();
    assert!(pgn.contains("[Result \"0-1\"]"), "{pgn}");
    assert!(pgn.contains("[Board \"mate.inbytes\"]"), "{pgn}");
    assert!(pgn.contains("[Termination \"normal\"]"), "{pgn}");
    assert!(
        pgn.trim_end().ends_with("2. g4 Qh4# {checkmate} 0-1"),
        "{pgn}"
    );
    // The events say how it ended, with the session's time.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_eboardctl"))
        .args(["decode", "--events"])
        .arg(&path)
        .output()
        .unwrap();
    let events = String::from_utf8(out.stdout).unwrap();
    assert!(events.contains("GameEnded 0-1 checkmate"), "{events}");
    assert!(events.contains("MovePlayed 2... Qh4# (d8h4)"), "{events}");
}

#[test]
fn a_malformed_capture_is_refused_naming_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.inbytes");
    std::fs::write(&path, "jQAK\n!!not base64!!\n").unwrap();
    let out = eboardctl_decode(&path);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty(), "nothing half-printed");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.inbytes") && err.contains("line 2"),
        "{err}"
    );
}
