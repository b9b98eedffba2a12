//! The per-board game journal: an append-only file of [`Event`]s from which a restarted daemon
//! rebuilds each board's game exactly ([`eboard_core::session::Session::restore`]).
//!
//! # Format
//!
//! `<state_dir>/games/<board id>.journal` (see [`journal_path`]), UTF-8 text:
//!
//! ```text
//! # eboardd-journal 3
//! <crc32 of the JSON, 8 lowercase hex digits> <the event as one line of JSON>
//! ```
//!
//! # Guarantees
//!
//! - Events are written *before* the daemon publishes them. Each [`Journal::append_all`] is one
//!   `write` of whole lines; when the batch holds a move, a game end, a penalty or any other
//!   record-changing event the data is flushed to the device (`fdatasync`) before the call
//!   returns. So a `kill -9` (or a power cut, for synced records) never loses an event whose
//!   append returned.
//! - On [`Journal::open`] every line is checked (checksum, JSON, complete line). A torn or
//!   corrupt last record is dropped and reported as a [`Warning`], never an error; corruption
//!   further up stops the restore at the last good record, and the whole damaged file is kept
//!   beside the journal (`<file>.corrupt-N`) before the journal is cut back to its good part.
//!
//! An exclusive `flock` on `<file>.lock` is held while a [`Journal`] is open: a second daemon
//! (or a second task for the same board) gets an error instead of interleaving its writes.
//!
//! Nothing else keeps a journal from opening: a full disk before `games/` exists, a directory
//! or FIFO in place of the file or its lock, a file of a newer format leave it *not ready*
//! ([`Journal::is_ready`]) until [`Journal::prepare`] succeeds, and only the very file that
//! was read is ever appended to; anything else found at the path is kept aside under a new
//! name, never written over (`journal/settle.rs`).
//!
//! # Rotation: the journal holds the current game only
//!
//! When a `GameStarted` event is appended while the journal already holds a game (finished or
//! abandoned), the file is archived as `games/archive/<board id>.<N>.journal` and a fresh
//! journal is started with the *carried-over* settings ([`carry_over`]: every tags record and
//! the latest rules record, which a new game inherits) followed by the new `GameStarted`. So
//! [`Journal::open`] returns exactly what `Session::restore` needs to rebuild the current game:
//! the settings in force, then that game's events.
//!
//! The rotation is crash-safe: the old file is hard-linked into the archive, the new journal is
//! written to `<file>.tmp`, synced, and renamed over the old one. A crash before the rename
//! leaves the old game in place (and an archive link to it, which the next rotation recognises
//! and reuses); a crash after it leaves the new game. The caller never sees a half-rotated state.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use nix::fcntl::Flock;

use super::file_error::file_kind;
use super::state_file;

mod files;
mod format;
mod settle;
mod warning;

use eboard_core::session::{Event, RecordFact};
pub use files::archive_dir;
use files::*;
use format::*;
pub use format::{crc32, decode_line, encode_lines};
use settle::FileId;
pub use settle::Kept;
pub use warning::{Damage, Warning};

/// First line of every journal file. Version 3 added the clock side learnt
/// (`RecordFact::ClockSide`), which an earlier eboardd could not read: it keeps such a file
/// aside as a newer format instead of taking the record for damage.
pub const JOURNAL_HEADER: &str = "# eboardd-journal 3";
/// The first lines of journals written by earlier versions, still read as they are: version 1
/// before game-record patches (a whole snapshot per change), version 2 before the clock side.
pub const JOURNAL_HEADERS_EARLIER: [&str; 2] = ["# eboardd-journal 1", "# eboardd-journal 2"];
const HEADER_PREFIX: &str = "# eboardd-journal ";
/// A line saying that the bytes from the offset it names up to itself are void: what a
/// failed write left when it could not be cut back (see [`Journal::cut_back`]).
pub const VOID_PREFIX: &str = "# eboardd-void ";

/// Where a board's journal lives in the state directory.
pub fn journal_path(state_dir: &Path, board_id: &str) -> PathBuf {
    state_dir.join("games").join(format!("{board_id}.journal"))
}

