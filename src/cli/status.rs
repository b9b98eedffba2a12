//! `eboardctl status BOARD`: the position as a diagram from White's side, clocks, side to
//! move, recent moves, claims, pending illegal placement, illegal-move counts and the result;
//! with `--json`, every property of the board as one JSON object. A board a running
//! `eboardctl broadcast` pushes to lichess gets a `broadcast` line (`Broadcast` in JSON).

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
    let broadcast = broadcast_lines(crate::client::board_id(&board.path));
    if json {
        let mut value = board_json(&board.props, &board.path);
        if let Some(map) = value.as_object_mut()
            && !broadcast.is_empty()
        {
            map.insert("Broadcast".into(), broadcast.into());
        }
        crate::cli::print_json(&value)
    } else {
        let mut props = board.props.clone();
        crate::cli::escape::props(&mut props);
        let mut text = status_text(&props, &board.path).trim_end().to_string();
        for line in broadcast {
            text.push('\n');
            text.push_str(&line);
        }
        crate::cli::print_text(&text)
    }
}

/// The `broadcast` lines of a board: how the pushes of each `eboardctl broadcast` running on
/// this host fare for it (read from their state files, see
/// [`crate::bridge::broadcast::state`]).
pub fn broadcast_lines(board_id: &str) -> Vec<String> {
    use crate::bridge::broadcast::state;
    let states = state::read_all(|k| std::env::var(k).ok());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    // What a push reports comes from a server: one line each, control characters escaped.
    state::lines_for(&states, board_id, now)
        .into_iter()
        .map(|line| {
            crate::cli::escape::for_terminal(&line, crate::cli::escape::Lines::One).into_owned()
        })
        .collect()
}
