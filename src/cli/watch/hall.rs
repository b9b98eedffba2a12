//! `eboardctl watch --mqtt URL`: the same live view, of every board of a hall, fed from the
//! broker the relays publish to ([`crate::client::mqtt`]) instead of the local bus.
//!
//! [`Adapter`] (pure) turns the client model's [`HallUpdate`]s into the view's own
//! [`WatchEvent`]s: a board's "path" is its hall id `<rig>/<board id>`, and its name is shown
//! as `<rig>/<Name>`, since two rigs may well both have a `board-1`. The loops below then feed
//! the same [`Model`], [`screen`] and [`line`] as the bus watcher.

use std::collections::BTreeSet;
use std::io::{IsTerminal, Write};
use std::time::Instant;

use serde_json::Value;
use tokio::sync::mpsc;

use crate::cli::error::CtlError;
use crate::cli::props::BoardProps;
use crate::cli::relay::HallSource;
use crate::cli::watch::event::{BoardSignal, WatchEvent};
use crate::cli::watch::model::Model;
use crate::cli::watch::{TICK, line, screen, terminal, unix_ms};
use crate::client::{HallUpdate, Props};

/// Hall updates → watch events, remembering which boards the view has.
#[derive(Debug, Default)]
pub struct Adapter {
    known: BTreeSet<String>,
}

/// The name to show for a hall board: `<rig>/<Name>` (the id when it has no name).
fn hall_name(id: &str, name: Option<&str>) -> String {
    match (id.split_once('/'), name) {
        (Some((rig, _)), Some(n)) if !n.is_empty() => format!("{rig}/{n}"),
        _ => id.to_owned(),
    }
}

fn board_props(id: &str, props: &Props) -> Box<BoardProps> {
    let mut p = BoardProps::from_map(props);
    p.name = hall_name(id, props.get("Name").and_then(Value::as_str));
    Box::new(p)
}

impl Adapter {
    pub fn events(&mut self, update: HallUpdate) -> Vec<WatchEvent> {
        match update {
            HallUpdate::Snapshot(boards) => {
                let now: BTreeSet<String> = boards.iter().map(|(id, _)| id.clone()).collect();
                let mut out = vec![WatchEvent::DaemonStarted];
                for gone in self.known.difference(&now) {
                    out.push(WatchEvent::Removed { path: gone.clone() });
                }
                for (id, props) in &boards {
                    out.push(WatchEvent::Board {
                        path: id.clone(),
                        props: board_props(id, props),
                    });
                }
                self.known = now;
                out
            }
            HallUpdate::Added { board, props } => {
                self.known.insert(board.clone());
                let props = board_props(&board, &props);
                vec![WatchEvent::Board { path: board, props }]
            }
            HallUpdate::Removed { board } => {
                self.known.remove(&board);
                vec![WatchEvent::Removed { path: board }]
            }
            HallUpdate::Changed { board, mut changed } => {
                if let Some(Value::String(n)) = changed.get("Name") {
                    let shown = hall_name(&board, Some(n));
                    changed.insert("Name".into(), Value::from(shown));
                }
                vec![WatchEvent::Changed {
                    path: board,
                    changed,
                }]
            }
            HallUpdate::Signal {
                board,
                member,
                args,
            } => {
                let mut tagged = args;
                tagged.insert("event".into(), Value::from(member));
                // A member this version does not know is shown by its property changes only.
                match serde_json::from_value::<BoardSignal>(Value::Object(tagged)) {
                    Ok(signal) => vec![WatchEvent::Signal {
                        path: board,
                        signal,
                    }],
                    Err(_) => Vec::new(),
                }
            }
            HallUpdate::SourceDown { .. } => {
                self.known.clear();
                vec![WatchEvent::DaemonStopped]
            }
        }
    }
}

