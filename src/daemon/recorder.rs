//! `--record DIR`: each board's raw serial input, timestamped, in the record format of
//! [`eboard_core::capture`] — what `eboardctl replay` and `eboardctl decode` read, and what a user
//! attaches to a bug report.
//!
//! One file per board and daemon run, `<DIR>/<board id>-<YYYY-MM-DD>T<HHMMSS>Z.record`
//! (`-2`, `-3`, ... appended if that name is taken), starting with
//! [`capture::RECORD_HEADER`]. Every `read()` becomes one line, written out to the kernel
//! before [`Recorder::record`] returns: serial input is at most about a kilobyte per second,
//! so a write per read costs nothing and a crash of the daemon — the very thing worth
//! reporting — loses nothing. Events worth a remark (connect, unplug) can be added as `#`
//! comment lines, which readers skip.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use super::file_error::file_kind;
use eboard_core::capture;

/// A recording of one board's serial input.
#[derive(Debug)]
pub struct Recorder {
    path: PathBuf,
    file: File,
    start: Instant,
    line: String,
}

file_kind!(
    /// A failed recording operation, naming the file.
    RecordError,
    Recording,
    "recording"
);

impl Recorder {
    /// Start a new recording for `board_id` in `dir` (created if needed); time 0 is now.
    pub fn create(dir: &Path, board_id: &str) -> Result<Recorder, RecordError> {
        std::fs::create_dir_all(dir).map_err(RecordError::at(dir, "create the directory"))?;
        let stamp = utc_stamp(SystemTime::now());
        // Ids are already in the contract's alphabet; mapping again keeps a file name safe
        // whatever the caller passes.
        let safe_id = crate::daemon::config::board_id(board_id);
        let mut n = 1u32;
        loop {
            let suffix = if n == 1 {
                String::new()
            } else {
                format!("-{n}")
            };
            let path = dir.join(format!("{safe_id}-{stamp}{suffix}.record"));
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(file) => {
                    let mut recorder = Recorder {
                        path,
                        file,
                        start: Instant::now(),
                        line: String::new(),
                    };
                    recorder.write_raw(&format!(
                        "{}\n# board {board_id}\n# started {stamp}\n",
                        capture::RECORD_HEADER
                    ))?;
                    return Ok(recorder);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
                Err(e) => return Err(RecordError::new(path, "create it", e)),
            }
        }
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Milliseconds since the recording started.
    pub fn elapsed_ms(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Record the bytes of one `read()`, stamped with the time since the start.
    pub fn record(&mut self, bytes: &[u8]) -> Result<(), RecordError> {
        let at = self.elapsed_ms();
        self.record_at(at, bytes)
    }

    /// Record the bytes of one `read()` at `at_ms` since the start. Empty reads are skipped.
    pub fn record_at(&mut self, at_ms: u64, bytes: &[u8]) -> Result<(), RecordError> {
        if bytes.is_empty() {
            return Ok(());
        }
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        line.push_str(&capture::format_record_line(at_ms, bytes));
        line.push('\n');
        let result = self.write_raw(&line);
        self.line = line;
        result
    }

    /// Add a comment line (`# <at_ms> <text>`), e.g. "disconnected"; newlines become spaces.
    pub fn note_at(&mut self, at_ms: u64, text: &str) -> Result<(), RecordError> {
        let text: String = text
            .chars()
            .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
            .collect();
        self.write_raw(&format!("# {at_ms} {text}\n"))
    }

    /// [`Recorder::note_at`] the current time.
    pub fn note(&mut self, text: &str) -> Result<(), RecordError> {
        let at = self.elapsed_ms();
        self.note_at(at, text)
    }

    /// Push the recording to the device (on shutdown).
    pub fn sync(&mut self) -> Result<(), RecordError> {
        self.file
            .sync_data()
            .map_err(RecordError::at(&self.path, "sync it"))
    }

    fn write_raw(&mut self, text: &str) -> Result<(), RecordError> {
        self.file
            .write_all(text.as_bytes())
            .map_err(RecordError::at(&self.path, "write to it"))
    }
}

/// `YYYY-MM-DDTHHMMSSZ` (no colons: the stamp is part of a file name).
fn utc_stamp(time: SystemTime) -> String {
    let secs = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let of_day = secs % 86_400;
    format!(
        "{}T{:02}{:02}{:02}Z",
        super::pgn_files::utc_date(time),
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn stamp_format() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_798_761_599);
        assert_eq!(utc_stamp(t), "2026-12-31T235959Z");
    }

    #[test]
    fn records_parse_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = Recorder::create(dir.path(), "board-1").unwrap();
        assert!(
            r.path()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("board_1-")
        );
        r.record_at(0, &[0x8d, 0, 10]).unwrap();
        r.record_at(5, &[]).unwrap();
        r.note_at(7, "unplugged\nreplugged").unwrap();
        r.record_at(12, &[0xff; 40]).unwrap();
        let text = std::fs::read_to_string(r.path()).unwrap();
        assert!(text.starts_with(capture::RECORD_HEADER));
        let chunks = capture::parse(&text).unwrap();
        assert_eq!(
            chunks,
            vec![
                capture::Chunk {
                    at_ms: Some(0),
                    bytes: vec![0x8d, 0, 10]
                },
                capture::Chunk {
                    at_ms: Some(12),
                    bytes: vec![0xff; 40]
                },
            ]
        );
        // A second recording of the same board in the same second gets its own file.
        let other = Recorder::create(dir.path(), "board-1").unwrap();
        assert_ne!(other.path(), r.path());
    }
}
