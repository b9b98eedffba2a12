//! Typed board → host messages (the decoder's output, the simulator's input).

pub use crate::board_input::{
    BatteryStatus, ClockReading, ClockStatus, DisplayFlags, DisplayTime, SquareContent,
};

/// Contents of one board field as the sensors report it (`None` = empty).
///
/// The DGT "magic pieces" (codes 0x0D–0x0F) and any unknown code are reported as `None`
/// by the decoder, which counts them; they never stand for a chess piece.
pub type FieldContent = SquareContent;

/// A clock-ack variant of DGT_MSG_BWTIME with its four ack bytes rebuilt (bit 7 restored).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct ClockAck {
    pub bytes: [u8; 4],
}

/// One entry of the EEPROM move log (DGT_MSG_EE_MOVES).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EeEvent {
    /// A field changed; `quick` is set when less than ~250 ms passed since the previous tag.
    Field {
        field: u8,
        content: FieldContent,
        quick: bool,
    },
    /// A clock time written when the lever was pressed.
    Time {
        left: bool,
        time: DisplayTime,
    },
    PowerUp,
    Eof,
    FourRows,
    EmptyBoard,
    Downloaded,
    BeginPos,
    BeginPosRotated,
    StartTag,
    WatchdogAction,
    /// NOP (0x7F) or NOP2 (0x00); encoded as 0x7F.
    Nop,
}

/// A decoded board → host message.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Message {
    /// 64 fields in wire order (index 0 = a8 in the normal orientation).
    BoardDump(Box<[FieldContent; 64]>),
    /// One field changed (wire index 0..=63).
    FieldUpdate {
        field: u8,
        content: FieldContent,
    },
    /// A clock reading (DGT_MSG_BWTIME with times).
    ClockTimes(ClockReading),
    ClockAck(ClockAck),
    /// An all-zero BWTIME payload, sent by some clocks after a command: carries nothing.
    /// (The decoder also reports a payload whose only set bits mean nothing, i.e. status
    /// bits 6-7, as empty.)
    /// (A [`ClockReading`] whose payload would be all zero encodes to the same bytes.)
    ClockEmpty,
    /// Board firmware version, e.g. 1.80 or 3.1.
    Version {
        major: u8,
        minor: u8,
    },
    /// The serial number as sent: 5 ASCII digits, or on 1998-era boards 9 characters (the
    /// digits, a space and a 3-character storage version).
    SerialNumber(String),
    /// The 10-digit serial number (on Revelation II the first four characters are its
    /// firmware version).
    LongSerialNumber(String),
    /// The 14-bit bus address (the short serial number read as binary).
    BusAddress(u16),
    /// The board's identification text (7-bit ASCII, at most 256 characters).
    Trademark(String),
    BatteryStatus(BatteryStatus),
    /// The EEPROM move log, oldest tag first (see [`EeEvent`]).
    EeMoves(Vec<EeEvent>),
}
