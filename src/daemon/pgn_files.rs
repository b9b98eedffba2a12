//! PGN files for broadcast tools and archives: one live file per board, replaced atomically
//! after every move, and one file per finished game. The PGN text itself comes from the game
//! record; this module only handles names, directories, atomicity and errors.
//!
//! Layout under `pgn_dir`:
//!
//! ```text
//! live/<board id>.pgn              the current (or last) game of each board
//! <YYYY-MM-DD>-<board id>-<N>.pgn  finished games, N counting from 1 per day and board
//! ```
//!
//! Live files are rewritten in place while nobody has them open, under a write lease that
//! makes anyone opening the file meanwhile wait for the whole text ([`super::leased_write`]);
//! otherwise they are written to a hidden temporary file in the same directory
//! (`.<id>.pgn.tmp`, which folder pollers ignore) and put in place of the old one in one step
//! (the names swapped, then the old file removed; a rename where a swap cannot be done). Either
//! way a reader sees the previous or the new game text, never a mix. The journal, not these files, is the source
//! of truth: after a crash the daemon simply rewrites them.
//!
//! Finished games are published without clobbering: the text is linked into place under the
//! first free number, and writing the very same game again (say, after a restart restored a
//! finished game) returns the existing file instead of making a copy.

use std::borrow::Cow;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::file_error::file_kind;

/// The PGN directory of the daemon.
#[derive(Debug, Clone)]
pub struct PgnFiles {
    dir: PathBuf,
    /// Live files may be rewritten in place while nobody has them open
    /// ([`super::leased_write`]): the live directory's file system overwrites in place,
    /// checked once when the directory is taken into use.
    in_place: Option<super::leased_write::InPlaceDir>,
}

file_kind!(
    /// A failed PGN file operation, naming the file.
    PgnFileError,
    PgnFile,
    "PGN file"
);

impl PgnFiles {
    /// Use `dir` (and `dir/live`), creating them if needed.
    pub fn new(dir: &Path) -> Result<PgnFiles, PgnFileError> {
        let mut files = PgnFiles {
            dir: dir.to_path_buf(),
            in_place: None,
        };
        let live = files.live_dir();
        fs::create_dir_all(&live).map_err(PgnFileError::at(&live, "create the directory"))?;
        files.in_place = super::leased_write::overwrites_in_place(&live);
        Ok(files)
    }

    /// The PGN directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The directory of live files.
    pub fn live_dir(&self) -> PathBuf {
        self.dir.join("live")
    }

    /// Where a board's live PGN is.
    pub fn live_path(&self, board_id: &str) -> PathBuf {
        self.live_dir().join(format!("{board_id}.pgn"))
    }

    /// Replace a board's live PGN atomically with `pgn`.
    pub fn write_live(&self, board_id: &str, pgn: &str) -> Result<PathBuf, PgnFileError> {
        let path = self.live_path(board_id);
        check_id(board_id).map_err(PgnFileError::at(&path, "use this board id"))?;
        let tmp = self.live_dir().join(format!(".{board_id}.pgn.tmp"));
        super::faults::check().map_err(PgnFileError::at(&tmp, "write the new game text"))?;
        // The text as every file holds it, made once for both ways of writing it.
        let text = with_newline(pgn);
        // While nobody has the file open, in place under a lease: no new file per move.
        if let Some(dir) = self.in_place {
            match super::leased_write::rewrite_unshared(dir, &path, text.as_bytes()) {
                Ok(true) => return Ok(path),
                Ok(false) => {}
                // Part of the new text may be in the file: the replacement puts all of it there.
                Err(e) => tracing::debug!(path = %path.display(), "rewrite in place: {e}"),
            }
        }
        // No fsync: readers need the atomic rename, not durability. The journal is what
        // survives a crash, and the daemon rewrites every live file from it at start. A sync
        // here cost two synced writes per move on the board task (measured: the p99 outliers).
        write_unsynced(&tmp, &text).map_err(PgnFileError::at(&tmp, "write the new game text"))?;
        replace_unsynced(&tmp, &path).map_err(PgnFileError::at(&path, "replace it"))?;
        Ok(path)
    }

