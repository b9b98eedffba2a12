//! The board → host stream decoder: byte chunks of any size in, [`Message`]s out, with
//! resynchronisation over garbage.
//!
//! # Use
//!
//! ```
//! use eboard_core::dgt::{Decoder, Message};
//!
//! let mut decoder = Decoder::new();
//! // A field update split across two reads, with line noise in front.
//! decoder.push(&[0x13, 0x37, 0x8E, 0x00]);
//! assert_eq!(decoder.next_message(), None);
//! decoder.push(&[0x05, 0x1C, 0x00]);
//! assert_eq!(decoder.next_message(), Some(Message::FieldUpdate { field: 28, content: None }));
//! assert_eq!(decoder.stats().skipped_bytes, 2);
//! ```
//!
//! [`Decoder::push`] frames everything it is given at once and queues the finished messages;
//! [`Decoder::next_message`] (or the iterator [`Decoder::feed`] returns) hands them out. Nothing
//! is allocated per byte: the only buffers are the partial frame (capacity grows once, to at
//! most [`MAX_FRAME_LEN`] bytes) and the queue of finished messages, which the caller empties
//! after each push. Board dumps, texts and EEPROM logs allocate their own message.
//!
//! # Resynchronisation
//!
//! Only an id byte has bit 7 set, so the decoder:
//! - skips every byte with bit 7 clear while it is looking for a frame;
//! - skips a byte with bit 7 set that is not a known id ([`DecoderStats::unknown_ids`]);
//! - drops a frame whose length is impossible for its id (two different exact sizes for the
//!   serial number, a range for trademark and EEPROM log, an exact size for the rest);
//! - drops a partial frame the moment a byte with bit 7 set arrives in its header or payload,
//!   and starts a new frame at that byte: a header inside a payload costs only the frame it
//!   interrupted;
//! - drops a complete frame whose content is impossible ([`BadPayload`](super::BadPayload)):
//!   a clock time whose minutes or seconds are not BCD 00–59 or whose hours are 11–15, or a
//!   field index above 63.
//!   One exception: a clock reading with the "no clock connected" bit set is kept, with its
//!   (documented as invalid) times zeroed, because the disconnection is the news.
//!
//! A message whose bytes are all intact is therefore always decoded, whatever came before it.
//! Every byte pushed is accounted for: `bytes_in == message_bytes + skipped_bytes +`
//! [`Decoder::pending_len`]. Bit meanings of the clock status follow the real captures
//! (see [`ClockStatus`](super::ClockStatus)).

use std::collections::VecDeque;

use super::codec::parse_payload;
use super::message::Message;
use super::stats::DecoderStats;
use super::wire::{HEADER_LEN, MAX_FRAME_LEN, MESSAGE_BIT, frame_len_ok, frame_len_range};

/// The sans-IO board → host decoder. See the [module documentation](self).
#[derive(Debug, Clone)]
pub struct Decoder {
    /// The frame being assembled: id, then length bytes, then payload. Empty while hunting.
    frame: Vec<u8>,
    /// Total length of `frame` once its header is complete; 0 before.
    expected: usize,
    ready: VecDeque<Message>,
    stats: DecoderStats,
}

impl Default for Decoder {
    fn default() -> Self {
        Self::new()
    }
}

/// Why a partial frame was abandoned.
#[derive(Clone, Copy)]
enum Abandon {
    Truncated,
    BadLength,
}

impl Decoder {
    pub fn new() -> Self {
        Decoder {
            frame: Vec::with_capacity(64),
            expected: 0,
            ready: VecDeque::new(),
            stats: DecoderStats::default(),
        }
    }

    /// Decode a whole byte string at once (tests and tools).
    pub fn decode_all(bytes: &[u8]) -> (Vec<Message>, DecoderStats) {
        let mut decoder = Decoder::new();
        decoder.push(bytes);
        (decoder.ready.drain(..).collect(), decoder.stats)
    }

