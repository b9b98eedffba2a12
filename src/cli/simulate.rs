//! `eboardctl simulate`: a virtual DGT board + clock on a pseudo-terminal, playing real games
//! as people do, for trying eboardd (or any DGT software) without hardware; with `--board
//! chesslink` a Millennium ChessLink board instead (`simulate_chesslink`).

use std::time::Duration;

use anyhow::Context as _;
use shakmaty::san::San;
use shakmaty::{Color, Position as _};

use eboard_core::board::Orientation;
use eboard_core::dgt::DisplayTime;
use eboard_sim::{
    BoardOptions, ClockPresence, ClockSide, Noise, Pace, PgnGame, Scenario, ScenarioOptions,
    SimBoard, SimHandle, SimOptions, Step, default_game, parse_games,
};

pub use super::simulate_args::{SimClock, SimFamily, SimModel, SimulateArgs};

/// The board's options for the chosen model.
fn model_options(args: &SimulateArgs) -> BoardOptions {
    match args.model {
        SimModel::Dgt => BoardOptions::default(),
        SimModel::Bluetooth => eboard_sim::bluetooth_board(args.battery),
        SimModel::Revelation2 => eboard_sim::revelation_board(args.firmware),
    }
}

/// A Bluetooth link dropping for 1–30 s every one to four minutes of board time, the battery
/// a point lower each time; runs until the games are over.
async fn drop_now_and_then(sim: &SimHandle, seed: u64, mut battery: u8) -> anyhow::Result<()> {
    // splitmix64: a seeded spread of drops, no dependency for a demo's dice.
    let mut state = seed;
    let mut between = |lo: u64, hi: u64| {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        lo + (z ^ (z >> 31)) % (hi - lo + 1)
    };
    loop {
        sim.sleep(between(60_000, 240_000)).await;
        sim.unplug().await?;
        battery = battery.saturating_sub(1).max(1);
        sim.act(eboard_sim::Action::SetBattery(eboard_sim::SimBattery {
            percent: battery,
            charging: false,
        }))
        .await?;
        let down = between(1_000, 30_000);
        crate::cli::say(&format!(
            "link dropped for {:.1} s (battery {battery}%)",
            down as f64 / 1000.0
        ));
        sim.sleep(down).await;
        sim.replug().await?;
    }
}

