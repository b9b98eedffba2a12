//! The bytes of `/api/events`: each event framed once as Server-Sent Events and the frame
//! shared by every client (`Event::sse_frame`), and a client's stream as an HTTP body
//! ([`EventStream`]) that writes everything queued for it at once.
//!
//! Why not axum's `Sse`: it frames every event anew for every client (a copy of the event's
//! data per client) and hands hyper one chunk per event. Here an event's frame is made the
//! first time a client needs it and kept with the event (`Event::sse_frame`); a client's
//! body hands hyper, in one chunk, every frame ready in its queue (a move's `MovePlayed`,
//! `PropertiesChanged` and `LastMove` arrive together), so they go out in one write.
//!
//! What a client reads is byte for byte what axum's `Sse` wrote: a first `retry:` frame,
//! then `id: …\nevent: …\ndata: …\n\n` per event, and a `:\n\n` comment after
//! [`KEEP_ALIVE`] without anything sent; only how the bytes are cut into HTTP chunks differs.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use http_body::Frame;
use tokio::time::{Instant, Sleep};

use crate::bridge::fair::Share;
use crate::bridge::web::feed::Event;
use crate::bridge::web::hub::Live;

/// A comment line this often keeps idle event streams (and proxies) alive.
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The first frame of every stream: a browser waits a second before reconnecting a broken
/// one.
const RETRY_FRAME: &[u8] = b"retry: 1000\n\n";
/// What an idle stream is sent every [`KEEP_ALIVE`]: an empty comment.
const KEEP_ALIVE_FRAME: &[u8] = b":\n\n";

/// Frames ready together are joined into one chunk up to this size; a bigger frame (a
/// whole hall's snapshot) goes out alone, as it is, uncopied.
const BATCH_BYTES: usize = 64 * 1024;

/// One client's event stream: what it is sent first, then its live queue, until the queue
/// ends (the client was dropped for falling behind), `stop` completes (the bridge stops,
/// or the client's place is taken), or the client goes away.
pub struct EventStream {
    first: VecDeque<Arc<Event>>,
    live: Live,
    live_ended: bool,
    /// A frame that did not fit in the last chunk.
    held: Option<Bytes>,
    retry_sent: bool,
    stop: Pin<Box<dyn Future<Output = ()> + Send>>,
    /// When something was last sent; the timer is moved on to a keep-alive's due time only
    /// when it fires, not at every event.
    last_sent: Instant,
    keep_alive: Pin<Box<Sleep>>,
    /// Events left out because they cannot be framed (counted in `/api/health`).
    refused: Arc<AtomicU64>,
    /// The client's place among the streams, held while the stream lives.
    _share: Share,
}

impl EventStream {
    pub fn new(
        first: Vec<Arc<Event>>,
        live: Live,
        share: Share,
        stop: impl Future<Output = ()> + Send + 'static,
        refused: Arc<AtomicU64>,
    ) -> EventStream {
        let now = Instant::now();
        EventStream {
            first: first.into(),
            live,
            live_ended: false,
            held: None,
            retry_sent: false,
            stop: Box::pin(stop),
            last_sent: now,
            keep_alive: Box::pin(tokio::time::sleep_until(now + KEEP_ALIVE)),
            refused,
            _share: share,
        }
    }

