//! The resynchronising decoder: byte chunks of any size in, typed messages out; every
//! malformed or mis-checked frame counted and dropped.
//!
//! # Use
//!
//! ```
//! use eboard_core::chesslink::{Decoder, ParityBy, Reply, Version};
//!
//! let mut decoder = Decoder::new();
//! let bytes = Reply::Version(Version { high: 1, low: 3 }).encode(ParityBy::Host);
//! // Line noise in front, the reply split across two reads.
//! decoder.push(&[0x13, 0xB7]);
//! decoder.push(&bytes[..4]);
//! assert_eq!(decoder.next_message(), None);
//! decoder.push(&bytes[4..]);
//! assert_eq!(decoder.next_message(), Some(Reply::Version(Version { high: 1, low: 3 })));
//! assert_eq!(decoder.stats().skipped_bytes, 2);
//! ```
//!
//! # Resynchronisation
//!
//! Messages have no delimiter: a letter, a fixed number of characters for that letter, two
//! check characters. The decoder therefore
//! - strips the parity bit of each byte, first checking it ([`ParityCheck::Verify`]): a byte
//!   with the wrong parity becomes a character no frame can hold, so it breaks the frame it
//!   falls in and nothing else;
//! - skips characters until a message letter (`v s l x w r` from a board, `V S L X T W R`
//!   from a host);
//! - checks each character against its place as it arrives (upper-case hex digits, or a
//!   piece letter or `.` in a status): a frame with a character that cannot be there is
//!   dropped, and the search starts again at the character after its letter, so a frame
//!   that follows a cut-off one is found whole;
//! - drops a complete frame whose block check differs (and again resumes right after its
//!   letter: a false letter inside a status — `r` is a rook and a reply letter — costs
//!   nothing when the real frame around it is intact).
//!
//! A frame whose bytes are all intact is therefore always decoded unless a misaligned
//! candidate overlapping it passes every character test and the check (only an `r` inside
//! a status can start one, and its next six characters would have to be hex). Every byte
//! pushed is accounted for: `bytes_in == message_bytes + skipped_bytes +`
//! [`Framer::pending_len`]. False letters tried inside a frame already dropped are not
//! counted again.

use std::collections::VecDeque;
use std::marker::PhantomData;

use super::line::{block_check, has_odd_parity, hex_value, parse_hex_pair};
use super::message::{Command, Reply, command_len, reply_len};
use super::squares::char_piece;

/// Whether the parity bit of each byte read is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ParityCheck {
    /// Bit 7 carries odd parity and is checked: the port is opened 8N1 and the host
    /// handles the parity ([`ParityBy::Host`](super::ParityBy::Host)).
    #[default]
    Verify,
    /// Bit 7 is ignored and the block check alone guards the frames: a 7O1 port whose UART
    /// checked the parity already, or a board whose parity bits are known to be unreliable.
    Ignore,
}

/// What a decoder has seen and thrown away since it was created.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct DecoderStats {
    /// Bytes pushed in.
    pub bytes_in: u64,
    /// Messages delivered.
    pub messages: u64,
    /// Bytes of the frames of delivered messages.
    pub message_bytes: u64,
    /// Bytes that are not part of any delivered message (garbage, dropped frames).
    pub skipped_bytes: u64,
    /// Frames started with a letter and then discarded: the sum of `broken_frames` and
    /// `bad_checks`.
    pub dropped_frames: u64,
    /// Frames with a character that cannot be at its place (cut short by a new letter or
    /// noise, or a byte with the wrong parity).
    pub broken_frames: u64,
    /// Whole frames whose block check differs.
    pub bad_checks: u64,
    /// Bytes whose parity bit was wrong (with [`ParityCheck::Verify`]). A wrong parity bit
    /// on a frame's letter leaves no frame to drop: the rest of it is skipped as garbage, so
    /// this counter, not `dropped_frames`, is the one that sees it.
    pub parity_errors: u64,
}

