//! How every `eboardctl simulate` ends, whatever the board: the games played or Ctrl-C, then
//! the board kept connected until Ctrl-C unless `--exit-when-done`.

use std::future::Future;
use std::time::Duration;

use eboard_sim::SimHandle;
use eboard_sim::chesslink::ChessLinkHandle;

/// What the end needs of a simulated board.
pub trait SimulatedBoard {
    fn sleep(&self, board_ms: u64) -> impl Future<Output = ()>;
    fn shutdown(&self) -> impl Future<Output = ()>;
}

impl SimulatedBoard for SimHandle {
    fn sleep(&self, board_ms: u64) -> impl Future<Output = ()> {
        SimHandle::sleep(self, board_ms)
    }
    fn shutdown(&self) -> impl Future<Output = ()> {
        SimHandle::shutdown(self)
    }
}

impl SimulatedBoard for ChessLinkHandle {
    fn sleep(&self, board_ms: u64) -> impl Future<Output = ()> {
        ChessLinkHandle::sleep(self, board_ms)
    }
    fn shutdown(&self) -> impl Future<Output = ()> {
        ChessLinkHandle::shutdown(self)
    }
}

/// Run `playing` on `sim` to its end (Ctrl-C stops it quietly), then keep the board
/// connected until Ctrl-C, or with `exit_when_done` close it once the last report is out.
pub async fn play_to_the_end(
    sim: &impl SimulatedBoard,
    playing: impl Future<Output = anyhow::Result<()>>,
    exit_when_done: bool,
) -> anyhow::Result<()> {
    let played = tokio::select! {
        result = playing => result,
        _ = tokio::signal::ctrl_c() => {
            crate::cli::say("interrupted");
            sim.shutdown().await;
            return Ok(());
        }
    };
    if let Err(e) = played {
        sim.shutdown().await;
        return Err(e);
    }
    if exit_when_done {
        crate::cli::say("all games played");
        // Let the last report or clock press reach the host before the port closes: a second
        // of board time, and at any speed at least a tenth of a second for the simulator's
        // task to send it.
        tokio::join!(
            sim.sleep(1_000),
            tokio::time::sleep(Duration::from_millis(100))
        );
    } else {
        crate::cli::say("all games played; the board stays connected until Ctrl-C");
        let _ = tokio::signal::ctrl_c().await;
    }
    sim.shutdown().await;
    Ok(())
}
