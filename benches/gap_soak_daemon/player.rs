//! The players at one board: corpus games at blitz or bullet pace with clean hands (lift,
//! set down, press: no time for more in a scramble), the plug pulled now and then for a second
//! or so while they play on; at the end of each game the record (`Moves`) is read until it
//! is the game played, and every ply is checked against it and against its `MovePlayed`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng as _, SeedableRng as _};
use shakmaty::{CastlingMode, Chess, Color, Move, Position as _};

use eboard_sim::scenario::side_of;
use eboard_sim::scramble::Pace;
use eboard_sim::{Action, ClockSetup, SimHandle};

use super::arbiter;
use super::client::Log;
use super::harness::wait_until;
use super::state::{Episode, Fault, Figures, Ply, Shared, Speed};

/// How long the record may take to come level with the game at its end (a gap waiting for
/// the arbiter, a daemon starting again, a loaded machine).
const RECORD_LIMIT: Duration = Duration::from_secs(90);
/// Plies after a fault before the next may come (the daemon has read the board again).
pub const PLIES_BETWEEN_FAULTS: usize = 4;

/// A game to play.
#[derive(Debug, Clone)]
pub struct Game {
    pub title: String,
    pub moves: Vec<Move>,
}

/// How one board plays.
#[derive(Debug, Clone)]
pub struct Plan {
    pub index: usize,
    pub speed: Speed,
    pub pace: Pace,
    pub clock: ClockSetup,
    pub seed: u64,
    /// Games in the order played; the board stops after the last.
    pub games: Vec<Game>,
    /// No new game after this, and the game under way stops here.
    pub stop_at: Instant,
    /// Plies (of the first game) at which the plug is pulled whatever the dice say.
    pub forced_unplugs: Vec<usize>,
}

/// What the board's games came to, or why it stopped.
#[derive(Debug, Default)]
pub struct Outcome {
    pub figures: Figures,
    pub error: Option<String>,
}

pub async fn play(
    plan: Plan,
    sim: Arc<SimHandle>,
    log: Log,
    conn: zbus::Connection,
    shared: Arc<Shared>,
) -> Outcome {
    let mut out = Outcome::default();
    let mut player = Player {
        rng: SmallRng::seed_from_u64(plan.seed),
        plan: &plan,
        sim: &sim,
        log: &log,
        conn: &conn,
        shared: &shared,
    };
    if let Err(e) = player.play_all(&mut out.figures).await {
        out.error = Some(format!("board {}: {e:#}", plan.index));
    }
    shared.lock().boards[plan.index].playing = false;
    out
}

struct Player<'a> {
    plan: &'a Plan,
    rng: SmallRng,
    sim: &'a SimHandle,
    log: &'a Log,
    conn: &'a zbus::Connection,
    shared: &'a Shared,
}

