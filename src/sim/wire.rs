//! The board's side of the wire: framing host → board commands as a board's firmware does
//! (bytes may arrive split across reads; unknown bytes are ignored) and writing board → host
//! frames.
//!
//! A board has to accept things a well-behaved host never sends (bus-mode frames, the boot
//! loader byte, LED frames for other models) and simply not answer them, so this framer is
//! deliberately more lenient than the daemon's typed command encoder.

use shakmaty::{Color, Piece, Role};

use crate::protocol::{ClockTimes, DisplayFlags, DisplayTime};

/// One complete host → board command as the board sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostCommand {
    /// A single-byte command (0x40..=0x55).
    Single(u8),
    /// A clock message (0x2B frame): the sub-command and its payload, without the start
    /// byte (0x03) and the end byte (0x00).
    Clock { sub: u8, payload: Vec<u8> },
    /// A Revelation II LED frame (0x60); an ordinary board ignores it.
    Leds(Vec<u8>),
    /// A bus-mode frame (command byte with the MSB set + address + checksum).
    Bus(u8),
}

/// Board-side command framer: fed raw host bytes, yields whole commands.
#[derive(Debug, Default, Clone)]
pub struct CommandFramer {
    pending: Vec<u8>,
}

impl CommandFramer {
    /// Feed bytes; returns every command completed by them. Bytes that start no known
    /// command are dropped one at a time, as a board would.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<HostCommand> {
        self.pending.extend_from_slice(bytes);
        let mut out = Vec::new();
        while let Some(&first) = self.pending.first() {
            let needed = match first {
                0x2B | 0x60 => match self.pending.get(1) {
                    // Size byte = number of bytes after it.
                    Some(&size) => 2 + usize::from(size),
                    None => break,
                },
                0x80..=0xFF => 4,
                _ => 1,
            };
            if self.pending.len() < needed {
                break;
            }
            let frame: Vec<u8> = self.pending.drain(..needed).collect();
            match first {
                0x40..=0x55 => out.push(HostCommand::Single(first)),
                0x2B => {
                    // 2B N 03 sub payload.. 00
                    let body = &frame[2..];
                    if body.len() >= 2 && body[0] == 0x03 {
                        let sub = body[1];
                        let mut payload = body[2..].to_vec();
                        if payload.last() == Some(&0x00) {
                            payload.pop();
                        }
                        out.push(HostCommand::Clock { sub, payload });
                    }
                }
                0x60 => out.push(HostCommand::Leds(frame[2..].to_vec())),
                0x80..=0xFF => out.push(HostCommand::Bus(first)),
                _ => {}
            }
        }
        out
    }
}

/// Piece code on the wire (fact sheet section 4).
pub fn piece_code(piece: Option<Piece>) -> u8 {
    let Some(piece) = piece else { return 0 };
    let base = match piece.role {
        Role::Pawn => 1,
        Role::Rook => 2,
        Role::Knight => 3,
        Role::Bishop => 4,
        Role::King => 5,
        Role::Queen => 6,
    };
    match piece.color {
        Color::White => base,
        Color::Black => base + 6,
    }
}

/// Append one framed board → host message: id, 14-bit total length, payload.
pub fn frame(out: &mut Vec<u8>, id: u8, payload: &[u8]) {
    let total = payload.len() + 3;
    out.push(id);
    out.push(((total >> 7) & 0x7F) as u8);
    out.push((total & 0x7F) as u8);
    out.extend(payload.iter().map(|b| b & 0x7F));
}

fn bcd(value: u8) -> u8 {
    ((value / 10) << 4) | (value % 10)
}

fn display_bytes(time: DisplayTime, flags: DisplayFlags) -> [u8; 3] {
    let mut hours = time.hours.min(9);
    if flags.flag_fallen {
        hours |= 0x10;
    }
    if flags.time_per_move {
        hours |= 0x20;
    }
    if flags.flag_shown {
        hours |= 0x40;
    }
    [hours, bcd(time.minutes.min(59)), bcd(time.seconds.min(59))]
}

/// The 7 payload bytes of a clock-times BWTIME message (DGT 3000 layout: bytes 3–5 right
/// display, 6–8 left display, status bit 3 = left running, bit 4 = right running).
pub fn clock_times_payload(t: &ClockTimes) -> [u8; 7] {
    let r = display_bytes(t.right, t.right_flags);
    let l = display_bytes(t.left, t.left_flags);
    let s = &t.status;
    let status = u8::from(s.running)
        | u8::from(s.lever_left_down) << 1
        | u8::from(s.battery_low) << 2
        | u8::from(s.left_running) << 3
        | u8::from(s.right_running) << 4
        | u8::from(!s.connected) << 5;
    [r[0], r[1], r[2], l[0], l[1], l[2], status]
}

/// The 7 payload bytes of a clock-ack BWTIME message carrying `ack` (bit 7 of each ack byte
/// rides in bits 4/5 of the hours bytes; both hours nibbles say 0x0A).
pub fn clock_ack_payload(ack: [u8; 4]) -> [u8; 7] {
    let hi = |b: u8| (b >> 7) & 1;
    let p3 = 0x0A | hi(ack[0]) << 4 | hi(ack[1]) << 5;
    let p0 = 0x0A | hi(ack[2]) << 4 | hi(ack[3]) << 5;
    [
        p0,
        ack[0] & 0x7F,
        ack[1] & 0x7F,
        p3,
        ack[2] & 0x7F,
        ack[3] & 0x7F,
        0,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ClockStatus;

    #[test]
    fn framer_handles_split_and_junk() {
        let mut f = CommandFramer::default();
        assert!(f.feed(&[0x2B, 0x04]).is_empty());
        assert!(f.feed(&[0x03, 0x0B]).is_empty());
        let got = f.feed(&[0x10, 0x00, 0x01, 0x42, 0x81, 0x10, 0x06, 0x17]);
        assert_eq!(
            got,
            vec![
                HostCommand::Clock {
                    sub: 0x0B,
                    payload: vec![0x10]
                },
                HostCommand::Single(0x42),
                HostCommand::Bus(0x81)
            ]
        );
    }

    #[test]
    fn times_payload_matches_capture_bytes() {
        // capture 1: "20 03 02 20 02 59 09" — right 3:02, left 2:59 running, Fischer on.
        let fl = DisplayFlags {
            time_per_move: true,
            ..DisplayFlags::default()
        };
        let t = ClockTimes {
            right: DisplayTime {
                hours: 0,
                minutes: 3,
                seconds: 2,
            },
            right_flags: fl,
            left: DisplayTime {
                hours: 0,
                minutes: 2,
                seconds: 59,
            },
            left_flags: fl,
            status: ClockStatus {
                running: true,
                left_running: true,
                connected: true,
                ..ClockStatus::default()
            },
        };
        assert_eq!(
            clock_times_payload(&t),
            [0x20, 0x03, 0x02, 0x20, 0x02, 0x59, 0x09]
        );
    }

    #[test]
    fn ack_payload_carries_bit7() {
        let p = clock_ack_payload([0x10, 0x88, 0x00, 0x31]);
        assert_eq!(p, [0x0A, 0x10, 0x08, 0x2A, 0x00, 0x31, 0x00]);
        let p = clock_ack_payload([0x10, 0x09, 0x20, 0x00]);
        assert_eq!(p, [0x0A, 0x10, 0x09, 0x0A, 0x20, 0x00, 0x00]);
    }
}
