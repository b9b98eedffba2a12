//! The commands a host sends and the replies a board sends, with their exact characters.
//!
//! | Host | Meaning | Board |
//! |---|---|---|
//! | `V` | firmware version | `v` HH LL |
//! | `S` | status | `s` + 64 squares (also sent unasked, per the report mode) |
//! | `L` TT + 81 × CC | set every LED | `l` |
//! | `X` | every LED off | `x` |
//! | `T` | reset (about 3 s without service) | nothing |
//! | `W` AA DD | write option byte DD at AA | `w` AA DD |
//! | `R` AA | read option byte AA | `r` AA DD |
//!
//! Every message ends with its block check; a board ignores a command whose parity or check
//! is wrong (no reply at all).

use super::leds::{LED_COUNT, LedPattern};
use super::line::{ParityBy, frame_chars, hex_pair, parse_hex_pair, to_wire};
use super::squares::Scan;

/// The board's firmware version: two bytes, shown `HH.LL`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Version {
    pub high: u8,
    pub low: u8,
}

impl Version {
    pub fn as_u16(self) -> u16 {
        u16::from(self.high) << 8 | u16::from(self.low)
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:02X}.{:02X}", self.high, self.low)
    }
}

/// What the host sends.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Command {
    Version,
    Status,
    Leds(LedPattern),
    LedsOff,
    /// Restart the board: no reply, about 3 s without service; the LEDs and status are
    /// cleared, option bytes kept.
    Reset,
    Write {
        address: u8,
        value: u8,
    },
    Read {
        address: u8,
    },
}

/// What the board sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reply {
    Version(Version),
    /// A status report: the answer to `S` and every automatic report look the same.
    Status(Scan),
    /// The `L` command was carried out.
    LedsSet,
    /// The `X` command was carried out.
    LedsOff,
    /// The echo of `W`: the byte written.
    Written {
        address: u8,
        value: u8,
    },
    /// The answer to `R`.
    Read {
        address: u8,
        value: u8,
    },
}

/// Characters of each command, check included.
pub fn command_len(letter: u8) -> Option<usize> {
    match letter {
        b'V' | b'S' | b'X' | b'T' => Some(3),
        b'R' => Some(5),
        b'W' => Some(7),
        b'L' => Some(3 + 2 + 2 * LED_COUNT),
        _ => None,
    }
}

/// Characters of each reply, check included.
pub fn reply_len(letter: u8) -> Option<usize> {
    match letter {
        b'v' | b'w' | b'r' => Some(7),
        b's' => Some(67),
        b'l' | b'x' => Some(3),
        _ => None,
    }
}

impl Command {
    /// The letter and the data characters (no check).
    fn letter_and_data(&self) -> (u8, Vec<u8>) {
        match self {
            Command::Version => (b'V', Vec::new()),
            Command::Status => (b'S', Vec::new()),
            Command::LedsOff => (b'X', Vec::new()),
            Command::Reset => (b'T', Vec::new()),
            Command::Read { address } => (b'R', hex_pair(*address).to_vec()),
            Command::Write { address, value } => {
                (b'W', [hex_pair(*address), hex_pair(*value)].concat())
            }
            Command::Leds(pattern) => {
                let mut data = Vec::with_capacity(2 + 2 * LED_COUNT);
                data.extend_from_slice(&hex_pair(pattern.slot_time));
                for &code in &pattern.codes {
                    data.extend_from_slice(&hex_pair(code));
                }
                (b'L', data)
            }
        }
    }

    /// The 7-bit characters of the whole command, check included.
    pub fn chars(&self) -> Vec<u8> {
        let (letter, data) = self.letter_and_data();
        frame_chars(letter, &data)
    }

    /// The bytes to write on a line whose parity is made by `parity_by`.
    pub fn encode(&self, parity_by: ParityBy) -> Vec<u8> {
        to_wire(self.chars(), parity_by)
    }

    /// The reply letter the board answers with; `None` for the reset (no answer).
    pub fn reply_letter(&self) -> Option<u8> {
        match self {
            Command::Reset => None,
            other => Some(other.chars()[0].to_ascii_lowercase()),
        }
    }

    /// Parse a whole command frame whose characters and check were verified.
    pub(crate) fn parse(frame: &[u8]) -> Option<Command> {
        let data = &frame[1..frame.len() - 2];
        let byte = |i: usize| parse_hex_pair(&data[2 * i..2 * i + 2]);
        Some(match frame[0] {
            b'V' => Command::Version,
            b'S' => Command::Status,
            b'X' => Command::LedsOff,
            b'T' => Command::Reset,
            b'R' => Command::Read { address: byte(0)? },
            b'W' => Command::Write {
                address: byte(0)?,
                value: byte(1)?,
            },
            b'L' => {
                let mut codes = [0; LED_COUNT];
                for (i, code) in codes.iter_mut().enumerate() {
                    *code = byte(i + 1)?;
                }
                Command::Leds(LedPattern {
                    slot_time: byte(0)?,
                    codes,
                })
            }
            _ => return None,
        })
    }
}

impl Reply {
    /// The 7-bit characters of the whole reply, check included.
    pub fn chars(&self) -> Vec<u8> {
        match self {
            Reply::Version(v) => frame_chars(b'v', &[hex_pair(v.high), hex_pair(v.low)].concat()),
            Reply::Status(scan) => frame_chars(b's', &scan.chars()),
            Reply::LedsSet => frame_chars(b'l', b""),
            Reply::LedsOff => frame_chars(b'x', b""),
            Reply::Written { address, value } => {
                frame_chars(b'w', &[hex_pair(*address), hex_pair(*value)].concat())
            }
            Reply::Read { address, value } => {
                frame_chars(b'r', &[hex_pair(*address), hex_pair(*value)].concat())
            }
        }
    }

    /// The bytes a board writes on a line whose parity is made by `parity_by`.
    pub fn encode(&self, parity_by: ParityBy) -> Vec<u8> {
        to_wire(self.chars(), parity_by)
    }

    /// Parse a whole reply frame whose characters and check were verified; `None` for a
    /// status with a character that is no piece (counted by the decoder).
    pub(crate) fn parse(frame: &[u8]) -> Option<Reply> {
        let data = &frame[1..frame.len() - 2];
        let byte = |i: usize| parse_hex_pair(&data[2 * i..2 * i + 2]);
        Some(match frame[0] {
            b'v' => Reply::Version(Version {
                high: byte(0)?,
                low: byte(1)?,
            }),
            b's' => Reply::Status(Scan::from_chars(data)?),
            b'l' => Reply::LedsSet,
            b'x' => Reply::LedsOff,
            b'w' => Reply::Written {
                address: byte(0)?,
                value: byte(1)?,
            },
            b'r' => Reply::Read {
                address: byte(0)?,
                value: byte(1)?,
            },
            _ => return None,
        })
    }
}
