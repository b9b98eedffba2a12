//! The commit log: group commit for many journal files with one `fdatasync`.
//!
//! The journal writer ([`super::writer`]) writes each board's lines to its own journal file
//! without syncing it, appends a copy of the same lines (with the file's inode and the offset
//! they went to) to this one shared file, and syncs only this file: one `fdatasync` makes
//! every board's lines of the group durable. The journal files themselves are synced now and
//! then (a checkpoint: [`CHECKPOINT_BYTES`] of log or [`CHECKPOINT_EVERY`]), after which the
//! log is emptied; so the log stays small and restore reads the journals as before.
//!
//! The journals are synced by a thread of their own, not the writer's: syncing 200 journal
//! files one after the other takes a second or two, and every board's publication waits for
//! the writer. So a checkpoint first *retires* the log ([`CommitLog::retire`]: renamed to
//! `commit.log.old`, a new empty log takes its place and the groups go on into it), then the
//! journals written before are synced aside, and then the old log is removed
//! ([`remove_retired`]). Until then both logs are read by [`recover`], the old one first.
//!
//! After a power cut, [`recover`] (run before any journal is opened) puts back into each
//! journal the lines the log holds that did not reach its file. A `kill -9` loses nothing the
//! kernel already had; the log only matters when the machine itself went down.
//!
//! `<games dir>/commit.log`, UTF-8 text:
//!
//! ```text
//! # eboardd-commit-log 1
//! <crc32 of the rest, 8 hex digits> <board id> <inode> <offset> <the journal line>
//! ```

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::journal::{Chunk, crc32};

/// First line of the log.
pub const HEADER: &str = "# eboardd-commit-log 1";
/// Empty the log (after syncing every journal) once it holds this much.
pub const CHECKPOINT_BYTES: u64 = 4 << 20;
/// ... or this long after the last checkpoint, whichever comes first.
pub const CHECKPOINT_EVERY: Duration = Duration::from_secs(300);

/// Where the log of a games directory is.
pub fn log_path(games_dir: &Path) -> PathBuf {
    games_dir.join("commit.log")
}

/// Where a retired log waits until the journals it covers are synced.
pub fn retired_path(games_dir: &Path) -> PathBuf {
    games_dir.join("commit.log.old")
}

