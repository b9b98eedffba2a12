//! What opening a journal reports about damage it found (and repaired, or will repair once
//! the disk takes it): never fatal, always said.

use std::path::PathBuf;

/// Damage found (and repaired) when opening a journal. Never fatal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub path: PathBuf,
    pub kind: Damage,
    /// 1-based line of the first bad record.
    pub line: usize,
    /// Records restored (the good ones before the damage).
    pub kept: usize,
    /// Bytes cut from the end of the journal.
    pub dropped_bytes: u64,
    /// Copy of the damaged file, kept when more than a torn last record was dropped.
    pub saved_copy: Option<PathBuf>,
    /// What was wrong with the bad line.
    pub reason: String,
}

/// What kind of damage a [`Warning`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Damage {
    /// The last record is incomplete or bad: an append interrupted by a crash.
    TornTail,
    /// A bad record with more data after it: the file was damaged.
    Corrupt,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind {
            Damage::TornTail => write!(
                f,
                "{}: dropped a torn last record at line {} ({}; {} bytes), kept {} records",
                self.path.display(),
                self.line,
                self.reason,
                self.dropped_bytes,
                self.kept
            )?,
            Damage::Corrupt => write!(
                f,
                "{}: corrupt record at line {} ({}); restored the {} records before it and \
                 dropped {} bytes",
                self.path.display(),
                self.line,
                self.reason,
                self.kept,
                self.dropped_bytes
            )?,
        }
        if let Some(copy) = &self.saved_copy {
            write!(f, "; the damaged file is kept as {}", copy.display())?;
        }
        Ok(())
    }
}
