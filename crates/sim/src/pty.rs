//! A [`VirtualBoard`] behind a pseudo-terminal (the pty side itself is [`super::wire`]'s).
//!
//! One task owns the board and the pty master; it feeds host bytes in, carries out physical
//! actions sent through a [`SimHandle`], and writes whatever the board has to say when it is
//! due. Board time runs `speed` times faster than the wall clock, so a game of several
//! minutes plays in seconds while the clock still counts the full time. With an infinite
//! speed the board's time is *stepped*: it stands still except when the scenario waits
//! ([`SimHandle::sleep`]), which advances it at once, emitting every clock message due on the
//! way in order. Tests use that: exact board times, no wall-clock waiting at all.
//!
//! The slave side (`/dev/pts/N`) is what a daemon opens as its serial port. With a `link`
//! path the simulator keeps a symlink there; unplugging removes it (as the device node of a
//! real USB board disappears) and replugging puts a fresh pty behind the same path.

use std::path::PathBuf;
use std::time::Duration;

use shakmaty::{Board, Piece, Square};
use tokio::time::Instant;

use super::clock::{ClockSetup, ClockSide};
use super::virtual_board::{BoardOptions, BoardStats, UpdateMode, VirtualBoard};
use super::wire::{self, Control, Device, TapReceiver};
use eboard_core::dgt::ClockReading;

/// How to run a simulated board.
#[derive(Debug, Clone)]
pub struct SimOptions {
    pub board: BoardOptions,
    /// Keep a symlink to the current slave device at this path (replaced atomically).
    pub link: Option<PathBuf>,
    /// Board milliseconds per wall-clock millisecond (1.0 = real time). Must be > 0;
    /// `f64::INFINITY` steps board time only through [`SimHandle::sleep`].
    pub speed: f64,
    /// Also hand every chunk written to the pty, with its board time, to
    /// [`SimHandle::take_tap`] (tests use it to timestamp what they read).
    pub tap: bool,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            board: BoardOptions::default(),
            link: None,
            speed: 1.0,
            tap: false,
        }
    }
}

/// A physical action on the board or the clock. Squares are physical squares named as in
/// the standard orientation (the game's squares); the board maps them to its wire indices.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Lift(Square),
    Place(Square, Piece),
    /// The player sitting at this side of the clock presses the lever.
    PressLever(ClockSide),
    /// The clock's start/stop button.
    StartStop,
    /// One of the clock's five buttons (see [`VirtualBoard::press_button`]).
    ClockButton(u8),
    /// Rearrange the pieces to this placement (a reset to a new game, a set-up position).
    SetPosition(Board),
    /// Set the clock to a new time control, stopped.
    SetClock(ClockSetup),
    /// Set the clock to a time control in its FIDE mode (periods, increments, delays),
    /// stopped.
    SetTimeControl(eboard_core::arbiter::timecontrol::TimeControl),
    /// The clock's current frame (BWTIME) with its payload XORed with this mask, sent at once
    /// between the clock's own frames: what a noisy clock–board cable delivers.
    GarbleClockFrame([u8; 7]),
    /// A Bluetooth board's battery drains or is put on charge.
    SetBattery(crate::models::SimBattery),
}

/// The simulator's state at one moment.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// Board time, ms since the simulator started.
    pub now_ms: u64,
    pub plugged: bool,
    pub mode: UpdateMode,
    pub placement: Board,
    /// What the clock shows (what a clock request would return).
    pub clock: ClockReading,
    pub display_text: Option<String>,
    pub stats: BoardStats,
    /// Output bytes dropped because nobody read the port fast enough.
    pub dropped_bytes: u64,
}

/// Entry point: [`SimBoard::spawn`].
pub struct SimBoard;

impl SimBoard {
    /// Start a simulated board on a new pty. Needs a tokio runtime with I/O and time enabled.
    pub async fn spawn(opts: SimOptions) -> anyhow::Result<SimHandle> {
        let board = VirtualBoard::new(opts.board.clone(), 0);
        Ok(SimHandle {
            control: wire::spawn(board, opts.link, opts.speed, opts.tap)?,
            options: opts.board,
        })
    }
}

/// Control of a running simulated board. Dropping it stops the simulator.
pub struct SimHandle {
    control: Control<VirtualBoard>,
    options: BoardOptions,
}

impl SimHandle {
    /// The path a daemon should open: the link if one was asked for, else the current slave
    /// device (which changes on every replug).
    pub fn path(&self) -> PathBuf {
        self.control.path()
    }

    /// The current slave device (`/dev/pts/N`).
    pub fn slave_path(&self) -> PathBuf {
        self.control.slave_path()
    }

    /// The options the board was started with.
    pub fn options(&self) -> &BoardOptions {
        &self.options
    }

