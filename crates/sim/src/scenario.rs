//! The scenario driver: plays games on a simulated board the way people do — think, move
//! the pieces (with the handling generator's lifts, placements and pauses), press the clock —
//! and injects the awkward cases a daemon must survive: illegal placements corrected or
//! completed by a press, takebacks, adjustments, flag falls, a reset to a new game, moves
//! made while the board is unplugged.
//!
//! All times are board milliseconds; the simulator's `speed` turns them into wall time.

use std::time::Instant;

use anyhow::Context as _;
use rand::rngs::SmallRng;
use rand::{Rng as _, SeedableRng as _};
use shakmaty::san::San;
use shakmaty::{Board, Chess, Color, Move, Position as _, Square};

use super::clock::{ClockSetup, ClockSide};
use super::handling::{Handling, Noise, SensorStep};
use super::pgn::PgnGame;
use super::pty::{Action, SimHandle};

/// How fast people play.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pace {
    /// Thinking time before each move, board ms, drawn uniformly from this range.
    pub think_ms: (u64, u64),
    /// Time from the last piece set down to the clock press, when the generator gives none.
    pub press_ms: (u64, u64),
    /// Gap between two sensor steps the generator put no pause between.
    pub hand_ms: (u64, u64),
}

impl Pace {
    /// Blitz-like human pace: 1–8 s to think, a quarter to half a second per hand movement.
    pub fn human() -> Pace {
        Pace {
            think_ms: (1_000, 8_000),
            press_ms: (200, 600),
            hand_ms: (150, 450),
        }
    }

    /// Short but non-zero gaps, for tests that still want ordered, distinct sensor events.
    pub fn quick() -> Pace {
        Pace {
            think_ms: (20, 60),
            press_ms: (5, 15),
            hand_ms: (2, 6),
        }
    }
}

impl Default for Pace {
    fn default() -> Self {
        Pace::human()
    }
}

/// Options of a scenario run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScenarioOptions {
    pub pace: Pace,
    /// `Clean`: lift + place only; `Noisy`: the human variants of the handling generator.
    pub noise: Noise,
    pub seed: u64,
    /// Press the clock after each move.
    pub press_clock: bool,
}

impl Default for ScenarioOptions {
    fn default() -> Self {
        ScenarioOptions {
            pace: Pace::human(),
            noise: Noise::Noisy,
            seed: 1,
            press_clock: true,
        }
    }
}

/// One thing that happens at the board.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Think, play this move (SAN) by hand, press the clock.
    Move(String),
    /// Play these moves one after the other.
    Moves(Vec<String>),
    /// The player to move picks up the piece on `from` and sets it on `to` although no
    /// legal move does that (pieces on `to` are taken off). It stays there until
    /// [`Step::CorrectIllegal`]; a [`Step::PressClock`] completes it.
    IllegalPlacement {
        from: Square,
        to: Square,
    },
    /// Put the pieces back as they were before the illegal placement.
    CorrectIllegal,
    /// Take back the last `plies` moves on the board (no clock press).
    TakeBack(usize),
    /// Lift a piece and put it back on the same square.
    Adjust(Square),
    /// The player to move presses the clock (without a move, or to complete one).
    PressClock,
    /// Wait until the running side's flag falls.
    FlagFall,
    /// Wait (board ms).
    Pause(u64),
    /// The start/stop button of the clock.
    StartStop,
    /// One of the clock's five buttons (0x31 back, 0x34 minus, 0x33 run, 0x32 plus, 0x35 OK).
    ClockButton(u8),
    /// The DGT result gesture: the player to move puts his king on a centre square, then the
    /// opponent his, both left there for longer than the 2 s the host waits. `result` is
    /// `1-0` (light squares d5/e4), `0-1` (dark d4/e5) or `1/2-1/2` (one of each).
    ResultGesture(eboard_core::vocab::GameResult),
    /// Set up this start position on the board (a Chess960 start, say) and reset the clock
    /// to `clock`; the game goes on from it.
    SetUp {
        position: Box<Chess>,
        clock: ClockSetup,
    },
    /// Set up the start position again and reset the clock to `clock`.
    NewGame {
        clock: ClockSetup,
    },
    Unplug,
    Replug,
}

