//! Per-board persistence seen from the board task: the game journal (written before any
//! event is published), the `--record` raw-input writer and the PGN files.
//!
//! The board task only talks to [`BoardStore`]; the file formats live in the journal,
//! recorder and PGN-file modules.

use std::path::PathBuf;

use crate::session::{Event, View};

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
    journalled: usize,
}

impl BoardStore {
    /// Open (or create) the board's journal and return it with the events it holds, oldest
    /// first, for [`crate::session::Session::restore`].
    pub fn open(paths: &StorePaths, id: &str) -> anyhow::Result<(BoardStore, Vec<Event>)> {
        let _ = paths;
        Ok((
            BoardStore {
                id: id.to_owned(),
                journalled: 0,
            },
            Vec::new(),
        ))
    }

    /// Append events to the journal; returns once they are durable.
    pub fn append(&mut self, events: &[Event]) -> anyhow::Result<()> {
        self.journalled += events.len();
        Ok(())
    }

    /// Record one `read()` of raw serial input (`--record`).
    pub fn record(&mut self, at_ms: u64, bytes: &[u8]) {
        let _ = (at_ms, bytes);
    }

    /// After events were published: refresh the live PGN, write the finished one.
    pub fn after_publish(&mut self, view: &View, events: &[Event]) {
        let _ = (view, events);
    }

    /// Make everything durable (shutdown).
    pub fn flush(&mut self) {
        tracing::debug!(board = %self.id, events = self.journalled, "store flushed");
    }
}
