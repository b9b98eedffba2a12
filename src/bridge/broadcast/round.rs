//! Which of the rig's games belong to the round being broadcast, and the PGN body that is
//! pushed for them. Pure: hall updates in, one PGN text out.
//!
//! A board belongs to the round when its `Round` tag is `<round>.<board>` (the form the
//! pairings set, contract section 7) with the round this broadcaster follows; with
//! `--boards N-M`, a board whose `Round` tag names no board at all counts by its table
//! number (`Number`) instead, so a rig without pairings can be broadcast too. The round is
//! fixed for the life of the broadcaster (one instance per lichess round): the highest round
//! seen at start, or `--round-number`. Boards that move on to the next round keep their game
//! of this round in the body, as the round folder keeps it (`daemon::rounds`), and so does a
//! board whose next game starts with the old `Round` tag before the new pairings are set.
//!
//! The body is each game's `Pgn` property — which carries final moves only, with `%clk`, the
//! seven-tag roster and whatever player tags (`WhiteElo`, `WhiteFideId`, …) are set — in
//! board order. A `Pgn` holding several segments (a game set up again mid-way, or continued
//! after an unresolved gap) is one game on the board but several PGN games; lichess would
//! take each as a game of its own, so only the current segment is pushed.

use std::collections::BTreeMap;
use std::ops::RangeInclusive;

use serde_json::Value;

use crate::client::{HallUpdate, Props};
use eboard_core::vocab::parse_round;

/// lichess takes at most this many games in one broadcast round.
pub const MAX_GAMES: usize = 64;

/// Which boards to take.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Selection {
    /// The round number in `Round` tags; `None`: the highest seen in the first snapshot
    /// (or the first seen after it).
    pub round: Option<u32>,
    /// `--boards N-M`: only these board numbers.
    pub boards: Option<RangeInclusive<u32>>,
}

/// One game of the round as it is pushed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Game {
    /// The board's object id on the bus (where status and watch show the outcome).
    pub board_id: String,
    /// The current segment of the board's `Pgn`, ending with a newline.
    pub pgn: String,
}

/// The round's games by board number, kept current from hall updates.
#[derive(Debug, Clone, Default)]
pub struct Round {
    selection: Selection,
    /// The round followed, once known.
    round: Option<u32>,
    /// Each bus board's properties as last seen.
    boards: BTreeMap<String, Props>,
    /// Board number → its game of this round.
    games: BTreeMap<u32, Game>,
}

impl Round {
    pub fn new(selection: Selection) -> Round {
        Round {
            round: selection.round,
            selection,
            ..Round::default()
        }
    }

    /// The round number followed, once known.
    pub fn round(&self) -> Option<u32> {
        self.round
    }

    /// Applies one update; returns whether the games changed.
    pub fn apply(&mut self, update: &HallUpdate) -> bool {
        let before = self.games.clone();
        match update {
            HallUpdate::Snapshot(boards) => {
                self.boards = boards.iter().cloned().collect();
                if self.round.is_none() {
                    self.round = self
                        .boards
                        .values()
                        .filter_map(|p| round_tag(p).map(|(r, _)| r))
                        .max();
                }
                let ids: Vec<String> = self.boards.keys().cloned().collect();
                for id in ids {
                    self.take(&id);
                }
            }
            HallUpdate::Added { board, props } => {
                self.boards.insert(board.clone(), props.clone());
                self.take(board);
            }
            HallUpdate::Changed { board, changed } => {
                let props = self.boards.entry(board.clone()).or_default();
                for (k, v) in changed {
                    props.insert(k.clone(), v.clone());
                }
                self.take(board);
            }
            // A board that leaves the rig keeps its last game in the round (it was played).
            HallUpdate::Removed { board } => {
                self.boards.remove(board);
            }
            HallUpdate::Signal { .. } | HallUpdate::SourceDown { .. } => {}
        }
        before != self.games
    }

    /// Takes board `id`'s current game into the round when it belongs there.
    fn take(&mut self, id: &str) {
        let Some(props) = self.boards.get(id) else {
            return;
        };
        if self.round.is_none() {
            self.round = round_tag(props).map(|(r, _)| r);
        }
        let Some(number) = self.number_of(props) else {
            return;
        };
        let Some(pgn) = props.get("Pgn").and_then(Value::as_str) else {
            return;
        };
        let pgn = current_segment(pgn);
        if let Some(kept) = self.games.get(&number)
            && !has_moves(&pgn)
            && result_of(&kept.pgn).is_some_and(|r| r != "*")
        {
            // An empty next game must not replace the finished one.
            return;
        }
        self.games.insert(
            number,
            Game {
                board_id: id.to_string(),
                pgn,
            },
        );
    }

