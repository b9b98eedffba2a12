//! Round folders (contract section 3): every game whose `Round` tag is `<round>.<board>` is
//! also kept as `<pgn_dir>/round-<round>/game-<board>.pgn`, and `round-<round>/games.pgn`
//! holds all games of that round in board order — the layout DGT LiveChess writes and the
//! Lichess Broadcaster app uploads.
//!
//! The Broadcaster uploads every `*.pgn` under the folder it watches (recursively), sorted by
//! the last number in the path, and `games.pgn` only when there is no other PGN file. So the
//! board number is the last number of each game file's name, and the temporary files written
//! on the way to an atomic rename end in `.tmp`, never in `.pgn`.
//!
//! Every file is replaced atomically (written beside, then renamed). The files are written by
//! one thread for the whole process, [`super::round_writer`], from the games it holds in
//! memory; this module has the layout and the texts.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::file_error::file_kind;

pub use eboard_core::vocab::{RoundBoard, parse_round};

/// The `Round` tag of a PGN text's first game.
pub fn round_tag(pgn: &str) -> Option<RoundBoard> {
    pgn.lines()
        .map(str::trim)
        .take_while(|l| l.is_empty() || l.starts_with('['))
        .find_map(|l| l.strip_prefix("[Round \"")?.strip_suffix("\"]"))
        .and_then(parse_round)
}

/// Where a round's files are.
pub fn round_dir(pgn_dir: &Path, round: &str) -> PathBuf {
    pgn_dir.join(format!("round-{round}"))
}

/// `game-<board>.pgn`
pub fn game_file_name(board: u32) -> String {
    format!("game-{board}.pgn")
}

file_kind!(
    /// A failed round-file operation, naming the file.
    RoundFileError,
    RoundFile,
    "round file"
);

/// Every `game-<n>.pgn` of a round folder, by board number (read once per run: the round
/// writer holds them in memory from then on).
pub fn read_games(dir: &Path) -> io::Result<BTreeMap<u32, String>> {
    let mut games = BTreeMap::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some(n) = name
            .strip_prefix("game-")
            .and_then(|r| r.strip_suffix(".pgn"))
            .and_then(|n| n.parse::<u32>().ok())
        {
            match super::state_file::read(&entry.path()) {
                Ok(g) => {
                    games.insert(n, with_newline(&String::from_utf8_lossy(&g)));
                }
                // Removed between the listing and now: it is simply not part of the round.
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(games)
}

/// A round's games, in board order, as the one PGN text of `games.pgn`.
pub fn games_text(games: &BTreeMap<u32, String>) -> String {
    let mut text = String::new();
    for game in games.values() {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&with_newline(game));
    }
    text
}

/// The `Result` tag of a PGN text.
pub fn result_of(pgn: &str) -> Option<&str> {
    pgn.lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix("[Result \"")?.strip_suffix("\"]"))
}

/// Whether a PGN text's movetext holds a move (anything but comments and the result).
pub fn has_moves(pgn: &str) -> bool {
    let mut depth = 0;
    let movetext = pgn
        .lines()
        .filter(|l| !l.trim_start().starts_with('['))
        .collect::<Vec<_>>()
        .join(" ");
    let mut plain = String::new();
    for c in movetext.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    plain
        .split_whitespace()
        .any(|t| !matches!(t, "*" | "1-0" | "0-1" | "1/2-1/2"))
}

pub fn with_newline(text: &str) -> String {
    let mut t = text.to_string();
    if !t.ends_with('\n') {
        t.push('\n');
    }
    t
}

/// Write `text` to `tmp`, then rename it over `path`: a reader sees the old or the new text.
pub fn replace(tmp: &Path, path: &Path, text: &str) -> io::Result<()> {
    super::state_file::create(tmp)?.write_all(text.as_bytes())?;
    fs::rename(tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_tags() {
        assert_eq!(
            parse_round("3.12"),
            Some(RoundBoard {
                round: "3".into(),
                board: 12
            })
        );
        assert_eq!(parse_round("03.1").map(|r| r.round), Some("3".into()));
        for bad in [
            "3", "3.", ".1", "3.0", "a.1", "3.1.2", "../x.1", "?", "-", "3.1a",
        ] {
            assert_eq!(parse_round(bad), None, "{bad}");
        }
        let pgn = "[Event \"x\"]\n[Round \"2.4\"]\n\n1. e4 *\n";
        assert_eq!(round_tag(pgn).map(|r| r.board), Some(4));
        assert_eq!(round_tag("[Round \"2\"]\n\n*\n"), None);
    }

    #[test]
    fn games_text_in_board_order() {
        let games: BTreeMap<u32, String> =
            [(10, "[Round \"1.10\"]\n\n*"), (2, "[Round \"1.2\"]\n\n*\n")]
                .into_iter()
                .map(|(b, t)| (b, t.to_string()))
                .collect();
        assert_eq!(
            games_text(&games),
            "[Round \"1.2\"]\n\n*\n\n[Round \"1.10\"]\n\n*\n"
        );
        assert!(has_moves("[Round \"1.2\"]\n\n1. e4 {x} *"));
        assert!(!has_moves("[Round \"1.2\"]\n\n{x} *"));
    }
}
