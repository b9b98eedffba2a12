//! The hall relay (`eboardctl relay`, contract section 6): every board of this rig, as the
//! local bus shows it, republished on an MQTT broker.
//!
//! [`core`] decides what to publish and keeps what the broker has not confirmed; [`topics`]
//! names the topic tree; [`broker`] turns the `--mqtt` URL into connection options. This
//! module is the thin shell around them: it runs the shared bus source
//! ([`crate::client::watch_bus`]) and one rumqttc connection at a time, and moves updates,
//! packet ids and acknowledgements between them.
//!
//! Each connection attempt gets a fresh rumqttc event loop. rumqttc drops what it holds when
//! a broker answers without the old session (a restarted broker, or any clean session), so
//! the relay never leaves anything there that it could not redo: the core sends again
//! whatever was not acknowledged.

pub mod core;

use std::time::Duration;

use rumqttc::Outgoing;
use rumqttc::v5::mqttbytes::QoS;
use rumqttc::v5::mqttbytes::v5::LastWill;
use rumqttc::v5::{AsyncClient, ConnectionError, Event, EventLoop, Incoming};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::bridge::relay::core::{Config, Notice, OFFLINE, Relay, backoff};
use crate::client::HallUpdate;
use crate::client::bus::BusChoice;
use crate::client::mqtt::MAX_STATE_BYTES;
use crate::mqtt::broker::{Broker, describe};
use crate::mqtt::topics::{self, Kind, RigTopics, Topic};

/// Publications handed to rumqttc and not yet acknowledged, at most (rumqttc's in-flight
/// limit is set to the same, or the broker's Receive Maximum when lower).
const WINDOW: usize = 100;

/// How long a clean stop waits for the broker to confirm what is still in flight.
const STOP_GRACE: Duration = Duration::from_secs(3);

/// What the relay is told to do.
#[derive(Debug, Clone)]
pub struct RelayOptions {
    pub broker: Broker,
    pub bus: BusChoice,
    pub prefix: String,
    pub rig: String,
    pub max_queued: usize,
}

/// Writes a line for the operator on stderr; under systemd with the journal's priority
/// prefix, so errors stand out in `journalctl -p err`.
pub fn say(priority: u8, text: &str) {
    if std::env::var_os("JOURNAL_STREAM").is_some() {
        eprintln!("<{priority}>{text}");
    } else {
        eprintln!("eboardctl relay: {text}");
    }
}

const ERR: u8 = 3;
const WARNING: u8 = 4;
const INFO: u8 = 6;

/// One broker connection: the client to hand publications to and the loop that sends them.
struct Link {
    client: AsyncClient,
    events: EventLoop,
}

/// Runs the relay until `stop` completes (SIGINT/SIGTERM in the command), then says
/// `offline` and leaves. Returns an error only for what retrying cannot fix.
pub async fn run(
    opts: RelayOptions,
    stop: impl std::future::Future<Output = ()>,
) -> Result<(), String> {
    let topics = RigTopics::new(&opts.prefix, &opts.rig);
    let client_id = format!("eboardd-relay-{}", opts.rig);
    let will = LastWill::new(topics.status(), OFFLINE, QoS::AtLeastOnce, true, None);
    let mqtt_options = opts
        .broker
        .options(&client_id, Some(will))
        .map_err(|e| e.to_string())?;
    let mut mqtt_options = mqtt_options;
    // MQTT 5: the broker's Receive Maximum, when lower, lowers it; rumqttc then holds the
    // rest in its request channel, twice the window.
    mqtt_options.set_outgoing_inflight_upper_limit(WINDOW as u16);

    let (tx, mut rx) = mpsc::channel::<HallUpdate>(4096);
    let source = tokio::spawn(crate::client::watch_bus(opts.bus.clone(), tx));
    let run = run_id();
    let mut relay = Relay::new(Config {
        topics: topics.clone(),
        max_queued: opts.max_queued,
        window: WINDOW,
        run: run.clone(),
    });
    say(
        INFO,
        &format!(
            "relaying the boards on the {} to {} as {}/{} (run {run})",
            opts.bus, opts.broker.url, opts.prefix, opts.rig
        ),
    );

    let connect = || {
        let (client, events) = AsyncClient::new(mqtt_options.clone(), 2 * WINDOW);
        Link { client, events }
    };
    let mut link = Some(connect());
    let mut attempt: u32 = 0;
    let mut retry_at = Instant::now();
    let mut was_connected = false;
    tokio::pin!(stop);

    loop {
        if let Some(l) = &link {
            transmit(&mut relay, &l.client);
        }
        report(&mut relay);
        tokio::select! {
            update = rx.recv() => match update {
                Some(u) => relay.on_update(u),
                None => {
                    source.abort();
                    return Err("the bus source stopped".into());
                }
            },
            event = poll(&mut link) => match event {
                Ok(event) => on_event(&mut relay, &topics, link.as_ref(), &opts.prefix, event, &mut attempt, &mut was_connected, &opts),
                Err(e) => {
                    relay.on_disconnected();
                    link = None;
                    let wait = backoff(attempt);
                    attempt = attempt.saturating_add(1);
                    retry_at = Instant::now() + wait;
                    let what = if was_connected { "lost the broker" } else { "cannot reach the broker" };
                    say(
                        WARNING,
                        &format!(
                            "{what} {} ({}); {} event(s) kept, retrying in {:.1} s",
                            opts.broker.url,
                            describe(&e),
                            relay.queued_events(),
                            wait.as_secs_f64()
                        ),
                    );
                    was_connected = false;
                }
            },
            _ = tokio::time::sleep_until(retry_at), if link.is_none() => {
                link = Some(connect());
            }
            _ = &mut stop => {
                source.abort();
                relay.shut_down();
                if let Some(l) = link.take() {
                    finish(&mut relay, l).await;
                }
                say(INFO, "stopped");
                return Ok(());
            }
        }
    }
}

