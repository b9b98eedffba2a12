//! The shell of the LiveChess API: the hall kept current from the source, the HTTP surface
//! (axum) with the WebSocket at `/api/v1.0` and the REST paths beside it, the `Origin` check
//! at the handshake, and `setup` as the contract's `SetPosition` over D-Bus. What is sent is
//! computed by the pure modules ([`objects`], [`feed`], [`calls`], [`rest`]).
//!
//! Fan-out: every change of a board is announced on a broadcast channel by board id; each
//! connection recomputes its feeds of that board from the hall. A connection that falls
//! behind (the channel lagged) recomputes all its feeds, which, being diffs of the current
//! state, lose nothing that matters.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade, close_code};
use axum::extract::{Extension, Path, State as AxumState};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};
use tokio::sync::broadcast;

use crate::bridge::conns::{Busy, Slot};
use crate::bridge::fair::{ClientKey, Refused, Share, Shares};
use crate::bridge::livechess::calls::{self, Call, CallError, Request};
use crate::bridge::livechess::feed::Feed;
use crate::bridge::livechess::objects;
use crate::bridge::livechess::rest::Tournament;
use crate::client::bus::{BusChoice, connect};
use crate::client::{BoardProps, Hall, HallUpdate};
use eboard_core::contract::{ACCESS_DENIED, BOARD_INTERFACE, BUS_NAME, board_path};

/// Feeds one connection may hold: a connector follows one board, a tool every board; more
/// than this is a client gone wrong, refused with an error rather than kept without bound.
const MAX_FEEDS: usize = 1024;

/// The largest request a client may send (a `setup` with a FEN is under 200 bytes).
const MAX_MESSAGE: usize = 64 * 1024;

/// How much a WebSocket reads at a time. The WebSocket library zeroes a read buffer of this
/// size on every read of a socket (128 KiB by default): with 20 clients following 50 boards
/// that zeroing was a fifth of the bridge's CPU, for requests of a few hundred bytes. A
/// larger message is still read whole, in several reads, up to [`MAX_MESSAGE`].
const READ_BUFFER: usize = 4 * 1024;

/// The origins of the two board connectors that run in a browser page.
pub const BUILT_IN_ORIGINS: [&str; 2] = ["https://lichess.org", "https://www.chess.com"];

/// How many board changes may wait for a slow connection before it recomputes everything.
const CHANGES: usize = 4096;

/// WebSockets one client ([`ClientKey`]) may hold: a connector needs one, a tool a few.
pub const SOCKETS_PER_CLIENT: usize = 64;

/// A ping this often on a quiet WebSocket; a client that sends nothing (not even the pong
/// every WebSocket client answers with) for [`SOCKET_IDLE`] is gone, and its socket closed.
const PING_EVERY: Duration = Duration::from_secs(30);
const SOCKET_IDLE: Duration = Duration::from_secs(90);

/// The error `setup` and `flip` get without `--allow-setup`.
pub fn setup_off(method: &str) -> String {
    format!(
        "{method} is off on this bridge: the game is untouched (a tournament rig's games change \
         only through eboardd; on a player's own board start eboardctl livechess with \
         --allow-setup)"
    )
}

impl Shared {
    /// A WebSocket for `client`, or why not (see [`crate::bridge::fair`]: a client is an
    /// address with a page's origin and a program's name, so lichess's connector from
    /// 127.0.0.1 is not counted with a local program's sockets).
    fn open_socket(&self, client: ClientKey) -> Result<Share, String> {
        self.sockets.take(client).map_err(|refused| match refused {
            Refused::Client(max) => format!(
                "at most {max} WebSockets from one client (one address, page origin and \
                 program): close one first"
            ),
            Refused::Full(max) => format!("at most {max} WebSockets at once: try again later"),
        })
    }
}

/// What changed: one board, or possibly all of them.
#[derive(Debug, Clone)]
enum Change {
    Board(Arc<str>),
    All,
}

/// The boards as last seen, each also read once into its typed properties.
#[derive(Default)]
struct Boards {
    hall: Hall,
    /// The typed properties, with `serial_number` the board's own `serialnr` (see
    /// [`Boards::assign_serialnrs`]): everything this bridge shows reads it from here.
    props: BTreeMap<String, Arc<BoardProps>>,
    /// Board id → what its `serialnr` is assigned from: the `serialnr` the board itself
    /// gives (its serial number, else its name) and its table number.
    identity: BTreeMap<String, (String, u32)>,
    /// Board id → its own `serialnr`.
    assigned: BTreeMap<String, String>,
    /// Board id → what `flip` set (the presentation of this bridge; see the module
    /// [`crate::bridge::livechess`]).
    flipped: HashMap<String, bool>,
}

