//! The state behind the live view: every watched board's properties, when its clock was last
//! reported (so the view can keep the running clock ticking between reports), and the alerts
//! that come from signals rather than properties. Pure: time is passed in, in milliseconds of
//! the watcher's own monotonic clock.

use std::collections::BTreeMap;

use crate::cli::client::{BoardEntry, matches};
use crate::cli::render::clock;
use crate::client::event::WatchEvent;
use crate::client::props::BoardProps;
use eboard_core::session::Event;

/// Milliseconds on the watcher's monotonic clock.
pub type Millis = u64;

/// How loudly an alert is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Needs the arbiter now (illegal placement or move, flag, disconnected board).
    Alarm,
    /// A player may claim something.
    Claim,
    /// The game is over.
    Result,
}

/// An alert shown on a board's panel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alert {
    pub severity: Severity,
    pub text: String,
}

/// An alert raised by a signal, kept for a while after it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Raised {
    text: String,
    /// Half-moves in the game when it was raised.
    plies: usize,
    /// Flag falls stay up until the next game; illegal moves for one full move.
    until_new_game: bool,
}

/// One watched board.
#[derive(Debug, Clone, PartialEq)]
pub struct BoardView {
    pub path: String,
    pub props: BoardProps,
    /// When `WhiteTimeMs`/`BlackTimeMs`/`ClockRunning` were last set.
    clock_at: Millis,
    raised: Vec<Raised>,
    /// The `broadcast` lines of this board (how `eboardctl broadcast` fares with it).
    pub broadcast: Vec<String>,
}

impl BoardView {
    fn new(path: String, props: BoardProps, now: Millis) -> Self {
        BoardView {
            path,
            props,
            clock_at: now,
            raised: Vec::new(),
            broadcast: Vec::new(),
        }
    }

    /// The clock times to show at `now`: the reported ones, with the running side's time
    /// counted down since the report (the daemon reports what the clock shows, and between
    /// reports the clock keeps running).
    pub fn clocks(&self, now: Millis) -> (u64, u64) {
        let p = &self.props;
        let elapsed = now.saturating_sub(self.clock_at);
        let running = p.clock_connected && p.state == "playing";
        let white = if running && p.clock_running == "white" {
            p.white_time_ms.saturating_sub(elapsed)
        } else {
            p.white_time_ms
        };
        let black = if running && p.clock_running == "black" {
            p.black_time_ms.saturating_sub(elapsed)
        } else {
            p.black_time_ms
        };
        (white, black)
    }

    /// The alerts to show now, most urgent first.
    pub fn alerts(&self) -> Vec<Alert> {
        let p = &self.props;
        let mut out = Vec::new();
        let alarm = |text: String| Alert {
            severity: Severity::Alarm,
            text,
        };
        if !p.connected {
            out.push(alarm("BOARD DISCONNECTED".into()));
        }
        if !p.pending_illegal.is_empty() {
            out.push(alarm(format!(
                "ILLEGAL PLACEMENT, {} to move: {}",
                p.turn, p.pending_illegal
            )));
        }
        if !p.gap.is_empty() {
            out.push(Alert {
                severity: Severity::Claim,
                text: format!("GAP: {}", p.gap),
            });
        }
        if p.battery.known()
            && !p.battery.charging
            && p.battery.percent < crate::cli::render::BATTERY_LOW_PERCENT
        {
            // An operator's job before it is an arbiter's: charge or swap the board.
            out.push(Alert {
                severity: Severity::Claim,
                text: format!("BATTERY {}%: charge the board", p.battery.percent),
            });
        }
        for r in &self.raised {
            out.push(alarm(r.text.clone()));
        }
        for c in &p.claims {
            let mut text = format!("CLAIM {}: {}", c.player, c.kind);
            if !c.detail.is_empty() {
                text.push(' ');
                text.push_str(&c.detail);
            }
            out.push(Alert {
                severity: Severity::Claim,
                text,
            });
        }
        for line in &self.broadcast {
            // A game lichess refused needs someone; one it took is news, shown quietly.
            let severity = if line.contains('✗') || line.contains("; ") {
                Severity::Claim
            } else {
                Severity::Result
            };
            out.push(Alert {
                severity,
                text: line.clone(),
            });
        }
        if p.state == "finished" {
            let mut text = format!("RESULT {}", p.result);
            if !p.termination.is_empty() {
                text.push_str(&format!(" ({})", p.termination));
            }
            out.push(Alert {
                severity: Severity::Result,
                text,
            });
        }
        out
    }

