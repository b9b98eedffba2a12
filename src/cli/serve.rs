//! `eboardctl serve`: the web bridge (contract section 5) fed from the local bus, or with
//! `--mqtt` from a hall's broker ([`crate::client::mqtt`]).
//!
//! The wiring is a source task sending [`HallUpdate`]s into a channel and the bridge reading
//! it, so another source (a broker) is another task on the same channel.

use std::net::SocketAddr;

use tokio::sync::mpsc;

use crate::bridge::web::{self, DEFAULT_LISTEN, Options};
use crate::cli::Globals;
use crate::client::error::CtlError;
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

/// How many updates may wait between the source and the bridge.
const UPDATES: usize = 1024;

/// Runs the bridge until SIGINT/SIGTERM. The bus need not be there: the bridge serves from
/// the start and follows the daemon and the bus as they come and go.
pub fn run(globals: &Globals, args: &ServeArgs) -> Result<(), CtlError> {
    let runtime = crate::cli::bridge_runtime()?;
    let opts = Options {
        listen: args.listen,
        max_clients: args.max_clients as usize,
        ..Options::default()
    };
    let hall = args.hall.source()?;
    runtime.block_on(async {
        let (tx, rx) = mpsc::channel::<HallUpdate>(UPDATES);
        match hall {
            Some(source) => tokio::spawn(source.follow(tx)),
            None => tokio::spawn(watch_bus(globals.bus.clone(), tx)),
        };
        web::run(opts, rx)
            .await
            .map_err(|e| CtlError::Other(e.to_string()))
    })
}
