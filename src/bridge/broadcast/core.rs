//! The broadcaster, pure: hall updates and lichess's answers in, pushes, notices for the
//! operator and the report that `status`/`watch` show out. Time is passed in.
//!
//! It keeps no queue: a push due takes the round's body as it is at that moment, so after a
//! wait lichess gets the latest games, and a body lichess has already taken is not sent
//! again.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::bridge::broadcast::answer::{Answer, GameAnswer};
use crate::bridge::broadcast::pacing::Pacer;
use crate::bridge::broadcast::round::{MAX_GAMES, Round, Selection};
use crate::client::HallUpdate;
use eboard_core::vocab::Millis;
use eboard_core::vocab::parse_round;

/// What lichess last said about one board's game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoardReport {
    /// The board number in the round.
    pub number: u32,
    /// The moves lichess took, once it answered for the game.
    pub moves: Option<u32>,
    /// Why lichess refused the game, when it did.
    pub error: Option<String>,
}

/// The broadcast as it stands, for the operator (`status`, `watch`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Report {
    /// Whether the last push was taken (the board lines then stand on their own).
    pub ok: bool,
    /// One sentence on the broadcast as a whole.
    pub status: String,
    /// Board id → its game's last word from lichess.
    pub boards: BTreeMap<String, BoardReport>,
}

/// A line for the terminal and the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    Info(String),
    Warning(String),
    Error(String),
}

/// The broadcaster's state.
#[derive(Debug)]
pub struct Broadcaster {
    round: Round,
    pacer: Pacer,
    /// The body lichess took last.
    accepted: Option<String>,
    /// The push on its way: its body and its games' (board number, board id).
    sending: Option<(String, Vec<(u32, String)>)>,
    report: Report,
    notices: Vec<Notice>,
    stopped: Option<String>,
    warned_over_limit: bool,
}

impl Broadcaster {
    pub fn new(selection: Selection) -> Broadcaster {
        Broadcaster {
            round: Round::new(selection),
            pacer: Pacer::default(),
            accepted: None,
            sending: None,
            report: Report {
                ok: false,
                status: "waiting for the round's games".into(),
                boards: BTreeMap::new(),
            },
            notices: Vec::new(),
            stopped: None,
            warned_over_limit: false,
        }
    }

    /// The round's games.
    pub fn round(&self) -> &Round {
        &self.round
    }

    /// Applies a change of the hall.
    pub fn on_update(&mut self, update: &HallUpdate) {
        let was_known = self.round.round();
        self.round.apply(update);
        if was_known.is_none()
            && let Some(r) = self.round.round()
        {
            self.say(Notice::Info(format!(
                "following round {r} (Round tags {r}.<board>)"
            )));
        }
        if let HallUpdate::SourceDown { reason } = update {
            self.report.ok = false;
            self.report.status = format!("eboardd is not reachable ({reason}); waiting");
            self.say(Notice::Warning(format!(
                "{reason}; the games stay on lichess as last pushed, waiting for eboardd"
            )));
        }
        if self.round.len() > MAX_GAMES && !self.warned_over_limit {
            self.warned_over_limit = true;
            self.say(Notice::Error(format!(
                "the round now has {} games; lichess takes {MAX_GAMES}: boards {:?} and on \
                 are not pushed",
                self.round.len(),
                self.round
                    .games()
                    .nth(MAX_GAMES)
                    .map(|(n, _)| n)
                    .unwrap_or(0)
            )));
        }
    }

    fn changed(&self) -> bool {
        self.stopped.is_none() && self.round.body().is_some() && self.round.body() != self.accepted
    }

    /// When the next push is due (`None`: nothing to push, or a push is on its way).
    pub fn wake_at(&self) -> Option<Millis> {
        self.pacer.due_at(self.changed())
    }

    /// The body to push now, when one is due; the push then counts as started.
    pub fn poll_push(&mut self, now: Millis) -> Option<String> {
        if !self.pacer.ready(now, self.changed()) {
            return None;
        }
        let body = self.round.body()?;
        let games: Vec<(u32, String)> = self
            .round
            .games()
            .take(MAX_GAMES)
            .map(|(n, g)| (n, g.board_id.clone()))
            .collect();
        self.pacer.started(now);
        self.sending = Some((body.clone(), games));
        Some(body)
    }

