//! `eboardctl replay`: each shared capture replayed into a pty and read back through
//! tokio-serial and the decoder yields exactly the capture's bytes and messages; a timestamped
//! `--record` capture keeps its timing (scaled by the speed).

mod captures;

use std::path::Path;
use std::time::Duration;

use eboard_core::capture::{self, Chunk, RECORD_HEADER, format_record_line};
use eboard_core::dgt::Decoder;
use eboardd::cli::replay::{ReplayOptions, replay};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::{Instant, timeout};
use tokio_serial::SerialPortBuilderExt;

async fn wait_for(path: &Path) {
    for _ in 0..500 {
        if path.exists() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    panic!("{} never appeared", path.display());
}

/// Replay `chunks` and read everything back; returns the bytes read.
async fn round_trip(chunks: Vec<Chunk>, speed: f64, gap_ms: u64) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("board");
    let opts = ReplayOptions {
        link: link.clone(),
        speed,
        gap_ms,
        wait_for_host: true,
    };
    let expected: usize = chunks.iter().map(|c| c.bytes.len()).sum();
    let task = tokio::spawn(async move { replay(&chunks, &opts, |_| {}).await });
    wait_for(&link).await;
    let mut port = tokio_serial::new(link.to_string_lossy(), 9600)
        .open_native_async()
        .unwrap();
    // Like a daemon: ask for something first (the replay starts on the host's first byte).
    port.write_all(&[0x40, 0x42]).await.unwrap();
    let mut got = Vec::with_capacity(expected);
    let mut buf = [0u8; 512];
    while got.len() < expected {
        let n = timeout(Duration::from_secs(10), port.read(&mut buf))
            .await
            .expect("replay keeps sending")
            .expect("read");
        assert!(n > 0, "port closed after {} of {expected} bytes", got.len());
        got.extend_from_slice(&buf[..n]);
    }
    let stats = task.await.unwrap().unwrap();
    assert_eq!(stats.bytes, expected);
    assert_eq!(stats.host_bytes, 2);
    assert!(!link.exists(), "the link is removed when the replay ends");
    got
}

#[tokio::test]
async fn shared_captures_come_back_byte_exact() {
    for n in [1, 2] {
        let chunks = captures::chunks(n);
        let original: Vec<u8> = chunks.iter().flat_map(|c| c.bytes.clone()).collect();
        let got = round_trip(chunks, 1.0, 0).await;
        assert_eq!(got, original, "capture {n}");
        let mut decoder = Decoder::new();
        let messages: Vec<_> = decoder.feed(&got).collect();
        let (direct, _) = Decoder::decode_all(&original);
        assert_eq!(messages, direct);
        assert_eq!(decoder.stats().skipped_bytes, 0, "capture {n}");
        assert!(
            messages.len() > 400,
            "capture {n}: {} messages",
            messages.len()
        );
    }
}

#[tokio::test]
async fn record_format_keeps_its_timing() {
    // Three clock messages 1 s apart, replayed 20× faster: at least 100 ms in all.
    let bwtime = [0x8D, 0, 10, 0x20, 3, 2, 0x20, 3, 2, 0x09];
    let mut text = format!("{RECORD_HEADER}\n");
    for i in 0..3u64 {
        text.push_str(&format_record_line(5_000 + i * 1_000, &bwtime));
        text.push('\n');
    }
    let chunks = capture::parse(&text).unwrap();
    let started = Instant::now();
    let got = round_trip(chunks, 20.0, 0).await;
    assert!(started.elapsed() >= Duration::from_millis(100));
    assert_eq!(got, bwtime.repeat(3));
}
