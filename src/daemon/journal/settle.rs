//! Only the file that was read is ever appended to: before a journal that was not ready at
//! open is written, the file at its path is checked again. A file written by a newer version,
//! one that could not be read at open, or one that changed since (or appeared since) is kept
//! aside under a new name — never written over, never lost — and the journal starts afresh
//! with what the board's game holds. Nothing at all is fine (a first start); something that is
//! not a regular file (a directory, a FIFO) is waited out.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use super::files::{free_name, parent_dir, sync_dir};
use super::{Journal, JournalError, state_file};

/// Which file was read: its device, inode and length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct FileId {
    dev: u64,
    ino: u64,
    /// `None` for a file this journal created (its header is written afresh).
    len: Option<u64>,
}

impl FileId {
    /// The file `meta` describes, read up to `len`.
    pub(super) fn of(meta: &fs::Metadata, len: u64) -> FileId {
        FileId {
            dev: meta.dev(),
            ino: meta.ino(),
            len: Some(len),
        }
    }

    /// A file this journal created, whatever a failed first write left in it.
    pub(super) fn created(meta: &fs::Metadata) -> FileId {
        FileId {
            len: None,
            ..FileId::of(meta, 0)
        }
    }

    /// Whether `meta` is this file, as it was.
    fn is(&self, meta: &fs::Metadata) -> bool {
        self.dev == meta.dev()
            && self.ino == meta.ino()
            && self.len.is_none_or(|len| len == meta.len())
    }
}

/// A file kept aside rather than written over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// Where it is now.
    pub path: PathBuf,
    /// What it is and why it was kept, for `StorageProblem`.
    pub why: String,
}

impl Journal {
    /// Make sure the file at the path is the one read at open, or that there is none: keep
    /// aside whatever else is there; refuse (and wait) while something that is not a regular
    /// file is there.
    pub(super) fn settle(&mut self) -> Result<(), JournalError> {
        let path = self.path.clone();
        let present = state_file::check(&path).map_err(JournalError::at(&path, "open it"))?;
        if !present {
            if self.read.take().is_some() {
                tracing::warn!(
                    "game journal {}: gone since it was read; written afresh from the game",
                    path.display()
                );
                self.afresh();
            }
            return Ok(());
        }
        let (label, why) = match &self.newer {
            Some(header) => ("newer", format!("written by a newer eboardd ({header:?})")),
            None => {
                let now = fs::metadata(&path).map_err(JournalError::at(&path, "open it"))?;
                let why = match self.read {
                    Some(read) if read.is(&now) => return Ok(()),
                    Some(_) => "changed by someone else since it was read at start".to_string(),
                    None => self
                        .unread
                        .clone()
                        .unwrap_or_else(|| "put there after the start".to_string()),
                };
                ("unread", why)
            }
        };
        let kept = free_name(&path, label);
        super::super::faults::check()
            .and_then(|_| fs::rename(&path, &kept))
            .map_err(JournalError::at(&path, "keep it aside"))?;
        let _ = sync_dir(&parent_dir(&path));
        let why = format!(
            "game journal {} was {why}: kept unread as {}",
            path.display(),
            kept.display()
        );
        tracing::error!("{why}; the board's game is journalled afresh");
        self.kept.push(Kept { path: kept, why });
        self.newer = None;
        self.unread = None;
        self.afresh();
        Ok(())
    }

    /// Nothing of the file at the path is taken: the next file starts with what was restored.
    fn afresh(&mut self) {
        self.read = None;
        self.len = 0;
        self.synced_len = 0;
        self.repair = None;
    }

    /// The files kept aside since the last call.
    pub fn take_kept(&mut self) -> Vec<Kept> {
        std::mem::take(&mut self.kept)
    }
}
