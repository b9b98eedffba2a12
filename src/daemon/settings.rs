//! The settings the daemon runs with: command-line flags laid over the configuration file
//! ([`super::config`]) over built-in defaults, and the board list with each board's id.

use std::path::PathBuf;

use super::args::Args;
use super::config::{self, BoardConfig, Config, DaemonConfig, Overrides};

pub use super::config::BoardSpec;
/// Which bus to own `org.eboardd.Bridge1` on.
pub use crate::bus_choice::BusChoice;

/// Everything the daemon needs to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub bus: BusChoice,
    pub state_dir: PathBuf,
    /// Where finished and live PGN files go.
    pub pgn_dir: Option<PathBuf>,
    /// `--record DIR`.
    pub record_dir: Option<PathBuf>,
    /// The `[daemon]` defaults, for boards added through `AddBoard`.
    pub daemon: DaemonConfig,
    pub boards: Vec<BoardSpec>,
}

/// Bad configuration or arguments (exit code 2); the message names the file, line and key
/// or the flag at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SettingsError(pub String);

impl From<config::ConfigError> for SettingsError {
    fn from(e: config::ConfigError) -> Self {
        SettingsError(e.to_string())
    }
}

/// The board spec for a port with the `[daemon]` defaults (`AddBoard`), once the port passed
/// the board validator ([`BoardConfig::check`]) that configured boards pass too.
pub fn spec_for_port(port: &str, daemon: &DaemonConfig) -> Result<BoardSpec, config::BoardFault> {
    let board = BoardConfig::for_port(port);
    board.check()?;
    Ok(board.spec(daemon))
}

impl Settings {
    /// Read the configuration (`--config`, else the default file if it exists, else
    /// built-in defaults) and lay the flags over it.
    pub fn resolve(args: &Args) -> Result<Settings, SettingsError> {
        let overrides = Overrides {
            ports: args
                .ports
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect(),
            bus: args.bus.clone(),
            rules: args.rules.clone(),
            state_dir: args.state_dir.clone(),
        };
        let config = Config::load(args.config.as_deref())?.with_overrides(&overrides)?;
        Ok(Settings::from_config(&config, args.record.clone()))
    }

    /// Settings from a validated configuration.
    pub fn from_config(config: &Config, record_dir: Option<PathBuf>) -> Settings {
        Settings {
            bus: config.daemon.bus.clone(),
            state_dir: config.daemon.state_dir.clone(),
            pgn_dir: Some(config.daemon.pgn_dir()),
            record_dir,
            daemon: config.daemon.clone(),
            boards: config.board_specs(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn flags_override_the_file() {
        let dir = std::env::temp_dir().join(format!("eboardd-settings-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("c.toml");
        std::fs::write(
            &file,
            "[daemon]\nrules = \"rapid\"\n[[board]]\nname = \"board-1\"\nport = \"/dev/x\"\nlisten_only = true\n",
        )
        .unwrap();
        let args = Args::try_parse_from([
            "eboardd",
            "--config",
            file.to_str().unwrap(),
            "--port",
            "/dev/ttyACM0",
            "--bus",
            "session",
        ])
        .unwrap();
        let s = Settings::resolve(&args).unwrap();
        assert_eq!(s.bus, BusChoice::Session);
        let ids: Vec<_> = s.boards.iter().map(|b| b.id.as_str()).collect();
        assert_eq!(ids, ["board_1", "ttyACM0"]);
        assert!(s.boards[0].listen_only);
        assert_eq!(
            s.boards[1].session.arbiter.rules,
            eboard_core::vocab::Rules::Rapid
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_flags_name_the_flag() {
        let args = Args::try_parse_from(["eboardd", "--rules", "bullet"]).unwrap();
        let e = Settings::resolve(&args).unwrap_err().0;
        assert!(e.contains("--rules") && e.contains("bullet"), "{e}");
    }
}
