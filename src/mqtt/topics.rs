//! The relay's topic tree (contract section 6): `<prefix>/<rig>/status` and
//! `<prefix>/<rig>/<board id>/{state,event,pgn}`. Names are built and parsed here only, so the
//! relay and the hall's subscribers (`watch --mqtt`, `serve --mqtt`) cannot disagree.

use std::fmt;

/// The default `<prefix>`.
pub const DEFAULT_PREFIX: &str = "eboardd";

/// A bad `--prefix` or `--rig`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicError(pub String);

impl fmt::Display for TopicError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TopicError {}

/// Checks a `--prefix`: one or more topic levels, no wildcards, no empty level, not a
/// broker-reserved `$` topic.
pub fn check_prefix(prefix: &str) -> Result<(), TopicError> {
    let bad = |why: &str| Err(TopicError(format!("--prefix {prefix:?}: {why}")));
    if prefix.is_empty() {
        return bad("is empty");
    }
    if prefix.starts_with('$') {
        return bad("topics starting with `$` are the broker's own");
    }
    if prefix.contains(['+', '#', '\0']) {
        return bad("must not contain the wildcards `+`, `#` or a NUL");
    }
    if prefix.split('/').any(str::is_empty) {
        return bad("has an empty topic level (a leading, trailing or doubled `/`)");
    }
    Ok(())
}

/// The longest rig name, in bytes (a host name's label is at most 63).
pub const MAX_RIG_LEN: usize = 64;

/// The longest board id, in bytes (a board id is also a file name on its rig).
pub const MAX_BOARD_ID_LEN: usize = 255;

/// Characters a rig name may not hold besides `/`: the topic wildcards `+` and `#`, and
/// what a URL path would read otherwise (`\` is a `/` to browsers, `?` starts a query, `%`
/// an escape) — a rig's name is also a path segment of its boards' pages.
const NOT_IN_RIG: [char; 6] = ['/', '+', '#', '\\', '?', '%'];

/// Checks a rig name: exactly one topic level (it is also a board name's first part in the
/// hall, `<rig>/<board id>`, and a path segment of its board pages' links), at most
/// [`MAX_RIG_LEN`] bytes, no control characters, not `.` or `..`. The
/// relay checks its `--rig` with it and the hall's readers check every rig they are shown,
/// so a name one side accepts the other does too.
pub fn check_rig(rig: &str) -> Result<(), TopicError> {
    let bad = |why: &str| Err(TopicError(format!("--rig {rig:?}: {why}")));
    if rig.is_empty() {
        return bad("is empty");
    }
    if rig.len() > MAX_RIG_LEN {
        return bad("is longer than 64 bytes");
    }
    if rig.contains(NOT_IN_RIG) || rig.chars().any(char::is_control) {
        return bad(
            "must be one topic level and one path segment: no `/`, `+`, `#`, `\\`, `?`, `%` \
             or control characters",
        );
    }
    if rig == "." || rig == ".." {
        return bad("must not be `.` or `..` (a board page's link would leave the hall)");
    }
    if rig.starts_with('$') {
        return bad("must not start with `$`");
    }
    Ok(())
}

/// Whether `id` can be a board id a relay publishes: what `contract::object_id` makes of a
/// name (ASCII letters, digits and `_`), 1 to [`MAX_BOARD_ID_LEN`] bytes.
pub fn is_board_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_BOARD_ID_LEN
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The rig name from a host name: the host's first label, any character a topic level cannot
/// hold replaced by `_`.
pub fn rig_from_hostname(host: &str) -> String {
    let first = host.split('.').next().unwrap_or("");
    let cleaned: String = first
        .chars()
        .map(|c| {
            if NOT_IN_RIG.contains(&c) || c == '$' || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect();
    let mut cleaned = cleaned;
    while cleaned.len() > MAX_RIG_LEN {
        cleaned.pop();
    }
    if cleaned.is_empty() {
        "rig".to_owned()
    } else {
        cleaned
    }
}

/// The topics of one rig.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RigTopics {
    base: String,
}

impl RigTopics {
    /// `prefix` and `rig` must have passed [`check_prefix`] and [`check_rig`].
    pub fn new(prefix: &str, rig: &str) -> Self {
        RigTopics {
            base: format!("{prefix}/{rig}"),
        }
    }

    pub fn status(&self) -> String {
        format!("{}/status", self.base)
    }

    /// The retained id of the relay's current run (see `bridge::relay::core`).
    pub fn run(&self) -> String {
        format!("{}/{RUN}", self.base)
    }

    pub fn board(&self, board: &str, kind: Kind) -> String {
        format!("{}/{board}/{}", self.base, kind.as_str())
    }

    /// Every retained `state` of this rig (the relay reads it back to clear boards that left
    /// while it was not running).
    pub fn all_states(&self) -> String {
        format!("{}/+/state", self.base)
    }
}

/// The per-board topics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    State,
    Event,
    Pgn,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::State => "state",
            Kind::Event => "event",
            Kind::Pgn => "pgn",
        }
    }
}

