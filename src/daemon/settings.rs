//! The settings the daemon runs with: command-line flags laid over the configuration file
//! over built-in defaults, and the board list with each board's object id.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::session::SessionConfig;

use super::args::{Args, BusChoice};

/// The configuration file used when `--config` is not given, if it exists.
pub const DEFAULT_CONFIG: &str = "/etc/eboardd/eboardd.toml";
/// The state directory used when neither `--state-dir` nor the configuration sets one.
pub const DEFAULT_STATE_DIR: &str = "/var/lib/eboardd";

/// One board to serve.
#[derive(Debug, Clone, PartialEq)]
pub struct BoardSpec {
    /// Object id: the last element of `/org/eboardd/Bridge1/Board/<id>`.
    pub id: String,
    /// Serial device path.
    pub port: PathBuf,
    /// Never write to the port.
    pub listen_only: bool,
    /// Everything the session needs (its `name` is the board's name).
    pub session: SessionConfig,
}

/// Everything the daemon needs to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub bus: BusChoice,
    pub state_dir: PathBuf,
    /// Where finished and live PGN files go (optional).
    pub pgn_dir: Option<PathBuf>,
    /// `--record DIR`.
    pub record_dir: Option<PathBuf>,
    /// The session settings for boards added without their own (`--port`, `AddBoard`).
    pub defaults: SessionConfig,
    pub boards: Vec<BoardSpec>,
}

/// Bad configuration or arguments: exit code 2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SettingsError(pub String);

/// The object id of a board: its name with every character outside `[A-Za-z0-9_]` replaced
/// by `_` (contract section 2). An empty name gives `_`, so the path stays valid.
pub fn board_id(name: &str) -> String {
    let id: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if id.is_empty() { "_".into() } else { id }
}

/// The name of a board that has none configured: its port's file name.
pub fn name_from_port(port: &Path) -> String {
    port.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| port.to_string_lossy().into_owned())
}

/// A board spec for `port` with the given settings template and optional configured name.
pub fn board_spec(
    port: PathBuf,
    name: Option<String>,
    listen_only: bool,
    template: &SessionConfig,
) -> BoardSpec {
    let name = name.unwrap_or_else(|| name_from_port(&port));
    let session = SessionConfig {
        name: name.clone(),
        ..template.clone()
    };
    BoardSpec {
        id: board_id(&name),
        port,
        listen_only,
        session,
    }
}

impl Settings {
    /// Lay the flags over the configuration file (if any) over the defaults.
    pub fn resolve(args: &Args) -> Result<Settings, SettingsError> {
        let mut settings = match &args.config {
            Some(path) => super::config_bridge::load(path)?,
            None if Path::new(DEFAULT_CONFIG).exists() => {
                super::config_bridge::load(Path::new(DEFAULT_CONFIG))?
            }
            None => Settings::builtin(),
        };
        if let Some(bus) = &args.bus {
            settings.bus = bus.clone();
        }
        if let Some(dir) = &args.state_dir {
            settings.state_dir = dir.clone();
        }
        if let Some(rules) = args.rules {
            // --rules is the default for boards that do not set their own: the config loader
            // tells which those are by leaving them at the template's value.
            super::config_bridge::apply_default_rules(&mut settings, rules);
        }
        settings.record_dir = args.record.clone();
        for port in &args.ports {
            let spec = board_spec(port.clone(), None, false, &settings.defaults);
            settings.boards.push(spec);
        }
        settings.check()?;
        Ok(settings)
    }

    /// Built-in defaults: system bus, `/var/lib/eboardd`, standard rules, no boards.
    pub fn builtin() -> Settings {
        Settings {
            bus: BusChoice::System,
            state_dir: PathBuf::from(DEFAULT_STATE_DIR),
            pgn_dir: None,
            record_dir: None,
            defaults: SessionConfig::default(),
            boards: Vec::new(),
        }
    }

    /// Refuse board lists the daemon could not serve: two boards with one object id or port.
    pub fn check(&self) -> Result<(), SettingsError> {
        let mut ids = HashSet::new();
        let mut ports = HashSet::new();
        for b in &self.boards {
            if !ids.insert(b.id.as_str()) {
                return Err(SettingsError(format!(
                    "two boards have the object id {:?} (board names must differ after \
                     replacing characters outside [A-Za-z0-9_] with `_`)",
                    b.id
                )));
            }
            if !ports.insert(b.port.as_path()) {
                return Err(SettingsError(format!(
                    "the port {} is given for two boards",
                    b.port.display()
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_follow_the_contract() {
        assert_eq!(board_id("board-1"), "board_1");
        assert_eq!(board_id("Ab_9"), "Ab_9");
        assert_eq!(board_id("é x"), "__x");
        assert_eq!(board_id(""), "_");
        assert_eq!(name_from_port(Path::new("/dev/ttyACM0")), "ttyACM0");
    }

    #[test]
    fn duplicate_ids_are_refused() {
        let mut s = Settings::builtin();
        let t = SessionConfig::default();
        s.boards
            .push(board_spec("/dev/a".into(), Some("b-1".into()), false, &t));
        s.boards
            .push(board_spec("/dev/b".into(), Some("b_1".into()), false, &t));
        assert!(s.check().unwrap_err().0.contains("b_1"));
    }
}
