//! Command-line flags of `eboardd` (contract section 1), parsed with clap.
//!
//! Only parsing lives here; the values of `--bus` and `--rules` are checked with the
//! configuration ([`super::settings`]), so both report errors the same way.

use std::path::PathBuf;

use clap::{Parser, ValueEnum};

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
    #[arg(long, value_name = "session|system|ADDRESS")]
    pub bus: Option<String>,

    /// Default rules for boards that do not set their own: standard, rapid or blitz
    /// [default: standard].
    #[arg(long, value_name = "RULES")]
    pub rules: Option<String>,

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
    fn flags_parse() {
        let a = Args::try_parse_from([
            "eboardd", "--port", "/dev/a", "--port", "/dev/b", "--rules", "blitz", "--bus",
            "session", "--record", "/tmp/r",
        ])
        .unwrap();
        assert_eq!(a.ports.len(), 2);
        assert_eq!(a.rules.as_deref(), Some("blitz"));
        assert_eq!(a.bus.as_deref(), Some("session"));
        assert!(Args::try_parse_from(["eboardd", "--log-format", "xml"]).is_err());
        assert!(Args::try_parse_from(["eboardd", "--port"]).is_err());
    }
}