/// The journals a retired log covers are synced: it goes.
pub fn remove_retired(games_dir: &Path) -> io::Result<()> {
    match fs::remove_file(retired_path(games_dir)) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// The open log.
pub struct CommitLog {
    path: PathBuf,
    file: File,
    len: u64,
    since: Instant,
}

impl CommitLog {
    /// Open the log, empty (call [`recover`] first).
    pub fn create(games_dir: &Path) -> io::Result<CommitLog> {
        super::faults::check()?;
        fs::create_dir_all(games_dir)?;
        let log = CommitLog::open_new(&log_path(games_dir))?;
        // What a retired log held is in the journals now ([`recover`] put it back).
        remove_retired(games_dir)?;
        Ok(log)
    }

    /// A new empty log at `path` (its directory synced).
    fn open_new(path: &Path) -> io::Result<CommitLog> {
        let path = path.to_path_buf();
        let games_dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        let mut file = super::state_file::open(
            &path,
            OpenOptions::new().create(true).truncate(false).write(true),
        )?;
        file.set_len(0)?;
        file.write_all(format!("{HEADER}\n").as_bytes())?;
        file.sync_all()?;
        File::open(games_dir)?.sync_all()?;
        Ok(CommitLog {
            path,
            file,
            len: (HEADER.len() + 1) as u64,
            since: Instant::now(),
        })
    }

    /// Append copies of the chunks of every board and sync the log: when this returns `Ok`,
    /// all of them are durable. On failure the log is cut back to what it was.
    pub fn commit(&mut self, chunks: &[(&str, &Chunk)]) -> io::Result<()> {
        let mut text = String::new();
        for (id, chunk) in chunks {
            let mut offset = chunk.offset;
            for line in chunk.text.split_inclusive('\n') {
                let body = format!(
                    "{id} {} {offset} {}",
                    chunk.ino,
                    line.trim_end_matches('\n')
                );
                text.push_str(&format!("{:08x} {body}\n", crc32(body.as_bytes())));
                offset += line.len() as u64;
            }
        }
        let result = super::faults::check()
            .and_then(|_| self.file.write_all_at(text.as_bytes(), self.len))
            .and_then(|_| self.file.sync_data());
        match result {
            Ok(()) => {
                self.len += text.len() as u64;
                Ok(())
            }
            Err(e) => {
                let _ = self.file.set_len(self.len);
                Err(e)
            }
        }
    }

    /// Whether it is time to sync the journals and empty the log: it holds `bytes`
    /// ([`CHECKPOINT_BYTES`] in the daemon), or the last checkpoint is [`CHECKPOINT_EVERY`] ago.
    pub fn wants_checkpoint(&self, bytes: u64) -> bool {
        self.len > (HEADER.len() + 1) as u64
            && (self.len >= bytes || self.since.elapsed() >= CHECKPOINT_EVERY)
    }

    /// Set the log aside for a checkpoint that syncs the journals off the writer's thread:
    /// it becomes [`retired_path`] and a new empty log takes its place. Refused while an
    /// earlier retired log is still there (its journals are still being synced).
    pub fn retire(&mut self) -> io::Result<()> {
        let games_dir = self.path.parent().unwrap_or(Path::new("."));
        let retired = retired_path(games_dir);
        if retired.exists() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} is still there", retired.display()),
            ));
        }
        super::faults::check()?;
        fs::rename(&self.path, &retired)?;
        // The new log replaces it under its name; `create` syncs the directory, so the
        // rename is on the device before any group goes into the new log.
        match CommitLog::open_new(&self.path) {
            Ok(log) => {
                *self = log;
                Ok(())
            }
            Err(e) => {
                // Back as it was: the groups go on into the old log.
                let _ = fs::rename(&retired, &self.path);
                Err(e)
            }
        }
    }

    /// Empty the log: every journal it covers has been synced.
    pub fn reset(&mut self) -> io::Result<()> {
        self.file.set_len((HEADER.len() + 1) as u64)?;
        self.file.sync_data()?;
        self.len = (HEADER.len() + 1) as u64;
        self.since = Instant::now();
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// What [`recover`] did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Recovered {
    /// Journal lines put back, per board.
    pub lines: BTreeMap<String, usize>,
    /// Journals whose lines could not be put back, with why: the log must then be kept.
    pub kept: Vec<String>,
}

/// Put back into each journal under `games_dir` the lines the log holds beyond what reached
/// the journal's file (a power cut after the log was synced, before the journals were).
/// Lines of a file that has since been replaced (another inode) are skipped. A torn or bad
/// log line ends the log there. The journals touched are synced; the log is left for
/// [`CommitLog::create`] to empty — unless a journal could not be opened to put its lines
/// back ([`Recovered::kept`]): then nothing may empty the log.
pub fn recover(games_dir: &Path) -> io::Result<Recovered> {
    // board id -> (inode, offset, journal line with its newline), in log order: a retired
    // log (a checkpoint that did not finish) first, then the log.
    let mut entries: BTreeMap<String, Vec<(u64, u64, String)>> = BTreeMap::new();
    for path in [retired_path(games_dir), log_path(games_dir)] {
        read_log(&path, &mut entries)?;
    }
    put_back(games_dir, entries)
}

