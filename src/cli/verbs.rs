//! The arbiter verbs: `new-game`, `set-position`, `tags`, `rules`, `takeback`, `accept-claim`,
//! `adjudicate`. Each takes the board first and calls the contract's method of the same name;
//! a refusal comes back as the daemon's named error (exit 1). Nothing is validated here that
//! the daemon validates: the daemon is the one authority on what a board accepts.

use std::collections::HashMap;

use crate::cli::client::Client;
use crate::client::error::CtlError;

/// One arbiter verb and its arguments.
#[derive(Debug, Clone, PartialEq, clap::Subcommand)]
pub enum Verb {
    /// Start a new game from the standard start position.
    NewGame {
        /// The board: its name or object id.
        board: String,
    },
    /// Set up a position (FEN) and start a game from it.
    SetPosition {
        /// The board: its name or object id.
        board: String,
        /// The position in FEN; its six fields may be given as one argument or as several.
        #[arg(required = true, num_args = 1.., allow_hyphen_values = true)]
        fen: Vec<String>,
    },
    /// Set PGN tags of the current game (`White='Doe, J.' Round=3`).
    Tags {
        /// The board: its name or object id.
        board: String,
        /// Tags as KEY=VALUE.
        #[arg(required = true, num_args = 1.., value_parser = parse_tag)]
        tags: Vec<(String, String)>,
    },
    /// Change the rules of play: standard, rapid or blitz.
    Rules {
        /// The board: its name or object id.
        board: String,
        /// standard, rapid or blitz.
        rules: String,
    },
    /// Take back the last move.
    Takeback {
        /// The board: its name or object id.
        board: String,
    },
    /// Accept a claim that is available right now (see `status`).
    AcceptClaim {
        /// The board: its name or object id.
        board: String,
        /// The claiming player: white or black.
        player: String,
        /// threefold-repetition, fifty-moves, illegal-move, win-on-time or quickplay-finish.
        kind: String,
        /// The claim's detail as `status` shows it (e.g. the UCI move it depends on).
        detail: Option<String>,
    },
    /// Record a player's incorrect repetition or fifty-move claim (9.5) with the edition's
    /// penalty; play goes on (with an intended move, that move must be made next).
    RejectClaim {
        /// The board: its name or object id.
        board: String,
        /// The claiming player: white or black.
        player: String,
        /// threefold-repetition or fifty-moves.
        kind: String,
        /// The intended move written with the claim (UCI), if any.
        detail: Option<String>,
    },
    /// Show TEXT on the board's clock for a few seconds, then the times again (up to 8
    /// characters on a DGT 3000, 6 on an XL): which clock is on which board?
    ClockMessage {
        /// The board: its name or object id.
        board: String,
        /// Printable ASCII; several words are joined with spaces.
        #[arg(required = true, num_args = 1.., allow_hyphen_values = true)]
        text: Vec<String>,
    },
    /// Decide the game: 1-0, 0-1 or 1/2-1/2, with a reason for the record.
    Adjudicate {
        /// The board: its name or object id.
        board: String,
        /// 1-0, 0-1 or 1/2-1/2.
        result: String,
        /// Why (free text; several words are joined with spaces).
        #[arg(num_args = 0.., trailing_var_arg = true, allow_hyphen_values = true)]
        reason: Vec<String>,
    },
    /// Say which moves were made during a gap (the `Gap` property lists the candidates):
    /// UCI moves from the last known position; none: continue from the board.
    Resolve {
        /// The board: its name or object id.
        board: String,
        /// The moves in UCI (e.g. g1f3 b8c6 f1c4).
        moves: Vec<String>,
    },
}

/// Parses `KEY=VALUE`; the key must not be empty (the daemon checks the rest).
pub fn parse_tag(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_owned(), v.to_owned())),
        _ => Err(format!("{s:?} is not KEY=VALUE")),
    }
}

impl Verb {
    /// The board the verb acts on.
    pub fn board(&self) -> &str {
        match self {
            Verb::NewGame { board }
            | Verb::SetPosition { board, .. }
            | Verb::Tags { board, .. }
            | Verb::Rules { board, .. }
            | Verb::Takeback { board }
            | Verb::AcceptClaim { board, .. }
            | Verb::RejectClaim { board, .. }
            | Verb::ClockMessage { board, .. }
            | Verb::Adjudicate { board, .. }
            | Verb::Resolve { board, .. } => board,
        }
    }

