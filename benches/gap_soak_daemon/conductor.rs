//! The conductor kills the daemon (-9) in the middle of the games now and then and starts it
//! again a second or so later on the same state directory, while the players play on: the
//! restarted daemon has to recover the plies from its journal and the boards' memories.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use rand::rngs::SmallRng;
use rand::{Rng as _, SeedableRng as _};

use super::player::PLIES_BETWEEN_FAULTS;
use super::procs::{self, Bus, Daemon};
use super::state::{Episode, Fault, Shared};

/// How long the daemon may take to die, and to come back with every board.
const LIMIT: Duration = Duration::from_secs(60);

/// When and how often to kill.
#[derive(Debug, Clone)]
pub struct Schedule {
    /// Time from the start (or the last restart) to the next kill, ms.
    pub every_ms: (u64, u64),
    /// How long the daemon stays down, ms.
    pub down_ms: (u64, u64),
    /// At most this many kills.
    pub most: u64,
    pub seed: u64,
}

/// The daemon's processes (the hall's daemon, replaced at each kill) and where they live.
pub struct Conductor<'a> {
    pub daemon: &'a mut Daemon,
    pub binary: PathBuf,
    pub dir: PathBuf,
    pub ports: Vec<PathBuf>,
    pub kills: u64,
    /// Logs of the daemons killed.
    pub old_logs: Vec<PathBuf>,
}

impl Conductor<'_> {
    /// Kills and restarts until `stop_at`, every board being quiet at each kill.
    pub async fn run(
        &mut self,
        schedule: Schedule,
        bus: &Bus,
        control: &zbus::Connection,
        shared: Arc<Shared>,
        stop_at: Instant,
    ) -> anyhow::Result<()> {
        let mut rng = SmallRng::seed_from_u64(schedule.seed);
        while self.kills < schedule.most {
            let wait = rng.random_range(schedule.every_ms.0..=schedule.every_ms.1);
            let at = Instant::now() + Duration::from_millis(wait);
            // Then every board in the middle of a game and nothing else wrong with it.
            let hit = loop {
                if Instant::now() >= stop_at {
                    return Ok(());
                }
                {
                    let mut hall = shared.lock();
                    if hall.finished {
                        return Ok(());
                    }
                    hall.kill_due = Instant::now() >= at;
                    if hall.kill_due && hall.boards.iter().all(|b| b.quiet(PLIES_BETWEEN_FAULTS)) {
                        hall.daemon_down = true;
                        hall.kill_due = false;
                        for b in &mut hall.boards {
                            b.episodes.push(Episode {
                                fault: Fault::Kill,
                                ended: None,
                                asked: false,
                            });
                        }
                        break hall.boards.len();
                    }
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            };
            let down = rng.random_range(schedule.down_ms.0..=schedule.down_ms.1);
            self.kill_and_restart(Duration::from_millis(down), bus, control)
                .await?;
            // Back when the restarted daemon has every board connected.
            let deadline = Instant::now() + LIMIT;
            for i in 0..hit {
                loop {
                    let connected = super::arbiter::get::<bool>(control, i, "Connected")
                        .await
                        .unwrap_or(false);
                    if connected {
                        break;
                    }
                    anyhow::ensure!(
                        Instant::now() < deadline,
                        "board {i} not connected again within {LIMIT:?} of the restart"
                    );
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
            let now = Instant::now();
            let mut hall = shared.lock();
            hall.daemon_down = false;
            for b in &mut hall.boards {
                if let Some(e) = b.episodes.last_mut().filter(|e| e.fault == Fault::Kill) {
                    e.ended.get_or_insert(now);
                }
            }
        }
        Ok(())
    }

    async fn kill_and_restart(
        &mut self,
        down: Duration,
        bus: &Bus,
        control: &zbus::Connection,
    ) -> anyhow::Result<()> {
        let pid = self.daemon.pid()?;
        kill(Pid::from_raw(pid), Signal::SIGKILL).context("cannot kill eboardd")?;
        let deadline = Instant::now() + LIMIT;
        while self.daemon.exited().is_none() {
            anyhow::ensure!(Instant::now() < deadline, "eboardd {pid} did not die");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        self.kills += 1;
        tokio::time::sleep(down).await;
        let old = self.dir.join(format!("eboardd.{}.log", self.kills));
        std::fs::rename(&self.daemon.log, &old)
            .with_context(|| format!("cannot keep {}", self.daemon.log.display()))?;
        self.old_logs.push(old);
        *self.daemon = Daemon::spawn(&self.binary, bus, &self.dir, &self.ports)?;
        procs::wait_for_name(control, "org.eboardd.Bridge1", self.daemon, LIMIT).await
    }
}

/// WARN and ERROR lines of every daemon: the killed ones' (`old_logs`) first, then `daemon`'s.
pub fn complaints(old_logs: &[PathBuf], daemon: &Daemon) -> Vec<String> {
    let mut lines: Vec<String> = old_logs
        .iter()
        .flat_map(|log| procs::complaints_in(log))
        .collect();
    lines.extend(daemon.complaints());
    lines
}
