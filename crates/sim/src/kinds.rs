//! What sets the DGT board models apart, as the virtual board plays them: a Bluetooth
//! board's battery, a Revelation II's firmware and its self-turning reporting. The models
//! themselves (the options of each) are `models.rs`'s.

use eboard_core::dgt::BatteryStatus;
use shakmaty::{Color, Piece};

/// A Bluetooth board's battery as it reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimBattery {
    pub percent: u8,
    pub charging: bool,
}

impl SimBattery {
    /// The board's answer to the battery question (0x4C).
    pub fn status(self) -> BatteryStatus {
        BatteryStatus {
            percent: self.percent,
            time_left: Some((self.percent / 10, 30)),
            on_time: (1, 5),
            standby: (2, 3, 4),
            charging: self.charging,
            discharging: !self.charging,
        }
    }
}

/// Which way a board reports its fields: a self-turning Revelation II turns round (63 − field)
/// when Black's pieces fill its near rows, and back when White's do.
#[derive(Debug, Clone, Copy, Default)]
pub struct Reporting {
    turned: bool,
}

impl Reporting {
    /// Field `index` (the board's own numbering) as reported.
    pub fn index(self, index: usize) -> usize {
        if self.turned { 63 - index } else { index }
    }

    /// The fields as reported.
    pub fn fields(self, fields: &[Option<Piece>; 64]) -> [Option<Piece>; 64] {
        let mut out = *fields;
        if self.turned {
            out.reverse();
        }
        out
    }

    /// After a change on the sensors: whether a self-turning board turns now.
    pub fn decide(&mut self, revelation: Option<Revelation>, fields: &[Option<Piece>; 64]) -> bool {
        if !revelation.is_some_and(Revelation::turns_itself) {
            return false;
        }
        match turned_reporting(fields) {
            Some(turned) if turned != self.turned => {
                self.turned = turned;
                true
            }
            _ => false,
        }
    }
}

/// What makes a board a Revelation II.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Revelation {
    /// Firmware (major, minor in hundredths): 3.25 → (3, 25).
    pub firmware: (u8, u8),
}

impl Revelation {
    /// Text on its own display (0x0D), from firmware 3.25.
    pub fn shows_text(self) -> bool {
        self.firmware >= (3, 25)
    }

    /// It turns its own reporting round (from firmware 3.22).
    pub fn turns_itself(self) -> bool {
        self.firmware >= (3, 22)
    }

    /// Its long serial number: the firmware, then serial digits (ten characters).
    pub fn long_serial(self) -> String {
        format!("{}.{:02}001000", self.firmware.0, self.firmware.1)
    }
}

/// Which way a self-turning board reports, from what its sensors hold (in its own numbering,
/// field 0 = a8 seen with the connector on White's left): `Some(true)` when Black's pieces
/// fill the two near rows and White's the two far ones (turn round), `Some(false)` for the
/// normal start rows, `None` when neither (keep the way it reports).
pub fn turned_reporting(fields: &[Option<Piece>; 64]) -> Option<bool> {
    let rows_of = |range: std::ops::Range<usize>, color: Color| {
        fields[range]
            .iter()
            .all(|f| f.is_some_and(|p| p.color == color))
    };
    if rows_of(48..64, Color::Black) && rows_of(0..16, Color::White) {
        Some(true)
    } else if rows_of(48..64, Color::White) && rows_of(0..16, Color::Black) {
        Some(false)
    } else {
        None
    }
}

/// `len` ASCII digits from `text`, least significant last, padded with leading zeros.
pub(crate) fn digits(text: &str, len: usize) -> String {
    let raw: Vec<char> = text.chars().filter(char::is_ascii_digit).collect();
    let mut out = "0".repeat(len.saturating_sub(raw.len()));
    out.extend(raw.iter().skip(raw.len().saturating_sub(len)));
    out
}
