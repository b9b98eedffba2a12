//! `watch` when stdout is not a terminal or with `--json`: one line per event, as text for
//! people and logs, or as one JSON object for scripts and overlays.

use serde_json::{Value, json};

use crate::cli::render::board_json;
use crate::cli::watch::model::describe_property;
use crate::client::event::WatchEvent;

/// Wall-clock milliseconds since the Unix epoch as `HH:MM:SS` (UTC).
pub fn time_of_day(unix_ms: u64) -> String {
    let s = unix_ms / 1000;
    format!("{:02}:{:02}:{:02}", (s / 3600) % 24, (s / 60) % 60, s % 60)
}

/// The text line for an event about board `name` (ignored for daemon events).
/// The line (text or JSON) saying a board's `broadcast` lines changed; no lines: the
/// broadcaster stopped pushing it.
pub fn broadcast_line(
    name: &str,
    path: &str,
    lines: &[String],
    unix_ms: u64,
    json: bool,
) -> String {
    if json {
        return serde_json::json!({
            "event": "Broadcast",
            "time_ms": unix_ms,
            "board": name,
            "path": path,
            "lines": lines,
        })
        .to_string();
    }
    let what = if lines.is_empty() {
        "broadcast: no longer pushed".to_string()
    } else {
        lines.join(" | ")
    };
    format!("{} {name} {what}", time_of_day(unix_ms))
}

pub fn text_line(event: &WatchEvent, name: &str, unix_ms: u64) -> String {
    let t = time_of_day(unix_ms);
    let what = match event {
        WatchEvent::Board { props, .. } => format!(
            "{name} board: {}{}, {} half-moves, {} {}",
            props.state,
            if props.state == "finished" {
                format!(" {} {}", props.result, props.termination)
            } else {
                String::new()
            },
            props.moves.len(),
            props.port,
            if props.connected {
                "connected"
            } else {
                "disconnected"
            }
        ),
        WatchEvent::Removed { .. } => format!("{name} removed"),
        WatchEvent::Changed { changed, .. } => {
            let parts: Vec<String> = changed
                .iter()
                .map(|(k, v)| format!("{k}={}", describe_property(k, v)))
                .collect();
            format!("{name} changed {}", parts.join(" "))
        }
        // The one description of an event, the core's (`decode --events` prints it too).
        WatchEvent::Signal { signal, .. } => format!("{name} {signal}"),
        WatchEvent::DaemonStopped => "eboardd stopped".to_owned(),
        WatchEvent::DaemonStarted => "eboardd started".to_owned(),
    };
    format!("{t} {what}")
}

