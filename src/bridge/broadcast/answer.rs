//! lichess's answer to a push, read: the HTTP status, `Retry-After` and the JSON body
//! (`{"games": [{"tags": {...}, "moves": N} or {"tags": {...}, "error": TEXT}]}`, or
//! `{"error": TEXT}` with a refusal) become what the broadcaster does next. Pure.
//!
//! Only a well-formed answer counts as taken: HTTP 200 with that `games` body. Anything else
//! that is not a refusal lichess makes — a 200 whose body is a captive portal's page or a
//! proxy's, another 2xx, a redirect (never followed: the push goes to `--url`'s endpoint or
//! nowhere) — is a failure the status says, and the latest games are pushed again.

use serde_json::Value;

use crate::bridge::broadcast::pacing::{Paced, retry_after_ms};
use eboard_core::vocab::Millis;

/// What lichess said about one pushed game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameAnswer {
    /// The game's `Round` tag as lichess read it, when it named one.
    pub round_tag: Option<String>,
    /// `White - Black` as lichess read them, for messages.
    pub players: String,
    /// The moves lichess took, or why it took none.
    pub outcome: Result<u32, String>,
}

/// What a push came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Taken; lichess's word on each game (empty when the body named none).
    Accepted(Vec<GameAnswer>),
    /// Not taken now, to be tried again with the latest games (rate limit, lichess in
    /// trouble, the network, a refused body that a later state may fix).
    Retry {
        why: String,
        retry_after_ms: Option<Millis>,
    },
    /// Not taken, and trying again cannot help: the broadcaster stops with this message.
    Stop(String),
}

impl Answer {
    /// How this answer paces the next push (`None`: stopping).
    pub fn paced(&self) -> Option<Paced> {
        match self {
            Answer::Accepted(_) => Some(Paced::Accepted),
            Answer::Retry { retry_after_ms, .. } => Some(Paced::Retry {
                retry_after_ms: *retry_after_ms,
            }),
            Answer::Stop(_) => None,
        }
    }
}

/// Reads an HTTP answer: its status, its `Retry-After` and `Location` headers and its body.
pub fn read(
    status: u16,
    retry_after: Option<&str>,
    location: Option<&str>,
    body: &str,
    round_id: &str,
) -> Answer {
    let said = lichess_error(body);
    let with_said = |text: String| match &said {
        Some(e) => format!("{text}: {e}"),
        None => text,
    };
    match status {
        200 => match games(body) {
            Some(games) => Answer::Accepted(games),
            None => Answer::Retry {
                why: format!(
                    "the push was not taken: HTTP 200, but the body is not lichess's answer to \
                     a push (a captive portal or a proxy on the way, or --url is not lichess?): \
                     {}",
                    quoted(body)
                ),
                retry_after_ms: None,
            },
        },
        201..=299 => Answer::Retry {
            why: with_said(format!(
                "the push was not taken: HTTP {status} is not lichess's answer to a push (200)"
            )),
            retry_after_ms: None,
        },
        300..=399 => Answer::Retry {
            why: format!(
                "the push was not taken: HTTP {status}, a redirect{}, not followed (a push goes \
                 only to --url; a captive portal or a proxy on the way, or a --url that moved?)",
                location.map_or(String::new(), |l| format!(" to {}", quoted(l)))
            ),
            retry_after_ms: retry_after.and_then(retry_after_ms),
        },
        401 | 403 => Answer::Stop(with_said(format!(
            "lichess refused the token (HTTP {status}): it needs the study:write scope, and \
             its account must be the broadcast's owner or a contributor of it"
        ))),
        404 => Answer::Stop(with_said(format!(
            "lichess has no broadcast round {round_id} (HTTP 404): check --round against \
             the round's page (lichess.org/broadcast/…/<round id>)"
        ))),
        429 => Answer::Retry {
            why: with_said("lichess asks to slow down (HTTP 429)".into()),
            retry_after_ms: retry_after.and_then(retry_after_ms),
        },
        500..=599 => Answer::Retry {
            why: with_said(format!("lichess is in trouble (HTTP {status})")),
            retry_after_ms: retry_after.and_then(retry_after_ms),
        },
        _ => Answer::Retry {
            why: with_said(format!("lichess refused the push (HTTP {status})")),
            retry_after_ms: None,
        },
    }
}

/// A network failure (no answer at all): tried again.
pub fn unreachable(url: &str, why: &str) -> Answer {
    Answer::Retry {
        why: format!("cannot reach {url}: {why}"),
        retry_after_ms: None,
    }
}

