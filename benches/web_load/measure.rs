//! What the two bridge benchmarks (`web_load` and `livechess_load`) share: their settings, the
//! stand-in's bus, starting the bridge binary, and the measured run with its report. Each brings
//! its own client; `livechess_load` includes this file with `#[path]`.

use std::collections::HashMap;
use std::future::Future;
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::{Notify, mpsc};

use crate::harness::{self, env_num, percentile};
use crate::procs::{Bus, clock_ticks_per_second, cpu_ticks, status_value};
use crate::standin::{Emitted, StandIn};

pub struct Config {
    pub boards: usize,
    pub clients: usize,
    pub secs: u64,
    /// Time between two moves of a board, ms (a range).
    pub think_ms: (u64, u64),
    pub smoke: bool,
}

impl Config {
    /// The smoke run's settings, or the bench's from the environment; at most `most_clients`
    /// clients (`why` says where that bound comes from, for the error).
    pub fn from_env_and_args(most_clients: usize, why: &str) -> anyhow::Result<Config> {
        if harness::smoke_run() {
            return Ok(Config {
                boards: 5,
                clients: 3,
                secs: 3,
                think_ms: (200, 800),
                smoke: true,
            });
        }
        let boards = env_num("EBOARDD_BENCH_BOARDS", 200)? as usize;
        let clients = env_num("EBOARDD_BENCH_CLIENTS", 50)? as usize;
        anyhow::ensure!((1..=2000).contains(&boards), "boards must be 1..=2000");
        anyhow::ensure!(
            (1..=most_clients).contains(&clients),
            "clients must be 1..={most_clients}{why}"
        );
        Ok(Config {
            boards,
            clients,
            secs: env_num("EBOARDD_BENCH_SECS", 60)?,
            think_ms: (1000, 8000),
            smoke: false,
        })
    }
}

/// The private bus and the stand-in eboardd on it; the bus lives as long as this.
pub struct Stage {
    _dir: tempfile::TempDir,
    pub bus: Bus,
    pub emitted: Emitted,
    pub standin: StandIn,
}

impl Stage {
    pub async fn start(boards: usize) -> anyhow::Result<Stage> {
        let dir = tempfile::tempdir().context("temp dir")?;
        let bus = Bus::start(dir.path()).await?;
        let emitted: Emitted = Arc::new(Mutex::new(HashMap::new()));
        let standin = StandIn::start(&bus.address, boards, emitted.clone()).await?;
        Ok(Stage {
            _dir: dir,
            bus,
            emitted,
            standin,
        })
    }
}

/// The bridge under test: `eboardctl --bus ADDRESS <args>`, killed when dropped.
pub struct Bridge {
    pub child: Child,
    pub pid: i32,
    /// What follows `marker` on the line in which the bridge says where it listens.
    pub listening: String,
}

impl Bridge {
    pub async fn start(bus: &Bus, args: &[&str], marker: &str) -> anyhow::Result<Bridge> {
        let mut cmd = Command::new(
            std::env::var_os("EBOARDD_BENCH_EBOARDCTL")
                .unwrap_or_else(|| env!("CARGO_BIN_EXE_eboardctl").into()),
        );
        cmd.args(["--bus", &bus.address])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd
            .spawn()
            .with_context(|| format!("cannot start eboardctl {}", args[0]))?;
        let pid = child.id().context("bridge pid")? as i32;
        let mut lines = BufReader::new(child.stderr.take().context("stderr")?).lines();
        let listening = tokio::time::timeout(Duration::from_secs(20), async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(rest) = line.split(marker).nth(1) {
                    return Some(rest.trim().to_owned());
                }
            }
            None
        })
        .await
        .context("the bridge did not say where it listens")?
        .context("the bridge exited before listening")?;
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Ok(Bridge {
            child,
            pid,
            listening,
        })
    }
}

/// What one client saw.
#[derive(Default)]
pub struct Seen {
    /// Delay per move, in microseconds.
    pub delays_us: Vec<u64>,
    /// How many moves it received.
    pub moves: usize,
    pub ended_early: bool,
}

/// What a client task is handed: when each move was sent, where to say it is ready, when to
/// stop, and where to count the moves it received.
#[derive(Clone)]
pub struct Links {
    pub emitted: Emitted,
    pub ready: mpsc::Sender<()>,
    pub stop: Arc<Notify>,
    pub received: Arc<AtomicUsize>,
    pub news: Arc<Notify>,
}