    /// Frame `bytes` (any length, any split) and queue the messages they complete.
    pub fn push(&mut self, mut bytes: &[u8]) {
        self.stats.bytes_in += bytes.len() as u64;
        while !bytes.is_empty() {
            if self.frame.is_empty() {
                // Hunting: everything up to the next byte with bit 7 set is garbage.
                let Some(start) = bytes.iter().position(|&b| b & MESSAGE_BIT != 0) else {
                    self.stats.skipped_bytes += bytes.len() as u64;
                    return;
                };
                self.stats.skipped_bytes += start as u64;
                bytes = &bytes[start..];
                let id = bytes[0];
                if frame_len_range(id).is_none() {
                    self.stats.unknown_ids += 1;
                    self.stats.skipped_bytes += 1;
                    bytes = &bytes[1..];
                    continue;
                }
                if let Some(total) = whole_frame_at(bytes) {
                    // Fast path: the whole, well-formed frame is in this chunk; no copy.
                    let (frame, rest) = bytes.split_at(total);
                    self.finish(frame);
                    bytes = rest;
                    continue;
                }
                self.frame.push(id);
                bytes = &bytes[1..];
                continue;
            }
            if self.frame.len() < HEADER_LEN {
                let b = bytes[0];
                if b & MESSAGE_BIT != 0 {
                    // Leave `b` in place: it starts the next frame.
                    self.abandon(Abandon::Truncated);
                    continue;
                }
                self.frame.push(b);
                bytes = &bytes[1..];
                if self.frame.len() == HEADER_LEN {
                    let total = (usize::from(self.frame[1]) << 7) | usize::from(self.frame[2]);
                    if !frame_len_ok(self.frame[0], total) {
                        self.abandon(Abandon::BadLength);
                    } else if total == HEADER_LEN {
                        self.finish_buffered();
                    } else {
                        self.expected = total;
                    }
                }
                continue;
            }
            let need = self.expected - self.frame.len();
            let run = &bytes[..need.min(bytes.len())];
            if let Some(cut) = run.iter().position(|&b| b & MESSAGE_BIT != 0) {
                self.frame.extend_from_slice(&run[..cut]);
                bytes = &bytes[cut..];
                self.abandon(Abandon::Truncated);
                continue;
            }
            self.frame.extend_from_slice(run);
            bytes = &bytes[run.len()..];
            if self.frame.len() == self.expected {
                self.finish_buffered();
            }
        }
    }

    /// The next decoded message, oldest first.
    pub fn next_message(&mut self) -> Option<Message> {
        self.ready.pop_front()
    }

    /// [`push`](Self::push) `bytes`, then iterate over the queued messages, oldest first.
    /// Messages the iterator is not asked for stay queued for the next call.
    pub fn feed(&mut self, bytes: &[u8]) -> impl Iterator<Item = Message> + '_ {
        self.push(bytes);
        std::iter::from_fn(move || self.ready.pop_front())
    }

    /// Counters of everything seen and skipped so far.
    pub fn stats(&self) -> DecoderStats {
        self.stats
    }

    /// Bytes of an incomplete frame held back until more input arrives.
    pub fn pending_len(&self) -> usize {
        self.frame.len()
    }

    /// Messages decoded but not yet taken.
    pub fn queued(&self) -> usize {
        self.ready.len()
    }

    /// Forget a partial frame (for example after the port was reopened); it counts as a
    /// truncated frame. Queued messages and counters are kept.
    pub fn reset(&mut self) {
        if !self.frame.is_empty() {
            self.abandon(Abandon::Truncated);
        }
    }

    fn abandon(&mut self, why: Abandon) {
        let stats = &mut self.stats;
        stats.dropped_frames += 1;
        stats.skipped_bytes += self.frame.len() as u64;
        match why {
            Abandon::Truncated => stats.truncated_frames += 1,
            Abandon::BadLength => stats.bad_lengths += 1,
        }
        self.clear_frame();
    }

    fn finish_buffered(&mut self) {
        let frame = std::mem::take(&mut self.frame);
        self.finish(&frame);
        self.frame = frame;
        self.clear_frame();
    }

    fn clear_frame(&mut self) {
        self.frame.clear();
        self.expected = 0;
        // An unusually long frame (an EEPROM log) must not pin its buffer forever.
        if self.frame.capacity() > 1024 {
            self.frame.shrink_to(64);
        }
    }

    /// Deliver or drop one complete frame whose id and length were checked.
    fn finish(&mut self, frame: &[u8]) {
        debug_assert!(frame.len() <= MAX_FRAME_LEN);
        match parse_payload(frame[0], &frame[HEADER_LEN..], &mut self.stats) {
            Ok(message) => {
                self.stats.messages += 1;
                self.stats.message_bytes += frame.len() as u64;
                self.ready.push_back(message);
            }
            Err(why) => {
                self.stats.dropped_frames += 1;
                self.stats.bad_payloads += 1;
                if why == super::BadPayload::ClockTime {
                    self.stats.bad_clock_times += 1;
                }
                self.stats.skipped_bytes += frame.len() as u64;
            }
        }
    }
}

/// If `bytes` starts with a complete frame of a known id, valid length and clean payload,
/// its total length.
fn whole_frame_at(bytes: &[u8]) -> Option<usize> {
    let [id, hi, lo, ..] = *bytes else {
        return None;
    };
    if (hi | lo) & MESSAGE_BIT != 0 {
        return None;
    }
    let total = (usize::from(hi) << 7) | usize::from(lo);
    if !frame_len_ok(id, total) || bytes.len() < total {
        return None;
    }
    bytes[HEADER_LEN..total]
        .iter()
        .all(|&b| b & MESSAGE_BIT == 0)
        .then_some(total)
}
