//! `eboardctl broadcast --round ROUND_ID --token-file FILE [--url URL] [--boards N-M]`: this
//! rig's games of a round pushed straight to a lichess broadcast round (contract section 9).
//! Parses and checks the options, reads the token, then runs [`crate::bridge::broadcast`]
//! until SIGINT/SIGTERM.

use std::ops::RangeInclusive;
use std::path::PathBuf;

use crate::bridge::broadcast::round::{MAX_GAMES, Selection};
use crate::bridge::broadcast::token::Token;
use crate::bridge::broadcast::{BroadcastOptions, run as run_broadcast};
use crate::cli::Globals;
use crate::client::error::CtlError;

/// The arguments of `broadcast`.
#[derive(Debug, Clone, clap::Args)]
pub struct BroadcastArgs {
    /// The lichess broadcast round id: the last part of the round's page address
    /// (lichess.org/broadcast/<tour>/<round>/<ROUND_ID>).
    #[arg(long = "round", value_name = "ROUND_ID")]
    pub round_id: String,
    /// The file holding the lichess token (scope study:write); only its owner may read it.
    /// Without it, the token is taken from $LICHESS_TOKEN.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// lichess (or a stand-in of its push endpoint).
    #[arg(long, value_name = "URL", default_value = "https://lichess.org")]
    pub url: String,
    /// Only these board numbers (a board whose Round tag names no board counts by its table
    /// number).
    #[arg(long, value_name = "N-M")]
    pub boards: Option<String>,
    /// The round number in the boards' Round tags (<round>.<board>); default: the highest on
    /// the rig at start.
    #[arg(long, value_name = "N")]
    pub round_number: Option<u32>,
}

/// The checked options, the token read (its file's mode checked).
pub fn options(globals: &Globals, args: &BroadcastArgs) -> Result<BroadcastOptions, CtlError> {
    let usage = CtlError::Usage;
    check_round_id(&args.round_id).map_err(usage)?;
    let url = check_url(&args.url).map_err(usage)?;
    let boards = args
        .boards
        .as_deref()
        .map(parse_boards)
        .transpose()
        .map_err(usage)?;
    if args.round_number == Some(0) {
        return Err(usage("--round-number 0: rounds count from 1".into()));
    }
    let token = Token::load(
        args.token_file.as_deref(),
        std::env::var("LICHESS_TOKEN").ok(),
    )
    .map_err(|e| usage(e.to_string()))?;
    Ok(BroadcastOptions {
        bus: globals.bus.clone(),
        url,
        round_id: args.round_id.clone(),
        token,
        selection: Selection {
            round: args.round_number,
            boards,
        },
    })
}

/// Runs the broadcaster until SIGINT or SIGTERM.
pub async fn run(globals: &Globals, args: &BroadcastArgs) -> Result<(), CtlError> {
    let opts = options(globals, args)?;
    let stop = crate::cli::relay::stop_signal()?;
    run_broadcast(opts, stop).await
}

/// A lichess id: letters and digits (8 of them on lichess), which also keeps it safe in a
/// URL path and a folder name.
fn check_round_id(id: &str) -> Result<(), String> {
    if id.is_empty() || id.len() > 32 || !id.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(format!(
            "--round {id:?}: a lichess round id is letters and digits, the last part of the \
             round's page address"
        ));
    }
    Ok(())
}

/// `http(s)://host[:port][/path]`, returned without a trailing `/`.
fn check_url(text: &str) -> Result<String, String> {
    let bad = |why: &str| format!("--url {text}: {why}");
    let url = url::Url::parse(text).map_err(|e| bad(&e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad("use https://… (or http://… for a local stand-in)"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(bad("names no host"));
    }
    if url.query().is_some() || url.fragment().is_some() || !url.username().is_empty() {
        return Err(bad("give the site only, with no query, fragment or user"));
    }
    Ok(url.as_str().trim_end_matches('/').to_string())
}

/// `N-M` or `N`: board numbers from 1, at most [`MAX_GAMES`] of them.
fn parse_boards(text: &str) -> Result<RangeInclusive<u32>, String> {
    let bad = |why: &str| format!("--boards {text}: {why}");
    let (a, b) = text.split_once('-').unwrap_or((text, text));
    let number = |s: &str| {
        s.trim()
            .parse::<u32>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| bad("give board numbers from 1, as N-M"))
    };
    let (a, b) = (number(a)?, number(b)?);
    if a > b {
        return Err(bad("the first board is after the last"));
    }
    if (b - a) as usize >= MAX_GAMES {
        return Err(bad(&format!(
            "{} boards; a lichess broadcast round takes at most {MAX_GAMES} games",
            b - a + 1
        )));
    }
    Ok(a..=b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_checked() {
        assert!(check_round_id("aBc12345").is_ok());
        assert!(check_round_id("../x").is_err() && check_round_id("").is_err());
        assert_eq!(
            check_url("https://lichess.org/").unwrap(),
            "https://lichess.org"
        );
        assert_eq!(
            check_url("http://127.0.0.1:8080").unwrap(),
            "http://127.0.0.1:8080"
        );
        for bad in ["ftp://x", "lichess.org", "https://x/?a=1", "https://u@x"] {
            assert!(check_url(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_boards("3-10").unwrap(), 3..=10);
        assert_eq!(parse_boards("7").unwrap(), 7..=7);
        assert!(parse_boards("1-64").is_ok());
        assert!(parse_boards("1-65").unwrap_err().contains("64"));
        for bad in ["0-3", "5-2", "a-b", ""] {
            assert!(parse_boards(bad).is_err(), "{bad}");
        }
    }
}
