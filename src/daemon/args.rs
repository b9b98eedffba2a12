//! Command-line flags of `eboardd` (contract section 1), parsed with clap.
//!
//! Only parsing lives here; turning flags and the configuration file into the settings the
//! daemon runs with is [`super::settings`]'s job.

use std::path::PathBuf;

use clap::{Parser, ValueEnum};

use crate::session::Rules;

/// `eboardd`: reads DGT-style e-boards and their clocks over serial and publishes the games on
/// D-Bus as `org.eboardd.Bridge1`.
#[derive(Debug, Clone, Parser)]
#[command(name = "eboardd", version, about, long_about = None)]
pub struct Args {
    /// TOML configuration file [default: /etc/eboardd/eboardd.toml if it exists].
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Add a board on this serial device (repeatable; adds to the configuration's boards).
    #[arg(long = "port", value_name = "PATH")]
    pub ports: Vec<PathBuf>,

    /// Bus to own the name on: `session`, `system` or a D-Bus address such as
    /// `unix:path=/run/x` [default: system].
    #[arg(long, value_name = "session|system|ADDRESS", value_parser = parse_bus)]
    pub bus: Option<BusChoice>,

    /// Default rules for boards that do not set their own [default: standard].
    #[arg(long, value_name = "RULES", value_parser = parse_rules)]
    pub rules: Option<Rules>,

    /// Where in-progress games and finished PGNs are kept [default: /var/lib/eboardd].
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,

    /// Play a bundled real game on a simulated board + clock through the whole pipeline and
    /// print each event as a D-Bus client receives it.
    #[arg(long)]
    pub demo: bool,

    /// Log output [default: text on a terminal, journald under systemd].
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub log_format: Option<LogFormat>,

    /// Write each board's raw serial input, timestamped, into this directory.
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
}

/// Which bus to own `org.eboardd.Bridge1` on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BusChoice {
    Session,
    System,
    /// A D-Bus address such as `unix:path=/run/x`.
    Address(String),
}

impl std::fmt::Display for BusChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BusChoice::Session => f.write_str("session"),
            BusChoice::System => f.write_str("system"),
            BusChoice::Address(a) => f.write_str(a),
        }
    }
}

/// Parse the `--bus` value (also used for the configuration's `bus` key).
pub fn parse_bus(s: &str) -> Result<BusChoice, String> {
    match s {
        "session" => Ok(BusChoice::Session),
        "system" => Ok(BusChoice::System),
        "" => Err("the bus must be `session`, `system` or a D-Bus address".into()),
        // A D-Bus address is `transport:key=value,...`; anything else is a typo of the two
        // keywords rather than an address, and is better refused at start.
        a if a.contains(':') => Ok(BusChoice::Address(a.to_owned())),
        other => Err(format!(
            "{other:?} is neither `session`, `system` nor a D-Bus address (such as unix:path=/run/x)"
        )),
    }
}

/// Parse a rules name (`standard`, `rapid`, `blitz`).
pub fn parse_rules(s: &str) -> Result<Rules, String> {
    match s {
        "standard" => Ok(Rules::Standard),
        "rapid" => Ok(Rules::Rapid),
        "blitz" => Ok(Rules::Blitz),
        other => Err(format!(
            "{other:?} is not a rules name: use standard, rapid or blitz"
        )),
    }
}

/// Tracing output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
    Journald,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bus_values() {
        assert_eq!(parse_bus("session"), Ok(BusChoice::Session));
        assert_eq!(parse_bus("system"), Ok(BusChoice::System));
        assert_eq!(
            parse_bus("unix:path=/run/x"),
            Ok(BusChoice::Address("unix:path=/run/x".into()))
        );
        assert!(parse_bus("sesion").is_err());
    }

    #[test]
    fn flags_parse() {
        let a = Args::try_parse_from([
            "eboardd", "--port", "/dev/a", "--port", "/dev/b", "--rules", "blitz", "--bus",
            "session",
        ])
        .unwrap();
        assert_eq!(a.ports.len(), 2);
        assert_eq!(a.rules, Some(Rules::Blitz));
        assert_eq!(a.bus, Some(BusChoice::Session));
        assert!(Args::try_parse_from(["eboardd", "--rules", "bullet"]).is_err());
        assert!(Args::try_parse_from(["eboardd", "--log-format", "xml"]).is_err());
    }
}