    /// The board number of a board in this round, or `None` when it is not in it.
    fn number_of(&self, props: &Props) -> Option<u32> {
        let number = match round_tag(props) {
            Some((r, b)) if Some(r) == self.round => Some(b),
            Some(_) => None,
            None => self.selection.boards.as_ref().and_then(|_| {
                props
                    .get("Number")
                    .and_then(Value::as_u64)
                    .and_then(|n| u32::try_from(n).ok())
                    .filter(|&n| n > 0)
            }),
        }?;
        match &self.selection.boards {
            Some(range) if !range.contains(&number) => None,
            _ => Some(number),
        }
    }

    /// The games in board order.
    pub fn games(&self) -> impl Iterator<Item = (u32, &Game)> {
        self.games.iter().map(|(n, g)| (*n, g))
    }

    pub fn len(&self) -> usize {
        self.games.len()
    }

    pub fn is_empty(&self) -> bool {
        self.games.is_empty()
    }

    /// The body of a push: the first [`MAX_GAMES`] games in board order, one blank line
    /// apart; `None` while there is no game.
    pub fn body(&self) -> Option<String> {
        let mut body = String::new();
        for (_, game) in self.games.iter().take(MAX_GAMES) {
            if !body.is_empty() {
                body.push('\n');
            }
            body.push_str(&game.pgn);
        }
        (!body.is_empty()).then_some(body)
    }

    /// The board numbers pushed, in the body's order.
    pub fn pushed_numbers(&self) -> Vec<u32> {
        self.games.keys().copied().take(MAX_GAMES).collect()
    }
}

/// A board's `Round` tag as (round, board), when it has the `<round>.<board>` form.
fn round_tag(props: &Props) -> Option<(u32, u32)> {
    let pgn = props.get("Pgn").and_then(Value::as_str)?;
    let rb = parse_round(tag_of(pgn, "Round")?)?;
    Some((rb.round.parse().ok()?, rb.board))
}

/// The value of tag `name` in the first game of a PGN text.
pub fn tag_of<'a>(pgn: &'a str, name: &str) -> Option<&'a str> {
    pgn.lines()
        .map(str::trim)
        .take_while(|l| l.is_empty() || l.starts_with('['))
        .find_map(|l| {
            l.strip_prefix('[')?
                .strip_prefix(name)?
                .strip_prefix(" \"")?
                .strip_suffix("\"]")
        })
}

fn result_of(pgn: &str) -> Option<&str> {
    tag_of(pgn, "Result")
}