/// The lines of the log at `path` (none if there is none), added to `entries`.
fn read_log(
    path: &Path,
    entries: &mut BTreeMap<String, Vec<(u64, u64, String)>>,
) -> io::Result<()> {
    let bytes = match super::state_file::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        // Not a log this daemon wrote (a FIFO, a directory): nothing in it to put back. The
        // writer says so while it keeps the log from being made.
        Err(e) if super::state_file::as_not_regular(&e).is_some() => return Ok(()),
        Err(e) => return Err(e),
    };
    let text = String::from_utf8_lossy(&bytes);
    let mut lines = text.split_inclusive('\n');
    match lines.next() {
        Some(h) if h.trim_end() == HEADER => {}
        Some(h) if h.ends_with('\n') && h.starts_with("# eboardd-commit-log ") => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("written by another version ({:?})", h.trim_end()),
            ));
        }
        _ => return Ok(()),
    }
    for line in lines {
        let Some(body) = line.strip_suffix('\n') else {
            break; // torn
        };
        let Some((sum, rest)) = body.split_once(' ') else {
            break;
        };
        if u32::from_str_radix(sum, 16).ok() != Some(crc32(rest.as_bytes())) {
            break;
        }
        let mut parts = rest.splitn(4, ' ');
        let (Some(id), Some(ino), Some(offset), Some(jline)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            break;
        };
        let (Ok(ino), Ok(offset)) = (ino.parse(), offset.parse()) else {
            break;
        };
        entries
            .entry(id.to_owned())
            .or_default()
            .push((ino, offset, format!("{jline}\n")));
    }
    Ok(())
}

