//! `eboardctl replay CAPTURE --link PATH`: play a recorded serial stream back into a
//! pseudo-terminal, gpsfake-style, so a daemon (or a test) reads what a real board sent.
//!
//! Both capture formats are read (see [`eboard_core::capture`]): the base64-lines format of the
//! shared captures, whose chunks go out `--gap-ms` apart, and eboardd's timestamped
//! `--record` format, replayed with its original timing divided by `--speed`. Bytes from the
//! host are read and ignored: a capture cannot answer questions.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::time::Instant;
use tokio_serial::{SerialPort as _, SerialStream};

use eboard_core::capture::{self, Chunk};
use eboard_sim::wire::{make_link, remove_link, wait_until_read};

/// Arguments of `eboardctl replay`.
#[derive(Debug, Clone, clap::Args)]
pub struct ReplayArgs {
    /// The capture file (base64 lines, or an `eboardd --record` file).
    #[arg(value_name = "CAPTURE")]
    pub capture: PathBuf,
    /// Where to put the symlink to the pseudo-terminal the daemon should open.
    #[arg(long, value_name = "PATH")]
    pub link: PathBuf,
    /// Replay this many times faster than recorded.
    #[arg(long, default_value_t = 1.0, value_name = "X")]
    pub speed: f64,
    /// Gap between chunks of a capture without timestamps, ms (before `--speed`).
    #[arg(long, default_value_t = 50, value_name = "MS")]
    pub gap_ms: u64,
    /// Start at once instead of waiting for the first byte from the host.
    #[arg(long)]
    pub no_wait: bool,
}

/// How a replay went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReplayStats {
    pub chunks: usize,
    pub bytes: usize,
    /// Bytes the host sent (ignored).
    pub host_bytes: usize,
}

/// Replay settings for [`replay`].
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    pub link: PathBuf,
    pub speed: f64,
    pub gap_ms: u64,
    /// Wait for the host's first byte before sending anything.
    pub wait_for_host: bool,
}

/// Run a replay from the command line.
pub fn run(args: ReplayArgs) -> anyhow::Result<()> {
    let text = crate::bounded_read::read_text(&args.capture, crate::bounded_read::CAPTURE)
        .with_context(|| format!("capture {}", args.capture.display()))?;
    let chunks = capture::parse(&text).with_context(|| format!("{}", args.capture.display()))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let opts = ReplayOptions {
        link: args.link.clone(),
        speed: args.speed,
        gap_ms: args.gap_ms,
        wait_for_host: !args.no_wait,
    };
    crate::cli::say(&format!(
        "replaying {} ({} chunks) on {}",
        args.capture.display(),
        chunks.len(),
        args.link.display()
    ));
    let stats = runtime.block_on(async {
        tokio::select! {
            result = replay(&chunks, &opts, |path| {
                crate::cli::say(&format!("pseudo-terminal {} ready", path.display()));
                if opts.wait_for_host {
                    crate::cli::say("waiting for the host's first byte…");
                }
            }) => result.map(Some),
            _ = tokio::signal::ctrl_c() => Ok(None),
        }
    });
    remove_link(&args.link);
    match stats? {
        Some(s) => crate::cli::say(&format!(
            "replayed {} chunks, {} bytes (host sent {} bytes)",
            s.chunks, s.bytes, s.host_bytes
        )),
        None => crate::cli::say("interrupted"),
    }
    Ok(())
}

/// Replay `chunks` into a new pty behind `opts.link`. `ready` is called with the slave path
/// once the link exists. Returns when everything was written and read by the host (or after
/// a grace period if nobody reads), with the pty closed and the link removed.
pub async fn replay(
    chunks: &[Chunk],
    opts: &ReplayOptions,
    ready: impl FnOnce(&Path),
) -> anyhow::Result<ReplayStats> {
    anyhow::ensure!(
        opts.speed.is_finite() && opts.speed > 0.0,
        "--speed must be a positive number"
    );
    let (master, slave) = SerialStream::pair().context("cannot create a pseudo-terminal")?;
    let slave_path = PathBuf::from(
        slave
            .name()
            .context("the pseudo-terminal has no slave device name")?,
    );
    make_link(&slave_path, &opts.link)?;
    ready(&slave_path);
    let result = feed(master, &slave, chunks, opts).await;
    drop(slave);
    remove_link(&opts.link);
    result
}

async fn feed(
    master: SerialStream,
    slave: &SerialStream,
    chunks: &[Chunk],
    opts: &ReplayOptions,
) -> anyhow::Result<ReplayStats> {
    let (mut reader, mut writer) = tokio::io::split(master);
    let mut stats = ReplayStats::default();
    let mut buf = [0u8; 256];
    if opts.wait_for_host {
        let n = reader
            .read(&mut buf)
            .await
            .context("reading the host's first byte")?;
        stats.host_bytes += n;
    }
    let start = Instant::now();
    // Saturating: an absurd time offset waits "forever" rather than panicking.
    let due_at = |ms: u64| {
        Duration::try_from_secs_f64(ms as f64 / 1000.0 / opts.speed)
            .ok()
            .and_then(|d| start.checked_add(d))
            .unwrap_or_else(|| start + Duration::from_secs(365 * 86_400))
    };
    let first_at = chunks.iter().find_map(|c| c.at_ms).unwrap_or(0);
    let mut untimed_at = 0u64;
    for chunk in chunks {
        let due = match chunk.at_ms {
            Some(at) => due_at(at.saturating_sub(first_at)),
            None => {
                let due = due_at(untimed_at);
                untimed_at = untimed_at.saturating_add(opts.gap_ms);
                due
            }
        };
        // Keep draining what the host says while waiting, so it never blocks on us.
        loop {
            tokio::select! {
                _ = tokio::time::sleep_until(due) => break,
                n = reader.read(&mut buf) => match n {
                    Ok(n) if n > 0 => stats.host_bytes += n,
                    _ => {
                        tokio::time::sleep_until(due).await;
                        break;
                    }
                },
            }
        }
        writer
            .write_all(&chunk.bytes)
            .await
            .context("writing to the pseudo-terminal")?;
        stats.chunks += 1;
        stats.bytes += chunk.bytes.len();
    }
    writer.flush().await.ok();
    // Closing the master discards what the host has not read yet: wait until it has.
    wait_until_read(slave, Instant::now() + Duration::from_secs(5)).await;
    Ok(stats)
}
