//! The daemon's configuration: the contract's TOML file (section 3), built-in defaults and
//! command-line overrides, validated strictly and turned into one [`BoardSpec`] per board.
//!
//! Every error names where it came from — the file, line and key, or the command-line flag —
//! so `eboardd` can print it and exit with status 2. Unknown keys are rejected (a typo must not
//! silently fall back to a default on a tournament day), and so is every value outside the
//! documented sets.
//!
//! Flow: [`Config::load`] (or [`Config::parse`] for text already read) →
//! [`Config::with_overrides`] (`--port`, `--bus`, `--rules`, `--state-dir`) →
//! [`Config::board_specs`].
//!
//! By job: [`file`] reads the TOML (schema, line and key of every error), [`board`] is one
//! board entry and the one validator of ports and names (also used by `AddBoard`), [`words`]
//! checks the small values; this module holds the merged result and the overrides. The bus
//! word is [`crate::bus_choice`]'s and the time control [`eboard_core::arbiter::timecontrol`]'s.

use std::fmt;
use std::path::{Path, PathBuf};

use eboard_core::vocab::{Edition, Rules, Variant};

mod board;
mod file;
mod words;

use words::parse_word;

use crate::bus_choice::BusChoice;
pub use board::{
    BoardConfig, BoardFault, BoardField, BoardSpec, ID_MAX, PORT_MAX, board_id, port_file_name,
};
pub use eboard_core::arbiter::timecontrol::{Period, TimeControl, TimeControlError};

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
    pub bus: BusChoice,
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
            bus: BusChoice::System,
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

impl Config {
    /// Read the configuration the way the contract says: `explicit` (`--config`) must exist;
    /// without it [`DEFAULT_CONFIG_PATH`] is read if it exists, else the built-in defaults apply.
    pub fn load(explicit: Option<&Path>) -> Result<Config, ConfigError> {
        Self::load_with_default(explicit, Path::new(DEFAULT_CONFIG_PATH))
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
        // Bounded: `--config /dev/zero` is refused, not read until memory runs out.
        let text =
            crate::bounded_read::read_text(path, crate::bounded_read::CONFIG).map_err(|e| {
                let line = match e {
                    crate::bounded_read::ReadError::NotUtf8 { line } => Some(line),
                    _ => None,
                };
                let message = match e {
                    crate::bounded_read::ReadError::Io(e) => {
                        format!("cannot read the configuration: {e}")
                    }
                    crate::bounded_read::ReadError::NotUtf8 { .. } => {
                        "not UTF-8 text (save the file as UTF-8)".into()
                    }
                    e @ crate::bounded_read::ReadError::TooLarge(_) => e.to_string(),
                };
                ConfigError {
                    origin: ErrorOrigin::File {
                        path: path.to_path_buf(),
                        line,
                    },
                    key: None,
                    message,
                }
            })?;
        Self::parse(&text, path)
    }

    /// Parse and validate configuration text read from `path` (used in error messages).
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        file::parse(text, path)
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
                parse_word(rules).map_err(|m| ConfigError::command_line("--rules", m))?;
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

    /// Add a board on `port` with default settings (`--port`); refused when the port cannot
    /// be a board ([`BoardConfig::check`]), is already served, or its id is taken.
    pub fn add_port(&mut self, port: &str) -> Result<(), ConfigError> {
        let board = BoardConfig::for_port(port);
        board
            .check()
            .map_err(|fault| ConfigError::command_line("--port", fault.message))?;
        self.add_board(board)
    }

    /// Every board, ready to start, in configuration order (ids are unique by construction).
    pub fn board_specs(&self) -> Vec<BoardSpec> {
        self.boards.iter().map(|b| b.spec(&self.daemon)).collect()
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

    /// The tags the game record writes itself are refused with the file, line and key.
    #[test]
    fn the_records_own_tags_are_refused() {
        for tag in eboard_core::game::RECORD_TAGS {
            let e = err(&format!(
                "[[board]]\nport = \"/dev/x\"\ntags = {{ Event = \"E\", {tag} = \"x\" }}\n"
            ));
            assert_eq!(line(&e), Some(3), "{e}");
            assert_eq!(
                e.key.as_deref(),
                Some(format!("board[1].tags.{tag}").as_str())
            );
            assert!(e.message.contains("writes itself"), "{e}");
        }
        assert!(
            parse("[[board]]\nport = \"/dev/x\"\ntags = { TimeControl = \"40/7200\" }\n").is_ok()
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

    /// The configuration's tags have the bounds of `SetTags`: value length, control
    /// characters, name length and how many.
    #[test]
    fn tags_are_bounded() {
        let e = err(&format!(
            "[[board]]\nport = \"/dev/x\"\ntags = {{ White = \"{}\" }}\n",
            "x".repeat(1025)
        ));
        assert_eq!(e.key.as_deref(), Some("board[1].tags.White"));
        assert!(e.message.contains("longer than 1024 bytes"), "{e}");
        let e = err("[[board]]\nport = \"/dev/x\"\ntags = { White = \"\\u001b[2J\" }\n");
        assert!(e.message.contains("control character"), "{e}");
        let e = err(&format!(
            "[[board]]\nport = \"/dev/x\"\ntags = {{ A{} = \"v\" }}\n",
            "b".repeat(300)
        ));
        assert!(e.message.contains("at most 255 bytes"), "{e}");
        assert!(e.to_string().len() < 400, "{e}");
        let many: Vec<String> = (0..65).map(|i| format!("T{i} = \"v\"")).collect();
        let e = err(&format!(
            "[[board]]\nport = \"/dev/x\"\ntags = {{ {} }}\n",
            many.join(", ")
        ));
        assert_eq!(e.key.as_deref(), Some("board[1].tags"));
        assert!(e.message.contains("at most 64 tags"), "{e}");
        assert!(
            parse(&format!(
                "[[board]]\nport = \"/dev/x\"\ntags = {{ {} }}\n",
                many[..64].join(", ")
            ))
            .is_ok()
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
        assert_eq!(c.daemon.bus, BusChoice::Session);
        assert_eq!(c.daemon.rules, Rules::Blitz);
        assert_eq!(c.daemon.pgn_dir(), PathBuf::from("/tmp/s/pgn"));
        let setups = c.board_specs();
        assert_eq!(setups.len(), 2);
        assert_eq!(setups[1].id, "b");
        assert_eq!(setups[1].session.arbiter.rules, Rules::Blitz);

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
        assert!(
            c.add_port("/nonexistent/dev/").is_ok(),
            "\"/nonexistent/dev/\" names the board dev"
        );
        for bad in ["/", "", "/dev/", "/etc/passwd", "ttyACM0"] {
            let e = c.add_port(bad).unwrap_err();
            assert_eq!(e.key.as_deref(), Some("--port"), "{e}");
        }
        assert_eq!(c.boards.len(), 2, "nothing refused was added");
    }
}
