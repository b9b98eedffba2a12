//! The PGN writer: one thread per daemon that writes every PGN file — each board's live file,
//! its finished games and the round folders ([`super::round_writer`]) — so that no board's
//! async task ever waits on the disk for a PGN file. The journal has its own thread
//! ([`super::writer`]); the journal, not these files, is the record of truth.
//!
//! A board's store hands a text to [`PgnWriter::live`] or [`PgnWriter::finished`] and goes on
//! at once (a channel send). The thread takes everything queued before it writes, so a burst
//! of moves on one board costs one write of its live file (the latest text wins); a finished
//! game is never dropped: it waits in order until the disk takes it. A PGN directory that
//! cannot be written is reported to [`Health`] (`StorageProblem`) and tried again every
//! [`RETRY`] until it can; [`PgnWriter::flush`] and [`PgnWriter::retire`] answer once their
//! work is on disk (or has failed), so a board that stops leaves its final state written.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Instant;

use tokio::sync::oneshot;

use super::health::{self, Health, Source};
use super::pgn_files::{PgnFileError, PgnFiles};
use super::round_writer::{RETRY, RoundFolders};

enum Request {
    /// A board's game text now: its live file, and its round folder's copy.
    Live {
        board: String,
        dir: PathBuf,
        pgn: String,
    },
    /// A finished game to keep under its own name.
    Finished {
        board: String,
        dir: PathBuf,
        pgn: String,
    },
    /// The board is no longer served: write what it left, then move its live file out of
    /// `live/`.
    Retire {
        board: String,
        dir: PathBuf,
        done: oneshot::Sender<()>,
    },
    /// Write everything pending now, then answer.
    Flush(oneshot::Sender<()>),
}

/// The handle every board's store holds (a clone per board); the thread stops when the last
/// handle is dropped, after writing what it holds.
#[derive(Clone)]
pub struct PgnWriter {
    tx: mpsc::Sender<Request>,
}

impl PgnWriter {
    /// Start the thread. Problems with the PGN directory are reported to `health`.
    pub fn start(health: Health) -> std::io::Result<PgnWriter> {
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("pgn-writer".into())
            .spawn(move || run(rx, health))?;
        Ok(PgnWriter { tx })
    }

    /// Board `board`'s game is now `pgn` (PGN directory `dir`); returns at once.
    pub fn live(&self, board: &str, dir: &std::path::Path, pgn: &str) {
        self.send(Request::Live {
            board: board.to_owned(),
            dir: dir.to_path_buf(),
            pgn: pgn.to_owned(),
        });
    }

    /// Board `board` finished the game `pgn`; returns at once.
    pub fn finished(&self, board: &str, dir: &std::path::Path, pgn: &str) {
        self.send(Request::Finished {
            board: board.to_owned(),
            dir: dir.to_path_buf(),
            pgn: pgn.to_owned(),
        });
    }

    /// The board is no longer served: answers once its live file has left `live/`.
    pub async fn retire(&self, board: &str, dir: &std::path::Path) {
        let (done, answered) = oneshot::channel();
        self.send(Request::Retire {
            board: board.to_owned(),
            dir: dir.to_path_buf(),
            done,
        });
        let _ = answered.await;
    }

    /// Write everything pending; answers once it is written (or has failed).
    pub async fn flush(&self) {
        let (reply, done) = oneshot::channel();
        self.send(Request::Flush(reply));
        let _ = done.await;
    }

    fn send(&self, request: Request) {
        if self.tx.send(request).is_err() {
            tracing::error!("the PGN writer has stopped: PGN files are not updated");
        }
    }
}

