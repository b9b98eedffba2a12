//! The hall the two benchmarks of the `eboardd` binary (`daemon_load`, `relay_load`) set up
//! and play, and the one check of what a listener received against what was played: a
//! private bus, simulated boards on ptys, a D-Bus client subscribed before the daemon starts,
//! eboardd, the players; then every move played against the `MovePlayed` a listener (the
//! D-Bus client, or the relay's MQTT subscriber) got. Included by both with `#[path]`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use eboard_sim::{ClockSetup, PgnGame, SimHandle};

use super::client::{Client, Log, Moves};
use super::driver::{self, Expected, PlayerResult, Style};
use super::harness::{self, wait_until};
use super::procs::{self, Bus, Daemon};

/// Time after the last move arrived for late extra or replaced signals.
const DRAIN: Duration = Duration::from_secs(3);
/// The longest the drain waits for moves still missing (a loaded machine).
const DRAIN_LIMIT: Duration = Duration::from_secs(60);

/// Everything up to the first move.
pub struct Hall {
    pub bus: Bus,
    pub sims: Vec<Arc<SimHandle>>,
    /// What the D-Bus client received.
    pub log: Log,
    pub client: Client,
    /// A connection of the benchmark's own, for calls.
    pub control: zbus::Connection,
    pub daemon: Daemon,
}

impl Hall {
    /// A private bus under `dir`, `boards` simulated boards (board `i` stood the other way
    /// round when `reversed(i)`), a D-Bus client subscribed to every signal of the bridge
    /// before the daemon starts (so none is missed; its games and moves are told to `news`),
    /// and `eboardd`. Returns once the daemon owns its name, every board has had the
    /// handshake and announced its first game.
    pub async fn start(
        dir: &Path,
        boards: usize,
        clock: ClockSetup,
        reversed: impl Fn(usize) -> bool,
        news: Arc<Notify>,
    ) -> anyhow::Result<Hall> {
        Self::start_with(dir, boards, clock, reversed, news, None).await
    }

    /// [`Hall::start`], the boards given `Round` tags in a configuration file when `rounds`
    /// is set: `1.<n>` for board n (round folders on: `round-1/game-<n>.pgn` and
    /// `games.pgn` written on every move) or plain `1` (round folders off, same tags).
    pub async fn start_with(
        dir: &Path,
        boards: usize,
        clock: ClockSetup,
        reversed: impl Fn(usize) -> bool,
        news: Arc<Notify>,
        rounds: Option<bool>,
    ) -> anyhow::Result<Hall> {
        let bus = Bus::start(dir).await?;
        let sims = harness::spawn_boards(dir, boards, clock, reversed).await?;
        let ports: Vec<PathBuf> = sims.iter().map(|s| s.path()).collect();
        let log = Log::new(boards, news);
        let client = Client::start(bus.address.clone(), log.clone()).await?;
        let control = zbus::connection::Builder::address(bus.address.as_str())
            .build()
            .await
            .context("cannot connect to the private bus")?;
        let binary =
            harness::binary_under_test("EBOARDD_BENCH_DAEMON", env!("CARGO_BIN_EXE_eboardd"));
        let mut daemon = match rounds {
            None => Daemon::spawn(&binary, &bus, dir, &ports)?,
            Some(on) => {
                let mut toml = String::new();
                for (i, port) in ports.iter().enumerate() {
                    let round = if on {
                        format!("1.{}", i + 1)
                    } else {
                        "1".into()
                    };
                    toml.push_str(&format!(
                        "[[board]]\nport = \"{}\"\n[board.tags]\nRound = \"{round}\"\n",
                        port.display()
                    ));
                }
                let config = dir.join("eboardd.toml");
                std::fs::write(&config, toml)
                    .with_context(|| format!("cannot write {}", config.display()))?;
                Daemon::spawn_config(&binary, &bus, dir, &config)?
            }
        };
        procs::wait_for_name(
            &control,
            "org.eboardd.Bridge1",
            &mut daemon,
            Duration::from_secs(30),
        )
        .await?;
        for (i, sim) in sims.iter().enumerate() {
            sim.wait_for_update_mode(Duration::from_secs(60))
                .await
                .with_context(|| format!("board {i} never got the handshake"))?;
        }
        let announced = wait_until(log.news(), Duration::from_secs(60), || {
            (0..boards).all(|i| log.games(i) > 0)
        })
        .await;
        anyhow::ensure!(announced, "not every board announced its game within 60 s");
        Ok(Hall {
            bus,
            sims,
            log,
            client,
            control,
            daemon,
        })
    }

