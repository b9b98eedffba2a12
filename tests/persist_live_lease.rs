//! A live PGN file rewritten in place under a write lease (`daemon::leased_write`), read by
//! other threads all the while, as a broadcast tool polling the live folder reads it: no read
//! ever sees part of a text, a reader opening the file during a write waits for the whole of
//! it, and the broken leases' SIGIO (blocked first thing, as the daemon's `main` does) ends
//! nothing. Its own process (`harness = false`): the signal must be blocked before any thread
//! starts.

mod pgn_texts;

use std::os::unix::fs::MetadataExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use eboardd::daemon::leased_write;
use eboardd::daemon::pgn_files::PgnFiles;
use pgn_texts::game;

fn main() {
    leased_write::block_lease_signals().expect("SIGIO blocked");
    let dir = tempfile::tempdir().unwrap();
    let files = PgnFiles::new(dir.path()).unwrap();
    let texts: Arc<Vec<String>> = Arc::new((1..=60).map(game).collect());
    files.write_live("board_1", &texts[0]).unwrap();
    let path = files.live_path("board_1");

    // Nobody reading: the file is rewritten in place where the file system allows it (the
    // same inode, no new file per move), else replaced by a new one each time.
    let in_place = leased_write::overwrites_in_place(&files.live_dir()).is_some();
    let inode = std::fs::metadata(&path).unwrap().ino();
    for t in texts.iter().take(20).rev() {
        files.write_live("board_1", t).unwrap();
        assert_eq!(&std::fs::read_to_string(&path).unwrap(), t);
    }
    let same_file = std::fs::metadata(&path).unwrap().ino() == inode;
    assert_eq!(
        same_file, in_place,
        "rewritten in place exactly where it can be"
    );

    // Readers hammering it: every read is one whole text, whichever way each write went.
    let done = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let (done, texts, path) = (done.clone(), texts.clone(), path.clone());
            std::thread::spawn(move || {
                let mut reads = 0u32;
                while !done.load(Ordering::Relaxed) {
                    let text = std::fs::read_to_string(&path).expect("the live file exists");
                    assert!(
                        texts.contains(&text),
                        "a reader saw part of a game: {text:?}"
                    );
                    reads += 1;
                }
                reads
            })
        })
        .collect();
    for round in 0..20 {
        // Growing and shrinking texts, so both the cut and the growth are crossed.
        for t in texts.iter().skip(round % 2).step_by(3) {
            files.write_live("board_1", t).unwrap();
        }
    }
    done.store(true, Ordering::Relaxed);
    for reader in readers {
        assert!(reader.join().expect("a reader failed") > 0);
    }
    // The last round (the 20th) wrote every third text from the second: the last of those.
    let last = texts.iter().skip(1).step_by(3).next_back().unwrap();
    assert_eq!(&std::fs::read_to_string(&path).unwrap(), last);
    // Only the live file is left: no temporary files for pollers to pick up.
    let names: Vec<_> = std::fs::read_dir(files.live_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, ["board_1.pgn"]);
    println!("persist_live_lease: ok (in place: {in_place})");
}
