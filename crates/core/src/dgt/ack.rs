//! What a clock ack means: the four rebuilt ack bytes read as "which command was acknowledged,
//! did it fail, which button was pressed, which version is this clock", and the constructors
//! the board simulator uses to answer like a real clock.
//!
//! ack0: 0x10 = normal ack, anything else an error (0x40 for a set-and-run outside clock
//! mode 23; 0x20 has been seen from an XL). ack1: the clock sub-command acknowledged, or with
//! bit 7 set a message the clock sent on its own (0x81 ready, 0x88 button, 0x8A mode, 0x90 not
//! in mode 23). Button presses carry the button code in ack3 and a combination in ack2; the
//! version ack carries major/minor in the nibbles of ack2.

use super::message::ClockAck;

/// ack0 of a successful ack.
pub const ACK_OK: u8 = 0x10;
/// ack0 of a refused command (e.g. set-and-run outside clock mode 23).
pub const ACK_ERROR: u8 = 0x40;
/// ack1: the clock reports it is ready.
pub const ACK_READY: u8 = 0x81;
/// ack1: a button was pressed (ack3 = button code).
pub const ACK_BUTTON: u8 = 0x88;
/// ack1: the clock reports its mode (⚠ documented with a question mark).
pub const ACK_MODE: u8 = 0x8A;
/// ack1: the clock is not in mode 23 (⚠ documented with a question mark).
pub const ACK_NOT_IN_MODE: u8 = 0x90;
/// ack0 of the undocumented answer an XL gives to commands: (0x20, 0, 0, 0).
pub const ACK_XL_QUIRK: u8 = 0x20;
/// ack1 of a version ack.
const ACK_VERSION: u8 = 0x09;

/// The five buttons of a DGT clock, left to right.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClockButton {
    Back,
    Minus,
    Run,
    Plus,
    Ok,
}

impl ClockButton {
    /// The button code in ack3 of a button ack.
    pub fn code(self) -> u8 {
        match self {
            ClockButton::Back => 0x31,
            ClockButton::Minus => 0x34,
            ClockButton::Run => 0x33,
            ClockButton::Plus => 0x32,
            ClockButton::Ok => 0x35,
        }
    }

    pub fn from_code(code: u8) -> Option<Self> {
        Some(match code {
            0x31 => ClockButton::Back,
            0x34 => ClockButton::Minus,
            0x33 => ClockButton::Run,
            0x32 => ClockButton::Plus,
            0x35 => ClockButton::Ok,
            _ => return None,
        })
    }
}

impl ClockAck {
    /// A successful ack of clock sub-command `sub` (e.g. `ClockCommand::sub_command()`).
    pub fn ok(sub: u8) -> Self {
        ClockAck {
            bytes: [ACK_OK, sub & 0x7F, 0, 0],
        }
    }

    /// A refused clock sub-command.
    pub fn error(sub: u8) -> Self {
        ClockAck {
            bytes: [ACK_ERROR, sub & 0x7F, 0, 0],
        }
    }

    /// The answer to a version request: a DGT 3000 says 2.x, an XL 1.x.
    pub fn version_reply(major: u8, minor: u8) -> Self {
        ClockAck {
            bytes: [ACK_OK, ACK_VERSION, (major << 4) | (minor & 0x0F), 0],
        }
    }

    /// The XL's undocumented answer to a command, (0x20, 0, 0, 0) (protocol sheet, section 5).
    pub fn xl_quirk() -> Self {
        ClockAck {
            bytes: [ACK_XL_QUIRK, 0, 0, 0],
        }
    }

    /// Whether this is the XL's (0x20, 0, 0, 0), which names no command.
    pub fn is_xl_quirk(&self) -> bool {
        self.bytes == [ACK_XL_QUIRK, 0, 0, 0]
    }

    /// An unsolicited button press.
    pub fn button_press(button: ClockButton) -> Self {
        ClockAck {
            bytes: [ACK_OK, ACK_BUTTON, 0, button.code()],
        }
    }

    /// Whether ack0 reports an error.
    pub fn is_error(&self) -> bool {
        self.bytes[0] != ACK_OK
    }

    /// Whether the clock sent this on its own (ack1 bit 7) rather than answering a command.
    pub fn is_unsolicited(&self) -> bool {
        self.bytes[1] & 0x80 != 0
    }

    /// The clock sub-command this acknowledges, unless it is unsolicited.
    pub fn acknowledged_sub_command(&self) -> Option<u8> {
        (!self.is_unsolicited()).then_some(self.bytes[1])
    }

    /// (major, minor) of a successful version ack.
    pub fn version(&self) -> Option<(u8, u8)> {
        (!self.is_error() && self.bytes[1] == ACK_VERSION)
            .then_some((self.bytes[2] >> 4, self.bytes[2] & 0x0F))
    }

    /// The button of a button-press ack, when the code is one of the five known ones
    /// (simultaneous presses change ack2; see [`ClockAck::bytes`]).
    pub fn button(&self) -> Option<ClockButton> {
        (self.bytes[1] == ACK_BUTTON)
            .then(|| ClockButton::from_code(self.bytes[3]))
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_acks() {
        // A DGT 3000 answering a version request (picochess issue log): version 2.0.
        let v = ClockAck {
            bytes: [0x10, 0x09, 0x20, 0x00],
        };
        assert_eq!(v.version(), Some((2, 0)));
        assert_eq!(v.acknowledged_sub_command(), Some(0x09));
        assert!(!v.is_error() && !v.is_unsolicited());
        assert_eq!(ClockAck::version_reply(2, 0), v);

        let press = ClockAck {
            bytes: [0x10, 0x88, 0x05, 0x31],
        };
        assert!(press.is_unsolicited());
        assert_eq!(press.button(), Some(ClockButton::Back));
        assert_eq!(press.acknowledged_sub_command(), None);
        assert_eq!(
            ClockAck::button_press(ClockButton::Ok).button(),
            Some(ClockButton::Ok)
        );

        // The undocumented XL error seen in the wild.
        let xl = ClockAck {
            bytes: [0x20, 0, 0, 0],
        };
        assert!(xl.is_error());
        assert_eq!(xl.version(), None);
        assert_eq!(ClockAck::ok(0x0C).bytes, [0x10, 0x0C, 0, 0]);
        assert!(ClockAck::error(0x0A).is_error());
    }

    #[test]
    fn button_codes_round_trip() {
        for b in [
            ClockButton::Back,
            ClockButton::Minus,
            ClockButton::Run,
            ClockButton::Plus,
            ClockButton::Ok,
        ] {
            assert_eq!(ClockButton::from_code(b.code()), Some(b));
        }
        assert_eq!(ClockButton::from_code(0x36), None);
    }
}
