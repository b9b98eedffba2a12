//! The HTTP surface: which path serves what, and the rules every request goes through —
//! read-only (any method but GET and HEAD answers 405), bounded (too many clients at once
//! answer 503), and a fixed set of paths (nothing is read from the file system, so no path
//! can escape what is served).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::{Semaphore, watch};

use crate::bridge::web::Options;
use crate::bridge::web::assets;
use crate::bridge::web::hub::{Hub, Subscribe};
use crate::client::Props;

/// How long a browser waits before reconnecting a broken event stream.
const RETRY: Duration = Duration::from_secs(1);
/// A comment line this often keeps idle event streams (and proxies) alive.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

#[derive(Clone)]
struct App {
    hub: Arc<Hub>,
    streams: Arc<Semaphore>,
    requests: Arc<Semaphore>,
    max_clients: usize,
    stopping: watch::Receiver<bool>,
}

/// The whole router.
pub fn router(hub: Arc<Hub>, opts: &Options, stopping: watch::Receiver<bool>) -> Router {
    let max = opts.max_clients.max(1);
    let app = App {
        hub,
        streams: Arc::new(Semaphore::new(max)),
        requests: Arc::new(Semaphore::new(max)),
        max_clients: max,
        stopping,
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

/// The answer to a `Last-Event-ID` that is not the number of an event: a clear 400.
fn bad_last_id(text: &str) -> Response {
    (
        StatusCode::BAD_REQUEST,
        format!(
            "400 bad request: Last-Event-ID {text:?} is not the number of an event this \
             bridge sent\n"
        ),
    )
        .into_response()
}

async fn events(
    State(app): State<App>,
    Query(q): Query<EventsQuery>,
    headers: HeaderMap,
) -> Response {
    let header_id = match headers.get("last-event-id").map(|v| v.to_str()) {
        None => None,
        Some(Ok(text)) => Some(text.to_owned()),
        Some(Err(_)) => Some(String::from("<not text>")),
    };
    let last_id = match header_id.or(q.last_event_id) {
        None => None,
        Some(text) if text.trim().is_empty() => None,
        Some(text) => match text.trim().parse::<u64>() {
            Ok(id) => Some(id),
            Err(_) => return bad_last_id(&text),
        },
    };
    let Ok(permit) = app.streams.clone().try_acquire_owned() else {
        return too_many(app.max_clients, "live event streams");
    };
    let sub = app.hub.subscribe(&Subscribe {
        board: q.board.filter(|b| !b.is_empty()),
        last_id,
        snapshot: q
            .snapshot
            .as_deref()
            .is_some_and(|s| s == "1" || s == "true"),
    });
    let live = futures_util::stream::unfold((sub.live, permit), |(mut rx, permit)| async move {
        rx.recv().await.map(|e| (e, (rx, permit)))
    });
    let mut stopping = app.stopping.clone();
    let stop = async move {
        let _ = stopping.wait_for(|s| *s).await;
    };
    let events = futures_util::stream::iter(sub.first).chain(live).map(|e| {
        Ok::<_, Infallible>(
            SseEvent::default()
                .id(e.id.to_string())
                .event(&e.member)
                .data(&e.data),
        )
    });
    let stream = futures_util::stream::once(async { Ok(SseEvent::default().retry(RETRY)) })
        .chain(events)
        .take_until(stop);
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response()
}
