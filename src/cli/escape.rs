//! Text from outside on a terminal: board names, tags, serial numbers, the names a broker's
//! publishers chose. A terminal obeys the control characters in what it prints (an escape
//! sequence can clear the screen, retitle the window or hide text), so every string that did
//! not come from this program is shown with its control characters escaped as `\uXXXX`:
//! visible, and still valid inside a JSON string, so the same function serves the `--json`
//! lines. Bidirectional overrides are escaped too: they reorder what is shown around them.
//!
//! [`for_terminal`] is the one escaping function; the others apply it to the shapes the
//! commands print (a board's properties, a JSON value, a `watch` event).

use std::borrow::Cow;
use std::fmt::Write as _;

use serde_json::Value;

use crate::client::event::WatchEvent;
use crate::client::props::BoardProps;

/// Whether a text may keep its line breaks (a PGN, a whole report) or is one line (a name, a
/// tag, an event line), where a line break is as foreign as any other control character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lines {
    One,
    Keep,
}

/// Whether `c` is shown escaped: every control character (C0, DEL, C1; `\n` kept where
/// lines are) and the bidirectional marks and overrides.
fn escaped(c: char, lines: Lines) -> bool {
    if c == '\n' {
        return lines == Lines::One;
    }
    c.is_control()
        || matches!(
            c,
            '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
        )
}

