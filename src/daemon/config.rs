//! The daemon's configuration: the contract's TOML file (section 3), built-in defaults and
//! command-line overrides, validated strictly and turned into one [`SessionConfig`] per board.
//!
//! Every error names where it came from — the file, line and key, or the command-line flag —
//! so `eboardd` can print it and exit with status 2. Unknown keys are rejected (a typo must not
//! silently fall back to a default on a tournament day), and so is every value outside the
//! documented sets.
//!
//! Flow: [`Config::load`] (or [`Config::parse`] for text already read) →
//! [`Config::with_overrides`] (`--port`, `--bus`, `--rules`, `--state-dir`) →
//! [`Config::board_setups`].

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::Deserialize;
use toml::Spanned;

use crate::game::{self, TagValueFault};
use crate::session::SessionConfig;
use crate::vocab::{Edition, OrientationSetting, Rules, UnknownWord, Variant, WhiteDisplay};

/// Where the daemon looks for its configuration when `--config` is not given.
pub const DEFAULT_CONFIG_PATH: &str = "/etc/eboardd/eboardd.toml";
/// Default `state_dir` (the systemd unit's `StateDirectory=`).
pub const DEFAULT_STATE_DIR: &str = "/var/lib/eboardd";

/// The whole validated configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub daemon: DaemonConfig,
    pub boards: Vec<BoardConfig>,
    /// The file it was read from (`None`: built-in defaults).
    pub source: Option<PathBuf>,
}

/// The `[daemon]` table.
#[derive(Debug, Clone, PartialEq)]
pub struct DaemonConfig {
    pub bus: Bus,
    pub state_dir: PathBuf,
    /// Default rules for boards that don't set their own.
    pub rules: Rules,
    /// Default edition of the Laws for boards that don't set their own.
    pub edition: Edition,
    /// Where finished and live PGN files go; `None`: `<state_dir>/pgn` (see [`Self::pgn_dir`]).
    pub pgn_dir: Option<PathBuf>,
    /// The event announced the quickplay-finish Guidelines III (fide-2023).
    pub guidelines_iii: bool,
    /// Default variant for boards that don't set their own.
    pub variant: Variant,
}

/// One `[[board]]` table (or one `--port`).
#[derive(Debug, Clone, PartialEq)]
pub struct BoardConfig {
    /// Configured name; without one the port's file name is used.
    pub name: Option<String>,
    /// Serial device path.
    pub port: String,
    /// Table number (pairings, round files); `None`: not numbered.
    pub number: Option<u32>,
    /// Overrides `[daemon] variant`.
    pub variant: Option<Variant>,
    /// Overrides `[daemon] rules`.
    pub rules: Option<Rules>,
    /// Overrides `[daemon] edition`.
    pub edition: Option<Edition>,
    pub white_display: WhiteDisplay,
    pub orientation: OrientationSetting,
    pub time_control: Option<TimeControl>,
    pub listen_only: bool,
    /// PGN tags for every game on this board, in the order the file lists them.
    pub tags: Vec<(String, String)>,
    /// Line of the `[[board]]` header in the configuration file (`None`: from the command line
    /// or a D-Bus `AddBoard`). Used to name the board in errors found after parsing.
    pub line: Option<usize>,
}

/// Everything the daemon needs to start serving one board.
#[derive(Debug, Clone, PartialEq)]
pub struct BoardSetup {
    /// Object-path id (contract section 2), unique among boards.
    pub id: String,
    /// The `Name` property: configured name or the port's file name.
    pub name: String,
    pub port: String,
    pub listen_only: bool,
    pub session: SessionConfig,
}

/// Which bus to own the name on (contract `--bus`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bus {
    Session,
    System,
    /// A D-Bus server address such as `unix:path=/run/x`.
    Address(String),
}

/// Command-line settings that override (or, for ports, add to) the file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    /// `--port`, repeatable: each adds a board with default settings.
    pub ports: Vec<String>,
    /// `--bus`
    pub bus: Option<String>,
    /// `--rules`: the default rules for boards that don't set their own.
    pub rules: Option<String>,
    /// `--state-dir`
    pub state_dir: Option<PathBuf>,
}

/// A PGN TimeControl-style sequence of periods, such as `40/5400+30:1800+30`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeControl {
    pub periods: Vec<Period>,
}

