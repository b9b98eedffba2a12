//! `eboardctl serve`: the web bridge (contract section 5) fed from the local bus, or with
//! `--mqtt` from a hall's broker ([`crate::client::mqtt`]).
//!
//! The wiring is a source task sending [`HallUpdate`]s into a channel and the bridge reading
//! it, so another source (a broker) is another task on the same channel. From a broker, what
//! its feed refuses is shared with `/api/health` and told in one log line at most every
//! [`REFUSALS_EVERY`].

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc;

use crate::bridge::web::{self, DEFAULT_LISTEN, Options};
use crate::cli::Globals;
use crate::client::error::CtlError;
use crate::client::mqtt::{BrokerHealth, SharedHealth};
use crate::client::{HallUpdate, watch_bus};

/// The arguments of `serve`.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Address and port to serve HTTP on (0.0.0.0:7380 or [::]:7380 for the LAN).
    #[arg(long, default_value = DEFAULT_LISTEN, value_name = "ADDR:PORT")]
    pub listen: SocketAddr,
    /// Live event streams (and, separately, requests in flight) served at once; more get 503.
    #[arg(long, default_value_t = 100, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub max_clients: u32,
    /// `--mqtt URL`: serve every board of a hall from its broker (boards named
    /// `<rig>/<board id>`) instead of the local bus.
    #[command(flatten)]
    pub hall: crate::cli::relay::HallArgs,
}

/// How many updates may wait between the source and the bridge. Few: from a broker each may
/// be a board's whole state (up to 512 KiB), and a source that runs ahead waits here (the
/// broker's connection then waits too) rather than piling states up in memory.
const UPDATES: usize = 64;

/// The shortest time between two log lines about messages the broker's feed refused.
pub const REFUSALS_EVERY: Duration = Duration::from_secs(10);

/// Runs the bridge until SIGINT/SIGTERM. The bus need not be there: the bridge serves from
/// the start and follows the daemon and the bus as they come and go.
pub fn run(globals: &Globals, args: &ServeArgs) -> Result<(), CtlError> {
    let runtime = crate::cli::bridge_runtime()?;
    let hall = args.hall.source()?;
    let health: Option<SharedHealth> = hall
        .as_ref()
        .map(|_| Arc::new(Mutex::new(BrokerHealth::default())));
    let opts = Options {
        listen: args.listen,
        max_clients: args.max_clients as usize,
        broker_health: health.clone(),
        ..Options::default()
    };
    runtime.block_on(async {
        let (tx, rx) = mpsc::channel::<HallUpdate>(UPDATES);
        match hall {
            Some(source) => {
                if let Some(h) = &health {
                    tokio::spawn(tell_refusals(h.clone()));
                }
                tokio::spawn(source.follow(health, tx))
            }
            None => tokio::spawn(watch_bus(globals.bus.clone(), tx)),
        };
        crate::bridge::run_until_signal(opts.listen, |listener, stop| {
            web::serve(listener, opts, rx, stop)
        })
        .await
        .map_err(|e| CtlError::Other(e.to_string()))
    })
}

/// Says what the broker's feed refused since the last line, at most every
/// [`REFUSALS_EVERY`], and nothing while nothing is refused.
async fn tell_refusals(health: SharedHealth) {
    let mut told = BrokerHealth::default();
    loop {
        tokio::time::sleep(REFUSALS_EVERY).await;
        let now = health.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(line) = refusals_line(&told, &now) {
            crate::cli::print_error(&format!("eboardctl serve: {line}"));
        }
        told = now;
    }
}

/// The log line for what was refused between `before` and `now` (`None`: nothing new).
fn refusals_line(before: &BrokerHealth, now: &BrokerHealth) -> Option<String> {
    let refused = now.refused.saturating_sub(before.refused);
    let lost = now.lost_events.saturating_sub(before.lost_events);
    if refused == 0 && lost == 0 {
        return None;
    }
    let reasons: Vec<String> = now
        .refused_by_reason
        .iter()
        .filter_map(|(why, n)| {
            let new = n - before.refused_by_reason.get(why).copied().unwrap_or(0);
            (new > 0).then(|| format!("{why} {new}"))
        })
        .collect();
    let mut line = format!("refused {refused} message(s) from the broker");
    if !reasons.is_empty() {
        line += &format!(" ({})", reasons.join(", "));
    }
    if lost > 0 {
        line += &format!("; {lost} event(s) missing from the relays' counts");
    }
    line += "; counts in /api/health";
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_says_what_is_new() {
        let mut before = BrokerHealth::default();
        assert_eq!(refusals_line(&before, &before), None);
        before.refused = 2;
        before.refused_by_reason.insert("bad-event", 2);
        let mut now = before.clone();
        now.refused = 5;
        now.refused_by_reason.insert("bad-event", 3);
        now.refused_by_reason.insert("over-bound", 2);
        now.lost_events = 4;
        assert_eq!(
            refusals_line(&before, &now).as_deref(),
            Some(
                "refused 3 message(s) from the broker (bad-event 1, over-bound 2); 4 event(s) \
                 missing from the relays' counts; counts in /api/health"
            )
        );
    }
}