    /// The response: the headers axum's `Sse` sends, and this stream as the body.
    pub fn into_response(self) -> Response {
        (
            [
                (header::CONTENT_TYPE, "text/event-stream"),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            axum::body::Body::new(self),
        )
            .into_response()
    }

    /// The next event's frame that is ready now: what comes first, then the live queue.
    /// `Pending` when nothing is queued (the task is woken when something is);
    /// `Ready(None)` once the live queue has ended.
    fn poll_next_frame(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        loop {
            let event = match self.first.pop_front() {
                Some(event) => event,
                None if self.live_ended => return Poll::Ready(None),
                None => match self.live.poll_recv(cx) {
                    Poll::Ready(Some(event)) => event,
                    Poll::Ready(None) => {
                        self.live_ended = true;
                        return Poll::Ready(None);
                    }
                    Poll::Pending => return Poll::Pending,
                },
            };
            match event.sse_frame() {
                Some(frame) => return Poll::Ready(Some(frame.clone())),
                None => self.refuse(&event),
            }
        }
    }

    fn refuse(&self, event: &Event) {
        if self.refused.fetch_add(1, Ordering::Relaxed) == 0 {
            eprintln!(
                "eboardctl serve: an event named {:?} cannot be sent as Server-Sent Events; \
                 left out (counted in /api/health)",
                event.member
            );
        }
    }

    /// Everything ready to send now, as one chunk (see [`BATCH_BYTES`]).
    fn ready_chunk(&mut self, cx: &mut Context<'_>) -> Option<Bytes> {
        let mut parts: Vec<Bytes> = Vec::new();
        let mut size = 0;
        if !self.retry_sent {
            self.retry_sent = true;
            parts.push(Bytes::from_static(RETRY_FRAME));
            size += RETRY_FRAME.len();
        }
        loop {
            let next = match self.held.take() {
                Some(frame) => frame,
                None => match self.poll_next_frame(cx) {
                    Poll::Ready(Some(frame)) => frame,
                    Poll::Ready(None) | Poll::Pending => break,
                },
            };
            if !parts.is_empty() && size + next.len() > BATCH_BYTES {
                self.held = Some(next);
                break;
            }
            size += next.len();
            parts.push(next);
        }
        match parts.len() {
            0 => None,
            1 => parts.pop(),
            _ => Some(Bytes::from(parts.concat())),
        }
    }
}

impl http_body::Body for EventStream {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = &mut *self;
        // Stopping ends the stream at once, whatever is still queued.
        if this.stop.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        if let Some(chunk) = this.ready_chunk(cx) {
            this.last_sent = Instant::now();
            return Poll::Ready(Some(Ok(Frame::data(chunk))));
        }
        if this.live_ended && this.first.is_empty() && this.held.is_none() {
            return Poll::Ready(None);
        }
        // Nothing to send: a keep-alive once the stream was quiet for KEEP_ALIVE.
        let due = this.last_sent + KEEP_ALIVE;
        if this.keep_alive.deadline() != due {
            this.keep_alive.as_mut().reset(due);
        }
        if this.keep_alive.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        this.last_sent = Instant::now();
        Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(KEEP_ALIVE_FRAME)))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bridge::fair::{ClientKey, Shares};
    use crate::bridge::web::feed::Feed;
    use crate::bridge::web::hub::{Hub, Subscribe};
    use crate::client::HallUpdate;
    use axum::http::HeaderMap;
    use futures_util::FutureExt;
    use http_body::Body as _;
    use serde_json::json;

    fn signal(board: &str, member: &str, args: serde_json::Value) -> HallUpdate {
        HallUpdate::Signal {
            board: board.into(),
            member: member.into(),
            args: args.as_object().unwrap().clone(),
        }
    }

    fn share() -> Share {
        let key = ClientKey::of([127, 0, 0, 1].into(), &HeaderMap::new());
        Shares::new(4, 4).take(key).unwrap()
    }

    /// The next chunk if one is ready now; `Some(None)` when the stream ended.
    fn next(body: &mut EventStream) -> Option<Option<Bytes>> {
        std::future::poll_fn(|cx| Pin::new(&mut *body).poll_frame(cx))
            .now_or_never()
            .map(|frame| frame.map(|f| f.unwrap().into_data().unwrap()))
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
    }

    #[test]
    fn what_is_queued_goes_out_in_one_chunk_byte_for_byte() {
        let rt = runtime();
        let _inside = rt.enter();
        let hub = Hub::new(Feed::new(1, 0), 64);
        hub.publish(signal("a", "MovePlayed", json!({"ply": 1})));
        let sub = hub.subscribe(&Subscribe {
            resume: crate::bridge::web::hub::Resume::After(0),
            ..Default::default()
        });
        let refused = Arc::new(AtomicU64::new(0));
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let stop = async move {
            let _ = stop_rx.await;
        };
        let mut body = EventStream::new(sub.first, sub.live, share(), stop, refused.clone());
        // A move's signal and its property change, published together.
        hub.publish_all([
            signal("a", "MovePlayed", json!({"ply": 2})),
            signal("a", "Bad\nName", json!({})),
            signal("a", "MoveRetracted", json!({"ply": 2})),
        ]);
        let expected = [
            "retry: 1000\n\n",
            "id: 1\nevent: MovePlayed\ndata: {\"board\":\"a\",\"ply\":1}\n\n",
            "id: 2\nevent: MovePlayed\ndata: {\"board\":\"a\",\"ply\":2}\n\n",
            "id: 4\nevent: MoveRetracted\ndata: {\"board\":\"a\",\"ply\":2}\n\n",
        ]
        .concat();
        assert_eq!(next(&mut body), Some(Some(Bytes::from(expected))));
        assert_eq!(refused.load(Ordering::Relaxed), 1, "the bad name left out");
        assert_eq!(next(&mut body), None, "nothing more queued: pending");
        hub.publish(signal("a", "MovePlayed", json!({"ply": 3})));
        let third = next(&mut body).unwrap().unwrap();
        assert!(
            third.starts_with(b"id: 5\nevent: MovePlayed\n"),
            "{third:?}"
        );
        // Stopping ends the stream at once, even with an event queued.
        hub.publish(signal("a", "MovePlayed", json!({"ply": 4})));
        stop_tx.send(()).unwrap();
        assert_eq!(next(&mut body), Some(None));
    }

    #[test]
    fn a_dropped_client_gets_what_was_queued_then_the_end_and_big_frames_go_alone() {
        let rt = runtime();
        let _inside = rt.enter();
        let hub = Hub::new(Feed::new(1, 0), 3);
        let sub = hub.subscribe(&Subscribe::default());
        let refused = Arc::new(AtomicU64::new(0));
        let mut body = EventStream::new(
            sub.first,
            sub.live,
            share(),
            std::future::pending(),
            refused,
        );
        let big = "x".repeat(BATCH_BYTES);
        hub.publish(signal("a", "MovePlayed", json!({"ply": 1})));
        hub.publish(signal("a", "MovePlayed", json!({"ply": 2, "san": big})));
        hub.publish(signal("a", "MovePlayed", json!({"ply": 3})));
        // The fourth does not fit the queue of 3: the client is dropped.
        hub.publish(signal("a", "MovePlayed", json!({"ply": 4})));
        assert_eq!(hub.clients(), (0, 1));
        let first = next(&mut body).unwrap().unwrap();
        assert!(first.starts_with(b"retry: 1000\n\nid: 1\n"), "{first:?}");
        assert!(
            !first.windows(5).any(|w| w == b"id: 2"),
            "the big one waits"
        );
        let second = next(&mut body).unwrap().unwrap();
        assert!(second.starts_with(b"id: 2\n") && second.len() > BATCH_BYTES);
        let third = next(&mut body).unwrap().unwrap();
        assert!(third.starts_with(b"id: 3\n"), "{third:?}");
        assert_eq!(next(&mut body), Some(None), "then the stream ends");
    }

    fn event(member: &str, data: &str) -> Event {
        Event::new(7, member.into(), None, data.into())
    }

    fn frame(e: &Event) -> Option<Bytes> {
        e.sse_frame().cloned()
    }

    #[test]
    fn an_event_is_framed_as_the_sse_writers_frame_it() {
        assert_eq!(
            frame(&event("MovePlayed", r#"{"ply":1}"#)).as_deref(),
            Some(&b"id: 7\nevent: MovePlayed\ndata: {\"ply\":1}\n\n"[..])
        );
        assert_eq!(
            frame(&event("SourceUp", "")).as_deref(),
            Some(&b"id: 7\nevent: SourceUp\n\n"[..])
        );
    }

    #[test]
    fn the_frame_refuses_what_would_break_the_stream() {
        for (member, data) in [
            ("Move\nevent: x", "{}"),
            ("Move\rPlayed", "{}"),
            ("Move\0", "{}"),
            ("", "{}"),
            ("MovePlayed", "{}\n\ndata: x"),
            ("MovePlayed", "{}\r"),
        ] {
            assert!(frame(&event(member, data)).is_none(), "{member:?} {data:?}");
        }
    }
}