    /// What was done, for the confirmation line.
    pub fn done(&self, name: &str) -> String {
        match self {
            Verb::NewGame { .. } => format!("{name}: new game started"),
            Verb::SetPosition { fen, .. } => {
                format!("{name}: game started from {}", fen.join(" "))
            }
            Verb::Tags { tags, .. } => {
                let keys: Vec<&str> = tags.iter().map(|(k, _)| k.as_str()).collect();
                format!("{name}: tags set: {}", keys.join(", "))
            }
            Verb::Rules { rules, .. } => format!("{name}: rules are now {rules}"),
            Verb::Takeback { .. } => format!("{name}: last move taken back"),
            Verb::AcceptClaim { player, kind, .. } => {
                format!("{name}: {player}'s {kind} claim accepted")
            }
            Verb::RejectClaim { player, kind, .. } => {
                format!("{name}: {player}'s {kind} claim rejected (9.5); play goes on")
            }
            Verb::ClockMessage { text, .. } => {
                format!("{name}: the clock shows {:?}", text.join(" "))
            }
            Verb::Adjudicate { result, .. } => format!("{name}: adjudicated {result}"),
            Verb::Resolve { moves, .. } if moves.is_empty() => {
                format!("{name}: gap resolved: play continues from the board")
            }
            Verb::Resolve { moves, .. } => {
                format!("{name}: gap resolved: {}", moves.join(" "))
            }
        }
    }
}

/// Calls the verb's method on its board and prints a confirmation line.
pub async fn run(client: &Client, verb: &Verb) -> Result<(), CtlError> {
    let board = client.board(verb.board()).await?;
    let proxy = client.board_proxy(&board.path).await?;
    let reply = match verb {
        Verb::NewGame { .. } => proxy.new_game().await,
        Verb::SetPosition { fen, .. } => proxy.set_position(&fen.join(" ")).await,
        Verb::Tags { tags, .. } => {
            let map: HashMap<&str, &str> =
                tags.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            proxy.set_tags(map).await
        }
        Verb::Rules { rules, .. } => proxy.set_rules(rules).await,
        Verb::Takeback { .. } => proxy.take_back().await,
        Verb::AcceptClaim {
            player,
            kind,
            detail,
            ..
        } => {
            proxy
                .accept_claim(player, kind, detail.as_deref().unwrap_or(""))
                .await
        }
        Verb::RejectClaim {
            player,
            kind,
            detail,
            ..
        } => {
            proxy
                .reject_claim(player, kind, detail.as_deref().unwrap_or(""))
                .await
        }
        Verb::ClockMessage { text, .. } => proxy.show_clock_message(&text.join(" ")).await,
        Verb::Adjudicate { result, reason, .. } => {
            proxy.adjudicate(result, &reason.join(" ")).await
        }
        Verb::Resolve { moves, .. } => proxy.resolve_gap(moves).await,
    };
    reply.map_err(|e| CtlError::from_call(e, &client.bus))?;
    crate::cli::print_text(&verb.done(&board.props.name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_parse_as_key_value() {
        assert_eq!(
            parse_tag("White=Doe, J."),
            Ok(("White".into(), "Doe, J.".into()))
        );
        assert_eq!(parse_tag("Round="), Ok(("Round".into(), String::new())));
        assert_eq!(parse_tag("a=b=c"), Ok(("a".into(), "b=c".into())));
        assert!(parse_tag("=x").is_err());
        assert!(parse_tag("White").is_err());
    }

    #[test]
    fn confirmation_lines_name_the_board() {
        let v = Verb::Tags {
            board: "b1".into(),
            tags: vec![("White".into(), "A".into()), ("Round".into(), "3".into())],
        };
        assert_eq!(v.board(), "b1");
        assert_eq!(v.done("board-1"), "board-1: tags set: White, Round");
        let v = Verb::Adjudicate {
            board: "b1".into(),
            result: "1-0".into(),
            reason: vec![],
        };
        assert_eq!(v.done("board-1"), "board-1: adjudicated 1-0");
        let v = Verb::Resolve {
            board: "b1".into(),
            moves: vec!["g1f3".into(), "b8c6".into()],
        };
        assert_eq!(v.board(), "b1");
        assert_eq!(v.done("board-1"), "board-1: gap resolved: g1f3 b8c6");
    }
}
