//! `eboardctl serve --mqtt` keeps its memory bound under a flood from the broker: a real
//! `mosquitto` anyone may publish to, and a neighbour publishing, as fast as the broker takes
//! them, states of about 480 KB for 1,000 made-up boards (480 MB, each within the 512 KiB a
//! state may be) with 2 MiB messages among them, while a page follows the event stream.
//!
//! The bridge keeps the hall's states and the replay log within 128 MiB together (the
//! hall's states within 64 MiB of them, the rest refused as `hall-full`), and its resident
//! memory at its peak stays within a small multiple of that (the allocator's slack and the
//! messages on their way; the figure is printed and in BENCHMARKS.md).

mod common;
mod relay_support;
mod web_support;

use std::time::Duration;

use common::within;
use relay_support::{Broker, WAIT, publish};
use serde_json::{Value, json};
use web_support::Serve;

/// The documented bound on what the hall and the replay log hold together.
const HELD: u64 = 128 << 20;
const BOARDS: usize = 1_000;
const STATE: usize = 480 * 1024;

/// `VmRSS` and `VmHWM` (the peak) of a process, in bytes.
fn memory(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<u64>().ok())
            .expect(name)
            * 1024
    };
    (field("VmRSS:"), field("VmHWM:"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_keeps_its_memory_bound_under_a_flood() {
    let dir = tempfile::tempdir().expect("temp dir");
    let broker = Broker::start(dir.path()).await;
    let url = broker.url();
    let serve = Serve::start("session", &["--mqtt", &url, "--prefix", "hall"]).await;
    let (rss_idle, _) = memory(serve.pid());

    // A page following everything, reading as fast as it can.
    let mut page = serve.events("?snapshot=1", None).await;
    let reader = tokio::spawn(async move {
        let mut n = 0u64;
        while page.next().await.is_some() {
            n += 1;
        }
        n
    });

    let filler = "1. e4 e5 ".repeat(STATE / 9);
    for batch in 0..(BOARDS / 20) {
        let mut messages: Vec<(String, Vec<u8>, bool)> = (0..20)
            .map(|i| {
                let n = batch * 20 + i;
                let state = json!({"Name": format!("b{n}"), "Number": 1, "Pgn": filler});
                (
                    format!("hall/rig-{}/b{n}/state", n % 10),
                    state.to_string().into_bytes(),
                    false,
                )
            })
            .collect();
        messages.push((
            format!("hall/rig-0/b{batch}/state"),
            vec![b' '; 2 << 20],
            false,
        ));
        publish(broker.port, &messages).await;
    }
    let health = within(WAIT * 4, "the flood read", async {
        loop {
            let h = serve.json("/api/health").await;
            let refused = h["broker"]["refused"].as_u64().unwrap_or(0);
            if h["boards"].as_u64().unwrap_or(0) + refused >= (BOARDS + BOARDS / 20) as u64 {
                return h;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await;
    let (rss, peak) = memory(serve.pid());
    eprintln!(
        "serve --mqtt under a flood of {BOARDS} states of {} KB: resident {} MB idle, {} MB \
         after, {} MB at the peak; {health}",
        STATE / 1024,
        rss_idle >> 20,
        rss >> 20,
        peak >> 20
    );
    let events = &health["events"];
    let kept_bytes = events["kept_bytes"].as_u64().unwrap();
    let hall_bytes = events["hall_bytes"].as_u64().unwrap();
    assert!(kept_bytes + hall_bytes <= HELD, "{health}");
    assert!(hall_bytes <= 64 << 20, "{health}");
    assert_eq!(
        health["broker"]["refused_by_reason"]["oversized"],
        BOARDS / 20
    );
    assert!(
        health["broker"]["refused_by_reason"]["hall-full"]
            .as_u64()
            .is_some_and(|n| n > 0),
        "{health}"
    );
    assert!(
        peak < 3 * HELD,
        "serve held {} MB at its peak for {} MB of hall and log",
        peak >> 20,
        HELD >> 20
    );
    // The bridge serves on, and the page's stream was served throughout.
    assert_eq!(serve.get("/api/boards").await.0, 200);
    reader.abort();
    let _: Value = health;
}
