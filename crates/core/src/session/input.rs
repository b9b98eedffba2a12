//! What a session is given: its board's configuration, its inputs (board inputs, ticks,
//! the link, operator commands) and the operator's commands, parsed once at the edge.

use serde::{Deserialize, Serialize};

use crate::arbiter::ArbiterConfig;
use crate::board_input::BoardInput;
use crate::vocab::{
    ClaimKind, CommandError, GameResult, OrientationSetting, Player, Rules, Variant,
};

/// Everything a session needs to know about its board, from the configuration.
///
/// Each setting is held once. The Laws' and the clock's settings (rules, edition, guidelines
/// III, White's display, time control, clock periods) are the arbiter's [`ArbiterConfig`],
/// held here as the field `arbiter` (serialized flat, as the settings always were); a running
/// session hands that part to its arbiter and keeps the rest as a `SessionConfig<()>` (see
/// [`SessionConfig::split`]), so `SetRules` changes the one place the rules are.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SessionConfig<A = ArbiterConfig> {
    /// The board's name (PGN "Board" tag, the `Name` property).
    pub name: String,
    /// Where the board is plugged in (the `Port` property). The session never opens it: it
    /// only shows it, like the name.
    #[serde(default)]
    pub port: String,
    /// The arbiter's settings: rules, edition, guidelines III, White's display, time control
    /// and clock periods (`()` in a running session: its arbiter holds them).
    #[serde(flatten)]
    pub arbiter: A,
    pub orientation: OrientationSetting,
    /// Tags for every game on this board (Event, Round, White, Black, ...).
    pub tags: Vec<(String, String)>,
    /// The table number (`number` in the configuration; 0: none).
    #[serde(default)]
    pub number: u32,
    #[serde(default)]
    pub variant: Variant,
    /// For measuring only (`benches/gap_soak`: how often a gap needs the arbiter without
    /// the clock's witness): the gap search ignores the clock's times after a gap. Never
    /// set from a configuration file.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gap_without_clock_witness: bool,
}

impl<A> SessionConfig<A> {
    /// The arbiter's part and the rest: the session keeps the rest, its arbiter the part.
    pub fn split(self) -> (SessionConfig<()>, A) {
        let SessionConfig {
            name,
            port,
            arbiter,
            orientation,
            tags,
            number,
            variant,
            gap_without_clock_witness,
        } = self;
        let rest = SessionConfig {
            name,
            port,
            arbiter: (),
            orientation,
            tags,
            number,
            variant,
            gap_without_clock_witness,
        };
        (rest, arbiter)
    }
}

impl SessionConfig<()> {
    /// The whole configuration again, with the arbiter's part `arbiter`.
    pub fn with_arbiter(&self, arbiter: ArbiterConfig) -> SessionConfig {
        SessionConfig {
            name: self.name.clone(),
            port: self.port.clone(),
            arbiter,
            orientation: self.orientation,
            tags: self.tags.clone(),
            number: self.number,
            variant: self.variant,
            gap_without_clock_witness: self.gap_without_clock_witness,
        }
    }
}

/// What the session is fed.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// What the board (or the clock behind it) reported, as its driver translated it.
    Board(BoardInput),
    /// An operator command (a D-Bus method call).
    Command(Command),
    /// Nothing happened; lets time-based logic (a settled illegal placement, flag fall while
    /// the clock is silent) run.
    Tick,
    /// The serial link came up (`true`) or was lost (`false`). While it is down, a silent
    /// clock says nothing about the players' time, so no flag can fall by silence; and what
    /// happens on the board meanwhile is a gap (see `crate::recovery`), never an illegal move.
    Link(bool),
    /// A frame was lost on the line (bytes that could not be decoded cut a message): the
    /// next whole board decides whether anything was missed. The session asks for one
    /// ([`BoardRequest::SendBoard`](crate::recovery::BoardRequest::SendBoard)).
    LineLoss,
    /// The board cannot be asked for its memory ([`BoardRequest::ReadMemory`](crate::recovery::BoardRequest::ReadMemory); a listen-only
    /// link): the gap is resolved without it.
    MemoryUnavailable,
}

/// Operator commands: the mutating methods of the contract's `org.eboardd.Bridge1.Board`.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    NewGame,
    SetPosition(String),
    SetTags(Vec<(String, String)>),
    SetRules(Rules),
    TakeBack,
    AcceptClaim {
        player: Player,
        kind: ClaimKind,
        detail: String,
    },
    Adjudicate {
        result: GameResult,
        reason: String,
    },
    /// The moves made during a gap, in UCI, as the arbiter knows them; none: continue from
    /// the board in a new segment.
    ResolveGap(Vec<String>),
    /// Show a text on the board's clock for a few seconds. The serial link writes it (the
    /// board task handles it before the session; see `dgt::clock_channel`).
    ShowClockMessage(String),
    /// 9.5: a player's incorrect repetition or fifty-move claim (see `arbiter::rejected`).
    RejectClaim {
        player: Player,
        kind: ClaimKind,
        detail: String,
    },
}

/// The commands whose arguments are contract words, from the strings a caller sent: the
/// edge (the D-Bus layer) parses them here, once, with the contract's refusals.
impl Command {
    /// `SetRules(rules)`; an unknown rule set is an invalid argument.
    pub fn set_rules(rules: &str) -> Result<Command, CommandError> {
        rules.parse().map(Command::SetRules).map_err(|_| {
            CommandError::InvalidArgument(format!(
                "`{}` is not a rule set; use standard, rapid or blitz",
                crate::vocab::excerpt(rules)
            ))
        })
    }

    /// `AcceptClaim(player, kind, detail)`; a player or kind that does not exist names no
    /// claim in `Claims`, so it is refused as not available.
    pub fn accept_claim(player: &str, kind: &str, detail: String) -> Result<Command, CommandError> {
        let unavailable = |e: crate::vocab::UnknownWord| {
            CommandError::ClaimNotAvailable(format!(
                "{e}; the Claims property lists the claims that can be accepted"
            ))
        };
        Ok(Command::AcceptClaim {
            player: player.parse().map_err(unavailable)?,
            kind: kind.parse().map_err(unavailable)?,
            detail,
        })
    }

    /// `RejectClaim(player, kind, detail)`; an unknown player or kind is an invalid argument.
    pub fn reject_claim(player: &str, kind: &str, detail: String) -> Result<Command, CommandError> {
        let player = player.parse().map_err(|_| {
            CommandError::InvalidArgument(format!(
                "`{}` is not white or black",
                crate::vocab::excerpt(player)
            ))
        })?;
        let kind = kind.parse().map_err(|_| {
            CommandError::InvalidArgument(format!(
                "`{}` is not a claim 9.5 penalises; an incorrect claim is a \
                 threefold-repetition or fifty-moves claim",
                crate::vocab::excerpt(kind)
            ))
        })?;
        Ok(Command::RejectClaim {
            player,
            kind,
            detail,
        })
    }

    /// `Adjudicate(result, reason)`; a string that is no result is an invalid argument (and
    /// so is `*`, which the arbiter refuses).
    pub fn adjudicate(result: &str, reason: String) -> Result<Command, CommandError> {
        let result = result.parse().map_err(|_| {
            CommandError::InvalidArgument(format!(
                "`{}` is not a result; use 1-0, 0-1 or 1/2-1/2",
                crate::vocab::excerpt(result)
            ))
        })?;
        Ok(Command::Adjudicate { result, reason })
    }
}