/// An append-only journal file for one board.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    /// Open for appending; `None` until the file could be created (a full or read-only disk
    /// at start: the journal is then created by the first write that succeeds).
    file: Option<File>,
    /// Bytes of good records in the file: where the next append goes.
    len: u64,
    /// Bytes known to be on the device; a failed write or sync cuts the file back to this.
    synced_len: u64,
    /// The journal holds a `GameStarted`: the next one rotates.
    has_game: bool,
    /// What a rotation would carry over (see [`carry_over`]).
    carried: Vec<Event>,
    /// `has_game` and `carried` as of `synced_len`, restored when the file is cut back.
    synced_state: (bool, Vec<Event>),
    /// Damage found at open that is still to be cut off: the copy of the damaged file could
    /// not be kept yet (a full disk), and nothing is cut before it is.
    repair: Option<PendingRepair>,
    /// Exclusive lock on `<journal>.lock`, held while the journal is open (`None` until it
    /// could be taken, and for good when no lock file can be made on a full disk).
    lock: Option<Flock<File>>,
    /// The file read at open (`None`: there was none, or it could not be used): only that
    /// very file is ever appended to (see [`Journal::settle`]).
    read: Option<FileId>,
    /// What open restored, kept until the file is ready: written again into a fresh file if
    /// the one read at open is gone or had to be kept aside by then.
    restored: Vec<Event>,
    /// The file at the path was written by a newer version: kept aside before anything is
    /// written (never over it). Holds its first line.
    newer: Option<String>,
    /// Why the file at the path was not read at open, if it could not be.
    unread: Option<String>,
    /// Files kept aside since the last [`Journal::take_kept`], with why.
    kept: Vec<Kept>,
    /// The file's inode: tells the commit log's copies of lines of this file from those of
    /// a file it replaced.
    ino: u64,
    /// Lines written since `synced_len`, for the commit log (see [`super::commit_log`]).
    chunks: Vec<Chunk>,
    /// Every written line is on the device in this file itself (not only in the commit log).
    file_synced: bool,
    /// A failed write could not be cut back: the file holds bytes past this offset (maybe a
    /// torn record) that the next write cuts off, or else declares void.
    torn_from: Option<u64>,
}

/// Lines written to a journal and not yet synced: where they went and what they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    pub ino: u64,
    pub offset: u64,
    pub text: String,
}

#[derive(Debug, Clone)]
struct PendingRepair {
    good_end: u64,
    /// A copy of the whole file is kept first (corruption, not a torn tail).
    keep_copy: bool,
}

/// What [`Journal::write`] made durable on its way (rotations sync the finished game and
/// the new file), as a count of the events given, from the first.
pub type Durable = usize;

file_kind!(
    /// An I/O failure on a journal, with the file and the operation.
    JournalError,
    JournalFile,
    "game journal"
);

/// Whether an event must be on the device before its append returns. Everything that is part
/// of the game record is; only the transient early warning, free comments and the clock side
/// learnt (once a game, relearnt if lost) may wait for the next synced record (the file is
/// append-only, so they still survive a `kill -9`).
pub fn needs_sync(event: &Event) -> bool {
    !matches!(
        event,
        Event::IllegalPlacement { .. }
            | Event::Record(RecordFact::Comment { .. } | RecordFact::ClockSide { .. })
    )
}

/// What a rotation keeps from the previous journal for the next game: every tags record (a
/// later one may only add to an earlier one) and the latest rules record, in their order.
pub fn carry_over(events: &[Event]) -> Vec<Event> {
    let last_rules = events
        .iter()
        .rposition(|e| matches!(e, Event::Record(RecordFact::Rules { .. })));
    events
        .iter()
        .enumerate()
        .filter(|(i, e)| match e {
            Event::Record(RecordFact::Tags { .. }) => true,
            Event::Record(RecordFact::Rules { .. }) => Some(*i) == last_rules,
            _ => false,
        })
        .map(|(_, e)| e.clone())
        .collect()
}