/// What a scenario did, for the caller's checks and logs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Played {
    /// Moves played (UCI), takebacks removing them again.
    pub uci: Vec<String>,
    /// Every sensor step sent to the board.
    pub sensor_steps: usize,
    pub presses: usize,
}

/// Drives one simulated board through scenario steps, keeping the game position.
pub struct Scenario<'a> {
    sim: &'a SimHandle,
    opts: ScenarioOptions,
    hands: Hands,
    generator: Handling,
    position: Chess,
    history: Vec<(Chess, Move)>,
    /// The placement to go back to when an illegal placement is corrected.
    before_illegal: Option<Board>,
    played: Played,
    clock_started: bool,
    /// New games set the clock to this control in its FIDE mode instead of their setup.
    time_control: Option<eboard_core::arbiter::timecontrol::TimeControl>,
}

impl<'a> Scenario<'a> {
    /// A scenario from the standard start position (the simulator's power-up position).
    pub fn new(sim: &'a SimHandle, opts: ScenarioOptions) -> Self {
        Scenario {
            sim,
            hands: Hands::new(opts.pace, opts.seed),
            generator: Handling::new(opts.seed, opts.noise).with_clock(opts.press_clock),
            opts,
            position: Chess::default(),
            history: Vec::new(),
            before_illegal: None,
            played: Played::default(),
            clock_started: false,
            time_control: None,
        }
    }

    /// New games (`NewGame`, `SetUp`) set the clock to `control` in its FIDE mode instead of
    /// their clock setup.
    pub fn with_time_control(
        mut self,
        control: Option<eboard_core::arbiter::timecontrol::TimeControl>,
    ) -> Self {
        self.time_control = control;
        self
    }

    /// The clock of a new game: the scenario's time control, or else `setup`.
    async fn set_clock(&self, setup: ClockSetup) -> anyhow::Result<()> {
        let action = match &self.time_control {
            Some(control) => Action::SetTimeControl(control.clone()),
            None => Action::SetClock(setup),
        };
        self.sim.act(action).await?;
        Ok(())
    }

    /// The players speed up or slow down from here on (a time scramble begins); the game
    /// goes on where it stands.
    pub fn set_pace(&mut self, pace: Pace) {
        self.opts.pace = pace;
        self.hands = Hands::new(pace, self.opts.seed.wrapping_add(self.history.len() as u64));
    }

    /// The position the players believe stands on the board.
    pub fn position(&self) -> &Chess {
        &self.position
    }

    pub fn played(&self) -> &Played {
        &self.played
    }

    /// Run steps in order.
    pub async fn run(&mut self, steps: &[Step]) -> anyhow::Result<()> {
        for step in steps {
            self.step(step).await?;
        }
        Ok(())
    }

    /// Play a whole PGN game from its start position (the board is set up first if the game
    /// starts elsewhere or the board is not in that position).
    pub async fn play_game(&mut self, game: &PgnGame) -> anyhow::Result<()> {
        let start = game.start_position()?;
        if start.board() != self.position.board() || !self.history.is_empty() {
            self.sim
                .act(Action::SetPosition(start.board().clone()))
                .await?;
        }
        self.position = start;
        self.history.clear();
        let moves = game.moves()?;
        for (ply, mv) in moves.iter().enumerate() {
            self.play_move(mv)
                .await
                .with_context(|| format!("ply {} of {}", ply + 1, game.title()))?;
        }
        Ok(())
    }