/// The JSON object for an event about board `name`: always `time_ms` and `event`; `board` and
/// `path` for board events; then the event's own fields (a signal's arguments under their
/// contract names, `changed` for property changes, `properties` for a board's full state).
pub fn json_line(event: &WatchEvent, name: &str, unix_ms: u64) -> Value {
    let mut obj = match event {
        WatchEvent::Board { path, props } => json!({
            "event": "Board",
            "properties": board_json(props, path),
        }),
        WatchEvent::Removed { .. } => json!({"event": "BoardRemoved"}),
        WatchEvent::Changed { changed, .. } => json!({
            "event": "PropertiesChanged",
            "changed": Value::Object(changed.clone()),
        }),
        WatchEvent::Signal { signal, .. } => match signal.signal_args() {
            Some((member, mut args)) => {
                args.insert("event".into(), member.into());
                Value::Object(args)
            }
            // Not a signal (the decoder never gives one): nothing of it to show.
            None => json!({"event": "?"}),
        },
        WatchEvent::DaemonStopped => json!({"event": "DaemonStopped"}),
        WatchEvent::DaemonStarted => json!({"event": "DaemonStarted"}),
    };
    if let Some(map) = obj.as_object_mut() {
        map.insert("time_ms".into(), unix_ms.into());
        if let Some(path) = event.path() {
            map.insert("board".into(), name.into());
            map.insert("path".into(), path.into());
        }
    }
    obj
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::props::BoardProps;
    use eboard_core::event::Event;
    use eboard_core::vocab::Player;
    use serde_json::Map;

    const P: &str = "/org/eboardd/Bridge1/Board/board_1";
    // 2026-11-30 09:05:03 UTC.
    const T: u64 = 1_796_029_503_000;

    fn moved(ply: u32, san: &str, fen: &str) -> WatchEvent {
        WatchEvent::Signal {
            path: P.into(),
            signal: Event::MovePlayed {
                ply,
                san: san.into(),
                uci: "e2e4".into(),
                fen: fen.into(),
                white_ms: 180_000,
                black_ms: 179_000,
            },
        }
    }

    #[test]
    fn moves_read_like_a_score_sheet() {
        let e = moved(
            1,
            "e4",
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
        );
        assert_eq!(
            text_line(&e, "board-1", T),
            "09:05:03 board-1 MovePlayed 1. e4 (e2e4) white 0:03:00 black 0:02:59"
        );
        let e = moved(4, "Nc6", "x w - - 2 3");
        assert!(text_line(&e, "b", T).contains("MovePlayed 2... Nc6"));
        assert!(text_line(&moved(3, "Nf3", "?"), "b", T).contains("MovePlayed 2. Nf3"));
        assert!(text_line(&moved(4, "Nc6", "?"), "b", T).contains("MovePlayed 2... Nc6"));
    }

    #[test]
    fn alerts_and_changes_are_one_line_each() {
        let e = WatchEvent::Signal {
            path: P.into(),
            signal: Event::IllegalMoveCompleted {
                player: Player::Black,
                count: 2,
                description: "Ra8-a1".into(),
            },
        };
        assert_eq!(
            text_line(&e, "board-1", T),
            "09:05:03 board-1 IllegalMoveCompleted black #2: Ra8-a1"
        );
        let mut changed = Map::new();
        changed.insert("Pgn".into(), json!("[A \"b\"]\n\n1. e4 *"));
        changed.insert("WhiteTimeMs".into(), json!(5_000));
        let e = WatchEvent::Changed {
            path: P.into(),
            changed,
        };
        let line = text_line(&e, "board-1", T);
        assert!(!line.contains('\n'));
        assert!(line.contains("Pgn=<3 lines>"));
        assert!(line.contains("WhiteTimeMs=0:00:05"));
    }

    #[test]
    fn json_lines_carry_contract_names() {
        let v = json_line(&moved(1, "e4", "fen b - - 0 1"), "board-1", T);
        assert_eq!(v["event"], "MovePlayed");
        assert_eq!(v["board"], "board-1");
        assert_eq!(v["path"], P);
        assert_eq!(v["ply"], 1);
        assert_eq!(v["white_ms"], 180_000);
        assert_eq!(v["time_ms"], T);
        let v = json_line(
            &WatchEvent::Board {
                path: P.into(),
                props: Box::new(BoardProps {
                    name: "board-1".into(),
                    ..Default::default()
                }),
            },
            "board-1",
            T,
        );
        assert_eq!(v["properties"]["Name"], "board-1");
        assert_eq!(v["properties"]["Id"], "board_1");
        let v = json_line(&WatchEvent::DaemonStopped, "", T);
        assert_eq!(v, json!({"event": "DaemonStopped", "time_ms": T}));
    }

    /// The `--json` line of every board signal, byte for byte: scripts and overlays parse it,
    /// so how the signal is held inside must not show.
    #[test]
    fn every_signal_line_is_pinned() {
        // The events are `every_signal`'s: GameStarted f0, MovePlayed 3 Nf3, …, GameEnded ½-½.
        let jsons = [
            r#"{"board":"b","event":"GameStarted","fen":"f0","path":"/org/eboardd/Bridge1/Board/board_1","time_ms":1796029503000}"#,
            r#"{"black_ms":2,"board":"b","event":"MovePlayed","fen":"f1","path":"/org/eboardd/Bridge1/Board/board_1","ply":3,"san":"Nf3","time_ms":1796029503000,"uci":"g1f3","white_ms":1}"#,
            r#"{"board":"b","event":"MoveRetracted","fen":"f2","path":"/org/eboardd/Bridge1/Board/board_1","ply":2,"time_ms":1796029503000}"#,
            r#"{"board":"b","description":"Ke1-e3","event":"IllegalPlacement","path":"/org/eboardd/Bridge1/Board/board_1","placement":"p3","player":"white","time_ms":1796029503000}"#,
            r#"{"board":"b","count":2,"description":"Ra8-a1","event":"IllegalMoveCompleted","path":"/org/eboardd/Bridge1/Board/board_1","player":"black","time_ms":1796029503000}"#,
            r#"{"board":"b","event":"FlagFell","path":"/org/eboardd/Bridge1/Board/board_1","player":"black","time_ms":1796029503000}"#,
            r#"{"board":"b","event":"GameEnded","path":"/org/eboardd/Bridge1/Board/board_1","result":"1/2-1/2","termination":"flag-fall-draw","time_ms":1796029503000}"#,
        ];
        let texts = [
            "09:05:03 b GameStarted f0",
            "09:05:03 b MovePlayed 2. Nf3 (g1f3) white 0:00:00 black 0:00:00",
            "09:05:03 b MoveRetracted ply 2",
            "09:05:03 b IllegalPlacement white to move: Ke1-e3",
            "09:05:03 b IllegalMoveCompleted black #2: Ra8-a1",
            "09:05:03 b FlagFell black",
            "09:05:03 b GameEnded 1/2-1/2 flag-fall-draw",
        ];
        let signals = eboard_core::session::signal::every_signal();
        assert_eq!(signals.len(), jsons.len());
        for ((signal, want), text) in signals.into_iter().zip(jsons).zip(texts) {
            let e = WatchEvent::Signal {
                path: P.into(),
                signal,
            };
            assert_eq!(json_line(&e, "b", T).to_string(), want);
            assert_eq!(text_line(&e, "b", T), text);
        }
    }

    #[test]
    fn time_of_day_is_utc() {
        assert_eq!(time_of_day(T), "09:05:03");
        assert_eq!(time_of_day(0), "00:00:00");
    }
}