impl Journal {
    /// Open (or create) a journal, restoring its records.
    ///
    /// Returns the journal, the events it holds (oldest first; feed them to
    /// `Session::restore`) and a warning if damage was found. Fails only when another process
    /// holds the journal's lock: the board is served there.
    ///
    /// Whatever else is wrong is not fatal: the journal is returned not yet ready (see
    /// [`Journal::is_ready`]) and what it is given is held by the writer until
    /// [`Journal::prepare`] succeeds. So damage is cut off (after keeping a copy of a corrupt
    /// file) once there is room for it; a missing directory or journal is created once the
    /// disk takes it (a full disk at the first start); a file of a newer format is kept aside
    /// (never written over) and a fresh journal begun; something that is not a regular file
    /// in place of the journal or its lock (a directory, a FIFO) is never opened in a way
    /// that could block, and the journal waits until it is gone.
    pub fn open(path: &Path) -> Result<(Journal, Vec<Event>, Option<Warning>), JournalError> {
        // `ready` says why, if the directory cannot be made.
        let _ = fs::create_dir_all(parent_dir(path));
        let lock = match lock(path) {
            Ok(lock) => lock,
            Err(e) if e.source.kind() == io::ErrorKind::WouldBlock => return Err(e),
            // Taken (or said why not) by `ready`, before anything is written.
            Err(_) => None,
        };
        // A rotation interrupted before its rename leaves this behind; the journal is intact.
        let _ = fs::remove_file(tmp_path(path));

        let mut bytes = Vec::new();
        let mut read = None;
        let mut unread = None;
        let opened = state_file::open_read(path).and_then(|mut f| {
            f.read_to_end(&mut bytes)?;
            f.metadata()
        });
        match opened {
            Ok(meta) => read = Some(FileId::of(&meta, bytes.len() as u64)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => {
                tracing::error!(
                    "game journal {}: cannot read it ({e}); the board's game starts afresh",
                    path.display()
                );
                bytes.clear();
                unread = Some(format!("unreadable at start ({e})"));
            }
        }
        let (scan, newer) = match scan(&bytes) {
            Ok(scan) => (scan, None),
            Err(header) => {
                read = None;
                let none = Scan {
                    events: Vec::new(),
                    good_end: 0,
                    damage: None,
                };
                (none, Some(header))
            }
        };

        let has_game = scan
            .events
            .iter()
            .any(|e| matches!(e, Event::GameStarted { .. }));
        let carried = carry_over(&scan.events);
        let mut journal = Journal {
            path: path.to_path_buf(),
            file: None,
            len: scan.good_end as u64,
            synced_len: scan.good_end as u64,
            has_game,
            carried: carried.clone(),
            synced_state: (has_game, carried),
            repair: None,
            lock,
            read,
            unread,
            restored: scan.events.clone(),
            newer,
            kept: Vec::new(),
            ino: 0,
            chunks: Vec::new(),
            file_synced: true,
            torn_from: None,
        };
        let mut warning = None;
        if let Some(bad) = &scan.damage {
            let keep_copy = bad.kind == Damage::Corrupt;
            journal.repair = Some(PendingRepair {
                good_end: scan.good_end as u64,
                keep_copy,
            });
            warning = Some(Warning {
                path: path.to_path_buf(),
                kind: bad.kind,
                line: bad.line,
                kept: scan.events.len(),
                dropped_bytes: (bytes.len() - scan.good_end) as u64,
                saved_copy: None,
                reason: bad.reason.clone(),
            });
        }
        // Make the file ready for appends now if it can be; otherwise the writer tries again
        // (and shows why meanwhile).
        match journal.ready() {
            Ok(copy) => {
                if let Some(w) = warning.as_mut() {
                    w.saved_copy = copy;
                }
            }
            Err(e) => {
                tracing::warn!("{e}; the journal is kept in memory until it can be written");
            }
        }
        Ok((journal, scan.events, warning))
    }

    /// The journal file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the file is open for appends (else [`Journal::prepare`] is still to succeed).
    pub fn is_ready(&self) -> bool {
        self.file.is_some()
    }

    /// Try again to make the file ready for appends (see [`Journal::open`]).
    pub fn prepare(&mut self) -> Result<(), JournalError> {
        self.ready().map(|_| ())
    }

    /// Create the directory, take the lock, keep aside what must not be written over, cut
    /// off damage found at open, create the file and its header: whatever is still to do
    /// before the first append. Returns the copy of a corrupt file, when one was made.
    fn ready(&mut self) -> Result<Option<PathBuf>, JournalError> {
        if self.file.is_some() {
            return Ok(None);
        }
        let path = self.path.clone();
        super::faults::check()
            .and_then(|_| fs::create_dir_all(parent_dir(&path)))
            .map_err(JournalError::at(&path, "create its directory"))?;
        if self.lock.is_none() {
            // `None` again: no lock file can be made on this disk, and the journal goes
            // unlocked rather than unjournalled.
            self.lock = lock(&path)?;
        }
        self.settle()?;
        let mut saved_copy = None;
        if let Some(repair) = self.repair.clone() {
            if repair.keep_copy {
                let copy = free_name(&path, "corrupt");
                if let Err(e) = fs::copy(&path, &copy).and_then(|_| File::open(&copy)?.sync_all()) {
                    let _ = fs::remove_file(&copy);
                    return Err(JournalError::at(&path, "keep a copy of the damaged file")(
                        e,
                    ));
                }
                saved_copy = Some(copy);
            }
            let f = state_file::open(&path, OpenOptions::new().write(true))
                .map_err(JournalError::at(&path, "open it to cut off the damage"))?;
            f.set_len(repair.good_end)
                .and_then(|_| f.sync_all())
                .map_err(JournalError::at(&path, "cut off the damage"))?;
            self.repair = None;
        }
        let mut file = state_file::open(&path, OpenOptions::new().create(true).append(true))
            .map_err(JournalError::at(&path, "open it for appending"))?;
        if self.len == 0 {
            // Ours from here on, whatever a failed write below leaves in it.
            if let Ok(meta) = file.metadata() {
                self.read = Some(FileId::created(&meta));
            }
            // Empty, new, or not even a complete header survived: start the file afresh, with
            // what was restored if the file read at open had to go.
            let mut text = format!("{JOURNAL_HEADER}\n");
            text.push_str(
                &encode_lines(&self.restored)
                    .map_err(JournalError::at(&path, "encode an event"))?,
            );
            file.set_len(0)
                .and_then(|_| file.write_all(text.as_bytes()))
                .and_then(|_| file.sync_all())
                .map_err(JournalError::at(&path, "write its header"))?;
            sync_dir(&parent_dir(&path)).map_err(JournalError::at(&path, "sync its directory"))?;
            self.len = text.len() as u64;
            self.synced_len = self.len;
        }
        if self.lock.is_none() {
            tracing::warn!(
                "game journal {}: written without its lock (no lock file can be made)",
                path.display()
            );
        }
        self.ino = file.metadata().map(|m| m.ino()).unwrap_or(0);
        self.file = Some(file);
        self.restored = Vec::new();
        Ok(saved_copy)
    }

    /// Append one event (see [`Journal::append_all`]).
    pub fn append(&mut self, event: &Event) -> Result<(), JournalError> {
        self.append_all(std::slice::from_ref(event))
    }

    /// Append the events one input caused, synced if any of them is part of the game record
    /// ([`needs_sync`]). A `GameStarted` while a game is on file rotates the journal first.
    pub fn append_all(&mut self, events: &[Event]) -> Result<(), JournalError> {
        self.write(events).map_err(|(_, e)| e)?;
        if events.iter().any(needs_sync) {
            self.sync()?;
        }
        Ok(())
    }

    /// Write the events without syncing them (the caller syncs, maybe for many journals at
    /// once: [`super::writer`]); a `GameStarted` while a game is on file rotates the journal
    /// first. On success every event is written and the returned prefix is durable already.
    ///
    /// On failure the file is cut back to its last synced length, so a failed write never
    /// leaves a torn record in front of later ones, and the error comes with the prefix of
    /// `events` that is durable all the same; the rest must be written again.
    pub fn write(&mut self, events: &[Event]) -> Result<Durable, (Durable, JournalError)> {
        let mut durable = 0;
        let result = self.write_inner(events, &mut durable);
        match result {
            Ok(()) => Ok(durable),
            Err(e) => {
                self.cut_back();
                Err((durable, e))
            }
        }
    }

    fn write_inner(&mut self, events: &[Event], durable: &mut usize) -> Result<(), JournalError> {
        self.ready()?;
        let mut done = 0;
        while done < events.len() {
            let rest = &events[done..];
            // Everything up to the next rotating GameStarted goes to the current file.
            let split = rest
                .iter()
                .enumerate()
                .position(|(i, e)| {
                    matches!(e, Event::GameStarted { .. })
                        && (self.has_game
                            || rest[..i]
                                .iter()
                                .any(|e| matches!(e, Event::GameStarted { .. })))
                })
                .unwrap_or(rest.len());
            if split > 0 {
                self.write_lines(&rest[..split])?;
                done += split;
                continue;
            }
            // rest[0] is a GameStarted with a game on file: rotate with it and what follows
            // up to the next GameStarted.
            let end = rest[1..]
                .iter()
                .position(|e| matches!(e, Event::GameStarted { .. }))
                .map_or(rest.len(), |p| p + 1);
            // The finished game is made durable first: what came before is safe from here.
            self.sync()?;
            *durable = done;
            self.rotate(&rest[..end])?;
            done += end;
            *durable = done;
        }
        Ok(())
    }

    /// Flush every written line to the device.
    pub fn sync(&mut self) -> Result<(), JournalError> {
        self.sync_file()?;
        self.mark_synced();
        Ok(())
    }

    /// `fdatasync` the file itself if lines were written to it since its last sync (even if
    /// they are durable in the commit log already).
    pub fn sync_file(&mut self) -> Result<(), JournalError> {
        if !self.file_synced
            && let Some(file) = self.file.as_ref()
        {
            file.sync_data()
                .map_err(JournalError::at(&self.path, "sync it"))?;
        }
        self.file_synced = true;
        Ok(())
    }

    /// A second handle on the open file, for syncing it from another thread (a checkpoint,
    /// see [`super::commit_log`]).
    pub fn file_handle(&self) -> Option<std::io::Result<File>> {
        self.file.as_ref().map(File::try_clone)
    }

    /// Whether lines are written to the file that are not synced in it (they may be durable
    /// through the commit log).
    pub fn file_unsynced(&self) -> bool {
        !self.file_synced
    }

    /// Everything written is on the device (the caller synced it, or a copy of it: the file
    /// system, the commit log).
    pub fn mark_synced(&mut self) {
        self.synced_len = self.len;
        self.synced_state = (self.has_game, self.carried.clone());
        self.chunks.clear();
    }

    /// The lines written since the last sync, for the commit log.
    pub fn unsynced_chunks(&self) -> &[Chunk] {
        &self.chunks
    }

    /// Whether lines were written since the last sync.
    pub fn unsynced(&self) -> bool {
        self.len != self.synced_len
    }

    /// Forget what was written since the last sync: cut the file back (the lines may be torn,
    /// or not on the device after a failed sync) so they can be written again.
    pub fn cut_back(&mut self) {
        // Always: a failed write may have landed partly without being counted in `len`.
        if let Some(file) = self.file.as_ref() {
            match super::faults::check_truncate().and_then(|_| file.set_len(self.synced_len)) {
                Ok(()) => self.torn_from = None,
                Err(e) => {
                    tracing::warn!(
                        "game journal {}: cannot cut back a failed write ({e}); the next write \
                         cuts it off or declares it void",
                        self.path.display()
                    );
                    self.torn_from = Some(self.synced_len);
                }
            }
        }
        self.len = self.synced_len;
        (self.has_game, self.carried) = self.synced_state.clone();
        self.chunks.clear();
    }

    fn note(&mut self, events: &[Event]) {
        for e in events {
            match e {
                Event::GameStarted { .. } => self.has_game = true,
                Event::Record(RecordFact::Tags { .. }) => self.carried.push(e.clone()),
                Event::Record(RecordFact::Rules { .. }) => {
                    self.carried
                        .retain(|c| !matches!(c, Event::Record(RecordFact::Rules { .. })));
                    self.carried.push(e.clone());
                }
                _ => {}
            }
        }
    }

    fn write_lines(&mut self, events: &[Event]) -> Result<(), JournalError> {
        let mut text =
            encode_lines(events).map_err(JournalError::at(&self.path, "encode an event"))?;
        let file = self.file.as_mut().ok_or_else(|| {
            JournalError::at(&self.path, "append to it")(io::ErrorKind::NotFound.into())
        })?;
        if let Some(from) = self.torn_from {
            // Bytes of a failed write are still in the file: cut them off now, or (if that
            // fails again) end them with a newline and a line declaring them void, so that
            // the records after them are restored and nothing in them is.
            match super::faults::check_truncate().and_then(|_| file.set_len(from)) {
                Ok(()) => self.torn_from = None,
                Err(_) => {
                    self.len = file
                        .metadata()
                        .map_err(JournalError::at(&self.path, "append to it"))?
                        .len();
                    text = format!("\n{VOID_PREFIX}{from}\n{text}");
                }
            }
        }
        if let Err(fault) = super::faults::check() {
            // As a full disk does: part of the write lands, then the error.
            let _ = file.write_all(&text.as_bytes()[..text.len() / 2]);
            return Err(JournalError::at(&self.path, "append to it")(fault));
        }
        file.write_all(text.as_bytes())
            .map_err(JournalError::at(&self.path, "append to it"))?;
        self.torn_from = None;
        self.chunks.push(Chunk {
            ino: self.ino,
            offset: self.len,
            text: text.clone(),
        });
        self.file_synced = false;
        self.len += text.len() as u64;
        self.note(events);
        Ok(())
    }

    /// Archive the current file and start a new one with the carried-over settings and
    /// `events` (which begin with the new `GameStarted`). The current file is synced.
    fn rotate(&mut self, events: &[Event]) -> Result<(), JournalError> {
        let path = self.path.clone();
        let dir = parent_dir(&path);
        super::faults::check().map_err(JournalError::at(&path, "archive the finished game"))?;
        archive(&path).map_err(JournalError::at(&path, "archive the finished game"))?;

        let tmp = tmp_path(&path);
        let _ = fs::remove_file(&tmp);
        let mut text = format!("{JOURNAL_HEADER}\n");
        text.push_str(
            &encode_lines(&self.carried).map_err(JournalError::at(&path, "encode an event"))?,
        );
        text.push_str(&encode_lines(events).map_err(JournalError::at(&path, "encode an event"))?);
        let written = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(&tmp)
            .and_then(|mut file| {
                super::faults::check()?;
                file.write_all(text.as_bytes())?;
                file.sync_data()?;
                fs::rename(&tmp, &path)?;
                Ok(file)
            });
        let file = match written {
            Ok(f) => f,
            Err(e) => {
                let _ = fs::remove_file(&tmp);
                return Err(JournalError::at(&path, "write the next game's journal")(e));
            }
        };
        // From the rename on the new file is the journal, whatever happens next.
        self.ino = file.metadata().map(|m| m.ino()).unwrap_or(0);
        self.file = Some(file);
        self.file_synced = true;
        self.len = text.len() as u64;
        self.has_game = false;
        self.note(events);
        self.mark_synced();
        sync_dir(&dir).map_err(JournalError::at(&path, "sync its directory"))?;
        Ok(())
    }
}

/// Whether an error means the disk (not the journal) is the problem: full, read-only, over
/// quota, failing. The daemon then keeps the records in memory and tries again.
pub fn is_storage_fault(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(nix::libc::ENOSPC | nix::libc::EROFS | nix::libc::EDQUOT | nix::libc::EIO)
    )
}

