//! The bridges: thin adapters from the client model ([`crate::client`]) to what cannot speak
//! D-Bus, each a client of the daemon that can crash and restart without touching it.
//! [`web`] serves pages, JSON, Server-Sent Events and PGN over HTTP; [`relay`] republishes a
//! rig's boards on an MQTT broker; [`broadcast`] pushes a round's games to a lichess
//! broadcast; [`livechess`] speaks DGT LiveChess's local API for the board connectors of
//! lichess and chess.com and LiveChess tools. [`conns`] is the accept loop of the two that
//! listen (`web`, `livechess`): timeouts and a bound on connections; [`fair`] shares their
//! long-lived places (event streams, WebSockets) among clients.

pub mod broadcast;
pub mod conns;
pub mod fair;
pub mod livechess;
pub mod relay;
pub mod web;

use std::net::SocketAddr;

use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::client::HallUpdate;

/// What keeps an HTTP bridge from starting to listen.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("installing a signal handler: {0}")]
    Signal(std::io::Error),
}

/// What stops an HTTP bridge (`serve`, `livechess`) from serving.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Listen(#[from] ListenError),
    #[error("serving on {addr}: {source}")]
    Serve {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// The address a bound listener serves on (a port of 0 is the one the system chose);
/// `asked` names it in the error.
pub fn served_addr(listener: &TcpListener, asked: SocketAddr) -> Result<SocketAddr, ServeError> {
    listener.local_addr().map_err(|source| ServeError::Serve {
        addr: asked,
        source,
    })
}

/// Binds `listen` and serves on it with `serve` until SIGINT or SIGTERM: `eboardctl serve`
/// and `eboardctl livechess`.
pub async fn run_until_signal<Fut>(
    listen: SocketAddr,
    serve: impl FnOnce(TcpListener, std::pin::Pin<Box<dyn Future<Output = ()> + Send>>) -> Fut,
) -> Result<(), ServeError>
where
    Fut: Future<Output = Result<(), ServeError>>,
{
    let (listener, stop) = bind_until_signal(listen).await?;
    serve(listener, Box::pin(stop)).await
}

/// Binds `addr` for an HTTP bridge and gives the future that completes on SIGINT or SIGTERM,
/// its signal handlers installed before the bind (so a signal right after start is not lost).
pub async fn bind_until_signal(
    addr: SocketAddr,
) -> Result<(TcpListener, impl Future<Output = ()> + Send + 'static), ListenError> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt()).map_err(ListenError::Signal)?;
    let mut terminate = signal(SignalKind::terminate()).map_err(ListenError::Signal)?;
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| ListenError::Bind { addr, source })?;
    let stop = async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    };
    Ok((listener, stop))
}

/// The feed task of a bridge that serves the hall: every update from the source, in order,
/// into `apply`, saying on stderr (as `command`) when the source goes down or comes up. When
/// the source ends for good, the bridge keeps serving the hall as last seen.
pub fn spawn_feeder(
    command: &'static str,
    mut rx: mpsc::Receiver<HallUpdate>,
    mut apply: impl FnMut(HallUpdate) + Send + 'static,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        while let Some(update) = rx.recv().await {
            match &update {
                HallUpdate::SourceDown { reason } => {
                    eprintln!("eboardctl {command}: source down: {reason}")
                }
                HallUpdate::Snapshot(boards) => {
                    eprintln!("eboardctl {command}: source up: {} boards", boards.len())
                }
                _ => {}
            }
            apply(update);
        }
    })
}