/// The last level of a rig's run topic.
const RUN: &str = "run";

/// A topic of the tree, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Topic<'a> {
    Status {
        rig: &'a str,
    },
    /// `<prefix>/<rig>/run`: the relay's run id (retained).
    Run {
        rig: &'a str,
    },
    Board {
        rig: &'a str,
        board: &'a str,
        kind: Kind,
    },
}

/// Every topic of every rig under `prefix`.
pub fn hall_filter(prefix: &str) -> String {
    format!("{prefix}/+/#")
}

/// Parses a topic under `prefix`; `None` for anything else (another application's topics
/// under the same prefix are not ours to judge).
pub fn parse<'a>(prefix: &str, topic: &'a str) -> Option<Topic<'a>> {
    let rest = topic.strip_prefix(prefix)?.strip_prefix('/')?;
    let mut levels = rest.split('/');
    let rig = levels.next().filter(|r| !r.is_empty())?;
    match (levels.next(), levels.next(), levels.next()) {
        (Some("status"), None, None) => Some(Topic::Status { rig }),
        (Some(RUN), None, None) => Some(Topic::Run { rig }),
        (Some(board), Some(kind), None) if !board.is_empty() => {
            let kind = match kind {
                "state" => Kind::State,
                "event" => Kind::Event,
                "pgn" => Kind::Pgn,
                _ => return None,
            };
            Some(Topic::Board { rig, board, kind })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topics_are_built_as_the_contract_says() {
        let t = RigTopics::new("eboardd", "hall-a");
        assert_eq!(t.status(), "eboardd/hall-a/status");
        assert_eq!(
            t.board("board_1", Kind::State),
            "eboardd/hall-a/board_1/state"
        );
        assert_eq!(
            t.board("board_1", Kind::Event),
            "eboardd/hall-a/board_1/event"
        );
        assert_eq!(t.board("board_1", Kind::Pgn), "eboardd/hall-a/board_1/pgn");
        assert_eq!(hall_filter("x/y"), "x/y/+/#");
    }

    #[test]
    fn topics_parse_back() {
        assert_eq!(
            parse("eboardd", "eboardd/a/status"),
            Some(Topic::Status { rig: "a" })
        );
        assert_eq!(
            parse("ev/2026", "ev/2026/a/b_1/event"),
            Some(Topic::Board {
                rig: "a",
                board: "b_1",
                kind: Kind::Event
            })
        );
        assert_eq!(
            parse("eboardd", "eboardd/a/run"),
            Some(Topic::Run { rig: "a" })
        );
        assert_eq!(parse("eboardd", "eboardd/a/b/other"), None);
        assert_eq!(parse("eboardd", "eboardd/a/b/state/x"), None);
        assert_eq!(parse("eboardd", "eboarddx/a/status"), None);
        assert_eq!(parse("eboardd", "eboardd//status"), None);
        assert_eq!(parse("eboardd", "other/a/status"), None);
    }

    #[test]
    fn bad_prefixes_and_rigs_are_refused_by_name() {
        assert!(check_prefix("eboardd").is_ok());
        assert!(check_prefix("events/city-open").is_ok());
        for bad in ["", "a/", "/a", "a//b", "a/+", "#", "$SYS"] {
            let e = check_prefix(bad).expect_err(bad);
            assert!(e.0.starts_with("--prefix"), "{e}");
        }
        assert!(check_rig("hall-a").is_ok());
        let long = "r".repeat(MAX_RIG_LEN + 1);
        for bad in [
            "",
            "a/b",
            "a+",
            "#",
            "$x",
            "a\nb",
            "a\rb",
            "a\0",
            ".",
            "..",
            "a\\b",
            "a?b",
            "%2e%2e",
            long.as_str(),
        ] {
            let e = check_rig(bad).expect_err(bad);
            assert!(e.0.starts_with("--rig"), "{e}");
        }
        assert_eq!(rig_from_hostname("pi-04.local"), "pi-04");
        assert_eq!(rig_from_hostname(""), "rig");
        assert_eq!(rig_from_hostname("a%b?c\\d"), "a_b_c_d");
        assert!(
            check_rig("...").is_ok(),
            "only what a path resolves is refused"
        );
        assert!(check_rig(&rig_from_hostname(&"h".repeat(300))).is_ok());
        assert!(is_board_id("board_1"));
        for bad in ["", "a-b", "a/b", "a\n", "é"] {
            assert!(!is_board_id(bad), "{bad:?}");
        }
        assert!(!is_board_id(&"b".repeat(MAX_BOARD_ID_LEN + 1)));
    }
}
