//! The broadcast's state file: how the outcome of the pushes reaches `eboardctl status` and
//! `watch`, which are D-Bus clients of eboardd and know nothing of lichess.
//!
//! The contract's D-Bus API has no place for it (and a bridge calling `SetTags` would put
//! lichess's words into the game record), so each running broadcaster writes one small
//! JSON file, replaced atomically after every change, and removes it when it stops:
//! `$RUNTIME_DIRECTORY/state.json` under systemd (`RuntimeDirectory=eboardd-broadcast/%i`,
//! so `/run/eboardd-broadcast/<round id>/`), else
//! `$XDG_RUNTIME_DIR/eboardd-broadcast/<round id>/state.json`, else the same under `/run`.
//! Readers look in both places; a file whose writer is no longer alive (its `pid`) is left
//! out, so a broadcaster killed without cleaning up shows nothing stale. The file holds no
//! secret (the token is never in it) and is readable by all, like the status it feeds.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::bridge::broadcast::core::Report;

/// The folder under `/run` or `$XDG_RUNTIME_DIR` holding one folder per round.
pub const DIR_NAME: &str = "eboardd-broadcast";
const FILE_NAME: &str = "state.json";

/// One broadcaster's state file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateFile {
    /// The lichess round id.
    pub round_id: String,
    /// Where it pushes (`https://lichess.org`).
    pub url: String,
    /// The broadcaster's process id (a dead one's file is ignored).
    pub pid: u32,
    /// When the file was written, ms since the Unix epoch.
    pub updated_ms: u64,
    #[serde(flatten)]
    pub report: Report,
}

/// Where this broadcaster writes, from the environment given (`RUNTIME_DIRECTORY`,
/// `XDG_RUNTIME_DIR`).
pub fn file_for(round_id: &str, env: impl Fn(&str) -> Option<String>) -> PathBuf {
    if let Some(dir) = env("RUNTIME_DIRECTORY").filter(|d| !d.is_empty()) {
        // systemd may name several directories, space-separated; the first is ours.
        let first = dir.split(' ').next().unwrap_or(&dir).to_string();
        return Path::new(&first).join(FILE_NAME);
    }
    base_dirs(env)[0].join(round_id).join(FILE_NAME)
}

/// The folders holding the rounds' folders, most personal first.
fn base_dirs(env: impl Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(x) = env("XDG_RUNTIME_DIR").filter(|d| d.starts_with('/')) {
        dirs.push(Path::new(&x).join(DIR_NAME));
    }
    dirs.push(Path::new("/run").join(DIR_NAME));
    dirs
}

/// Writes the file atomically (beside it, then renamed), creating its folder.
pub fn write(path: &Path, state: &StateFile) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(".state.json.tmp");
    let text = serde_json::to_string_pretty(state).map_err(std::io::Error::other)?;
    std::fs::write(&tmp, text + "\n")?;
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o644))?;
    std::fs::rename(&tmp, path)
}

/// Every live broadcaster's state, from the folders the environment names.
pub fn read_all(env: impl Fn(&str) -> Option<String>) -> Vec<StateFile> {
    let mut out: Vec<StateFile> = Vec::new();
    for base in base_dirs(env) {
        let Ok(entries) = std::fs::read_dir(&base) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path().join(FILE_NAME))
            .collect();
        paths.sort();
        for path in paths {
            let Ok(text) =
                crate::bounded_read::read_text(&path, crate::bounded_read::BROADCAST_STATE)
            else {
                continue;
            };
            let Ok(state) = serde_json::from_str::<StateFile>(&text) else {
                continue;
            };
            let alive = Path::new("/proc").join(state.pid.to_string()).exists();
            if alive
                && !out
                    .iter()
                    .any(|s| s.round_id == state.round_id && s.pid == state.pid)
            {
                out.push(state);
            }
        }
    }
    out
}

/// The `broadcast` lines of one board (by object id): one per broadcaster pushing it.
pub fn lines_for(states: &[StateFile], board_id: &str, now_ms: u64) -> Vec<String> {
    states
        .iter()
        .filter_map(|s| Some((s, s.report.boards.get(board_id)?)))
        .map(|(s, b)| {
            let ago = now_ms.saturating_sub(s.updated_ms) / 1000;
            let game = match (&b.error, b.moves) {
                (Some(e), _) => format!("✗ board {} refused: {e}", b.number),
                (None, Some(n)) => format!("✓ board {}, {n} move(s) on lichess", b.number),
                (None, None) => format!("board {}, no answer yet", b.number),
            };
            let whole = if s.report.ok {
                String::new()
            } else {
                format!("; {}", s.report.status)
            };
            format!(
                "broadcast: round {} {game}{whole} ({ago} s ago)",
                s.round_id
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bridge::broadcast::core::BoardReport;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn where_the_file_goes() {
        assert_eq!(
            file_for(
                "abc",
                env(&[("RUNTIME_DIRECTORY", "/run/eboardd-broadcast/abc")])
            ),
            Path::new("/run/eboardd-broadcast/abc/state.json")
        );
        assert_eq!(
            file_for("abc", env(&[("XDG_RUNTIME_DIR", "/run/user/1000")])),
            Path::new("/run/user/1000/eboardd-broadcast/abc/state.json")
        );
        assert_eq!(
            file_for("abc", env(&[])),
            Path::new("/run/eboardd-broadcast/abc/state.json")
        );
    }

    #[test]
    fn written_read_back_and_shown() {
        let dir = tempfile::tempdir().unwrap();
        let x = dir.path().display().to_string();
        let e = [("XDG_RUNTIME_DIR", x.as_str())];
        let mut state = StateFile {
            round_id: "abc".into(),
            url: "https://lichess.org".into(),
            pid: std::process::id(),
            updated_ms: 10_000,
            report: Report {
                ok: true,
                status: "1 of 2 game(s) on lichess".into(),
                boards: [
                    (
                        "b1".to_string(),
                        BoardReport {
                            number: 1,
                            moves: Some(7),
                            error: None,
                        },
                    ),
                    (
                        "b2".to_string(),
                        BoardReport {
                            number: 2,
                            moves: None,
                            error: Some("Bad PGN".into()),
                        },
                    ),
                ]
                .into(),
            },
        };
        write(&file_for("abc", env(&e)), &state).unwrap();
        let all = read_all(env(&e));
        assert_eq!(all, [state.clone()]);
        assert_eq!(
            lines_for(&all, "b1", 12_500),
            ["broadcast: round abc ✓ board 1, 7 move(s) on lichess (2 s ago)"]
        );
        assert!(lines_for(&all, "b2", 12_500)[0].contains("✗ board 2 refused: Bad PGN"));
        assert!(lines_for(&all, "b3", 12_500).is_empty());
        // A dead writer's file is not shown.
        state.pid = u32::MAX;
        write(&file_for("abc", env(&e)), &state).unwrap();
        assert!(read_all(env(&e)).is_empty());
    }
}