impl Drop for Journal {
    fn drop(&mut self) {
        // Best effort: the appends already reached the kernel, this only covers a power cut.
        let _ = self.sync_file();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use eboard_core::vocab::{Edition, Rules};

    fn mv(ply: u32) -> Event {
        Event::MovePlayed {
            ply,
            san: "e4".into(),
            uci: "e2e4".into(),
            fen: format!("fen {ply}"),
            white_ms: 1000 * u64::from(ply),
            black_ms: 7,
        }
    }

    fn started(n: u32) -> Event {
        Event::GameStarted {
            fen: format!("start {n}"),
        }
    }

    fn tags(v: &str) -> Event {
        Event::Record(RecordFact::Tags {
            tags: vec![("Round".into(), v.into())],
        })
    }

    fn rules(r: Rules) -> Event {
        Event::Record(RecordFact::Rules {
            rules: r,
            edition: Edition::Fide2023,
        })
    }

    #[test]
    fn crc32_known_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn lines_round_trip_and_detect_changes() {
        let line = encode_lines(&[mv(3)]).unwrap();
        let body = line.trim_end().as_bytes();
        assert_eq!(decode_line(body).unwrap(), mv(3));
        let mut flipped = body.to_vec();
        let at = flipped.len() - 5;
        flipped[at] ^= 0x01;
        assert!(decode_line(&flipped).is_err());
        assert!(decode_line(b"").is_err());
        assert!(decode_line(b"zzzzzzzz {}").is_err());
    }

    #[test]
    fn appends_survive_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = journal_path(dir.path(), "b1");
        let (mut j, restored, w) = Journal::open(&path).unwrap();
        assert!(restored.is_empty() && w.is_none());
        j.append_all(&[started(1), mv(1)]).unwrap();
        j.append(&mv(2)).unwrap();
        drop(j);
        let (_, restored, w) = Journal::open(&path).unwrap();
        assert_eq!(restored, vec![started(1), mv(1), mv(2)]);
        assert!(w.is_none());
    }

