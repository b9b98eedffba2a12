//! The boards added at runtime with `AddBoard`, remembered across restarts until
//! `RemoveBoard`: `<state_dir>/boards.json`, replaced atomically (temporary file, sync,
//! rename) on every change.
//!
//! Each entry keeps the board's id, port and the settings it was added with (the `[daemon]`
//! defaults of that time); what operators change later (tags, rules) is in the board's
//! journal. At start the daemon serves the configured boards first and then these, skipping
//! any whose id or port the configuration now uses. A file that is not a board list is set aside
//! (`boards.json.unreadable-N`) rather than overwritten, and named in the log and in
//! `StorageProblem` until it is moved away; one that cannot be read, or that a newer version
//! wrote, is left in place and not written over until it can be read.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use eboard_core::session::SessionConfig;

use super::settings::BoardSpec;
use super::state_file;

/// The file's name in the state directory.
pub const FILE_NAME: &str = "boards.json";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Entry {
    id: String,
    port: String,
    #[serde(default)]
    listen_only: bool,
    session: SessionConfig,
}

#[derive(Debug, Serialize, Deserialize)]
struct FileFormat {
    version: u32,
    boards: Vec<Entry>,
}

/// The remembered boards.
#[derive(Debug)]
pub struct AddedBoards {
    path: PathBuf,
    entries: Vec<Entry>,
    /// The last change is not on disk yet.
    dirty: bool,
    /// The file exists but could not be read: it is never written over until it is read,
    /// and then this run's changes are made to what it holds.
    unread: Option<Unread>,
    /// The file set aside at load, with why: for `StorageProblem`.
    kept: Option<(PathBuf, String)>,
}

/// The file could not be read at start: why, and what this run changed since.
#[derive(Debug)]
struct Unread {
    error: String,
    /// Adds (`Some`) and removals (`None`, by id), in order.
    changes: Vec<(String, Option<Entry>)>,
}

impl AddedBoards {
    /// Read the list in `state_dir` (none yet is an empty list).
    ///
    /// A file this version cannot use is never written over: one that cannot be read (an I/O
    /// error, a directory in its place) or that a newer version wrote waits, with this run's
    /// changes, until it can be read ([`AddedBoards::problem`] says why meanwhile); one that
    /// is not a board list at all is set aside ([`AddedBoards::take_kept`]).
    pub fn load(state_dir: &Path) -> AddedBoards {
        let path = state_dir.join(FILE_NAME);
        let mut list = AddedBoards {
            path: path.clone(),
            entries: Vec::new(),
            dirty: false,
            unread: None,
            kept: None,
        };
        let unread = |error: String| {
            Some(Unread {
                error,
                changes: Vec::new(),
            })
        };
        match read(&path) {
            Ok(bytes) => match serde_json::from_slice::<FileFormat>(&bytes) {
                Ok(f) if f.version == 1 => list.entries = f.boards,
                Ok(f) if f.version > 1 => {
                    list.unread =
                        unread(format!("written by a newer eboardd (format {})", f.version));
                }
                Ok(f) => list.unread = unread(format!("of an unknown format ({})", f.version)),
                Err(e) => match set_aside(&path) {
                    Ok(aside) => {
                        let why = format!(
                            "board list {} could not be read ({e}): kept as {}; the boards \
                             added with AddBoard before are not served (add them again)",
                            path.display(),
                            aside.display()
                        );
                        tracing::error!("{why}");
                        list.kept = Some((aside, why));
                    }
                    Err(moved) => {
                        list.unread = unread(format!(
                            "not a board list ({e}), and it cannot be set aside ({moved})"
                        ));
                    }
                },
            },
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => list.unread = unread(format!("cannot read it ({e})")),
        }
        if let Some(problem) = list.problem() {
            tracing::error!("{problem}");
        }
        list
    }

    /// Why the file is not used (its boards not served, the file not written), while that
    /// lasts.
    pub fn problem(&self) -> Option<String> {
        self.unread.as_ref().map(|u| {
            format!(
                "board list {}: {}; the boards in it are not served now, and it is not \
                 written over until it can be read",
                self.path.display(),
                u.error
            )
        })
    }

    /// The file set aside at load (not a board list), with why, once.
    pub fn take_kept(&mut self) -> Option<(PathBuf, String)> {
        self.kept.take()
    }