    /// Remove a board's live PGN (the board is no longer served). Missing is fine.
    pub fn remove_live(&self, board_id: &str) -> Result<(), PgnFileError> {
        let path = self.live_path(board_id);
        check_id(board_id).map_err(PgnFileError::at(&path, "use this board id"))?;
        match fs::remove_file(&path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                Err(PgnFileError::at(&path, "remove it")(e))
            }
            _ => Ok(()),
        }
    }

    /// Move a board's live PGN out of `live/` (the board is no longer served) into
    /// `removed/<board id>-<N>.pgn` under the first free N, so folder pollers stop showing it
    /// and the game text is still there. Returns where it went; nothing to move is fine.
    pub fn retire_live(&self, board_id: &str) -> Result<Option<PathBuf>, PgnFileError> {
        let path = self.live_path(board_id);
        check_id(board_id).map_err(PgnFileError::at(&path, "use this board id"))?;
        if !path.exists() {
            return Ok(None);
        }
        let dir = self.dir.join("removed");
        fs::create_dir_all(&dir).map_err(PgnFileError::at(&dir, "create the directory"))?;
        let mut n = 1u32;
        loop {
            let target = dir.join(format!("{board_id}-{n}.pgn"));
            // A link never replaces an existing file, unlike a rename.
            match fs::hard_link(&path, &target) {
                Ok(()) => {
                    fs::remove_file(&path).map_err(PgnFileError::at(&path, "remove it"))?;
                    return Ok(Some(target));
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => n += 1,
                Err(e) => return Err(PgnFileError::at(&target, "move the live game here")(e)),
            }
        }
    }

    /// Store a finished game, dated by its `Date` tag when that is a full date, else today
    /// (UTC). Returns the file's path.
    pub fn write_finished(&self, board_id: &str, pgn: &str) -> Result<PathBuf, PgnFileError> {
        let date = pgn_date(pgn).unwrap_or_else(|| utc_date(SystemTime::now()));
        self.write_finished_on(&date, board_id, pgn)
    }

    /// Store a finished game under `date` (`YYYY-MM-DD`).
    pub fn write_finished_on(
        &self,
        date: &str,
        board_id: &str,
        pgn: &str,
    ) -> Result<PathBuf, PgnFileError> {
        let first = self.dir.join(finished_name(date, board_id, 1));
        check_id(board_id).map_err(PgnFileError::at(&first, "use this board id"))?;
        let text = with_newline(pgn);
        let tmp = self.dir.join(format!(".{board_id}.finished.tmp"));
        super::faults::check().map_err(PgnFileError::at(&tmp, "write the game text"))?;
        let mut written = false;
        let mut n = 1u32;
        let result = loop {
            let path = self.dir.join(finished_name(date, board_id, n));
            match super::state_file::read(&path) {
                Ok(existing) if existing == text.as_bytes() => break Ok(path),
                Ok(_) => {
                    n += 1;
                    continue;
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => break Err(PgnFileError::at(&path, "read it")(e)),
            }
            if !written {
                if let Err(e) = write_synced(&tmp, &text) {
                    break Err(PgnFileError::at(&tmp, "write the game text")(e));
                }
                written = true;
            }
            // A link never replaces an existing file, unlike a rename.
            match fs::hard_link(&tmp, &path) {
                Ok(()) => break Ok(path),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => n += 1,
                Err(_) => {
                    // No hard links on this file system: the existence check above has to do.
                    break fs::rename(&tmp, &path)
                        .map(|_| path.clone())
                        .map_err(PgnFileError::at(&path, "create it"));
                }
            }
        };
        let _ = fs::remove_file(&tmp);
        if result.is_ok() {
            // Make the new directory entry durable: finished games are the archive.
            let _ = File::open(&self.dir).and_then(|d| d.sync_all());
        }
        result
    }
}

/// `<date>-<board id>-<n>.pgn`
pub fn finished_name(date: &str, board_id: &str, n: u32) -> String {
    format!("{date}-{board_id}-{n}.pgn")
}

/// The `Date` tag of a PGN as `YYYY-MM-DD`, when it is a complete date (no `??`).
pub fn pgn_date(pgn: &str) -> Option<String> {
    let line = pgn
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("[Date "))?;
    let value = line.strip_prefix("[Date \"")?.strip_suffix("\"]")?;
    let parts: Vec<&str> = value.split('.').collect();
    let ok = parts.len() == 3
        && [4, 2, 2]
            .iter()
            .zip(&parts)
            .all(|(len, p)| p.len() == *len && p.bytes().all(|b| b.is_ascii_digit()));
    ok.then(|| parts.join("-"))
}