    pub fn speed(&self) -> f64 {
        self.control.speed()
    }

    /// The receiver of every chunk written to the pty with its board time (only with
    /// [`SimOptions::tap`]; `None` after the first call).
    pub fn take_tap(&self) -> Option<TapReceiver> {
        self.control.take_tap()
    }

    /// Board time now, ms since the simulator started.
    pub fn now(&self) -> u64 {
        self.control.now()
    }

    /// Wait `board_ms` of board time: `board_ms / speed` on the wall clock, or, with stepped
    /// time, advance the board's time at once (everything due on the way is sent in order).
    pub async fn sleep(&self, board_ms: u64) {
        self.control.sleep(board_ms).await
    }

    /// Carry out a physical action; returns the board time it happened at.
    pub async fn act(&self, action: Action) -> anyhow::Result<u64> {
        self.control.act(action).await
    }

    pub async fn lift(&self, square: Square) -> anyhow::Result<u64> {
        self.act(Action::Lift(square)).await
    }

    pub async fn place(&self, square: Square, piece: Piece) -> anyhow::Result<u64> {
        self.act(Action::Place(square, piece)).await
    }

    pub async fn press_lever(&self, side: ClockSide) -> anyhow::Result<u64> {
        self.act(Action::PressLever(side)).await
    }

    pub async fn snapshot(&self) -> anyhow::Result<Snapshot> {
        self.control.snapshot().await
    }

    /// Pull the plug: the pty closes (the daemon reads end-of-file) and the link goes away.
    /// Pieces can still be moved; the board sees them but tells nobody. A board on its
    /// battery (a Bluetooth board) keeps its power and logs them: a Bluetooth link drop.
    pub async fn unplug(&self) -> anyhow::Result<()> {
        self.control.unplug().await
    }

    /// Plug back in: a new pty behind the same link, the board powered up in IDLE.
    pub async fn replug(&self) -> anyhow::Result<()> {
        self.control.replug().await
    }

    /// Wait until the host has put the board in an update mode (e.g. after connecting).
    pub async fn wait_for_update_mode(&self, timeout: Duration) -> anyhow::Result<UpdateMode> {
        let deadline = Instant::now() + timeout;
        loop {
            let mode = self.snapshot().await?.mode;
            if mode.sends_fields() {
                return Ok(mode);
            }
            anyhow::ensure!(
                Instant::now() < deadline,
                "no host put the simulated board in an update mode within {timeout:?}"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Stop the simulator, close the pty and remove the link.
    pub async fn shutdown(&self) {
        self.control.shutdown().await
    }
}

impl Device for VirtualBoard {
    type Action = Action;
    type Snapshot = Snapshot;
    const NAME: &'static str = "simulated board";

    fn receive(&mut self, bytes: &[u8], now: u64) {
        VirtualBoard::receive(self, bytes, now)
    }

    fn poll(&mut self, now: u64) -> Vec<u8> {
        VirtualBoard::poll(self, now)
    }

    fn next_deadline(&mut self, now: u64) -> Option<u64> {
        VirtualBoard::next_deadline(self, now)
    }

    fn act(&mut self, action: Action, now: u64) {
        match action {
            Action::Lift(square) => self.lift(square, now),
            Action::Place(square, piece) => self.place(square, piece, now),
            Action::PressLever(side) => self.press_lever(side, now),
            Action::StartStop => self.clock_mut().toggle_running(now),
            Action::ClockButton(button) => self.press_button(button, now),
            Action::SetPosition(placement) => self.set_position(&placement, now),
            Action::SetClock(setup) => self.set_clock(setup, now),
            Action::SetTimeControl(control) => self.set_time_control(control, now),
            Action::GarbleClockFrame(mask) => self.send_garbled_clock_frame(mask, now),
            Action::SetBattery(battery) => self.set_battery(battery, now),
        }
    }

    fn snapshot(&mut self, now: u64, plugged: bool, dropped_bytes: u64) -> Snapshot {
        Snapshot {
            now_ms: now,
            plugged,
            mode: self.mode(),
            placement: self.placement(),
            clock: self.clock_reading(now),
            display_text: self.display_text().map(str::to_owned),
            stats: self.stats(),
            dropped_bytes,
        }
    }

    fn unplugged(&mut self, now: u64) {
        if self.on_battery() {
            // A Bluetooth link drops; the board keeps its power and its log.
            self.link_lost();
        } else {
            // No USB, no power: the board logs nothing until it is plugged back in.
            self.power_off(now);
        }
    }

    fn replugged(&mut self, now: u64) {
        if self.powered() {
            // A Bluetooth link comes back: the board never lost its power.
            self.link_lost();
        } else {
            self.power_cycle(now);
        }
    }
}