    /// The remembered boards, in the order they were added.
    pub fn specs(&self) -> Vec<BoardSpec> {
        self.entries
            .iter()
            .map(|e| {
                BoardSpec::new(
                    e.id.clone(),
                    PathBuf::from(&e.port),
                    e.listen_only,
                    e.session.clone(),
                )
            })
            .collect()
    }

    /// Remember a board (replacing an entry with the same id).
    pub fn add(&mut self, spec: &BoardSpec) {
        let entry = Entry {
            id: spec.id.clone(),
            port: spec.port.to_string_lossy().into_owned(),
            listen_only: spec.listen_only,
            session: spec.session.clone(),
        };
        if let Some(u) = self.unread.as_mut() {
            u.changes.push((spec.id.clone(), Some(entry.clone())));
        }
        apply(&mut self.entries, &spec.id, Some(entry));
        self.dirty = true;
    }

    /// Forget a board; whether it was remembered.
    pub fn remove(&mut self, id: &str) -> bool {
        let before = self.entries.len();
        apply(&mut self.entries, id, None);
        let mut removed = self.entries.len() != before;
        if let Some(u) = self.unread.as_mut() {
            // It may be in the file this run could not read.
            u.changes.push((id.to_string(), None));
            removed = true;
        }
        self.dirty |= removed;
        removed
    }

    /// Whether a change still has to be written, or the file still to be read.
    pub fn dirty(&self) -> bool {
        self.dirty || self.unread.is_some()
    }

