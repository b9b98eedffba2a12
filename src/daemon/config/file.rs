//! Reading the configuration file: the TOML schema as written (strings with their spans, so
//! every error can name its line), and turning it into a validated [`Config`]. Errors of the
//! TOML parser itself get their key path reconstructed from the text ([`key_at`]).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use eboard_core::arbiter::timecontrol::TimeControl;

use super::board::{BoardConfig, BoardField, port_file_name};
use super::words::{parse_dir, parse_number, parse_word, validate_tag_name, validate_tag_value};
use super::{Config, ConfigError, ErrorOrigin};

/// Parse and validate configuration text read from `path` (used in error messages).
pub(super) fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
    let at =
        |span: Option<std::ops::Range<usize>>, key: Option<String>, message: String| ConfigError {
            origin: ErrorOrigin::File {
                path: path.to_path_buf(),
                line: span.map(|s| line_of(text, s.start)),
            },
            key,
            message,
        };
    let raw: RawFile = toml::from_str(text).map_err(|e| {
        let span = e.span();
        let key = span.clone().and_then(|s| key_at(text, s, e.message()));
        at(span, key, e.message().trim().to_string())
    })?;

    let mut config = Config {
        source: Some(path.to_path_buf()),
        ..Config::default()
    };
    if let Some(d) = raw.daemon {
        let field = |name: &str| Some(format!("daemon.{name}"));
        if let Some(bus) = d.bus {
            config.daemon.bus = bus
                .get_ref()
                .parse()
                .map_err(|m| at(Some(bus.span()), field("bus"), m))?;
        }
        if let Some(dir) = d.state_dir {
            config.daemon.state_dir = parse_dir(dir.get_ref())
                .map_err(|m| at(Some(dir.span()), field("state_dir"), m))?;
        }
        if let Some(rules) = d.rules {
            config.daemon.rules = parse_word(rules.get_ref())
                .map_err(|m| at(Some(rules.span()), field("rules"), m))?;
        }
        if let Some(edition) = d.edition {
            config.daemon.edition = parse_word(edition.get_ref())
                .map_err(|m| at(Some(edition.span()), field("edition"), m))?;
        }
        if let Some(dir) = d.pgn_dir {
            config.daemon.pgn_dir = Some(
                parse_dir(dir.get_ref()).map_err(|m| at(Some(dir.span()), field("pgn_dir"), m))?,
            );
        }
        config.daemon.guidelines_iii = d.guidelines_iii.unwrap_or(false);
        if let Some(v) = d.variant {
            config.daemon.variant =
                parse_word(v.get_ref()).map_err(|m| at(Some(v.span()), field("variant"), m))?;
        }
    }

    for (index, spanned) in raw.board.into_iter().enumerate() {
        let header_line = line_of(text, spanned.span().start);
        let b = spanned.into_inner();
        let field = |name: &str| Some(format!("board[{}].{name}", index + 1));
        let mut board = BoardConfig::for_port("");
        board.line = Some(header_line);
        board.port = b.port.get_ref().clone();
        board.name = b.name.as_ref().map(|n| n.get_ref().clone());
        board.check().map_err(|fault| match fault.field {
            BoardField::Name => {
                let name = b.name.as_ref().expect("only a given name is refused");
                at(Some(name.span()), field("name"), fault.message)
            }
            BoardField::Port if b.name.is_none() && port_file_name(&board.port).is_none() => at(
                Some(b.port.span()),
                field("port"),
                format!("{}; set `name`", fault.message),
            ),
            BoardField::Port => at(Some(b.port.span()), field("port"), fault.message),
        })?;
        if let Some(number) = b.number {
            let n = parse_number(*number.get_ref())
                .map_err(|m| at(Some(number.span()), field("number"), m))?;
            if let Some(other) = config.boards.iter().find(|o| o.number == Some(n)) {
                let other_line = other
                    .line
                    .map_or(String::new(), |l| format!(" at line {l}"));
                return Err(at(
                    Some(number.span()),
                    field("number"),
                    format!(
                        "table number {n} is already used by the board{other_line}; \
                         each board needs its own"
                    ),
                ));
            }
            board.number = Some(n);
        }
        if let Some(v) = b.variant {
            board.variant =
                Some(parse_word(v.get_ref()).map_err(|m| at(Some(v.span()), field("variant"), m))?);
        }
        if let Some(rules) = b.rules {
            board.rules = Some(
                parse_word(rules.get_ref())
                    .map_err(|m| at(Some(rules.span()), field("rules"), m))?,
            );
        }
        if let Some(edition) = b.edition {
            board.edition = Some(
                parse_word(edition.get_ref())
                    .map_err(|m| at(Some(edition.span()), field("edition"), m))?,
            );
        }
        if let Some(wd) = b.white_display {
            board.white_display = parse_word(wd.get_ref())
                .map_err(|m| at(Some(wd.span()), field("white_display"), m))?;
        }
        if let Some(o) = b.orientation {
            board.orientation =
                parse_word(o.get_ref()).map_err(|m| at(Some(o.span()), field("orientation"), m))?;
        }
        if let Some(tc) = b.time_control {
            board.time_control = Some(
                tc.get_ref()
                    .parse::<TimeControl>()
                    .map_err(|e| at(Some(tc.span()), field("time_control"), e.to_string()))?,
            );
        }
        if let Some(cp) = b.clock_periods {
            board.clock_periods = parse_word(cp.get_ref())
                .map_err(|m| at(Some(cp.span()), field("clock_periods"), m))?;
        }
        board.listen_only = b.listen_only.unwrap_or(false);
        board.leds = b.leds.unwrap_or(true);
        if let Some(p) = b.protocol {
            board.protocol =
                parse_word(p.get_ref()).map_err(|m| at(Some(p.span()), field("protocol"), m))?;
        }
        // TOML tables are unordered; keep the order the user wrote the tags in.
        let mut tags: Vec<_> = b.tags.unwrap_or_default().into_iter().collect();
        tags.sort_by_key(|(name, _)| name.span().start);
        if let Some((name, _)) = tags.get(eboard_core::game::TAGS_MAX) {
            return Err(at(
                Some(name.span()),
                Some(format!("board[{}].tags", index + 1)),
                format!(
                    "a board has at most {} tags; this one has {}",
                    eboard_core::game::TAGS_MAX,
                    tags.len()
                ),
            ));
        }
        for (name, value) in tags {
            let key = Some(format!(
                "board[{}].tags.{}",
                index + 1,
                eboard_core::game::shown(name.get_ref())
            ));
            validate_tag_name(name.get_ref()).map_err(|m| at(Some(name.span()), key.clone(), m))?;
            let text_value = match value.get_ref() {
                toml::Value::String(s) => s.clone(),
                other => {
                    return Err(at(
                        Some(value.span()),
                        key,
                        format!(
                            "a tag value must be a string; write it in quotes: {} = \"{}\"",
                            name.get_ref(),
                            other
                        ),
                    ));
                }
            };
            validate_tag_value(&text_value).map_err(|m| at(Some(value.span()), key, m))?;
            board.tags.push((name.into_inner(), text_value));
        }
        config.add_board(board)?;
    }
    Ok(config)
}

