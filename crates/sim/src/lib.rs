//! A virtual DGT e-board with a DGT 3000 clock behind a pseudo-terminal, the scenario driver
//! that plays games on it like people do, and the human-handling generator.
//!
//! Nobody can test a board daemon without boards: this is the board for the end-to-end tests,
//! the benchmarks, `eboardd --demo` and `eboardctl simulate`.
//!
//! # Layers
//!
//! - [`virtual_board::VirtualBoard`] — the pure state machine (no I/O, time passed in as `u64`
//!   ms): 64 sensor fields, the update mode, the clock ([`clock::VirtualClock`]). Fed host
//!   bytes and physical actions, it returns the bytes a real board sends, when they are due.
//! - [`pty`] — the thin tokio driver: [`SimBoard::spawn`] puts a board behind a fresh pty and
//!   returns a [`SimHandle`]; the slave device ([`SimHandle::path`]) is what a daemon opens
//!   at 9600 8N1. Board time runs `speed` times faster than the wall clock.
//!
//! # Choosing a speed
//!
//! - `1.0`: people's pace (`eboardctl simulate`, `--demo`).
//! - A finite speed such as 10–50: a daemon under test stamps what it reads with its own
//!   clock, so keep board time proportional to wall time; the clock still counts the full
//!   game. Timers cannot wait much less than a wall-clock millisecond, so at speed X every
//!   pause lasts at least about X board ms: above ~50 the short pauses inside a move
//!   (tens to hundreds of ms) stretch past the tracker's settle times.
//! - `f64::INFINITY`: *stepped* board time. It stands still except when the scenario waits
//!   ([`SimHandle::sleep`] advances it at once, sending everything due on the way in order),
//!   so a game takes milliseconds and nothing depends on the wall clock. Tests that feed the
//!   tracker themselves take the board time of every written chunk from
//!   [`SimHandle::take_tap`] (enable [`SimOptions::tap`]).
//! - [`scenario`] — [`Scenario`] plays [`Step`]s and whole PGN games with the
//!   [`handling`] generator's sensor steps and presses the clock after each move.
//! - [`pgn`] — reads the games to play; [`default_game`] is a real rapid tie-break game
//!   (both castlings, a promotion) bundled with the binary.
//! - [`chesslink`] — a simulated Millennium ChessLink board (eONE-like) on the same pty
//!   driver: its scans and report modes, option bytes, LEDs, reply timing and unplug; the
//!   same hands play the same games on it.
//!
//! # Example
//!
//! ```no_run
//! use eboard_sim::{Scenario, ScenarioOptions, SimBoard, SimOptions, Step, default_game};
//! # async fn demo() -> anyhow::Result<()> {
//! let sim = SimBoard::spawn(SimOptions { speed: 50.0, ..SimOptions::default() }).await?;
//! println!("open {}", sim.path().display());
//! // Wait for the daemon to connect and ask for updates, then play.
//! sim.wait_for_update_mode(std::time::Duration::from_secs(30)).await?;
//! let mut scenario = Scenario::new(&sim, ScenarioOptions::default());
//! scenario.run(&[Step::Move("e4".into()), Step::Adjust(shakmaty::Square::G1)]).await?;
//! scenario.play_game(&default_game()).await?; // resets the board first
//! sim.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! # Options ([`SimOptions`], [`BoardOptions`])
//!
//! Reversed orientation (Black on the connector side), no clock, a clock that never acks,
//! line noise (seeded junk bytes between messages), a slow board (answers delayed),
//! the clock's time control and which display is White's, the board's identity (serial
//! numbers, version, trademark). Unplug / replug at any time with [`SimHandle::unplug`] and
//! [`SimHandle::replug`] (or [`Step::Unplug`] / [`Step::Replug`]): the pty closes, the link
//! disappears, and a fresh pty appears behind the same link; pieces moved meanwhile are seen
//! only by a dump after the replug.
//!
//! # Behaviour on the wire
//!
//! As in the fact sheet and the real captures: reset gives no reply and goes to IDLE; field
//! updates only in an update mode; clock messages about once a second in UPDATE, on every
//! change in UPDATE_NICE (so once a second while running), never in UPDATE_BRD; clock
//! commands acked only in UPDATE / UPDATE_NICE; clock times in the DGT 3000 layout (bytes 3–5
//! right display, 6–8 left, status bit 3 = left running, bit 4 = right running, bit 1 lever
//! left side down), the Fischer indicator and increment at each press, flag bits at zero.

pub mod chesslink;
pub mod clock;
pub mod clock_models;
pub mod eeprom;
pub mod feed;
pub mod handling;
pub mod kinds;
pub mod models;
pub use eboard_core::pgn;
pub mod pty;
pub mod rig;
pub mod scenario;
pub mod scramble;
pub mod virtual_board;
pub mod wire;

pub use clock::{ClockSetup, ClockSide};
pub use clock_models::{ClockKind, ClockPresence};
pub use handling::Noise;
pub use models::{Revelation, SimBattery, bluetooth_board, revelation_board};
pub use pgn::{PgnGame, parse_games};
pub use pty::{Action, SimBoard, SimHandle, SimOptions, Snapshot};
pub use scenario::{Pace, Played, Scenario, ScenarioOptions, Step};
pub use virtual_board::{BoardOptions, NoiseOptions, UpdateMode, VirtualBoard};

/// The bundled default game's PGN text (a real game from The Week in Chess 1599).
pub const DEFAULT_GAME_PGN: &str = include_str!("default_game.pgn");

/// The bundled default game.
pub fn default_game() -> PgnGame {
    // The bundled text is checked by a test; an empty game is the harmless fallback.
    parse_games(DEFAULT_GAME_PGN)
        .into_iter()
        .next()
        .unwrap_or_default()
}

/// Play a whole game on a simulated board from its start position: the scenario driver with
/// `opts`, the board reset to the game's start position first if needed.
pub async fn play_game(
    sim: &SimHandle,
    game: &PgnGame,
    opts: ScenarioOptions,
) -> anyhow::Result<Played> {
    let mut scenario = Scenario::new(sim, opts);
    scenario.play_game(game).await?;
    Ok(scenario.played().clone())
}

#[cfg(test)]
mod tests {
    #[test]
    fn default_game_is_legal() {
        let game = super::default_game();
        assert_eq!(game.tag("White"), Some("Praggnanandhaa,R"));
        assert_eq!(game.moves().unwrap().len(), 75);
    }
}
