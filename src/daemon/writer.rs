//! The journal writer: one thread that writes every board's journal records and makes them
//! durable together (group commit), holds them in memory while the disk refuses them, and
//! writes them as soon as it takes them again.
//!
//! A board task hands the records of one input to [`Writer::append`] and publishes the events
//! when the answer comes: [`Outcome::Durable`] once the records are on the device, or
//! [`Outcome::Held`] at once if the disk failed (full, read-only, I/O error) — the game goes
//! on from memory and the records stay queued, in order, for the next try.
//!
//! **Group commit.** The thread takes every request that arrives within a short window after
//! the first one (and whatever queued up while the previous sync ran), writes each board's
//! lines to its own journal file, appends a copy of all of them to the shared commit log
//! ([`super::commit_log`]) and syncs that one file: one `fdatasync` for the whole group
//! instead of one per board. "Published only after synced" holds for every board of the
//! group. Without group commit ([`Config::group`] false) each journal is synced on its own,
//! which the benchmark compares. (A `syncfs` of the file system was tried first and dropped:
//! it also flushes everything else on that file system, and measured a second at p99 on a
//! busy one.)
//!
//! **Failures.** A failed write or sync cuts the journal back to its last synced length
//! ([`Journal::write`]), so nothing already journalled is ever damaged and no torn record is
//! left in front of later ones; the records are written again at the next try (every
//! [`Config::retry`] while anything is held). The problem is reported to [`Health`] and
//! cleared when everything held has been written. From the first failure until then the
//! commit log is emptied (a checkpoint) and not written — each journal is synced on its own
//! — so that on a nearly full disk the log's own growth never keeps writes failing; it is
//! emptied again once everything held is written. A writer thread that panics reports it
//! to [`Health`] and every append after it is [`Outcome::Lost`], which the board shows.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use super::commit_log::{self, CommitLog};
use super::health::{self, Health, Source};
use super::journal::{Chunk, Journal, JournalError, is_storage_fault};
use eboard_core::session::Event;

mod checkpoint;

/// How the writer batches and retries.
#[derive(Debug, Clone)]
pub struct Config {
    /// After the first request of a group, wait this long for more.
    pub window: Duration,
    /// One `fdatasync` of the commit log for the whole group (`true`), or one `fdatasync`
    /// per journal.
    pub group: bool,
    /// While records are held (storage failing), try again this often.
    pub retry: Duration,
    /// A checkpoint (every journal synced in its own file, the commit log emptied) once the
    /// log holds this much ([`commit_log::CHECKPOINT_BYTES`]; the tests use less).
    pub checkpoint_bytes: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            window: Duration::from_millis(2),
            group: true,
            retry: Duration::from_millis(500),
            checkpoint_bytes: commit_log::CHECKPOINT_BYTES,
        }
    }
}

/// Between two journal syncs of a checkpoint (on its own thread): 200 journals take 2 s or
/// more, while the commit log's syncs get the disk in between.
const CHECKPOINT_PACE: Duration = Duration::from_millis(10);

/// What became of an append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The records are on the device.
    Durable,
    /// The disk refused them; they are held in memory and written when it takes them again.
    Held(String),
    /// Nobody holds them: the writer has stopped, or the board's journal is closed. The game
    /// goes on from memory only; this is shown in `StorageProblem`.
    Lost(String),
}

/// Why an append is [`Outcome::Lost`] when the writer thread is gone.
pub const WRITER_STOPPED: &str =
    "the journal writer has stopped: game events are no longer journalled (restart eboardd)";

/// Counters, for the benchmark and the log.
#[derive(Debug, Default)]
pub struct Stats {
    /// `syncfs` or `fdatasync` calls.
    pub syncs: AtomicU64,
    /// Groups written (one per sync cycle).
    pub groups: AtomicU64,
    /// Records made durable.
    pub records: AtomicU64,
    /// Checkpoints whose journals were synced aside (by the journal-sync thread).
    pub checkpoints_aside: AtomicU64,
}