/// One period of a [`TimeControl`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Period {
    /// Moves to make in the period; `None`: the rest of the game (sudden death).
    pub moves: Option<u32>,
    /// Time for the period in seconds.
    pub seconds: u64,
    /// Increment per move in seconds.
    pub increment: u64,
}

/// Where a configuration error was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorOrigin {
    /// In a configuration file; `line` is 1-based, `None` when the file could not be read.
    File { path: PathBuf, line: Option<usize> },
    /// On the command line (or in a runtime request such as `AddBoard`).
    CommandLine,
}

/// A bad configuration or argument: print it and exit with status 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub origin: ErrorOrigin,
    /// The key at fault as a path (`daemon.bus`, `board[2].rules`, `board[1].tags.Event`) or a
    /// flag (`--rules`).
    pub key: Option<String>,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.origin {
            ErrorOrigin::File { path, line } => {
                write!(f, "{}", path.display())?;
                if let Some(line) = line {
                    write!(f, ":{line}")?;
                }
            }
            ErrorOrigin::CommandLine => write!(f, "command line")?,
        }
        if let Some(key) = &self.key {
            write!(f, ": key `{key}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ConfigError {}

impl ConfigError {
    fn command_line(key: &str, message: impl Into<String>) -> Self {
        ConfigError {
            origin: ErrorOrigin::CommandLine,
            key: Some(key.to_string()),
            message: message.into(),
        }
    }
}

impl Default for DaemonConfig {
    fn default() -> Self {
        DaemonConfig {
            bus: Bus::System,
            state_dir: PathBuf::from(DEFAULT_STATE_DIR),
            rules: Rules::Standard,
            edition: Edition::Fide2023,
            pgn_dir: None,
            guidelines_iii: false,
            variant: Variant::Standard,
        }
    }
}

impl DaemonConfig {
    /// The PGN directory: the configured one, else `<state_dir>/pgn`.
    pub fn pgn_dir(&self) -> PathBuf {
        self.pgn_dir
            .clone()
            .unwrap_or_else(|| self.state_dir.join("pgn"))
    }
}

impl Default for Config {
    /// The built-in defaults: no boards, system bus, standard rules, fide-2023.
    fn default() -> Self {
        Config {
            daemon: DaemonConfig::default(),
            boards: Vec::new(),
            source: None,
        }
    }
}

impl BoardConfig {
    /// A board on `port` with every setting at its default (what `--port` and `AddBoard` add).
    pub fn for_port(port: &str) -> Self {
        BoardConfig {
            name: None,
            port: port.to_string(),
            number: None,
            variant: None,
            rules: None,
            edition: None,
            white_display: WhiteDisplay::Auto,
            orientation: OrientationSetting::Auto,
            time_control: None,
            listen_only: false,
            tags: Vec::new(),
            line: None,
        }
    }

    /// The `Name` property: the configured name, else the port's file name.
    pub fn display_name(&self) -> String {
        match &self.name {
            Some(name) => name.clone(),
            None => port_file_name(&self.port).unwrap_or_default(),
        }
    }

    /// The board's object-path id (contract section 2).
    pub fn id(&self) -> String {
        board_id(&self.display_name())
    }

    /// The session configuration, with `[daemon]` defaults filled in.
    pub fn session_config(&self, daemon: &DaemonConfig) -> SessionConfig {
        SessionConfig {
            name: self.display_name(),
            rules: self.rules.unwrap_or(daemon.rules),
            edition: self.edition.unwrap_or(daemon.edition),
            guidelines_iii: daemon.guidelines_iii,
            white_display: self.white_display,
            orientation: self.orientation,
            time_control: self.time_control.as_ref().map(|tc| tc.to_string()),
            tags: self.tags.clone(),
            number: self.number.unwrap_or(0),
            variant: self.variant.unwrap_or(daemon.variant),
        }
    }
}

impl Config {
    /// Read the configuration the way the contract says: `explicit` (`--config`) must exist;
    /// without it [`DEFAULT_CONFIG_PATH`] is read if it exists, else the built-in defaults apply.
    pub fn load(explicit: Option<&Path>) -> Result<Config, ConfigError> {
        Self::load_with_default(explicit, Path::new(DEFAULT_CONFIG_PATH))
    }

    /// What `eboardd` starts with: [`Config::load`] (`--config`) then
    /// [`Config::with_overrides`] (the other flags).
    pub fn from_args(
        explicit: Option<&Path>,
        overrides: &Overrides,
    ) -> Result<Config, ConfigError> {
        Self::load(explicit)?.with_overrides(overrides)
    }

    /// [`Config::load`] with another default path (for tests and packaging).
    pub fn load_with_default(
        explicit: Option<&Path>,
        default_path: &Path,
    ) -> Result<Config, ConfigError> {
        let path = match explicit {
            Some(path) => path,
            None if default_path.exists() => default_path,
            None => return Ok(Config::default()),
        };
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            origin: ErrorOrigin::File {
                path: path.to_path_buf(),
                line: None,
            },
            key: None,
            message: format!("cannot read the configuration: {e}"),
        })?;
        Self::parse(&text, path)
    }

    /// Parse and validate configuration text read from `path` (used in error messages).
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let at = |span: Option<std::ops::Range<usize>>, key: Option<String>, message: String| {
            ConfigError {
                origin: ErrorOrigin::File {
                    path: path.to_path_buf(),
                    line: span.map(|s| line_of(text, s.start)),
                },
                key,
                message,
            }
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
                config.daemon.rules = parse_rules(rules.get_ref())
                    .map_err(|m| at(Some(rules.span()), field("rules"), m))?;
            }
            if let Some(edition) = d.edition {
                config.daemon.edition = parse_edition(edition.get_ref())
                    .map_err(|m| at(Some(edition.span()), field("edition"), m))?;
            }
            if let Some(dir) = d.pgn_dir {
                config.daemon.pgn_dir = Some(
                    parse_dir(dir.get_ref())
                        .map_err(|m| at(Some(dir.span()), field("pgn_dir"), m))?,
                );
            }
            config.daemon.guidelines_iii = d.guidelines_iii.unwrap_or(false);
            if let Some(v) = d.variant {
                config.daemon.variant = parse_variant(v.get_ref())
                    .map_err(|m| at(Some(v.span()), field("variant"), m))?;
            }
        }

        for (index, spanned) in raw.board.into_iter().enumerate() {
            let header_line = line_of(text, spanned.span().start);
            let b = spanned.into_inner();
            let field = |name: &str| Some(format!("board[{}].{name}", index + 1));
            let mut board = BoardConfig::for_port("");
            board.line = Some(header_line);
            board.port = validate_port(b.port.get_ref())
                .map_err(|m| at(Some(b.port.span()), field("port"), m))?;
            if let Some(name) = &b.name {
                validate_name(name.get_ref())
                    .map_err(|m| at(Some(name.span()), field("name"), m))?;
                board.name = Some(name.get_ref().clone());
            } else if port_file_name(&board.port).is_none() {
                return Err(at(
                    Some(b.port.span()),
                    field("port"),
                    format!(
                        "the port {:?} has no file name to name the board after; set `name`",
                        board.port
                    ),
                ));
            }
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
                board.variant = Some(
                    parse_variant(v.get_ref())
                        .map_err(|m| at(Some(v.span()), field("variant"), m))?,
                );
            }
            if let Some(rules) = b.rules {
                board.rules = Some(
                    parse_rules(rules.get_ref())
                        .map_err(|m| at(Some(rules.span()), field("rules"), m))?,
                );
            }
            if let Some(edition) = b.edition {
                board.edition = Some(
                    parse_edition(edition.get_ref())
                        .map_err(|m| at(Some(edition.span()), field("edition"), m))?,
                );
            }
            if let Some(wd) = b.white_display {
                board.white_display = parse_white_display(wd.get_ref())
                    .map_err(|m| at(Some(wd.span()), field("white_display"), m))?;
            }
            if let Some(o) = b.orientation {
                board.orientation = parse_orientation(o.get_ref())
                    .map_err(|m| at(Some(o.span()), field("orientation"), m))?;
            }
            if let Some(tc) = b.time_control {
                board.time_control = Some(
                    tc.get_ref()
                        .parse()
                        .map_err(|m| at(Some(tc.span()), field("time_control"), m))?,
                );
            }
            board.listen_only = b.listen_only.unwrap_or(false);
            // TOML tables are unordered; keep the order the user wrote the tags in.
            let mut tags: Vec<_> = b.tags.unwrap_or_default().into_iter().collect();
            tags.sort_by_key(|(name, _)| name.span().start);
            for (name, value) in tags {
                let key = Some(format!("board[{}].tags.{}", index + 1, name.get_ref()));
                validate_tag_name(name.get_ref())
                    .map_err(|m| at(Some(name.span()), key.clone(), m))?;
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

    /// Apply the command-line overrides: `--bus`, `--rules` and `--state-dir` replace the
    /// file's `[daemon]` values; each `--port` adds a board with default settings.
    pub fn with_overrides(mut self, overrides: &Overrides) -> Result<Config, ConfigError> {
        if let Some(bus) = &overrides.bus {
            self.daemon.bus = bus
                .parse()
                .map_err(|m| ConfigError::command_line("--bus", m))?;
        }
        if let Some(rules) = &overrides.rules {
            self.daemon.rules =
                parse_rules(rules).map_err(|m| ConfigError::command_line("--rules", m))?;
        }
        if let Some(dir) = &overrides.state_dir {
            if dir.as_os_str().is_empty() {
                return Err(ConfigError::command_line(
                    "--state-dir",
                    "the state directory must not be empty",
                ));
            }
            self.daemon.state_dir = dir.clone();
        }
        for port in &overrides.ports {
            self.add_port(port)?;
        }
        Ok(self)
    }

    /// Add a board on `port` with default settings (`--port`, or the D-Bus `AddBoard` method);
    /// refused when the port is empty, already served, or its id is taken.
    pub fn add_port(&mut self, port: &str) -> Result<BoardSetup, ConfigError> {
        let port = validate_port(port).map_err(|m| ConfigError::command_line("--port", m))?;
        if port_file_name(&port).is_none() {
            return Err(ConfigError::command_line(
                "--port",
                format!("the port {port:?} has no file name to name the board after"),
            ));
        }
        let board = BoardConfig::for_port(&port);
        let setup = self.setup_of(&board);
        self.add_board(board)?;
        Ok(setup)
    }

    /// Every board, ready to start, in configuration order (ids are unique by construction).
    pub fn board_setups(&self) -> Vec<BoardSetup> {
        self.boards.iter().map(|b| self.setup_of(b)).collect()
    }

    fn setup_of(&self, board: &BoardConfig) -> BoardSetup {
        BoardSetup {
            id: board.id(),
            name: board.display_name(),
            port: board.port.clone(),
            listen_only: board.listen_only,
            session: board.session_config(&self.daemon),
        }
    }

    /// Add a board, rejecting a duplicate id or port; the error names the newcomer's source.
    fn add_board(&mut self, board: BoardConfig) -> Result<(), ConfigError> {
        let id = board.id();
        let (origin, key) = match (board.line, &self.source) {
            (Some(line), Some(path)) => {
                let n = self.boards.iter().filter(|b| b.line.is_some()).count() + 1;
                let key = if board.name.is_some() { "name" } else { "port" };
                (
                    ErrorOrigin::File {
                        path: path.clone(),
                        line: Some(line),
                    },
                    format!("board[{n}].{key}"),
                )
            }
            _ => (ErrorOrigin::CommandLine, "--port".to_string()),
        };
        let where_other = |other: &BoardConfig| match other.line {
            Some(line) => format!("the board at line {line}"),
            None => "a board given with --port".to_string(),
        };
        for other in &self.boards {
            let message = if other.port == board.port {
                format!(
                    "port {:?} is already served by {}",
                    board.port,
                    where_other(other)
                )
            } else if other.id() == id {
                format!(
                    "board id `{id}` is already used by {}; give one of them another name",
                    where_other(other)
                )
            } else {
                continue;
            };
            return Err(ConfigError {
                origin,
                key: Some(key),
                message,
            });
        }
        self.boards.push(board);
        Ok(())
    }
}

