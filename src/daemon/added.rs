//! The boards added at runtime with `AddBoard`, remembered across restarts until
//! `RemoveBoard`: `<state_dir>/boards.json`, replaced atomically (temporary file, sync,
//! rename) on every change.
//!
//! Each entry keeps the board's id, port and the settings it was added with (the `[daemon]`
//! defaults of that time); what operators change later (tags, rules) is in the board's
//! journal. At start the daemon serves the configured boards first and then these, skipping
//! any whose id or port the configuration now uses. A file that cannot be read is set aside
//! (`boards.json.unreadable-N`) rather than overwritten, and named in the log.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::session::SessionConfig;

use super::settings::BoardSpec;

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
    pub fn load(state_dir: &Path) -> AddedBoards {
        let path = state_dir.join(FILE_NAME);
        let entries = match read(&path) {
            Ok(bytes) => match serde_json::from_slice::<FileFormat>(&bytes) {
                Ok(f) if f.version == 1 => f.boards,
                Ok(f) => {
                    tracing::error!(
                        "{}: written by another version (format {}); the boards in it are not \
                         served and the file is left alone",
                        path.display(),
                        f.version
                    );
                    return AddedBoards {
                        // Never overwrite it: changes go nowhere until it is moved away.
                        path: PathBuf::new(),
                        entries: Vec::new(),
                        dirty: false,
                        unread: None,
                    };
                }
                Err(e) => {
                    let aside = set_aside(&path);
                    tracing::error!(
                        "{}: unreadable ({e}); set aside as {}, no added boards restored",
                        path.display(),
                        aside.display()
                    );
                    Vec::new()
                }
            },
            Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
            Err(e) => {
                tracing::error!(
                    "{}: cannot read it ({e}); the boards in it are not served now, and the \
                     file is not written over until it can be read",
                    path.display()
                );
                return AddedBoards {
                    path,
                    entries: Vec::new(),
                    dirty: false,
                    unread: Some(Unread {
                        error: e.to_string(),
                        changes: Vec::new(),
                    }),
                };
            }
        };
        AddedBoards {
            path,
            entries,
            dirty: false,
            unread: None,
        }
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

    /// Whether a change still has to be written.
    pub fn dirty(&self) -> bool {
        self.dirty
    }

    /// Write the list if it changed.
    pub fn save(&mut self) -> io::Result<()> {
        if !self.dirty || self.path.as_os_str().is_empty() {
            self.dirty = false;
            return Ok(());
        }
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
            tracing::info!(
                "{} can be read again: its {} boards are kept (served from the next start)",
                self.path.display(),
                entries.len()
            );
            self.entries = entries;
            self.unread = None;
        }
        super::faults::check()?;
        let text = serde_json::to_string_pretty(&FileFormat {
            version: 1,
            boards: self.entries.clone(),
        })?;
        let mut tmp = self.path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let result = File::create(&tmp)
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

/// Read the file (through the fault injector's `read:` faults).
fn read(path: &Path) -> io::Result<Vec<u8>> {
    super::faults::check_read()?;
    fs::read(path)
}

/// Put `entry` in the list as the one of `id` (replacing an older one), or remove `id`.
fn apply(entries: &mut Vec<Entry>, id: &str, entry: Option<Entry>) {
    entries.retain(|e| e.id != id);
    entries.extend(entry);
}

fn set_aside(path: &Path) -> PathBuf {
    let mut n = 1;
    loop {
        let mut name = path.as_os_str().to_owned();
        name.push(format!(".unreadable-{n}"));
        let aside = PathBuf::from(name);
        if !aside.exists() {
            let _ = fs::rename(path, &aside);
            return aside;
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
        let list = AddedBoards::load(dir.path());
        assert!(list.specs().is_empty());
        let aside = dir.path().join("boards.json.unreadable-1");
        assert_eq!(fs::read_to_string(aside).unwrap(), "{ not json");
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
            specs[0].session.time_control,
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
