//! The round folders as the PGN writer's thread ([`super::pgn_writer`]) holds them: every round
//! folder's games in memory, written ([`super::rounds`] has the layout and the texts) so that a
//! move on one of 200 boards costs one small file write, not a re-read of the whole round and
//! a rewrite of `games.pgn`.
//!
//! A board hands its game's PGN to [`super::pgn_writer::PgnWriter::live`] and goes on at once
//! (a channel send). The thread keeps the text in memory; at most once per [`WINDOW`] it writes the
//! `game-<n>.pgn` of each game that changed (atomically, as before), and at most once per
//! [`ALL_WINDOW`] it rebuilds the round's `games.pgn` from the games held in memory, however
//! many boards moved (the first change after a quiet spell is written at once). [`super::pgn_writer::PgnWriter::flush`] writes everything still dirty and
//! answers when it is on disk: a board that stops calls it, so the final state of every game
//! is always written.
//!
//! A round folder seen for the first time in this run is read once (the games of an earlier
//! run, of boards not served now). A write that fails is logged once per episode and tried
//! again every [`RETRY`] until it succeeds.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::rounds::{self, RoundFileError};

/// A round's changed `game-<n>.pgn` files are written at most this often...
pub const WINDOW: Duration = Duration::from_millis(250);
/// ...and its `games.pgn` (every game of the round, 200 at a big event: the one costly
/// file) is rebuilt at most this often.
pub const ALL_WINDOW: Duration = Duration::from_secs(1);
/// While a round file cannot be written, it is tried again this often.
pub const RETRY: Duration = Duration::from_secs(1);

/// One round folder as held in memory.
#[derive(Default)]
struct Round {
    /// Every game of the round by board number, as last published (or read at start).
    games: BTreeMap<u32, String>,
    /// Games whose file could not be written yet.
    unwritten: Vec<u32>,
    /// `games.pgn` is behind `games`.
    dirty: bool,
}

/// Every round folder this process writes, and when `games.pgn` may next be written: the
/// writer thread's state, with no thread of its own (the unit tests drive it).
pub struct RoundFolders {
    rounds: HashMap<PathBuf, Round>,
    /// When the game files were last written (at first: a window ago, so the first change
    /// is due at once — and at one fixed instant, which a deadline must be).
    last_write: Instant,
    /// When `games.pgn` files were last rebuilt (likewise).
    last_all: Instant,
    /// The current episode of failing writes, if any: when it was last tried.
    failing: Option<Instant>,
}

impl Default for RoundFolders {
    fn default() -> Self {
        let now = Instant::now();
        RoundFolders {
            rounds: HashMap::new(),
            last_write: now.checked_sub(WINDOW).unwrap_or(now),
            last_all: now.checked_sub(ALL_WINDOW).unwrap_or(now),
            failing: None,
        }
    }
}

impl RoundFolders {
    /// A game's new text: its file and the round's `games.pgn` are written when due.
    pub fn game(&mut self, pgn_dir: &Path, pgn: &str) {
        let Some(rb) = rounds::round_tag(pgn) else {
            return;
        };
        let dir = rounds::round_dir(pgn_dir, &rb.round);
        let round = self
            .rounds
            .entry(dir.clone())
            .or_insert_with(|| Round::read(&dir));
        // A board whose next game starts before the next round's pairings are set still
        // carries the old Round tag: its empty new game must not replace the finished one.
        if round
            .games
            .get(&rb.board)
            .and_then(|old| rounds::result_of(old))
            .is_some_and(|r| r != "*")
            && !rounds::has_moves(pgn)
        {
            return;
        }
        let text = rounds::with_newline(pgn);
        if round.games.get(&rb.board) == Some(&text) {
            return;
        }
        round.games.insert(rb.board, text);
        round.dirty = true;
        if !round.unwritten.contains(&rb.board) {
            round.unwritten.push(rb.board);
        }
    }