/// Run the simulator until the games are over and Ctrl-C is pressed (or, with
/// `--exit-when-done`, until the games are over).
pub fn run(args: SimulateArgs) -> anyhow::Result<()> {
    let games = match &args.pgn {
        Some(path) => {
            let text = crate::bounded_read::read_text(path, crate::bounded_read::PGN)
                .with_context(|| format!("PGN file {}", path.display()))?;
            let games = parse_games(&text);
            anyhow::ensure!(!games.is_empty(), "{}: no games found", path.display());
            for (i, game) in games.iter().enumerate() {
                game.moves()
                    .with_context(|| format!("{}: game {}", path.display(), i + 1))?;
            }
            games
        }
        None => vec![default_game()],
    };
    anyhow::ensure!(
        args.speed.is_finite() && args.speed > 0.0,
        "--speed must be a positive number"
    );
    if args.board == SimFamily::Chesslink
        && let Some(refusal) = super::simulate_chesslink::refused_options(&args)
    {
        anyhow::bail!("{refusal} (--board chesslink)");
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    match args.board {
        SimFamily::Dgt => runtime.block_on(simulate(args, games)),
        SimFamily::Chesslink => runtime.block_on(super::simulate_chesslink::simulate(args, games)),
    }
}

async fn simulate(args: SimulateArgs, games: Vec<PgnGame>) -> anyhow::Result<()> {
    let opts = SimOptions {
        board: BoardOptions {
            orientation: if args.reversed {
                Orientation::Reversed
            } else {
                Orientation::Normal
            },
            clock: if args.no_clock {
                ClockPresence::Absent
            } else {
                ClockPresence::Present
            },
            time_control: args.time_control.clone(),
            clock_kind: args.clock.kind(),
            clock_by_counter: args.clock_periods.by_counter(),
            ..model_options(&args)
        },
        link: args.link.clone(),
        speed: args.speed,
        tap: false,
    };
    let setup = opts.board.clock_setup;
    let sim = SimBoard::spawn(opts).await?;
    match &args.link {
        Some(link) => crate::cli::say(&format!(
            "virtual DGT board on {} (link to {})",
            link.display(),
            sim.slave_path().display()
        )),
        None => crate::cli::say(&format!("virtual DGT board on {}", sim.path().display())),
    }
    match args.model {
        SimModel::Dgt => {}
        SimModel::Bluetooth => crate::cli::say(&format!(
            "a DGT Bluetooth e-board, battery {}%{}",
            args.battery,
            if args.drops {
                ", its link dropping now and then"
            } else {
                ""
            }
        )),
        SimModel::Revelation2 => crate::cli::say(&format!(
            "a Revelation II, firmware {}.{:02}",
            args.firmware.0, args.firmware.1
        )),
    }
    anyhow::ensure!(
        !args.drops || args.model == SimModel::Bluetooth,
        "--drops is for a Bluetooth board (--model bluetooth)"
    );
    let drops = async {
        if args.drops {
            drop_now_and_then(&sim, args.seed, args.battery).await
        } else {
            std::future::pending().await
        }
    };
    let playing = async {
        tokio::select! {
            result = play(&sim, &args, &games, setup) => result,
            result = drops => result,
        }
    };
    super::simulate_end::play_to_the_end(&sim, playing, args.exit_when_done).await
}

async fn play(
    sim: &SimHandle,
    args: &SimulateArgs,
    games: &[PgnGame],
    setup: eboard_sim::ClockSetup,
) -> anyhow::Result<()> {
    crate::cli::say("waiting for a program to open the port and ask for updates…");
    loop {
        match sim.wait_for_update_mode(Duration::from_secs(3600)).await {
            Ok(mode) => {
                crate::cli::say(&format!("connected (board in {mode:?} mode)"));
                break;
            }
            Err(_) => continue,
        }
    }
    let mut scenario = Scenario::new(
        sim,
        ScenarioOptions {
            pace: Pace::human(),
            noise: if args.clean {
                Noise::Clean
            } else {
                Noise::Noisy
            },
            seed: args.seed,
            press_clock: !args.no_clock,
        },
    )
    .with_time_control(args.time_control.clone());
    for (index, game) in games.iter().enumerate() {
        if index > 0 {
            crate::cli::say("setting up a new game");
            scenario.step(&Step::Pause(5_000)).await?;
        }
        scenario.step(&Step::NewGame { clock: setup }).await?;
        // Give the host a moment to see the start position before the first move.
        scenario.step(&Step::Pause(2_000)).await?;
        crate::cli::say(&format!("game {}: {}", index + 1, game.title()));
        let start = game.start_position()?;
        if start != *scenario.position() {
            // A set-up position, such as a Chess960 start: the players set it up.
            scenario
                .step(&Step::SetUp {
                    position: Box::new(start),
                    clock: setup,
                })
                .await?;
            scenario.step(&Step::Pause(2_000)).await?;
        }
        for mv in game.moves()? {
            let pos = scenario.position().clone();
            let san = San::from_move(&pos, mv).to_string();
            let number = pos.fullmoves();
            scenario.play_move(&mv).await?;
            let dots = if pos.turn() == Color::White {
                "."
            } else {
                "..."
            };
            if args.no_clock {
                crate::cli::say(&format!("{number}{dots} {san}"));
            } else {
                let clock = sim.snapshot().await?.clock;
                let (white, black) = match sim.options().white_display {
                    ClockSide::Left => (clock.left, clock.right),
                    ClockSide::Right => (clock.right, clock.left),
                };
                crate::cli::say(&format!(
                    "{:<14} white {} black {}",
                    format!("{number}{dots} {san}"),
                    show(white),
                    show(black)
                ));
            }
        }
        if let Some(result) = &game.result {
            crate::cli::say(result);
            let result: eboard_core::vocab::GameResult = result.parse()?;
            if args.result_gesture && result.is_finished() {
                crate::cli::say("result gesture: both kings on the centre squares");
                scenario.step(&Step::ResultGesture(result)).await?;
            }
        }
    }
    Ok(())
}

fn show(t: DisplayTime) -> String {
    format!("{}:{:02}:{:02}", t.hours, t.minutes, t.seconds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser as _;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: SimulateArgs,
    }

    fn args(line: &[&str]) -> Result<SimulateArgs, clap::Error> {
        Cli::try_parse_from(std::iter::once("simulate").chain(line.iter().copied())).map(|c| c.args)
    }

    #[test]
    fn the_models_and_their_options() {
        let a = args(&[]).unwrap();
        assert_eq!(a.model, SimModel::Dgt);
        assert_eq!(model_options(&a).battery, None);
        let a = args(&["--model", "bluetooth", "--battery", "15", "--drops"]).unwrap();
        assert_eq!(model_options(&a).battery.map(|b| b.percent), Some(15));
        assert!(a.drops);
        let a = args(&["--model", "revelation2", "--firmware", "3.21"]).unwrap();
        let opts = model_options(&a);
        assert_eq!(opts.revelation.map(|r| r.firmware), Some((3, 21)));
        assert!(opts.long_serial.starts_with("3.21"));
        for bad in [
            &["--battery", "101"][..],
            &["--firmware", "3.2"],
            &["--firmware", "x.25"],
            &["--model", "pegasus"],
        ] {
            assert!(args(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            crate::cli::simulate_args::parse_firmware("3.25"),
            Ok((3, 25))
        );
    }
}
