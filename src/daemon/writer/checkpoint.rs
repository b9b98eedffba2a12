//! The writer's checkpoints: every journal file synced in its own right, then the commit log
//! emptied — now and then, aside on a thread of their own while the groups go on into a new
//! log, or here on the writer's thread (shutdown, failing writes).

use std::sync::atomic::Ordering;

use super::super::state_file;
use super::{CHECKPOINT_PACE, CommitLog, Source, Thread, commit_log};

impl Thread {
    /// A checkpoint aside: the log is retired, and the journals written before are synced
    /// by a thread of their own; [`Thread::checkpoint_done`] removes the retired log.
    pub(super) fn checkpoint_aside(&mut self) {
        if self.closed_unsynced || self.degraded {
            return self.checkpoint();
        }
        let mut files = Vec::new();
        for slot in self.slots.values().filter(|s| s.journal.file_unsynced()) {
            match slot.journal.file_handle() {
                Some(Ok(file)) => files.push((slot.id.clone(), file)),
                Some(Err(e)) => {
                    tracing::debug!(board = %slot.id, "no second handle ({e}): checkpoint here");
                    return self.checkpoint();
                }
                None => {}
            }
        }
        let Some(log) = self.log.as_mut() else {
            return;
        };
        if let Err(e) = log.retire() {
            tracing::debug!("cannot retire the commit log ({e}): checkpoint here");
            return self.checkpoint();
        }
        let stats = self.stats.clone();
        let spawned = std::thread::Builder::new()
            .name("journal-sync".into())
            .spawn(move || {
                let mut all = true;
                for (id, file) in files {
                    stats.syncs.fetch_add(1, Ordering::Relaxed);
                    if let Err(e) = file.sync_data() {
                        tracing::warn!(board = %id, "checkpoint: cannot sync the journal: {e}");
                        all = false;
                    }
                    // Paced: the file system commits one sync at a time, and the groups'
                    // syncs of the log (what publication waits for) queue behind these.
                    std::thread::sleep(CHECKPOINT_PACE);
                }
                all
            });
        match spawned {
            Ok(handle) => {
                self.stats.checkpoints_aside.fetch_add(1, Ordering::Relaxed);
                self.syncing = Some(handle);
            }
            // The retired log stays (recovery reads it) until a checkpoint here removes it.
            Err(e) => {
                tracing::warn!("cannot start the journal-sync thread: {e}");
                self.checkpoint();
            }
        }
    }

    /// The checkpoint aside has synced its journals (or, with `wait`, once it has): the
    /// retired log goes. If a journal could not be synced, it stays for recovery; the next
    /// checkpoint cannot retire the log again and is done here, syncing those journals
    /// (their files are still marked unsynced) before it removes the retired log.
    pub(super) fn checkpoint_done(&mut self, wait: bool) {
        if !wait && !self.syncing.as_ref().is_some_and(|h| h.is_finished()) {
            return;
        }
        let Some(handle) = self.syncing.take() else {
            return;
        };
        match handle.join() {
            Ok(true) => {
                if let Err(e) = commit_log::remove_retired(&self.games_dir) {
                    tracing::warn!("cannot remove the retired commit log: {e}");
                }
            }
            Ok(false) => {}
            Err(_) => tracing::error!("the journal-sync thread panicked"),
        }
    }

    /// The commit log, created on first use (and again after a failure to create it).
    pub(super) fn commit_log(&mut self) -> Option<&mut CommitLog> {
        if self.log.is_none() && !self.log_refused {
            match CommitLog::create(&self.games_dir) {
                Ok(log) => {
                    self.log = Some(log);
                    // Something in its place (below) is gone, if there was.
                    self.health.report(Source::CommitLog, None);
                }
                Err(e) => {
                    tracing::debug!("cannot create the commit log: {e}");
                    if let Some(what) = state_file::as_not_regular(&e) {
                        self.health.report(
                            Source::CommitLog,
                            Some(format!(
                                "commit log: {what}; group commit is off until it is removed"
                            )),
                        );
                    }
                }
            }
        }
        self.log.as_mut()
    }

    /// Sync every journal file in its own right, here; then the commit log may be emptied
    /// (and a retired one removed).
    pub(super) fn checkpoint(&mut self) {
        self.checkpoint_done(true);
        let mut all = !self.closed_unsynced;
        for slot in self.slots.values_mut() {
            if slot.journal.file_unsynced() {
                self.stats.syncs.fetch_add(1, Ordering::Relaxed);
                if let Err(e) = slot.journal.sync_file() {
                    tracing::warn!(board = %slot.id, "checkpoint: {e}");
                    all = false;
                }
            }
        }
        if all && let Some(log) = self.log.as_mut() {
            match log.reset() {
                Ok(()) => {
                    if let Err(e) = commit_log::remove_retired(&self.games_dir) {
                        tracing::warn!("cannot remove the retired commit log: {e}");
                    }
                }
                Err(e) => {
                    tracing::warn!("cannot empty the commit log {}: {e}", log.path().display())
                }
            }
        }
    }
}
