//! The EEPROM move log (DGT_MSG_EE_MOVES payload) ⇄ [`EeEvent`]s.
//!
//! Tags: `010r pppp, field` = a field change (r: less than ~250 ms since the previous tag);
//! `011L hhhh, mm, ss` with hours 0–9 = a clock time at a lever press (L = left display, minutes
//! and seconds BCD); the remaining single bytes are the one-byte tags listed on [`EeEvent`].
//! The log is circular, so its oldest bytes may be the tail of an overwritten tag: bytes that do
//! not form a tag are skipped one at a time and counted in
//! [`DecoderStats::ee_skipped_bytes`](super::DecoderStats), never fatal.

use super::message::{DisplayTime, EeEvent};
use super::stats::DecoderStats;
use super::wire::{PieceCode, bcd_minsec, piece_from_code, piece_to_code, to_bcd};

const POWERUP: u8 = 0x6A;
const EOF: u8 = 0x6B;
const FOURROWS: u8 = 0x6C;
const EMPTYBOARD: u8 = 0x6D;
const DOWNLOADED: u8 = 0x6E;
const BEGINPOS: u8 = 0x6F;
const BEGINPOS_ROT: u8 = 0x7A;
const START_TAG: u8 = 0x7B;
const WATCHDOG_ACTION: u8 = 0x7C;
const NOP: u8 = 0x7F;
/// The second no-op tag; decoded as [`EeEvent::Nop`] too (it carries nothing).
const NOP2: u8 = 0x00;

/// Parse a whole EE_MOVES payload.
pub fn parse(payload: &[u8], stats: &mut DecoderStats) -> Vec<EeEvent> {
    let mut events = Vec::with_capacity(payload.len() / 2);
    let mut i = 0;
    while let Some(&tag) = payload.get(i) {
        let (event, used) = match tag {
            0x40..=0x5F => match payload.get(i + 1) {
                Some(&field) if field <= 63 => {
                    let content = match piece_from_code(tag & 0x0F) {
                        PieceCode::Known(c) => c,
                        PieceCode::Unknown => {
                            stats.unknown_piece_codes += 1;
                            None
                        }
                    };
                    let quick = tag & 0x10 != 0;
                    (
                        Some(EeEvent::Field {
                            field,
                            content,
                            quick,
                        }),
                        2,
                    )
                }
                _ => (None, 1),
            },
            0x60..=0x69 | 0x70..=0x79 => {
                let time = payload.get(i + 1..i + 3).and_then(|mmss| {
                    Some(DisplayTime {
                        hours: tag & 0x0F,
                        minutes: bcd_minsec(mmss[0])?,
                        seconds: bcd_minsec(mmss[1])?,
                    })
                });
                match time {
                    Some(time) => (
                        Some(EeEvent::Time {
                            left: tag & 0x10 != 0,
                            time,
                        }),
                        3,
                    ),
                    None => (None, 1),
                }
            }
            POWERUP => (Some(EeEvent::PowerUp), 1),
            EOF => (Some(EeEvent::Eof), 1),
            FOURROWS => (Some(EeEvent::FourRows), 1),
            EMPTYBOARD => (Some(EeEvent::EmptyBoard), 1),
            DOWNLOADED => (Some(EeEvent::Downloaded), 1),
            BEGINPOS => (Some(EeEvent::BeginPos), 1),
            BEGINPOS_ROT => (Some(EeEvent::BeginPosRotated), 1),
            START_TAG => (Some(EeEvent::StartTag), 1),
            WATCHDOG_ACTION => (Some(EeEvent::WatchdogAction), 1),
            NOP | NOP2 => (Some(EeEvent::Nop), 1),
            // 0x01–0x3F, the reserved 0x7D/0x7E and any byte left over from a broken tag.
            _ => (None, 1),
        };
        match event {
            Some(event) => events.push(event),
            None => stats.ee_skipped_bytes += 1,
        }
        i += used;
    }
    events
}

