//! `eboardctl relay --mqtt URL [--rig NAME] [--prefix P]`: the hall relay (contract section 6).
//! Parses and checks the options, then runs [`crate::bridge::relay`] until SIGINT/SIGTERM.

use std::path::PathBuf;

use crate::bridge::relay::core::MIN_QUEUED;
use crate::bridge::relay::{RelayOptions, run as run_relay};
use crate::cli::Globals;
use crate::client::error::CtlError;
use crate::client::mqtt::{DEFAULT_MAX_BOARDS, SharedHealth};
use crate::mqtt::broker::Broker;
use crate::mqtt::topics::{self, DEFAULT_PREFIX};

/// The arguments of `relay`.
#[derive(Debug, Clone, clap::Args)]
pub struct RelayArgs {
    /// The broker: mqtt://[USER[:PASSWORD]@]HOST[:PORT] or mqtts://… (TLS).
    #[arg(long, value_name = "URL")]
    pub mqtt: String,
    /// This rig's name in the topics (default: the host name).
    #[arg(long, value_name = "NAME")]
    pub rig: Option<String>,
    /// The first topic level(s).
    #[arg(long, value_name = "P", default_value = DEFAULT_PREFIX)]
    pub prefix: String,
    /// Read the broker password from the first line of FILE (the URL then names the user).
    #[arg(long, value_name = "FILE")]
    pub password_file: Option<PathBuf>,
    /// Trust the CA certificates in this PEM file instead of the system's (mqtts:// only).
    #[arg(long, value_name = "FILE")]
    pub ca: Option<PathBuf>,
    /// Events kept while the broker is away, at most (the oldest go first past that).
    #[arg(long, value_name = "N", default_value_t = 100_000)]
    pub max_queued: usize,
}

/// `--mqtt URL [--prefix P] [--password-file FILE] [--ca FILE]` of the commands that follow a
/// whole hall on a broker instead of the local bus (`watch`, `serve`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct HallArgs {
    /// Follow every board of a hall on this MQTT broker (what `eboardctl relay` publishes)
    /// instead of the local bus: mqtt://[USER[:PASSWORD]@]HOST[:PORT] or mqtts://….
    #[arg(long, value_name = "URL")]
    pub mqtt: Option<String>,
    /// With --mqtt: the relays' topic prefix.
    #[arg(long, value_name = "P", default_value = DEFAULT_PREFIX, requires = "mqtt")]
    pub prefix: String,
    /// With --mqtt: read the broker password from the first line of FILE.
    #[arg(long, value_name = "FILE", requires = "mqtt")]
    pub password_file: Option<PathBuf>,
    /// With --mqtt: trust the CA certificates in this PEM file (mqtts:// only).
    #[arg(long, value_name = "FILE", requires = "mqtt")]
    pub ca: Option<PathBuf>,
    /// With --mqtt: boards (and rigs) of the hall taken at most; more are refused and
    /// counted (a broker anyone can publish to must not grow the hall without bound).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_BOARDS, requires = "mqtt",
          value_parser = boards_bound)]
    pub max_boards: usize,
}

/// `--max-boards N`: 1 to 1,000,000.
fn boards_bound(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if (1..=1_000_000).contains(&n) => Ok(n),
        _ => Err(format!(
            "{text:?} is not a number of boards from 1 to 1000000"
        )),
    }
}

/// A hall on a broker, checked and ready to follow.
#[derive(Debug, Clone)]
pub struct HallSource {
    pub broker: Broker,
    pub prefix: String,
    pub max_boards: usize,
}

impl HallArgs {
    /// The broker to follow, when `--mqtt` is given. Bad options are usage errors (exit 2),
    /// found now rather than at the first connection attempt.
    pub fn source(&self) -> Result<Option<HallSource>, CtlError> {
        let Some(url) = &self.mqtt else {
            return Ok(None);
        };
        let usage = |e: String| CtlError::Usage(e);
        topics::check_prefix(&self.prefix).map_err(|e| usage(e.to_string()))?;
        let broker = Broker::new(url, self.password_file.as_deref(), self.ca.as_deref())
            .map_err(|e| usage(e.to_string()))?;
        broker
            .options("check", None)
            .map_err(|e| usage(e.to_string()))?;
        Ok(Some(HallSource {
            broker,
            prefix: self.prefix.clone(),
            max_boards: self.max_boards,
        }))
    }
}

impl HallSource {
    /// Follows the hall, sending every update to `tx` (see [`crate::client::mqtt`]); what
    /// the broker sent that was refused is kept current in `health`, when given.
    pub async fn follow(
        self,
        health: Option<SharedHealth>,
        tx: tokio::sync::mpsc::Sender<crate::client::HallUpdate>,
    ) {
        crate::client::mqtt::watch_broker(self.broker, self.prefix, self.max_boards, health, tx)
            .await
    }
}

/// The checked options.
pub fn options(globals: &Globals, args: &RelayArgs) -> Result<RelayOptions, CtlError> {
    let usage = |e: String| CtlError::Usage(e);
    topics::check_prefix(&args.prefix).map_err(|e| usage(e.to_string()))?;
    let rig = match &args.rig {
        Some(r) => r.clone(),
        None => topics::rig_from_hostname(
            std::fs::read_to_string("/proc/sys/kernel/hostname")
                .unwrap_or_default()
                .trim(),
        ),
    };
    topics::check_rig(&rig).map_err(|e| usage(e.to_string()))?;
    if args.max_queued < MIN_QUEUED {
        return Err(usage(format!(
            "--max-queued {}: keep at least {MIN_QUEUED} events",
            args.max_queued
        )));
    }
    let broker = Broker::new(
        &args.mqtt,
        args.password_file.as_deref(),
        args.ca.as_deref(),
    )
    .map_err(|e| usage(e.to_string()))?;
    Ok(RelayOptions {
        broker,
        bus: globals.bus.clone(),
        prefix: args.prefix.clone(),
        rig,
        max_queued: args.max_queued,
    })
}

/// Runs the relay until SIGINT or SIGTERM.
pub async fn run(globals: &Globals, args: &RelayArgs) -> Result<(), CtlError> {
    let opts = options(globals, args)?;
    // The TLS configuration is built now so a bad --ca fails at start, not at each connect.
    opts.broker
        .options("check", None)
        .map_err(|e| CtlError::Usage(e.to_string()))?;
    let stop = stop_signal()?;
    run_relay(opts, stop).await.map_err(CtlError::Other)
}

/// Completes at the first SIGINT or SIGTERM. The handlers are installed before this returns,
/// so a signal that comes early is not lost.
pub fn stop_signal() -> Result<impl std::future::Future<Output = ()>, CtlError> {
    use tokio::signal::unix::{SignalKind, signal};
    let install = |kind: SignalKind, name: &str| {
        signal(kind).map_err(|e| CtlError::Other(format!("installing a {name} handler: {e}")))
    };
    let mut interrupt = install(SignalKind::interrupt(), "SIGINT")?;
    let mut terminate = install(SignalKind::terminate(), "SIGTERM")?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    })
}