/// One direction's messages: which letters start a frame, how long each is, which
/// characters each place may hold, and the message a checked frame stands for.
pub trait Grammar {
    type Message;
    /// Characters of a frame starting with `letter`, check included; `None` if `letter`
    /// starts no frame.
    fn frame_len(letter: u8) -> Option<usize>;
    /// Whether `c` can be the `index`-th character (1 or more) of a frame of `letter`,
    /// check characters included.
    fn char_ok(letter: u8, index: usize, c: u8) -> bool;
    /// The message of a whole frame whose characters and check are right.
    fn parse(frame: &[u8]) -> Option<Self::Message>;
}

/// What a board sends: [`Reply`]s.
#[derive(Debug, Clone, Copy)]
pub struct Replies;

impl Grammar for Replies {
    type Message = Reply;
    fn frame_len(letter: u8) -> Option<usize> {
        reply_len(letter)
    }
    fn char_ok(letter: u8, index: usize, c: u8) -> bool {
        if letter == b's' && index <= 64 {
            char_piece(c).is_some()
        } else {
            hex_value(c).is_some()
        }
    }
    fn parse(frame: &[u8]) -> Option<Reply> {
        Reply::parse(frame)
    }
}

/// What a host sends: [`Command`]s (the board's side; the simulator reads with it).
#[derive(Debug, Clone, Copy)]
pub struct Commands;

impl Grammar for Commands {
    type Message = Command;
    fn frame_len(letter: u8) -> Option<usize> {
        command_len(letter)
    }
    fn char_ok(_letter: u8, _index: usize, c: u8) -> bool {
        hex_value(c).is_some()
    }
    fn parse(frame: &[u8]) -> Option<Command> {
        Command::parse(frame)
    }
}

/// The host's decoder of a board's replies.
pub type Decoder = Framer<Replies>;
/// The board's decoder of a host's commands.
pub type CommandDecoder = Framer<Commands>;

/// Why a frame was dropped.
#[derive(Clone, Copy)]
enum Loss {
    Broken,
    BadCheck,
}

/// A dropped frame whose characters may still be at the front of the buffer.
#[derive(Debug, Clone, Copy)]
struct Shadow {
    letter: u8,
    len: usize,
    left: usize,
}

/// A character no frame holds: what a byte with the wrong parity becomes.
const POISON: u8 = 0;

/// The sans-IO decoder of one direction. See the [module documentation](self).
#[derive(Debug, Clone)]
pub struct Framer<G: Grammar> {
    /// 7-bit characters not yet delivered or skipped; starts with a letter when not empty.
    buf: Vec<u8>,
    /// The last dropped frame while `buf`'s front may still be its characters: its letter,
    /// its length and how many of its characters are left.
    shadow: Option<Shadow>,
    ready: VecDeque<G::Message>,
    stats: DecoderStats,
    parity: ParityCheck,
    grammar: PhantomData<G>,
}

impl<G: Grammar> Default for Framer<G> {
    fn default() -> Self {
        Self::new()
    }
}

impl<G: Grammar> Framer<G> {
    /// A decoder checking the parity bit of every byte (the 8N1 line).
    pub fn new() -> Self {
        Self::with_parity(ParityCheck::Verify)
    }

    pub fn with_parity(parity: ParityCheck) -> Self {
        Framer {
            buf: Vec::with_capacity(256),
            shadow: None,
            ready: VecDeque::new(),
            stats: DecoderStats::default(),
            parity,
            grammar: PhantomData,
        }
    }

    /// Decode a whole byte string at once (tests and tools).
    pub fn decode_all(bytes: &[u8], parity: ParityCheck) -> (Vec<G::Message>, DecoderStats) {
        let mut decoder = Self::with_parity(parity);
        decoder.push(bytes);
        (decoder.ready.drain(..).collect(), decoder.stats)
    }

    /// Frame `bytes` (any length, any split) and queue the messages they complete.
    pub fn push(&mut self, bytes: &[u8]) {
        self.stats.bytes_in += bytes.len() as u64;
        for &byte in bytes {
            let c = if self.parity == ParityCheck::Verify && !has_odd_parity(byte) {
                self.stats.parity_errors += 1;
                POISON
            } else {
                byte & 0x7F
            };
            self.buf.push(c);
        }
        self.frame();
    }