    /// When something is due: the next window for a changed game file or a dirty
    /// `games.pgn`, or the next retry.
    pub fn due(&self) -> Option<Instant> {
        let files = self
            .rounds
            .values()
            .any(|r| !r.unwritten.is_empty())
            .then_some(self.last_write + WINDOW);
        let all = self
            .rounds
            .values()
            .any(|r| r.dirty)
            .then_some(self.last_all + ALL_WINDOW);
        let at = match (files, all) {
            (Some(f), Some(a)) => f.min(a),
            (f, a) => f.or(a)?,
        };
        Some(match self.failing {
            Some(failed) => at.max(failed + RETRY),
            None => at,
        })
    }

    /// Write what is dirty: everything (`now` is `None`: a flush), or what is due at `now`.
    pub fn write_due(&mut self, now: Option<Instant>) {
        let Some(at) = self.due() else {
            return;
        };
        let (files, all) = match now {
            None => (true, true),
            Some(now) if now < at => return,
            Some(now) => (
                self.last_write + WINDOW <= now,
                self.last_all + ALL_WINDOW <= now,
            ),
        };
        let mut result = Ok(());
        for (dir, round) in &mut self.rounds {
            let mut r = if files {
                round.write_games(dir)
            } else {
                Ok(())
            };
            if all && r.is_ok() {
                r = round.write_all(dir);
            }
            if result.is_ok() {
                result = r;
            }
        }
        let written = Instant::now();
        if files {
            self.last_write = written;
        }
        if all {
            self.last_all = written;
        }
        self.outcome(result);
    }

    /// Say a failure once per episode, and the end of one.
    fn outcome(&mut self, result: Result<(), RoundFileError>) {
        match result {
            Ok(()) if !self.rounds.values().any(|r| !r.unwritten.is_empty()) => {
                if self.failing.take().is_some() {
                    tracing::info!("round files are written again");
                }
            }
            Ok(()) => {}
            Err(e) => {
                if self.failing.is_none() {
                    tracing::error!(
                        "{e}; the round files are kept in memory and written again every {}s",
                        RETRY.as_secs()
                    );
                }
                self.failing = Some(Instant::now());
            }
        }
    }
}

impl Round {
    /// A round folder's games as an earlier run left them (none if it is new or unreadable).
    fn read(dir: &Path) -> Round {
        let mut round = Round::default();
        match rounds::read_games(dir) {
            Ok(games) => round.games = games,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => tracing::warn!(
                "cannot read the round folder {} ({e}); games.pgn holds this run's games",
                dir.display()
            ),
        }
        round
    }

    /// Write the game files not yet written.
    fn write_games(&mut self, dir: &Path) -> Result<(), RoundFileError> {
        let err = RoundFileError::at;
        if !self.unwritten.is_empty() {
            fs::create_dir_all(dir).map_err(err(dir, "create the directory"))?;
        }
        while let Some(&board) = self.unwritten.first() {
            let path = dir.join(rounds::game_file_name(board));
            let tmp = dir.join(format!(".game-{board}.pgn.tmp"));
            rounds::replace(&tmp, &path, &self.games[&board]).map_err(err(&path, "replace it"))?;
            self.unwritten.remove(0);
        }
        Ok(())
    }

