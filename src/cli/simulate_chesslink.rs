//! `eboardctl simulate --board chesslink`: a virtual Millennium ChessLink board (eONE-like:
//! every piece named, 81 LEDs, no clock) on a pseudo-terminal, playing the same games with
//! the same human hands as the DGT board. Serve it with `protocol = "chesslink"`.

use std::time::Duration;

use shakmaty::san::San;
use shakmaty::{Color, Position as _};

use eboard_core::chesslink::{AutoReport, WireOrder, settings::AUTO_REPORT};
use eboard_sim::chesslink::{
    ChessLinkAction, ChessLinkHandle, ChessLinkSim, ChessLinkSimOptions, MillenniumOptions,
};
use eboard_sim::handling::Handling;
use eboard_sim::{Noise, Pace, PgnGame};

use super::simulate_args::SimulateArgs;

/// The DGT board's options that have no meaning on a ChessLink board: refused by name.
pub fn refused_options(args: &SimulateArgs) -> Option<&'static str> {
    if args.model != super::simulate_args::SimModel::Dgt {
        Some("--model picks a DGT board; a ChessLink board has no other model here")
    } else if args.drops {
        Some("--drops is for a DGT Bluetooth board")
    } else if args.time_control.is_some() {
        Some("--time-control sets a clock, and a ChessLink board has none")
    } else if args.result_gesture {
        Some("--result-gesture is the DGT clock's gesture; end the game with eboardctl")
    } else {
        None
    }
}

/// Run the virtual ChessLink board (its options checked by [`refused_options`] first) until the games are over (and Ctrl-C, unless
/// `--exit-when-done`).
pub async fn simulate(args: SimulateArgs, games: Vec<PgnGame>) -> anyhow::Result<()> {
    let sim = ChessLinkSim::spawn(ChessLinkSimOptions {
        board: MillenniumOptions {
            // Turned round: its statuses and LEDs in the other square order.
            order: if args.reversed {
                WireOrder::A8First
            } else {
                WireOrder::H1First
            },
            ..MillenniumOptions::default()
        },
        link: args.link.clone(),
        speed: args.speed,
        tap: false,
    })
    .await?;
    let version = sim.options().version;
    crate::cli::say(&format!(
        "virtual Millennium ChessLink board (version {}.{:02}) on {}",
        version.high,
        version.low,
        sim.path().display()
    ));
    super::simulate_end::play_to_the_end(&sim, play(&sim, &args, &games), args.exit_when_done).await
}

async fn play(sim: &ChessLinkHandle, args: &SimulateArgs, games: &[PgnGame]) -> anyhow::Result<()> {
    crate::cli::say("waiting for a program to open the port and switch on the reports…");
    let on_change = AutoReport::OnChange.code();
    while sim
        .wait_for_option(AUTO_REPORT, on_change, Duration::from_secs(3600))
        .await
        .is_err()
    {}
    crate::cli::say("connected (reports on change)");
    let noise = if args.clean {
        Noise::Clean
    } else {
        Noise::Noisy
    };
    let mut hands = Handling::new(args.seed, noise).with_clock(false);
    let (least, most) = Pace::human().think_ms;
    let mut draws = args.seed;
    for (index, game) in games.iter().enumerate() {
        if index > 0 {
            crate::cli::say("setting up a new game");
            sim.sleep(5_000).await;
        }
        let mut position = game.start_position()?;
        sim.act(ChessLinkAction::SetPosition(position.board().clone()))
            .await?;
        // Give the host a moment to see the start position before the first move.
        sim.sleep(2_000).await;
        crate::cli::say(&format!("game {}: {}", index + 1, game.title()));
        for mv in game.moves()? {
            draws = splitmix64(draws);
            sim.sleep(least + draws % (most - least + 1)).await;
            let san = San::from_move(&position, mv).to_string();
            let number = position.fullmoves();
            let dots = if position.turn() == Color::White {
                "."
            } else {
                "..."
            };
            sim.hand(&hands.steps(&position, mv)).await?;
            position = position.play(mv)?;
            crate::cli::say(&format!("{number}{dots} {san}"));
        }
        if let Some(result) = &game.result {
            crate::cli::say(result);
        }
    }
    Ok(())
}

/// The next of a seeded sequence of thinking times (SplitMix64): the same seed plays the same
/// pauses, without a random-number crate in the program for one draw per move.
fn splitmix64(state: u64) -> u64 {
    let mut z = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
