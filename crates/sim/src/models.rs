//! The DGT boards besides the USB e-board the simulator is by default: a Bluetooth e-board
//! (battery powered, its battery answered on 0x4C; its link drops are the pty's unplug and
//! replug) and a Revelation II (its firmware leads its long serial number; text on its own
//! display with 0x0D from firmware 3.25; from 3.22 it turns its own reporting round when
//! Black's pieces stand on its near side).
//!
//! A board without a battery ([`BoardOptions::battery`] `None`, the USB board) leaves the
//! battery question unanswered.

pub use crate::kinds::{Reporting, Revelation, SimBattery, turned_reporting};
use crate::virtual_board::BoardOptions;

/// A DGT Bluetooth e-board (version 3.10, as the captures' boards), its battery at `percent`.
pub fn bluetooth_board(percent: u8) -> BoardOptions {
    BoardOptions {
        battery: Some(SimBattery {
            percent,
            charging: false,
        }),
        serial: "24680".into(),
        long_serial: "3000224680".into(),
        ..BoardOptions::default()
    }
}

/// A Revelation II with `firmware` (e.g. (3, 25)).
pub fn revelation_board(firmware: (u8, u8)) -> BoardOptions {
    let revelation = Revelation { firmware };
    BoardOptions {
        revelation: Some(revelation),
        serial: "31415".into(),
        long_serial: revelation.long_serial(),
        version: firmware,
        ..BoardOptions::default()
    }
}
