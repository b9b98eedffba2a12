//! `eboardctl list`: one line per board (name, port, connected, state, half-moves played), or
//! with `--json` a JSON array of every board's properties.

use crate::cli::client::Client;
use crate::cli::render::{board_json, list_lines};
use crate::client::error::CtlError;

/// Prints the boards the daemon serves.
pub async fn run(client: &Client, json: bool) -> Result<(), CtlError> {
    let boards = client.boards().await?;
    if json {
        let all: Vec<serde_json::Value> = boards
            .iter()
            .map(|b| board_json(&b.props, &b.path))
            .collect();
        crate::cli::print_json(&serde_json::Value::Array(all))
    } else if boards.is_empty() {
        crate::cli::print_error("eboardctl: the daemon serves no boards");
        Ok(())
    } else {
        // Names and ports from the configuration or `AddBoard`, shown on a terminal.
        let pairs: Vec<(String, _)> = boards
            .into_iter()
            .map(|mut b| {
                crate::cli::escape::props(&mut b.props);
                (b.path, b.props)
            })
            .collect();
        crate::cli::print_text(&list_lines(&pairs).join("\n"))
    }
}
