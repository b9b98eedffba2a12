//! The simulated board's EEPROM move log, kept the way a real DGT board keeps it.
//!
//! A powered board writes a tag for every field change (with the "fast" bit when it comes
//! less than ~250 ms after the previous tag), a time tag when the clock lever is pressed, three
//! NOPs + POWERUP + one field tag per piece at power-up, and BEGINPOS / BEGINPOS_ROT when the
//! start position appears. The log is a circular buffer of [`LOG_BYTES`] bytes, so once it is
//! full the oldest bytes are overwritten and a dump may begin in the middle of a tag, exactly
//! the case the host's parser has to survive. Nothing is written while the board is unpowered.
//!
//! Pure: time is an argument.

use std::collections::VecDeque;

use eboard_core::dgt::{DisplayTime, EeEvent, FieldContent};

/// Size of the board's circular log (protocol sheet, section 3).
pub const LOG_BYTES: usize = 0x1F00;
/// A tag less than this long after the previous one carries the fast bit.
pub const FAST_TAG_MS: u64 = 250;

/// The circular EEPROM log (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct Eeprom {
    bytes: VecDeque<u8>,
    last_tag_at: Option<u64>,
}

impl Eeprom {
    /// An empty log.
    pub fn new() -> Self {
        Eeprom::default()
    }

    /// The board powered up with `fields` (wire order) on its sensors.
    pub fn power_up(&mut self, fields: &[FieldContent; 64], now: u64) {
        for _ in 0..3 {
            self.write(&EeEvent::Nop);
        }
        self.write(&EeEvent::PowerUp);
        for (index, content) in fields.iter().enumerate() {
            if content.is_some() {
                self.field(index as u8, *content, now);
            }
        }
    }

    /// One field changed.
    pub fn field(&mut self, field: u8, content: FieldContent, now: u64) {
        let quick = self
            .last_tag_at
            .is_some_and(|at| now.saturating_sub(at) < FAST_TAG_MS);
        self.last_tag_at = Some(now);
        self.write(&EeEvent::Field {
            field,
            content,
            quick,
        });
    }

    /// The lever was pressed; `left`: the time is the left display's.
    pub fn time(&mut self, left: bool, time: DisplayTime, now: u64) {
        self.last_tag_at = Some(now);
        self.write(&EeEvent::Time { left, time });
    }

    /// The start position appeared (`rotated`: with Black on the connector side).
    pub fn begin_position(&mut self, rotated: bool) {
        self.write(if rotated {
            &EeEvent::BeginPosRotated
        } else {
            &EeEvent::BeginPos
        });
    }

    /// The payload of a DGT_MSG_EE_MOVES answer: the log oldest byte first (possibly starting
    /// inside a tag the buffer overwrote) and the EOF tag.
    pub fn dump(&self) -> Vec<u8> {
        let mut out: Vec<u8> = self.bytes.iter().copied().collect();
        out.push(0x6B);
        out
    }

    /// Bytes held (at most [`LOG_BYTES`] − 1: one is kept for the EOF tag of a dump).
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    fn write(&mut self, event: &EeEvent) {
        let mut tag = Vec::with_capacity(3);
        eboard_core::dgt::ee_moves::encode(std::slice::from_ref(event), &mut tag, 3);
        self.bytes.extend(tag);
        while self.bytes.len() > LOG_BYTES - 1 {
            self.bytes.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use eboard_core::dgt::Decoder;
    use eboard_core::dgt::Message;

    fn frame(payload: &[u8]) -> Vec<u8> {
        let total = payload.len() + 3;
        let mut out = vec![0x8F, (total >> 7) as u8 & 0x7F, total as u8 & 0x7F];
        out.extend_from_slice(payload);
        out
    }

    #[test]
    fn power_up_fast_bit_and_time_tags() {
        let mut log = Eeprom::new();
        let mut fields = [None; 64];
        fields[60] = Some(shakmaty::Piece {
            color: shakmaty::Color::White,
            role: shakmaty::Role::King,
        });
        log.power_up(&fields, 0);
        log.field(60, None, 1_000);
        log.field(52, fields[60], 1_100);
        log.time(
            true,
            DisplayTime {
                hours: 0,
                minutes: 4,
                seconds: 59,
            },
            2_000,
        );
        assert_eq!(
            log.dump(),
            vec![
                0x7F, 0x7F, 0x7F, 0x6A, 0x45, 60, 0x40, 60, 0x55, 52, 0x70, 0x04, 0x59, 0x6B
            ]
        );
    }

    #[test]
    fn the_buffer_is_circular_and_a_cut_tag_is_skipped() {
        let mut log = Eeprom::new();
        for i in 0..5_000u64 {
            log.field((i % 64) as u8, None, i * 1_000);
        }
        assert_eq!(log.len(), LOG_BYTES - 1);
        let dump = log.dump();
        // 5,000 two-byte tags: the oldest surviving byte is the second byte of a tag.
        assert_eq!(dump.len(), LOG_BYTES);
        let (messages, stats) = Decoder::decode_all(&frame(&dump));
        let [Message::EeMoves(events)] = messages.as_slice() else {
            panic!("{messages:?}");
        };
        assert_eq!(stats.ee_skipped_bytes, 1, "the cut tag's field byte");
        assert_eq!(events.len(), (LOG_BYTES - 2) / 2 + 1);
        assert_eq!(events.last(), Some(&EeEvent::Eof));
    }
}