    #[test]
    fn new_game_rotates_and_carries_settings() {
        let dir = tempfile::tempdir().unwrap();
        let path = journal_path(dir.path(), "b1");
        let (mut j, _, _) = Journal::open(&path).unwrap();
        j.append_all(&[tags("1"), rules(Rules::Rapid), started(1), mv(1)])
            .unwrap();
        j.append_all(&[rules(Rules::Blitz), tags("2")]).unwrap();
        // A batch that ends one game and starts two more (e.g. NewGame twice).
        j.append_all(&[mv(2), started(2), mv(1), started(3), mv(1)])
            .unwrap();
        drop(j);
        let (_, restored, _) = Journal::open(&path).unwrap();
        assert_eq!(
            restored,
            vec![tags("1"), rules(Rules::Blitz), tags("2"), started(3), mv(1)]
        );
        let archive = archive_dir(&path);
        let first = fs::read_to_string(archive.join("b1.1.journal")).unwrap();
        assert_eq!(first.lines().count(), 1 + 7);
        let second = fs::read_to_string(archive.join("b1.2.journal")).unwrap();
        assert!(second.contains("start 2") && !second.contains("start 3"));
        assert!(!archive.join("b1.3.journal").exists());
    }

    #[test]
    fn interrupted_rotation_reuses_the_archive_link() {
        let dir = tempfile::tempdir().unwrap();
        let path = journal_path(dir.path(), "b1");
        let (mut j, _, _) = Journal::open(&path).unwrap();
        j.append_all(&[started(1), mv(1)]).unwrap();
        drop(j);
        // Simulate a crash after the archive link and the temp file, before the rename.
        let linked = archive(&path).unwrap();
        fs::write(tmp_path(&path), "junk").unwrap();
        let (mut j, restored, w) = Journal::open(&path).unwrap();
        assert_eq!(restored, vec![started(1), mv(1)]);
        assert!(w.is_none());
        assert!(!tmp_path(&path).exists());
        j.append(&started(2)).unwrap();
        assert_eq!(
            archive(&path).unwrap(),
            archive_dir(&path).join("b1.2.journal")
        );
        assert!(linked.ends_with("b1.1.journal"));
        assert!(!archive_dir(&path).join("b1.3.journal").exists());
    }