/// The board id rule of the contract: every character outside `[A-Za-z0-9_]` becomes `_`.
pub fn board_id(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The file name of a port path (`/dev/ttyACM0` → `ttyACM0`), if it has one.
pub fn port_file_name(port: &str) -> Option<String> {
    Path::new(port)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty())
}

/// The longest tag name a config file may give (the PGN standard's limit on a symbol).
const TAG_NAME_MAX: usize = 255;

/// A valid PGN tag name ([`game::is_tag_name`]), at most [`TAG_NAME_MAX`] bytes long.
fn validate_tag_name(name: &str) -> Result<(), String> {
    if game::is_tag_name(name) && name.len() <= TAG_NAME_MAX {
        Ok(())
    } else {
        Err(format!(
            "{name:?} is not a PGN tag name (a letter followed by letters, digits or `_`)"
        ))
    }
}

/// A valid PGN tag value for the contract ([`game::tag_value_fault`]): no newline and no `"`.
fn validate_tag_value(value: &str) -> Result<(), String> {
    match game::tag_value_fault(value) {
        Some(TagValueFault::Newline) => Err("a tag value must not contain a newline".into()),
        Some(TagValueFault::Quote) => Err("a tag value must not contain `\"`".into()),
        None => Ok(()),
    }
}

fn validate_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("the board name must not be empty".into());
    }
    // The name is also the PGN "Board" tag's value.
    validate_tag_value(name).map_err(|m| m.replace("a tag value", "the board name"))
}