    /// Rebuild `games.pgn` from memory, if it is behind.
    fn write_all(&mut self, dir: &Path) -> Result<(), RoundFileError> {
        if !self.dirty {
            return Ok(());
        }
        let all = dir.join("games.pgn");
        let text = rounds::games_text(&self.games);
        rounds::replace(&dir.join(".games.pgn.tmp"), &all, &text)
            .map_err(RoundFileError::at(&all, "replace it"))?;
        self.dirty = false;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(path: PathBuf) -> String {
        fs::read_to_string(path).unwrap()
    }

    #[test]
    fn games_file_in_board_order_rebuilt_once_per_window() {
        let dir = tempfile::tempdir().unwrap();
        let round = dir.path().join("round-7");
        let mut f = RoundFolders::default();
        for b in [10, 2, 1] {
            f.game(
                dir.path(),
                &format!("[Round \"7.{b}\"]\n[White \"w{b}\"]\n\n*"),
            );
        }
        // Nothing written yet: the files wait for the writer's turn, due at one fixed
        // instant (a deadline that moved with the clock kept the thread spinning).
        assert!(f.due().is_some());
        assert_eq!(f.due(), f.due());
        assert!(!round.exists());
        f.write_due(None);
        assert!(f.due().is_none());
        for b in [10, 2, 1] {
            assert!(round.join(format!("game-{b}.pgn")).exists());
        }
        let whites: Vec<String> = read(round.join("games.pgn"))
            .lines()
            .filter(|l| l.starts_with("[White"))
            .map(String::from)
            .collect();
        assert_eq!(
            whites,
            ["[White \"w1\"]", "[White \"w2\"]", "[White \"w10\"]"]
        );
        // A change just after a write is due only a window later; a flush writes it.
        f.game(dir.path(), "[Round \"7.2\"]\n[White \"new\"]\n\n1. d4 *");
        let at = f.due().expect("dirty");
        f.write_due(Some(Instant::now()));
        if Instant::now() < at {
            assert!(!read(round.join("games.pgn")).contains("new"));
        }
        f.write_due(None);
        let all = read(round.join("games.pgn"));
        assert!(all.contains("new") && !all.contains("w2"), "{all}");
        let hidden: Vec<String> = fs::read_dir(&round)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(hidden.is_empty(), "{hidden:?}");
        // A plain Round tag names no board.
        f.game(dir.path(), "[Round \"7\"]\n\n*");
        assert!(f.due().is_none());
        // A finished game stays when the board's next game starts with the old Round tag.
        let done = "[Round \"7.1\"]\n[Result \"1-0\"]\n\n1. e4 {[%clk 0:01:00]} 1-0";
        f.game(dir.path(), done);
        f.write_due(None);
        f.game(dir.path(), "[Round \"7.1\"]\n[Result \"*\"]\n\n*");
        f.write_due(None);
        assert!(read(round.join("game-1.pgn")).contains("1. e4"));
        f.game(dir.path(), "[Round \"7.1\"]\n[Result \"*\"]\n\n1. d4 *");
        f.write_due(None);
        assert!(read(round.join("game-1.pgn")).contains("1. d4"));
        // A new run reads the folder once: games of boards it does not serve stay in it.
        let mut g = RoundFolders::default();
        g.game(dir.path(), "[Round \"7.3\"]\n[White \"w3\"]\n\n*");
        g.write_due(None);
        let all = read(round.join("games.pgn"));
        for w in ["w3", "w10", "new"] {
            assert!(all.contains(w), "{w} in {all}");
        }
    }

    #[test]
    fn game_files_follow_each_window_and_games_pgn_the_longer_one() {
        let dir = tempfile::tempdir().unwrap();
        let round = dir.path().join("round-4");
        let mut f = RoundFolders::default();
        f.game(dir.path(), "[Round \"4.1\"]\n\n1. e4 *");
        f.write_due(None);
        let written = Instant::now();
        f.game(dir.path(), "[Round \"4.1\"]\n\n1. e4 e5 *");
        // One game-file window later: the game's file, not yet games.pgn.
        f.write_due(Some(written + WINDOW + Duration::from_millis(10)));
        assert!(read(round.join("game-1.pgn")).contains("e5"));
        assert!(!read(round.join("games.pgn")).contains("e5"));
        let next = f.due().expect("games.pgn is still behind");
        assert!(next >= written + ALL_WINDOW - Duration::from_millis(50));
        f.write_due(Some(next));
        assert!(read(round.join("games.pgn")).contains("e5"));
        assert!(f.due().is_none());
    }

    #[test]
    fn a_failed_write_is_kept_and_written_later() {
        let dir = tempfile::tempdir().unwrap();
        // A file where the round folder should be: nothing can be written under it.
        fs::write(dir.path().join("round-2"), "").unwrap();
        let mut f = RoundFolders::default();
        f.game(dir.path(), "[Round \"2.1\"]\n\n1. e4 *");
        f.write_due(None);
        assert!(f.failing.is_some());
        assert!(f.due().is_some(), "still pending");
        fs::remove_file(dir.path().join("round-2")).unwrap();
        f.write_due(None);
        assert!(f.failing.is_none());
        assert!(read(dir.path().join("round-2/game-1.pgn")).contains("1. e4"));
        assert!(read(dir.path().join("round-2/games.pgn")).contains("1. e4"));
    }
}
