//! `eboardctl pgn BOARD`: the game as PGN on stdout, exactly as the daemon's `Pgn` property
//! holds it.

use crate::cli::client::Client;
use crate::client::error::CtlError;

/// The arguments of `pgn`.
#[derive(Debug, Clone, clap::Args)]
pub struct PgnArgs {
    /// The board: its name or object id.
    pub board: String,
}

/// Prints the board's game as PGN.
pub async fn run(client: &Client, args: &PgnArgs) -> Result<(), CtlError> {
    let board = client.board(&args.board).await?;
    crate::cli::print_text(board.props.pgn.trim_end())
}
