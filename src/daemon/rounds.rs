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
//! Every file is replaced atomically (written beside, then renamed). Board tasks share a round
//! folder, so `games.pgn` is rebuilt under one lock: a rebuild started later never loses to an
//! older one.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::file_error::file_kind;

/// Serialises the rebuilds of `games.pgn` among the board tasks of this daemon.
static GAMES_LOCK: Mutex<()> = Mutex::new(());

/// A round and table number from a `Round` tag of the form `<round>.<board>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoundBoard {
    /// The round as written (digits only, so it is safe in a directory name).
    pub round: String,
    pub board: u32,
}

/// The round and board of a `Round` tag value, if it has the `<round>.<board>` form (both
/// whole numbers; a plain `3` names no board and gets no round file).
pub fn parse_round(value: &str) -> Option<RoundBoard> {
    let (round, board) = value.split_once('.')?;
    let digits = |s: &str| !s.is_empty() && s.len() <= 9 && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(round) || !digits(board) {
        return None;
    }
    let board: u32 = board.parse().ok().filter(|&b| b > 0)?;
    // Leading zeros would give two folders for one round.
    let round = round.trim_start_matches('0');
    (!round.is_empty()).then(|| RoundBoard {
        round: round.to_string(),
        board,
    })
}

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

/// Write `pgn` as its round's game file and rebuild the round's `games.pgn`. Returns the game
/// file's path, or `None` when the game's `Round` tag names no board.
pub fn publish(pgn_dir: &Path, pgn: &str) -> Result<Option<PathBuf>, RoundFileError> {
    let Some(rb) = round_tag(pgn) else {
        return Ok(None);
    };
    let dir = round_dir(pgn_dir, &rb.round);
    let err = RoundFileError::at;
    fs::create_dir_all(&dir).map_err(err(&dir, "create the directory"))?;
    let path = dir.join(game_file_name(rb.board));
    // A board whose next game starts before the next round's pairings are set still carries
    // the old Round tag: its empty new game must not replace the round's finished one.
    if !has_moves(pgn)
        && fs::read_to_string(&path).is_ok_and(|old| result_of(&old).is_some_and(|r| r != "*"))
    {
        return Ok(Some(path));
    }
    let tmp = dir.join(format!(".game-{}.pgn.tmp", rb.board));
    replace(&tmp, &path, &with_newline(pgn)).map_err(err(&path, "replace it"))?;
    let _guard = GAMES_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let all = dir.join("games.pgn");
    let text = games_text(&dir).map_err(err(&dir, "read the round's games"))?;
    replace(&dir.join(".games.pgn.tmp"), &all, &text).map_err(err(&all, "replace it"))?;
    Ok(Some(path))
}

/// Every `game-<n>.pgn` of a round folder, in board order, as one PGN text.
pub fn games_text(dir: &Path) -> io::Result<String> {
    let mut games: Vec<(u32, PathBuf)> = Vec::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some(n) = name
            .strip_prefix("game-")
            .and_then(|r| r.strip_suffix(".pgn"))
            .and_then(|n| n.parse::<u32>().ok())
        {
            games.push((n, entry.path()));
        }
    }
    games.sort();
    let mut text = String::new();
    for (_, path) in games {
        let game = match fs::read_to_string(&path) {
            Ok(g) => g,
            // Removed between the listing and now: it is simply not part of the round.
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&with_newline(&game));
    }
    Ok(text)
}

/// The `Result` tag of a PGN text.
fn result_of(pgn: &str) -> Option<&str> {
    pgn.lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix("[Result \"")?.strip_suffix("\"]"))
}

/// Whether a PGN text's movetext holds a move (anything but comments and the result).
fn has_moves(pgn: &str) -> bool {
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

fn with_newline(text: &str) -> String {
    let mut t = text.to_string();
    if !t.ends_with('\n') {
        t.push('\n');
    }
    t
}

/// Write `text` to `tmp`, then rename it over `path`: a reader sees the old or the new text.
fn replace(tmp: &Path, path: &Path, text: &str) -> io::Result<()> {
    fs::File::create(tmp)?.write_all(text.as_bytes())?;
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
    fn games_file_in_board_order() {
        let dir = tempfile::tempdir().unwrap();
        for b in [10, 2, 1] {
            let pgn = format!("[Round \"7.{b}\"]\n[White \"w{b}\"]\n\n*");
            let p = publish(dir.path(), &pgn).unwrap().unwrap();
            assert_eq!(p, dir.path().join(format!("round-7/game-{b}.pgn")));
        }
        let all = fs::read_to_string(dir.path().join("round-7/games.pgn")).unwrap();
        let whites: Vec<&str> = all.lines().filter(|l| l.starts_with("[White")).collect();
        assert_eq!(
            whites,
            ["[White \"w1\"]", "[White \"w2\"]", "[White \"w10\"]"]
        );
        // Replacing a game replaces it in games.pgn too; no temporary file is left.
        publish(dir.path(), "[Round \"7.2\"]\n[White \"new\"]\n\n1. d4 *").unwrap();
        let all = fs::read_to_string(dir.path().join("round-7/games.pgn")).unwrap();
        assert!(all.contains("new") && !all.contains("w2"), "{all}");
        let names: Vec<String> = fs::read_dir(dir.path().join("round-7"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(names.is_empty(), "{names:?}");
        assert_eq!(publish(dir.path(), "[Round \"7\"]\n\n*").unwrap(), None);
        // A finished game stays when the board's next game starts with the old Round tag.
        let done = "[Round \"7.1\"]\n[Result \"1-0\"]\n\n1. e4 {[%clk 0:01:00]} 1-0";
        publish(dir.path(), done).unwrap();
        publish(dir.path(), "[Round \"7.1\"]\n[Result \"*\"]\n\n*").unwrap();
        let kept = fs::read_to_string(dir.path().join("round-7/game-1.pgn")).unwrap();
        assert!(kept.contains("1. e4"), "{kept}");
        publish(dir.path(), "[Round \"7.1\"]\n[Result \"*\"]\n\n1. d4 *").unwrap();
        let next = fs::read_to_string(dir.path().join("round-7/game-1.pgn")).unwrap();
        assert!(
            next.contains("1. d4"),
            "a game with moves replaces it: {next}"
        );
    }
}
