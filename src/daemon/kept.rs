//! The files the daemon kept aside rather than write over them, found again at start: each
//! stays in `StorageProblem` until someone has seen to it (moved or removed it), across
//! restarts too.
//!
//! - `games/<id>.journal.newer-N`: a journal written by a newer eboardd;
//! - `games/<id>.journal.unread-N`: a file found in place of a journal that was not the one
//!   read at start (it could not be read then, or appeared or changed since);
//! - `boards.json.unreadable-N`: a board list that was not one.

use std::path::{Path, PathBuf};

/// Every kept file under `state_dir`, with what it is.
pub fn find(state_dir: &Path) -> Vec<(PathBuf, String)> {
    let mut found = Vec::new();
    let kinds: [(&Path, &str, &str); 3] = [
        (
            Path::new("games"),
            ".journal.newer-",
            "a game journal written by a newer eboardd, kept unread",
        ),
        (
            Path::new("games"),
            ".journal.unread-",
            "a file found in place of a game journal that was not read, kept unread",
        ),
        (
            Path::new(""),
            "boards.json.unreadable-",
            "a board list that could not be read, kept aside",
        ),
    ];
    for (sub, marker, what) in kinds {
        let dir = state_dir.join(sub);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let numbered = name
                .split_once(marker)
                .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
            if numbered {
                let path = entry.path();
                let why = format!("{} is {what}", path.display());
                found.push((path, why));
            }
        }
    }
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_files_are_found_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let games = dir.path().join("games");
        std::fs::create_dir_all(&games).unwrap();
        for name in [
            "b.journal",
            "b.journal.newer-1",
            "b.journal.unread-2",
            "b.journal.corrupt-1",
            "b.journal.newer-x",
        ] {
            std::fs::write(games.join(name), "").unwrap();
        }
        std::fs::write(dir.path().join("boards.json.unreadable-1"), "").unwrap();
        std::fs::write(dir.path().join("boards.json"), "").unwrap();
        let found: Vec<PathBuf> = find(dir.path()).into_iter().map(|(p, _)| p).collect();
        assert_eq!(
            found,
            vec![
                dir.path().join("boards.json.unreadable-1"),
                games.join("b.journal.newer-1"),
                games.join("b.journal.unread-2"),
            ]
        );
    }
}
