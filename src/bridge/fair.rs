//! Fair shares of a bridge's long-lived places — `serve`'s event streams, the LiveChess
//! WebSockets — among its clients, so that one program cannot take them all.
//!
//! **A client** is a peer address plus what the program says it is: its page's `Origin`
//! and its `User-Agent` ([`ClientKey`]). The address alone is not enough: every local
//! program comes from 127.0.0.1 — lichess's board connector (a page from
//! `https://lichess.org` in the player's browser), OBS's overlay pages, a script — and a
//! runaway one among them must not lock the others out. A program that lies about what it
//! is can pass for several clients; the total bound still holds for it.
//!
//! The rules, for a bound of `total` places and `per_client` for one client:
//! - a client holds at most `per_client` places; one more is refused ([`Refused::Client`]);
//! - while places are free, anyone within their share gets one;
//! - when all are taken, a newcomer whose client holds fewer than the biggest holder less
//!   one takes the place of that holder's **oldest** one, which is told to end
//!   ([`Share::evicted`]); otherwise the newcomer is refused ([`Refused::Full`]). The
//!   "less one" keeps two clients from taking places from each other back and forth: after
//!   the move the newcomer's client holds at most what the other does.
//!
//! So any client holding nothing always gets in unless `total` clients hold one place each.
//! The table holds only clients with places, at most `total` of them, and the texts of a
//! key are cut to [`MAX_KEY_TEXT`] bytes.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use axum::http::{HeaderMap, header};
use tokio::sync::Notify;

/// The most of an `Origin` or `User-Agent` a key keeps.
pub const MAX_KEY_TEXT: usize = 256;

/// Who a client is: see the module.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClientKey {
    pub ip: IpAddr,
    pub origin: Option<String>,
    pub agent: Option<String>,
}

impl ClientKey {
    /// The client of a request from `ip` with these headers.
    pub fn of(ip: IpAddr, headers: &HeaderMap) -> ClientKey {
        let text = |name: header::HeaderName| {
            headers.get(name).map(|v| {
                let bytes = v.as_bytes();
                String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_KEY_TEXT)]).into_owned()
            })
        };
        ClientKey {
            ip,
            origin: text(header::ORIGIN),
            agent: text(header::USER_AGENT),
        }
    }
}

/// Why a place was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// The client holds its share already (the number: the share).
    Client(usize),
    /// Every place is taken and no client holds more than its fair part (the total).
    Full(usize),
}

struct Held {
    client: ClientKey,
    evict: Arc<Notify>,
}

#[derive(Default)]
struct Table {
    /// Places by id, oldest first.
    held: BTreeMap<u64, Held>,
    /// Places by client, oldest first.
    by_client: HashMap<ClientKey, BTreeMap<u64, ()>>,
    next: u64,
}

impl Table {
    fn remove(&mut self, id: u64) -> Option<Held> {
        let held = self.held.remove(&id)?;
        if let Some(ids) = self.by_client.get_mut(&held.client) {
            ids.remove(&id);
            if ids.is_empty() {
                self.by_client.remove(&held.client);
            }
        }
        Some(held)
    }

    /// The oldest place of the client holding the most (the one holding its oldest place
    /// the longest among equals), and how many that client holds.
    fn biggest(&self) -> Option<(u64, usize)> {
        self.by_client
            .values()
            .filter_map(|ids| ids.keys().next().map(|oldest| (*oldest, ids.len())))
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
    }
}

/// The places of one kind (event streams, WebSockets) and who holds them.
pub struct Shares {
    total: usize,
    per_client: usize,
    table: Mutex<Table>,
    evicted: AtomicU64,
}