    /// Whether anything on this board needs the arbiter.
    pub fn alarmed(&self) -> bool {
        self.alerts().iter().any(|a| a.severity == Severity::Alarm)
    }

    /// Signal-raised alerts expire: an illegal move once a full move has been played since,
    /// everything when a new game starts.
    fn expire(&mut self) {
        let plies = self.props.moves.len();
        self.raised
            .retain(|r| r.until_new_game || plies < r.plies + 2);
    }
}

/// Every watched board, by object path.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// The boards asked for on the command line (names, ids or paths); empty = all.
    filter: Vec<String>,
    boards: BTreeMap<String, BoardView>,
    /// Whether the daemon owns its name.
    pub daemon_running: bool,
}

impl Model {
    /// A model watching the boards `filter` designates (all when empty).
    pub fn new(filter: Vec<String>) -> Self {
        Model {
            filter,
            boards: BTreeMap::new(),
            daemon_running: true,
        }
    }

    fn wanted(&self, path: &str, props: &BoardProps) -> bool {
        let entry = BoardEntry {
            path: path.to_owned(),
            props: props.clone(),
        };
        self.filter.is_empty() || self.filter.iter().any(|w| matches(&entry, w))
    }

    /// Whether events about `path` concern this watcher.
    pub fn watches(&self, path: &str) -> bool {
        self.boards.contains_key(path)
    }

    /// The name to show for the board at `path` (its id if unknown).
    pub fn name_of(&self, path: &str) -> String {
        match self.boards.get(path) {
            Some(b) if !b.props.name.is_empty() => b.props.name.clone(),
            _ => crate::client::board_id(path).to_owned(),
        }
    }

    /// Boards in display order: by name, then path.
    pub fn boards(&self) -> Vec<&BoardView> {
        let mut v: Vec<&BoardView> = self.boards.values().collect();
        v.sort_by(|a, b| {
            a.props
                .name
                .cmp(&b.props.name)
                .then_with(|| a.path.cmp(&b.path))
        });
        v
    }

    /// Sets every watched board's `broadcast` lines (`lines_of` a board's object id); returns
    /// the boards whose lines changed, with their new lines, for a line-per-event watcher.
    pub fn set_broadcast(
        &mut self,
        lines_of: impl Fn(&str) -> Vec<String>,
    ) -> Vec<(String, Vec<String>)> {
        let mut changed = Vec::new();
        for (path, view) in &mut self.boards {
            let lines = lines_of(crate::client::board_id(path));
            if lines != view.broadcast {
                view.broadcast = lines.clone();
                changed.push((path.clone(), lines));
            }
        }
        changed
    }