/// Put the logs' lines back into their journals (see [`recover`]).
fn put_back(
    games_dir: &Path,
    entries: BTreeMap<String, Vec<(u64, u64, String)>>,
) -> io::Result<Recovered> {
    let mut recovered = Recovered::default();
    for (id, list) in entries {
        let path = super::journal::journal_path(games_dir.parent().unwrap_or(games_dir), &id);
        let file = match super::state_file::open(&path, OpenOptions::new().read(true).write(true)) {
            Ok(f) => f,
            Err(e) => {
                // Not applied, so not to be thrown away: the caller keeps the log.
                tracing::error!(
                    board = %id,
                    "commit log: cannot open {} to put back {} lines ({e})",
                    path.display(),
                    list.len()
                );
                recovered.kept.push(format!("{} ({e})", path.display()));
                continue;
            }
        };
        let meta = file.metadata()?;
        let mut len = meta.len();
        let mut put_back = 0;
        for (ino, offset, line) in list.iter().filter(|(ino, ..)| *ino == meta.ino()) {
            let _ = ino;
            let end = offset + line.len() as u64;
            if end <= len {
                let mut have = vec![0u8; line.len()];
                file.read_exact_at(&mut have, *offset)?;
                if have == line.as_bytes() {
                    continue;
                }
            } else if *offset > len {
                tracing::warn!(
                    "commit log: {} ends at {len}, the log continues it at {offset}; not \
                     guessing what is between",
                    path.display()
                );
                break;
            }
            file.set_len(*offset)?;
            file.write_all_at(line.as_bytes(), *offset)?;
            len = end;
            put_back += 1;
        }
        if put_back > 0 {
            file.sync_data()?;
            tracing::warn!(
                board = %id,
                lines = put_back,
                "journal lines put back from the commit log (the machine went down before \
                 the journal itself was synced)"
            );
            recovered.lines.insert(id, put_back);
        }
    }
    Ok(recovered)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::journal::{Journal, encode_lines, journal_path};
    use eboard_core::session::Event;

    fn ev(n: u32) -> Event {
        Event::Record(eboard_core::session::RecordFact::Tags {
            tags: vec![("Round".into(), n.to_string())],
        })
    }

    /// A state dir with board `b1`'s journal and a commit log: `(dir, games dir, journal path,
    /// journal, log)`.
    fn journal_and_log() -> (tempfile::TempDir, PathBuf, PathBuf, Journal, CommitLog) {
        let dir = tempfile::tempdir().unwrap();
        let games = dir.path().join("games");
        let path = journal_path(dir.path(), "b1");
        let (j, _, _) = Journal::open(&path).unwrap();
        let log = CommitLog::create(&games).unwrap();
        (dir, games, path, j, log)
    }

    /// `event` written to board `b1`'s journal and its unsynced chunks committed to the log.
    fn write_and_commit(j: &mut Journal, log: &mut CommitLog, event: Event) {
        j.write(&[event]).unwrap();
        let chunks: Vec<Chunk> = j.unsynced_chunks().to_vec();
        log.commit(&chunks.iter().map(|c| ("b1", c)).collect::<Vec<_>>())
            .unwrap();
    }

    #[test]
    fn lines_lost_from_a_journal_are_put_back() {
        let (_dir, games, path, mut j, mut log) = journal_and_log();
        write_and_commit(&mut j, &mut log, ev(1));
        j.mark_synced();
        write_and_commit(&mut j, &mut log, ev(2));
        j.mark_synced();
        drop(j);
        let full = fs::read(&path).unwrap();
        // The machine went down: the journal lost its last line and a half (the page cache),
        // the log (synced) has them.
        let second = encode_lines(&[ev(2)]).unwrap();
        let cut = full.len() - second.len() - 5;
        fs::write(&path, &full[..cut]).unwrap();
        let r = recover(&games).unwrap();
        assert_eq!(r.lines.get("b1"), Some(&2));
        assert_eq!(fs::read(&path).unwrap(), full);
        // Recovering again changes nothing.
        assert!(recover(&games).unwrap().lines.is_empty());
        let (_, events, w) = Journal::open(&path).unwrap();
        assert_eq!(events, vec![ev(1), ev(2)]);
        assert!(w.is_none());
        // A torn log line ends the log; an emptied log recovers nothing.
        let mut log = CommitLog::create(&games).unwrap();
        log.reset().unwrap();
        assert!(recover(&games).unwrap().lines.is_empty());
    }

    #[test]
    fn a_retired_log_is_recovered_before_the_new_one_and_removed_by_the_next_start() {
        let (_dir, games, path, mut j, mut log) = journal_and_log();
        write_and_commit(&mut j, &mut log, ev(1));
        j.mark_synced();
        // A checkpoint aside: the log is retired, the next group goes into a new one.
        log.retire().unwrap();
        assert!(retired_path(&games).exists());
        assert!(log.retire().is_err(), "one retired log at a time");
        write_and_commit(&mut j, &mut log, ev(2));
        j.mark_synced();
        drop(j);
        let full = fs::read(&path).unwrap();
        // The machine went down before the journal-sync thread was done: the journal lost
        // both lines; one is in each log.
        let lines = encode_lines(&[ev(1), ev(2)]).unwrap();
        fs::write(&path, &full[..full.len() - lines.len()]).unwrap();
        let r = recover(&games).unwrap();
        assert_eq!(r.lines.get("b1"), Some(&2));
        assert_eq!(fs::read(&path).unwrap(), full);
        let (_, events, _) = Journal::open(&path).unwrap();
        assert_eq!(events, vec![ev(1), ev(2)]);
        // The next start empties the log and removes the retired one.
        let _log = CommitLog::create(&games).unwrap();
        assert!(!retired_path(&games).exists());
        assert!(recover(&games).unwrap().lines.is_empty());
        // Removing a retired log that is not there is no error.
        remove_retired(&games).unwrap();
    }

    #[test]
    fn lines_of_a_replaced_file_are_skipped() {
        let (dir, games, path, mut j, mut log) = journal_and_log();
        write_and_commit(&mut j, &mut log, ev(1));
        drop(j);
        // Replaced by another file (as a rotation does): its inode differs.
        let other = dir.path().join("other");
        fs::write(&other, "# eboardd-journal 2\n").unwrap();
        fs::rename(&other, &path).unwrap();
        assert!(recover(&games).unwrap().lines.is_empty());
        assert_eq!(fs::read_to_string(&path).unwrap(), "# eboardd-journal 2\n");
    }
}