    /// lichess answered the push on its way (or the network failed it).
    pub fn on_answer(&mut self, now: Millis, answer: Answer) {
        let Some((body, games)) = self.sending.take() else {
            return;
        };
        let Some(paced) = answer.paced() else {
            if let Answer::Stop(why) = answer {
                self.report.ok = false;
                self.report.status = format!("stopped: {why}");
                self.say(Notice::Error(why.clone()));
                self.stopped = Some(why);
            }
            return;
        };
        let wait = self.pacer.ended(now, paced);
        match answer {
            Answer::Accepted(answers) => {
                let was_ok = self.report.ok;
                self.accepted = Some(body);
                self.report.ok = true;
                self.record(&games, &answers);
                let taken = self
                    .report
                    .boards
                    .values()
                    .filter(|b| b.error.is_none())
                    .count();
                self.report.status = format!("{taken} of {} game(s) on lichess", games.len());
                if !was_ok {
                    self.say(Notice::Info(format!(
                        "lichess took the push: {}",
                        self.report.status
                    )));
                }
            }
            Answer::Retry { why, .. } => {
                self.report.ok = false;
                // The boards of a push that was never taken are shown too (with no answer
                // yet), so `status` says the failure on each; what lichess said of the
                // others stays.
                for (number, id) in &games {
                    self.report
                        .boards
                        .entry(id.clone())
                        .or_insert_with(|| BoardReport {
                            number: *number,
                            moves: None,
                            error: None,
                        });
                }
                self.report.status = format!(
                    "{why}; the latest games go in {:.0} s",
                    wait as f64 / 1000.0
                );
                self.say(Notice::Warning(self.report.status.clone()));
            }
            Answer::Stop(_) => {}
        }
    }

    /// Takes lichess's word on each game into the report, saying what changed.
    fn record(&mut self, games: &[(u32, String)], answers: &[GameAnswer]) {
        let mut boards = BTreeMap::new();
        for (i, (number, id)) in games.iter().enumerate() {
            // lichess answers in the body's order; a `Round` tag, when it has one, says it.
            let answer = answers
                .iter()
                .find(|a| {
                    a.round_tag
                        .as_deref()
                        .and_then(parse_round)
                        .is_some_and(|rb| rb.board == *number)
                })
                .or_else(|| answers.get(i));
            let (moves, error) = match answer.map(|a| &a.outcome) {
                Some(Ok(n)) => (Some(*n), None),
                Some(Err(e)) => (None, Some(e.clone())),
                None => (None, None),
            };
            let before = self.report.boards.get(id).and_then(|b| b.error.clone());
            if error != before {
                let players = answer.map(|a| a.players.as_str()).unwrap_or("?");
                match &error {
                    Some(e) => self.say(Notice::Error(format!(
                        "board {number} ({players}): lichess refused the game: {e}"
                    ))),
                    None => self.say(Notice::Info(format!(
                        "board {number} ({players}): lichess takes the game again"
                    ))),
                }
            }
            boards.insert(
                id.clone(),
                BoardReport {
                    number: *number,
                    moves,
                    error,
                },
            );
        }
        self.report.boards = boards;
    }

    fn say(&mut self, notice: Notice) {
        self.notices.push(notice);
    }

    /// The lines to show since last asked.
    pub fn take_notices(&mut self) -> Vec<Notice> {
        std::mem::take(&mut self.notices)
    }

    pub fn report(&self) -> &Report {
        &self.report
    }

    /// Why the broadcaster stopped, once it has.
    pub fn stopped(&self) -> Option<&str> {
        self.stopped.as_deref()
    }