    /// Carry out one step.
    pub async fn step(&mut self, step: &Step) -> anyhow::Result<()> {
        match step {
            Step::Move(san) => {
                let mv = self.parse_san(san)?;
                self.play_move(&mv).await?;
            }
            Step::Moves(sans) => {
                for san in sans {
                    let mv = self.parse_san(san)?;
                    self.play_move(&mv).await?;
                }
            }
            Step::IllegalPlacement { from, to } => {
                let piece = self
                    .position
                    .board()
                    .piece_at(*from)
                    .with_context(|| format!("no piece on {from} to misplace"))?;
                if self.before_illegal.is_none() {
                    self.before_illegal = Some(self.position.board().clone());
                }
                self.think().await;
                let mut steps = vec![SensorStep::Lift(*from)];
                if self.position.board().piece_at(*to).is_some() {
                    steps.push(SensorStep::Lift(*to));
                }
                steps.push(SensorStep::Place(*to, piece));
                self.hand(&steps).await?;
            }
            Step::CorrectIllegal => {
                let target = self
                    .before_illegal
                    .take()
                    .context("no illegal placement to correct")?;
                let current = self.sim.snapshot().await?.placement;
                let steps = transition(&current, &target);
                self.hand(&steps).await?;
            }
            Step::TakeBack(plies) => {
                anyhow::ensure!(
                    *plies <= self.history.len(),
                    "cannot take back {plies} plies, only {} played",
                    self.history.len()
                );
                let keep = self.history.len() - plies;
                let target = self.history[keep].0.clone();
                self.history.truncate(keep);
                let len = self.played.uci.len();
                self.played.uci.truncate(len.saturating_sub(*plies));
                let steps = transition(self.position.board(), target.board());
                self.position = target;
                self.hand(&steps).await?;
            }
            Step::Adjust(square) => {
                let piece = self
                    .position
                    .board()
                    .piece_at(*square)
                    .with_context(|| format!("no piece on {square} to adjust"))?;
                self.hand(&[SensorStep::Lift(*square), SensorStep::Place(*square, piece)])
                    .await?;
            }
            Step::PressClock => self.press().await?,
            Step::FlagFall => {
                let clock = self.sim.snapshot().await?.clock;
                let shown = if clock.status.left_running {
                    clock.left
                } else {
                    clock.right
                };
                anyhow::ensure!(clock.status.running, "the clock is not running");
                // The display rounds up, so this is always past the real flag fall.
                self.sim.sleep(shown.as_millis() + 1_000).await;
            }
            Step::Pause(ms) => self.sim.sleep(*ms).await,
            Step::StartStop => {
                self.sim.act(Action::StartStop).await?;
            }
            Step::ClockButton(button) => {
                self.sim.act(Action::ClockButton(*button)).await?;
            }
            Step::NewGame { clock } => {
                self.sim.act(Action::SetPosition(Board::default())).await?;
                self.set_clock(*clock).await?;
                self.position = Chess::default();
                self.history.clear();
                self.before_illegal = None;
                self.clock_started = false;
            }
            Step::ResultGesture(result) => self.result_gesture(*result).await?,
            Step::SetUp { position, clock } => {
                self.sim
                    .act(Action::SetPosition(position.board().clone()))
                    .await?;
                self.set_clock(*clock).await?;
                self.position = (**position).clone();
                self.history.clear();
                self.before_illegal = None;
                self.clock_started = false;
            }
            Step::Unplug => self.sim.unplug().await?,
            Step::Replug => self.sim.replug().await?,
        }
        Ok(())
    }