    /// Write the list if it changed (after reading the file, if it could not be read before).
    pub fn save(&mut self) -> io::Result<()> {
        if let Some(u) = self.unread.as_ref() {
            // What the file holds first; never less than it.
            let bytes = match read(&self.path) {
                Ok(bytes) => bytes,
                // Gone since (moved away by hand): nothing in it to keep.
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    br#"{"version": 1, "boards": []}"#.to_vec()
                }
                Err(e) => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!(
                            "{} still cannot be read ({e}; at start: {}), so it is not written over",
                            self.path.display(),
                            u.error
                        ),
                    ));
                }
            };
            let mut entries = match serde_json::from_slice::<FileFormat>(&bytes) {
                Ok(f) if f.version == 1 => f.boards,
                _ => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!(
                            "{} is not a board list this version reads; it is not written over",
                            self.path.display()
                        ),
                    ));
                }
            };
            for (id, change) in &u.changes {
                apply(&mut entries, id, change.clone());
            }
            self.dirty = !u.changes.is_empty();
            tracing::info!(
                "{} can be read again: its {} boards are kept (served from the next start)",
                self.path.display(),
                entries.len()
            );
            self.entries = entries;
            self.unread = None;
        }
        if !self.dirty {
            return Ok(());
        }
        super::faults::check()?;
        let text = serde_json::to_string_pretty(&FileFormat {
            version: 1,
            boards: self.entries.clone(),
        })?;
        let mut tmp = self.path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let result = state_file::create(&tmp)
            .and_then(|mut f| {
                f.write_all(text.as_bytes())?;
                f.write_all(b"\n")?;
                f.sync_data()
            })
            .and_then(|_| fs::rename(&tmp, &self.path))
            .and_then(|_| match self.path.parent() {
                Some(dir) => File::open(dir)?.sync_all(),
                None => Ok(()),
            });
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        } else {
            self.dirty = false;
        }
        result
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Read the file (through the fault injector's `read:` faults), never blocking on what is not
/// a regular file.
fn read(path: &Path) -> io::Result<Vec<u8>> {
    super::faults::check_read()?;
    state_file::read(path)
}

/// Put `entry` in the list as the one of `id` (replacing an older one), or remove `id`.
fn apply(entries: &mut Vec<Entry>, id: &str, entry: Option<Entry>) {
    entries.retain(|e| e.id != id);
    entries.extend(entry);
}

/// Rename the file to the first free `boards.json.unreadable-N`.
fn set_aside(path: &Path) -> io::Result<PathBuf> {
    let mut n = 1;
    loop {
        let mut name = path.as_os_str().to_owned();
        name.push(format!(".unreadable-{n}"));
        let aside = PathBuf::from(name);
        if fs::symlink_metadata(&aside).is_err() {
            super::faults::check()?;
            fs::rename(path, &aside)?;
            return Ok(aside);
        }
        n += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::config::DaemonConfig;
    use crate::daemon::settings::spec_for_port;

    #[test]
    fn boards_are_remembered_until_removed() {
        let dir = tempfile::tempdir().unwrap();
        let daemon = DaemonConfig::default();
        let mut list = AddedBoards::load(dir.path());
        assert!(list.specs().is_empty());
        let a = spec_for_port("/nonexistent/eboard/by-path/usb-1", &daemon).unwrap();
        let b = spec_for_port("/nonexistent/ttyACM3", &daemon).unwrap();
        list.add(&a);
        list.add(&b);
        list.save().unwrap();
        let again = AddedBoards::load(dir.path());
        assert_eq!(again.specs(), vec![a.clone(), b.clone()]);
        list.remove(&a.id);
        list.save().unwrap();
        assert_eq!(AddedBoards::load(dir.path()).specs(), vec![b]);
        assert!(!list.remove("nothing"));
    }

    #[test]
    fn an_unreadable_file_is_set_aside_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(FILE_NAME), "{ not json").unwrap();
        let mut list = AddedBoards::load(dir.path());
        assert!(list.specs().is_empty() && list.problem().is_none());
        let aside = dir.path().join("boards.json.unreadable-1");
        assert_eq!(fs::read_to_string(&aside).unwrap(), "{ not json");
        let (kept, why) = list.take_kept().unwrap();
        assert_eq!(kept, aside);
        assert!(
            why.contains("kept as") && why.contains("unreadable-1"),
            "{why}"
        );
    }

    #[test]
    fn a_newer_or_unreadable_file_waits_and_is_then_kept_with_this_runs_changes() {
        let dir = tempfile::tempdir().unwrap();
        let daemon = DaemonConfig::default();
        let file = dir.path().join(FILE_NAME);
        let newer = r#"{"version": 9, "boards": []}"#;
        fs::write(&file, newer).unwrap();
        let mut list = AddedBoards::load(dir.path());
        let problem = list.problem().unwrap();
        assert!(problem.contains("newer eboardd (format 9)"), "{problem}");
        let a = spec_for_port("/nonexistent/ttyACM3", &daemon).unwrap();
        list.add(&a);
        assert!(list.save().is_err());
        assert_eq!(fs::read_to_string(&file).unwrap(), newer);
        // Moved away by hand: this run's board is written.
        fs::remove_file(&file).unwrap();
        list.save().unwrap();
        assert!(list.problem().is_none() && !list.dirty());
        assert_eq!(AddedBoards::load(dir.path()).specs(), vec![a]);
        // A directory in its place: waited out, never blocking.
        fs::remove_file(&file).unwrap();
        fs::create_dir(&file).unwrap();
        let mut list = AddedBoards::load(dir.path());
        assert!(
            list.problem()
                .unwrap()
                .contains("boards.json is a directory")
        );
        assert!(list.dirty() && list.save().is_err());
        fs::remove_dir(&file).unwrap();
        list.save().unwrap();
        assert!(list.problem().is_none());
    }

    #[test]
    fn a_time_control_is_kept_as_its_pgn_string() {
        let dir = tempfile::tempdir().unwrap();
        // As written before the time control was a type: the PGN string.
        let old = r#"{"version":1,"boards":[{"id":"a","port":"/nonexistent/a","listen_only":false,
            "session":{"name":"a","rules":"standard","edition":"fide-2023","guidelines_iii":false,
            "white_display":"auto","orientation":"auto","time_control":"40/5400+30:1800+30",
            "tags":[],"number":0,"variant":"standard"}}]}"#;
        fs::write(dir.path().join(FILE_NAME), old).unwrap();
        let mut list = AddedBoards::load(dir.path());
        let specs = list.specs();
        assert_eq!(
            specs[0].session.arbiter.time_control,
            Some("40/5400+30:1800+30".parse().unwrap())
        );
        list.add(&specs[0]);
        list.save().unwrap();
        let text = fs::read_to_string(dir.path().join(FILE_NAME)).unwrap();
        assert!(
            text.contains(r#""time_control": "40/5400+30:1800+30""#),
            "{text}"
        );
    }
}
