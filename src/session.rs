//! The pure per-board state machine: tracker + clock + arbiter + game, time passed in.
//!
//! The daemon feeds every decoded serial message and every operator command into
//! [`Session::handle`] with the current time in milliseconds, publishes the returned
//! [`Event`]s (after journalling them) and re-reads [`Session::view`] to announce property
//! changes. A session rebuilt with [`Session::restore`] from the journalled events is
//! indistinguishable from the one that produced them.

use serde::{Deserialize, Serialize};

use crate::protocol::Message;

/// Milliseconds on the caller's monotonic clock. Only differences matter.
pub type Millis = u64;

/// Rules of play (contract section 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Rules {
    #[default]
    Standard,
    Rapid,
    Blitz,
}

/// Which edition of the FIDE Laws applies (contract section 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum Edition {
    #[default]
    #[serde(rename = "fide-2023")]
    Fide2023,
    #[serde(rename = "fide-2005")]
    Fide2005,
}

/// Which half of the clock display (seen from its front) shows White's time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum WhiteDisplay {
    Left,
    Right,
    #[default]
    Auto,
}

/// Board orientation setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum OrientationSetting {
    Normal,
    Reversed,
    #[default]
    Auto,
}

/// Everything a session needs to know about its board, from the configuration.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SessionConfig {
    /// The board's name (PGN "Board" tag).
    pub name: String,
    pub rules: Rules,
    pub edition: Edition,
    pub guidelines_iii: bool,
    pub white_display: WhiteDisplay,
    pub orientation: OrientationSetting,
    /// PGN TimeControl-style periods, e.g. `40/5400+30:1800+30`.
    pub time_control: Option<String>,
    /// Tags for every game on this board (Event, Round, White, Black, ...).
    pub tags: Vec<(String, String)>,
}

/// What the session is fed.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// A decoded message from the board (or the clock behind it).
    Board(Message),
    /// An operator command (a D-Bus method call).
    Command(Command),
    /// Nothing happened; lets time-based logic (flag fall while the clock is silent) run.
    Tick,
}

/// Operator commands: the mutating methods of the contract's `org.eboardd.Bridge1.Board`.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    NewGame,
    SetPosition(String),
    SetTags(Vec<(String, String)>),
    SetRules(String),
    TakeBack,
    AcceptClaim {
        player: String,
        kind: String,
        detail: String,
    },
    Adjudicate {
        result: String,
        reason: String,
    },
}

/// Why a command was refused; maps 1:1 to the contract's named D-Bus errors.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    /// `org.eboardd.Bridge1.Error.InvalidFen`
    #[error("{0}")]
    InvalidFen(String),
    /// `org.eboardd.Bridge1.Error.InvalidArgument`
    #[error("{0}")]
    InvalidArgument(String),
    /// `org.eboardd.Bridge1.Error.NothingToTakeBack`
    #[error("{0}")]
    NothingToTakeBack(String),
    /// `org.eboardd.Bridge1.Error.ClaimNotAvailable`
    #[error("{0}")]
    ClaimNotAvailable(String),
}

/// What a session reports. The variants named after contract signals carry exactly the
/// signal's arguments; the others exist so the journal can rebuild the game record.
/// Every event is journalled (JSON, one per line) before it is published.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Event {
    GameStarted {
        fen: String,
    },
    MovePlayed {
        ply: u32,
        san: String,
        uci: String,
        fen: String,
        white_ms: u64,
        black_ms: u64,
    },
    MoveRetracted {
        ply: u32,
        fen: String,
    },
    IllegalPlacement {
        player: String,
        description: String,
        placement: String,
    },
    IllegalMoveCompleted {
        player: String,
        count: u32,
        description: String,
    },
    FlagFell {
        player: String,
    },
    GameEnded {
        result: String,
        termination: String,
    },
    /// Game-record facts that are not contract signals but must survive a restart
    /// (tags, rules, accepted claims, penalties, arbiter decisions, board identity).
    Record(RecordFact),
}

/// Journal-only facts (see [`Event::Record`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "fact", rename_all = "kebab-case")]
pub enum RecordFact {
    Tags {
        tags: Vec<(String, String)>,
    },
    Rules {
        rules: Rules,
        edition: Edition,
    },
    ClaimAccepted {
        player: String,
        kind: String,
        detail: String,
    },
    Penalty {
        player: String,
        description: String,
    },
    Comment {
        text: String,
    },
}

/// The session's state as the contract's `org.eboardd.Bridge1.Board` properties show it
/// (all but `Name`, `Port` and `Connected`, which belong to the serial link).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct View {
    pub serial_number: String,
    pub firmware_version: String,
    pub rules: String,
    pub edition: String,
    /// `waiting`, `playing` or `finished`.
    pub state: String,
    pub fen: String,
    pub placement: String,
    pub in_sync: bool,
    /// `white` or `black`.
    pub turn: String,
    pub moves: Vec<String>,
    pub pgn: String,
    pub clock_connected: bool,
    pub white_time_ms: u64,
    pub black_time_ms: u64,
    /// `white`, `black` or `none`.
    pub clock_running: String,
    /// (player, kind, detail)
    pub claims: Vec<(String, String, String)>,
    pub pending_illegal: String,
    /// Completed illegal moves (white, black).
    pub illegal_moves: (u32, u32),
    pub result: String,
    pub termination: String,
}

/// One board's game state machine.
///
/// PROVISIONAL: the real implementation (tracker + arbiter + game) replaces this body; the
/// method signatures are the stable interface the daemon codes against.
#[derive(Debug, Clone)]
pub struct Session {
    config: SessionConfig,
    view: View,
}

impl Session {
    /// A session for a board with no game yet.
    pub fn new(config: SessionConfig) -> Self {
        let view = View {
            state: "waiting".into(),
            turn: "white".into(),
            clock_running: "none".into(),
            result: "*".into(),
            ..View::default()
        };
        Session { config, view }
    }

    /// Rebuild a session from its journalled events (oldest first).
    pub fn restore(config: SessionConfig, journal: &[Event]) -> Self {
        let _ = journal;
        Self::new(config)
    }

    /// Feed one input at time `now`; returns the events it caused, or why a command was refused.
    pub fn handle(&mut self, input: Input, now: Millis) -> Result<Vec<Event>, CommandError> {
        let _ = (now, &self.config);
        match input {
            Input::Board(Message::SerialNumber(s)) | Input::Board(Message::LongSerialNumber(s)) => {
                self.view.serial_number = s;
            }
            Input::Board(Message::Version { major, minor }) => {
                self.view.firmware_version = format!("{major}.{minor:02}");
            }
            Input::Command(_) => {
                return Err(CommandError::InvalidArgument("not available yet".into()));
            }
            _ => {}
        }
        Ok(Vec::new())
    }

    /// The current state as the board's D-Bus properties show it.
    pub fn view(&self) -> &View {
        &self.view
    }
}
