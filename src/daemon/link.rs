//! The serial side of one board: opening the device at 9600 8N1, the start-up handshake,
//! the liveness probe, and turning received bytes into [`Message`]s.

use std::io;
use std::path::Path;
use std::time::Duration;

use tokio_serial::{DataBits, FlowControl, Parity, SerialPortBuilderExt, SerialStream, StopBits};

use crate::protocol::Message;

/// Board commands sent on every (re)connection, in order (protocol sheet, section 7.2):
/// update-nice mode, firmware version, serial number, a full board dump, clock version.
pub fn handshake() -> Vec<u8> {
    let mut bytes = vec![
        0x4B, // DGT_SEND_UPDATE_NICE
        0x4D, // DGT_SEND_VERSION
        0x45, // DGT_RETURN_SERIALNR
        0x42, // DGT_SEND_BRD
    ];
    // DGT_CLOCK_MESSAGE, size 3, start, VERSION, end.
    bytes.extend_from_slice(&[0x2B, 0x03, 0x03, 0x09, 0x00]);
    bytes
}

/// Sent when the line has been silent for a while: a board answers with its version, a
/// vanished one shows up as a write error or as continued silence.
pub fn probe() -> Vec<u8> {
    vec![0x4D] // DGT_SEND_VERSION
}

/// Open the serial device at 9600 8N1 without flow control.
pub fn open(port: &Path) -> io::Result<SerialStream> {
    let path = port.to_string_lossy();
    let mut stream = tokio_serial::new(path.as_ref(), 9600)
        .data_bits(DataBits::Eight)
        .parity(Parity::None)
        .stop_bits(StopBits::One)
        .flow_control(FlowControl::None)
        .timeout(Duration::from_millis(500))
        .open_native_async()
        .map_err(io::Error::from)?;
    // Some USB adapters want DTR raised (dgtnix does); ptys and CDC-ACM devices may refuse
    // it, which is harmless.
    let _ = tokio_serial::SerialPort::write_data_terminal_ready(&mut stream, true);
    Ok(stream)
}

/// Bytes in, messages out: the protocol decoder with a count of what it had to skip.
pub struct Reader {
    decoder: wire::Decoder,
}

impl Reader {
    pub fn new() -> Self {
        Reader {
            decoder: wire::Decoder::default(),
        }
    }

    /// Feed one read's worth of bytes; returns the complete messages in it.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<Message> {
        self.decoder.push(bytes)
    }

    /// Bytes skipped so far because they were not part of a valid message.
    pub fn skipped(&self) -> u64 {
        self.decoder.skipped
    }
}

impl Default for Reader {
    fn default() -> Self {
        Self::new()
    }
}

/// Interim framing for the messages the daemon itself needs, until the protocol decoder
/// lands: frames with resynchronisation on id bytes, version, serial number, board dump and
/// field update. Anything else is framed and dropped.
mod wire {
    use shakmaty::{Color, Piece, Role};

    use crate::protocol::{FieldContent, Message};

    #[derive(Default)]
    pub struct Decoder {
        buf: Vec<u8>,
        pub skipped: u64,
    }

    fn piece(code: u8) -> FieldContent {
        let (color, idx) = match code & 0x0F {
            c @ 1..=6 => (Color::White, c),
            c @ 7..=12 => (Color::Black, c - 6),
            _ => return None,
        };
        let role = match idx {
            1 => Role::Pawn,
            2 => Role::Rook,
            3 => Role::Knight,
            4 => Role::Bishop,
            5 => Role::King,
            _ => Role::Queen,
        };
        Some(Piece { color, role })
    }

    impl Decoder {
        pub fn push(&mut self, bytes: &[u8]) -> Vec<Message> {
            self.buf.extend_from_slice(bytes);
            let mut out = Vec::new();
            loop {
                // Resynchronise on the next id byte.
                let start = self.buf.iter().position(|b| b & 0x80 != 0);
                let Some(start) = start else {
                    self.skipped += self.buf.len() as u64;
                    self.buf.clear();
                    break;
                };
                if start > 0 {
                    self.skipped += start as u64;
                    self.buf.drain(..start);
                }
                if self.buf.len() < 3 {
                    break;
                }
                let (id, hi, lo) = (self.buf[0], self.buf[1], self.buf[2]);
                let len = (usize::from(hi) << 7) | usize::from(lo);
                let bad_len = hi & 0x80 != 0 || lo & 0x80 != 0 || len < 3;
                if bad_len {
                    self.skipped += 1;
                    self.buf.drain(..1);
                    continue;
                }
                // A data byte with bit 7 set means this frame was cut short: drop its id.
                let avail = self.buf.len().min(len);
                if let Some(p) = self.buf[3..avail].iter().position(|b| b & 0x80 != 0) {
                    self.skipped += (p + 3) as u64;
                    self.buf.drain(..p + 3);
                    continue;
                }
                if self.buf.len() < len {
                    break;
                }
                let frame: Vec<u8> = self.buf.drain(..len).collect();
                let data = &frame[3..];
                let msg = match (id, data.len()) {
                    (0x93, 2) => Some(Message::Version {
                        major: data[0],
                        minor: data[1],
                    }),
                    (0x91, _) => Some(Message::SerialNumber(
                        String::from_utf8_lossy(data).into_owned(),
                    )),
                    (0xA2, _) => Some(Message::LongSerialNumber(
                        String::from_utf8_lossy(data).into_owned(),
                    )),
                    (0x86, 64) => {
                        let mut fields = Box::new([None; 64]);
                        for (f, &b) in fields.iter_mut().zip(data) {
                            *f = piece(b);
                        }
                        Some(Message::BoardDump(fields))
                    }
                    (0x8E, 2) if data[0] < 64 => Some(Message::FieldUpdate {
                        field: data[0],
                        content: piece(data[1]),
                    }),
                    _ => None,
                };
                out.extend(msg);
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_survive_junk_and_splits() {
        let mut r = Reader::new();
        let mut bytes = vec![0x01, 0x7F, 0x93, 0x00];
        let tail = [0x05, 0x03, 0x0A];
        assert!(r.push(&bytes).is_empty());
        bytes.clear();
        let msgs = r.push(&tail);
        assert_eq!(
            msgs,
            [Message::Version {
                major: 3,
                minor: 10
            }]
        );
        assert_eq!(r.skipped(), 2);
        // A frame cut by a new id byte is dropped, the next one read.
        let msgs = r.push(&[
            0x91, 0x00, 0x08, b'1', 0x91, 0x00, 0x08, b'1', b'2', b'3', b'4', b'5',
        ]);
        assert_eq!(msgs, [Message::SerialNumber("12345".into())]);
    }

    #[test]
    fn handshake_starts_update_nice_and_asks_for_a_dump() {
        let h = handshake();
        assert_eq!(h[0], 0x4B);
        assert!(h.contains(&0x42));
        assert!(!h.contains(&0x49), "never ask for the EEPROM dump");
    }
}