impl Boards {
    /// Reads board `id`'s properties from the hall (or forgets it when it is gone); true
    /// when what its `serialnr` is assigned from changed.
    fn read(&mut self, id: &str) -> bool {
        let identity = self.hall.boards.get(id).map(|raw| {
            let typed = BoardProps::from_map(raw);
            let identity = (objects::serialnr(&typed).to_owned(), typed.number);
            self.props.insert(id.to_owned(), Arc::new(typed));
            identity
        });
        let changed = self.identity.get(id) != identity.as_ref();
        match identity {
            Some(identity) => self.identity.insert(id.to_owned(), identity),
            None => {
                self.props.remove(id);
                self.identity.remove(id)
            }
        };
        changed
    }

    /// Gives every board the `serialnr` of its own that clients name it by, even when two
    /// report the same serial number ([`objects::distinct_serialnrs`]).
    fn assign_serialnrs(&mut self) {
        self.assigned = objects::distinct_serialnrs(
            self.identity
                .iter()
                .map(|(id, (reported, number))| (id.as_str(), *number, reported.as_str())),
        );
        let ids: Vec<String> = self.props.keys().cloned().collect();
        for id in ids {
            self.present(&id);
        }
    }

    /// Shows board `id` under its own `serialnr` (everything this bridge sends reads it from
    /// `serial_number`).
    fn present(&mut self, id: &str) {
        if let Some(props) = self.props.get_mut(id)
            && let Some(serialnr) = self.assigned.get(id)
            && props.serial_number != *serialnr
        {
            Arc::make_mut(props).serial_number = serialnr.clone();
        }
    }

    fn flipped(&self, id: &str) -> bool {
        self.flipped.get(id).copied().unwrap_or(false)
    }

    /// Board id of the board with this `serialnr`.
    fn by_serialnr(&self, serialnr: &str) -> Option<String> {
        self.props
            .iter()
            .find(|(_, p)| objects::serialnr(p) == serialnr)
            .map(|(id, _)| id.clone())
    }

    fn ordered(&self) -> Vec<(&str, &BoardProps)> {
        objects::eboards_order(self.props.iter().map(|(id, p)| (id.as_str(), &**p)))
    }

    fn eboards(&self, now: u64) -> Value {
        Value::Array(
            self.ordered()
                .into_iter()
                .map(|(id, p)| objects::eboard(p, self.flipped(id), now))
                .collect(),
        )
    }

    fn tournament(&self) -> Tournament<'_> {
        let boards = self
            .hall
            .ordered()
            .into_iter()
            .filter_map(|(id, _)| self.props.get(id).map(|p| &**p))
            .collect();
        Tournament::new(boards)
    }
}

/// What the handlers share.
pub struct Shared {
    boards: Mutex<Boards>,
    changes: broadcast::Sender<Change>,
    bus: BusChoice,
    conn: tokio::sync::Mutex<Option<zbus::Connection>>,
    allowed: Vec<String>,
    allow_setup: bool,
    sockets: Arc<Shares>,
}

