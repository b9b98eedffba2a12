//! The LiveChess-compatible local API behind `eboardctl livechess` (contract section 8): the
//! WebSocket call and feed protocol and the REST side of DGT LiveChess, on its port, so the
//! lichess and chess.com board connectors and LiveChess tools work with eboardd's boards.
//!
//! Its input is a stream of [`HallUpdate`]s, like the web bridge's. [`run`] binds and serves
//! until SIGINT/SIGTERM.
//!
//! - [`objects`] (pure): EBOARD, CLOCK and `sources` entries of a board;
//! - [`feed`] (pure): one `eboardevent` feed, diffed against what it last sent;
//! - [`calls`] (pure): requests read into typed calls, the answer/error/feed envelopes;
//! - [`rest`] (pure): tournaments, rounds, pairings and games from the boards' tags and PGN;
//! - [`server`]: axum, the `Origin` check, `setup` over D-Bus (only with `--allow-setup`),
//!   the WebSocket bounds (per client and in all, shared fairly: [`crate::bridge::fair`]).
//!
//! `flip`: LiveChess uses it to read a board that stands the other way round. eboardd learns
//! each board's orientation from the start position (or its `orientation` setting) and its
//! `Placement` is already seen from White's side, so there is nothing to re-map, and a page
//! must not be able to re-map a game in progress. `flip` therefore sets what this bridge
//! reports as the board's `flipped` (for the clients that draw the board the way it stands);
//! `board` stays from White's side, as the contract says.

pub mod calls;
pub mod feed;
pub mod objects;
pub mod rest;
pub mod server;

use crate::bridge::ServeError;
use std::future::Future;
use std::net::SocketAddr;

use tokio::net::TcpListener;
use tokio::sync::mpsc;

use crate::bridge::conns;
use crate::client::HallUpdate;
use crate::client::bus::BusChoice;

/// LiveChess's address and port.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:1982";

/// How the bridge serves.
#[derive(Debug, Clone)]
pub struct Options {
    pub listen: SocketAddr,
    /// Origins let in besides lichess's and chess.com's.
    pub allow_origins: Vec<String>,
    /// The bus `setup` calls the daemon on.
    pub bus: BusChoice,
    /// `--allow-setup`: `setup` and `flip` may change a board (a player's own rig); off, they
    /// are refused and the game is untouched.
    pub allow_setup: bool,
}

/// Open connections at once (REST requests and WebSockets together).
const MAX_CONNECTIONS: usize = 512;

/// Serves on an already bound listener until `stop` completes. Prints the address it serves
/// on.
pub async fn serve(
    listener: TcpListener,
    opts: Options,
    rx: mpsc::Receiver<HallUpdate>,
    stop: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let addr = crate::bridge::served_addr(&listener, opts.listen)?;
    let shared = server::Shared::new(
        opts.bus.clone(),
        &opts.allow_origins,
        opts.allow_setup,
        MAX_CONNECTIONS / 2,
    );
    let feeder = {
        let shared = shared.clone();
        crate::bridge::spawn_feeder("livechess", rx, move |update| shared.apply(&update))
    };
    eprintln!("eboardctl livechess: listening on ws://{addr}/api/v1.0");
    let limits = conns::Limits {
        max_connections: MAX_CONNECTIONS,
        header_timeout: conns::HEADER_TIMEOUT,
    };
    conns::serve(listener, server::router(shared), limits, stop).await;
    feeder.abort();
    Ok(())
}