fn validate_port(port: &str) -> Result<String, String> {
    if port.is_empty() {
        Err("the port (serial device path) must not be empty".into())
    } else if port.contains('\0') {
        Err("the port must not contain a NUL character".into())
    } else {
        Ok(port.to_string())
    }
}

fn parse_dir(dir: &str) -> Result<PathBuf, String> {
    if dir.is_empty() {
        Err("the directory must not be empty".into())
    } else {
        Ok(PathBuf::from(dir))
    }
}

/// A table number: a whole number from 1 up (0 means "none" on the bus, so it is not one).
fn parse_number(n: i64) -> Result<u32, String> {
    match u32::try_from(n) {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "table number {n} is out of range; expected a whole number from 1 to {}",
            u32::MAX
        )),
    }
}

fn parse_variant(s: &str) -> Result<Variant, String> {
    s.parse().map_err(|e: UnknownWord| e.to_string())
}

fn parse_rules(s: &str) -> Result<Rules, String> {
    s.parse().map_err(|e: UnknownWord| e.to_string())
}

fn parse_edition(s: &str) -> Result<Edition, String> {
    s.parse().map_err(|e: UnknownWord| e.to_string())
}

fn parse_white_display(s: &str) -> Result<WhiteDisplay, String> {
    s.parse().map_err(|e: UnknownWord| e.to_string())
}