    #[test]
    fn torn_tail_is_dropped_with_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let path = journal_path(dir.path(), "b1");
        let (mut j, _, _) = Journal::open(&path).unwrap();
        j.append_all(&[started(1), mv(1)]).unwrap();
        drop(j);
        let full = fs::read(&path).unwrap();
        let line = encode_lines(&[mv(2)]).unwrap();
        for cut in 1..line.len() {
            let mut torn = full.clone();
            torn.extend_from_slice(&line.as_bytes()[..cut]);
            fs::write(&path, &torn).unwrap();
            let (mut j, restored, w) = Journal::open(&path).unwrap();
            assert_eq!(restored, vec![started(1), mv(1)], "cut {cut}");
            let w = w.expect("warning");
            assert_eq!(w.kind, Damage::TornTail);
            assert_eq!(w.line, 4);
            assert_eq!(w.dropped_bytes, cut as u64);
            assert!(w.saved_copy.is_none());
            // The journal is usable again right away.
            j.append(&mv(2)).unwrap();
            drop(j);
            let (_, restored, w) = Journal::open(&path).unwrap();
            assert_eq!(restored, vec![started(1), mv(1), mv(2)]);
            assert!(w.is_none());
            fs::write(&path, &full).unwrap();
        }
    }

    #[test]
    fn corruption_in_the_middle_stops_there_and_keeps_a_copy() {
        let dir = tempfile::tempdir().unwrap();
        let path = journal_path(dir.path(), "b1");
        let (mut j, _, _) = Journal::open(&path).unwrap();
        j.append_all(&[started(1), mv(1), mv(2), mv(3)]).unwrap();
        drop(j);
        let original = fs::read_to_string(&path).unwrap();
        let damaged = original.replacen("fen 2", "fen X", 1);
        fs::write(&path, &damaged).unwrap();
        let (_, restored, w) = Journal::open(&path).unwrap();
        assert_eq!(restored, vec![started(1), mv(1)]);
        let w = w.expect("warning");
        assert_eq!(w.kind, Damage::Corrupt);
        assert_eq!(w.line, 4);
        assert_eq!(w.kept, 2);
        let copy = w.saved_copy.clone().expect("copy kept");
        assert_eq!(fs::read_to_string(copy).unwrap(), damaged);
        assert!(w.to_string().contains("line 4"), "{w}");
    }

    #[test]
    fn torn_or_missing_header_starts_afresh_and_newer_format_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = journal_path(dir.path(), "b1");
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, "# eboardd-jour").unwrap();
        let (mut j, restored, w) = Journal::open(&path).unwrap();
        assert!(restored.is_empty());
        assert_eq!(w.unwrap().kind, Damage::TornTail);
        j.append(&started(1)).unwrap();
        drop(j);
        assert_eq!(Journal::open(&path).unwrap().1, vec![started(1)]);

        // A newer format is kept aside, never written over, and the journal begins afresh.
        fs::write(&path, "# eboardd-journal 9\nwhatever\n").unwrap();
        let (mut j, restored, w) = Journal::open(&path).unwrap();
        assert!(restored.is_empty() && w.is_none());
        let kept = j.take_kept();
        assert_eq!(kept.len(), 1);
        assert!(kept[0].path.ends_with("b1.journal.newer-1"));
        assert!(kept[0].why.contains("newer eboardd"), "{}", kept[0].why);
        assert_eq!(
            fs::read_to_string(&kept[0].path).unwrap(),
            "# eboardd-journal 9\nwhatever\n"
        );
        j.append(&started(2)).unwrap();
        drop(j);
        assert_eq!(Journal::open(&path).unwrap().1, vec![started(2)]);
    }

    #[test]
    fn journals_of_earlier_versions_are_read_and_appended_to() {
        let dir = tempfile::tempdir().unwrap();
        let path = journal_path(dir.path(), "b1");
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        for header in JOURNAL_HEADERS_EARLIER {
            let text = format!("{header}\n{}", encode_lines(&[started(1), mv(1)]).unwrap());
            fs::write(&path, &text).unwrap();
            let (mut j, restored, w) = Journal::open(&path).unwrap();
            assert_eq!(restored, vec![started(1), mv(1)], "{header}");
            assert!(w.is_none() && j.take_kept().is_empty(), "{header}");
            j.append(&mv(2)).unwrap();
            drop(j);
            assert_eq!(
                Journal::open(&path).unwrap().1,
                vec![started(1), mv(1), mv(2)]
            );
        }
    }

    #[test]
    fn what_is_not_a_regular_file_is_waited_out_and_never_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let path = journal_path(dir.path(), "b1");
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let lock = dir.path().join("games/b1.journal.lock");
        // A FIFO in place of the journal, a directory in place of its lock.
        nix::unistd::mkfifo(&path, nix::sys::stat::Mode::S_IRWXU).unwrap();
        fs::create_dir(&lock).unwrap();
        let (mut j, restored, _) = Journal::open(&path).unwrap();
        assert!(restored.is_empty() && !j.is_ready());
        let e = j.append(&started(1)).unwrap_err();
        assert!(
            e.to_string().contains("b1.journal.lock is a directory"),
            "{e}"
        );
        fs::remove_dir(&lock).unwrap();
        let e = j.prepare().unwrap_err();
        assert!(e.to_string().contains("b1.journal is a FIFO"), "{e}");
        fs::remove_file(&path).unwrap();
        j.prepare().unwrap();
        assert!(j.is_ready() && j.take_kept().is_empty());
        j.append(&started(1)).unwrap();
        drop(j);
        assert_eq!(Journal::open(&path).unwrap().1, vec![started(1)]);
    }

    #[test]
    fn a_file_that_is_not_the_one_read_is_kept_aside_and_the_game_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = journal_path(dir.path(), "b1");
        let (mut j, _, _) = Journal::open(&path).unwrap();
        j.append_all(&[started(1), mv(1)]).unwrap();
        drop(j);
        // Read at open, but not ready: a directory stands in place of its lock.
        let lock = dir.path().join("games/b1.journal.lock");
        fs::remove_file(&lock).unwrap();
        fs::create_dir(&lock).unwrap();
        let (mut j, restored, _) = Journal::open(&path).unwrap();
        assert_eq!(restored, vec![started(1), mv(1)]);
        assert!(!j.is_ready());
        fs::remove_dir(&lock).unwrap();
        // Someone puts another file in its place before the first write.
        let other = dir.path().join("other");
        fs::write(&other, "# eboardd-journal 2\n").unwrap();
        fs::rename(&other, &path).unwrap();
        j.append(&mv(2)).unwrap();
        let kept = j.take_kept();
        assert_eq!(kept.len(), 1);
        assert!(kept[0].path.ends_with("b1.journal.unread-1"), "{kept:?}");
        assert_eq!(
            fs::read_to_string(&kept[0].path).unwrap(),
            "# eboardd-journal 2\n"
        );
        drop(j);
        // The game is whole in the new file: what was restored, then the new record.
        assert_eq!(
            Journal::open(&path).unwrap().1,
            vec![started(1), mv(1), mv(2)]
        );
    }

    #[test]
    fn a_journal_is_opened_once_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = journal_path(dir.path(), "b1");
        let (j, _, _) = Journal::open(&path).unwrap();
        let e = Journal::open(&path).unwrap_err();
        assert!(e.to_string().contains("in use"), "{e}");
        drop(j);
        assert!(Journal::open(&path).is_ok());
    }

    #[test]
    fn carry_over_keeps_tags_and_the_last_rules() {
        let events = [
            rules(Rules::Rapid),
            tags("1"),
            started(1),
            mv(1),
            rules(Rules::Blitz),
        ];
        assert_eq!(carry_over(&events), vec![tags("1"), rules(Rules::Blitz)]);
    }
}
