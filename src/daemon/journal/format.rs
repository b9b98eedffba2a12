//! The journal's line format: one event a line as JSON behind its CRC-32, and the scan that
//! reads a journal back, stopping at damage (a torn tail, a corrupt line, a voided range).

use std::io;

use super::{Damage, HEADER_PREFIX, JOURNAL_HEADER, JOURNAL_HEADERS_EARLIER, VOID_PREFIX};
use eboard_core::session::Event;

/// Encode events as journal lines.
pub fn encode_lines(events: &[Event]) -> io::Result<String> {
    let mut out = String::new();
    for event in events {
        let json = serde_json::to_string(event)?;
        out.push_str(&format!("{:08x} {json}\n", crc32(json.as_bytes())));
    }
    Ok(out)
}

/// Decode one journal line (without its newline).
pub fn decode_line(line: &[u8]) -> Result<Event, String> {
    let text = std::str::from_utf8(line).map_err(|_| "not UTF-8".to_string())?;
    let (sum, json) = text
        .split_once(' ')
        .filter(|(sum, _)| sum.len() == 8)
        .ok_or("no checksum")?;
    let sum = u32::from_str_radix(sum, 16).map_err(|_| "bad checksum field")?;
    if crc32(json.as_bytes()) != sum {
        return Err("checksum mismatch".into());
    }
    serde_json::from_str(json).map_err(|e| format!("not an event: {e}"))
}

pub(super) struct Scan {
    pub(super) events: Vec<Event>,
    /// Byte offset just past the last good line (0: not even a header).
    pub(super) good_end: usize,
    pub(super) damage: Option<Bad>,
}

pub(super) struct Bad {
    pub(super) kind: Damage,
    pub(super) line: usize,
    pub(super) reason: String,
}

/// What one journal line is.
pub(super) enum Line {
    Header,
    Event(Event),
    /// The bytes from this offset up to the line are void.
    Void(usize),
}

/// The offset a void line names, if `line` is one.
pub(super) fn void_line(line: &[u8]) -> Option<Result<usize, String>> {
    let rest = line.strip_prefix(VOID_PREFIX.as_bytes())?;
    Some(
        std::str::from_utf8(rest)
            .ok()
            .and_then(|t| t.parse().ok())
            .ok_or_else(|| "bad void line".to_string()),
    )
}

/// Check a journal's bytes; `Err` (with that header line) only for a header of another (newer)
/// format, which must not be cut off as damage.
///
/// A bad line is damage unless a later void line covers it (a failed write that could not
/// be cut back, see [`Journal::cut_back`]): then it and every record from the offset the void
/// line names are skipped, and the records after the void line are restored.
pub(super) fn scan(bytes: &[u8]) -> Result<Scan, String> {
    // Every record with the offset of its line.
    let mut events: Vec<(usize, Event)> = Vec::new();
    // The first bad line not (yet) covered by a void line: its offset, where it ends, what.
    let mut first_bad: Option<(usize, usize, Bad)> = None;
    let mut header_end = 0;
    let mut offset = 0;
    let mut line_no = 0;
    while offset < bytes.len() {
        line_no += 1;
        let rest = &bytes[offset..];
        let (line, complete) = match rest.iter().position(|&b| b == b'\n') {
            Some(end) => (&rest[..end], true),
            None => (rest, false),
        };
        let next = offset + line.len() + usize::from(complete);
        let verdict = if !complete {
            Err("incomplete line".to_string())
        } else if line_no == 1 {
            if line == JOURNAL_HEADER.as_bytes()
                || JOURNAL_HEADERS_EARLIER.iter().any(|h| line == h.as_bytes())
            {
                Ok(Line::Header)
            } else if line.starts_with(HEADER_PREFIX.as_bytes()) {
                return Err(String::from_utf8_lossy(line).into_owned());
            } else {
                Err("no journal header".to_string())
            }
        } else if let Some(void) = void_line(line) {
            void.and_then(|from| {
                if (header_end..=offset).contains(&from) {
                    Ok(Line::Void(from))
                } else {
                    Err("void line naming another place".to_string())
                }
            })
        } else {
            decode_line(line).map(Line::Event)
        };
        match verdict {
            Ok(Line::Header) => header_end = next,
            Ok(Line::Event(event)) => events.push((offset, event)),
            Ok(Line::Void(from)) => {
                events.retain(|(at, _)| *at < from);
                if first_bad.as_ref().is_some_and(|(at, ..)| *at >= from) {
                    first_bad = None;
                }
            }
            Err(reason) => {
                let bad = Bad {
                    kind: Damage::Corrupt,
                    line: line_no,
                    reason,
                };
                if line_no == 1 {
                    // No header: nothing in the file is taken.
                    first_bad = Some((offset, next, bad));
                    break;
                }
                first_bad.get_or_insert((offset, next, bad));
            }
        }
        offset = next;
    }
    let mut good_end = bytes.len();
    let mut damage = None;
    if let Some((at, end, mut bad)) = first_bad {
        events.retain(|(o, _)| *o < at);
        good_end = at;
        if end >= bytes.len() {
            bad.kind = Damage::TornTail;
        }
        damage = Some(bad);
    }
    Ok(Scan {
        events: events.into_iter().map(|(_, e)| e).collect(),
        good_end,
        damage,
    })
}

/// CRC-32 (IEEE 802.3, the zlib/PNG one), from `crc32fast`: the checksum of every journal
/// and commit-log line, unchanged since the first format.
pub fn crc32(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}
