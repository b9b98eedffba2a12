//! The board protocols the link speaks: which one a board uses ([`Protocol`], the
//! configuration's choice), its serial line ([`LineSettings`]) and the [`Driver`] that holds
//! one open port's protocol state.
//!
//! A driver is an enum with exhaustive matches rather than a trait object: the protocols are
//! a closed set known at compile time and picked by a configuration key, the link machine
//! stays free of generics and `dyn` (the daemon keeps one per board), and adding a protocol
//! makes the compiler name every place here that must decide for it. A driver turns bytes
//! into [`BoardInput`]s (the core's, protocol-neutral) and the session's [`BoardRequest`]s
//! into bytes; the machine (`link/machine.rs`) keeps the generic life of the port: opening,
//! backoff, pacing, probing and silence.

use crate::board_input::BoardInput;
use crate::chesslink::driver::{self as chesslink, ChessLink};
use crate::dgt::clock_channel::{MessageError, Outcome};
use crate::dgt::driver::{self as dgt, Dgt};
use crate::identity::Identity;
use crate::session::BoardRequest;
use crate::vocab::Millis;

/// Which protocol a board speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Protocol {
    /// DGT e-boards and the clocks behind them (USB, serial, Bluetooth, Revelation II).
    #[default]
    Dgt,
    /// Millennium boards on ChessLink (eONE, Exclusive with the module, The King Performance).
    ChessLink,
}

impl Protocol {
    /// The serial line this protocol is spoken on.
    pub fn line(self) -> LineSettings {
        match self {
            Protocol::Dgt => LineSettings {
                baud: dgt::BAUD,
                data_bits: 8,
                parity: Parity::None,
                stop_bits: 1,
                dtr: true,
            },
            // 38400 baud, 7 data bits and odd parity: the parity bit is made and checked by
            // the driver in bit 7 of 8N1 bytes (the same 10 bits on the wire; a pty cannot
            // do 7O1, and every public driver does it so). DTR cleared after opening, as the
            // drivers in use do.
            Protocol::ChessLink => {
                let line = crate::chesslink::LineSettings::for_parity(chesslink::PARITY_BY);
                LineSettings {
                    baud: line.baud,
                    data_bits: line.data_bits,
                    parity: if line.uart_odd_parity {
                        Parity::Odd
                    } else {
                        Parity::None
                    },
                    stop_bits: line.stop_bits,
                    dtr: false,
                }
            }
        }
    }
}

/// Parity of a serial line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Parity {
    None,
    Odd,
    Even,
}

/// How the shell sets up the serial port (no flow control for any board).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LineSettings {
    pub baud: u32,
    /// 5..=8.
    pub data_bits: u8,
    pub parity: Parity,
    /// 1 or 2.
    pub stop_bits: u8,
    /// Raise DTR after opening (DGT) or clear it (ChessLink).
    pub dtr: bool,
}

/// What a driver counted on the line so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LineStats {
    /// Bytes skipped because they were not part of a valid message.
    pub skipped: u64,
    /// Bytes of the board's text that were not printable (shown as `?`).
    pub unprintable_text: u64,
    /// Frames dropped (cut or impossible): a message may have been lost.
    pub lost_frames: u64,
}

/// One open port's protocol state (see the module documentation).
#[derive(Debug)]
pub enum Driver {
    Dgt(Dgt),
    ChessLink(ChessLink),
}

impl Driver {
    pub fn new(protocol: Protocol) -> Self {
        match protocol {
            Protocol::Dgt => Driver::Dgt(Dgt::new()),
            Protocol::ChessLink => Driver::ChessLink(ChessLink::new()),
        }
    }

    /// Commands sent on every (re)connection, in order, each on its own.
    pub fn handshake(&self) -> Vec<Vec<u8>> {
        match self {
            Driver::Dgt(_) => dgt::handshake(),
            Driver::ChessLink(d) => d.handshake(),
        }
    }

    /// Sent when the line has been silent for a while (a board answers it).
    pub fn probe(&self) -> Vec<u8> {
        match self {
            Driver::Dgt(_) => dgt::probe(),
            Driver::ChessLink(_) => ChessLink::probe(),
        }
    }

    /// The command that asks the board for what the session wants. A board without move
    /// memory ([`Driver::has_memory`]) is never asked for it: its status stands in.
    pub fn request(&self, request: BoardRequest) -> Vec<u8> {
        match self {
            Driver::Dgt(_) => Dgt::request(request),
            Driver::ChessLink(_) => ChessLink::status_request(),
        }
    }

    /// The board keeps the moves played while nobody listened (a DGT board's EEPROM): a
    /// gap may be recovered from them. A ChessLink board keeps none.
    pub fn has_memory(&self) -> bool {
        match self {
            Driver::Dgt(_) => true,
            Driver::ChessLink(_) => false,
        }
    }

    /// What the board's LEDs should show (a board without LEDs ignores it).
    pub fn show_leds(&mut self, request: chesslink::LedRequest) {
        match self {
            Driver::Dgt(_) => {}
            Driver::ChessLink(d) => d.show_leds(request),
        }
    }