/// The handle boards use; cheap to clone. The thread ends when every handle is gone.
#[derive(Clone)]
pub struct Writer {
    tx: mpsc::Sender<Request>,
    stats: Arc<Stats>,
    next_key: Arc<AtomicU64>,
}

/// A board's place in the writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key(u64);

enum Request {
    Register {
        key: Key,
        id: String,
        journal: Box<Journal>,
    },
    Append {
        key: Key,
        events: Vec<Event>,
        reply: oneshot::Sender<Outcome>,
    },
    /// Write what is held, then close the journal (at once if nothing is held, else as soon
    /// as it is written). Answers whether nothing was left held.
    Close {
        key: Key,
        reply: oneshot::Sender<bool>,
    },
}

impl Writer {
    /// Start the writer thread for journals under `games_dir` (the file system that is
    /// synced as a whole).
    ///
    /// First puts back what a commit log of an earlier run holds beyond its journals (a power
    /// cut), so call this before opening any journal.
    pub fn start(games_dir: &Path, config: Config, health: Health) -> std::io::Result<Writer> {
        let (tx, rx) = mpsc::channel();
        let stats = Arc::new(Stats::default());
        let mut log_refused = false;
        let log_path = commit_log::log_path(games_dir);
        match commit_log::recover(games_dir) {
            Ok(r) if r.kept.is_empty() => {}
            Ok(r) => {
                // Lines it could not put back: the log is kept for the next start.
                let text = format!(
                    "commit log {} kept: cannot put back its lines of {}; group commit is \
                     off until a restart can",
                    log_path.display(),
                    r.kept.join(", ")
                );
                tracing::error!("{text}");
                health.report(Source::CommitLog, Some(text));
                log_refused = true;
            }
            Err(e) => {
                // Not touched (another version, or unreadable): it cannot be emptied either.
                tracing::error!(
                    "commit log {}: {e}; group commit is off",
                    log_path.display()
                );
                log_refused = true;
            }
        }
        let mut thread = Thread {
            games_dir: games_dir.to_path_buf(),
            log: None,
            log_refused,
            closed_unsynced: false,
            degraded: false,
            config,
            health: health.clone(),
            stats: stats.clone(),
            slots: HashMap::new(),
            problem: None,
            syncing: None,
        };
        std::thread::Builder::new()
            .name("journal-writer".into())
            .spawn(move || {
                let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| thread.run(rx)));
                if let Err(panic) = ran {
                    let why = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    // Every waiting append is answered `Lost` as its reply is dropped.
                    health.report(Source::Journal, Some(format!("{WRITER_STOPPED} ({why})")));
                }
            })?;
        Ok(Writer {
            tx,
            stats,
            next_key: Arc::new(AtomicU64::new(0)),
        })
    }

    /// Hand an open journal to the writer; returns the key to append with.
    pub fn register(&self, id: &str, journal: Journal) -> Key {
        let key = Key(self.next_key.fetch_add(1, Ordering::Relaxed));
        let _ = self.tx.send(Request::Register {
            key,
            id: id.to_owned(),
            journal: Box::new(journal),
        });
        key
    }

    /// Journal `events`; resolves when they are durable, or at once when they are held.
    pub async fn append(&self, key: Key, events: Vec<Event>) -> Outcome {
        let (reply, answer) = oneshot::channel();
        if self
            .tx
            .send(Request::Append { key, events, reply })
            .is_err()
        {
            return Outcome::Lost(WRITER_STOPPED.into());
        }
        answer
            .await
            .unwrap_or_else(|_| Outcome::Lost(WRITER_STOPPED.into()))
    }

    /// Write what is held and close the journal; `false` if records are still held (they
    /// are written when the disk allows, and the journal closed then).
    pub async fn close(&self, key: Key) -> bool {
        let (reply, answer) = oneshot::channel();
        if self.tx.send(Request::Close { key, reply }).is_err() {
            return false;
        }
        answer.await.unwrap_or(false)
    }

    /// The writer's counters.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }
}