fn parse_orientation(s: &str) -> Result<OrientationSetting, String> {
    s.parse().map_err(|e: UnknownWord| e.to_string())
}

impl FromStr for Bus {
    type Err = String;

    /// `session`, `system`, or a D-Bus server address list (`transport:key=value,...;...`).
    fn from_str(s: &str) -> Result<Bus, String> {
        match s {
            "session" => return Ok(Bus::Session),
            "system" => return Ok(Bus::System),
            "" => return Err("the bus must be \"session\", \"system\" or a D-Bus address".into()),
            _ => {}
        }
        let bad = |why: &str| {
            Err(format!(
                "{s:?} is neither \"session\", \"system\" nor a D-Bus address \
                 such as \"unix:path=/run/eboardd/bus\": {why}"
            ))
        };
        for address in s.split(';').filter(|a| !a.is_empty()) {
            let Some((transport, params)) = address.split_once(':') else {
                return bad("no `transport:` prefix");
            };
            if transport.is_empty()
                || !transport
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                return bad("bad transport name");
            }
            for pair in params.split(',').filter(|p| !p.is_empty()) {
                let Some((key, value)) = pair.split_once('=') else {
                    return bad("a parameter is not `key=value`");
                };
                if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return bad("bad parameter name");
                }
                if !is_address_value(value) {
                    return bad("a value has a character that must be %-escaped");
                }
            }
        }
        Ok(Bus::Address(s.to_string()))
    }
}

/// D-Bus address values: optionally-escaped bytes `[-0-9A-Za-z_/.\*]` or `%XX`.
fn is_address_value(value: &str) -> bool {
    let bytes = value.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = bytes.get(i + 1..i + 3);
                if !hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                    return false;
                }
                i += 3;
            }
            c if c.is_ascii_alphanumeric() || b"-_/.\\*".contains(&c) => i += 1,
            _ => return false,
        }
    }
    true
}

impl fmt::Display for Bus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bus::Session => f.write_str("session"),
            Bus::System => f.write_str("system"),
            Bus::Address(a) => f.write_str(a),
        }
    }
}

impl FromStr for TimeControl {
    type Err = String;

    /// PGN TimeControl periods joined by `:`: `MOVES/SECONDS[+INC]` or, for the last period
    /// only, `SECONDS[+INC]` (sudden death). A last period with a move count repeats.
    fn from_str(s: &str) -> Result<TimeControl, String> {
        parse_periods(s)
            .map(|periods| TimeControl { periods })
            .map_err(|why| {
                format!(
                    "bad time_control {s:?}: {why} (expected periods like \"40/5400+30:1800+30\": \
                     MOVES/SECONDS+INCREMENT, the last one may be SECONDS+INCREMENT)"
                )
            })
    }
}