/// `text` as a terminal should show it: every character [`escaped`] written as `\uXXXX`
/// (all of them are in the Basic Multilingual Plane); unchanged, and not copied, when there
/// is none.
pub fn for_terminal(text: &str, lines: Lines) -> Cow<'_, str> {
    if !text.chars().any(|c| escaped(c, lines)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if escaped(c, lines) {
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Escapes `s` in place.
fn fix(s: &mut String, lines: Lines) {
    if let Cow::Owned(clean) = for_terminal(s, lines) {
        *s = clean;
    }
}

/// A board's properties for a terminal: every text escaped, the PGN keeping its lines.
pub fn props(p: &mut BoardProps) {
    let mut pgn = std::mem::take(&mut p.pgn);
    p.texts_mut().for_each(|s| fix(s, Lines::One));
    fix(&mut pgn, Lines::Keep);
    p.pgn = pgn;
}

/// Every string in a JSON value (keys too) escaped; the value of a `Pgn` key keeps its lines.
pub fn json(v: &mut Value) {
    match v {
        Value::String(s) => fix(s, Lines::One),
        Value::Array(items) => items.iter_mut().for_each(json),
        Value::Object(map) => {
            let entries = std::mem::take(map);
            for (key, mut value) in entries {
                match &mut value {
                    Value::String(s) if key == "Pgn" => fix(s, Lines::Keep),
                    _ => json(&mut value),
                }
                map.insert(for_terminal(&key, Lines::One).into_owned(), value);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// A `watch` event for the full-screen view: its board path (a broker's board names are
/// anybody's), properties and signal arguments escaped.
pub fn watch_event(event: WatchEvent) -> WatchEvent {
    let path = |p: String| for_terminal(&p, Lines::One).into_owned();
    match event {
        WatchEvent::Board { path: p, mut props } => {
            self::props(&mut props);
            WatchEvent::Board {
                path: path(p),
                props,
            }
        }
        WatchEvent::Removed { path: p } => WatchEvent::Removed { path: path(p) },
        WatchEvent::Changed {
            path: p,
            mut changed,
        } => {
            let mut map = Value::Object(std::mem::take(&mut changed));
            json(&mut map);
            let Value::Object(changed) = map else {
                unreachable!("an object stays an object")
            };
            WatchEvent::Changed {
                path: path(p),
                changed,
            }
        }
        WatchEvent::Signal { path: p, signal } => {
            // The arguments by their serde names; escaping keeps every enum word as it is (no
            // control characters in those), so the event reads back.
            let escaped = serde_json::to_value(&signal).ok().and_then(|mut v| {
                json(&mut v);
                serde_json::from_value(v).ok()
            });
            WatchEvent::Signal {
                path: path(p),
                signal: escaped.unwrap_or(eboard_core::session::Event::Record(
                    eboard_core::session::RecordFact::Comment {
                        text: "(a signal that cannot be shown)".into(),
                    },
                )),
            }
        }
        other @ (WatchEvent::DaemonStopped | WatchEvent::DaemonStarted) => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_the_rest_is_kept() {
        assert!(matches!(
            for_terminal("Øystein Hansen ♔", Lines::One),
            Cow::Borrowed(_)
        ));
        for (text, shown) in [
            ("a\u{1b}[2Jb\u{7}", "a\\u001b[2Jb\\u0007"),
            ("x\u{9b}1;1H\u{7f}", "x\\u009b1;1H\\u007f"),
            ("evil\u{202e}gnp.exe", "evil\\u202egnp.exe"),
            ("1\n2\r\n", "1\\u000a2\\u000d\\u000a"),
        ] {
            assert_eq!(for_terminal(text, Lines::One), shown);
        }
        assert_eq!(for_terminal("1\n2\r\n", Lines::Keep), "1\n2\\u000d\n");
        // Inside a JSON string the escape is JSON's own: it reads back as the character.
        let line = for_terminal("{\"name\":\"a\u{9b}b\"}", Lines::One).into_owned();
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["name"], "a\u{9b}b");
    }

    #[test]
    fn props_json_and_events_are_escaped_everywhere() {
        let mut p = BoardProps {
            name: "b\u{1b}]0;owned\u{7}".into(),
            serial_number: "1\u{0}".into(),
            pgn: "[White \"\u{1b}[2J\"]\n\n1. e4 *".into(),
            ..Default::default()
        };
        props(&mut p);
        assert_eq!(p.name, "b\\u001b]0;owned\\u0007");
        assert_eq!(p.serial_number, "1\\u0000");
        assert_eq!(p.pgn, "[White \"\\u001b[2J\"]\n\n1. e4 *");

        let mut v =
            serde_json::json!({"Name": "a\nb", "Pgn": "x\ny\u{1b}", "k\u{1b}": [1, "\u{1b}"]});
        json(&mut v);
        assert_eq!(
            v,
            serde_json::json!({"Name": "a\\u000ab", "Pgn": "x\ny\\u001b", "k\\u001b": [1, "\\u001b"]})
        );

        let mut checked = 0;
        for signal in eboard_core::session::signal::every_signal() {
            let mut raw = serde_json::to_value(&signal).unwrap();
            let mut poisoned = false;
            // A control character in every string argument but the event's own tag.
            if let Value::Object(map) = &mut raw {
                for (k, v) in map.iter_mut() {
                    if let Value::String(s) = v
                        && k != "event"
                        && !matches!(s.as_str(), "white" | "black")
                    {
                        s.push('\u{1b}');
                        poisoned = true;
                    }
                }
            }
            // Contract words (results, terminations) cannot hold one: those events are skipped.
            let Ok(hostile) = serde_json::from_value::<eboard_core::session::Event>(raw) else {
                continue;
            };
            if !poisoned {
                continue;
            }
            checked += 1;
            // (Debug shows an escape byte as `\u{1b}`.)
            assert!(format!("{hostile:?}").contains("\\u{1b}"), "{hostile:?}");
            let shown = watch_event(WatchEvent::Signal {
                path: "rig\u{1b}/b".into(),
                signal: hostile.clone(),
            });
            let WatchEvent::Signal { path, signal } = shown else {
                panic!("still a signal");
            };
            assert_eq!(path, "rig\\u001b/b");
            assert_eq!(signal.member(), hostile.member(), "the same signal");
            assert!(!format!("{signal:?}").contains("\\u{1b}"), "{signal:?}");
        }
        assert!(checked >= 4, "only {checked} signals carried text");
    }
}
