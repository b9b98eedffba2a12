//! The HTTP surface: which path serves what, and the rules every request goes through —
//! read-only (any method but GET and HEAD answers 405), bounded (too many clients at once
//! answer 503), and a fixed set of paths (nothing is read from the file system, so no path
//! can escape what is served). Nothing a client or a source sends can make it panic: a
//! `Last-Event-ID` of any shape gets an exact replay or a reset snapshot, and the SSE writer
//! ([`sse_event`]) refuses an event whose name could break the stream instead of asserting.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::{ConnectInfo, Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::{Semaphore, watch};

use crate::bridge::fair::{ClientKey, Refused, Shares};
use crate::bridge::web::Options;
use crate::bridge::web::assets;
use crate::bridge::web::feed::Event;
use crate::bridge::web::hub::{Hub, Resume, Subscribe};
use crate::client::Props;
use crate::client::mqtt::SharedHealth;

/// How long a browser waits before reconnecting a broken event stream.
const RETRY: Duration = Duration::from_secs(1);
/// A comment line this often keeps idle event streams (and proxies) alive.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

#[derive(Clone)]
struct App {
    hub: Arc<Hub>,
    /// The event streams, shared fairly among clients ([`crate::bridge::fair`]).
    streams: Arc<Shares>,
    requests: Arc<Semaphore>,
    max_clients: usize,
    stopping: watch::Receiver<bool>,
    /// The broker's refusals, when fed from one.
    broker: Option<SharedHealth>,
    /// Events the SSE writer refused.
    refused: Arc<AtomicU64>,
}

/// The whole router.
pub fn router(hub: Arc<Hub>, opts: &Options, stopping: watch::Receiver<bool>) -> Router {
    let max = opts.max_clients.max(1);
    let app = App {
        hub,
        streams: Shares::new(max, max),
        requests: Arc::new(Semaphore::new(max)),
        max_clients: max,
        stopping,
        broker: opts.broker_health.clone(),
        refused: Arc::new(AtomicU64::new(0)),
    };
    Router::new()
        .route("/", get(|| async { assets::page(assets::HALL) }))
        .route(
            "/board/{*id}",
            get(|| async { assets::page(assets::BOARD) }),
        )
        .route(
            "/overlay/{*id}",
            get(|| async { assets::page(assets::OVERLAY) }),
        )
        .route("/static/{name}", get(static_asset))
        .route("/api/boards", get(boards))
        .route("/api/boards/{*id}", get(board))
        .route("/api/events", get(events))
        .route("/api/health", get(health))
        .route("/pgn/{*file}", get(pgn))
        .fallback(|| async { not_found("no such page on this bridge") })
        .layer(middleware::from_fn_with_state(app.clone(), limit))
        .layer(middleware::from_fn(read_only))
        .layer(middleware::from_fn(safe_headers))
        .with_state(app)
}

/// Every method but GET and HEAD: 405, whatever the path.
async fn read_only(req: Request, next: Next) -> Response {
    if req.method() == Method::GET || req.method() == Method::HEAD {
        return next.run(req).await;
    }
    let body = format!(
        "405 method not allowed: eboardctl serve is read-only; {} is not answered, only GET \
         and HEAD (change games with eboardctl on the rig)\n",
        req.method()
    );
    (
        StatusCode::METHOD_NOT_ALLOWED,
        [(header::ALLOW, "GET, HEAD")],
        body,
    )
        .into_response()
}

/// At most `max_clients` ordinary requests in flight; the rest get 503 at once.
async fn limit(State(app): State<App>, req: Request, next: Next) -> Response {
    match app.requests.clone().try_acquire_owned() {
        Ok(_permit) => next.run(req).await,
        Err(_) => too_many(app.max_clients, "requests in flight"),
    }
}

fn too_many(max: usize, what: &str) -> Response {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [(header::RETRY_AFTER, "5")],
        format!(
            "503 too many clients: this bridge serves at most {max} {what} at once; try again \
             in a few seconds\n"
        ),
    )
        .into_response()
}

/// Headers every answer carries: no sniffing, no referrer, only this origin's assets.
async fn safe_headers(req: Request, next: Next) -> Response {
    let mut res = next.run(req).await;
    let h = res.headers_mut();
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'self'; img-src 'self' data:"),
    );
    h.entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
    res
}

fn not_found(what: &str) -> Response {
    (StatusCode::NOT_FOUND, format!("404 not found: {what}\n")).into_response()
}

async fn static_asset(Path(name): Path<String>) -> Response {
    match assets::asset(&name) {
        Some(asset) => assets::serve(asset),
        None => not_found(&format!("no asset {name:?}")),
    }
}