impl Player<'_> {
    async fn play_all(&mut self, f: &mut Figures) -> anyhow::Result<()> {
        let i = self.plan.index;
        for (n, game) in self.plan.games.iter().enumerate() {
            if Instant::now() >= self.plan.stop_at {
                break;
            }
            let before = self.log.games(i);
            if n > 0 {
                // The players set up the pieces again and reset the clock.
                self.sim
                    .act(Action::SetPosition(shakmaty::Board::default()))
                    .await?;
            }
            self.sim.act(Action::SetClock(self.plan.clock)).await?;
            let game_no = if n > 0 { before + 1 } else { before.max(1) };
            let started = wait_until(self.log.news(), RECORD_LIMIT, || {
                self.log.games(i) >= game_no
            })
            .await;
            anyhow::ensure!(
                started,
                "game {} did not start within {RECORD_LIMIT:?}",
                n + 1
            );
            {
                let mut hall = self.shared.lock();
                let board = &mut hall.boards[i];
                board.plies.clear();
                board.recorded = 0;
                board.episodes.clear();
                board.asked = 0;
                board.refused = 0;
                board.stepped_in = 0;
                board.playing = true;
            }
            let forced: &[usize] = if n == 0 {
                &self.plan.forced_unplugs
            } else {
                &[]
            };
            let start = Instant::now();
            let plies = self.play_game(game, forced).await?;
            let ply_ms = start.elapsed().as_millis() as u64;
            self.shared.lock().boards[i].playing = false;
            let mut g = self.check(game, plies, game_no).await?;
            g.ply_ms_total = ply_ms;
            f.add(&g);
        }
        Ok(())
    }

    /// Plays `game` until it ends or time is called; returns the plies played.
    async fn play_game(&mut self, game: &Game, forced: &[usize]) -> anyhow::Result<usize> {
        let i = self.plan.index;
        let pace = self.plan.pace.clone();
        let mut position = Chess::default();
        // The opponent starts the mover's clock, as at the start of a real game.
        self.sim
            .press_lever(side_of(self.sim, Color::Black))
            .await?;
        let mut k = 0;
        while k < game.moves.len() && Instant::now() < self.plan.stop_at {
            let dice = self.rng.random_bool(pace.unplug_chance);
            let may = {
                let mut hall = self.shared.lock();
                let down = hall.daemon_down || hall.kill_due;
                let board = &mut hall.boards[i];
                let may = k > 0
                    && !down
                    && board.quiet(PLIES_BETWEEN_FAULTS)
                    && (dice || forced.contains(&k));
                if may {
                    board.unplugged = true;
                    board.episodes.push(Episode {
                        fault: Fault::Unplug,
                        ended: None,
                        asked: false,
                    });
                }
                may
            };
            if may {
                let out_for = self.rng.random_range(pace.unplug_ms.0..=pace.unplug_ms.1);
                self.sim.unplug().await?;
                let until = Instant::now() + Duration::from_millis(out_for);
                while k < game.moves.len()
                    && Instant::now() + Duration::from_millis(pace.ply_ms.0) <= until
                {
                    self.play_ply(&mut position, game.moves[k]).await?;
                    k += 1;
                }
                tokio::time::sleep_until(until.into()).await;
                self.sim.replug().await?;
                let mut hall = self.shared.lock();
                let board = &mut hall.boards[i];
                board.unplugged = false;
                if let Some(e) = board.episodes.last_mut() {
                    e.ended = Some(Instant::now());
                }
                continue;
            }
            self.play_ply(&mut position, game.moves[k]).await?;
            k += 1;
        }
        Ok(k)
    }

    /// One ply in the time the pace gives: lift, a third of it, set down, a third, press, a
    /// third.
    async fn play_ply(&mut self, position: &mut Chess, m: Move) -> anyhow::Result<()> {
        let ms = self
            .rng
            .random_range(self.plan.pace.ply_ms.0..=self.plan.pace.ply_ms.1);
        let before = position.board().clone();
        let mover = side_of(self.sim, position.turn());
        position.play_unchecked(m);
        let after = position.board().clone();
        let changed = eboard_core::tracker::search_diff(&before, &after);
        for sq in changed {
            if before.piece_at(sq).is_some() {
                self.sim.lift(sq).await?;
                self.sim.sleep(10).await;
            }
        }
        self.sim.sleep(ms / 3).await;
        let mut placed = Instant::now();
        for sq in changed {
            if let Some(piece) = after.piece_at(sq) {
                placed = Instant::now();
                self.sim.place(sq, piece).await?;
                self.sim.sleep(10).await;
            }
        }
        {
            let mut hall = self.shared.lock();
            let down = hall.daemon_down;
            let board = &mut hall.boards[self.plan.index];
            let episode = board.open_episode();
            let in_gap = episode.is_some() || !board.gap.is_empty() || down || !board.caught_up();
            board.plies.push(Ply {
                uci: m.to_uci(CastlingMode::Standard).to_string(),
                placed,
                episode,
                in_gap,
            });
        }
        self.sim.sleep(ms / 3).await;
        self.sim.press_lever(mover).await?;
        self.sim.sleep(ms / 3).await;
        Ok(())
    }

    /// The game's figures once the record has come level with it (or the limit passed).
    async fn check(&self, game: &Game, plies: usize, game_no: u32) -> anyhow::Result<Figures> {
        let i = self.plan.index;
        let played: Vec<String> = self.shared.lock().boards[i]
            .plies
            .iter()
            .map(|p| p.uci.clone())
            .collect();
        anyhow::ensure!(played.len() == plies, "plies noted and played differ");
        let deadline = Instant::now() + RECORD_LIMIT;
        let (record, result) = loop {
            let record = arbiter::record(self.conn, i).await;
            let result = arbiter::get::<String>(self.conn, i, "Result").await;
            // A flag that fell while the record lagged behind the game is no end by the Laws.
            let result = match arbiter::get::<String>(self.conn, i, "Termination").await {
                Ok(t) if t == "time-forfeit" => result.map(|r| format!("* (flag fell: {r})")),
                _ => result,
            };
            if let (Ok(record), Ok(result)) = (&record, &result) {
                let level = *record == played
                    || (!result.starts_with('*')
                        && played.starts_with(record)
                        && !record.is_empty());
                if level || Instant::now() >= deadline {
                    break (record.clone(), result.clone());
                }
            } else if Instant::now() >= deadline {
                anyhow::bail!(
                    "cannot read the record at the end of {}: {:?} {:?}",
                    game.title,
                    record.err(),
                    result.err()
                );
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        // Let the last signals in before counting them.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let hall = self.shared.lock();
        let board = &hall.boards[i];
        let mut f = Figures {
            games: 1,
            plies: plies as u64,
            asked: board.asked,
            refused: board.refused,
            stepped_in: board.stepped_in,
            ..Figures::default()
        };
        for e in &board.episodes {
            match e.fault {
                Fault::Unplug => f.unplugs += 1,
                Fault::Kill => f.kills += 1,
            }
        }
        let kept = record
            .iter()
            .zip(&played)
            .take_while(|(a, b)| a == b)
            .count();
        let ended = !result.starts_with('*') && kept == record.len() && kept < played.len();
        if kept == played.len() || ended {
            f.exact = 1;
            f.ended_by_law = u64::from(ended);
        } else {
            f.lost = (played.len() - kept) as u64;
            f.wrong = u64::from(kept < record.len());
            f.mistakes.push(format!(
                "board {i} ({}), {}: the record differs from ply {}: {} recorded, {} played (result {result}); recorded {}, played {}",
                self.plan.speed.name(),
                game.title,
                kept + 1,
                record.len(),
                played.len(),
                record[kept..].join(" "),
                played[kept..].join(" "),
            ));
        }
        let signals = self.log.lock();
        let moves = signals.boards.get(i).map(|b| &b.moves);
        for (n, p) in board.plies.iter().enumerate() {
            let gap = p.episode.is_some();
            let in_record = n < kept;
            if gap {
                f.gap_plies += 1;
                if in_record {
                    let asked = p
                        .episode
                        .and_then(|e| board.episodes.get(e))
                        .is_some_and(|e| e.asked);
                    if asked {
                        f.by_arbiter += 1;
                    } else {
                        f.recovered += 1;
                    }
                }
            }
            if !in_record {
                continue;
            }
            let Some(shown) = p.shown(&board.episodes) else {
                continue;
            };
            let ply = n as u32 + 1;
            // The first MovePlayed of this move for this ply of this game or later (a restarted
            // daemon's signals), no earlier than a second before the board showed it.
            let arrival = moves
                .into_iter()
                .flatten()
                .filter(|((g, q), _)| *g >= game_no && *q == ply)
                .flat_map(|(_, got)| got.iter())
                .filter(|(uci, at)| *uci == p.uci && *at + Duration::from_secs(1) >= shown)
                .map(|(_, at)| *at)
                .min();
            match arrival {
                Some(at) => {
                    let ms = at.saturating_duration_since(shown).as_millis() as u64;
                    let what = format!(
                        "board {i} {}, {} ply {ply}{}",
                        self.plan.speed.name(),
                        game.title,
                        match p.episode.and_then(|e| board.episodes.get(e)) {
                            Some(e) if e.fault == Fault::Kill =>
                                " (made while the daemon was down)",
                            Some(_) => " (made while unplugged)",
                            None => "",
                        }
                    );
                    f.note_stall(ms, &what, p.in_gap);
                }
                None => f.unsignalled += 1,
            }
        }
        Ok(f)
    }
}
