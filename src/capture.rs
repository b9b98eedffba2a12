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
//! same without the timestamp column; [`parse`] accepts both.

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
    fn bad_lines_name_the_line() {
        let e = parse("jQAK\n12 !!!\n").unwrap_err();
        assert_eq!(e.line, 2);
        let e = parse("x1 jQAK\n").unwrap_err();
        assert_eq!(e.line, 1);
    }
}
