//! Storage health: whether the state and PGN directories take every write, as the manager's
//! `StorageProblem` property shows it (contract section 2).
//!
//! Every part that writes (the journal writer, each board's PGN files, the remembered board
//! list) reports here under its own [`Source`]: the problem it has now, or `None` once its
//! writes succeed again. The property is the summary of all current problems, empty when
//! there are none. The log gets one error when a problem begins and one line when storage
//! works again — once per episode, not once per failed write.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

/// Who reports a problem.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    /// The game journals (every board's, through the one writer).
    Journal,
    /// One board's PGN files.
    Pgn(String),
    /// The list of boards added with `AddBoard`.
    BoardList,
    /// The commit log, kept because recovery could not apply all of it.
    CommitLog,
    /// One board whose events no journal takes (the writer stopped, the journal closed).
    Unjournalled(String),
    /// A file kept aside rather than written over (a journal of a newer format, a board list
    /// that cannot be read): said until it is no longer there ([`Health::recheck_kept`]).
    KeptAside(PathBuf),
}

/// Shared by everything that writes; cheap to clone.
#[derive(Clone)]
pub struct Health {
    problems: Arc<Mutex<BTreeMap<Source, String>>>,
    summary: watch::Sender<String>,
}

impl Default for Health {
    fn default() -> Self {
        Health::new()
    }
}

impl Health {
    pub fn new() -> Health {
        Health {
            problems: Arc::new(Mutex::new(BTreeMap::new())),
            summary: watch::channel(String::new()).0,
        }
    }

    /// Report what `source` has now: `Some(problem)` while its writes fail, `None` when they
    /// succeed.
    pub fn report(&self, source: Source, problem: Option<String>) {
        let mut problems = self.problems.lock().unwrap_or_else(|p| p.into_inner());
        let before = problems.get(&source).cloned();
        let kept = matches!(source, Source::KeptAside(_));
        match problem {
            Some(p) => {
                if before.is_none() && kept {
                    tracing::error!("storage problem: {p}; look at it, then move it away");
                } else if before.is_none() {
                    tracing::error!(
                        "storage problem: {p}; serving from memory and retrying until it can \
                         be written"
                    );
                }
                problems.insert(source, p);
            }
            None => {
                if let (Some(_), Source::KeptAside(path)) = (&before, &source) {
                    tracing::info!("{} is gone: no longer a storage problem", path.display());
                    problems.remove(&source);
                } else if let Some(p) = before {
                    tracing::info!("storage works again (was: {p}); everything held is written");
                    problems.remove(&source);
                }
            }
        }
        let summary = summarize(&problems);
        self.summary.send_if_modified(|s| {
            if *s == summary {
                false
            } else {
                *s = summary;
                true
            }
        });
    }

    /// Say that `path` was kept aside (`why`: what it is and why), until it is gone.
    pub fn keep_aside(&self, path: PathBuf, why: String) {
        self.report(Source::KeptAside(path), Some(why));
    }

    /// Stop saying so of the files kept aside that are no longer there (moved away, removed:
    /// someone has seen to them). Called periodically.
    pub fn recheck_kept(&self) {
        let kept: Vec<PathBuf> = {
            let problems = self.problems.lock().unwrap_or_else(|p| p.into_inner());
            problems
                .keys()
                .filter_map(|s| match s {
                    Source::KeptAside(path) => Some(path.clone()),
                    _ => None,
                })
                .collect()
        };
        for path in kept {
            if std::fs::symlink_metadata(&path).is_err_and(|e| e.kind() == io::ErrorKind::NotFound)
            {
                self.report(Source::KeptAside(path), None);
            }
        }
    }

    /// The `StorageProblem` text now: empty when every write succeeds.
    pub fn summary(&self) -> String {
        self.summary.borrow().clone()
    }

    /// Changes of [`Health::summary`].
    pub fn subscribe(&self) -> watch::Receiver<String> {
        self.summary.subscribe()
    }
}

/// One line for all current problems; the same problem of several boards' PGN files is said
/// once.
fn summarize(problems: &BTreeMap<Source, String>) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for p in problems.values() {
        if !parts.contains(&p.as_str()) {
            parts.push(p);
        }
    }
    parts.join("; ")
}

/// What a failed write of `what` under `dir` means, for the `StorageProblem` text: disk
/// full, read-only, I/O error, or the error itself.
pub fn describe(what: &str, dir: &Path, error: &io::Error) -> String {
    let kind = match error.raw_os_error() {
        Some(nix::libc::ENOSPC) if no_free_inodes(dir) => "no free inodes",
        Some(nix::libc::ENOSPC) => "disk full",
        Some(nix::libc::EDQUOT) => "disk quota exceeded",
        Some(nix::libc::EROFS) => "read-only",
        Some(nix::libc::EIO) => "I/O error",
        _ => "write failed",
    };
    format!("{what} {}: {kind} ({error})", dir.display())
}

/// Whether the file system of `dir` (or of the nearest directory above it that exists) has
/// room but no inode left: a full disk all the same, but one that deleting a big file does
/// not cure.
fn no_free_inodes(dir: &Path) -> bool {
    dir.ancestors()
        .find_map(|d| nix::sys::statvfs::statvfs(d).ok())
        .is_some_and(|s| s.files() > 0 && s.files_free() == 0 && s.blocks_free() > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_are_summarized_and_cleared() {
        let h = Health::new();
        let mut rx = h.subscribe();
        assert_eq!(h.summary(), "");
        let full = io::Error::from_raw_os_error(nix::libc::ENOSPC);
        let p = describe("state directory", Path::new("/s"), &full);
        assert!(p.starts_with("state directory /s: disk full"), "{p}");
        h.report(Source::Journal, Some(p.clone()));
        assert!(rx.has_changed().unwrap());
        assert_eq!(rx.borrow_and_update().clone(), p);
        let ro = describe(
            "PGN directory",
            Path::new("/p"),
            &io::Error::from_raw_os_error(nix::libc::EROFS),
        );
        h.report(Source::Pgn("a".into()), Some(ro.clone()));
        h.report(Source::Pgn("b".into()), Some(ro.clone()));
        assert_eq!(h.summary(), format!("{p}; {ro}"));
        h.report(Source::Journal, None);
        h.report(Source::Pgn("a".into()), None);
        assert_eq!(h.summary(), ro);
        h.report(Source::Pgn("b".into()), None);
        assert_eq!(h.summary(), "");
        // A file kept aside is said until it is gone.
        let dir = tempfile::tempdir().unwrap();
        let kept = dir.path().join("b.journal.newer-1");
        std::fs::write(&kept, "x").unwrap();
        h.keep_aside(kept.clone(), "kept".into());
        h.recheck_kept();
        assert_eq!(h.summary(), "kept");
        std::fs::remove_file(&kept).unwrap();
        h.recheck_kept();
        assert_eq!(h.summary(), "");
        // Reporting "fine" again changes nothing.
        rx.borrow_and_update();
        h.report(Source::Journal, None);
        assert!(!rx.has_changed().unwrap());
    }
}