/// `{"error": TEXT}` of a refusal, when the body has it (made safe and short: it is shown).
fn lichess_error(body: &str) -> Option<String> {
    let v: Value = serde_json::from_str(body).ok()?;
    let e = v.get("error")?;
    let text = match e {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    Some(short(&text))
}

/// The most of a server's text shown, in characters.
const SHOWN: usize = 200;

/// A server's text as it may be shown: one line, control characters (a terminal's escape
/// sequences) written as escapes, at most [`SHOWN`] characters. The caller has taken the
/// token out first ([`crate::bridge::broadcast::token::Token::redact`]).
pub fn short(text: &str) -> String {
    let mut out = String::new();
    for (n, c) in text.chars().enumerate() {
        if n == SHOWN {
            out.push('…');
            break;
        }
        match c {
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() => out.extend(c.escape_default()),
            c => out.push(c),
        }
    }
    out
}

/// A server's text for a message: [`short`], quoted, or `an empty body`.
fn quoted(text: &str) -> String {
    match text.trim() {
        "" => "an empty body".into(),
        t => format!("\"{}\"", short(t)),
    }
}

/// The per-game results of lichess's answer to a push, or `None` when the body is not one:
/// a JSON object whose `games` is a list of objects, each with `tags` (an object) and
/// `moves` (a count) or `error`.
fn games(body: &str) -> Option<Vec<GameAnswer>> {
    let v = serde_json::from_str::<Value>(body).ok()?;
    let games = v.get("games")?.as_array()?;
    let well_formed = |g: &Value| {
        g.get("tags").is_some_and(Value::is_object)
            && (g.get("moves").is_some_and(Value::is_u64) || g.get("error").is_some())
    };
    if !games.iter().all(well_formed) {
        return None;
    }
    let read = games
        .iter()
        .map(|g| {
            let tag = |name: &str| {
                g.get("tags")
                    .and_then(|t| t.get(name))
                    .and_then(Value::as_str)
                    .map(short)
            };
            let outcome = match (g.get("moves").and_then(Value::as_u64), g.get("error")) {
                (_, Some(e)) => Err(short(e.as_str().unwrap_or(&e.to_string()))),
                (Some(n), None) => Ok(u32::try_from(n).unwrap_or(u32::MAX)),
                (None, None) => Err("lichess named neither moves nor an error".into()),
            };
            GameAnswer {
                round_tag: tag("Round"),
                players: format!(
                    "{} - {}",
                    tag("White").unwrap_or_else(|| "?".into()),
                    tag("Black").unwrap_or_else(|| "?".into())
                ),
                outcome,
            }
        })
        .collect();
    Some(read)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_game_results() {
        let body = r#"{"games":[{"tags":{"Round":"3.1","White":"A","Black":"B"},"moves":12},
            {"tags":{"Round":"3.2","White":"C","Black":"D"},"error":"Illegal move: Kxe9"}]}"#;
        let Answer::Accepted(games) = read(200, None, None, body, "r") else {
            panic!()
        };
        assert_eq!(games[0].outcome, Ok(12));
        assert_eq!(games[0].round_tag.as_deref(), Some("3.1"));
        assert_eq!(games[1].outcome, Err("Illegal move: Kxe9".into()));
        assert_eq!(games[1].players, "C - D");
        assert_eq!(
            read(200, None, None, r#"{"games":[]}"#, "r"),
            Answer::Accepted(vec![])
        );
    }

    #[test]
    fn only_a_well_formed_200_is_taken() {
        for body in [
            "",
            "not json",
            "<html><title>Hotel Wi-Fi</title>",
            "{}",
            "[]",
            r#"{"games":7}"#,
            r#"{"games":[1]}"#,
            r#"{"games":[{"moves":3}]}"#,
            r#"{"games":[{"tags":{},"moves":"3"}]}"#,
            r#"{"games":[{"tags":"x","moves":3}]}"#,
            r#"{"ok":true}"#,
        ] {
            let Answer::Retry { why, .. } = read(200, None, None, body, "r") else {
                panic!("{body:?} taken")
            };
            assert!(
                why.contains("not taken") && why.contains("HTTP 200"),
                "{why}"
            );
        }
        let Answer::Retry { why, .. } = read(200, None, None, "<html>\x1b[2J", "r") else {
            panic!()
        };
        assert!(why.contains(r#""<html>\u{1b}[2J""#), "{why}");
        for status in [201, 202, 204] {
            assert!(matches!(
                read(status, None, None, r#"{"games":[]}"#, "r"),
                Answer::Retry { .. }
            ));
        }
    }

    #[test]
    fn a_redirect_is_a_failure_that_names_where_it_pointed() {
        for status in [301, 302, 303, 307, 308] {
            let Answer::Retry { why, .. } =
                read(status, None, Some("https://portal.example/login"), "", "r")
            else {
                panic!()
            };
            assert!(
                why.contains(&format!("HTTP {status}"))
                    && why.contains("not followed")
                    && why.contains("portal.example/login"),
                "{why}"
            );
        }
    }

    #[test]
    fn refusals() {
        let a = read(401, None, None, r#"{"error":"No such token"}"#, "r");
        let Answer::Stop(m) = a else { panic!() };
        assert!(
            m.contains("study:write") && m.contains("contributor") && m.contains("No such token")
        );
        assert!(matches!(read(403, None, None, "", "r"), Answer::Stop(_)));
        let Answer::Stop(m) = read(404, None, None, "", "abcd1234") else {
            panic!()
        };
        assert!(m.contains("abcd1234"));
        assert_eq!(
            read(429, Some("30"), None, "", "r"),
            Answer::Retry {
                why: "lichess asks to slow down (HTTP 429)".into(),
                retry_after_ms: Some(30_000)
            }
        );
        assert!(matches!(
            read(503, None, None, "", "r"),
            Answer::Retry {
                retry_after_ms: None,
                ..
            }
        ));
        let Answer::Retry { why, .. } = read(400, None, None, r#"{"error":"Bad PGN"}"#, "r") else {
            panic!()
        };
        assert!(why.contains("400") && why.contains("Bad PGN"));
    }

    #[test]
    fn shown_text_is_one_safe_short_line() {
        assert_eq!(short("a\nb\x1b[2Jc\u{7}"), "a b\\u{1b}[2Jc\\u{7}");
        let long = short(&"x".repeat(5000));
        assert_eq!(long.chars().count(), SHOWN + 1);
        assert!(long.ends_with('…'));
    }
}