    async fn result_gesture(
        &mut self,
        result: eboard_core::vocab::GameResult,
    ) -> anyhow::Result<()> {
        use eboard_core::vocab::GameResult;
        use shakmaty::Role;
        let board = self.position.board().clone();
        let free = |sq: Square| board.piece_at(sq).is_none_or(|p| p.role == Role::King);
        let pairs: &[(Square, Square)] = match result {
            GameResult::WhiteWins => &[(Square::E4, Square::D5), (Square::D5, Square::E4)],
            GameResult::BlackWins => &[(Square::D4, Square::E5), (Square::E5, Square::D4)],
            GameResult::Draw => &[
                (Square::E4, Square::D4),
                (Square::D5, Square::E5),
                (Square::D4, Square::E4),
                (Square::E5, Square::D5),
            ],
            GameResult::Ongoing => anyhow::bail!("`*` is no result to show (1-0, 0-1, 1/2-1/2)"),
        };
        let mover = self.position.turn();
        let (mine, theirs) = pairs
            .iter()
            .copied()
            .find(|&(a, b)| free(a) && free(b))
            .context("the centre squares are taken: no room for the result gesture")?;
        let mut steps = Vec::new();
        for (color, to) in [(mover, mine), (mover.other(), theirs)] {
            let from = board.king_of(color).context("no king on the board")?;
            if from != to {
                let king = shakmaty::Piece {
                    color,
                    role: Role::King,
                };
                steps.extend([SensorStep::Lift(from), SensorStep::Place(to, king)]);
            }
        }
        self.think().await;
        self.hand(&steps).await?;
        // Left standing past the host's two seconds.
        self.sim.sleep(3_000).await;
        Ok(())
    }

    fn parse_san(&self, text: &str) -> anyhow::Result<Move> {
        let san: San = text
            .parse()
            .with_context(|| format!("cannot read SAN {text:?}"))?;
        san.to_move(&self.position)
            .with_context(|| format!("{text} is not legal in {}", self.fen()))
    }

    fn fen(&self) -> String {
        shakmaty::fen::Fen::from_position(&self.position, shakmaty::EnPassantMode::Legal)
            .to_string()
    }

    /// Think, move the pieces for `mv`, press the clock.
    pub async fn play_move(&mut self, mv: &Move) -> anyhow::Result<()> {
        anyhow::ensure!(
            self.position.is_legal(*mv),
            "{mv} is not legal in {}",
            self.fen()
        );
        if self.opts.press_clock && !self.clock_started {
            // The opponent starts the mover's clock, as at the start of a real game.
            self.clock_started = true;
            let opponent = self.side_of(!self.position.turn());
            self.sim.press_lever(opponent).await?;
            self.played.presses += 1;
        }
        self.think().await;
        let steps = self.generator.steps(&self.position, *mv);
        self.hand(&steps).await?;
        self.played
            .uci
            .push(mv.to_uci(shakmaty::CastlingMode::Standard).to_string());
        let before = self.position.clone();
        self.position.play_unchecked(*mv);
        self.history.push((before, *mv));
        Ok(())
    }

    /// The player to move presses the clock.
    async fn press(&mut self) -> anyhow::Result<()> {
        self.press_for(self.position.turn()).await
    }

    async fn press_for(&mut self, color: Color) -> anyhow::Result<()> {
        let side = self.side_of(color);
        self.sim.press_lever(side).await?;
        self.played.presses += 1;
        Ok(())
    }

    fn side_of(&self, color: Color) -> ClockSide {
        side_of(self.sim, color)
    }

    async fn think(&mut self) {
        self.hands.think(self.sim).await;
    }

    /// Send sensor steps to the board, the player to move pressing the clock at a press.
    async fn hand(&mut self, steps: &[SensorStep]) -> anyhow::Result<()> {
        // The position has not been advanced yet: the mover is the one to press.
        let mover = self.side_of(self.position.turn());
        let handed = self
            .hands
            .hand(self.sim, steps, mover, |_, _, _| {})
            .await?;
        self.played.sensor_steps += handed.sensor_steps;
        self.played.presses += handed.presses;
        Ok(())
    }
}

/// The clock side of `color`'s player on this board.
pub fn side_of(sim: &SimHandle, color: Color) -> ClockSide {
    match color {
        Color::White => sim.options().white_display,
        Color::Black => sim.options().white_display.other(),
    }
}

