//! What any electronic board and the clock behind it report, in chess terms: the seam between
//! a board's driver (`crate::dgt` today) and everything that follows a game (the session, the
//! tracker, the recovery, the arbiter).
//!
//! A driver turns its wire into [`BoardInput`]s: a whole board as read, one square changed, a
//! clock reading, what the board says about itself ([`IdentityReport`]), its battery, and the
//! board's own move memory ([`MemoryEvent`]s) for the recovery after a gap. What only
//! concerns the line (acknowledgements of commands in flight, empty clock frames, bus
//! addresses) stays in the driver.
//!
//! Squares are numbered in the board's own frame: index 0 is the square in the far left
//! corner seen from the board's reference side (a8 when White sits there), then along that
//! rank (b8 … h8), rank by rank towards the near side, index 63 the near right corner (h1).
//! The board does not know how it lies on the table: the core applies the orientation
//! ([`crate::board::Orientation`], [`crate::board::Placement::from_wire`]).

use shakmaty::Piece;

/// What one square holds as the board senses it (`None` = empty, or nothing the board can
/// name as a chess piece).
pub type SquareContent = Option<Piece>;

/// A whole board as read, in the board's own frame (see the module documentation).
pub type Scan = [SquareContent; 64];

/// One input from a board, in chess terms (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum BoardInput {
    /// The whole board as read, square 0 = the far left corner (a8 in the normal orientation).
    Scan(Box<Scan>),
    /// One square changed (index 0..=63 in the same frame).
    Square { index: u8, content: SquareContent },
    /// The clock's displays and lever as it reports them.
    Clock(ClockReading),
    /// Something the board (or its clock) says about itself.
    Identity(IdentityReport),
    /// The board's battery.
    Battery(BatteryStatus),
    /// The board's own move memory, oldest entry first (asked for after a gap).
    Memory(Vec<MemoryEvent>),
}

/// What a board says about itself (the `SerialNumber`, `FirmwareVersion`, `ClockModel` and
/// `BoardModel` properties come from these; see `identity`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum IdentityReport {
    /// Its serial number as it reports it (the short one where there are two).
    SerialNumber(String),
    /// A longer serial number (a DGT board's 10 characters; a Revelation II's begins with its
    /// firmware number).
    LongSerialNumber(String),
    /// Its firmware version (major, minor): the board answers, so it is there.
    Firmware { major: u8, minor: u8 },
    /// The clock behind it, as the clock names itself.
    Clock(ClockModel),
    /// A Millennium ChessLink board's firmware version (its two bytes): the board answers,
    /// and it is a ChessLink board.
    ChessLinkFirmware { high: u8, low: u8 },
}

/// Which clock is behind the board, as it names itself (contract: the `ClockModel` property).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClockModel {
    /// DGT 3000: 8 ASCII characters on its display.
    Dgt3000,
    /// DGT XL: six 7-segment digits.
    Xl,
}

impl ClockModel {
    /// The contract's word for it (the `ClockModel` property).
    pub fn contract_name(self) -> &'static str {
        match self {
            ClockModel::Dgt3000 => "dgt3000",
            ClockModel::Xl => "dgt-xl",
        }
    }

    /// How many characters its display shows.
    pub fn width(self) -> usize {
        match self {
            ClockModel::Dgt3000 => 8,
            ClockModel::Xl => 6,
        }
    }
}

/// One entry of a board's move memory, in the order the board wrote them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemoryEvent {
    /// A square changed; `quick`: less than a scan (~250 ms) since the entry before.
    Square {
        index: u8,
        content: SquareContent,
        quick: bool,
    },
    /// The clock's lever was pressed; `time` is the pressing side's display then.
    Press { left: bool, time: DisplayTime },
    /// The board was powered up: the squares written next list every piece.
    PowerUp,
}

/// One clock display's time as shown.
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

/// Per-display indicators of a clock reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct DisplayFlags {
    /// The flag fell and this side is blocked at zero.
    pub flag_fallen: bool,
    /// Time-per-move (Fischer/Bronstein) indicator on.
    pub time_per_move: bool,
    /// Flag shown while the clock may keep running (e.g. start of the next period).
    pub flag_shown: bool,
}

/// The state of the clock as a whole in a reading (DGT 3000 captures settle the meanings:
/// the left and right displays run one at a time, the lever leans one way).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct ClockStatus {
    /// The clock is running (not stopped with start/stop).
    pub running: bool,
    /// The lever's left side is pressed down (right side high, "/").
    pub lever_left_down: bool,
    /// Battery-low indicator.
    pub battery_low: bool,
    /// The left display is running.
    pub left_running: bool,
    /// The right display is running.
    pub right_running: bool,
    /// A clock is connected (otherwise the reading is invalid). Note that the derived
    /// `Default` says `false` here, i.e. "no clock".
    pub connected: bool,
}

/// One reading of the clock. Left and right are physical halves of the clock seen from its
/// front; they do not follow colours and do not swap with board orientation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct ClockReading {
    pub right: DisplayTime,
    pub right_flags: DisplayFlags,
    pub left: DisplayTime,
    pub left_flags: DisplayFlags,
    pub status: ClockStatus,
}

/// A battery report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct BatteryStatus {
    /// Capacity left, percent.
    pub percent: u8,
    /// Running or charging time left (hours, minutes); `None` when the board does not say.
    pub time_left: Option<(u8, u8)>,
    /// On-time (hours, minutes).
    pub on_time: (u8, u8),
    /// Standby time (days, hours, minutes).
    pub standby: (u8, u8, u8),
    pub charging: bool,
    pub discharging: bool,
}