impl Shares {
    /// `total` places, at most `per_client` for one client (both at least 1).
    pub fn new(total: usize, per_client: usize) -> Arc<Shares> {
        let total = total.max(1);
        Arc::new(Shares {
            total,
            per_client: per_client.clamp(1, total),
            table: Mutex::new(Table::default()),
            evicted: AtomicU64::new(0),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        // Plain data behind the lock: keep using it after a panic elsewhere.
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A place for `client`, taking the oldest place of the biggest holder when all are
    /// taken and that is fair (see the module), or why not.
    pub fn take(self: &Arc<Self>, client: ClientKey) -> Result<Share, Refused> {
        let mut table = self.lock();
        let mine = table.by_client.get(&client).map_or(0, BTreeMap::len);
        if mine >= self.per_client {
            return Err(Refused::Client(self.per_client));
        }
        if table.held.len() >= self.total {
            match table.biggest() {
                Some((oldest, theirs)) if mine + 1 < theirs => {
                    if let Some(gone) = table.remove(oldest) {
                        gone.evict.notify_one();
                        self.evicted.fetch_add(1, Ordering::Relaxed);
                    }
                }
                _ => return Err(Refused::Full(self.total)),
            }
        }
        let id = table.next;
        table.next += 1;
        let evict = Arc::new(Notify::new());
        table
            .by_client
            .entry(client.clone())
            .or_default()
            .insert(id, ());
        table.held.insert(
            id,
            Held {
                client,
                evict: evict.clone(),
            },
        );
        Ok(Share {
            shares: self.clone(),
            id,
            evict,
        })
    }

    /// Places held now, and how many were taken for a newcomer so far.
    pub fn counts(&self) -> (usize, u64) {
        (self.lock().held.len(), self.evicted.load(Ordering::Relaxed))
    }

    /// The bound on places, and on one client's.
    pub fn bounds(&self) -> (usize, usize) {
        (self.total, self.per_client)
    }
}

/// One held place, given back when dropped.
pub struct Share {
    shares: Arc<Shares>,
    id: u64,
    evict: Arc<Notify>,
}

impl Share {
    /// Completes when the place was taken for a newcomer: its stream or socket should end.
    pub async fn evicted(&self) {
        self.evict.notified().await
    }

    /// [`Share::evicted`] as an owned future (for streams that hold their share).
    pub fn eviction(&self) -> impl Future<Output = ()> + Send + 'static {
        let evict = self.evict.clone();
        async move { evict.notified().await }
    }
}

impl Drop for Share {
    fn drop(&mut self) {
        self.shares.lock().remove(self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::FutureExt;

    fn client(n: u8, agent: &str) -> ClientKey {
        ClientKey {
            ip: IpAddr::from([127, 0, 0, n]),
            origin: None,
            agent: Some(agent.into()),
        }
    }

    fn evicted(share: &Share) -> bool {
        share.evicted().now_or_never().is_some()
    }

    #[test]
    fn a_client_past_its_share_is_refused_and_others_get_in() {
        let shares = Shares::new(10, 3);
        let hog = client(1, "hog");
        let held: Vec<Share> = (0..3).map(|_| shares.take(hog.clone()).unwrap()).collect();
        assert_eq!(shares.take(hog.clone()).err(), Some(Refused::Client(3)));
        // The same address with another program is another client.
        assert!(shares.take(client(1, "obs")).is_ok());
        drop(held);
        assert!(shares.take(hog).is_ok());
    }

    #[test]
    fn when_full_a_newcomer_takes_the_oldest_place_of_the_biggest_holder() {
        let shares = Shares::new(4, 4);
        let hog = client(1, "hog");
        let held: Vec<Share> = (0..4).map(|_| shares.take(hog.clone()).unwrap()).collect();
        assert_eq!(shares.take(hog.clone()).err(), Some(Refused::Client(4)));
        let a = shares
            .take(client(1, "connector"))
            .expect("a newcomer gets in");
        assert!(evicted(&held[0]), "the oldest of the hog's");
        assert!(held[1..].iter().all(|s| !evicted(s)));
        assert_eq!(shares.counts(), (4, 1));
        // The evicted one reconnecting is refused: it is the biggest holder.
        drop(held);
        let hog_again: Vec<Share> = (0..3).map(|_| shares.take(hog.clone()).unwrap()).collect();
        assert_eq!(shares.counts().0, 4);
        assert_eq!(shares.take(hog.clone()).err(), Some(Refused::Full(4)));
        // Two clients holding 3 and 1: the one with 1 takes from the other once, then the
        // two hold 2 each and neither takes from the other.
        let b = shares.take(client(2, "x")).expect("fewer than 3 - 1");
        assert_eq!(hog_again.iter().filter(|s| evicted(s)).count(), 1);
        assert!(!evicted(&a));
        assert_eq!(
            shares.take(client(1, "connector")).err(),
            Some(Refused::Full(4))
        );
        drop(b);
    }

    #[test]
    fn as_many_clients_as_places_keep_theirs() {
        let shares = Shares::new(3, 3);
        let held: Vec<Share> = (0..3)
            .map(|n| shares.take(client(n, "p")).unwrap())
            .collect();
        assert_eq!(shares.take(client(9, "p")).err(), Some(Refused::Full(3)));
        assert!(held.iter().all(|s| !evicted(s)));
    }

    #[test]
    fn keys_are_read_from_the_headers_and_cut() {
        let mut h = HeaderMap::new();
        h.insert(header::ORIGIN, "https://lichess.org".parse().unwrap());
        h.insert(header::USER_AGENT, "x".repeat(1000).parse().unwrap());
        let k = ClientKey::of(IpAddr::from([127, 0, 0, 1]), &h);
        assert_eq!(k.origin.as_deref(), Some("https://lichess.org"));
        assert_eq!(k.agent.map(|a| a.len()), Some(MAX_KEY_TEXT));
    }
}
