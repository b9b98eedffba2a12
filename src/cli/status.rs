//! `eboardctl status BOARD`: the position as a diagram from White's side, clocks, side to
//! move, recent moves, claims, pending illegal placement, illegal-move counts and the result;
//! with `--json`, every property of the board as one JSON object.

use crate::cli::client::Client;
use crate::cli::render::{board_json, status_text};
use crate::client::error::CtlError;

/// The arguments of `status`.
#[derive(Debug, Clone, clap::Args)]
pub struct StatusArgs {
    /// The board: its name or object id.
    pub board: String,
}

/// Prints one board's status.
pub async fn run(client: &Client, json: bool, args: &StatusArgs) -> Result<(), CtlError> {
    let board = client.board(&args.board).await?;
    if json {
        crate::cli::print_json(&board_json(&board.props, &board.path))
    } else {
        crate::cli::print_text(status_text(&board.props, &board.path).trim_end())
    }
}
