//! The arguments of `eboardctl simulate`, shared by the DGT simulation (`simulate`) and the
//! ChessLink one (`simulate_chesslink`), each of which reads them.

use std::path::PathBuf;

use eboard_sim::ClockKind;

/// Arguments of `eboardctl simulate`.
#[derive(Debug, Clone, clap::Args)]
pub struct SimulateArgs {
    /// PGN file whose games are played one after another (default: a bundled real game).
    #[arg(long, value_name = "FILE")]
    pub pgn: Option<PathBuf>,
    /// Keep a symlink to the virtual serial port here (e.g. a path in the daemon's config).
    #[arg(long, value_name = "PATH")]
    pub link: Option<PathBuf>,
    /// Play this many times faster than people do (the clock runs just as fast).
    #[arg(long, default_value_t = 1.0, value_name = "X")]
    pub speed: f64,
    /// Black's pieces on the board's connector side.
    #[arg(long)]
    pub reversed: bool,
    /// No clock behind the board.
    #[arg(long)]
    pub no_clock: bool,
    /// Seed of the human handling (which variants, which pauses).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Move pieces cleanly (lift + place), without human noise.
    #[arg(long)]
    pub clean: bool,
    /// Exit once the games are over instead of keeping the board connected until Ctrl-C.
    #[arg(long)]
    pub exit_when_done: bool,
    /// End each game that has a result (1-0, 0-1, 1/2-1/2) with the DGT result gesture: both
    /// kings on the centre squares.
    #[arg(long)]
    pub result_gesture: bool,
    /// Set the clock to this time control in its FIDE mode, in the grammar of the daemon's
    /// `time_control` (e.g. "40/5400+30:1800+30", "40/5400d30:1800d30", "5400b5"); default:
    /// 3 minutes + 2 s a move.
    #[arg(long, value_name = "CONTROL")]
    pub time_control: Option<eboard_core::arbiter::timecontrol::TimeControl>,
    /// Which family of board: `dgt` (a DGT e-board and clock; `--model` says which) or
    /// `chesslink` (a Millennium ChessLink board: every piece named, 81 LEDs, no clock; serve
    /// it with `protocol = "chesslink"`).
    #[arg(long, value_enum, default_value_t = SimFamily::Dgt)]
    pub board: SimFamily,
    /// Which DGT board: `dgt` (the USB e-board), `bluetooth` (a Bluetooth e-board with a
    /// battery, whose link drops now and then with `--drops`), `revelation2` (a Revelation II;
    /// `--firmware` says which).
    #[arg(long, value_enum, default_value_t = SimModel::Dgt)]
    pub model: SimModel,
    /// A Bluetooth board's battery at the start, percent.
    #[arg(long, default_value_t = 80, value_name = "PERCENT",
          value_parser = clap::value_parser!(u8).range(0..=100))]
    pub battery: u8,
    /// A Bluetooth board's link drops for 1–30 s every one to four minutes (its battery goes
    /// down a point at each), as out of range or behind a phone.
    #[arg(long)]
    pub drops: bool,
    /// A Revelation II's firmware: 3.25 or later shows text on its own display and turns its
    /// reporting round itself (from 3.22); 3.21 does neither.
    #[arg(long, default_value = "3.25", value_name = "X.YY", value_parser = parse_firmware)]
    pub firmware: (u8, u8),
    /// The clock behind the board: dgt3000 (version 2.0, eight characters of text), dgt-xl
    /// (version 1.14, six 7-segment digits), or dgt-xl-quirky (an XL that answers text with
    /// the undocumented acknowledgement (0x20, 0, 0, 0)).
    #[arg(long, value_enum, default_value = "dgt3000", value_name = "MODEL")]
    pub clock: SimClock,
    /// How the clock moves to the next period of --time-control: time (when a period's time
    /// runs out, steady flag: DGT 3000 FIDE modes, XL options 8, 9, 17, 18) or moves (at the
    /// press the XL's own move counter counts as the period's last: option 13, option 00).
    #[arg(long, default_value = "time", value_name = "HOW")]
    pub clock_periods: eboard_core::vocab::ClockPeriods,
}

/// The families of board `eboardctl simulate` offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SimFamily {
    Dgt,
    Chesslink,
}

/// The boards `eboardctl simulate` offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SimModel {
    Dgt,
    Bluetooth,
    Revelation2,
}

/// "3.25" → (3, 25).
pub(crate) fn parse_firmware(text: &str) -> Result<(u8, u8), String> {
    let bad = || format!("\"{text}\" is not a firmware number like 3.25");
    let (major, minor) = text.split_once('.').ok_or_else(bad)?;
    if minor.len() != 2 {
        return Err(bad());
    }
    Ok((
        major.parse().map_err(|_| bad())?,
        minor.parse().map_err(|_| bad())?,
    ))
}

/// The clock models `eboardctl simulate --clock` offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SimClock {
    Dgt3000,
    DgtXl,
    DgtXlQuirky,
}

impl SimClock {
    pub(crate) fn kind(self) -> ClockKind {
        match self {
            SimClock::Dgt3000 => ClockKind::Dgt3000,
            SimClock::DgtXl => ClockKind::Xl { quirky_acks: false },
            SimClock::DgtXlQuirky => ClockKind::Xl { quirky_acks: true },
        }
    }
}