// The file as written; values stay strings with their spans so semantic errors can name the
// line, and `deny_unknown_fields` makes TOML report unknown keys with theirs.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    daemon: Option<RawDaemon>,
    #[serde(default)]
    board: Vec<Spanned<RawBoard>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDaemon {
    bus: Option<Spanned<String>>,
    state_dir: Option<Spanned<String>>,
    rules: Option<Spanned<String>>,
    edition: Option<Spanned<String>>,
    pgn_dir: Option<Spanned<String>>,
    guidelines_iii: Option<bool>,
    variant: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBoard {
    name: Option<Spanned<String>>,
    port: Spanned<String>,
    number: Option<Spanned<i64>>,
    variant: Option<Spanned<String>>,
    rules: Option<Spanned<String>>,
    edition: Option<Spanned<String>>,
    white_display: Option<Spanned<String>>,
    orientation: Option<Spanned<String>>,
    time_control: Option<Spanned<String>>,
    clock_periods: Option<Spanned<String>>,
    listen_only: Option<bool>,
    protocol: Option<Spanned<String>>,
    leds: Option<bool>,
    tags: Option<BTreeMap<Spanned<String>, Spanned<toml::Value>>>,
}

/// 1-based line of byte offset `at` in `text`.
fn line_of(text: &str, at: usize) -> usize {
    let at = at.min(text.len());
    text.as_bytes()[..at]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Best-effort key path for an error the TOML parser reported at `span`: the enclosing table
/// (`daemon`, `board[N]`) and the field the message names, or the key written on that line.
fn key_at(text: &str, span: std::ops::Range<usize>, message: &str) -> Option<String> {
    let line = line_of(text, span.start);
    // The table the line belongs to: the last header at or before it.
    let mut table: Option<String> = None;
    let mut boards = 0;
    let mut header_on_line = false;
    for (i, raw) in text.lines().enumerate().take(line) {
        let compact: String = raw
            .split('#')
            .next()
            .unwrap_or("")
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        if compact.starts_with("[[") && compact.ends_with("]]") {
            let name = compact[2..compact.len() - 2].to_string();
            if name == "board" {
                boards += 1;
                table = Some(format!("board[{boards}]"));
            } else {
                table = Some(name);
            }
            header_on_line = i + 1 == line;
        } else if compact.starts_with('[') && compact.ends_with(']') {
            table = Some(compact[1..compact.len() - 1].to_string());
            header_on_line = i + 1 == line;
        } else {
            header_on_line = false;
        }
    }
    let named = ["unknown field `", "missing field `"]
        .iter()
        .find_map(|p| message.split_once(p))
        .and_then(|(_, rest)| rest.split_once('`'))
        .map(|(field, _)| field.to_string());
    if header_on_line && message.contains("unknown field `") {
        // The header itself names the unknown table.
        return table;
    }
    let leaf = named.or_else(|| {
        if header_on_line {
            return None;
        }
        let line_text = text.lines().nth(line - 1)?;
        let (key, _) = line_text.split_once('=')?;
        let key = key.trim();
        (!key.is_empty() && !key.contains(['[', '{', '"', '\'']) || key.starts_with('"'))
            .then(|| key.trim_matches('"').to_string())
    });
    match (table, leaf) {
        (Some(t), Some(l)) => Some(format!("{t}.{l}")),
        (None, Some(l)) => Some(l),
        (Some(t), None) => Some(t),
        (None, None) => None,
    }
}
