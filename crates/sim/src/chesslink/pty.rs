//! A [`MillenniumBoard`] behind a pseudo-terminal: the pty, link and time base every
//! simulated device shares ([`crate::wire`]) driving the Millennium board.
//!
//! The slave device ([`ChessLinkHandle::path`]) is what a host opens: 38400 baud, and since
//! a pty forces 8 data bits without parity, the host makes the parity bit itself in bit 7
//! ([`ParityBy::Host`](eboard_core::chesslink::ParityBy::Host)). Board time runs `speed`
//! times faster than the wall clock, or is stepped with an infinite speed, as for the DGT
//! board.

use std::path::PathBuf;
use std::time::Duration;

use eboard_core::chesslink::{DecoderStats, LedPattern};
use shakmaty::{Board, Chess, Piece, Position as _, Square};
use tokio::time::Instant;

use super::board::{MillenniumBoard, MillenniumOptions, MillenniumStats};
use crate::handling::{Handling, Noise, SensorStep};
use crate::pgn::PgnGame;
use crate::wire::{self, Control, Device, TapReceiver};

/// How long a position stands after each move of [`ChessLinkHandle::play_game`] before the
/// next move's hand comes (longer than the slowest scan's debounce: 5 × 40.96 ms).
pub const AFTER_MOVE_MS: u64 = 250;

/// How to run a simulated Millennium board.
#[derive(Debug, Clone)]
pub struct ChessLinkSimOptions {
    pub board: MillenniumOptions,
    /// Keep a symlink to the current slave device at this path.
    pub link: Option<PathBuf>,
    /// Board ms per wall-clock ms; `f64::INFINITY` steps board time only through
    /// [`ChessLinkHandle::sleep`].
    pub speed: f64,
    /// Hand every chunk written, with its board time, to [`ChessLinkHandle::take_tap`].
    pub tap: bool,
}

impl Default for ChessLinkSimOptions {
    fn default() -> Self {
        ChessLinkSimOptions {
            board: MillenniumOptions::default(),
            link: None,
            speed: 1.0,
            tap: false,
        }
    }
}

/// A physical action on the board (squares are the game's squares).
#[derive(Debug, Clone, PartialEq)]
pub enum ChessLinkAction {
    Lift(Square),
    Place(Square, Piece),
    SetPosition(Board),
    /// These bytes on the line at once, as they are (noise on the cable).
    Junk(Vec<u8>),
}

/// The simulated board at one moment.
#[derive(Debug, Clone)]
pub struct ChessLinkSnapshot {
    pub now_ms: u64,
    pub plugged: bool,
    pub placement: Board,
    /// What the LEDs show.
    pub leds: LedPattern,
    /// Option bytes 00–07.
    pub option_bytes: [u8; 8],
    pub stats: MillenniumStats,
    /// What the board's command decoder dropped.
    pub line: DecoderStats,
    /// Output bytes dropped because nobody read the port.
    pub dropped_bytes: u64,
}

/// Entry point: [`ChessLinkSim::spawn`].
pub struct ChessLinkSim;

impl ChessLinkSim {
    /// Start a simulated Millennium board on a new pty (needs a tokio runtime).
    pub async fn spawn(opts: ChessLinkSimOptions) -> anyhow::Result<ChessLinkHandle> {
        let board = MillenniumBoard::new(opts.board.clone(), 0);
        Ok(ChessLinkHandle {
            control: wire::spawn(board, opts.link, opts.speed, opts.tap)?,
            options: opts.board,
        })
    }
}

/// Control of a running simulated Millennium board. Dropping it stops the simulator.
pub struct ChessLinkHandle {
    control: Control<MillenniumBoard>,
    options: MillenniumOptions,
}

impl ChessLinkHandle {
    /// The path a host should open: the link if one was asked for, else the slave device.
    pub fn path(&self) -> PathBuf {
        self.control.path()
    }

    pub fn options(&self) -> &MillenniumOptions {
        &self.options
    }

    /// Board time now, ms since the simulator started.
    pub fn now(&self) -> u64 {
        self.control.now()
    }

    /// Every chunk written to the pty with its board time (with the `tap` option; `None`
    /// after the first call).
    pub fn take_tap(&self) -> Option<TapReceiver> {
        self.control.take_tap()
    }

    /// Wait `board_ms` of board time (stepped time: advance it at once, sending everything
    /// due on the way in order).
    pub async fn sleep(&self, board_ms: u64) {
        self.control.sleep(board_ms).await
    }

    /// Carry out a physical action; returns the board time it happened at.
    pub async fn act(&self, action: ChessLinkAction) -> anyhow::Result<u64> {
        self.control.act(action).await
    }

