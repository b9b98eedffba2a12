//! PGN files and serial recordings as other programs see them: a broadcast tool polling the
//! live folder never reads a half-written game, and a recording parses back to the very
//! chunks that were read from the board.

mod captures;
mod pgn_texts;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use eboard_core::capture;
use eboardd::daemon::pgn_files::PgnFiles;
use eboardd::daemon::recorder::Recorder;
use pgn_texts::game;
use proptest::prelude::*;

#[test]
fn live_pgn_readers_never_see_a_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    let files = PgnFiles::new(dir.path()).unwrap();
    let texts: Arc<Vec<String>> = Arc::new((1..=60).map(game).collect());
    files.write_live("board_1", &texts[0]).unwrap();
    let path = files.live_path("board_1");
    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let (done, texts, path) = (done.clone(), texts.clone(), path.clone());
        std::thread::spawn(move || {
            let mut reads = 0u32;
            while !done.load(Ordering::Relaxed) {
                let text = std::fs::read_to_string(&path).expect("the live file always exists");
                assert!(texts.contains(&text), "a reader saw a partial game");
                reads += 1;
            }
            reads
        })
    };
    for round in 0..5 {
        for t in texts.iter().skip(round % 2) {
            files.write_live("board_1", t).unwrap();
        }
    }
    done.store(true, Ordering::Relaxed);
    let reads = reader.join().unwrap();
    assert!(reads > 0);
    // Only the live file is left: no temporary files for pollers to pick up.
    let names: Vec<_> = std::fs::read_dir(files.live_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, ["board_1.pgn"]);
}

#[test]
fn finished_games_per_board_and_day() {
    let dir = tempfile::tempdir().unwrap();
    let files = PgnFiles::new(dir.path()).unwrap();
    for board in ["b1", "b2"] {
        for n in 1..=3 {
            let pgn = format!("[Date \"2026.11.30\"]\n[Board \"{board}\"]\n\n{n}. e4 1-0\n");
            let path = files.write_finished(board, &pgn).unwrap();
            assert_eq!(path, dir.path().join(format!("2026-11-30-{board}-{n}.pgn")));
            // Writing the same game again (a restart that restored it) adds nothing.
            assert_eq!(files.write_finished(board, &pgn).unwrap(), path);
        }
    }
    let count = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "pgn")
        })
        .count();
    assert_eq!(count, 6);
    // Unwritable places give errors that name the file, not panics.
    let e = files.write_finished("no/such", "x").unwrap_err();
    assert!(e.to_string().contains("no/such"), "{e}");
    let blocked = dir.path().join("blocked");
    std::fs::write(&blocked, "a file, not a directory").unwrap();
    let e = PgnFiles::new(&blocked).unwrap_err();
    assert!(e.to_string().contains("blocked"), "{e}");
}

#[test]
fn recorded_session_replays_through_the_capture_reader() {
    let dir = tempfile::tempdir().unwrap();
    // A real capture from the shared corpus, recorded as the daemon would read it.
    let chunks = captures::chunks(1);
    let mut recorder = Recorder::create(dir.path(), "board_1").unwrap();
    for (i, c) in chunks.iter().enumerate() {
        recorder.record_at(i as u64 * 10, &c.bytes).unwrap();
    }
    recorder.note_at(99_999, "board vanished").unwrap();
    // No explicit flush: every read is written out as it is recorded.
    let text = std::fs::read_to_string(recorder.path()).unwrap();
    let back = capture::parse(&text).unwrap();
    let expected: Vec<_> = chunks
        .iter()
        .enumerate()
        .filter(|(_, c)| !c.bytes.is_empty())
        .map(|(i, c)| capture::Chunk {
            at_ms: Some(i as u64 * 10),
            bytes: c.bytes.clone(),
        })
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(back, expected);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn recordings_round_trip(
        reads in prop::collection::vec(
            (0u64..1_000_000, prop::collection::vec(any::<u8>(), 0..300)),
            0..40,
        )
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut recorder = Recorder::create(dir.path(), "b").unwrap();
        let mut at = 0;
        let mut expected = Vec::new();
        for (step, bytes) in &reads {
            at += step;
            recorder.record_at(at, bytes).unwrap();
            if !bytes.is_empty() {
                expected.push(capture::Chunk { at_ms: Some(at), bytes: bytes.clone() });
            }
        }
        let text = std::fs::read_to_string(recorder.path()).unwrap();
        prop_assert!(text.starts_with(capture::RECORD_HEADER));
        prop_assert_eq!(capture::parse(&text).unwrap(), expected);
    }
}
