//! The one event vocabulary: what a board's session reports, what the journal keeps, what the
//! shells publish (the contract's signals are the variants named after them) and the arbiter
//! rules. Each event also describes itself in one line ([`fmt::Display`]), the one text
//! `eboardctl watch` and `eboardctl decode --events` print.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::game::{Game, clk};
use crate::patch::Patch;
use crate::vocab::{ClaimKind, Edition, GameResult, Player, Rules, Termination, WhiteDisplay};

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
        player: Player,
        description: String,
        placement: String,
    },
    IllegalMoveCompleted {
        player: Player,
        count: u32,
        description: String,
    },
    FlagFell {
        player: Player,
    },
    GameEnded {
        result: GameResult,
        termination: Termination,
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
        player: Player,
        kind: ClaimKind,
        detail: String,
    },
    Penalty {
        player: Player,
        description: String,
    },
    Comment {
        text: String,
    },
    /// The clock's half White's time was learnt on (`white_display = "auto"`, learnt from the
    /// presses): `left` or `right`. A clock is not turned round while its game goes on, so a
    /// restart keeps the side: learnt again from the first presses after the gap, where a
    /// report can be late and a press hidden in the first reading, it could come out the
    /// wrong way round and make every later press the other player's.
    ClockSide {
        white_display: WhiteDisplay,
    },
    /// The whole game record: journalled when a game begins (and after a restore); what
    /// `Session::restore` starts from.
    Snapshot {
        game: Game,
    },
    /// What changed in the game record since the previous `Snapshot` or `Patch` (see
    /// [`crate::patch`]): the journal grows by a move's worth per move.
    Patch {
        patch: Patch,
    },
}

/// Whether an event goes into the journal. The journal holds what `Session::restore`
/// needs: game starts, the game record (snapshots and patches) and the settings (tags,
/// rules). The other events (the contract's signals, accepted claims, penalties) are views of
/// the game record and would only make the journal bigger.
pub fn is_journalled(event: &Event) -> bool {
    matches!(
        event,
        Event::GameStarted { .. }
            | Event::Record(
                RecordFact::Snapshot { .. }
                    | RecordFact::Patch { .. }
                    | RecordFact::Tags { .. }
                    | RecordFact::Rules { .. }
                    | RecordFact::ClockSide { .. }
            )
    )
}

impl Event {
    /// An accusation of a player: an illegal placement or a completed illegal move (what a
    /// gap, a move in progress or a story still open must never become).
    pub fn is_accusation(&self) -> bool {
        matches!(
            self,
            Event::IllegalPlacement { .. } | Event::IllegalMoveCompleted { .. }
        )
    }
}

/// "12." for a White move, "12..." for a Black one, from the FEN after the move; from the ply
/// count when that FEN cannot be read.
pub fn move_number(ply: u32, fen_after: &str) -> String {
    let fields: Vec<&str> = fen_after.split_whitespace().collect();
    let number = fields.get(5).and_then(|n| n.parse::<u32>().ok());
    match (fields.get(1).copied(), number) {
        (Some("b"), Some(n)) => format!("{n}."),
        (Some("w"), Some(n)) => format!("{}...", n.saturating_sub(1).max(1)),
        _ if ply % 2 == 1 => format!("{}.", ply.div_ceil(2)),
        _ => format!("{}...", ply / 2),
    }
}

/// The contract's signal name, then its arguments as a person reads them:
/// `MovePlayed 12. Nf3 (g1f3) white 0:03:10 black 0:02:58`.
impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::GameStarted { fen } => write!(f, "GameStarted {fen}"),
            Event::MovePlayed {
                ply,
                san,
                uci,
                fen,
                white_ms,
                black_ms,
            } => write!(
                f,
                "MovePlayed {} {san} ({uci}) white {} black {}",
                move_number(*ply, fen),
                clk(*white_ms),
                clk(*black_ms)
            ),
            Event::MoveRetracted { ply, .. } => write!(f, "MoveRetracted ply {ply}"),
            Event::IllegalPlacement {
                player,
                description,
                ..
            } => write!(f, "IllegalPlacement {player} to move: {description}"),
            Event::IllegalMoveCompleted {
                player,
                count,
                description,
            } => write!(f, "IllegalMoveCompleted {player} #{count}: {description}"),
            Event::FlagFell { player } => write!(f, "FlagFell {player}"),
            Event::GameEnded {
                result,
                termination,
            } => write!(f, "GameEnded {result} {termination}"),
            Event::Record(fact) => write!(f, "Record {fact}"),
        }
    }
}

impl fmt::Display for RecordFact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordFact::Tags { tags } => {
                f.write_str("tags")?;
                for (k, v) in tags {
                    write!(f, " {k}={v:?}")?;
                }
                Ok(())
            }
            RecordFact::Rules { rules, edition } => write!(f, "rules {rules:?} {edition:?}"),
            RecordFact::ClaimAccepted {
                player,
                kind,
                detail,
            } => write!(f, "claim accepted {player} {kind} {detail}"),
            RecordFact::Penalty {
                player,
                description,
            } => write!(f, "penalty {player}: {description}"),
            RecordFact::Comment { text } => write!(f, "comment {text:?}"),
            RecordFact::ClockSide { white_display } => {
                write!(f, "clock side: White's time on the {white_display}")
            }
            RecordFact::Snapshot { .. } => f.write_str("game record"),
            RecordFact::Patch { .. } => f.write_str("game record change"),
        }
    }
}
