//! Helpers shared by the simulator's integration tests: open the simulated port as the
//! daemon's serial side does (tokio-serial, 9600 8N1) and collect what the board sends.

#![allow(dead_code)]

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use eboard_sim::SimHandle;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_serial::{SerialPortBuilderExt, SerialStream};

pub fn open_port(path: &Path) -> SerialStream {
    tokio_serial::new(path.to_string_lossy(), 9600)
        .data_bits(tokio_serial::DataBits::Eight)
        .parity(tokio_serial::Parity::None)
        .stop_bits(tokio_serial::StopBits::One)
        .flow_control(tokio_serial::FlowControl::None)
        .open_native_async()
        .expect("open the simulated port")
}

/// A host opens the board's port at `path`, sends `host`, and once the board sends field
/// updates collects what it sends.
pub async fn attach(sim: &SimHandle, path: &Path, host: &[u8]) -> Collector {
    let mut port = open_port(path);
    port.write_all(host).await.unwrap();
    sim.wait_for_update_mode(Duration::from_secs(5))
        .await
        .unwrap();
    Collector::start(port)
}

/// Reads a port in the background, keeping every chunk as it arrived.
pub struct Collector {
    chunks: Arc<Mutex<Vec<Vec<u8>>>>,
    task: tokio::task::JoinHandle<SerialStream>,
    stop: tokio::sync::oneshot::Sender<()>,
}

impl Collector {
    pub fn start(mut port: SerialStream) -> Collector {
        let chunks = Arc::new(Mutex::new(Vec::new()));
        let sink = chunks.clone();
        let (stop, mut stopped) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(async move {
            let mut buf = [0u8; 1024];
            loop {
                tokio::select! {
                    _ = &mut stopped => break,
                    n = port.read(&mut buf) => match n {
                        Ok(n) if n > 0 => sink.lock().unwrap().push(buf[..n].to_vec()),
                        _ => tokio::time::sleep(Duration::from_millis(1)).await,
                    },
                }
            }
            port
        });
        Collector { chunks, task, stop }
    }

    pub fn len(&self) -> usize {
        self.chunks.lock().unwrap().iter().map(Vec::len).sum()
    }

    /// Wait until `bytes` have arrived (or `timeout` has passed), then stop as
    /// [`Collector::finish`] does. For a caller that knows what the board sent (its tap): no
    /// wait for a silence long enough to be sure, which would be most of a short test's time.
    pub async fn finish_after(
        self,
        bytes: usize,
        timeout: Duration,
    ) -> (Vec<Vec<u8>>, SerialStream) {
        let deadline = tokio::time::Instant::now() + timeout;
        while self.len() < bytes && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        self.finish(Duration::from_millis(2)).await
    }

    /// Wait until nothing arrived for `quiet`, then stop and return the chunks and the port.
    pub async fn finish(self, quiet: Duration) -> (Vec<Vec<u8>>, SerialStream) {
        let mut last = usize::MAX;
        loop {
            let now = self.len();
            if now == last {
                break;
            }
            last = now;
            tokio::time::sleep(quiet).await;
        }
        let _ = self.stop.send(());
        let port = self.task.await.expect("collector task");
        let chunks = std::mem::take(&mut *self.chunks.lock().unwrap());
        (chunks, port)
    }
}

/// Decode everything, asserting nothing was skipped.
pub fn decode_clean(bytes: &[u8]) -> Vec<eboard_core::dgt::Message> {
    let (messages, stats) = eboard_core::dgt::Decoder::decode_all(bytes);
    assert_eq!(stats.skipped_bytes, 0, "{stats:?}");
    messages
}

/// The placement a host reconstructs from a dump followed by field updates (the first dump
/// decides the orientation).
pub fn reconstruct(messages: &[eboard_core::dgt::Message]) -> eboard_core::board::Placement {
    use eboard_core::board::Placement;
    use eboard_core::dgt::Message;
    let mut orientation = eboard_core::board::Orientation::Normal;
    let mut placement = Placement::empty();
    let mut seen_dump = false;
    for m in messages {
        match m {
            Message::BoardDump(fields) => {
                if !seen_dump {
                    orientation = Placement::start_orientation(fields).unwrap_or_default();
                    seen_dump = true;
                }
                placement = Placement::from_wire(fields, orientation);
            }
            Message::FieldUpdate { field, content } => {
                if let Some(sq) = orientation.square_of_field(*field) {
                    placement.set(sq, *content);
                }
            }
            _ => {}
        }
    }
    placement
}