fn run(rx: mpsc::Receiver<Request>, health: Health) {
    let mut boards = LiveFiles::new(health);
    let mut folders = RoundFolders::default();
    loop {
        let due = match (boards.due(), folders.due()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let request = match due {
            None => match rx.recv() {
                Ok(r) => Some(r),
                Err(_) => break,
            },
            Some(at) => match rx.recv_timeout(at.saturating_duration_since(Instant::now())) {
                Ok(r) => Some(r),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => break,
            },
        };
        // Everything queued is taken first: a burst costs one write of each file.
        let mut next = request;
        while let Some(request) = next {
            match request {
                Request::Live { board, dir, pgn } => {
                    folders.game(&dir, &pgn);
                    boards.live(board, dir, pgn);
                }
                Request::Finished { board, dir, pgn } => boards.finished(board, dir, pgn),
                Request::Retire { board, dir, done } => {
                    boards.retire(&board, dir);
                    let _ = done.send(());
                }
                Request::Flush(reply) => {
                    boards.write_due(None);
                    folders.write_due(None);
                    let _ = reply.send(());
                }
            }
            next = rx.try_recv().ok();
        }
        boards.write_due(Some(Instant::now()));
        folders.write_due(Some(Instant::now()));
    }
    boards.write_due(None);
    folders.write_due(None);
}

/// One board's PGN files as the thread holds them.
struct BoardFiles {
    dir: PathBuf,
    /// The directory, once it could be made.
    files: Option<PgnFiles>,
    /// The newest game text not yet in the live file.
    pending: Option<String>,
    /// The text the live file holds.
    written: String,
    /// Finished games not yet written, oldest first.
    finished: VecDeque<String>,
    /// The files failed; when they were last tried.
    failing: Option<Instant>,
}

/// Every board's live and finished files.
struct LiveFiles {
    boards: BTreeMap<String, BoardFiles>,
    health: Health,
}

impl LiveFiles {
    fn new(health: Health) -> LiveFiles {
        LiveFiles {
            boards: BTreeMap::new(),
            health,
        }
    }

    fn board(&mut self, board: String, dir: PathBuf) -> &mut BoardFiles {
        let entry = self.boards.entry(board).or_insert_with(|| BoardFiles {
            dir: dir.clone(),
            files: None,
            pending: None,
            written: String::new(),
            finished: VecDeque::new(),
            failing: None,
        });
        if entry.dir != dir {
            entry.dir = dir;
            entry.files = None;
        }
        entry
    }

    fn live(&mut self, board: String, dir: PathBuf, pgn: String) {
        let b = self.board(board, dir);
        b.pending = (pgn != b.written).then_some(pgn);
    }

    fn finished(&mut self, board: String, dir: PathBuf, pgn: String) {
        self.board(board, dir).finished.push_back(pgn);
    }

    /// When something is due: now for new work, the next retry for a failing board.
    fn due(&self) -> Option<Instant> {
        self.boards
            .values()
            .filter(|b| b.pending.is_some() || !b.finished.is_empty())
            .map(|b| match b.failing {
                Some(at) => at + RETRY,
                None => Instant::now(),
            })
            .min()
    }

    /// Write what is pending: everything (`now` is `None`: a flush or a retirement), or what
    /// is due at `now` (a failing board waits for its retry).
    fn write_due(&mut self, now: Option<Instant>) {
        let health = &self.health;
        for (id, b) in &mut self.boards {
            let due = match (now, b.failing) {
                (Some(now), Some(at)) => now >= at + RETRY,
                _ => true,
            };
            if due && (b.pending.is_some() || !b.finished.is_empty()) {
                b.write(id, health);
            }
        }
    }

    fn retire(&mut self, board: &str, dir: PathBuf) {
        let health = &self.health;
        if let Some(b) = self.boards.get_mut(board) {
            b.write(board, health);
        }
        self.boards.remove(board);
        health.report(Source::Pgn(board.to_owned()), None);
        let files = match PgnFiles::new(&dir) {
            Ok(files) => files,
            Err(e) => return tracing::warn!(board = %board, "{e}"),
        };
        match files.retire_live(board) {
            Ok(Some(to)) => {
                tracing::info!(board = %board, file = %to.display(), "live PGN moved out of live/")
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(board = %board, "{e}"),
        }
    }
}

impl BoardFiles {
    /// Write the live file and the finished games; report a failure, or the end of one.
    fn write(&mut self, id: &str, health: &Health) {
        match self.try_write(id) {
            Ok(()) => {
                if self.failing.take().is_some() {
                    health.report(Source::Pgn(id.to_owned()), None);
                }
            }
            Err(e) => {
                if self.failing.is_none() {
                    tracing::warn!(board = %id, "{e}");
                }
                self.failing = Some(Instant::now());
                // The directory is taken into use afresh at the retry (made again if someone
                // removed it, its file system checked again): what was found of it once may
                // be what failed.
                self.files = None;
                // The disk's trouble is said of the directory; anything else (a directory in
                // place of the live file) of the file itself.
                let problem = if super::journal::is_storage_fault(&e.source) {
                    health::describe("PGN directory", &self.dir, &e.source)
                } else {
                    e.to_string()
                };
                health.report(Source::Pgn(id.to_owned()), Some(problem));
            }
        }
    }

    fn try_write(&mut self, id: &str) -> Result<(), PgnFileError> {
        let files = match &self.files {
            Some(files) => files,
            None => self.files.insert(PgnFiles::new(&self.dir)?),
        };
        if let Some(pgn) = self.pending.take() {
            if let Err(e) = files.write_live(id, &pgn) {
                self.pending = Some(pgn);
                return Err(e);
            }
            self.written = pgn;
        }
        while let Some(text) = self.finished.front() {
            let path = files.write_finished(id, text)?;
            tracing::info!(board = %id, file = %path.display(), "finished game written");
            self.finished.pop_front();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// Waits (30 s at most) until `health` reports no problem any more: a retry succeeded.
    fn until_healthy(
        rt: &tokio::runtime::Runtime,
        changes: &mut tokio::sync::watch::Receiver<String>,
    ) {
        until(
            rt,
            changes,
            "the problem clears after a retry",
            String::is_empty,
        );
    }

    /// Waits (30 s at most) until the summary `health` announces satisfies `wanted`.
    fn until(
        rt: &tokio::runtime::Runtime,
        changes: &mut tokio::sync::watch::Receiver<String>,
        what: &str,
        wanted: impl Fn(&String) -> bool,
    ) {
        rt.block_on(async {
            tokio::time::timeout(std::time::Duration::from_secs(30), async {
                while !wanted(&changes.borrow_and_update()) {
                    changes.changed().await.unwrap();
                }
            })
            .await
            .expect(what);
        });
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn the_latest_text_and_every_finished_game_are_written_by_a_flush() {
        let dir = tempfile::tempdir().unwrap();
        let writer = PgnWriter::start(Health::new()).unwrap();
        writer.live("b1", dir.path(), "1. e4 *\n");
        writer.live("b1", dir.path(), "1. e4 e5 *\n");
        writer.finished("b1", dir.path(), "[Date \"2026.12.03\"]\n\n1. e4 e5 1-0\n");
        runtime().block_on(writer.flush());
        let live = fs::read_to_string(dir.path().join("live/b1.pgn")).unwrap();
        assert_eq!(live, "1. e4 e5 *\n");
        let finished: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".pgn"))
            .collect();
        assert_eq!(finished, ["2026-12-03-b1-1.pgn"]);
    }

    #[test]
    fn a_directory_that_cannot_be_made_is_reported_and_written_once_it_can() {
        let base = tempfile::tempdir().unwrap();
        // A file where the PGN directory should be: nothing under it can be made.
        let dir = base.path().join("pgn");
        fs::write(&dir, "not a directory").unwrap();
        let health = Health::new();
        let writer = PgnWriter::start(health.clone()).unwrap();
        writer.live("b1", &dir, "1. d4 *\n");
        writer.finished("b1", &dir, "[Date \"2026.12.03\"]\n\n1. d4 1-0\n");
        let rt = runtime();
        rt.block_on(writer.flush());
        // Said of the file in the way, not as a full disk.
        assert!(
            health
                .summary()
                .contains("pgn/live: cannot create the directory"),
            "{}",
            health.summary()
        );
        // The disk is right again: the next retry writes both and clears the problem.
        fs::remove_file(&dir).unwrap();
        let mut changes = health.subscribe();
        until_healthy(&rt, &mut changes);
        rt.block_on(writer.flush());
        assert_eq!(
            fs::read_to_string(dir.join("live/b1.pgn")).unwrap(),
            "1. d4 *\n"
        );
        assert!(dir.join("2026-12-03-b1-1.pgn").exists());
    }

    #[test]
    fn a_live_directory_removed_under_the_writer_is_made_again_at_the_retry() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("pgn");
        let health = Health::new();
        let writer = PgnWriter::start(health.clone()).unwrap();
        let rt = runtime();
        writer.live("b1", &dir, "1. e4 *\n");
        rt.block_on(writer.flush());
        assert_eq!(
            fs::read_to_string(dir.join("live/b1.pgn")).unwrap(),
            "1. e4 *\n"
        );
        fs::remove_dir_all(dir.join("live")).unwrap();
        let mut changes = health.subscribe();
        writer.live("b1", &dir, "1. e4 e5 *\n");
        // No flush here: a flush writes a failing board again at once, which makes the
        // directory again, so the report could come and go before it was looked at. The
        // report stands until the retry, a second later.
        until(&rt, &mut changes, "the failed write is reported", |s| {
            s.contains("live")
        });
        until_healthy(&rt, &mut changes);
        rt.block_on(writer.flush());
        assert_eq!(
            fs::read_to_string(dir.join("live/b1.pgn")).unwrap(),
            "1. e4 e5 *\n"
        );
    }

    #[test]
    fn a_retired_board_leaves_live_with_its_last_text() {
        let dir = tempfile::tempdir().unwrap();
        let writer = PgnWriter::start(Health::new()).unwrap();
        writer.live("b1", dir.path(), "1. c4 *\n");
        runtime().block_on(writer.retire("b1", dir.path()));
        assert!(!dir.path().join("live/b1.pgn").exists());
        assert_eq!(
            fs::read_to_string(dir.path().join("removed/b1-1.pgn")).unwrap(),
            "1. c4 *\n"
        );
    }
}