    /// Updates the model with one event at time `now`. Returns whether the event concerned a
    /// watched board or the daemon (what a line-per-event watcher prints).
    pub fn apply(&mut self, event: &WatchEvent, now: Millis) -> bool {
        match event {
            WatchEvent::Board { path, props } => {
                if !self.wanted(path, props) {
                    return false;
                }
                match self.boards.get_mut(path) {
                    Some(b) => {
                        b.props = (**props).clone();
                        b.clock_at = now;
                        b.expire();
                    }
                    None => {
                        self.boards.insert(
                            path.clone(),
                            BoardView::new(path.clone(), (**props).clone(), now),
                        );
                    }
                }
                true
            }
            WatchEvent::Removed { path } => self.boards.remove(path).is_some(),
            WatchEvent::Changed { path, changed } => {
                let Some(b) = self.boards.get_mut(path) else {
                    return false;
                };
                let clock_changes = changed.keys().any(|k| {
                    matches!(
                        k.as_str(),
                        "WhiteTimeMs" | "BlackTimeMs" | "ClockRunning" | "ClockConnected" | "State"
                    )
                });
                if clock_changes {
                    // Freeze both clocks at what they show now before applying the change, so
                    // a press (the running side changes) or a report for one side does not
                    // make the other clock jump back to its last report.
                    let (white, black) = b.clocks(now);
                    b.props.white_time_ms = white;
                    b.props.black_time_ms = black;
                    b.clock_at = now;
                }
                for (name, value) in changed {
                    b.props.apply(name, value);
                }
                b.expire();
                true
            }
            WatchEvent::Signal { path, signal } => {
                let Some(b) = self.boards.get_mut(path) else {
                    return false;
                };
                match signal {
                    Event::GameStarted { .. } => b.raised.clear(),
                    Event::IllegalMoveCompleted {
                        player,
                        count,
                        description,
                    } => b.raised.push(Raised {
                        text: format!("ILLEGAL MOVE by {player} (#{count}): {description}"),
                        plies: b.props.moves.len(),
                        until_new_game: false,
                    }),
                    Event::FlagFell { player } => b.raised.push(Raised {
                        text: format!("FLAG: {player}'s time is up"),
                        plies: b.props.moves.len(),
                        until_new_game: true,
                    }),
                    // Shown from the properties (moves, pending illegal, result) instead.
                    Event::MovePlayed { .. }
                    | Event::MoveRetracted { .. }
                    | Event::IllegalPlacement { .. }
                    | Event::GameEnded { .. }
                    // Never decoded from the bus: not a signal.
                    | Event::Record(_) => {}
                }
                true
            }
            WatchEvent::DaemonStopped => {
                self.daemon_running = false;
                self.boards.clear();
                true
            }
            WatchEvent::DaemonStarted => {
                self.daemon_running = true;
                true
            }
        }
    }

    /// The filter entries that match no watched board (for a "waiting for" note).
    pub fn missing(&self) -> Vec<&str> {
        self.filter
            .iter()
            .filter(|w| {
                !self.boards.values().any(|b| {
                    matches(
                        &BoardEntry {
                            path: b.path.clone(),
                            props: b.props.clone(),
                        },
                        w,
                    )
                })
            })
            .map(String::as_str)
            .collect()
    }
}

