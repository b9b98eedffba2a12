//! Recorded serial streams: the shared captures' base64-lines format and eboardd's own
//! timestamped `--record` format. Pure parsing and formatting; callers do the file I/O.
//!
//! Record format (one file per board, UTF-8 text):
//!
//! ```text
//! # eboardd-record 1
//! <milliseconds since the recording started> <base64 of the bytes of one read()>
//! ```
//!
//! Lines starting with `#` are comments. The base64-lines format of the shared captures is the
//! same without the timestamp column; [`parse`] accepts both. A record also notes the link's
//! ups and downs as comments, `# <milliseconds> port opened` and `# <milliseconds> lost: <why>`
//! ([`link_notes`] reads them back), so a replay can lose the board where the daemon did.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

/// The header line written at the top of every record file.
pub const RECORD_HEADER: &str = "# eboardd-record 1";

/// One `read()` worth of bytes, with its time offset when the format has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    pub at_ms: Option<u64>,
    pub bytes: Vec<u8>,
}

/// A line of a capture that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct CaptureError {
    pub line: usize,
    pub reason: String,
}

/// Parse a capture in either format.
pub fn parse(text: &str) -> Result<Vec<Chunk>, CaptureError> {
    let mut chunks = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let err = |reason: String| CaptureError {
            line: index + 1,
            reason,
        };
        let (at_ms, data) = match line.split_once(char::is_whitespace) {
            Some((time, data)) => {
                let at = time
                    .parse::<u64>()
                    .map_err(|e| err(format!("bad time offset {time:?}: {e}")))?;
                (Some(at), data.trim())
            }
            None => (None, line),
        };
        let bytes = STANDARD
            .decode(data)
            .map_err(|e| err(format!("bad base64: {e}")))?;
        chunks.push(Chunk { at_ms, bytes });
    }
    Ok(chunks)
}

/// The note a record gets when the port was opened.
pub const NOTE_PORT_OPENED: &str = "port opened";
/// How the note a record gets when the board was lost begins (the reason follows).
pub const NOTE_LOST: &str = "lost:";

/// The note for a board lost because of `why`.
pub fn lost_note(why: &impl std::fmt::Display) -> String {
    format!("{NOTE_LOST} {why}")
}

/// What a record says happened to the serial link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkChange {
    /// The port was opened (the board comes up with its first message).
    Opened,
    /// The board was lost: the port is closed until it is opened again.
    Lost,
}

/// A note about the link, placed between the reads of a capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkNote {
    /// How many reads ([`Chunk`]s) came before it.
    pub after_reads: usize,
    pub at_ms: u64,
    pub change: LinkChange,
}

/// The link notes of a record, in order. Any other comment, and every line of a format
/// without notes (the shared captures), is no note.
pub fn link_notes(text: &str) -> Vec<LinkNote> {
    let mut notes = Vec::new();
    let mut reads = 0;
    for raw in text.lines() {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        let Some(comment) = line.strip_prefix('#') else {
            reads += 1;
            continue;
        };
        let Some((at, what)) = comment.trim().split_once(char::is_whitespace) else {
            continue;
        };
        let Ok(at_ms) = at.parse::<u64>() else {
            continue;
        };
        let what = what.trim();
        let change = if what == NOTE_PORT_OPENED {
            LinkChange::Opened
        } else if what.starts_with(NOTE_LOST) {
            LinkChange::Lost
        } else {
            continue;
        };
        notes.push(LinkNote {
            after_reads: reads,
            at_ms,
            change,
        });
    }
    notes
}

/// Format one record line (without the trailing newline).
pub fn format_record_line(at_ms: u64, bytes: &[u8]) -> String {
    format!("{at_ms} {}", STANDARD.encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_formats_parse() {
        let text = format!(
            "{RECORD_HEADER}\n{}\n\njQAK\n",
            format_record_line(12, &[0x8d, 0, 10])
        );
        let chunks = parse(&text).unwrap();
        assert_eq!(chunks.len(), 2);
        assert_eq!(
            chunks[0],
            Chunk {
                at_ms: Some(12),
                bytes: vec![0x8d, 0, 10]
            }
        );
        assert_eq!(
            chunks[1],
            Chunk {
                at_ms: None,
                bytes: vec![0x8d, 0, 10]
            }
        );
    }

    #[test]
    fn link_notes_are_placed_between_the_reads() {
        let text = format!(
            "{RECORD_HEADER}\n# board b1\n# 5 {NOTE_PORT_OPENED}\n{}\n# 900 {}\n# 901 disconnected\n\
             # 1200 {NOTE_PORT_OPENED}\n{}\n",
            format_record_line(12, &[0x8d, 0, 10]),
            lost_note(&"no answer for 5000 ms"),
            format_record_line(1300, &[0x8d, 0, 10]),
        );
        let at = |after_reads, at_ms, change| LinkNote {
            after_reads,
            at_ms,
            change,
        };
        assert_eq!(
            link_notes(&text),
            [
                at(0, 5, LinkChange::Opened),
                at(1, 900, LinkChange::Lost),
                at(1, 1200, LinkChange::Opened),
            ]
        );
        assert_eq!(parse(&text).unwrap().len(), 2, "notes are no reads");
        assert!(link_notes("jQAK\njQAK\n").is_empty());
    }

    #[test]
    fn bad_lines_name_the_line() {
        let e = parse("jQAK\n12 !!!\n").unwrap_err();
        assert_eq!(e.line, 2);
        let e = parse("x1 jQAK\n").unwrap_err();
        assert_eq!(e.line, 1);
    }
}