/// The last PGN game of a `Pgn` text, ending with a newline. Segments are written one blank
/// line apart, each starting with its `[Event` tag; within one, the tags stand on consecutive
/// lines (a tag value never holds a newline), so only a new game follows a blank line.
pub fn current_segment(pgn: &str) -> String {
    let start = pgn.rfind("\n\n[Event \"").map(|i| i + 2).unwrap_or(0);
    let mut out = pgn[start..].trim_start().to_string();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// Whether a PGN game's movetext holds a move (anything but comments and the result).
fn has_moves(pgn: &str) -> bool {
    let mut depth = 0u32;
    let mut plain = String::new();
    for line in pgn.lines().filter(|l| !l.trim_start().starts_with('[')) {
        for c in line.chars() {
            match c {
                '{' => depth += 1,
                '}' => depth = depth.saturating_sub(1),
                _ if depth == 0 => plain.push(c),
                _ => {}
            }
        }
        plain.push(' ');
    }
    plain
        .split_whitespace()
        .any(|t| !matches!(t, "*" | "1-0" | "0-1" | "1/2-1/2"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pgn(round: &str, white: &str, moves: &str, result: &str) -> String {
        format!(
            "[Event \"Open\"]\n[Site \"?\"]\n[Date \"2026.12.01\"]\n[Round \"{round}\"]\n\
             [White \"{white}\"]\n[Black \"B\"]\n[Result \"{result}\"]\n\n{moves} {result}\n"
        )
    }

    fn board(number: u64, pgn: &str) -> Props {
        json!({"Number": number, "Pgn": pgn})
            .as_object()
            .unwrap()
            .clone()
    }

    fn changed(id: &str, pgn: &str) -> HallUpdate {
        HallUpdate::Changed {
            board: id.into(),
            changed: json!({"Pgn": pgn}).as_object().unwrap().clone(),
        }
    }

    #[test]
    fn games_of_the_highest_round_in_board_order() {
        let mut r = Round::new(Selection::default());
        r.apply(&HallUpdate::Snapshot(vec![
            ("b3".into(), board(3, &pgn("4.3", "C", "1. e4", "*"))),
            ("b1".into(), board(1, &pgn("4.1", "A", "1. d4", "*"))),
            ("old".into(), board(9, &pgn("3.9", "Z", "1. c4", "*"))),
            ("none".into(), board(2, &pgn("?", "N", "", "*"))),
        ]));
        assert_eq!(r.round(), Some(4));
        assert_eq!(r.pushed_numbers(), [1, 3]);
        let body = r.body().unwrap();
        assert!(body.find("\"A\"").unwrap() < body.find("\"C\"").unwrap());
        assert!(!body.contains("\"Z\"") && !body.contains("\"N\""));
    }

    #[test]
    fn boards_range_and_table_numbers() {
        let mut r = Round::new(Selection {
            round: Some(2),
            boards: Some(1..=2),
        });
        r.apply(&HallUpdate::Snapshot(vec![
            ("a".into(), board(1, &pgn("?", "A", "", "*"))),
            ("b".into(), board(7, &pgn("2.2", "B", "", "*"))),
            ("c".into(), board(3, &pgn("2.3", "C", "", "*"))),
            ("d".into(), board(2, &pgn("1.2", "D", "", "*"))),
        ]));
        assert_eq!(r.pushed_numbers(), [1, 2]);
        assert_eq!(r.games().nth(1).unwrap().1.board_id, "b");
    }

    #[test]
    fn a_finished_game_stays_through_the_next_round() {
        let mut r = Round::new(Selection::default());
        r.apply(&HallUpdate::Snapshot(vec![(
            "b1".into(),
            board(1, &pgn("5.1", "A", "1. e4 e5", "*")),
        )]));
        assert!(r.apply(&changed("b1", &pgn("5.1", "A", "1. e4 e5 2. Qh5", "1-0"))));
        // The next game starts with the old tags, then the next round's pairings come.
        assert!(!r.apply(&changed("b1", &pgn("5.1", "A", "", "*"))));
        assert!(!r.apply(&changed("b1", &pgn("6.1", "Q", "1. d4", "*"))));
        assert!(r.body().unwrap().contains("2. Qh5 1-0"));
        // The board leaving keeps it too.
        assert!(!r.apply(&HallUpdate::Removed { board: "b1".into() }));
        assert_eq!(r.len(), 1);
    }

    #[test]
    fn only_the_current_segment() {
        let two = format!(
            "{}\n{}",
            pgn("1.1", "A", "1. e4", "*"),
            pgn("1.1", "A", "{Set up again.} 1. d4", "*")
        );
        let seg = current_segment(&two);
        assert!(seg.starts_with("[Event \"Open\"]") && seg.contains("1. d4"));
        assert!(!seg.contains("1. e4"));
        assert_eq!(
            current_segment(&pgn("1.1", "A", "", "*")),
            pgn("1.1", "A", "", "*")
        );
    }

    #[test]
    fn moves_are_told_from_comments_and_results() {
        assert!(!has_moves(&pgn("1.1", "A", "{[%clk 0:01:00]}", "1-0")));
        assert!(has_moves(&pgn("1.1", "A", "1. e4 {[%clk 0:01:00]}", "*")));
    }

    #[test]
    fn at_most_64_games_in_a_body() {
        let mut r = Round::new(Selection::default());
        let boards = (1..=70)
            .map(|b| {
                (
                    format!("b{b}"),
                    board(b, &pgn(&format!("1.{b}"), "A", "", "*")),
                )
            })
            .collect();
        r.apply(&HallUpdate::Snapshot(boards));
        assert_eq!(r.len(), 70);
        assert_eq!(r.pushed_numbers().len(), MAX_GAMES);
    }
}
