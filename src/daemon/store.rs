//! Per-board persistence seen from the board task: the game journal (written before any
//! event is published), the `--record` raw-input writer and the PGN files.
//!
//! The board task only talks to [`BoardStore`]; the file formats live in [`super::journal`],
//! [`super::recorder`] and [`super::pgn_files`]. Failures of the recorder and the PGN files
//! are logged and never stop the board; a journal that cannot be opened keeps the board
//! from starting (its game could not be kept).

use std::path::PathBuf;

use anyhow::Context;

use crate::session::{Event, View};

use super::journal::{Journal, journal_path};
use super::pgn_files::PgnFiles;
use super::recorder::Recorder;

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
    journal: Journal,
    recorder: Option<Recorder>,
    pgn: Option<PgnFiles>,
    /// The live PGN text last written, to skip rewriting an unchanged file.
    live: String,
}

impl BoardStore {
    /// Open (or create) the board's journal and return it with the events it holds, oldest
    /// first, for [`crate::session::Session::restore`].
    pub fn open(paths: &StorePaths, id: &str) -> anyhow::Result<(BoardStore, Vec<Event>)> {
        let path = journal_path(&paths.state_dir, id);
        let (journal, events, warning) = Journal::open(&path)
            .with_context(|| format!("cannot open the journal {}", path.display()))?;
        if let Some(w) = warning {
            tracing::warn!(board = %id, "journal damage repaired: {w}");
        }
        let recorder = paths.record_dir.as_ref().and_then(|dir| {
            Recorder::create(dir, id)
                .inspect(|r| tracing::info!(board = %id, file = %r.path().display(), "recording serial input"))
                .inspect_err(|e| tracing::error!(board = %id, "cannot record: {e}"))
                .ok()
        });
        let pgn = paths.pgn_dir.as_ref().and_then(|dir| {
            PgnFiles::new(dir)
                .inspect_err(|e| tracing::error!(board = %id, "no PGN files: {e}"))
                .ok()
        });
        let store = BoardStore {
            id: id.to_owned(),
            journal,
            recorder,
            pgn,
            live: String::new(),
        };
        Ok((store, events))
    }

    /// Append events to the journal; returns once they are durable (synced when they are
    /// part of the game record).
    pub fn append(&mut self, events: &[Event]) -> anyhow::Result<()> {
        // An fsync may take a while on a slow card: let the runtime move other boards away.
        let journal = &mut self.journal;
        let result = match tokio::runtime::Handle::try_current() {
            Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(|| journal.append_all(events))
            }
            _ => journal.append_all(events),
        };
        result.with_context(|| format!("journal {}", self.journal.path().display()))
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
    pub fn after_publish(&mut self, view: &View, events: &[Event]) {
        let Some(pgn) = self.pgn.as_ref() else { return };
        if view.pgn.is_empty() {
            return;
        }
        if view.pgn != self.live {
            match pgn.write_live(&self.id, &view.pgn) {
                Ok(_) => self.live = view.pgn.clone(),
                Err(e) => tracing::error!(board = %self.id, "{e}"),
            }
            // The round folder's copy (Round tag `<round>.<board>`), for the Broadcaster app.
            if let Err(e) = super::rounds::publish(pgn.dir(), &view.pgn) {
                tracing::error!(board = %self.id, "{e}");
            }
        }
        if events.iter().any(|e| matches!(e, Event::GameEnded { .. })) {
            match pgn.write_finished(&self.id, &view.pgn) {
                Ok(path) => {
                    tracing::info!(board = %self.id, file = %path.display(), "finished game written")
                }
                Err(e) => tracing::error!(board = %self.id, "{e}"),
            }
        }
    }

    /// Make everything durable (shutdown).
    pub fn flush(&mut self) {
        if let Err(e) = self.journal.sync() {
            tracing::error!(board = %self.id, "cannot sync the journal: {e}");
        }
        if let Some(r) = self.recorder.as_mut()
            && let Err(e) = r.sync()
        {
            tracing::error!(board = %self.id, "cannot sync the recording: {e}");
        }
    }
}