/// The UTC calendar date of `time` as `YYYY-MM-DD` (the session dates games with the same
/// day: `game::PgnDate`).
pub fn utc_date(time: SystemTime) -> String {
    let ms = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    eboard_core::game::PgnDate::of_unix_ms(ms).iso()
}

/// Board ids become file names: only the contract's id alphabet is allowed.
fn check_id(board_id: &str) -> io::Result<()> {
    if !board_id.is_empty()
        && board_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{board_id:?} is not a board id (letters, digits and `_` only)"),
        ))
    }
}

/// `pgn` ending with a newline: borrowed when it already does (then nothing is copied).
fn with_newline(pgn: &str) -> Cow<'_, str> {
    if pgn.ends_with('\n') {
        Cow::Borrowed(pgn)
    } else {
        Cow::Owned(format!("{pgn}\n"))
    }
}

fn write_synced(path: &Path, text: &str) -> io::Result<()> {
    let mut f = super::state_file::create(path)?;
    f.write_all(with_newline(text).as_bytes())?;
    f.sync_data()
}

fn write_unsynced(path: &Path, text: &str) -> io::Result<()> {
    super::state_file::create(path)?.write_all(with_newline(text).as_bytes())
}

/// Put the file at `tmp` in place of the one at `path`, atomically for readers: a reader
/// opens either the old text or the new one, and one that holds the old file open keeps
/// reading it whole.
///
/// Where the system can, the two names are swapped (`RENAME_EXCHANGE`) and the old file,
/// now at `tmp`, is then removed: the same atomic switch as a rename for every reader, but
/// ext4 treats a rename over an existing file as "replace via rename" (`auto_da_alloc`) and
/// starts writing the new file's blocks to the disk at once, on this thread, for every change
/// of the text — most of the cost of a live file update, and a disk write per move
/// that the next move makes useless. A swap is not such a replace, so the kernel writes the
/// file back in its own time, and a version that was replaced before then never reaches the
/// disk. What this gives up is only the file's durability across a power cut (the newest
/// text could be empty there), which the live file never had: it is not synced, and the
/// daemon rewrites every live file from the journal when it starts.
fn replace_unsynced(tmp: &Path, path: &Path) -> io::Result<()> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use nix::errno::Errno;
        use nix::fcntl::{AT_FDCWD, RenameFlags, renameat2};
        // Only a regular file is swapped: anything else in the way (a directory) is refused
        // by the rename below, as it always was, rather than moved to the hidden name.
        let old_is_file = fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file());
        let swapped = if old_is_file {
            renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RenameFlags::RENAME_EXCHANGE)
        } else {
            Err(Errno::ENOENT)
        };
        match swapped {
            Ok(()) => {
                // The old text, now under the hidden name: a reader that opened it still has it.
                return match fs::remove_file(tmp) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
                    _ => Ok(()),
                };
            }
            // No file to swap with yet (the first write), or a file system (or kernel) that
            // cannot swap: an ordinary rename does the same.
            Err(Errno::ENOENT | Errno::EINVAL | Errno::ENOSYS | Errno::EOPNOTSUPP) => {}
            Err(e) => return Err(e.into()),
        }
    }
    fs::rename(tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn dates() {
        assert_eq!(utc_date(SystemTime::UNIX_EPOCH), "1970-01-01");
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(utc_date(t), "2000-02-29");
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_798_761_600 - 1);
        assert_eq!(utc_date(t), "2026-12-31");
        assert_eq!(
            pgn_date("[Event \"x\"]\n[Date \"2024.03.09\"]\n\n1. e4 *\n"),
            Some("2024-03-09".into())
        );
        assert_eq!(pgn_date("[Date \"2024.??.??\"]\n"), None);
        assert_eq!(pgn_date("1. e4 *"), None);
    }

    #[test]
    fn live_file_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let files = PgnFiles::new(dir.path()).unwrap();
        let p = files.write_live("b_1", "1. e4 *").unwrap();
        assert_eq!(p, dir.path().join("live/b_1.pgn"));
        files.write_live("b_1", "1. e4 e5 *\n").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "1. e4 e5 *\n");
        let names: Vec<_> = fs::read_dir(files.live_dir())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec!["b_1.pgn"]);
        files.remove_live("b_1").unwrap();
        files.remove_live("b_1").unwrap();
        assert!(!p.exists());
        assert!(files.write_live("../x", "").is_err());
    }

    #[test]
    fn a_reader_of_the_old_live_text_keeps_it_whole_and_nothing_is_left_behind() {
        use std::io::Read;
        let dir = tempfile::tempdir().unwrap();
        let files = PgnFiles::new(dir.path()).unwrap();
        let path = files.write_live("b1", "1. e4 *").unwrap();
        let mut reader = File::open(&path).unwrap();
        for text in ["1. e4 e5 *", "1. e4 e5 2. Nf3 *"] {
            files.write_live("b1", text).unwrap();
            assert_eq!(fs::read_to_string(&path).unwrap(), format!("{text}\n"));
        }
        let mut old = String::new();
        reader.read_to_string(&mut old).unwrap();
        assert_eq!(old, "1. e4 *\n");
        let names: Vec<_> = fs::read_dir(files.live_dir())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec!["b1.pgn"]);
    }

    #[test]
    fn a_directory_in_place_of_the_live_file_is_refused_and_stays() {
        let dir = tempfile::tempdir().unwrap();
        let files = PgnFiles::new(dir.path()).unwrap();
        fs::create_dir(files.live_path("b1")).unwrap();
        assert!(files.write_live("b1", "1. e4 *").is_err());
        assert!(files.live_path("b1").is_dir());
    }

    #[test]
    fn finished_games_are_numbered_and_not_duplicated() {
        let dir = tempfile::tempdir().unwrap();
        let files = PgnFiles::new(dir.path()).unwrap();
        let a = files
            .write_finished_on("2026-01-02", "b1", "game A")
            .unwrap();
        let b = files
            .write_finished_on("2026-01-02", "b1", "game B")
            .unwrap();
        let again = files
            .write_finished_on("2026-01-02", "b1", "game A")
            .unwrap();
        assert_eq!(a, dir.path().join("2026-01-02-b1-1.pgn"));
        assert_eq!(b, dir.path().join("2026-01-02-b1-2.pgn"));
        assert_eq!(again, a);
        assert_eq!(fs::read_to_string(&b).unwrap(), "game B\n");
        let dated = files
            .write_finished("b1", "[Date \"2025.12.31\"]\n\n1. e4 1-0\n")
            .unwrap();
        assert_eq!(dated, dir.path().join("2025-12-31-b1-1.pgn"));
        assert!(!dir.path().join(".b1.finished.tmp").exists());
    }
}
