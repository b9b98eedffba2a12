//! What board is on the other end of a link, read from what it says about itself: the
//! `SerialNumber`, `FirmwareVersion`, `BoardModel`, `ClockModel` and `Battery` properties, and the per-model choices of the link (whether the
//! battery is asked for, which command puts text on a Revelation II's display).
//!
//! - **Revelation II**: its long serial number (0x55) begins with its firmware number
//!   (`3.25…`, picochess reads the first four characters the same way); an ordinary board's
//!   long serial number is ten digits.
//! - **Bluetooth e-board**: it answers the battery question (0x4C, "new command for the
//!   Bluetooth board" in DGT's header; a USB-only board has no battery and no answer), or it
//!   is served on an rfcomm port (`/dev/rfcommN`, which the shell tells before the first
//!   byte, so a Bluetooth board is named as such even before its battery answers).
//! - **DGT** (USB or serial e-board): any other board once it has told its version.
//!
//! The identity is rebuilt from the board's own answers after every reconnection; a battery
//! reading stays until the next one (the property says "as the board last reported it").
//!
//! One reading is not a fact: a frame the line garbled into another valid one must not
//! rename a board or its clock. The clock's model is published once it named the same model
//! twice in a row ([`Identity::clock_model`]), and a board on a port that is not an rfcomm
//! device is named a Bluetooth board once it answered the battery question twice
//! ([`Identity::model`]); the link asks again soon after a first answer
//! ([`Identity::to_confirm`]).

use crate::board_input::{BatteryStatus, BoardInput, ClockModel, IdentityReport};

/// What the board is (contract: the `BoardModel` property).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BoardModel {
    /// A DGT USB or serial e-board.
    Dgt,
    /// A DGT Bluetooth e-board (battery powered; on rfcomm, or on its USB cable).
    DgtBluetooth,
    /// A DGT Revelation II (its own display; its own orientation handling).
    DgtRevelation2,
    /// A Millennium board on ChessLink (eONE, Exclusive with the module, The King
    /// Performance): its version reply names no model for certain, so one word for all.
    ChessLink,
}

impl BoardModel {
    /// The contract's word.
    pub fn as_str(self) -> &'static str {
        match self {
            BoardModel::Dgt => "dgt",
            BoardModel::DgtBluetooth => "dgt-bluetooth",
            BoardModel::DgtRevelation2 => "dgt-revelation2",
            BoardModel::ChessLink => "chesslink",
        }
    }
}

impl std::fmt::Display for BoardModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The first Revelation II firmware that takes text for its own display (0x0D); picochess
/// enables it from 3.25 (its notes say 3.24H, the board reports whole hundredths).
pub const REVELATION_TEXT_FIRMWARE: (u8, u8) = (3, 25);

/// The first Revelation II firmware that turns its own reporting round when Black's pieces
/// stand on the near side (the protocol header's 2017 revision: firmware above 3.21 can
/// switch the reversal, so it is there from 3.22 on).
pub const REVELATION_SELF_TURNING_FIRMWARE: (u8, u8) = (3, 22);

/// The `Battery` value before any report, and for a board without a battery.
pub const NO_BATTERY: (i32, bool) = (-1, false);

/// What one link has learnt about its board (see the module documentation).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Identity {
    /// The port is an rfcomm device (a bound Bluetooth serial link).
    bluetooth_port: bool,
    /// The board told its version since the link came up.
    answered_version: bool,
    /// The long serial number, as the board sent it.
    long_serial: Option<String>,
    /// The last battery report (kept over reconnections).
    battery: Option<BatteryStatus>,
    /// Battery answers since the link came up (counted up to two).
    battery_answers: u32,
    /// The board answered the battery question twice on one connection: on a later one, its
    /// first answer names it again.
    battery_proven: bool,
    /// The serial number published (the short one; the long one while no short one came).
    serial_number: String,
    /// The firmware version as published (`3.10`).
    firmware_version: String,
    /// The clock behind the board since the link came up, once it said so twice in a row.
    clock_model: Option<ClockModel>,
    /// The model the clock named last (the next answer confirms or replaces it).
    clock_heard: Option<ClockModel>,
    /// The board answered as a ChessLink board since the link came up.
    chesslink: bool,
}

/// What a board said once and should be asked again before it is believed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ToConfirm {
    /// The battery answered once: ask again soon (not in a minute).
    pub battery: bool,
    /// The clock named a model not yet confirmed: ask its version again.
    pub clock: bool,
}