    /// Whether a push is on its way.
    pub fn in_flight(&self) -> bool {
        self.pacer.in_flight()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn game(round: &str, moves: &str) -> String {
        format!(
            "[Event \"E\"]\n[Round \"{round}\"]\n[White \"W\"]\n[Black \"B\"]\n[Result \"*\"]\n\n{moves} *\n"
        )
    }

    fn set(b: &mut Broadcaster, id: &str, pgn: &str) {
        b.on_update(&HallUpdate::Changed {
            board: id.into(),
            changed: json!({"Pgn": pgn}).as_object().unwrap().clone(),
        });
    }

    fn accepted(moves: &[Result<u32, &str>]) -> Answer {
        Answer::Accepted(
            moves
                .iter()
                .map(|m| GameAnswer {
                    round_tag: None,
                    players: "W - B".into(),
                    outcome: m.map_err(str::to_string),
                })
                .collect(),
        )
    }

    #[test]
    fn the_latest_state_after_a_wait_never_a_queue() {
        let mut b = Broadcaster::new(Selection::default());
        b.on_update(&HallUpdate::Snapshot(vec![]));
        assert_eq!(b.poll_push(0), None, "nothing to push yet");
        set(&mut b, "b1", &game("1.1", "1. e4"));
        let first = b.poll_push(10).unwrap();
        assert!(first.contains("1. e4"));
        set(&mut b, "b1", &game("1.1", "1. e4 e5"));
        assert_eq!(b.poll_push(20), None, "one push at a time");
        b.on_answer(
            300,
            Answer::Retry {
                why: "lichess asks to slow down (HTTP 429)".into(),
                retry_after_ms: Some(5_000),
            },
        );
        assert!(b.report().status.contains("429"));
        set(&mut b, "b1", &game("1.1", "1. e4 e5 2. Nf3"));
        assert_eq!(b.wake_at(), Some(5_300));
        assert_eq!(b.poll_push(5_299), None);
        let next = b.poll_push(5_300).unwrap();
        assert!(
            next.contains("2. Nf3"),
            "the latest, not the state in between"
        );
        b.on_answer(5_400, accepted(&[Ok(3)]));
        assert!(b.report().ok);
        assert_eq!(b.report().boards["b1"].moves, Some(3));
        assert_eq!(b.wake_at(), None, "a body lichess took is not sent again");
    }

    #[test]
    fn per_game_errors_are_reported_once_and_cleared() {
        let mut b = Broadcaster::new(Selection::default());
        b.on_update(&HallUpdate::Snapshot(vec![]));
        set(&mut b, "x", &game("2.1", "1. d4"));
        set(&mut b, "y", &game("2.2", "1. c4"));
        b.take_notices();
        b.poll_push(0).unwrap();
        b.on_answer(100, accepted(&[Ok(1), Err("Invalid PGN")]));
        let notices = b.take_notices();
        assert!(
            notices
                .iter()
                .any(|n| matches!(n, Notice::Error(t) if t.contains("board 2") && t.contains("Invalid PGN"))),
            "{notices:?}"
        );
        assert_eq!(b.report().boards["y"].error.as_deref(), Some("Invalid PGN"));
        set(&mut b, "y", &game("2.2", "1. c4 c5"));
        b.poll_push(1_000).unwrap();
        b.on_answer(1_100, accepted(&[Ok(1), Err("Invalid PGN")]));
        assert!(
            b.take_notices().is_empty(),
            "the same error is not said twice"
        );
        set(&mut b, "y", &game("2.2", "1. c4 e5"));
        b.poll_push(2_100).unwrap();
        b.on_answer(2_200, accepted(&[Ok(1), Ok(2)]));
        assert!(matches!(&b.take_notices()[..], [Notice::Info(t)] if t.contains("again")));
        assert_eq!(b.report().boards["y"].moves, Some(2));
    }

    #[test]
    fn a_refused_token_stops() {
        let mut b = Broadcaster::new(Selection::default());
        b.on_update(&HallUpdate::Snapshot(vec![]));
        set(&mut b, "x", &game("2.1", "1. d4"));
        b.poll_push(0).unwrap();
        b.on_answer(10, Answer::Stop("needs study:write".into()));
        assert_eq!(b.stopped(), Some("needs study:write"));
        set(&mut b, "x", &game("2.1", "1. d4 d5"));
        assert_eq!(b.wake_at(), None);
        assert_eq!(b.poll_push(60_000), None);
    }
}