/// A board's properties under their D-Bus names, plus `Id` (as `eboardctl status --json`).
fn board_json(id: &str, props: &Props) -> Value {
    let mut obj = props.clone();
    obj.insert("Id".into(), Value::String(id.to_owned()));
    Value::Object(obj)
}

async fn boards(State(app): State<App>) -> Response {
    let list: Vec<Value> = app.hub.read(|feed| {
        feed.hall()
            .ordered()
            .into_iter()
            .map(|(id, props)| board_json(id, props))
            .collect()
    });
    axum::Json(list).into_response()
}

/// A 404 that says which boards there are.
fn no_board(app: &App, id: &str) -> Response {
    let known: Vec<String> = app.hub.read(|feed| {
        feed.hall()
            .ordered()
            .into_iter()
            .map(|(id, _)| id.clone())
            .collect()
    });
    (
        StatusCode::NOT_FOUND,
        axum::Json(json!({
            "error": format!("no board {id:?} on this bridge"),
            "boards": known,
        })),
    )
        .into_response()
}

async fn board(State(app): State<App>, Path(id): Path<String>) -> Response {
    let found = app
        .hub
        .read(|feed| feed.hall().boards.get(&id).map(|p| board_json(&id, p)));
    match found {
        Some(v) => axum::Json(v).into_response(),
        None => no_board(&app, &id),
    }
}

/// The PGN media type (as lichess and chess tools serve it).
const PGN_TYPE: &str = "application/x-chess-pgn; charset=utf-8";

async fn pgn(State(app): State<App>, Path(file): Path<String>) -> Response {
    if file == "all.pgn" {
        let text = app.hub.read(|feed| {
            let games: Vec<String> = feed
                .hall()
                .ordered()
                .into_iter()
                .filter_map(|(_, props)| props.get("Pgn").and_then(Value::as_str))
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(str::to_owned)
                .collect();
            games.join("\n\n")
        });
        let text = if text.is_empty() { text } else { text + "\n" };
        return ([(header::CONTENT_TYPE, PGN_TYPE)], text).into_response();
    }
    let Some(id) = file.strip_suffix(".pgn") else {
        return not_found("PGN URLs are /pgn/<board id>.pgn and /pgn/all.pgn");
    };
    let text = app.hub.read(|feed| {
        feed.hall().boards.get(id).map(|p| {
            p.get("Pgn")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        })
    });
    match text {
        Some(t) => {
            let t = if t.ends_with('\n') { t } else { t + "\n" };
            ([(header::CONTENT_TYPE, PGN_TYPE)], t).into_response()
        }
        None => no_board(&app, id),
    }
}

#[derive(Debug, Deserialize)]
struct EventsQuery {
    board: Option<String>,
    /// `1`: start with a `Snapshot` event when there is nothing exact to replay (the pages).
    snapshot: Option<String>,
    /// For clients that cannot set the header (a page re-opening its stream itself).
    last_event_id: Option<String>,
}

/// Where a client resumes from: its `Last-Event-ID` header (or `?last_event_id=`). Anything
/// that is not an event's number can be replayed from nowhere: it gets a reset snapshot.
fn resume_from(header: Option<&HeaderValue>, query: Option<&str>) -> Resume {
    let text = match (header, query) {
        (Some(value), _) => match value.to_str() {
            Ok(text) => text,
            Err(_) => return Resume::Unreadable,
        },
        (None, Some(text)) => text,
        (None, None) => return Resume::Fresh,
    };
    match text.trim() {
        "" => Resume::Fresh,
        t => t.parse().map_or(Resume::Unreadable, Resume::After),
    }
}

/// The SSE form of an event, or `None` for one whose name or data holds a character that
/// would end or split the stream's fields (a newline, a carriage return, a NUL): axum asserts
/// on those, and one bad event must not end every client's stream. The feed only names
/// events after the contract's members, so this is the last line, not the filter.
pub fn sse_event(e: &Event) -> Option<SseEvent> {
    let breaks = |text: &str| text.contains(['\n', '\r', '\0']);
    if e.member.is_empty() || breaks(&e.member) || breaks(&e.data) {
        return None;
    }
    Some(
        SseEvent::default()
            .id(e.id.to_string())
            .event(&e.member)
            .data(&e.data),
    )
}