/// This run's id: the start time in microseconds and the process id, in hex. Two runs of one
/// rig's relay never share it (the same microsecond would need the same pid), and it needs
/// nothing kept on disk.
fn run_id() -> String {
    let micros = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0);
    format!("{micros:x}-{:x}", std::process::id())
}

/// Hands the client every publication the core has ready and the window allows.
fn transmit(relay: &mut Relay, client: &AsyncClient) {
    while let Some(p) = relay.poll_transmit() {
        // The channel holds twice the window, so it is never full here; a closed one means
        // the event loop is gone, which the next poll reports.
        if client
            .try_publish(p.topic, QoS::AtLeastOnce, p.retain, p.payload)
            .is_err()
        {
            break;
        }
    }
}

fn report(relay: &mut Relay) {
    for notice in relay.take_notices() {
        match notice {
            Notice::QueueFull { limit } => say(
                ERR,
                &format!(
                    "EVENTS LOST: {limit} events are waiting for the broker, the most kept; the \
                     oldest are being dropped (consumers will see a gap in seq). Retained \
                     state and PGN will still be republished."
                ),
            ),
            Notice::Dropped { count } => say(
                ERR,
                &format!("EVENTS LOST: {count} events were dropped while the broker was away"),
            ),
        }
    }
}

async fn poll(link: &mut Option<Link>) -> Result<Event, ConnectionError> {
    match link {
        Some(l) => l.events.poll().await,
        None => std::future::pending().await,
    }
}

#[allow(clippy::too_many_arguments)]
fn on_event(
    relay: &mut Relay,
    topics: &RigTopics,
    link: Option<&Link>,
    prefix: &str,
    event: Event,
    attempt: &mut u32,
    was_connected: &mut bool,
    opts: &RelayOptions,
) {
    match event {
        Event::Incoming(Incoming::ConnAck(_)) => {
            *was_connected = true;
            relay.on_connected();
            if let Some(l) = link {
                // Read back this rig's retained states once, to clear boards that left while
                // the relay was not running; unsubscribed as soon as the broker confirms
                // (the retained messages are already on their way by then).
                let _ = l
                    .client
                    .try_subscribe(topics.all_states(), QoS::AtLeastOnce);
            }
            say(
                INFO,
                &format!(
                    "connected to {}; publishing {} board(s)",
                    opts.broker.url,
                    relay.boards().len()
                ),
            );
        }
        Event::Incoming(Incoming::SubAck(_)) => {
            if let Some(l) = link {
                let _ = l.client.try_unsubscribe(topics.all_states());
            }
        }
        // The read-back is over (the broker sent the retained states before this): only a
        // connection that got this far starts the backoff again from its shortest wait, so
        // one that breaks at every connect is retried ever more slowly.
        Event::Incoming(Incoming::UnsubAck(_)) => *attempt = 0,
        Event::Outgoing(Outgoing::Publish(pkid)) => relay.on_sent(pkid),
        Event::Incoming(Incoming::PubAck(ack)) => relay.on_acked(ack.pkid),
        Event::Incoming(Incoming::Publish(p)) if p.retain && !p.payload.is_empty() => {
            let topic = std::str::from_utf8(&p.topic).unwrap_or_default();
            if let Some(Topic::Board {
                rig,
                board,
                kind: Kind::State,
            }) = topics::parse(prefix, topic)
                && rig == opts.rig
            {
                if p.payload.len() > MAX_STATE_BYTES {
                    // Not this relay's (its states are far smaller): someone else's, left
                    // unread. Its board's topics are cleared below when this rig has no
                    // such board, and overwritten when it has.
                    say(
                        WARNING,
                        &format!(
                            "refused an oversized message on {topic}: {} bytes, over the {} \
                             KiB a board's state may be; not read",
                            p.payload.len(),
                            MAX_STATE_BYTES / 1024
                        ),
                    );
                }
                relay.on_retained_state(board);
            }
        }
        _ => {}
    }
}

/// A clean stop: `offline`, then what is in flight, then DISCONNECT, waiting at most
/// [`STOP_GRACE`] for the broker.
async fn finish(relay: &mut Relay, mut link: Link) {
    let deadline = Instant::now() + STOP_GRACE;
    loop {
        transmit(relay, &link.client);
        if relay.idle() {
            break;
        }
        match tokio::time::timeout_at(deadline, link.events.poll()).await {
            Ok(Ok(Event::Outgoing(Outgoing::Publish(pkid)))) => relay.on_sent(pkid),
            Ok(Ok(Event::Incoming(Incoming::PubAck(ack)))) => relay.on_acked(ack.pkid),
            Ok(Ok(_)) => {}
            Ok(Err(_)) | Err(_) => return,
        }
    }
    let _ = link.client.try_disconnect();
    let _ = tokio::time::timeout_at(deadline, async {
        loop {
            match link.events.poll().await {
                Ok(Event::Outgoing(Outgoing::Disconnect)) | Err(_) => break,
                Ok(_) => {}
            }
        }
    })
    .await;
}
