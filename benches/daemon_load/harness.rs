//! What the end-to-end load benchmarks (`daemon_load`, `relay_load`, `web_load`) share besides
//! their processes (`procs`): the entry point and its exit codes, the smoke-or-bench choice and
//! numeric settings, waiting on news, the corpus games the players play, the simulated boards
//! on ptys, and latency percentiles. Included by each with `#[path]`.

use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;

use eboard_core::board::Orientation;
use eboard_sim::{BoardOptions, ClockSetup, PgnGame, SimBoard, SimHandle, SimOptions, parse_games};
use tokio::sync::{Notify, oneshot};

/// The games the simulated players play.
pub const CORPUS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/corpus/twic1599.pgn"
);
/// Games shorter than this are skipped: a benchmark board should spend its time playing.
pub const MIN_PLIES: usize = 40;

/// Runs `run(config())` on a multi-threaded runtime: exit 2 when the settings are bad, 1 when
/// the run fails (each with the error and its causes, prefixed with `name`).
pub fn main<C, Fut>(
    name: &str,
    config: impl FnOnce() -> anyhow::Result<C>,
    run: impl FnOnce(C) -> Fut,
) where
    Fut: Future<Output = anyhow::Result<()>>,
{
    let config = match config() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{name}: {e:#}");
            std::process::exit(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    if let Err(e) = runtime.block_on(run(config)) {
        eprintln!("{name}: {e:#}");
        std::process::exit(1);
    }
}

/// Whether this is a smoke run: `--test` on the command line, or no `--bench` (as under
/// `cargo test --all-targets`, which runs every bench target without arguments).
pub fn smoke_run() -> bool {
    let args: Vec<String> = std::env::args().skip(1).collect();
    args.iter().any(|a| a == "--test") || !args.iter().any(|a| a == "--bench")
}

/// The binary under test: `built` (the one cargo built with this bench), or the one named by
/// the environment variable `var` — to run the same bench, seed and machine against another
/// build of the program (e.g. the commit before a change) for a side-by-side comparison.
pub fn binary_under_test(var: &str, built: &str) -> std::path::PathBuf {
    std::env::var_os(var).map_or_else(|| built.into(), Into::into)
}

/// The number in environment variable `name`, or `default` when it is not set.
pub fn env_num(name: &str, default: u64) -> anyhow::Result<u64> {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .with_context(|| format!("{name}={v:?}: want a number")),
        Err(_) => Ok(default),
    }
}

/// Waits until `done()` holds, checking it again at each of `news`'s notifications, for at
/// most `limit`; returns whether it holds.
pub async fn wait_until(news: &Notify, limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        // Registered before the check, so news between the check and the wait is not missed.
        let notified = news.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if done() {
            return true;
        }
        if tokio::time::timeout_at(deadline, notified).await.is_err() {
            return done();
        }
    }
}

/// A listener on a thread and runtime of its own, so that the times it notes are not delayed
/// by the simulated boards sharing the benchmark's process. [`OwnThread::stop`], or dropping
/// it, tells it to stop and waits until it has.
pub struct OwnThread {
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl OwnThread {
    /// Runs `task(stopped)` on a new thread named `name`; `stopped` resolves when it is asked
    /// to stop.
    pub fn spawn<F, Fut>(name: &str, task: F) -> anyhow::Result<OwnThread>
    where
        F: FnOnce(oneshot::Receiver<()>) -> Fut + Send + 'static,
        Fut: Future<Output = ()>,
    {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .with_context(|| format!("cannot make the {name} thread's runtime"))?;
        let (stop, stopped) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || runtime.block_on(task(stopped)))
            .with_context(|| format!("cannot start the {name} thread"))?;
        Ok(OwnThread {
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    pub fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for OwnThread {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The corpus games from the standard start with at least [`MIN_PLIES`] plies.
pub fn corpus_games() -> anyhow::Result<Vec<PgnGame>> {
    let text = std::fs::read_to_string(CORPUS)
        .with_context(|| format!("cannot read the corpus {CORPUS}"))?;
    let games: Vec<PgnGame> = parse_games(&text)
        .into_iter()
        .filter(|g| g.tag("FEN").is_none() && g.moves().is_ok_and(|m| m.len() >= MIN_PLIES))
        .collect();
    anyhow::ensure!(!games.is_empty(), "no usable games in {CORPUS}");
    Ok(games)
}

/// `boards` simulated boards + clocks in real time, board `i` linked as `dir/b<i:03>` (the
/// link names its object) with serial number `10000 + i`; `reversed(i)` stands it the other
/// way round.
pub async fn spawn_boards(
    dir: &Path,
    boards: usize,
    clock: ClockSetup,
    reversed: impl Fn(usize) -> bool,
) -> anyhow::Result<Vec<Arc<SimHandle>>> {
    let mut sims = Vec::with_capacity(boards);
    for i in 0..boards {
        let sim = SimBoard::spawn(SimOptions {
            board: BoardOptions {
                orientation: if reversed(i) {
                    Orientation::Reversed
                } else {
                    Orientation::Normal
                },
                clock_setup: clock,
                serial: format!("{:05}", 10_000 + i),
                ..BoardOptions::default()
            },
            link: Some(dir.join(format!("b{i:03}"))),
            speed: 1.0,
            tap: false,
        })
        .await
        .with_context(|| format!("cannot start simulated board {i}"))?;
        sims.push(Arc::new(sim));
    }
    Ok(sims)
}

/// The `p`-th percentile (nearest rank) of sorted microseconds, in milliseconds (NaN when empty).
pub fn percentile(sorted_us: &[u64], p: f64) -> f64 {
    if sorted_us.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted_us.len() as f64).ceil() as usize;
    sorted_us[rank.clamp(1, sorted_us.len()) - 1] as f64 / 1000.0
}
