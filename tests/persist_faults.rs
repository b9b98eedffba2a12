//! The journal on a disk that refuses writes, in process, through the daemon's fault injector
//! (one test in this binary: the injector is configured once per process).
//!
//! The restart failure: a damaged journal on a full disk kept its board from coming
//! up ("cannot keep a copy of the damaged file: No space left on device"). Now the journal
//! opens with its good records and leaves the file alone; the repair (copy, cut) and the new
//! records follow as soon as the disk takes writes again. Failed appends never leave anything
//! behind in the file.

use std::path::Path;

use eboard_core::session::{Event, RecordFact};
use eboardd::daemon::faults::FAULTS_ENV;
use eboardd::daemon::journal::{Damage, Journal, journal_path};

fn tags(n: u32) -> Event {
    Event::Record(RecordFact::Tags {
        tags: vec![("Round".into(), n.to_string())],
    })
}

fn fault(file: &Path, what: &str) {
    std::fs::write(file, what).unwrap();
}

#[test]
fn a_refusing_disk_never_damages_the_journal_and_repairs_wait_for_room() {
    let dir = tempfile::tempdir().unwrap();
    let faults = dir.path().join("faults");
    // SAFETY: the only test of this binary sets it before anything reads the environment.
    unsafe { std::env::set_var(FAULTS_ENV, &faults) };

    // A journal with corruption in the middle, as the full disk left it.
    let path = journal_path(dir.path(), "b1");
    let (mut j, _, _) = Journal::open(&path).unwrap();
    j.append_all(&[tags(1), tags(2), tags(3)]).unwrap();
    drop(j);
    let good = std::fs::read_to_string(&path).unwrap();
    let damaged = good.replacen("\"2\"", "\"X\"", 1);
    std::fs::write(&path, &damaged).unwrap();

    // The disk is full: the journal opens all the same, with what is good, and touches nothing.
    fault(&faults, "ENOSPC");
    let (mut j, events, warning) = Journal::open(&path).unwrap();
    assert_eq!(events, vec![tags(1)]);
    let w = warning.expect("damage reported");
    assert_eq!(w.kind, Damage::Corrupt);
    assert!(w.saved_copy.is_none(), "no copy could be kept yet");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), damaged);

    // Appends fail with the disk's error, and leave the file exactly as it was.
    let e = j.append_all(&[tags(4)]).unwrap_err();
    assert_eq!(e.source.raw_os_error(), Some(nix::libc::ENOSPC), "{e}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), damaged);
    fault(&faults, "EROFS");
    assert!(j.append_all(&[tags(4)]).is_err());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), damaged);

    // Space is back: the first append keeps a copy of the damaged file, cuts the damage off
    // and appends.
    fault(&faults, "");
    j.append_all(&[tags(4)]).unwrap();
    drop(j);
    let copy = dir.path().join("games/b1.journal.corrupt-1");
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), damaged);
    let (mut j, events, warning) = Journal::open(&path).unwrap();
    assert_eq!(events, vec![tags(1), tags(4)]);
    assert!(warning.is_none());

    // A write that fails half-way (the injector lands half of it, as a full disk does) is cut
    // back: the next good append follows the last good record, with nothing torn between.
    fault(&faults, "ENOSPC");
    assert!(j.write(&[tags(5), tags(6)]).is_err());
    fault(&faults, "");
    j.append_all(&[tags(7)]).unwrap();
    drop(j);
    let (_, events, warning) = Journal::open(&path).unwrap();
    assert_eq!(events, vec![tags(1), tags(4), tags(7)]);
    assert!(warning.is_none(), "{warning:?}");

    // A new journal on a full disk: opened in memory, created by the first write that works.
    fault(&faults, "ENOSPC");
    let fresh = journal_path(dir.path(), "b2");
    let (mut j, events, _) = Journal::open(&fresh).unwrap();
    assert!(events.is_empty());
    assert!(j.append_all(&[tags(1)]).is_err());
    fault(&faults, "");
    j.append_all(&[tags(1)]).unwrap();
    drop(j);
    assert_eq!(Journal::open(&fresh).unwrap().1, vec![tags(1)]);
}