/// A player's hands at the board: the pace's random gaps, and sensor steps sent one after the
/// other with them. [`Scenario`] plays with these; a caller that drives a board itself (the
/// load benchmarks) uses the same, watching each sensor step as it goes out.
pub struct Hands {
    pace: Pace,
    rng: SmallRng,
}

/// What [`Hands::hand`] sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Handed {
    pub sensor_steps: usize,
    pub presses: usize,
}

impl Hands {
    /// Hands at `pace`; `seed` makes their gaps repeatable.
    pub fn new(pace: Pace, seed: u64) -> Hands {
        Hands {
            pace,
            rng: SmallRng::seed_from_u64(seed),
        }
    }

    /// A time drawn uniformly from `lo..=hi` (board ms).
    pub fn between(&mut self, (lo, hi): (u64, u64)) -> u64 {
        if hi <= lo {
            lo
        } else {
            self.rng.random_range(lo..=hi)
        }
    }

    /// Think for a time drawn from the pace.
    pub async fn think(&mut self, sim: &SimHandle) {
        let ms = self.between(self.pace.think_ms);
        sim.sleep(ms).await;
    }

    /// Send `steps` to the board with the pace's gaps between plain steps; a press is
    /// `mover`'s. `sent(i, asked, done)` is told of each lift or placement (`steps[i]`), with
    /// the instants just before it was asked of the simulator and just after it was taken.
    pub async fn hand(
        &mut self,
        sim: &SimHandle,
        steps: &[SensorStep],
        mover: ClockSide,
        mut sent: impl FnMut(usize, Instant, Instant),
    ) -> anyhow::Result<Handed> {
        let mut handed = Handed::default();
        for (i, step) in steps.iter().enumerate() {
            let asked = Instant::now();
            match *step {
                SensorStep::Lift(square) => {
                    sim.act(Action::Lift(square)).await?;
                }
                SensorStep::Place(square, piece) => {
                    sim.act(Action::Place(square, piece)).await?;
                }
                SensorStep::Pause(ms) => {
                    sim.sleep(ms).await;
                    continue;
                }
                SensorStep::Press => {
                    // A pause the generator put before the press is the wait already.
                    if !matches!(steps.get(i.wrapping_sub(1)), Some(SensorStep::Pause(_))) {
                        let wait = self.between(self.pace.press_ms);
                        sim.sleep(wait).await;
                    }
                    sim.press_lever(mover).await?;
                    handed.presses += 1;
                    continue;
                }
            }
            sent(i, asked, Instant::now());
            handed.sensor_steps += 1;
            let next_is_pause = matches!(steps.get(i + 1), Some(SensorStep::Pause(_)));
            if !next_is_pause && i + 1 < steps.len() {
                let gap = self.between(self.pace.hand_ms);
                sim.sleep(gap).await;
            }
        }
        Ok(handed)
    }
}

/// Hand steps turning placement `from` into `to`: first every piece that leaves or changes
/// is lifted, then every square that needs a piece gets it.
pub fn transition(from: &Board, to: &Board) -> Vec<SensorStep> {
    let mut steps = Vec::new();
    for square in Square::ALL {
        let (a, b) = (from.piece_at(square), to.piece_at(square));
        if a.is_some() && a != b {
            steps.push(SensorStep::Lift(square));
        }
    }
    for square in Square::ALL {
        let (a, b) = (from.piece_at(square), to.piece_at(square));
        if let Some(piece) = b
            && a != b
        {
            steps.push(SensorStep::Place(square, piece));
        }
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(board: &mut Board, steps: &[SensorStep]) {
        for s in steps {
            s.apply(board);
        }
    }

    #[test]
    fn transition_rearranges() {
        let start = Board::default();
        let mut after = Chess::default();
        let mv = San::from_ascii(b"e4").unwrap().to_move(&after).unwrap();
        after.play_unchecked(mv);
        let mut board = after.board().clone();
        apply(&mut board, &transition(after.board(), &start));
        assert_eq!(board, start);
    }
}
