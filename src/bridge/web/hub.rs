//! Fan-out of the feed's events to the live `/api/events` clients.
//!
//! One lock guards the feed and the client list, so a client that subscribes gets its replay
//! and its queue at the same instant: no event falls between the two, none comes twice. Each
//! client has a queue bounded in events and in bytes ([`QUEUE_BYTES`]: big events from a
//! broker must not pile up behind a slow reader); a client that does not keep up is dropped
//! rather than buffered without bound — its stream ends after what is queued, and a browser
//! reconnects by itself with `Last-Event-ID` and is replayed from the log.
//!
//! A reconnect always gets the truth: an exact replay when the log still holds everything
//! after the client's `Last-Event-ID`, and otherwise (too old, from an earlier run, in the
//! future, not a number) a `Snapshot` of every board marked `reset`, then the live stream.
//!
//! A snapshot of the whole hall can be as big as the hall (tens of MB from a broker), so
//! clients share one: a snapshot made for an earlier client is handed out again, followed by
//! the events since it, while the log holds them and they are few ([`CATCH_UP`]); the
//! client ends up exactly where a fresh snapshot would have put it.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::mpsc;

use crate::bridge::web::feed::{Event, Feed, Replay, event_bytes};

/// The most one client's queue may hold, in [`event_bytes`].
pub const QUEUE_BYTES: usize = 16 << 20;

/// The most events a shared snapshot may be followed by; past that a new one is made.
pub const CATCH_UP: usize = 256;
use crate::client::HallUpdate;

/// Where a client asks to resume from (its `Last-Event-ID`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Resume {
    /// No id: a new client.
    #[default]
    Fresh,
    /// Replay what came after this id.
    After(u64),
    /// An id that is no event's number: nothing can be replayed.
    Unreadable,
}

/// What a new client asked for.
#[derive(Debug, Clone, Default)]
pub struct Subscribe {
    /// Only this board's events (and the source's).
    pub board: Option<String>,
    /// `Last-Event-ID`.
    pub resume: Resume,
    /// A new client starts with a `Snapshot` event.
    pub snapshot: bool,
}

/// A subscription: what to send first, then the live queue.
pub struct Subscription {
    pub first: Vec<Arc<Event>>,
    pub live: Live,
}

/// A client's live queue.
pub struct Live {
    rx: mpsc::Receiver<Arc<Event>>,
    queued: Arc<AtomicUsize>,
}

impl Live {
    /// The next event; `None` once the client was dropped and its queue is empty.
    pub async fn recv(&mut self) -> Option<Arc<Event>> {
        let event = self.rx.recv().await?;
        self.queued.fetch_sub(event_bytes(&event), Ordering::AcqRel);
        Some(event)
    }

    /// The next event if one is queued.
    pub fn try_recv(&mut self) -> Result<Arc<Event>, mpsc::error::TryRecvError> {
        let event = self.rx.try_recv()?;
        self.queued.fetch_sub(event_bytes(&event), Ordering::AcqRel);
        Ok(event)
    }

    /// Whether the client was dropped (what is queued can still be read).
    pub fn is_closed(&self) -> bool {
        self.rx.is_closed()
    }
}

struct Client {
    board: Option<String>,
    tx: mpsc::Sender<Arc<Event>>,
    /// What its queue holds, in [`event_bytes`].
    queued: Arc<AtomicUsize>,
}

impl Client {
    /// Queues `event`; false when the queue is full (in events or bytes) or gone.
    fn send(&self, event: &Arc<Event>) -> bool {
        let size = event_bytes(event);
        if self.queued.load(Ordering::Acquire) + size > QUEUE_BYTES {
            return false;
        }
        if self.tx.try_send(event.clone()).is_err() {
            return false;
        }
        self.queued.fetch_add(size, Ordering::AcqRel);
        true
    }

    fn wants(&self, event: &Event) -> bool {
        match (&self.board, &event.board) {
            (Some(wanted), Some(board)) => wanted == board,
            _ => true,
        }
    }
}

struct Inner {
    feed: Feed,
    clients: Vec<Client>,
    /// The last whole-hall snapshot made, by `reset` (index 1: marked reset).
    shared: [Option<Arc<Event>>; 2],
}

/// The feed plus its live clients.
pub struct Hub {
    inner: Mutex<Inner>,
    queue: usize,
    dropped: AtomicU64,
    resets: AtomicU64,
}