    pub async fn snapshot(&self) -> anyhow::Result<ChessLinkSnapshot> {
        self.control.snapshot().await
    }

    /// Every LED state the board was put in, with its board time, oldest first.
    pub async fn led_log(&self) -> anyhow::Result<Vec<(u64, LedPattern)>> {
        self.control
            .inspect(|board: &MillenniumBoard| board.led_log().cloned().collect())
            .await
    }

    /// Pull the plug: the pty closes, the link goes away, the board loses power (LEDs off).
    pub async fn unplug(&self) -> anyhow::Result<()> {
        self.control.unplug().await
    }

    /// Plug back in: a new pty behind the same link, the board powered up.
    pub async fn replug(&self) -> anyhow::Result<()> {
        self.control.replug().await
    }

    /// Carry out a hand's sensor steps: lifts, placements and pauses (a clock press does
    /// nothing: the board has no clock).
    pub async fn hand(&self, steps: &[SensorStep]) -> anyhow::Result<()> {
        for step in steps {
            match *step {
                SensorStep::Lift(square) => {
                    self.act(ChessLinkAction::Lift(square)).await?;
                }
                SensorStep::Place(square, piece) => {
                    self.act(ChessLinkAction::Place(square, piece)).await?;
                }
                SensorStep::Pause(ms) => self.sleep(ms).await,
                SensorStep::Press => {}
            }
        }
        Ok(())
    }

    /// Play `game` by hand from its start position (set up at once), with the DGT
    /// simulator's hands: `noise` chooses their variants, `seed` their draw; each position
    /// stands [`AFTER_MOVE_MS`] before the next move. Returns the positions after each move.
    pub async fn play_game(
        &self,
        game: &PgnGame,
        seed: u64,
        noise: Noise,
    ) -> anyhow::Result<Vec<Chess>> {
        let mut position = game.start_position()?;
        self.act(ChessLinkAction::SetPosition(position.board().clone()))
            .await?;
        let mut hands = Handling::new(seed, noise).with_clock(false);
        let mut after = Vec::new();
        for mv in game.moves()? {
            self.hand(&hands.steps(&position, mv)).await?;
            // The hand leaves the board: the position stands for a few scans at least.
            self.sleep(AFTER_MOVE_MS).await;
            position = position.play(mv)?;
            after.push(position.clone());
        }
        Ok(after)
    }

    /// Wait until the board's option byte `address` holds `value` (a host configured it).
    pub async fn wait_for_option(
        &self,
        address: u8,
        value: u8,
        timeout: Duration,
    ) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            let snap = self.snapshot().await?;
            if snap.option_bytes.get(usize::from(address)) == Some(&value) {
                return Ok(());
            }
            anyhow::ensure!(
                Instant::now() < deadline,
                "option byte {address:02X} did not become {value:02X} within {timeout:?}"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Stop the simulator, close the pty and remove the link.
    pub async fn shutdown(&self) {
        self.control.shutdown().await
    }
}

impl Device for MillenniumBoard {
    type Action = ChessLinkAction;
    type Snapshot = ChessLinkSnapshot;
    const NAME: &'static str = "simulated ChessLink board";

    fn receive(&mut self, bytes: &[u8], now: u64) {
        MillenniumBoard::receive(self, bytes, now)
    }

    fn poll(&mut self, now: u64) -> Vec<u8> {
        MillenniumBoard::poll(self, now)
    }

    fn next_deadline(&mut self, now: u64) -> Option<u64> {
        MillenniumBoard::next_deadline(self, now)
    }

    fn act(&mut self, action: ChessLinkAction, now: u64) {
        match action {
            ChessLinkAction::Lift(sq) => self.lift(sq, now),
            ChessLinkAction::Place(sq, piece) => self.place(sq, piece, now),
            ChessLinkAction::SetPosition(b) => self.set_position(&b, now),
            ChessLinkAction::Junk(bytes) => self.send_raw(bytes, now),
        }
    }

    fn snapshot(&mut self, now: u64, plugged: bool, dropped_bytes: u64) -> ChessLinkSnapshot {
        ChessLinkSnapshot {
            now_ms: now,
            plugged,
            placement: self.placement().clone(),
            leds: *self.leds(),
            option_bytes: std::array::from_fn(|a| self.option_byte(a as u8)),
            stats: self.stats(),
            line: self.line_stats(),
            dropped_bytes,
        }
    }

    /// The ChessLink module is powered from USB: unplugged, the board is dark.
    fn unplugged(&mut self, now: u64) {
        self.power_off(now);
    }

    fn replugged(&mut self, now: u64) {
        self.power_cycle(now);
    }
}
