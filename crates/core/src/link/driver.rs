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
            },
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
}

impl Driver {
    pub fn new(protocol: Protocol) -> Self {
        match protocol {
            Protocol::Dgt => Driver::Dgt(Dgt::new()),
        }
    }

    /// Commands sent on every (re)connection, in order, each on its own.
    pub fn handshake(&self) -> Vec<Vec<u8>> {
        match self {
            Driver::Dgt(_) => dgt::handshake(),
        }
    }

    /// Sent when the line has been silent for a while (a board answers it).
    pub fn probe(&self) -> Vec<u8> {
        match self {
            Driver::Dgt(_) => dgt::probe(),
        }
    }

    /// The command that asks the board for what the session wants.
    pub fn request(&self, request: BoardRequest) -> Vec<u8> {
        match self {
            Driver::Dgt(_) => Dgt::request(request),
        }
    }

    /// The periodic question for a board's battery, if it has one worth asking about.
    pub fn battery_request(&self, identity: &Identity) -> Option<Vec<u8>> {
        match self {
            Driver::Dgt(_) => Dgt::battery_request(identity),
        }
    }

    /// The question that makes the clock name its model again (`None`: no clock to ask).
    pub fn clock_model_request(&self) -> Option<Vec<u8>> {
        match self {
            Driver::Dgt(_) => Some(Dgt::clock_model_request()),
        }
    }

    /// Feed one read's worth of bytes: one entry per complete message heard, the core's
    /// input or `None` for what only concerns the line.
    pub fn push(&mut self, bytes: &[u8], now: Millis) -> Vec<Option<BoardInput>> {
        match self {
            Driver::Dgt(d) => d.push(bytes, now),
        }
    }

    pub fn stats(&self) -> LineStats {
        match self {
            Driver::Dgt(d) => LineStats {
                skipped: d.reader().skipped(),
                unprintable_text: d.reader().unprintable_text(),
                lost_frames: d.reader().dropped_frames(),
            },
        }
    }

    /// A message has begun and is not complete yet: the board is still sending it.
    pub fn in_frame(&self) -> bool {
        match self {
            Driver::Dgt(d) => d.reader().in_frame(),
        }
    }

    /// What the board said about itself (per-model choices: where clock text goes).
    pub fn learn(&mut self, identity: &Identity) {
        match self {
            Driver::Dgt(d) => d.learn(identity),
        }
    }

    /// Queue a text for the clock; its outcome comes from [`Driver::poll_clock`].
    pub fn show(&mut self, text: &str, now: Millis) -> Result<u64, MessageError> {
        match self {
            Driver::Dgt(d) => d.show(text, now),
        }
    }

    /// The next clock command to write, if one is due.
    pub fn poll_transmit(&mut self, now: Millis) -> Option<Vec<u8>> {
        match self {
            Driver::Dgt(d) => d.poll_transmit(now),
        }
    }

    /// When the clock next needs writing to or giving up on.
    pub fn poll_timeout(&self) -> Option<Millis> {
        match self {
            Driver::Dgt(d) => d.poll_timeout(),
        }
    }

    pub fn poll_clock(&mut self) -> Option<Outcome> {
        match self {
            Driver::Dgt(d) => d.poll_clock(),
        }
    }

    /// The port is gone: clock requests still waiting fail.
    pub fn reset(&mut self) {
        match self {
            Driver::Dgt(d) => d.reset(),
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
    }
}