    /// The next decoded message, oldest first.
    pub fn next_message(&mut self) -> Option<G::Message> {
        self.ready.pop_front()
    }

    /// [`push`](Self::push) `bytes`, then iterate over the queued messages, oldest first.
    pub fn feed(&mut self, bytes: &[u8]) -> impl Iterator<Item = G::Message> + '_ {
        self.push(bytes);
        std::iter::from_fn(move || self.ready.pop_front())
    }

    /// Counters of everything seen and dropped so far.
    pub fn stats(&self) -> DecoderStats {
        self.stats
    }

    /// Bytes of an incomplete frame held back until more input arrives.
    pub fn pending_len(&self) -> usize {
        self.buf.len()
    }

    /// Forget a partial frame (the port was reopened): it counts as a broken frame.
    /// Queued messages and counters are kept.
    pub fn reset(&mut self) {
        if !self.buf.is_empty() {
            let len = self.buf.len();
            self.drop_frame(Loss::Broken, self.buf[0], len);
            self.skip(len);
            self.buf.clear();
            self.shadow = None;
        }
    }

    fn skip(&mut self, n: usize) {
        self.stats.skipped_bytes += n as u64;
        self.pass(n);
    }

    /// `n` characters at the front of `buf` are gone.
    fn pass(&mut self, n: usize) {
        if let Some(shadow) = &mut self.shadow {
            shadow.left = shadow.left.saturating_sub(n);
            if shadow.left == 0 {
                self.shadow = None;
            }
        }
    }

    /// Count the frame at the front of `buf` as dropped, unless its letter can be a
    /// character of the dropped frame it lies in (an `r` inside a status): one garbled
    /// frame, one count, however many false letters inside it are tried.
    fn drop_frame(&mut self, why: Loss, letter: u8, len: usize) {
        let inside = self
            .shadow
            .is_some_and(|s| G::char_ok(s.letter, s.len - s.left, letter));
        if !inside {
            let stats = &mut self.stats;
            stats.dropped_frames += 1;
            match why {
                Loss::Broken => stats.broken_frames += 1,
                Loss::BadCheck => stats.bad_checks += 1,
            }
            self.shadow = Some(Shadow {
                letter,
                len,
                left: len,
            });
        }
    }

    /// Deliver every whole frame in `buf`; keep a partial one.
    fn frame(&mut self) {
        let mut head = 0;
        loop {
            let Some(start) = self.buf[head..]
                .iter()
                .position(|&c| G::frame_len(c).is_some())
            else {
                self.skip(self.buf.len() - head);
                head = self.buf.len();
                break;
            };
            self.skip(start);
            head += start;
            let letter = self.buf[head];
            let len = G::frame_len(letter).unwrap_or(1);
            let have = (self.buf.len() - head).min(len);
            let bad = (1..have).find(|&i| !G::char_ok(letter, i, self.buf[head + i]));
            if bad.is_some() {
                self.drop_frame(Loss::Broken, letter, len);
                self.skip(1);
                head += 1;
                continue;
            }
            if have < len {
                break;
            }
            let frame = &self.buf[head..head + len];
            let check = parse_hex_pair(&frame[len - 2..]);
            if check != Some(block_check(&frame[..len - 2])) {
                self.drop_frame(Loss::BadCheck, letter, len);
                self.skip(1);
                head += 1;
                continue;
            }
            match G::parse(frame) {
                Some(message) => {
                    self.ready.push_back(message);
                    self.stats.messages += 1;
                    self.stats.message_bytes += len as u64;
                    self.pass(len);
                    head += len;
                }
                None => {
                    // Cannot happen: every character was checked against its place.
                    self.drop_frame(Loss::Broken, letter, len);
                    self.skip(1);
                    head += 1;
                }
            }
        }
        self.buf.drain(..head);
    }
}

#[cfg(test)]
mod tests;
