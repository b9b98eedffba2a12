//! The players: each simulated board plays corpus games at a human pace with human handling,
//! and notes, for every move, the instants at which its final sensor update went out (the
//! moments the board came to show the position after the move).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use shakmaty::{Board, CastlingMode, Chess, Color, Move, Position as _};

use eboard_sim::handling::{Handling, SensorStep};
use eboard_sim::scenario::{Hands, side_of};
use eboard_sim::{Action, ClockSetup, Noise, Pace, PgnGame, SimHandle};

use super::client::Log;
use super::harness::wait_until;

/// One move a board played, as the benchmark expects the daemon to report it.
#[derive(Debug, Clone)]
pub struct Expected {
    pub board: usize,
    /// Game number on this board (1 = the first), as the client counts `GameStarted`.
    pub game: u32,
    pub ply: u32,
    pub uci: String,
    /// Every sensor update that turned the board into the position after the move (normally
    /// one; a hand that leaves the square and comes back makes more), as the instants just
    /// before asking the simulator for it and just after it confirmed: the simulator's writer
    /// task puts the bytes on the pty in between or shortly after.
    pub reached: Vec<(Instant, Instant)>,
}

/// How the players play.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub pace: Pace,
    pub noise: Noise,
    pub clock: ClockSetup,
}

impl Style {
    /// The clock of every benchmark game: 15 minutes + 10 s a move.
    pub const CLOCK: ClockSetup = ClockSetup {
        base_ms: 15 * 60_000,
        increment_ms: 10_000,
    };

    /// A smoke run's players: quick and clean, so a few seconds hold a few dozen moves.
    pub fn smoke() -> Style {
        Style {
            pace: Pace {
                think_ms: (50, 150),
                press_ms: (20, 50),
                hand_ms: (20, 60),
            },
            noise: Noise::Clean,
            clock: Style::CLOCK,
        }
    }

    /// A benchmark's players: people at `pace`, with human handling.
    pub fn bench(pace: Pace) -> Style {
        Style {
            pace,
            noise: Noise::Noisy,
            clock: Style::CLOCK,
        }
    }
}

/// What a board's player reports back.
#[derive(Debug, Default)]
pub struct PlayerResult {
    pub games: u32,
    /// Plies of the game on the board when the player stopped.
    pub plies_in_last_game: usize,
    pub error: Option<String>,
}

/// Play `games` (cycling) on board `index` until `stop_at`, finishing the move in hand.
pub async fn play_board(
    index: usize,
    sim: Arc<SimHandle>,
    games: Arc<Vec<PgnGame>>,
    style: Style,
    stop_at: Instant,
    log: Log,
    expected: Arc<Mutex<Vec<Expected>>>,
) -> PlayerResult {
    let mut result = PlayerResult::default();
    let mut player = Player {
        index,
        sim: &sim,
        hands: Hands::new(style.pace, index as u64 + 1),
        generator: Handling::new(index as u64 + 1, style.noise).with_clock(true),
        style,
        log,
        expected,
    };
    if let Err(e) = player.play(&games, stop_at, &mut result).await {
        result.error = Some(format!("board {index}: {e:#}"));
    }
    result
}

struct Player<'a> {
    index: usize,
    sim: &'a SimHandle,
    hands: Hands,
    generator: Handling,
    style: Style,
    log: Log,
    expected: Arc<Mutex<Vec<Expected>>>,
}

impl Player<'_> {
    async fn play(
        &mut self,
        games: &[PgnGame],
        stop_at: Instant,
        result: &mut PlayerResult,
    ) -> anyhow::Result<()> {
        anyhow::ensure!(!games.is_empty(), "no games to play");
        // Each board starts at a different game of the corpus.
        let mut next_game = self.index * 7 % games.len();
        let mut game_no = 0u32;
        while Instant::now() < stop_at {
            let game = &games[next_game];
            next_game = (next_game + 1) % games.len();
            game_no += 1;
            if game_no > 1 {
                // The players set up the pieces again and reset the clock.
                self.sim.act(Action::SetPosition(Board::default())).await?;
                self.sim.act(Action::SetClock(self.style.clock)).await?;
            }
            self.wait_for_game(game_no).await?;
            result.games = game_no;
            result.plies_in_last_game = 0;
            let mut position = Chess::default();
            let moves = game.moves()?;
            // The opponent starts the mover's clock, as at the start of a real game.
            self.sim
                .press_lever(side_of(self.sim, Color::Black))
                .await?;
            for (ply, mv) in moves.iter().enumerate() {
                if Instant::now() >= stop_at {
                    return Ok(());
                }
                if !self
                    .play_move(&position, *mv, game_no, ply as u32 + 1, stop_at)
                    .await?
                {
                    return Ok(());
                }
                position.play_unchecked(*mv);
                result.plies_in_last_game = ply + 1;
            }
            // A finished game: the players look at the final position for a moment.
            self.hands.think(self.sim).await;
        }
        Ok(())
    }

    /// Wait until the client has seen game `game_no` start on this board.
    async fn wait_for_game(&self, game_no: u32) -> anyhow::Result<()> {
        let seen = wait_until(self.log.news(), Duration::from_secs(30), || {
            self.log.games(self.index) >= game_no
        })
        .await;
        anyhow::ensure!(
            seen,
            "GameStarted of game {game_no} not received within 30 s"
        );
        Ok(())
    }

    /// Think, move the pieces by hand, press the clock (as the simulator's scenario driver
    /// does), noting when the board came to show the move.
    /// Returns false when `stop_at` came while thinking (the move was not made).
    async fn play_move(
        &mut self,
        position: &Chess,
        mv: Move,
        game: u32,
        ply: u32,
        stop_at: Instant,
    ) -> anyhow::Result<bool> {
        let think = self.hands.between(self.style.pace.think_ms);
        let left = stop_at
            .saturating_duration_since(Instant::now())
            .as_millis() as u64;
        self.sim.sleep(think.min(left)).await;
        if think >= left || Instant::now() >= stop_at {
            // Time was called while the player was thinking.
            return Ok(false);
        }
        let steps = self.generator.steps(position, mv);
        let target = position.clone().play(mv)?.board().clone();
        let mut board = position.board().clone();
        let mut reached = Vec::new();
        let mover = side_of(self.sim, position.turn());
        // Each time the board comes to show the move before the press is noted (a hand that
        // leaves the square and comes back makes it more than once).
        let press = steps.iter().position(|s| *s == SensorStep::Press);
        self.hands
            .hand(self.sim, &steps, mover, |i, asked, done| {
                let was = board == target;
                steps[i].apply(&mut board);
                if press.is_none_or(|p| i < p) && !was && board == target {
                    reached.push((asked, done));
                }
            })
            .await?;
        let expected = Expected {
            board: self.index,
            game,
            ply,
            uci: mv.to_uci(CastlingMode::Standard).to_string(),
            reached,
        };
        self.expected
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(expected);
        Ok(true)
    }
}