/// The tag bytes of one event.
fn tag_bytes(event: &EeEvent) -> ([u8; 3], usize) {
    let one = |b: u8| ([b, 0, 0], 1);
    match *event {
        EeEvent::Field {
            field,
            content,
            quick,
        } => (
            [
                0x40 | u8::from(quick) << 4 | piece_to_code(content),
                field & 0x3F,
                0,
            ],
            2,
        ),
        EeEvent::Time { left, time } => (
            [
                0x60 | u8::from(left) << 4 | time.hours.min(9),
                to_bcd(time.minutes.min(59)),
                to_bcd(time.seconds.min(59)),
            ],
            3,
        ),
        EeEvent::PowerUp => one(POWERUP),
        EeEvent::Eof => one(EOF),
        EeEvent::FourRows => one(FOURROWS),
        EeEvent::EmptyBoard => one(EMPTYBOARD),
        EeEvent::Downloaded => one(DOWNLOADED),
        EeEvent::BeginPos => one(BEGINPOS),
        EeEvent::BeginPosRotated => one(BEGINPOS_ROT),
        EeEvent::StartTag => one(START_TAG),
        EeEvent::WatchdogAction => one(WATCHDOG_ACTION),
        EeEvent::Nop => one(NOP),
    }
}

/// Append the tags of `events` to `out`, stopping before the payload would exceed `max` bytes
/// (the longest log a board holds). Nothing is added: a board's own log ends with an
/// [`EeEvent::Eof`], so a list that should look real ends with one too.
///
/// Public for the simulated board's memory, which writes what a real board would.
pub fn encode(events: &[EeEvent], out: &mut Vec<u8>, max: usize) {
    let mut written = 0;
    for event in events {
        let (bytes, len) = tag_bytes(event);
        if written + len > max {
            break;
        }
        out.extend_from_slice(&bytes[..len]);
        written += len;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{Color, Piece, Role};

    #[test]
    fn parses_every_tag_kind() {
        let payload = [
            0x7F, 0x7F, 0x7F, 0x6A, // three NOPs and POWERUP, as after power-up
            0x45, 60, // white king on field 60 (e1)
            0x5B, 4, // black king on e8, quick
            0x71, 0x02, 0x59, // left display 1:02:59
            0x60, 0x00, 0x07, // right display 0:00:07
            0x6F, 0x7A, 0x6C, 0x6D, 0x6E, 0x7B, 0x7C, 0x00, 0x6B,
        ];
        let mut stats = DecoderStats::default();
        let events = parse(&payload, &mut stats);
        use EeEvent::*;
        assert_eq!(
            events,
            vec![
                Nop,
                Nop,
                Nop,
                PowerUp,
                Field {
                    field: 60,
                    content: Some(Piece {
                        color: Color::White,
                        role: Role::King
                    }),
                    quick: false
                },
                Field {
                    field: 4,
                    content: Some(Piece {
                        color: Color::Black,
                        role: Role::King
                    }),
                    quick: true
                },
                Time {
                    left: true,
                    time: DisplayTime {
                        hours: 1,
                        minutes: 2,
                        seconds: 59
                    }
                },
                Time {
                    left: false,
                    time: DisplayTime {
                        hours: 0,
                        minutes: 0,
                        seconds: 7
                    }
                },
                BeginPos,
                BeginPosRotated,
                FourRows,
                EmptyBoard,
                Downloaded,
                StartTag,
                WatchdogAction,
                Nop,
                Eof,
            ]
        );
        assert_eq!(stats, DecoderStats::default());
    }

    #[test]
    fn broken_tags_are_skipped_and_counted() {
        // A field tag with an impossible field, a time tag with bad BCD, a reserved tag,
        // a magic piece, and a field tag cut off at the end.
        let payload = [0x41, 0x7E, 0x61, 0x6A, 0x7D, 0x4D, 3, 0x6B, 0x42];
        let mut stats = DecoderStats::default();
        let events = parse(&payload, &mut stats);
        assert_eq!(
            events,
            vec![
                EeEvent::PowerUp,
                EeEvent::Field {
                    field: 3,
                    content: None,
                    quick: false
                },
                EeEvent::Eof
            ]
        );
        // 0x41 (field 0x7E is impossible), 0x7E, 0x61 (0x6A is not BCD), 0x7D, 0x42.
        assert_eq!(stats.ee_skipped_bytes, 5);
        assert_eq!(stats.unknown_piece_codes, 1);
    }

    #[test]
    fn encode_is_the_inverse() {
        let payload = [0x7F, 0x6A, 0x45, 60, 0x5B, 4, 0x71, 0x02, 0x59, 0x6F, 0x6B];
        let mut stats = DecoderStats::default();
        let events = parse(&payload, &mut stats);
        let mut out = Vec::new();
        encode(&events, &mut out, 0x2000);
        assert_eq!(out, payload);
        out.clear();
        encode(&[], &mut out, 0x2000);
        assert!(out.is_empty());
        // Cut at the size limit, never in the middle of a tag.
        encode(&events, &mut out, 5);
        assert_eq!(out, [0x7F, 0x6A, 0x45, 60]);
    }
}
