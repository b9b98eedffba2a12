//! The web bridge behind `eboardctl serve` (contract section 5): pages for overlays and
//! arbiters, JSON, Server-Sent Events and PGN over HTTP, read-only.
//!
//! Its input is a stream of [`HallUpdate`]s, so any source feeds it: the local bus
//! ([`crate::client::watch_bus`]) or a broker. [`run`] binds and serves until SIGINT/SIGTERM.
//!
//! - [`feed`] (pure): the hall, the last moves, the numbered event log for replays;
//! - [`hub`]: fan-out to the live event clients, each with a bounded queue;
//! - [`routes`]: the HTTP surface (axum): pages, `/api/…` (with `/api/health`), `/pgn/…`, the
//!   405 and 503 rules, the SSE writer that refuses what would break a stream;
//! - [`assets`]: the pages, compiled into the binary;
//! - [`lastmove`] (pure): the squares of each board's last move, for the diagrams.
//!
//! Connections are accepted by [`crate::bridge::conns`] (shared with `livechess`): a
//! header-read timeout and a bound on open connections.
//!
//! Board ids may contain `/` (`<rig>/<board id>` when fed from a broker): every route that
//! takes an id takes the rest of the path (`/board/rig-a/board_1`).

pub mod assets;
pub mod feed;
pub mod hub;
pub mod lastmove;
pub mod routes;

use crate::bridge::ServeError;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};

use crate::bridge::conns::{self, Limits};
use crate::bridge::web::feed::{Feed, MIN_HISTORY};
use crate::bridge::web::hub::Hub;
use crate::client::HallUpdate;
use crate::client::mqtt::SharedHealth;

/// The contract's default address.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7380";

/// How the bridge serves.
#[derive(Debug, Clone)]
pub struct Options {
    pub listen: SocketAddr,
    /// Live event streams at once; more get 503. Ordinary requests in flight have the same
    /// limit, separately.
    pub max_clients: usize,
    /// Events queued per live client before it is dropped for falling behind.
    pub queue: usize,
    /// Events kept for `Last-Event-ID` replays (at least 10,000).
    pub history: usize,
    /// How long a client may take to send a request's headers (see [`crate::bridge::conns`];
    /// the bound on connections, [`Options::limits`], follows from `max_clients`).
    pub header_timeout: std::time::Duration,
    /// When fed from a broker: what its feed refused, for `/api/health`.
    pub broker_health: Option<SharedHealth>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            listen: DEFAULT_LISTEN.parse().expect("a valid address"),
            max_clients: 100,
            queue: 4096,
            history: MIN_HISTORY,
            header_timeout: crate::bridge::conns::HEADER_TIMEOUT,
            broker_health: None,
        }
    }
}

impl Options {
    /// Open connections: room for every stream and every request in flight (each busy on
    /// its own connection) and as many idle ones again, so a newcomer always finds an idle
    /// connection to take the place of.
    pub fn limits(&self) -> Limits {
        Limits {
            max_connections: 2 * self.max_clients.max(1) + IDLE_CONNECTIONS,
            header_timeout: self.header_timeout,
        }
    }
}

/// Connections kept open besides the busy ones (keep-alive between a page's requests).
const IDLE_CONNECTIONS: usize = 256;

/// Serves on an already bound listener until `stop` completes. Prints the address it serves
/// on (a port of 0 is told as the one the system chose).
pub async fn serve(
    listener: TcpListener,
    opts: Options,
    rx: mpsc::Receiver<HallUpdate>,
    stop: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let addr = crate::bridge::served_addr(&listener, opts.listen)?;
    // Ids start at the start time in microseconds: ids from an earlier run of the bridge
    // are then lower than any of this run, and are recognised as not replayable.
    let first_id = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(1);
    let hub = Arc::new(Hub::new(Feed::new(first_id, opts.history), opts.queue));
    let (stopping_tx, stopping) = watch::channel(false);
    let app = routes::router(hub.clone(), &opts, stopping);
    let limits = opts.limits();

    let feeder = {
        let hub = hub.clone();
        crate::bridge::spawn_feeder("serve", rx, move |update| hub.publish(update))
    };

    eprintln!("eboardctl serve: listening on http://{addr}");
    conns::serve(listener, app, limits, async move {
        stop.await;
        // Live event streams end too, or the graceful shutdown would wait for them.
        let _ = stopping_tx.send(true);
    })
    .await;
    feeder.abort();
    Ok(())
}