/// A compact human description of a changed property value, for one-line output.
pub fn describe_property(name: &str, value: &serde_json::Value) -> String {
    use serde_json::Value;
    match (name, value) {
        ("WhiteTimeMs" | "BlackTimeMs", Value::Number(n)) => {
            n.as_u64().map(clock).unwrap_or_else(|| n.to_string())
        }
        ("Pgn", Value::String(s)) => format!("<{} lines>", s.lines().count()),
        ("Moves", Value::Array(a)) => match a.last().and_then(Value::as_str) {
            Some(last) => format!("[{} half-moves, last {last}]", a.len()),
            None => "[]".to_owned(),
        },
        ("Claims", Value::Array(a)) if a.is_empty() => "none".to_owned(),
        ("Claims", Value::Array(a)) => a
            .iter()
            .map(|c| match c.as_array() {
                Some(f) => f
                    .iter()
                    .filter_map(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
                    .join(" "),
                None => c.to_string(),
            })
            .collect::<Vec<_>>()
            .join("; "),
        (_, Value::String(s)) if s.is_empty() => "\"\"".to_owned(),
        (_, Value::String(s)) => s.replace('\n', " "),
        (_, Value::Bool(b)) => if *b { "yes" } else { "no" }.to_owned(),
        (_, other) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::props::Claim;
    use eboard_core::vocab::Player;
    use serde_json::{Map, json};

    const P: &str = "/org/eboardd/Bridge1/Board/board_1";

    fn props() -> BoardProps {
        BoardProps {
            name: "board-1".into(),
            connected: true,
            state: "playing".into(),
            turn: "white".into(),
            clock_connected: true,
            white_time_ms: 60_000,
            black_time_ms: 50_000,
            clock_running: "white".into(),
            ..Default::default()
        }
    }

    fn changed(pairs: &[(&str, serde_json::Value)]) -> WatchEvent {
        let mut m = Map::new();
        for (k, v) in pairs {
            m.insert((*k).to_owned(), v.clone());
        }
        WatchEvent::Changed {
            path: P.into(),
            changed: m,
        }
    }

    fn signal(s: Event) -> WatchEvent {
        WatchEvent::Signal {
            path: P.into(),
            signal: s,
        }
    }

    fn model() -> Model {
        let mut m = Model::new(vec![]);
        assert!(m.apply(
            &WatchEvent::Board {
                path: P.into(),
                props: Box::new(props())
            },
            1_000
        ));
        m
    }

    #[test]
    fn running_clock_ticks_between_reports() {
        let mut m = model();
        let b = &m.boards()[0];
        assert_eq!(b.clocks(1_000), (60_000, 50_000));
        assert_eq!(b.clocks(3_500), (57_500, 50_000));
        assert_eq!(b.clocks(100_000), (0, 50_000));
        // A report resets the reference point.
        m.apply(
            &changed(&[
                ("WhiteTimeMs", json!(58_000)),
                ("ClockRunning", json!("black")),
            ]),
            4_000,
        );
        let b = &m.boards()[0];
        assert_eq!(b.clocks(5_000), (58_000, 49_000));
        // A press reported without times: White's clock stops where it stood.
        m.apply(&changed(&[("ClockRunning", json!("white"))]), 6_000);
        assert_eq!(m.boards()[0].clocks(6_500), (57_500, 48_000));
    }

    #[test]
    fn stopped_or_finished_clocks_do_not_tick() {
        let mut m = model();
        // Stopped a second after the report: White's clock stays where it stood.
        m.apply(&changed(&[("ClockRunning", json!("none"))]), 2_000);
        assert_eq!(m.boards()[0].clocks(9_000), (59_000, 50_000));
        let mut m = model();
        m.apply(&changed(&[("State", json!("finished"))]), 2_000);
        assert_eq!(m.boards()[0].clocks(9_000), (59_000, 50_000));
    }

    #[test]
    fn property_alerts_follow_the_properties() {
        let mut m = model();
        assert!(m.boards()[0].alerts().is_empty());
        m.apply(
            &changed(&[
                ("PendingIllegal", json!("Ke1-e3")),
                ("Claims", json!([["black", "fifty-moves", ""]])),
            ]),
            2_000,
        );
        let b = m.boards()[0];
        assert!(b.alarmed());
        assert_eq!(
            b.alerts(),
            vec![
                Alert {
                    severity: Severity::Alarm,
                    text: "ILLEGAL PLACEMENT, white to move: Ke1-e3".into()
                },
                Alert {
                    severity: Severity::Claim,
                    text: "CLAIM black: fifty-moves".into()
                }
            ]
        );
        m.apply(
            &changed(&[("PendingIllegal", json!("")), ("Claims", json!([]))]),
            3_000,
        );
        assert!(m.boards()[0].alerts().is_empty());
    }

    #[test]
    fn illegal_move_alert_lasts_one_full_move() {
        let mut m = model();
        m.apply(&changed(&[("Moves", json!(["e4", "e5"]))]), 1_100);
        m.apply(
            &signal(Event::IllegalMoveCompleted {
                player: Player::White,
                count: 1,
                description: "Bf1-a7".into(),
            }),
            1_200,
        );
        assert_eq!(
            m.boards()[0].alerts()[0].text,
            "ILLEGAL MOVE by white (#1): Bf1-a7"
        );
        m.apply(&changed(&[("Moves", json!(["e4", "e5", "Nf3"]))]), 1_300);
        assert!(m.boards()[0].alarmed());
        m.apply(
            &changed(&[("Moves", json!(["e4", "e5", "Nf3", "Nc6"]))]),
            1_400,
        );
        assert!(!m.boards()[0].alarmed());
    }

    #[test]
    fn flag_alert_lasts_until_the_next_game() {
        let mut m = model();
        m.apply(
            &signal(Event::FlagFell {
                player: Player::Black,
            }),
            2_000,
        );
        m.apply(&changed(&[("Moves", json!(["a", "b", "c", "d"]))]), 2_100);
        assert_eq!(m.boards()[0].alerts()[0].text, "FLAG: black's time is up");
        m.apply(&signal(Event::GameStarted { fen: "x".into() }), 3_000);
        assert!(!m.boards()[0].alarmed());
    }

    #[test]
    fn a_low_battery_is_an_operators_warning_unless_it_charges() {
        let alerts = |battery: (i32, bool)| {
            let mut p = props();
            p.battery = battery.into();
            let mut m = Model::new(vec![]);
            m.apply(
                &WatchEvent::Board {
                    path: P.into(),
                    props: Box::new(p),
                },
                0,
            );
            m.boards()[0]
                .alerts()
                .into_iter()
                .filter(|a| a.text.starts_with("BATTERY"))
                .map(|a| (a.text, a.severity))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            alerts((19, false)),
            [("BATTERY 19%: charge the board".to_string(), Severity::Claim)]
        );
        assert!(alerts((19, true)).is_empty(), "charging");
        assert!(alerts((20, false)).is_empty());
        assert!(alerts((-1, false)).is_empty(), "no battery");
    }

    #[test]
    fn disconnected_and_finished_boards_say_so() {
        let mut p = props();
        p.connected = false;
        p.state = "finished".into();
        p.result = "1-0".into();
        p.termination = "checkmate".into();
        p.claims = vec![Claim {
            player: "white".into(),
            kind: "x".into(),
            detail: "d".into(),
        }];
        let mut m = Model::new(vec![]);
        m.apply(
            &WatchEvent::Board {
                path: P.into(),
                props: Box::new(p),
            },
            0,
        );
        let texts: Vec<String> = m.boards()[0].alerts().into_iter().map(|a| a.text).collect();
        assert_eq!(
            texts,
            vec![
                "BOARD DISCONNECTED",
                "CLAIM white: x d",
                "RESULT 1-0 (checkmate)"
            ]
        );
    }

    #[test]
    fn filter_keeps_only_the_boards_asked_for() {
        let mut m = Model::new(vec!["board_2".into()]);
        assert!(!m.apply(
            &WatchEvent::Board {
                path: P.into(),
                props: Box::new(props())
            },
            0
        ));
        assert!(!m.apply(&changed(&[("Fen", json!("x"))]), 0));
        assert_eq!(m.missing(), vec!["board_2"]);
        let mut p2 = props();
        p2.name = "board-2".into();
        assert!(m.apply(
            &WatchEvent::Board {
                path: "/org/eboardd/Bridge1/Board/board_2".into(),
                props: Box::new(p2)
            },
            0
        ));
        assert!(m.missing().is_empty());
        assert_eq!(m.boards().len(), 1);
    }

    #[test]
    fn daemon_stop_clears_boards() {
        let mut m = model();
        assert!(m.apply(&WatchEvent::DaemonStopped, 5));
        assert!(!m.daemon_running);
        assert!(m.boards().is_empty());
        m.apply(&WatchEvent::DaemonStarted, 6);
        assert!(m.daemon_running);
        assert_eq!(m.name_of(P), "board_1");
    }

    #[test]
    fn property_values_are_described_compactly() {
        assert_eq!(describe_property("WhiteTimeMs", &json!(61_000)), "0:01:01");
        assert_eq!(
            describe_property("Pgn", &json!("[A \"b\"]\n\n1. e4 *\n")),
            "<3 lines>"
        );
        assert_eq!(
            describe_property("Moves", &json!(["e4", "e5"])),
            "[2 half-moves, last e5]"
        );
        assert_eq!(
            describe_property("Claims", &json!([["white", "fifty-moves", ""]])),
            "white fifty-moves"
        );
        assert_eq!(describe_property("Claims", &json!([])), "none");
        assert_eq!(describe_property("InSync", &json!(false)), "no");
        assert_eq!(describe_property("PendingIllegal", &json!("")), "\"\"");
        assert_eq!(describe_property("IllegalMoves", &json!([0, 1])), "[0,1]");
    }
}
