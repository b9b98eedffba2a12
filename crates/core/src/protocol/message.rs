//! Typed board → host messages (the decoder's output, the simulator's input).

use shakmaty::Piece;

/// Contents of one board field as the sensors report it (`None` = empty).
///
/// The DGT "magic pieces" (codes 0x0D–0x0F) and any unknown code are reported as `None`
/// by the decoder, which counts them; they never stand for a chess piece.
pub type FieldContent = Option<Piece>;

/// One clock display's time as shown (binary values, already decoded from BCD).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct DisplayTime {
    pub hours: u8,
    pub minutes: u8,
    pub seconds: u8,
}

impl DisplayTime {
    pub fn as_millis(self) -> u64 {
        (u64::from(self.hours) * 3600 + u64::from(self.minutes) * 60 + u64::from(self.seconds))
            * 1000
    }
}

/// Per-display indicator bits of a clock-times message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct DisplayFlags {
    /// The flag fell and this side is blocked at zero.
    pub flag_fallen: bool,
    /// Time-per-move (Fischer/Bronstein) indicator on.
    pub time_per_move: bool,
    /// Flag shown while the clock may keep running (e.g. start of the next period).
    pub flag_shown: bool,
}

/// The status byte of a clock-times message, with the bit meanings the real captures settle
/// (DGT 3000: bit 3 = left display running, bit 4 = right display running).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct ClockStatus {
    /// Bit 0: the clock is running (not stopped with start/stop).
    pub running: bool,
    /// Bit 1: the lever's left side is pressed down (right side high, "/").
    pub lever_left_down: bool,
    /// Bit 2: battery-low indicator.
    pub battery_low: bool,
    /// Bit 3: the left display is running.
    pub left_running: bool,
    /// Bit 4: the right display is running.
    pub right_running: bool,
    /// Bit 5 clear: a clock is connected (bit 5 set means the reading is invalid). Note that
    /// the derived `Default` says `false` here, i.e. "no clock".
    pub connected: bool,
}

/// A clock-times variant of DGT_MSG_BWTIME. Left and right are physical halves of the clock
/// seen from its front; they do not follow colours and do not swap with board orientation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct ClockTimes {
    pub right: DisplayTime,
    pub right_flags: DisplayFlags,
    pub left: DisplayTime,
    pub left_flags: DisplayFlags,
    pub status: ClockStatus,
}

/// A clock-ack variant of DGT_MSG_BWTIME with its four ack bytes rebuilt (bit 7 restored).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct ClockAck {
    pub bytes: [u8; 4],
}

/// DGT_MSG_BATTERY_STATUS payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct BatteryStatus {
    /// Capacity left, percent.
    pub percent: u8,
    /// Running or charging time left (hours, minutes); `None` when the board says 0x7F.
    pub time_left: Option<(u8, u8)>,
    /// On-time (hours, minutes).
    pub on_time: (u8, u8),
    /// Standby time (days, hours, minutes).
    pub standby: (u8, u8, u8),
    pub charging: bool,
    pub discharging: bool,
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
    ClockTimes(ClockTimes),
    ClockAck(ClockAck),
    /// An all-zero BWTIME payload, sent by some clocks after a command: carries nothing.
    /// (The decoder also reports a payload whose only set bits mean nothing, i.e. status
    /// bits 6-7, as empty.)
    /// (A [`ClockTimes`] whose payload would be all zero encodes to the same bytes.)
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
