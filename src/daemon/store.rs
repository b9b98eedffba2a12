//! Per-board persistence seen from the board task: the game journal (records written before
//! any event is published, through the shared [`Writer`]), the `--record` raw-input writer
//! and the PGN files.
//!
//! The board task only talks to [`BoardStore`]; the file formats live in [`super::journal`],
//! [`super::recorder`] and [`super::pgn_files`]. Failures of the recorder are logged and
//! never stop the board. Failures of the journal and the PGN files (a full, read-only or
//! failing disk) never stop it either: the game goes on from memory, the problem is reported
//! to [`Health`] (the manager's `StorageProblem`), and what could not be written — journal
//! records, the live PGN, a finished game — is written as soon as the disk takes it again.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::contract::BoardProps;
use crate::session::{Event, is_journalled};

use super::health::{self, Health, Source};
use super::journal::{Journal, journal_path};
use super::pgn_files::{PgnFileError, PgnFiles};
use super::recorder::Recorder;
use super::writer::{Key, Outcome, Writer};

/// How often PGN files that could not be written are tried again.
const PGN_RETRY: Duration = Duration::from_secs(1);

/// Where a board's files go.
#[derive(Debug, Clone)]
pub struct StorePaths {
    pub state_dir: PathBuf,
    pub pgn_dir: Option<PathBuf>,
    pub record_dir: Option<PathBuf>,
}

/// One board's persistent state.
pub struct BoardStore {
    id: String,
    writer: Writer,
    key: Key,
    health: Health,
    recorder: Option<Recorder>,
    pgn: Option<PgnFiles>,
    pgn_dir: Option<PathBuf>,
    /// The live PGN text last written, to skip rewriting an unchanged file.
    live: String,
    /// Finished games not yet written (the disk refused them).
    finished: Vec<String>,
    /// The PGN files failed; when they were last tried.
    pgn_failing: Option<Instant>,
    /// An append was lost (no journal takes it): shown in `StorageProblem` until one is not.
    unjournalled: bool,
}

impl BoardStore {
    /// Open (or create) the board's journal, hand it to the writer and return the store with
    /// the events the journal holds, oldest first, for [`crate::session::Session::restore`].
    pub fn open(
        paths: &StorePaths,
        id: &str,
        writer: &Writer,
        health: &Health,
    ) -> anyhow::Result<(BoardStore, Vec<Event>)> {
        let path = journal_path(&paths.state_dir, id);
        let (journal, events, warning) = Journal::open(&path)
            .with_context(|| format!("cannot open the journal {}", path.display()))?;
        if let Some(w) = warning {
            tracing::warn!(board = %id, "journal damage found: {w}");
        }
        let key = writer.register(id, journal);
        let recorder = paths.record_dir.as_ref().and_then(|dir| {
            Recorder::create(dir, id)
                .inspect(|r| tracing::info!(board = %id, file = %r.path().display(), "recording serial input"))
                .inspect_err(|e| tracing::error!(board = %id, "cannot record: {e}"))
                .ok()
        });
        let mut store = BoardStore {
            id: id.to_owned(),
            writer: writer.clone(),
            key,
            health: health.clone(),
            recorder,
            pgn: None,
            pgn_dir: paths.pgn_dir.clone(),
            live: String::new(),
            finished: Vec::new(),
            pgn_failing: None,
            unjournalled: false,
        };
        store.open_pgn();
        Ok((store, events))
    }

    /// The PGN directory, once it can be made.
    fn open_pgn(&mut self) -> Option<&PgnFiles> {
        if self.pgn.is_none()
            && let Some(dir) = self.pgn_dir.as_ref()
        {
            match PgnFiles::new(dir) {
                Ok(p) => self.pgn = Some(p),
                Err(e) => self.pgn_failed(&e),
            }
        }
        self.pgn.as_ref()
    }

    /// Journal what of `events` the journal keeps ([`is_journalled`]); returns once it is
    /// durable, or at once when the disk refused it (then it is held and written later, and
    /// the events are published all the same: hiding the game would not help anyone).
    pub async fn append(&mut self, events: &[Event]) -> Outcome {
        let records: Vec<Event> = events
            .iter()
            .filter(|e| is_journalled(e))
            .cloned()
            .collect();
        if records.is_empty() {
            return Outcome::Durable;
        }
        let outcome = self.writer.append(self.key, records).await;
        match &outcome {
            Outcome::Lost(why) => {
                // The writer's own stop is one problem of every board: said once.
                let text = if why.starts_with(super::writer::WRITER_STOPPED) {
                    why.clone()
                } else {
                    format!("board {}: {why}", self.id)
                };
                self.health
                    .report(Source::Unjournalled(self.id.clone()), Some(text));
                self.unjournalled = true;
            }
            _ if self.unjournalled => {
                self.health
                    .report(Source::Unjournalled(self.id.clone()), None);
                self.unjournalled = false;
            }
            _ => {}
        }
        outcome
    }

