//! The bridges' accept loop: every TCP connection of `serve` and `livechess` has a slot in a
//! bounded table, so slow and idle clients cost nothing that others need.
//!
//! - A connection must send a request's headers within [`HEADER_TIMEOUT`] of opening, and of
//!   its previous answer (hyper's header-read timeout: the keep-alive idle time too).
//! - At most `max_connections` are open at once, and never more than the process's file
//!   handles allow ([`fd_budget`]). A connection arriving when the table is full takes the
//!   slot of the oldest one that is *idle* (no request in flight, no stream, no WebSocket):
//!   a thousand half-sent or silent sockets are closed one by one by newcomers instead of
//!   locking them out. When every slot is busy the newcomer is closed at once; busy
//!   connections are bounded by each bridge (`--max-clients` streams and requests, the
//!   LiveChess WebSocket bound), below `max_connections`.
//! - Stopping is graceful: no new connection is accepted, each open one finishes the answer
//!   it is writing and closes, and [`serve`] returns when all have.
//!
//! A handler finds the connection's [`Slot`] (and axum's `ConnectInfo` with the peer) among
//! the request's extensions; a WebSocket session keeps a clone and a [`Busy`] guard of it, so
//! the socket it took over stays counted and is never taken for a newcomer.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, watch};
use tokio::task::JoinSet;
use tower_service::Service;

/// How long a client may take to send a request's headers, from opening the connection or
/// from the end of the previous answer; then the connection is closed.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// File handles kept for what is not a client connection (the bus, the broker, files).
const FD_RESERVE: u64 = 64;

/// How one bridge bounds its connections.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Open connections at once (capped by [`fd_budget`]).
    pub max_connections: usize,
    pub header_timeout: Duration,
}

/// The file handles this process may spend on client connections: its soft `RLIMIT_NOFILE`,
/// first raised to the hard limit (what systemd's `LimitNOFILE` or the shell allows), less
/// [`FD_RESERVE`].
pub fn fd_budget() -> usize {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return 1024 - FD_RESERVE as usize;
    };
    let soft = if hard > soft && setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_ok() {
        hard
    } else {
        soft
    };
    soft.saturating_sub(FD_RESERVE).clamp(1, usize::MAX as u64) as usize
}

/// One open connection in the table.
struct Entry {
    busy: Arc<AtomicUsize>,
    close: Arc<Notify>,
}

/// The open connections, oldest first.
struct Table {
    max: usize,
    open: Mutex<BTreeMap<u64, Entry>>,
}

impl Table {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Entry>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A slot for a new connection from `peer`, taking the oldest idle one's when full;
    /// `None` when every slot is busy.
    fn admit(self: &Arc<Self>, id: u64, peer: SocketAddr) -> Option<(Slot, Arc<Notify>)> {
        let mut open = self.lock();
        if open.len() >= self.max {
            let idle = open
                .iter()
                .find(|(_, e)| e.busy.load(Ordering::Acquire) == 0)
                .map(|(id, _)| *id)?;
            let evicted = open.remove(&idle).expect("found above");
            evicted.close.notify_one();
        }
        let busy = Arc::new(AtomicUsize::new(0));
        let close = Arc::new(Notify::new());
        open.insert(
            id,
            Entry {
                busy: busy.clone(),
                close: close.clone(),
            },
        );
        let slot = Slot(Arc::new(SlotInner {
            id,
            peer,
            busy,
            table: self.clone(),
        }));
        Some((slot, close))
    }
}

/// A connection's place in the table, freed when the last clone is dropped (the
/// connection's task, or a WebSocket session that took the socket over).
#[derive(Clone)]
pub struct Slot(Arc<SlotInner>);

struct SlotInner {
    id: u64,
    peer: SocketAddr,
    busy: Arc<AtomicUsize>,
    table: Arc<Table>,
}

impl Drop for SlotInner {
    fn drop(&mut self) {
        self.table.lock().remove(&self.id);
    }
}

impl Slot {
    /// The client's address.
    pub fn peer(&self) -> SocketAddr {
        self.0.peer
    }

    /// Marks the connection busy (not to be closed for a newcomer) while the guard lives.
    pub fn busy(&self) -> Busy {
        self.0.busy.fetch_add(1, Ordering::AcqRel);
        Busy(self.0.busy.clone())
    }
}

/// See [`Slot::busy`].
pub struct Busy(Arc<AtomicUsize>);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// An answer's body that keeps its connection busy until it is written out (an event
/// stream: as long as it runs).
struct BusyBody {
    inner: Body,
    _busy: Busy,
}

impl http_body::Body for BusyBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// Serves `app` on `listener` within `limits` until `stop` completes, then lets the open
/// connections finish (see the module).
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    stop: impl Future<Output = ()> + Send + 'static,
) {
    let table = Arc::new(Table {
        max: limits.max_connections.clamp(1, fd_budget()),
        open: Mutex::new(BTreeMap::new()),
    });
    let (stopping_tx, stopping) = watch::channel(false);
    let mut tasks = JoinSet::new();
    let mut next = 0;
    tokio::pin!(stop);
    loop {
        while tasks.try_join_next().is_some() {}
        let (stream, peer) = tokio::select! {
            _ = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file handles, or a connection reset before it was taken:
                    // wait a moment rather than spin.
                    eprintln!("accepting a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        next += 1;
        let Some((slot, close)) = table.admit(next, peer) else {
            // Every slot is busy: closed at once, costing nothing.
            drop(stream);
            continue;
        };
        tasks.spawn(connection(
            stream,
            slot,
            close,
            app.clone(),
            limits.header_timeout,
            stopping.clone(),
        ));
    }
    drop(listener);
    let _ = stopping_tx.send(true);
    while tasks.join_next().await.is_some() {}
}

/// One connection, until it closes, is closed for a newcomer, or has finished after stop.
async fn connection(
    stream: TcpStream,
    slot: Slot,
    close: Arc<Notify>,
    app: Router,
    header_timeout: Duration,
    mut stopping: watch::Receiver<bool>,
) {
    let peer = slot.peer();
    let service = {
        let slot = slot.clone();
        hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
            let busy = slot.busy();
            req.extensions_mut().insert(ConnectInfo(peer));
            req.extensions_mut().insert(slot.clone());
            let mut app = app.clone();
            async move {
                let res = app.call(req).await?;
                Ok::<_, Infallible>(res.map(|inner| BusyBody { inner, _busy: busy }))
            }
        })
    };
    let conn = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades();
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => return,
        _ = close.notified() => return,
        _ = stopping.wait_for(|s| *s) => {}
    }
    conn.as_mut().graceful_shutdown();
    tokio::select! {
        _ = conn => {}
        _ = close.notified() => {}
    }
    drop(slot);
}