impl Identity {
    /// An identity for a board on a port that is (or is not) an rfcomm device.
    pub fn new(bluetooth_port: bool) -> Self {
        Identity {
            bluetooth_port,
            ..Identity::default()
        }
    }

    /// Whether `path` (with links already resolved by the caller) names a Bluetooth serial
    /// port: the kernel names a bound RFCOMM link `rfcommN`.
    pub fn is_bluetooth_port(path: &str) -> bool {
        let name = path.rsplit('/').next().unwrap_or(path);
        name.strip_prefix("rfcomm")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    }

    /// The port is (or turned out to be) an rfcomm device.
    pub fn set_bluetooth_port(&mut self, bluetooth: bool) {
        self.bluetooth_port = bluetooth;
    }

    pub fn bluetooth_port(&self) -> bool {
        self.bluetooth_port
    }

    /// A new connection: what the board says about itself is asked again (the battery
    /// reading is kept until a new one comes).
    pub fn link_up(&mut self) {
        self.answered_version = false;
        self.chesslink = false;
        self.long_serial = None;
        self.battery_answers = 0;
        self.clock_heard = None;
    }

    /// The link is down: another clock may be on the cable when it is back, and the next
    /// handshake asks its version again.
    pub fn link_down(&mut self) {
        self.clock_model = None;
        self.clock_heard = None;
    }

    /// Learn from one board input; returns whether anything changed.
    pub fn on_input(&mut self, input: &BoardInput) -> bool {
        let before = self.clone();
        match input {
            BoardInput::Identity(report) => self.on_report(report),
            BoardInput::Battery(b) => {
                // Two answers settle it: more change nothing.
                self.battery_answers = (self.battery_answers + 1).min(2);
                self.battery_proven |= self.battery_answers >= 2;
                self.battery = Some(*b);
            }
            BoardInput::Scan(_)
            | BoardInput::Square { .. }
            | BoardInput::Clock(_)
            | BoardInput::Memory(_) => {}
        }
        *self != before
    }

    fn on_report(&mut self, report: &IdentityReport) {
        match report {
            // The short serial number is the one eboardd has always published (connectors
            // keep boards by it); the long one stands in for a board that reports no short
            // one, and tells a Revelation II.
            IdentityReport::SerialNumber(s) => self.serial_number.clone_from(s),
            IdentityReport::LongSerialNumber(s) => {
                if self.serial_number.is_empty() {
                    self.serial_number.clone_from(s);
                }
                self.long_serial = Some(s.clone());
            }
            IdentityReport::Firmware { major, minor } => {
                self.answered_version = true;
                self.firmware_version = format!("{major}.{minor:02}");
            }
            // The same model twice in a row is the clock's; a different one waits for its
            // own second answer, and the published model stays until then.
            IdentityReport::Clock(model) => {
                if self.clock_heard == Some(*model) {
                    self.clock_model = Some(*model);
                }
                self.clock_heard = Some(*model);
            }
            IdentityReport::ChessLinkFirmware { high, low } => {
                self.answered_version = true;
                self.chesslink = true;
                self.firmware_version = format!("{high}.{low:02}");
            }
        }
    }

    /// The `SerialNumber` property (empty until the board tells it).
    pub fn serial_number(&self) -> &str {
        &self.serial_number
    }

    /// The `FirmwareVersion` property (empty until the board tells it).
    pub fn firmware_version(&self) -> &str {
        &self.firmware_version
    }

    /// What was said once and waits for a second answer (see the module documentation).
    pub fn to_confirm(&self) -> ToConfirm {
        ToConfirm {
            battery: !self.bluetooth_port && !self.battery_proven && self.battery_answers == 1,
            clock: self.clock_heard.is_some() && self.clock_heard != self.clock_model,
        }
    }

    /// The clock behind the board, once it named itself twice on this connection.
    pub fn clock_model(&self) -> Option<ClockModel> {
        self.clock_model
    }

    /// The board's model, once known.
    pub fn model(&self) -> Option<BoardModel> {
        if self.chesslink {
            Some(BoardModel::ChessLink)
        } else if self.revelation_firmware().is_some() {
            Some(BoardModel::DgtRevelation2)
        } else if self.bluetooth_port || self.battery_answers >= 2 - u32::from(self.battery_proven)
        {
            Some(BoardModel::DgtBluetooth)
        } else if self.answered_version {
            Some(BoardModel::Dgt)
        } else {
            None
        }
    }

