//! The board's option bytes (its EEPROM) and the settings a driver writes after connecting.
//!
//! The option bytes survive power-off and hold whatever the last program wrote (the report
//! mode, the scan time, even a switched-off block check), so a driver writes every one it
//! relies on after each (re)connect and reads them back.

use super::message::Command;

/// Address 00: bit 0 set switches the block check off (for typing at a terminal).
pub const SERIAL_SETUP: u8 = 0x00;
/// Address 01: the scan time, units of 2.048 ms.
pub const SCAN_TIME: u8 = 0x01;
/// Address 02: the automatic status reports (bits 0–2).
pub const AUTO_REPORT: u8 = 0x02;
/// Address 03: the report interval for [`AutoReport::Interval`], units of 4.096 ms.
pub const REPORT_INTERVAL: u8 = 0x03;
/// Address 04: LED brightness, 0 dim … above 14 full.
pub const BRIGHTNESS: u8 = 0x04;
/// Address 06: an eONE's own settings (a single source; not written by this driver).
pub const EONE_SETTINGS: u8 = 0x06;

/// When the board sends a status report without being asked (address 02).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AutoReport {
    /// After every scan: the board's default, about 24 reports a second.
    EveryScan,
    /// Never: only in answer to `S`.
    Off,
    /// Every N × 4.096 ms, N at address 03.
    Interval,
    /// When the scan differs from the last report.
    OnChange,
    /// When a new status has been read the same on this many consecutive scans (2–5).
    Debounced(u8),
}

impl AutoReport {
    /// The option byte's value.
    pub fn code(self) -> u8 {
        match self {
            AutoReport::EveryScan => 0,
            AutoReport::Off => 1,
            AutoReport::Interval => 2,
            AutoReport::OnChange => 3,
            AutoReport::Debounced(scans) => scans.clamp(2, 5) + 2,
        }
    }

    /// The mode an option byte selects (bits 3–7 are unused).
    pub fn from_code(code: u8) -> AutoReport {
        match code & 0x07 {
            0 => AutoReport::EveryScan,
            1 => AutoReport::Off,
            2 => AutoReport::Interval,
            3 => AutoReport::OnChange,
            n => AutoReport::Debounced(n - 2),
        }
    }

    /// Consecutive equal scans before a change is reported (1 = at once); `None` for the
    /// modes that do not report changes.
    pub fn scans_to_settle(self) -> Option<u8> {
        match self {
            AutoReport::OnChange => Some(1),
            AutoReport::Debounced(n) => Some(n.clamp(2, 5)),
            _ => None,
        }
    }
}

/// Smallest scan time the board takes (30.72 ms); below it the board uses the default.
pub const MIN_SCAN_TIME: u8 = 15;
/// The board's default scan time (40.96 ms).
pub const DEFAULT_SCAN_TIME: u8 = 20;
/// Microseconds per unit of the scan time (2.048 ms).
pub const SCAN_UNIT_US: u32 = 2_048;

/// The scan period the board uses for an option byte (values below 15 mean 20), in µs.
pub fn scan_period_us(code: u8) -> u32 {
    let units = if code < MIN_SCAN_TIME {
        DEFAULT_SCAN_TIME
    } else {
        code
    };
    u32::from(units) * SCAN_UNIT_US
}

/// The settings a driver writes at start, then reads back to confirm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StartupSettings {
    /// Scan time code (15–255, units of 2.048 ms).
    pub scan_time: u8,
    pub auto_report: AutoReport,
    /// LED brightness code, `None` to leave the owner's choice.
    pub brightness: Option<u8>,
}

impl Default for StartupSettings {
    /// The board's default scan (40.96 ms) with every change reported at once: the daemon's
    /// tracker does its own settling, so it wants every reading, and none twice.
    fn default() -> Self {
        StartupSettings {
            scan_time: DEFAULT_SCAN_TIME,
            auto_report: AutoReport::OnChange,
            brightness: None,
        }
    }
}

impl StartupSettings {
    /// The option bytes to hold, address and value, in the order they are written.
    pub fn values(&self) -> Vec<(u8, u8)> {
        let mut values = vec![
            // The block check on: without it nothing guards a status against line noise.
            (SERIAL_SETUP, 0),
            (SCAN_TIME, self.scan_time.max(MIN_SCAN_TIME)),
            (AUTO_REPORT, self.auto_report.code()),
        ];
        if let Some(level) = self.brightness {
            values.push((BRIGHTNESS, level));
        }
        values
    }

    /// The writes, then the reads that confirm them.
    pub fn commands(&self) -> Vec<Command> {
        let values = self.values();
        let writes = values
            .iter()
            .map(|&(address, value)| Command::Write { address, value });
        let reads = values.iter().map(|&(address, _)| Command::Read { address });
        writes.chain(reads).collect()
    }

    /// The addresses whose read-back differs from what was written (`reads`: address and
    /// value as the board answered); an address not answered counts as differing.
    pub fn mismatches(&self, reads: &[(u8, u8)]) -> Vec<u8> {
        self.values()
            .into_iter()
            .filter(|wanted| !reads.contains(wanted))
            .map(|(address, _)| address)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chesslink::line::ParityBy;

    #[test]
    fn report_modes_round_trip() {
        for code in 0..8 {
            assert_eq!(AutoReport::from_code(code).code(), code);
        }
        assert_eq!(AutoReport::from_code(0x0B), AutoReport::OnChange);
        assert_eq!(AutoReport::Debounced(4).code(), 6);
        assert_eq!(AutoReport::Debounced(9).code(), 7);
        assert_eq!(AutoReport::Debounced(5).scans_to_settle(), Some(5));
        assert_eq!(AutoReport::Off.scans_to_settle(), None);
    }

    #[test]
    fn scan_times_are_clamped_as_the_board_does() {
        assert_eq!(scan_period_us(20), 40_960);
        assert_eq!(scan_period_us(15), 30_720);
        assert_eq!(scan_period_us(14), 40_960);
        assert_eq!(scan_period_us(255), 522_240);
    }

    #[test]
    fn startup_writes_then_reads_back() {
        let settings = StartupSettings::default();
        let commands = settings.commands();
        assert_eq!(
            commands,
            vec![
                Command::Write {
                    address: 0,
                    value: 0
                },
                Command::Write {
                    address: 1,
                    value: 20
                },
                Command::Write {
                    address: 2,
                    value: 3
                },
                Command::Read { address: 0 },
                Command::Read { address: 1 },
                Command::Read { address: 2 },
            ]
        );
        // The fact sheet's worked example: "set automatic reports to 3".
        assert_eq!(
            commands[2].encode(ParityBy::Host),
            [0x57, 0xB0, 0x32, 0xB0, 0xB3, 0xB5, 0xB6]
        );
        assert!(settings.mismatches(&[(0, 0), (1, 20), (2, 3)]).is_empty());
        assert_eq!(settings.mismatches(&[(0, 0), (2, 0)]), vec![1, 2]);
        let bright = StartupSettings {
            brightness: Some(15),
            scan_time: 3,
            ..StartupSettings::default()
        };
        assert_eq!(bright.values(), vec![(0, 0), (1, 15), (2, 3), (4, 15)]);
    }
}