/// Runs `watch --mqtt` until interrupted.
pub async fn run(source: HallSource, json: bool, boards: Vec<String>) -> Result<(), CtlError> {
    let mut stop = Box::pin(crate::cli::relay::stop_signal()?);
    let label = format!("broker {}", source.broker.url);
    let (tx, mut rx) = mpsc::channel(1024);
    let feed = tokio::spawn(source.follow(tx));
    let mut adapter = Adapter::default();
    let mut model = Model::new(boards);
    let started = Instant::now();
    let now = |s: &Instant| s.elapsed().as_millis() as u64;
    let result = if json || !std::io::stdout().is_terminal() {
        loop {
            let update = tokio::select! {
                u = rx.recv() => u,
                _ = &mut stop => break Ok(()),
            };
            let Some(update) = update else {
                break Err(CtlError::Other("the broker feed stopped".into()));
            };
            for event in adapter.events(update) {
                let name = match &event {
                    WatchEvent::Board { props, .. } => props.name.clone(),
                    other => other.path().map(|p| model.name_of(p)).unwrap_or_default(),
                };
                if !model.apply(&event, now(&started)) {
                    continue;
                }
                let text = if json {
                    line::json_line(&event, &name, unix_ms()).to_string()
                } else {
                    line::text_line(&event, &name, unix_ms())
                };
                let mut out = std::io::stdout().lock();
                if writeln!(out, "{text}").and_then(|()| out.flush()).is_err() {
                    feed.abort();
                    return Ok(());
                }
            }
        }
    } else {
        let _screen = terminal::FullScreen::enter();
        let mut ticker = tokio::time::interval(TICK);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut last_frame = String::new();
        loop {
            let (cols, rows) = terminal::size().unwrap_or((80, 24));
            let tod = format!("{} UTC", line::time_of_day(unix_ms()));
            let frame = screen::render(
                &model,
                now(&started),
                &screen::Frame {
                    bus: &label,
                    time_of_day: &tod,
                    cols,
                    rows,
                },
            );
            if frame != last_frame {
                let mut out = std::io::stdout().lock();
                if out
                    .write_all(frame.as_bytes())
                    .and_then(|()| out.flush())
                    .is_err()
                {
                    break Ok(());
                }
                last_frame = frame;
            }
            tokio::select! {
                u = rx.recv() => match u {
                    Some(update) => {
                        for e in adapter.events(update) {
                            model.apply(&e, now(&started));
                        }
                    }
                    None => break Err(CtlError::Other("the broker feed stopped".into())),
                },
                _ = ticker.tick() => {}
                _ = &mut stop => break Ok(()),
            }
        }
    };
    feed.abort();
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(v: Value) -> Props {
        v.as_object().expect("object").clone()
    }

    #[test]
    fn hall_updates_become_watch_events_with_rig_names() {
        let mut a = Adapter::default();
        let out = a.events(HallUpdate::Snapshot(vec![
            (
                "r1/board_1".into(),
                p(json!({"Name": "board-1", "State": "playing"})),
            ),
            ("r2/board_1".into(), p(json!({"Name": "board-1"}))),
        ]));
        assert_eq!(out[0], WatchEvent::DaemonStarted);
        let names: Vec<String> = out[1..]
            .iter()
            .map(|e| match e {
                WatchEvent::Board { props, .. } => props.name.clone(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(names, vec!["r1/board-1", "r2/board-1"]);

        let out = a.events(HallUpdate::Signal {
            board: "r1/board_1".into(),
            member: "MovePlayed".into(),
            args: p(json!({"ply": 1, "san": "e4", "uci": "e2e4", "fen": "f", "white_ms": 5, "black_ms": 6})),
        });
        assert_eq!(
            out,
            vec![WatchEvent::Signal {
                path: "r1/board_1".into(),
                signal: BoardSignal::MovePlayed {
                    ply: 1,
                    san: "e4".into(),
                    uci: "e2e4".into(),
                    fen: "f".into(),
                    white_ms: 5,
                    black_ms: 6
                }
            }]
        );
        let unknown = a.events(HallUpdate::Signal {
            board: "r1/board_1".into(),
            member: "SomethingNew".into(),
            args: Props::new(),
        });
        assert!(unknown.is_empty());

        // A new snapshot without r2's board removes it from the view.
        let out = a.events(HallUpdate::Snapshot(vec![(
            "r1/board_1".into(),
            p(json!({"Name": "board-1"})),
        )]));
        assert!(out.contains(&WatchEvent::Removed {
            path: "r2/board_1".into()
        }));
        assert_eq!(
            a.events(HallUpdate::SourceDown { reason: "x".into() }),
            vec![WatchEvent::DaemonStopped]
        );
    }
}