    /// A Revelation II's firmware, read from the start of its long serial number (`3.25…`).
    pub fn revelation_firmware(&self) -> Option<(u8, u8)> {
        let s = self.long_serial.as_deref()?.as_bytes();
        match s {
            [major, b'.', m1, m2, ..]
                if major.is_ascii_digit() && m1.is_ascii_digit() && m2.is_ascii_digit() =>
            {
                Some((major - b'0', (m1 - b'0') * 10 + (m2 - b'0')))
            }
            _ => None,
        }
    }

    /// Text for the clock display goes to a Revelation II's own display (0x0D): a Revelation
    /// II with firmware 3.25 or later on its cable. Over Bluetooth it shows itself as a DGT
    /// 3000 and takes the DGT 3000's text.
    pub fn revelation_text(&self) -> bool {
        !self.bluetooth_port
            && self
                .revelation_firmware()
                .is_some_and(|fw| fw >= REVELATION_TEXT_FIRMWARE)
    }

    /// The board turns its own reporting round when Black's pieces stand on its near side (a
    /// Revelation II from firmware 3.22): its fields come the right way round already.
    pub fn turns_itself(&self) -> bool {
        self.revelation_firmware()
            .is_some_and(|fw| fw >= REVELATION_SELF_TURNING_FIRMWARE)
    }

    /// The board has a battery worth asking about again (it answered, or it is on
    /// Bluetooth, where a board runs on its battery).
    pub fn has_battery(&self) -> bool {
        self.battery_answers > 0 || self.bluetooth_port
    }

    /// The last battery report.
    pub fn battery_status(&self) -> Option<BatteryStatus> {
        self.battery
    }