    /// One player per board, playing `games` until `stop_at` and noting each move played in
    /// `expected`.
    pub fn play(
        &self,
        games: &Arc<Vec<PgnGame>>,
        style: Style,
        stop_at: Instant,
        expected: &Arc<Mutex<Vec<Expected>>>,
    ) -> Vec<JoinHandle<PlayerResult>> {
        self.sims
            .iter()
            .enumerate()
            .map(|(i, sim)| {
                tokio::spawn(driver::play_board(
                    i,
                    sim.clone(),
                    games.clone(),
                    style,
                    stop_at,
                    self.log.clone(),
                    expected.clone(),
                ))
            })
            .collect()
    }

    /// SIGTERM to the daemon (its exit status and how long it took), then the client and the
    /// simulated boards stopped.
    pub async fn stop(&mut self) -> anyhow::Result<(std::process::ExitStatus, Duration)> {
        let exit = self.daemon.terminate().await;
        self.client.stop();
        for sim in &self.sims {
            sim.shutdown().await;
        }
        exit
    }
}

/// Each player's result, in board order (a player task that failed is an error result).
pub async fn results(players: Vec<JoinHandle<PlayerResult>>) -> Vec<PlayerResult> {
    let mut results = Vec::with_capacity(players.len());
    for p in players {
        results.push(p.await.unwrap_or_else(|e| PlayerResult {
            error: Some(format!("player task failed: {e}")),
            ..PlayerResult::default()
        }));
    }
    results
}

/// The moves played so far.
pub fn played(expected: &Mutex<Vec<Expected>>) -> Vec<Expected> {
    expected.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// Whether a listener's last `MovePlayed` for every move played is that move (`moves(board)`
/// is what it received from a board).
pub fn complete<'a>(expected: &[Expected], moves: impl Fn(usize) -> Option<&'a Moves>) -> bool {
    expected.iter().all(|e| {
        moves(e.board)
            .and_then(|m| m.get(&(e.game, e.ply)))
            .and_then(|got| got.last())
            .is_some_and(|(uci, _)| *uci == e.uci)
    })
}

/// After the players stop: waits (at most [`DRAIN_LIMIT`]; what is still missing then is
/// lost) until `complete()`, checked at every piece of `news`, then [`DRAIN`] more for late
/// extra or replaced signals.
pub async fn drain(news: &Notify, complete: impl FnMut() -> bool) {
    wait_until(news, DRAIN_LIMIT, complete).await;
    tokio::time::sleep(DRAIN).await;
}

/// Moves played against the `MovePlayed` one listener received.
#[derive(Debug, Default)]
pub struct Tally {
    /// No `MovePlayed` for the move's game and ply.
    pub lost: usize,
    /// The last `MovePlayed` for the move's game and ply is another move.
    pub wrong: usize,
    /// `MovePlayed` for a game and ply where no move was played.
    pub extra: usize,
    /// `MovePlayed` replaced by a later one for the same game and ply.
    pub provisional: usize,
    /// Each lost, wrong or extra move, named.
    pub mistakes: Vec<String>,
    /// For each move played (in `expected`'s order), when the listener received the last
    /// `MovePlayed` of that move, if it did.
    pub arrived: Vec<Option<Instant>>,
}

/// Every move in `expected` against what `listener` received from each of `boards` boards
/// (`moves(board)`).
pub fn tally<'a>(
    listener: &str,
    expected: &[Expected],
    boards: usize,
    moves: impl Fn(usize) -> Option<&'a Moves>,
) -> Tally {
    let mut t = Tally::default();
    let mut seen = HashSet::new();
    for e in expected {
        seen.insert((e.board, e.game, e.ply));
        let Some(got) = moves(e.board).and_then(|m| m.get(&(e.game, e.ply))) else {
            t.lost += 1;
            t.mistakes.push(format!(
                "{listener}: lost: board {} game {} ply {} {}: no MovePlayed",
                e.board, e.game, e.ply, e.uci
            ));
            t.arrived.push(None);
            continue;
        };
        if let Some((last, _)) = got.last().filter(|(uci, _)| *uci != e.uci) {
            t.wrong += 1;
            t.mistakes.push(format!(
                "{listener}: wrong: board {} game {} ply {}: played {}, last MovePlayed {last}",
                e.board, e.game, e.ply, e.uci
            ));
        }
        t.arrived.push(
            got.iter()
                .rev()
                .find(|(uci, _)| *uci == e.uci)
                .map(|(_, at)| *at),
        );
    }
    for b in 0..boards {
        for (&(game, ply), got) in moves(b).into_iter().flatten() {
            if seen.contains(&(b, game, ply)) {
                t.provisional += got.len() - 1;
            } else {
                t.extra += got.len();
                let ucis: Vec<&str> = got.iter().map(|(uci, _)| uci.as_str()).collect();
                t.mistakes.push(format!(
                    "{listener}: extra: board {b} game {game} ply {ply}: MovePlayed {} for no move played",
                    ucis.join(", ")
                ));
            }
        }
    }
    t
}