fn parse_periods(s: &str) -> Result<Vec<Period>, String> {
    if s.is_empty() {
        return Err("empty".into());
    }
    let fields: Vec<&str> = s.split(':').collect();
    let mut periods = Vec::with_capacity(fields.len());
    for (i, field) in fields.iter().enumerate() {
        let n = i + 1;
        let number = |text: &str, what: &str| -> Result<u64, String> {
            if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!("period {n}: {what} {text:?} is not a number"));
            }
            text.parse::<u64>()
                .map_err(|_| format!("period {n}: {what} {text:?} is too large"))
        };
        let (moves, rest) = match field.split_once('/') {
            Some((m, rest)) => (Some(number(m, "move count")?), rest),
            None => (None, *field),
        };
        let (time, inc) = match rest.split_once('+') {
            Some((t, inc)) => (t, Some(inc)),
            None => (rest, None),
        };
        let seconds = number(time, "time")?;
        let increment = inc
            .map(|i| number(i, "increment"))
            .transpose()?
            .unwrap_or(0);
        let moves = match moves {
            Some(0) => return Err(format!("period {n}: a period needs at least one move")),
            Some(m) => Some(u32::try_from(m).map_err(|_| format!("period {n}: too many moves"))?),
            None if n < fields.len() => {
                return Err(format!(
                    "period {n}: only the last period may be without a move count"
                ));
            }
            None => None,
        };
        if seconds == 0 {
            return Err(format!("period {n}: the time must be positive"));
        }
        periods.push(Period {
            moves,
            seconds,
            increment,
        });
    }
    Ok(periods)
}