impl Shared {
    /// A bridge to the daemon on `bus` letting in pages from the built-in origins and
    /// `allowed`, `setup` and `flip` only with `allow_setup`, and at most `max_sockets`
    /// WebSockets.
    pub fn new(
        bus: BusChoice,
        allowed: &[String],
        allow_setup: bool,
        max_sockets: usize,
    ) -> Arc<Shared> {
        let mut origins: Vec<String> = BUILT_IN_ORIGINS.iter().map(|s| s.to_string()).collect();
        origins.extend(allowed.iter().map(|o| o.trim_end_matches('/').to_owned()));
        Arc::new(Shared {
            boards: Mutex::new(Boards::default()),
            changes: broadcast::channel(CHANGES).0,
            bus,
            conn: tokio::sync::Mutex::new(None),
            allowed: origins,
            allow_setup,
            sockets: Shares::new(max_sockets, SOCKETS_PER_CLIENT),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Boards> {
        self.boards.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Applies one update from the source and tells the connections.
    pub fn apply(&self, update: &HallUpdate) {
        let change = {
            let mut b = self.lock();
            b.hall.apply(update);
            match update {
                HallUpdate::Signal { .. } => return,
                HallUpdate::Changed { board, .. }
                | HallUpdate::Added { board, .. }
                | HallUpdate::Removed { board } => {
                    if b.read(board) {
                        b.assign_serialnrs();
                    } else {
                        b.present(board);
                    }
                    Change::Board(Arc::from(board.as_str()))
                }
                HallUpdate::Snapshot(_) | HallUpdate::SourceDown { .. } => {
                    b.props.clear();
                    b.identity.clear();
                    let ids: Vec<String> = b.hall.boards.keys().cloned().collect();
                    for id in ids {
                        b.read(&id);
                    }
                    b.assign_serialnrs();
                    Change::All
                }
            }
        };
        // No connection listening is not an error.
        let _ = self.changes.send(change);
    }

    /// Whether a handshake with this `Origin` (none: a program) may open the WebSocket.
    pub fn origin_allowed(&self, origin: Option<&str>) -> bool {
        match origin {
            None => true,
            Some(o) => self.allowed.iter().any(|a| a == o.trim_end_matches('/')),
        }
    }

    /// The contract's `SetPosition(fen)` on board `id`.
    async fn set_position(&self, id: &str, fen: &str) -> Result<(), String> {
        let mut conn = self.conn.lock().await;
        if conn.is_none() {
            *conn = Some(connect(&self.bus).await.map_err(|e| e.to_string())?);
        }
        let c = conn.as_ref().expect("connected above");
        let path = board_path(id);
        match c
            .call_method(
                Some(BUS_NAME),
                path.as_str(),
                Some(BOARD_INTERFACE),
                "SetPosition",
                &(fen,),
            )
            .await
        {
            Ok(_) => Ok(()),
            Err(zbus::Error::MethodError(name, message, _)) if name.as_str() == ACCESS_DENIED => {
                Err(format!(
                    "eboardd refused setup: this bridge may not change games (run it as a \
                     member of group eboardd, as eboardd-livechess.service does): {}",
                    message.unwrap_or_default()
                ))
            }
            Err(zbus::Error::MethodError(name, message, _)) => Err(format!(
                "eboardd refused setup ({name}): {}",
                message.unwrap_or_default()
            )),
            Err(e) => {
                // The connection may be broken: the next setup connects again.
                *conn = None;
                Err(format!("cannot ask eboardd to set the position: {e}"))
            }
        }
    }
}

/// Epoch milliseconds, LiveChess's `time`.
fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The whole router: the WebSocket and the REST paths; 404 with `{"message"}` for anything
/// else.
pub fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/api/v1.0", get(upgrade))
        .route("/api/v1.0/eboards", get(eboards))
        .route("/api/v1.0/tournaments", get(tournaments))
        .route("/api/v1.0/tournament/{uuid}", get(tournament))
        .route("/api/v1.0/round/{uuid}/{index}", get(round))
        .route("/api/v1.0/game/{uuid}", get(game))
        .fallback(|| async { not_found("no such path in the LiveChess API") })
        .with_state(shared)
}

fn not_found(message: &str) -> Response {
    (
        StatusCode::NOT_FOUND,
        axum::Json(json!({"message": message})),
    )
        .into_response()
}

async fn eboards(AxumState(shared): AxumState<Arc<Shared>>) -> Response {
    axum::Json(shared.lock().eboards(now_ms())).into_response()
}

async fn tournaments(AxumState(shared): AxumState<Arc<Shared>>) -> Response {
    axum::Json(shared.lock().tournament().list()).into_response()
}

async fn tournament(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path(uuid): Path<String>,
) -> Response {
    let boards = shared.lock();
    let t = boards.tournament();
    if t.uuid() != uuid {
        return not_found("no tournament with this uuid");
    }
    axum::Json(t.tournament()).into_response()
}

async fn round(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path((uuid, index)): Path<(String, String)>,
) -> Response {
    let boards = shared.lock();
    let t = boards.tournament();
    if t.uuid() != uuid {
        return not_found("no tournament with this uuid");
    }
    match index.parse().ok().and_then(|i| t.round(i)) {
        Some(v) => axum::Json(v).into_response(),
        None => not_found("no such round (the index counts from 0)"),
    }
}

async fn game(AxumState(shared): AxumState<Arc<Shared>>, Path(uuid): Path<String>) -> Response {
    let boards = shared.lock();
    match boards.tournament().game(&uuid, now_ms()) {
        Some(v) => axum::Json(v).into_response(),
        None => not_found("no game with this pairing uuid"),
    }
}

/// The handshake: refused (403) for a page from an origin not let in, before anything else.
async fn upgrade(
    AxumState(shared): AxumState<Arc<Shared>>,
    Extension(slot): Extension<Slot>,
    headers: HeaderMap,
    ws: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    let origin = headers
        .get(header::ORIGIN)
        .map(|o| o.to_str().unwrap_or("?"));
    if !shared.origin_allowed(origin) {
        let origin = origin.unwrap_or_default();
        eprintln!("eboardctl livechess: refused a WebSocket from origin {origin}");
        return (
            StatusCode::FORBIDDEN,
            axum::Json(json!({"message": format!(
                "origin {origin} may not use this LiveChess API (start the bridge with \
                 --allow-origin {origin} to let it in)"
            )})),
        )
            .into_response();
    }
    let permit = match shared.open_socket(ClientKey::of(slot.peer().ip(), &headers)) {
        Ok(permit) => permit,
        Err(message) => {
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                [(header::RETRY_AFTER, "5")],
                axum::Json(json!({ "message": message })),
            )
                .into_response();
        }
    };
    match ws {
        Ok(ws) => {
            // The socket stays counted among the connections, busy from here (never taken
            // for a newcomer between the handshake and the session) until the session ends.
            let busy = slot.busy();
            ws.max_message_size(MAX_MESSAGE)
                .read_buffer_size(READ_BUFFER)
                .on_upgrade(move |socket| connection(socket, shared, (slot, busy, permit)))
        }
        Err(_) => not_found("/api/v1.0 is the WebSocket: connect with a WebSocket client"),
    }
}

/// One subscribed feed of a connection.
struct Subscription {
    feed_id: Value,
    board: String,
    feed: Feed,
}

/// One WebSocket client, until it closes, goes quiet for [`SOCKET_IDLE`] or its place is
/// taken for another client; `held` is its place among the connections and the WebSockets.
async fn connection(mut socket: WebSocket, shared: Arc<Shared>, held: (Slot, Busy, Share)) {
    let mut changes = shared.changes.subscribe();
    let mut subs: Vec<Subscription> = Vec::new();
    let mut ping = tokio::time::interval_at(tokio::time::Instant::now() + PING_EVERY, PING_EVERY);
    ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut heard = tokio::time::Instant::now();
    loop {
        let out = tokio::select! {
            _ = held.2.evicted() => {
                // Its place was taken for another client (see `crate::bridge::fair`).
                let _ = socket
                    .send(Message::Close(Some(CloseFrame {
                        code: close_code::AGAIN,
                        reason: "closed to make room for another client".into(),
                    })))
                    .await;
                return;
            }
            _ = ping.tick() => {
                if heard.elapsed() >= SOCKET_IDLE {
                    return;
                }
                if socket.send(Message::Ping(Default::default())).await.is_err() {
                    return;
                }
                Vec::new()
            }
            msg = socket.recv() => {
                heard = tokio::time::Instant::now();
                match msg {
                Some(Ok(Message::Text(text))) => handle(&shared, &mut subs, text.as_str()).await,
                Some(Ok(Message::Binary(_))) => vec![calls::error(
                    &CallError::new(&Value::Null, "binary frames are not understood: send JSON text"),
                    now_ms(),
                )],
                Some(Ok(_)) => Vec::new(),
                Some(Err(_)) | None => return,
                }
            }
            change = changes.recv() => match change {
                Ok(Change::Board(id)) => feeds(&shared, &mut subs, Some(&id)),
                Ok(Change::All) | Err(broadcast::error::RecvError::Lagged(_)) => {
                    feeds(&shared, &mut subs, None)
                }
                Err(broadcast::error::RecvError::Closed) => return,
            },
        };
        if !send_all(&mut socket, out).await {
            return;
        }
    }
}

/// Sends `messages` in order with one flush: what is due together goes out in one write,
/// not one per message. False when the socket is gone.
async fn send_all(socket: &mut WebSocket, messages: Vec<Value>) -> bool {
    use futures_util::SinkExt;
    if messages.is_empty() {
        return true;
    }
    for message in messages {
        if socket
            .feed(Message::Text(message.to_string().into()))
            .await
            .is_err()
        {
            return false;
        }
    }
    socket.flush().await.is_ok()
}

/// The feed messages due on `subs` for board `only` (all boards with `None`).
fn feeds(shared: &Shared, subs: &mut [Subscription], only: Option<&str>) -> Vec<Value> {
    let boards = shared.lock();
    let now = now_ms();
    subs.iter_mut()
        .filter(|s| only.is_none_or(|b| b == s.board))
        .flat_map(|s| {
            let events = match boards.props.get(&s.board) {
                Some(props) => s.feed.messages(props, boards.flipped(&s.board), now),
                None => Vec::new(),
            };
            events
                .into_iter()
                .map(|event| calls::feed(&s.feed_id, event, now))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Serves one request: its answer (or error), then the feed messages it starts.
async fn handle(shared: &Shared, subs: &mut Vec<Subscription>, text: &str) -> Vec<Value> {
    let Call { id, request } = match calls::parse(text) {
        Ok(call) => call,
        Err(e) => return vec![calls::error(&e, now_ms())],
    };
    match serve(shared, subs, &id, request).await {
        Ok((param, then)) => {
            let mut out = vec![calls::answer(&id, param, now_ms())];
            out.extend(then);
            out
        }
        Err(e) => vec![calls::error(&e, now_ms())],
    }
}

/// One request's answer `param` and the feed messages that follow it.
async fn serve(
    shared: &Shared,
    subs: &mut Vec<Subscription>,
    id: &Value,
    request: Request,
) -> Result<(Value, Vec<Value>), CallError> {
    let sub_board = |subs: &[Subscription], feed: &Value| {
        subs.iter()
            .find(|s| s.feed_id == *feed)
            .map(|s| s.board.clone())
            .ok_or_else(|| CallError::new(id, format!("no feed {feed} on this connection")))
    };
    match request {
        Request::Eboards => Ok((shared.lock().eboards(now_ms()), Vec::new())),
        Request::Sources => {
            let boards = shared.lock();
            let list = boards
                .ordered()
                .into_iter()
                .map(|(_, p)| objects::source_entry(p))
                .collect();
            Ok((Value::Array(list), Vec::new()))
        }
        Request::Subscribe { feed, serialnr } => {
            let board = shared.lock().by_serialnr(&serialnr).ok_or_else(|| {
                CallError::new(id, format!("no board with serial number {serialnr:?}"))
            })?;
            subs.retain(|s| s.feed_id != feed);
            if subs.len() >= MAX_FEEDS {
                return Err(CallError::new(
                    id,
                    format!("at most {MAX_FEEDS} feeds on one connection: unsubscribe one first"),
                ));
            }
            let mut sub = Subscription {
                feed_id: feed,
                board,
                feed: Feed::default(),
            };
            // Only the new feed's first message: the others on this board have sent theirs
            // (recomputing them all made each subscribe cost as much as the feeds before it).
            let first = feeds(shared, std::slice::from_mut(&mut sub), None);
            subs.push(sub);
            Ok((Value::Null, first))
        }
        Request::Unsubscribe { feed } => {
            sub_board(subs, &feed)?;
            subs.retain(|s| s.feed_id != feed);
            Ok((Value::Null, Vec::new()))
        }
        Request::Setup { .. } if !shared.allow_setup => Err(CallError::new(id, setup_off("setup"))),
        Request::Flip { .. } if !shared.allow_setup => Err(CallError::new(id, setup_off("flip"))),
        Request::Setup { feed, fen } => {
            let board = sub_board(subs, &feed)?;
            shared
                .set_position(&board, &fen)
                .await
                .map_err(|m| CallError::new(id, m))?;
            // The whole state follows once the board shows the restarted game (at once
            // when it already does).
            if let Some(props) = shared.lock().props.get(&board).cloned()
                && let Some(sub) = subs.iter_mut().find(|s| s.feed_id == feed)
            {
                sub.feed.setup(&props);
            }
            Ok((Value::Null, feeds(shared, subs, Some(&board))))
        }
        Request::Flip { feed, flip } => {
            let board = sub_board(subs, &feed)?;
            shared.lock().flipped.insert(board.clone(), flip);
            let _ = shared
                .changes
                .send(Change::Board(Arc::from(board.as_str())));
            Ok((Value::Null, Vec::new()))
        }
    }
}