/// One board's journal and what it still has to make durable.
struct Slot {
    id: String,
    journal: Journal,
    /// Records not yet durable, oldest first; `pending[..written]` are written, unsynced.
    pending: Vec<Event>,
    written: usize,
    /// Sequence number of `pending[0]` (records count from 0 per slot).
    base: u64,
    /// Appends waiting for durability: (sequence number just past their last record, reply).
    waiters: Vec<(u64, oneshot::Sender<Outcome>)>,
    /// Close once nothing is held.
    closing: Option<oneshot::Sender<bool>>,
    close_requested: bool,
}

impl Slot {
    /// The first `n` pending records are durable.
    fn durable(&mut self, n: usize, stats: &Stats) {
        let n = n.min(self.pending.len());
        self.pending.drain(..n);
        self.written = self.written.saturating_sub(n);
        self.base += n as u64;
        stats.records.fetch_add(n as u64, Ordering::Relaxed);
    }
}

struct Thread {
    games_dir: PathBuf,
    /// The commit log (group commit), once it could be created.
    log: Option<CommitLog>,
    /// An old log was left alone: no group commit in this run.
    log_refused: bool,
    /// A journal closed without its own sync: the log must not be emptied in this run.
    closed_unsynced: bool,
    /// Writes failed: the commit log is emptied and not used (each journal synced on its
    /// own) until everything held is written, so that it takes no room on a full disk.
    degraded: bool,
    config: Config,
    health: Health,
    stats: Arc<Stats>,
    slots: HashMap<Key, Slot>,
    /// The problem of the last failed cycle, while anything is held.
    problem: Option<String>,
    /// A checkpoint syncing the journals aside while the groups go into a new log: answers
    /// whether every journal the retired log covers was synced.
    syncing: Option<std::thread::JoinHandle<bool>>,
}

impl Thread {
    fn run(&mut self, rx: mpsc::Receiver<Request>) {
        // The commit log at once, so that what stands in its way is said from the start.
        if self.config.group {
            let _ = self.commit_log();
        }
        loop {
            // Held records, or a journal not ready yet: try again in a while.
            let held = self
                .slots
                .values()
                .any(|s| !s.pending.is_empty() || !s.journal.is_ready());
            let first = if held {
                match rx.recv_timeout(self.config.retry) {
                    Ok(r) => Some(r),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => break,
                }
            } else {
                match rx.recv() {
                    Ok(r) => Some(r),
                    Err(_) => break,
                }
            };
            if let Some(r) = first {
                self.take(r);
                // The group: whatever arrives within the window, and whatever is queued.
                let deadline = Instant::now() + self.config.window;
                loop {
                    let left = deadline.saturating_duration_since(Instant::now());
                    let next = if left.is_zero() {
                        rx.try_recv().ok()
                    } else {
                        rx.recv_timeout(left).ok()
                    };
                    match next {
                        Some(r) => self.take(r),
                        None => break,
                    }
                }
            }
            self.cycle();
        }
        // Every handle is gone (shutdown): a last try for what is held, then the journals
        // synced in their own files and the commit log emptied.
        self.cycle();
        self.checkpoint();
    }

    fn take(&mut self, request: Request) {
        match request {
            Request::Register { key, id, journal } => {
                self.slots.insert(
                    key,
                    Slot {
                        id,
                        journal: *journal,
                        pending: Vec::new(),
                        written: 0,
                        base: 0,
                        waiters: Vec::new(),
                        closing: None,
                        close_requested: false,
                    },
                );
            }
            Request::Append { key, events, reply } => match self.slots.get_mut(&key) {
                Some(slot) if !slot.close_requested => {
                    slot.pending.extend(events);
                    let end = slot.base + slot.pending.len() as u64;
                    slot.waiters.push((end, reply));
                }
                _ => {
                    let _ = reply.send(Outcome::Lost("its journal is closed".into()));
                }
            },
            Request::Close { key, reply } => match self.slots.get_mut(&key) {
                Some(slot) => {
                    slot.close_requested = true;
                    slot.closing = Some(reply);
                }
                None => {
                    let _ = reply.send(true);
                }
            },
        }
    }