/// How a bench names its parts in the report.
pub struct Wording {
    /// The bench, first on the summary line.
    pub name: &'static str,
    /// The clients, on the summary line.
    pub clients: &'static str,
    /// The delay measured, from the D-Bus signal to what the client reads.
    pub delay: &'static str,
    /// A client that ended before it was told to stop.
    pub ended: &'static str,
    /// What a client does before it is ready (for the error when it fails).
    pub ready: &'static str,
}

/// Starts `config.clients` clients (each `client(links)`), waits until all are ready, plays for
/// `config.secs`, then prints the bridge's CPU and memory, the delays and the moves lost; fails
/// when a client lost a move or ended early, or when a smoke run sent no move.
pub async fn measure<F, Fut>(
    config: &Config,
    stage: &Stage,
    mut bridge: Bridge,
    wording: Wording,
    client: F,
) -> anyhow::Result<()>
where
    F: Fn(Links) -> Fut,
    Fut: Future<Output = Seen> + Send + 'static,
{
    let pid = bridge.pid;
    let mut tasks = Vec::new();
    let (ready_tx, mut ready_rx) = mpsc::channel::<()>(config.clients);
    let links = Links {
        emitted: stage.emitted.clone(),
        ready: ready_tx,
        stop: Arc::new(Notify::new()),
        received: Arc::new(AtomicUsize::new(0)),
        news: Arc::new(Notify::new()),
    };
    for _ in 0..config.clients {
        tasks.push(tokio::spawn(client(links.clone())));
    }
    for _ in 0..config.clients {
        ready_rx
            .recv()
            .await
            .with_context(|| format!("a client failed to {}", wording.ready))?;
    }

    let ticks = clock_ticks_per_second();
    let cpu0 = cpu_ticks(pid)?;
    let t0 = Instant::now();
    let played = stage
        .standin
        .play(Duration::from_secs(config.secs), config.think_ms)
        .await?;
    let elapsed = t0.elapsed();
    let cpu1 = cpu_ticks(pid)?;
    // Time for the last moves to arrive: until every client has every move, at most 20 s.
    harness::wait_until(&links.news, Duration::from_secs(20), || {
        links.received.load(Ordering::Relaxed) >= played * config.clients
    })
    .await;
    links.stop.notify_waiters();
    let rss = status_value(pid, "VmRSS").unwrap_or(0);
    let hwm = status_value(pid, "VmHWM").unwrap_or(0);
    let mut seen = Vec::new();
    for t in tasks {
        seen.push(t.await.context("client task")?);
    }
    let _ = bridge.child.start_kill();

    let mut delays: Vec<u64> = seen
        .iter()
        .flat_map(|s| s.delays_us.iter().copied())
        .collect();
    delays.sort_unstable();
    let pct = |p: f64| percentile(&delays, p * 100.0);
    let lost: usize = seen.iter().map(|s| played.saturating_sub(s.moves)).sum();
    let ended = seen.iter().filter(|s| s.ended_early).count();
    let cpu_pct = (cpu1 - cpu0) as f64 / ticks as f64 / elapsed.as_secs_f64() * 100.0;
    println!(
        "{}{}: {} boards, {} {}, {:.0} s: {} moves ({:.1}/s) + clock updates",
        wording.name,
        if config.smoke { " (smoke run)" } else { "" },
        config.boards,
        config.clients,
        wording.clients,
        elapsed.as_secs_f64(),
        played,
        played as f64 / elapsed.as_secs_f64()
    );
    println!(
        "  bridge CPU {cpu_pct:.1}% of one core; RSS {:.1} MiB at the end, peak {:.1} MiB",
        rss as f64 / 1024.0,
        hwm as f64 / 1024.0
    );
    println!(
        "  {}: p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms ({} samples)",
        wording.delay,
        pct(0.50),
        pct(0.90),
        pct(0.99),
        pct(1.0),
        delays.len()
    );
    println!(
        "  moves lost at clients: {lost}; clients {}: {ended}",
        wording.ended
    );
    anyhow::ensure!(
        !config.smoke || played > 0,
        "no move was sent, so nothing was checked"
    );
    anyhow::ensure!(
        lost == 0 && ended == 0,
        "{lost} moves lost at the clients, {ended} of {} clients {}",
        config.clients,
        wording.ended
    );
    Ok(())
}
