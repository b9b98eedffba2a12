//! The D-Bus client side: one connection subscribed to every signal under the bridge's
//! object tree, on its own thread and runtime, so that the time a signal is received is not
//! delayed by the simulated boards sharing the benchmark process.

use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use anyhow::Context as _;
use tokio::sync::{Notify, oneshot};
use zbus::message::Type;
use zbus::{MatchRule, MessageStream};

use super::harness::OwnThread;

/// Object path prefix of the boards; the benchmark names board `i` `b<i>` (zero-padded).
pub const BOARD_PREFIX: &str = "/org/eboardd/Bridge1/Board/b";

/// Every `MovePlayed`, as (uci, time received), by (game, ply), in arrival order.
pub type Moves = HashMap<(u32, u32), Vec<(String, Instant)>>;

/// What one board's object said.
#[derive(Debug, Default)]
pub struct BoardLog {
    /// `GameStarted` signals so far: the number of the game moves are filed under.
    pub games: u32,
    pub moves: Moves,
    pub retractions: u32,
    /// `IllegalPlacement` and `IllegalMoveCompleted` signals.
    pub accusations: u64,
    pub properties_changed: u64,
    pub other_signals: u64,
}

/// Everything received, per board index.
#[derive(Debug, Default)]
pub struct Received {
    pub boards: Vec<BoardLog>,
    /// Signals from paths outside the benchmark's boards (manager, ObjectManager).
    pub unrelated: u64,
    pub undecodable: u64,
}

/// A shared, growing [`Received`], and the news that it grew.
#[derive(Clone, Default)]
pub struct Log {
    received: Arc<Mutex<Received>>,
    news: Arc<Notify>,
}

impl Log {
    /// A log of `boards` boards whose games and moves are told to `news`'s waiters.
    pub fn new(boards: usize, news: Arc<Notify>) -> Self {
        let mut r = Received::default();
        r.boards.resize_with(boards, BoardLog::default);
        Log {
            received: Arc::new(Mutex::new(r)),
            news,
        }
    }

    /// Woken at every `GameStarted` and `MovePlayed`.
    pub fn news(&self) -> &Notify {
        &self.news
    }

    pub fn lock(&self) -> MutexGuard<'_, Received> {
        self.received.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `GameStarted` signals seen for board `i`.
    pub fn games(&self, i: usize) -> u32 {
        self.lock().boards.get(i).map_or(0, |b| b.games)
    }

    fn file(&self, msg: &zbus::Message, at: Instant) {
        let header = msg.header();
        let (Some(path), Some(member)) = (header.path(), header.member()) else {
            return;
        };
        let mut log = self.lock();
        let index = path
            .as_str()
            .strip_prefix(BOARD_PREFIX)
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|&i| i < log.boards.len());
        let Some(i) = index else {
            log.unrelated += 1;
            return;
        };
        let body = msg.body();
        // Whether a waiter has news; told once the lock is released, so the woken check does
        // not wait on it.
        let news = match member.as_str() {
            "GameStarted" => {
                log.boards[i].games += 1;
                true
            }
            "MovePlayed" => match body.deserialize::<(u32, String, String, String, u64, u64)>() {
                Ok((ply, _san, uci, _fen, _white, _black)) => {
                    let board = &mut log.boards[i];
                    let game = board.games;
                    board.moves.entry((game, ply)).or_default().push((uci, at));
                    true
                }
                Err(_) => {
                    log.undecodable += 1;
                    false
                }
            },
            "MoveRetracted" => {
                log.boards[i].retractions += 1;
                false
            }
            "IllegalPlacement" | "IllegalMoveCompleted" => {
                log.boards[i].accusations += 1;
                false
            }
            "PropertiesChanged" => {
                log.boards[i].properties_changed += 1;
                false
            }
            _ => {
                log.boards[i].other_signals += 1;
                false
            }
        };
        drop(log);
        if news {
            self.news.notify_waiters();
        }
    }
}

/// The running client; [`Client::stop`] or dropping it stops it.
pub struct Client {
    thread: OwnThread,
}

impl Client {
    /// Connect to `address`, subscribe, and return once the subscription is in place.
    pub async fn start(address: String, log: Log) -> anyhow::Result<Client> {
        let (ready_tx, ready_rx) = oneshot::channel::<anyhow::Result<()>>();
        let thread = OwnThread::spawn("dbus-client", move |mut stop_rx| async move {
            let stream = async {
                let conn = zbus::connection::Builder::address(address.as_str())
                    .build()
                    .await?;
                let rule = MatchRule::builder()
                    .msg_type(Type::Signal)
                    .path_namespace("/org/eboardd/Bridge1")
                    .build()?;
                // A queue deep enough that the stream never makes the connection
                // wait (zbus applies back-pressure rather than dropping).
                let depth = NonZeroUsize::new(1 << 20);
                let stream = MessageStream::for_match_rule(rule, &conn, depth).await?;
                anyhow::Ok((conn, stream))
            };
            // The match rule is in place (AddMatch answered) once this returns.
            let (_conn, mut stream) = match stream.await {
                Ok(s) => {
                    let _ = ready_tx.send(Ok(()));
                    s
                }
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                    return;
                }
            };
            loop {
                let next = std::future::poll_fn(|cx| {
                    futures_core::Stream::poll_next(std::pin::Pin::new(&mut stream), cx)
                });
                tokio::select! {
                    _ = &mut stop_rx => break,
                    msg = next => match msg {
                        Some(Ok(msg)) => log.file(&msg, Instant::now()),
                        Some(Err(_)) => log.lock().undecodable += 1,
                        None => break,
                    },
                }
            }
        })?;
        ready_rx
            .await
            .context("the client thread stopped before subscribing")?
            .context("cannot subscribe to the bridge's signals")?;
        Ok(Client { thread })
    }

    pub fn stop(&mut self) {
        self.thread.stop();
    }
}