impl Hub {
    /// A hub over `feed` whose clients each queue at most `queue` events.
    pub fn new(feed: Feed, queue: usize) -> Hub {
        Hub {
            inner: Mutex::new(Inner {
                feed,
                clients: Vec::new(),
                shared: [None, None],
            }),
            queue: queue.max(1),
            dropped: AtomicU64::new(0),
            resets: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves plain data behind; keep serving it.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Applies an update and hands its events to every client that wants them.
    pub fn publish(&self, update: HallUpdate) {
        let mut inner = self.lock();
        let events = inner.feed.apply(update);
        if events.is_empty() {
            return;
        }
        let before = inner.clients.len();
        inner.clients.retain(|client| {
            events
                .iter()
                .filter(|e| client.wants(e))
                .all(|e| client.send(e))
        });
        let gone = before - inner.clients.len();
        if gone > 0 {
            self.dropped.fetch_add(gone as u64, Ordering::Relaxed);
        }
    }

    /// Registers a client.
    pub fn subscribe(&self, req: &Subscribe) -> Subscription {
        let mut inner = self.lock();
        let board = req.board.as_deref();
        let wanted = |e: &Arc<Event>| match (board, &e.board) {
            (Some(w), Some(b)) => w == b,
            _ => true,
        };
        let replay = match req.resume {
            Resume::Fresh => None,
            Resume::After(id) => Some(inner.feed.since(id)),
            Resume::Unreadable => Some(Replay::Lost),
        };
        let first = match replay {
            Some(Replay::Events(events)) => events.into_iter().filter(wanted).collect(),
            // What the client holds cannot be brought up to date exactly: it gets the whole
            // current state, marked as a reset, whatever it asked for.
            Some(Replay::Lost) => {
                self.resets.fetch_add(1, Ordering::Relaxed);
                snapshot(&mut inner, board, true)
            }
            None if req.snapshot => snapshot(&mut inner, board, false),
            None => Vec::new(),
        };
        let (tx, rx) = mpsc::channel(self.queue);
        let queued = Arc::new(AtomicUsize::new(0));
        inner.clients.push(Client {
            board: req.board.clone(),
            tx,
            queued: queued.clone(),
        });
        Subscription {
            first,
            live: Live { rx, queued },
        }
    }

    /// The events the log keeps, and their bytes.
    pub fn kept(&self) -> (usize, usize) {
        self.lock().feed.kept()
    }

    /// Reads the feed.
    pub fn read<R>(&self, f: impl FnOnce(&Feed) -> R) -> R {
        f(&self.lock().feed)
    }

    /// How many reconnects could not be replayed exactly and got a reset snapshot so far.
    pub fn resets(&self) -> u64 {
        self.resets.load(Ordering::Relaxed)
    }

    /// Live clients now, and how many were dropped for falling behind so far.
    pub fn clients(&self) -> (usize, u64) {
        let mut inner = self.lock();
        // Clients whose stream ended are removed here too, not only at the next event.
        inner.clients.retain(|c| !c.tx.is_closed());
        (inner.clients.len(), self.dropped.load(Ordering::Relaxed))
    }
}

/// A `Snapshot` (of `board`, or of the whole hall) and the events that bring it up to now:
/// the whole hall's is shared with earlier clients while that is exact and cheap (see the
/// module).
fn snapshot(inner: &mut Inner, board: Option<&str>, reset: bool) -> Vec<Arc<Event>> {
    if board.is_some() {
        return vec![Arc::new(inner.feed.snapshot_event(board, reset))];
    }
    let slot = usize::from(reset);
    if let Some(shared) = &inner.shared[slot]
        && let Replay::Events(since) = inner.feed.since(shared.id)
        && since.len() <= CATCH_UP
    {
        let mut first = Vec::with_capacity(since.len() + 1);
        first.push(shared.clone());
        first.extend(since);
        return first;
    }
    let made = Arc::new(inner.feed.snapshot_event(None, reset));
    inner.shared[slot] = Some(made.clone());
    vec![made]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn signal(board: &str, ply: u64) -> HallUpdate {
        HallUpdate::Signal {
            board: board.into(),
            member: "MovePlayed".into(),
            args: json!({"ply": ply}).as_object().unwrap().clone(),
        }
    }

    #[test]
    fn filtered_clients_get_their_board_and_the_source() {
        let hub = Hub::new(Feed::new(1, 0), 16);
        let mut sub = hub.subscribe(&Subscribe {
            board: Some("a".into()),
            ..Default::default()
        });
        hub.publish(signal("b", 1));
        hub.publish(signal("a", 1));
        hub.publish(HallUpdate::SourceDown { reason: "x".into() });
        let got: Vec<(String, Option<String>)> = std::iter::from_fn(|| sub.live.try_recv().ok())
            .map(|e| (e.member.clone(), e.board.clone()))
            .collect();
        assert_eq!(
            got,
            [
                ("MovePlayed".into(), Some("a".into())),
                ("SourceDown".into(), None)
            ]
        );
    }

    #[test]
    fn a_client_that_falls_behind_is_dropped_and_others_are_not() {
        let hub = Hub::new(Feed::new(1, 0), 4);
        let slow = hub.subscribe(&Subscribe::default());
        let mut fast = hub.subscribe(&Subscribe::default());
        for ply in 1..=10 {
            hub.publish(signal("a", ply));
            while fast.live.try_recv().is_ok() {}
        }
        assert_eq!(hub.clients(), (1, 1));
        // The slow client's stream gives what was queued, then ends.
        let mut live = slow.live;
        let queued: Vec<u64> = std::iter::from_fn(|| live.try_recv().ok())
            .map(|e| e.id)
            .collect();
        assert_eq!(queued, [1, 2, 3, 4]);
        assert!(live.is_closed());
    }

    #[test]
    fn a_client_is_dropped_when_its_queue_holds_too_many_bytes() {
        let hub = Hub::new(Feed::new(1, 0), 1_000_000);
        let mut slow = hub.subscribe(&Subscribe::default());
        let big = "x".repeat(1 << 20);
        for ply in 1..=40 {
            hub.publish(HallUpdate::Signal {
                board: "a".into(),
                member: "MovePlayed".into(),
                args: json!({"ply": ply, "san": big}).as_object().unwrap().clone(),
            });
        }
        assert_eq!(hub.clients(), (0, 1), "dropped before 16 MB piled up");
        let queued = std::iter::from_fn(|| slow.live.try_recv().ok()).count();
        assert_eq!(queued, 15);
    }

    #[test]
    fn resubscribing_with_the_last_id_replays_exactly() {
        let hub = Hub::new(Feed::new(1, 0), 64);
        for ply in 1..=5 {
            hub.publish(signal("a", ply));
        }
        let sub = hub.subscribe(&Subscribe {
            resume: Resume::After(3),
            snapshot: true,
            ..Default::default()
        });
        assert_eq!(sub.first.iter().map(|e| e.id).collect::<Vec<_>>(), [4, 5]);
        let fresh = hub.subscribe(&Subscribe {
            snapshot: true,
            ..Default::default()
        });
        assert_eq!(fresh.first.len(), 1);
        assert_eq!(fresh.first[0].member, "Snapshot");
        assert_eq!(fresh.first[0].id, 5);
        assert!(fresh.first[0].data.contains(r#""reset":false"#));
        assert_eq!(hub.resets(), 0);
    }

    #[test]
    fn clients_share_a_snapshot_followed_by_what_came_since() {
        let hub = Hub::new(Feed::new(1, 0), 64);
        hub.publish(HallUpdate::Snapshot(vec![(
            "a".into(),
            json!({"Name": "a"}).as_object().unwrap().clone(),
        )]));
        let fresh = || {
            hub.subscribe(&Subscribe {
                snapshot: true,
                ..Default::default()
            })
        };
        let one = fresh();
        let two = fresh();
        assert!(
            Arc::ptr_eq(&one.first[0], &two.first[0]),
            "one snapshot shared"
        );
        assert_eq!(two.first.len(), 1);
        for ply in 1..=3 {
            hub.publish(signal("a", ply));
        }
        let three = fresh();
        assert!(Arc::ptr_eq(&one.first[0], &three.first[0]));
        let ids: Vec<u64> = three.first.iter().map(|e| e.id).collect();
        let snap = one.first[0].id;
        assert_eq!(
            ids,
            [snap, snap + 1, snap + 2, snap + 3],
            "then the events since"
        );
        // Past CATCH_UP events a new snapshot is made, at the newest id.
        for ply in 4..=(CATCH_UP as u64 + 4) {
            hub.publish(signal("a", ply));
        }
        let four = fresh();
        assert_eq!(four.first.len(), 1);
        assert!(!Arc::ptr_eq(&one.first[0], &four.first[0]));
        assert_eq!(four.first[0].id, hub.read(|f| f.last_id()));
        // A board's own snapshot is not shared.
        let board = hub.subscribe(&Subscribe {
            board: Some("a".into()),
            snapshot: true,
            ..Default::default()
        });
        assert_eq!(board.first.len(), 1);
        assert!(board.first[0].data.contains(r#""board":"a""#));
    }

    #[test]
    fn an_id_that_cannot_be_replayed_gets_a_reset_snapshot() {
        let hub = Hub::new(Feed::new(100, 0), 64);
        for ply in 1..=5 {
            hub.publish(signal("a", ply));
        }
        // Too old (an earlier run), in the future, unreadable; with and without `snapshot`.
        for resume in [
            Resume::After(7),
            Resume::After(98),
            Resume::After(10_000),
            Resume::After(u64::MAX),
            Resume::Unreadable,
        ] {
            for snapshot in [false, true] {
                let newest = hub.read(|f| f.last_id());
                let mut sub = hub.subscribe(&Subscribe {
                    resume,
                    snapshot,
                    board: None,
                });
                // A reset snapshot (shared with the earlier ones), then exactly the events
                // since it, up to the newest.
                assert_eq!(sub.first[0].member, "Snapshot", "{resume:?}");
                assert!(sub.first[0].data.contains(r#""reset":true"#));
                let ids: Vec<u64> = sub.first.iter().map(|e| e.id).collect();
                assert_eq!(ids, (ids[0]..=newest).collect::<Vec<u64>>(), "{resume:?}");
                assert!(sub.first[1..].iter().all(|e| e.member != "Snapshot"));
                // Then the live stream.
                hub.publish(signal("a", 9));
                assert_eq!(
                    sub.live
                        .try_recv()
                        .map(|e| e.member.clone())
                        .ok()
                        .as_deref(),
                    Some("MovePlayed")
                );
            }
        }
        assert_eq!(hub.resets(), 10);
        // The one id before the first is exact: nothing was missed.
        let sub = hub.subscribe(&Subscribe {
            resume: Resume::After(99),
            ..Default::default()
        });
        assert_eq!(sub.first.len(), 15);
    }
}