impl fmt::Display for TimeControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.periods.iter().enumerate() {
            if i > 0 {
                f.write_str(":")?;
            }
            if let Some(m) = p.moves {
                write!(f, "{m}/")?;
            }
            write!(f, "{}", p.seconds)?;
            if p.increment > 0 {
                write!(f, "+{}", p.increment)?;
            }
        }
        Ok(())
    }
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
    listen_only: Option<bool>,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, Path::new("test.toml"))
    }

    fn err(text: &str) -> ConfigError {
        parse(text).expect_err("configuration should be rejected")
    }

    fn line(e: &ConfigError) -> Option<usize> {
        match &e.origin {
            ErrorOrigin::File { line, .. } => *line,
            ErrorOrigin::CommandLine => None,
        }
    }

    #[test]
    fn empty_file_gives_defaults() {
        let c = parse("").unwrap();
        assert_eq!(c.daemon, DaemonConfig::default());
        assert!(c.boards.is_empty());
        assert_eq!(c.daemon.pgn_dir(), PathBuf::from("/var/lib/eboardd/pgn"));
    }

    #[test]
    fn time_control_parses_into_periods() {
        let tc: TimeControl = "40/5400+30:1800+30".parse().unwrap();
        assert_eq!(
            tc.periods,
            vec![
                Period {
                    moves: Some(40),
                    seconds: 5400,
                    increment: 30
                },
                Period {
                    moves: None,
                    seconds: 1800,
                    increment: 30
                },
            ]
        );
        assert_eq!(tc.to_string(), "40/5400+30:1800+30");
        let tc: TimeControl = "300+2".parse().unwrap();
        assert_eq!(
            tc.periods,
            vec![Period {
                moves: None,
                seconds: 300,
                increment: 2
            }]
        );
        let tc: TimeControl = "40/7200".parse().unwrap();
        assert_eq!(tc.periods[0].moves, Some(40));
        for bad in [
            "",
            "?",
            "-",
            "*180",
            "40/",
            "/5400",
            "5400:40/1800",
            "0",
            "40/0",
            "0/60",
            "40/5400+",
            "40/5400+x",
            "1e3",
            " 300",
            "300:",
            "40/5400++1",
            "99999999999999999999",
        ] {
            assert!(bad.parse::<TimeControl>().is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn bus_values() {
        assert_eq!("system".parse::<Bus>(), Ok(Bus::System));
        assert_eq!("session".parse::<Bus>(), Ok(Bus::Session));
        assert_eq!(
            "unix:path=/run/x".parse::<Bus>(),
            Ok(Bus::Address("unix:path=/run/x".into()))
        );
        assert!(
            "unix:abstract=/tmp/dbus-x,guid=0123abcd;tcp:host=localhost,port=1"
                .parse::<Bus>()
                .is_ok()
        );
        assert!("unix:path=/tmp/a%20b".parse::<Bus>().is_ok());
        for bad in [
            "",
            "Session",
            "unix",
            "unix:path",
            "unix:path=/a b",
            "unix:=x",
            ":path=x",
            "unix:path=/x%2",
        ] {
            assert!(bad.parse::<Bus>().is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn board_ids_follow_the_contract() {
        assert_eq!(board_id("board-1"), "board_1");
        assert_eq!(board_id("Brett 3 (ä)"), "Brett_3____");
        let b = BoardConfig::for_port("/dev/serial/by-id/usb-DGT_0123-if00");
        assert_eq!(b.display_name(), "usb-DGT_0123-if00");
        assert_eq!(b.id(), "usb_DGT_0123_if00");
    }

    #[test]
    fn unknown_key_names_line_and_key() {
        let e = err("[daemon]\nbus = \"system\"\nstatedir = \"/x\"\n");
        assert_eq!(line(&e), Some(3));
        assert_eq!(e.key.as_deref(), Some("daemon.statedir"));
        assert!(
            e.to_string()
                .starts_with("test.toml:3: key `daemon.statedir`"),
            "{e}"
        );
    }

    #[test]
    fn tags_are_validated() {
        let e = err("[[board]]\nport = \"/dev/x\"\ntags = { \"Bad Tag\" = \"v\" }\n");
        assert_eq!(line(&e), Some(3));
        assert_eq!(e.key.as_deref(), Some("board[1].tags.Bad Tag"));
        let e = err("[[board]]\nport = \"/dev/x\"\ntags = { Event = \"a\\\"b\" }\n");
        assert_eq!(e.key.as_deref(), Some("board[1].tags.Event"));
        let e = err("[[board]]\nport = \"/dev/x\"\ntags = { Round = 3 }\n");
        assert!(e.message.contains("Round = \"3\""), "{e}");
        let c = parse("[[board]]\nport = \"/dev/x\"\ntags = { White = \"A\", Event = \"E\" }\n")
            .unwrap();
        assert_eq!(
            c.boards[0].tags,
            vec![("White".into(), "A".into()), ("Event".into(), "E".into())]
        );
    }

    #[test]
    fn overrides_replace_and_add() {
        let c = parse("[daemon]\nrules = \"rapid\"\n[[board]]\nport = \"/dev/a\"\n")
            .unwrap()
            .with_overrides(&Overrides {
                ports: vec!["/dev/b".into()],
                bus: Some("session".into()),
                rules: Some("blitz".into()),
                state_dir: Some("/tmp/s".into()),
            })
            .unwrap();
        assert_eq!(c.daemon.bus, Bus::Session);
        assert_eq!(c.daemon.rules, Rules::Blitz);
        assert_eq!(c.daemon.pgn_dir(), PathBuf::from("/tmp/s/pgn"));
        let setups = c.board_setups();
        assert_eq!(setups.len(), 2);
        assert_eq!(setups[1].id, "b");
        assert_eq!(setups[1].session.rules, Rules::Blitz);

        let e = Config::default()
            .with_overrides(&Overrides {
                rules: Some("fast".into()),
                ..Overrides::default()
            })
            .unwrap_err();
        assert_eq!(e.origin, ErrorOrigin::CommandLine);
        assert_eq!(e.key.as_deref(), Some("--rules"));
        assert!(
            e.to_string().starts_with("command line: key `--rules`"),
            "{e}"
        );
    }

    #[test]
    fn duplicate_ports_and_ids_are_rejected() {
        let mut c = parse("[[board]]\nport = \"/dev/a\"\n").unwrap();
        let e = c.add_port("/dev/a").unwrap_err();
        assert!(e.message.contains("already served"), "{e}");
        let e = c.add_port("/other/a").unwrap_err();
        assert!(e.message.contains("board id `a`"), "{e}");
        assert!(e.message.contains("line 1"), "{e}");
        assert!(c.add_port("/dev/").is_ok(), "\"/dev/\" names the board dev");
        assert!(c.add_port("/").is_err());
        assert!(c.add_port("").is_err());
    }
}
