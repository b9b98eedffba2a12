//! lichess's answer to a push, read: the HTTP status, `Retry-After` and the JSON body
//! (`{"games": [{"tags": {...}, "moves": N} or {"tags": {...}, "error": TEXT}]}`, or
//! `{"error": TEXT}` with a refusal) become what the broadcaster does next. Pure.

use serde_json::Value;

use crate::bridge::broadcast::pacing::{Paced, retry_after_ms};
use crate::vocab::Millis;

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

/// Reads an HTTP answer: its status, its `Retry-After` header and its body.
pub fn read(status: u16, retry_after: Option<&str>, body: &str, round_id: &str) -> Answer {
    let said = lichess_error(body);
    let with_said = |text: String| match &said {
        Some(e) => format!("{text}: {e}"),
        None => text,
    };
    match status {
        200..=299 => Answer::Accepted(games(body)),
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

/// The per-game results of an accepted push.
fn games(body: &str) -> Vec<GameAnswer> {
    let Ok(v) = serde_json::from_str::<Value>(body) else {
        return Vec::new();
    };
    let Some(games) = v.get("games").and_then(Value::as_array) else {
        return Vec::new();
    };
    games
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
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_game_results() {
        let body = r#"{"games":[{"tags":{"Round":"3.1","White":"A","Black":"B"},"moves":12},
            {"tags":{"Round":"3.2","White":"C","Black":"D"},"error":"Illegal move: Kxe9"}]}"#;
        let Answer::Accepted(games) = read(200, None, body, "r") else {
            panic!()
        };
        assert_eq!(games[0].outcome, Ok(12));
        assert_eq!(games[0].round_tag.as_deref(), Some("3.1"));
        assert_eq!(games[1].outcome, Err("Illegal move: Kxe9".into()));
        assert_eq!(games[1].players, "C - D");
        assert_eq!(read(200, None, "not json", "r"), Answer::Accepted(vec![]));
    }

    #[test]
    fn refusals() {
        let a = read(401, None, r#"{"error":"No such token"}"#, "r");
        let Answer::Stop(m) = a else { panic!() };
        assert!(
            m.contains("study:write") && m.contains("contributor") && m.contains("No such token")
        );
        assert!(matches!(read(403, None, "", "r"), Answer::Stop(_)));
        let Answer::Stop(m) = read(404, None, "", "abcd1234") else {
            panic!()
        };
        assert!(m.contains("abcd1234"));
        assert_eq!(
            read(429, Some("30"), "", "r"),
            Answer::Retry {
                why: "lichess asks to slow down (HTTP 429)".into(),
                retry_after_ms: Some(30_000)
            }
        );
        assert!(matches!(
            read(503, None, "", "r"),
            Answer::Retry {
                retry_after_ms: None,
                ..
            }
        ));
        let Answer::Retry { why, .. } = read(400, None, r#"{"error":"Bad PGN"}"#, "r") else {
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