/// `/api/health`: the source, the boards, the event streams, and what was refused.
async fn health(State(app): State<App>) -> Response {
    let (clients, clients_dropped) = app.hub.clients();
    let kept = app.hub.kept();
    let (source_up, boards, by_rig, last_id) = app.hub.read(|feed| {
        let hall = feed.hall();
        let mut by_rig = serde_json::Map::new();
        if app.broker.is_some() {
            for id in hall.boards.keys() {
                let rig = id.split('/').next().unwrap_or(id);
                let n = by_rig.entry(rig).or_insert(Value::from(0u64));
                *n = Value::from(n.as_u64().unwrap_or(0) + 1);
            }
        }
        (hall.source_up, hall.boards.len(), by_rig, feed.last_id())
    });
    let broker = app
        .broker
        .as_ref()
        .map(|h| h.lock().unwrap_or_else(|p| p.into_inner()).clone());
    let mut body = json!({
        "source": if broker.is_some() { "broker" } else { "bus" },
        "source_up": source_up,
        "boards": boards,
        "events": {
            "last_id": last_id,
            "clients": clients,
            "clients_dropped": clients_dropped,
            "resets": app.hub.resets(),
            "refused": app.refused.load(Ordering::Relaxed),
            "evicted": app.streams.counts().1,
            "kept": kept.0,
            "kept_bytes": kept.1,
            "hall_bytes": app.hub.read(|feed| feed.hall_bytes()),
        },
        "broker": broker,
    });
    if let Some(b) = body["broker"].as_object_mut() {
        b.insert("boards_by_rig".into(), Value::Object(by_rig));
    }
    axum::Json(body).into_response()
}

async fn events(
    State(app): State<App>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Query(q): Query<EventsQuery>,
    headers: HeaderMap,
) -> Response {
    let resume = resume_from(headers.get("last-event-id"), q.last_event_id.as_deref());
    let permit = match app.streams.take(ClientKey::of(peer.ip(), &headers)) {
        Ok(permit) => permit,
        // One client may hold every stream while no one else wants one (`router`): what
        // refuses it is that the others hold their fair part.
        Err(Refused::Full(max) | Refused::Client(max)) => {
            return too_many(max, "live event streams");
        }
    };
    let evicted = permit.eviction();
    let sub = app.hub.subscribe(&Subscribe {
        board: q.board.filter(|b| !b.is_empty()),
        resume,
        snapshot: q
            .snapshot
            .as_deref()
            .is_some_and(|s| s == "1" || s == "true"),
    });
    let live = futures_util::stream::unfold((sub.live, permit), |(mut rx, permit)| async move {
        rx.recv().await.map(|e| (e, (rx, permit)))
    });
    let mut stopping = app.stopping.clone();
    // The stream ends when the bridge stops, or when its place is taken for another
    // client (a browser reconnects by itself and is replayed, or refused while its client
    // holds more than its share).
    let stop = async move {
        tokio::select! {
            _ = stopping.wait_for(|s| *s) => {}
            _ = evicted => {}
        }
    };
    let refused = app.refused.clone();
    let events = futures_util::stream::iter(sub.first)
        .chain(live)
        .filter_map(move |e| {
            let event = sse_event(&e);
            if event.is_none() && refused.fetch_add(1, Ordering::Relaxed) == 0 {
                eprintln!(
                    "eboardctl serve: an event named {:?} cannot be sent as Server-Sent Events; \
                     left out (counted in /api/health)",
                    e.member
                );
            }
            std::future::ready(event.map(Ok::<_, Infallible>))
        });
    let stream = futures_util::stream::once(async { Ok(SseEvent::default().retry(RETRY)) })
        .chain(events)
        .take_until(stop);
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(member: &str, data: &str) -> Event {
        Event {
            id: 7,
            member: member.into(),
            board: None,
            data: data.into(),
        }
    }

    #[test]
    fn the_sse_writer_refuses_what_would_break_the_stream() {
        assert!(sse_event(&event("MovePlayed", r#"{"ply":1}"#)).is_some());
        for (member, data) in [
            ("Move\nevent: x", "{}"),
            ("Move\rPlayed", "{}"),
            ("Move\0", "{}"),
            ("", "{}"),
            ("MovePlayed", "{}\n\ndata: x"),
            ("MovePlayed", "{}\r"),
        ] {
            assert!(
                sse_event(&event(member, data)).is_none(),
                "{member:?} {data:?}"
            );
        }
    }

    #[test]
    fn any_last_event_id_is_read_without_refusal() {
        let h = |v: &[u8]| HeaderValue::from_bytes(v).unwrap();
        assert_eq!(resume_from(None, None), Resume::Fresh);
        assert_eq!(resume_from(Some(&h(b" 42 ")), None), Resume::After(42));
        assert_eq!(resume_from(None, Some("42")), Resume::After(42));
        assert_eq!(resume_from(Some(&h(b"")), Some("5")), Resume::Fresh);
        for bad in [
            &b"yesterday"[..],
            b"-1",
            b"1e3",
            b"99999999999999999999999",
            b"\xff\xfe",
        ] {
            assert_eq!(
                resume_from(Some(&h(bad)), None),
                Resume::Unreadable,
                "{bad:?}"
            );
        }
    }
}