    /// Write everything pending, sync, answer the waiters, close what may be closed.
    fn cycle(&mut self) {
        if super::faults::writer_panics() {
            panic!("injected fault: panic:writer");
        }
        let mut failure = Failure::default();
        let stats = self.stats.clone();
        // 1. Write each board's new records to its file (a journal not ready with nothing to
        // write is tried all the same, so its problem shows and ends when it does).
        for slot in self.slots.values_mut() {
            if slot.pending.len() <= slot.written {
                if !slot.journal.is_ready()
                    && let Err(e) = slot.journal.prepare()
                {
                    failure.add(&self.games_dir, &e);
                }
                for kept in slot.journal.take_kept() {
                    self.health.keep_aside(kept.path, kept.why);
                }
                continue;
            }
            let already = slot.written;
            match slot.journal.write(&slot.pending[already..]) {
                Ok(durable) => {
                    slot.written = slot.pending.len();
                    if durable > 0 {
                        // A rotation synced the file: everything before is durable too.
                        slot.durable(already + durable, &stats);
                    }
                }
                Err((durable, e)) => {
                    // Cut back to the last synced length: the unsynced ones go again.
                    slot.written = 0;
                    if durable > 0 {
                        slot.durable(already + durable, &stats);
                        slot.written = 0;
                    }
                    failure.add(&self.games_dir, &e);
                }
            }
            for kept in slot.journal.take_kept() {
                self.health.keep_aside(kept.path, kept.why);
            }
        }
        // 2. Make them durable: one syncfs for all, or one fdatasync each.
        let dirty: Vec<Key> = self
            .slots
            .iter()
            .filter(|(_, s)| s.journal.unsynced())
            .map(|(k, _)| *k)
            .collect();
        if !dirty.is_empty() {
            self.stats.groups.fetch_add(1, Ordering::Relaxed);
            if self.config.group && !self.degraded && self.commit_log().is_some() {
                let chunks: Vec<(String, Chunk)> = dirty
                    .iter()
                    .flat_map(|k| {
                        let slot = &self.slots[k];
                        slot.journal
                            .unsynced_chunks()
                            .iter()
                            .map(|c| (slot.id.clone(), c.clone()))
                    })
                    .collect();
                let refs: Vec<(&str, &Chunk)> =
                    chunks.iter().map(|(id, c)| (id.as_str(), c)).collect();
                self.stats.syncs.fetch_add(1, Ordering::Relaxed);
                let log = self.log.as_mut().expect("checked above");
                match log.commit(&refs) {
                    Ok(()) => {
                        for k in &dirty {
                            let slot = self.slots.get_mut(k).expect("dirty slot");
                            slot.journal.mark_synced();
                            let n = slot.written;
                            slot.durable(n, &stats);
                        }
                    }
                    Err(e) => {
                        for k in &dirty {
                            let slot = self.slots.get_mut(k).expect("dirty slot");
                            slot.journal.cut_back();
                            slot.written = 0;
                        }
                        failure.add_io(&self.games_dir, &e);
                    }
                }
            } else {
                for k in &dirty {
                    let slot = self.slots.get_mut(k).expect("dirty slot");
                    self.stats.syncs.fetch_add(1, Ordering::Relaxed);
                    match slot.journal.sync() {
                        Ok(()) => {
                            let n = slot.written;
                            slot.durable(n, &stats);
                        }
                        Err(e) => {
                            slot.journal.cut_back();
                            slot.written = 0;
                            failure.add(&self.games_dir, &e);
                        }
                    }
                }
            }
        }
        // 3. Answer: durable appends, and (on failure) every append still waiting is held.
        let failure = failure.summary();
        for slot in self.slots.values_mut() {
            let base = slot.base;
            let waiters = std::mem::take(&mut slot.waiters);
            for (end, reply) in waiters {
                if end <= base {
                    let _ = reply.send(Outcome::Durable);
                } else if let Some((p, _)) = &failure {
                    let _ = reply.send(Outcome::Held(p.clone()));
                } else {
                    slot.waiters.push((end, reply));
                }
            }
        }
        // 4. Health: a problem while anything is held or a journal is not ready; fine again
        // once neither is.
        let held: usize = self.slots.values().map(|s| s.pending.len()).sum();
        let unready = self.slots.values().any(|s| !s.journal.is_ready());
        match failure {
            Some((p, storage_fault)) => {
                let boards = self
                    .slots
                    .values()
                    .filter(|s| !s.pending.is_empty())
                    .count();
                let text = if held > 0 {
                    format!("{p}; {held} journal records of {boards} boards held in memory")
                } else {
                    p.clone()
                };
                if self.problem.is_none() {
                    for slot in self.slots.values().filter(|s| !s.pending.is_empty()) {
                        tracing::warn!(board = %slot.id, held = slot.pending.len(), "journal records held in memory");
                    }
                }
                self.problem = Some(p);
                self.health.report(Source::Journal, Some(text));
                // Only a disk that refuses writes makes the log's own growth a danger; a
                // journal kept from being written (a directory in its place) does not.
                if storage_fault && !self.degraded {
                    // The log's lines are synced into their journals and the log emptied: on
                    // a full disk its own growth must not be what keeps writes failing.
                    self.degraded = true;
                    self.checkpoint();
                }
            }
            None if held == 0 && !unready => {
                self.problem = None;
                self.health.report(Source::Journal, None);
                if self.degraded {
                    self.degraded = false;
                    self.checkpoint();
                }
            }
            None => {}
        }
        // 5. Close the journals that asked for it, once nothing is held: synced in their
        // own file first, so the commit log no longer needs to hold their lines, and dropped
        // (lock released) before the answer, so the board can be served again at once.
        let closing: Vec<Key> = self
            .slots
            .iter()
            .filter(|(_, s)| s.close_requested)
            .map(|(k, _)| *k)
            .collect();
        for key in closing {
            let slot = self.slots.get_mut(&key).expect("closing slot");
            let reply = slot.closing.take();
            if !slot.pending.is_empty() {
                if let Some(reply) = reply {
                    let _ = reply.send(false);
                }
                continue;
            }
            let mut slot = self.slots.remove(&key).expect("closing slot");
            if slot.journal.file_unsynced() {
                self.stats.syncs.fetch_add(1, Ordering::Relaxed);
                if let Err(e) = slot.journal.sync_file() {
                    tracing::warn!(board = %slot.id, "{e}");
                    self.closed_unsynced = true;
                }
            }
            drop(slot.journal);
            if let Some(reply) = reply {
                let _ = reply.send(true);
            }
        }
        // 6. Now and then: sync every journal file and empty the commit log, off this
        // thread (the groups go on meanwhile).
        self.checkpoint_done(false);
        let threshold = self.config.checkpoint_bytes;
        if self.syncing.is_none()
            && self
                .log
                .as_ref()
                .is_some_and(|l| l.wants_checkpoint(threshold))
        {
            self.checkpoint_aside();
        }
    }
}

/// What failed in one cycle: each distinct problem once, and whether the disk (or the commit
/// log) refused writes, which turns group commit off until everything held is written.
#[derive(Default)]
struct Failure {
    problems: Vec<String>,
    storage_fault: bool,
}

impl Failure {
    /// A journal's failure: the disk's (full, read-only, failing) said of the state
    /// directory, anything else (a directory in place of the journal) of the journal itself.
    fn add(&mut self, games_dir: &Path, e: &JournalError) {
        if is_storage_fault(&e.source) {
            self.add_io(games_dir, &e.source);
        } else {
            self.push(e.to_string());
        }
    }

    /// A failure of the disk, or of the commit log whatever its error: the log is not used
    /// again until everything held is written.
    fn add_io(&mut self, games_dir: &Path, e: &std::io::Error) {
        self.storage_fault = true;
        self.push(health::describe("state directory", games_dir, e));
    }

    fn push(&mut self, problem: String) {
        if !self.problems.contains(&problem) {
            self.problems.push(problem);
        }
    }

    /// Every problem in one line, and whether the disk refused writes; `None` if all went well.
    fn summary(self) -> Option<(String, bool)> {
        (!self.problems.is_empty()).then(|| (self.problems.join("; "), self.storage_fault))
    }
}