    /// The `Battery` property: (percent, charging), or (-1, false) before any report.
    pub fn battery(&self) -> (i32, bool) {
        self.battery
            .map_or(NO_BATTERY, |b| (i32::from(b.percent.min(100)), b.charging))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn battery(percent: u8, charging: bool) -> BoardInput {
        BoardInput::Battery(BatteryStatus {
            percent,
            charging,
            ..BatteryStatus::default()
        })
    }

    fn firmware(major: u8, minor: u8) -> BoardInput {
        BoardInput::Identity(IdentityReport::Firmware { major, minor })
    }

    fn long_serial(s: String) -> BoardInput {
        BoardInput::Identity(IdentityReport::LongSerialNumber(s))
    }

    #[test]
    fn a_chesslink_board_is_named_by_its_version_reply() {
        let mut id = Identity::new(false);
        assert_eq!(id.model(), None);
        id.on_input(&BoardInput::Identity(IdentityReport::ChessLinkFirmware {
            high: 1,
            low: 3,
        }));
        assert_eq!(id.model(), Some(BoardModel::ChessLink));
        assert_eq!(id.model().unwrap().as_str(), "chesslink");
        assert_eq!(id.firmware_version(), "1.03");
        assert!(!id.has_battery());
        // Another board may be on the port after a reconnection: it says again what it is.
        id.link_up();
        assert_eq!(id.model(), None);
    }

    #[test]
    fn rfcomm_ports_are_bluetooth() {
        assert!(Identity::is_bluetooth_port("/dev/rfcomm0"));
        assert!(Identity::is_bluetooth_port("rfcomm123"));
        assert!(!Identity::is_bluetooth_port("/dev/rfcomm"));
        assert!(!Identity::is_bluetooth_port("/dev/rfcommx"));
        assert!(!Identity::is_bluetooth_port("/dev/ttyACM0"));
        assert!(!Identity::is_bluetooth_port("/dev/rfcomm0/ttyUSB0"));
    }

    #[test]
    fn a_usb_board_is_dgt_once_it_answers_and_has_no_battery() {
        let mut id = Identity::new(false);
        assert_eq!(id.model(), None);
        assert_eq!(id.battery(), NO_BATTERY);
        assert!(id.on_input(&firmware(3, 10)));
        assert!(id.on_input(&long_serial("3000147740".into())));
        assert_eq!(id.model(), Some(BoardModel::Dgt));
        assert!(!id.has_battery());
        assert!(!id.revelation_text());
        assert_eq!(id.battery(), NO_BATTERY);
    }

    #[test]
    fn a_board_answering_the_battery_question_is_bluetooth() {
        let mut id = Identity::new(false);
        id.on_input(&firmware(3, 10));
        assert!(id.on_input(&battery(87, false)));
        // One answer may be a garbled frame: asked again, not named yet.
        assert_eq!(id.model(), Some(BoardModel::Dgt));
        assert!(id.has_battery() && id.to_confirm().battery);
        assert!(id.on_input(&battery(87, false)));
        assert_eq!(id.model(), Some(BoardModel::DgtBluetooth));
        assert!(!id.to_confirm().battery);
        assert_eq!(id.battery(), (87, false));
        assert!(!id.on_input(&battery(87, false)), "nothing new");
        assert!(id.on_input(&battery(86, true)));
        assert_eq!(id.battery(), (86, true));
        // Proven once: after a reconnection its first answer names it again.
        id.link_up();
        id.on_input(&battery(86, true));
        assert_eq!(id.model(), Some(BoardModel::DgtBluetooth));
        assert!(!id.to_confirm().battery);
        // A reconnection keeps the last reading until the next one.
        id.link_up();
        assert_eq!(id.battery(), (86, true));
        // An impossible percentage is capped, not passed on.
        id.on_input(&battery(127, false));
        assert_eq!(id.battery(), (100, false));
    }

    #[test]
    fn an_rfcomm_board_is_bluetooth_before_it_says_anything() {
        let id = Identity::new(true);
        assert_eq!(id.model(), Some(BoardModel::DgtBluetooth));
        assert!(id.has_battery());
        assert_eq!(id.battery(), NO_BATTERY);
    }

    #[test]
    fn a_revelation_is_known_by_its_long_serial_number() {
        let mut id = Identity::new(false);
        id.on_input(&long_serial("3.25001000".into()));
        assert_eq!(id.model(), Some(BoardModel::DgtRevelation2));
        assert_eq!(id.revelation_firmware(), Some((3, 25)));
        assert!(id.revelation_text());
        id.on_input(&long_serial("3.21001000".into()));
        assert_eq!(id.revelation_firmware(), Some((3, 21)));
        assert!(!id.revelation_text(), "3.21 has no text command");
        assert!(!id.turns_itself(), "3.21 does not turn its reporting");
        id.on_input(&long_serial("3.22001000".into()));
        assert!(id.turns_itself());
        // On Bluetooth it is a Revelation II showing itself as a DGT 3000.
        let mut bt = Identity::new(true);
        bt.on_input(&long_serial("3.30000001".into()));
        assert_eq!(bt.model(), Some(BoardModel::DgtRevelation2));
        assert!(!bt.revelation_text());
        // Not a firmware number: not a Revelation.
        for s in ["3000147740", "3.2", "x.25", "", "3,25001000"] {
            let mut id = Identity::new(false);
            id.on_input(&long_serial(s.into()));
            assert_eq!(id.revelation_firmware(), None, "{s:?}");
        }
    }

    fn clock(model: ClockModel) -> BoardInput {
        BoardInput::Identity(IdentityReport::Clock(model))
    }

    #[test]
    fn one_stray_battery_frame_does_not_name_a_usb_board_bluetooth() {
        let mut id = Identity::new(false);
        id.on_input(&firmware(3, 10));
        id.on_input(&battery(50, false));
        assert_eq!(id.model(), Some(BoardModel::Dgt));
        // A new connection starts the count again.
        id.link_up();
        id.on_input(&firmware(3, 10));
        id.on_input(&battery(50, false));
        assert_eq!(id.model(), Some(BoardModel::Dgt));
        assert!(id.to_confirm().battery, "asked again to make sure");
    }

    #[test]
    fn the_clock_is_named_by_the_same_answer_twice() {
        let mut id = Identity::new(false);
        id.on_input(&clock(ClockModel::Xl));
        assert_eq!(id.clock_model(), None);
        assert!(id.to_confirm().clock);
        id.on_input(&clock(ClockModel::Xl));
        assert_eq!(id.clock_model(), Some(ClockModel::Xl));
        assert!(!id.to_confirm().clock);
        // A garbled ack naming another model does not rename it; the same model twice does.
        id.on_input(&clock(ClockModel::Dgt3000));
        assert_eq!(id.clock_model(), Some(ClockModel::Xl));
        assert!(id.to_confirm().clock);
        id.on_input(&clock(ClockModel::Xl));
        assert_eq!(id.clock_model(), Some(ClockModel::Xl));
        id.on_input(&clock(ClockModel::Dgt3000));
        id.on_input(&clock(ClockModel::Dgt3000));
        assert_eq!(id.clock_model(), Some(ClockModel::Dgt3000));
        // Another clock may be on the cable after a reconnection: asked again.
        id.link_down();
        assert_eq!(id.clock_model(), None);
        id.on_input(&clock(ClockModel::Xl));
        assert_eq!(id.clock_model(), None);
    }
}
