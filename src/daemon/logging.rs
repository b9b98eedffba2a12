//! Tracing output: human text, JSON lines, or the systemd journal (falling back to text when
//! there is no journal socket). `RUST_LOG` filters as usual; the default level is `info` (`warn` for the demo, whose
//! terminal output is the events).

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use super::args::LogFormat;

/// The format used when none is asked for: journald when started by systemd with stderr
/// connected to the journal, text otherwise.
pub fn default_format() -> LogFormat {
    let under_journal = std::env::var_os("JOURNAL_STREAM").is_some();
    if under_journal && !std::io::stderr().is_terminal() {
        LogFormat::Journald
    } else {
        LogFormat::Text
    }
}

/// Install the global subscriber, logging at `default_level` unless `RUST_LOG` says
/// otherwise. Safe to call once; later calls are ignored.
pub fn init(format: Option<LogFormat>, default_level: &str) {
    let filter =
        || EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_level));
    let text = || {
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(std::io::stderr().is_terminal())
    };
    let format = format.unwrap_or_else(default_format);
    let result = match format {
        LogFormat::Text => tracing_subscriber::registry()
            .with(filter())
            .with(text())
            .try_init(),
        LogFormat::Json => tracing_subscriber::registry()
            .with(filter())
            .with(
                tracing_subscriber::fmt::layer()
                    .json()
                    .with_current_span(true)
                    .with_span_list(true)
                    .with_writer(std::io::stderr),
            )
            .try_init(),
        LogFormat::Journald => match tracing_journald::layer() {
            Ok(journald) => tracing_subscriber::registry()
                .with(filter())
                .with(journald.with_syslog_identifier("eboardd".into()))
                .try_init(),
            Err(e) => {
                let r = tracing_subscriber::registry()
                    .with(filter())
                    .with(text())
                    .try_init();
                tracing::warn!("no journald socket ({e}); logging as text on stderr");
                r
            }
        },
    };
    // Already initialised (tests, the demo re-entering): keep the first subscriber.
    let _ = result;
}
