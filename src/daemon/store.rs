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

use anyhow::Context;

use eboard_core::contract::BoardProps;
use eboard_core::session::{Event, is_journalled};

use super::health::{Health, Source};
use super::journal::{Journal, journal_path};
use super::pgn_writer::PgnWriter;
use super::recorder::Recorder;
use super::writer::{Key, Outcome, Writer};

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
    /// Writes the PGN files off the async runtime (see [`super::pgn_writer`]).
    pgn_writer: PgnWriter,
    pgn_dir: Option<PathBuf>,
    /// The live PGN text last handed to the writer, to skip handing it again.
    live: String,
    /// An append was lost (no journal takes it): shown in `StorageProblem` until one is not.
    unjournalled: bool,
}

impl BoardStore {
    /// Open (or create) the board's journal, hand it to the writer and return the store with
    /// the events the journal holds, oldest first, for [`eboard_core::session::Session::restore`].
    pub fn open(
        paths: &StorePaths,
        id: &str,
        writer: &Writer,
        pgn_writer: &PgnWriter,
        health: &Health,
    ) -> anyhow::Result<(BoardStore, Vec<Event>)> {
        let path = journal_path(&paths.state_dir, id);
        // Fails only when another process serves the board; any other trouble with the
        // journal is held by the writer, shown in `StorageProblem` and healed when it goes.
        let (mut journal, events, warning) = Journal::open(&path)
            .with_context(|| format!("cannot open the journal {}", path.display()))?;
        if let Some(w) = warning {
            tracing::warn!(board = %id, "journal damage found: {w}");
        }
        for kept in journal.take_kept() {
            health.keep_aside(kept.path, kept.why);
        }
        let key = writer.register(id, journal);
        let recorder = paths.record_dir.as_ref().and_then(|dir| {
            Recorder::create(dir, id)
                .inspect(|r| tracing::info!(board = %id, file = %r.path().display(), "recording serial input"))
                .inspect_err(|e| tracing::error!(board = %id, "cannot record: {e}"))
                .ok()
        });
        let store = BoardStore {
            id: id.to_owned(),
            writer: writer.clone(),
            key,
            health: health.clone(),
            recorder,
            pgn_writer: pgn_writer.clone(),
            pgn_dir: paths.pgn_dir.clone(),
            live: String::new(),
            unjournalled: false,
        };
        Ok((store, events))
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

    /// After events were published: hand the live PGN and a finished game to the PGN
    /// writer (it writes them on its own thread, and tries again while the disk refuses).
    pub fn after_publish(&mut self, view: &BoardProps, events: &[Event]) {
        let Some(dir) = self.pgn_dir.as_ref() else {
            return;
        };
        if view.pgn.is_empty() {
            return;
        }
        if view.pgn != self.live {
            self.pgn_writer.live(&self.id, dir, &view.pgn);
            self.live.clone_from(&view.pgn);
        }
        if events.iter().any(|e| matches!(e, Event::GameEnded { .. })) {
            self.pgn_writer.finished(&self.id, dir, &view.pgn);
        }
    }

    /// The board is no longer served: its live PGN leaves `live/` (answers once it has).
    pub async fn retire(&mut self) {
        match self.pgn_dir.as_ref() {
            Some(dir) => self.pgn_writer.retire(&self.id, dir).await,
            None => self.health.report(Source::Pgn(self.id.clone()), None),
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
        if self.pgn_dir.is_some() {
            // The final state of this board's live file, finished games and round file.
            self.pgn_writer.flush().await;
        }
        if let Some(r) = self.recorder.as_mut()
            && let Err(e) = r.sync()
        {
            tracing::error!(board = %self.id, "cannot sync the recording: {e}");
        }
    }
}