    /// The link wrote `bytes` (a driver that must know what was asked of the board).
    pub fn on_sent(&mut self, bytes: &[u8]) {
        match self {
            Driver::Dgt(_) => {}
            Driver::ChessLink(d) => d.on_sent(bytes),
        }
    }

    /// The periodic question for a board's battery, if it has one worth asking about.
    pub fn battery_request(&self, identity: &Identity) -> Option<Vec<u8>> {
        match self {
            Driver::Dgt(_) => Dgt::battery_request(identity),
            Driver::ChessLink(_) => None,
        }
    }

    /// The question that makes the clock name its model again (`None`: no clock to ask).
    pub fn clock_model_request(&self) -> Option<Vec<u8>> {
        match self {
            Driver::Dgt(_) => Some(Dgt::clock_model_request()),
            Driver::ChessLink(_) => None,
        }
    }

    /// Feed one read's worth of bytes: one entry per complete message heard, the core's
    /// input or `None` for what only concerns the line.
    pub fn push(&mut self, bytes: &[u8], now: Millis) -> Vec<Option<BoardInput>> {
        match self {
            Driver::Dgt(d) => d.push(bytes, now),
            Driver::ChessLink(d) => d.push(bytes, now),
        }
    }

    pub fn stats(&self) -> LineStats {
        match self {
            Driver::Dgt(d) => LineStats {
                skipped: d.reader().skipped(),
                unprintable_text: d.reader().unprintable_text(),
                lost_frames: d.reader().dropped_frames(),
            },
            // A lost ChessLink frame is not a lost change: every status is a whole board and
            // the driver asks for the next one at once, so the record needs no gap for it.
            // The dropped frames' bytes are counted as skipped.
            Driver::ChessLink(d) => LineStats {
                skipped: d.stats().skipped_bytes,
                unprintable_text: 0,
                lost_frames: 0,
            },
        }
    }

    /// A message has begun and is not complete yet: the board is still sending it.
    pub fn in_frame(&self) -> bool {
        match self {
            Driver::Dgt(d) => d.reader().in_frame(),
            Driver::ChessLink(d) => d.in_frame(),
        }
    }

    /// What the board said about itself (per-model choices: where clock text goes).
    pub fn learn(&mut self, identity: &Identity) {
        match self {
            Driver::Dgt(d) => d.learn(identity),
            Driver::ChessLink(_) => {}
        }
    }

    /// Queue a text for the clock; its outcome comes from [`Driver::poll_clock`].
    pub fn show(&mut self, text: &str, now: Millis) -> Result<u64, MessageError> {
        match self {
            Driver::Dgt(d) => d.show(text, now),
            Driver::ChessLink(_) => Err(MessageError::NoClock),
        }
    }

    /// The next clock command to write, if one is due.
    pub fn poll_transmit(&mut self, now: Millis) -> Option<Vec<u8>> {
        match self {
            Driver::Dgt(d) => d.poll_transmit(now),
            Driver::ChessLink(d) => d.poll_transmit(now),
        }
    }

    /// When the clock next needs writing to or giving up on.
    pub fn poll_timeout(&self) -> Option<Millis> {
        match self {
            Driver::Dgt(d) => d.poll_timeout(),
            Driver::ChessLink(d) => d.poll_timeout(),
        }
    }

    pub fn poll_clock(&mut self) -> Option<Outcome> {
        match self {
            Driver::Dgt(d) => d.poll_clock(),
            Driver::ChessLink(_) => None,
        }
    }

    /// The port is gone: clock requests still waiting fail.
    pub fn reset(&mut self) {
        match self {
            Driver::Dgt(d) => d.reset(),
            Driver::ChessLink(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dgt_board_is_read_at_9600_8n1_and_its_requests_are_its_commands() {
        let line = Protocol::Dgt.line();
        assert_eq!(
            (line.baud, line.data_bits, line.parity, line.stop_bits),
            (9600, 8, Parity::None, 1)
        );
        let d = Driver::new(Protocol::Dgt);
        assert_eq!(d.request(BoardRequest::SendBoard), [0x42]);
        assert_eq!(d.request(BoardRequest::ReadMemory), [0x49]);
        assert_eq!(d.battery_request(&Identity::new(false)), None);
        assert_eq!(d.battery_request(&Identity::new(true)), Some(vec![0x4C]));
        assert!(d.has_memory());
    }

    #[test]
    fn a_chesslink_board_is_read_at_38400_with_the_parity_in_bit_7_and_keeps_no_moves() {
        let line = Protocol::ChessLink.line();
        assert_eq!(
            (
                line.baud,
                line.data_bits,
                line.parity,
                line.stop_bits,
                line.dtr
            ),
            (38400, 8, Parity::None, 1, false)
        );
        let mut d = Driver::new(Protocol::ChessLink);
        // `S` with its check `53`, the parity in bit 7.
        assert_eq!(d.request(BoardRequest::SendBoard), [0xD3, 0xB5, 0xB3]);
        assert_eq!(d.probe(), [0xD6, 0xB5, 0xB6]);
        assert!(!d.has_memory());
        assert_eq!(d.battery_request(&Identity::new(true)), None);
        assert_eq!(d.show("hi", 0), Err(MessageError::NoClock));
    }
}