    /// Record one `read()` of raw serial input (`--record`), at `at_ms` since the recorder
    /// started.
    pub fn record(&mut self, bytes: &[u8]) {
        if let Some(r) = self.recorder.as_mut()
            && let Err(e) = r.record(bytes)
        {
            tracing::error!(board = %self.id, "recording stopped: {e}");
            self.recorder = None;
        }
    }

    /// A remark in the recording (connect, unplug).
    pub fn note(&mut self, text: &str) {
        if let Some(r) = self.recorder.as_mut() {
            let _ = r.note(text);
        }
    }

    /// After events were published: refresh the live PGN, store a finished game.
    pub fn after_publish(&mut self, view: &BoardProps, events: &[Event]) {
        if self.pgn_dir.is_none() || view.pgn.is_empty() {
            return;
        }
        if events.iter().any(|e| matches!(e, Event::GameEnded { .. })) {
            self.finished.push(view.pgn.clone());
        }
        self.write_pgn(view);
    }

    /// Try again what the disk refused (called on the board's ticks; does something at
    /// most every [`PGN_RETRY`] while PGN files fail).
    pub fn retry(&mut self, view: &BoardProps) {
        if let Some(at) = self.pgn_failing
            && at.elapsed() >= PGN_RETRY
        {
            self.write_pgn(view);
        }
    }

    fn write_pgn(&mut self, view: &BoardProps) {
        let id = self.id.clone();
        let Some(pgn) = self.open_pgn().cloned() else {
            self.pgn_failing = Some(Instant::now());
            return;
        };
        let mut failed = None;
        if view.pgn != self.live && !view.pgn.is_empty() {
            match pgn.write_live(&id, &view.pgn) {
                Ok(_) => self.live = view.pgn.clone(),
                Err(e) => failed = Some(e),
            }
            // The round folder's copy (Round tag `<round>.<board>`), for the Broadcaster app:
            // handed to the round writer's thread, off the async runtime.
            super::round_writer::global().publish(pgn.dir(), &view.pgn);
        }
        while failed.is_none()
            && let Some(text) = self.finished.first()
        {
            match pgn.write_finished(&id, text) {
                Ok(path) => {
                    tracing::info!(board = %id, file = %path.display(), "finished game written");
                    self.finished.remove(0);
                }
                Err(e) => failed = Some(e),
            }
        }
        match failed {
            Some(e) => self.pgn_failed(&e),
            None => {
                if self.pgn_failing.take().is_some() {
                    self.health.report(Source::Pgn(id), None);
                }
            }
        }
    }

    fn pgn_failed(&mut self, e: &PgnFileError) {
        if self.pgn_failing.is_none() {
            tracing::warn!(board = %self.id, "{e}");
        }
        self.pgn_failing = Some(Instant::now());
        let dir = self.pgn_dir.clone().unwrap_or_default();
        self.health.report(
            Source::Pgn(self.id.clone()),
            Some(health::describe("PGN directory", &dir, &e.source)),
        );
    }

    /// The board is no longer served: move its live PGN out of `live/`.
    pub fn retire(&mut self) {
        self.health.report(Source::Pgn(self.id.clone()), None);
        let Some(pgn) = self.open_pgn().cloned() else {
            return;
        };
        match pgn.retire_live(&self.id) {
            Ok(Some(to)) => {
                tracing::info!(board = %self.id, file = %to.display(), "live PGN moved out of live/")
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(board = %self.id, "{e}"),
        }
    }

    /// Make everything durable and close the journal (shutdown, board removed).
    pub async fn flush(&mut self) {
        if !self.writer.close(self.key).await {
            tracing::error!(
                board = %self.id,
                "journal records are still held in memory; they are written as soon as the \
                 disk takes them"
            );
        }
        if self.pgn.is_some() {
            // The final state of this board's round file (and its round's games.pgn).
            super::round_writer::global().flush().await;
        }
        if let Some(r) = self.recorder.as_mut()
            && let Err(e) = r.sync()
        {
            tracing::error!(board = %self.id, "cannot sync the recording: {e}");
        }
    }
}
