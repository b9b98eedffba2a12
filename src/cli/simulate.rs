//! `eboardctl simulate`: a virtual DGT board + clock on a pseudo-terminal, playing real games
//! as people do, for trying eboardd (or any DGT software) without hardware; with `--board
//! chesslink` a Millennium ChessLink board instead (`simulate_chesslink`).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use shakmaty::san::San;
use shakmaty::{Color, Position as _};

use eboard_core::board::Orientation;
use eboard_core::dgt::DisplayTime;
use eboard_sim::{
    BoardOptions, ClockKind, ClockPresence, ClockSide, Noise, Pace, PgnGame, Scenario,
    ScenarioOptions, SimBoard, SimHandle, SimOptions, Step, default_game, parse_games,
};

/// Arguments of `eboardctl simulate`.
#[derive(Debug, Clone, clap::Args)]
pub struct SimulateArgs {
    /// PGN file whose games are played one after another (default: a bundled real game).
    #[arg(long, value_name = "FILE")]
    pub pgn: Option<PathBuf>,
    /// Keep a symlink to the virtual serial port here (e.g. a path in the daemon's config).
    #[arg(long, value_name = "PATH")]
    pub link: Option<PathBuf>,
    /// Play this many times faster than people do (the clock runs just as fast).
    #[arg(long, default_value_t = 1.0, value_name = "X")]
    pub speed: f64,
    /// Black's pieces on the board's connector side.
    #[arg(long)]
    pub reversed: bool,
    /// No clock behind the board.
    #[arg(long)]
    pub no_clock: bool,
    /// Seed of the human handling (which variants, which pauses).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Move pieces cleanly (lift + place), without human noise.
    #[arg(long)]
    pub clean: bool,
    /// Exit once the games are over instead of keeping the board connected until Ctrl-C.
    #[arg(long)]
    pub exit_when_done: bool,
    /// End each game that has a result (1-0, 0-1, 1/2-1/2) with the DGT result gesture: both
    /// kings on the centre squares.
    #[arg(long)]
    pub result_gesture: bool,
    /// Set the clock to this time control in its FIDE mode, in the grammar of the daemon's
    /// `time_control` (e.g. "40/5400+30:1800+30", "40/5400d30:1800d30", "5400b5"); default:
    /// 3 minutes + 2 s a move.
    #[arg(long, value_name = "CONTROL")]
    pub time_control: Option<eboard_core::arbiter::timecontrol::TimeControl>,
    /// Which family of board: `dgt` (a DGT e-board and clock; `--model` says which) or
    /// `chesslink` (a Millennium ChessLink board: every piece named, 81 LEDs, no clock; serve
    /// it with `protocol = "chesslink"`).
    #[arg(long, value_enum, default_value_t = SimFamily::Dgt)]
    pub board: SimFamily,
    /// Which DGT board: `dgt` (the USB e-board), `bluetooth` (a Bluetooth e-board with a
    /// battery, whose link drops now and then with `--drops`), `revelation2` (a Revelation II;
    /// `--firmware` says which).
    #[arg(long, value_enum, default_value_t = SimModel::Dgt)]
    pub model: SimModel,
    /// A Bluetooth board's battery at the start, percent.
    #[arg(long, default_value_t = 80, value_name = "PERCENT",
          value_parser = clap::value_parser!(u8).range(0..=100))]
    pub battery: u8,
    /// A Bluetooth board's link drops for 1–30 s every one to four minutes (its battery goes
    /// down a point at each), as out of range or behind a phone.
    #[arg(long)]
    pub drops: bool,
    /// A Revelation II's firmware: 3.25 or later shows text on its own display and turns its
    /// reporting round itself (from 3.22); 3.21 does neither.
    #[arg(long, default_value = "3.25", value_name = "X.YY", value_parser = parse_firmware)]
    pub firmware: (u8, u8),
    /// The clock behind the board: dgt3000 (version 2.0, eight characters of text), dgt-xl
    /// (version 1.14, six 7-segment digits), or dgt-xl-quirky (an XL that answers text with
    /// the undocumented acknowledgement (0x20, 0, 0, 0)).
    #[arg(long, value_enum, default_value = "dgt3000", value_name = "MODEL")]
    pub clock: SimClock,
    /// How the clock moves to the next period of --time-control: time (when a period's time
    /// runs out, steady flag: DGT 3000 FIDE modes, XL options 8, 9, 17, 18) or moves (at the
    /// press the XL's own move counter counts as the period's last: option 13, option 00).
    #[arg(long, default_value = "time", value_name = "HOW")]
    pub clock_periods: eboard_core::vocab::ClockPeriods,
}

/// The families of board `eboardctl simulate` offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SimFamily {
    Dgt,
    Chesslink,
}

/// The boards `eboardctl simulate` offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SimModel {
    Dgt,
    Bluetooth,
    Revelation2,
}

/// "3.25" → (3, 25).
fn parse_firmware(text: &str) -> Result<(u8, u8), String> {
    let bad = || format!("\"{text}\" is not a firmware number like 3.25");
    let (major, minor) = text.split_once('.').ok_or_else(bad)?;
    if minor.len() != 2 {
        return Err(bad());
    }
    Ok((
        major.parse().map_err(|_| bad())?,
        minor.parse().map_err(|_| bad())?,
    ))
}

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

/// The clock models `eboardctl simulate --clock` offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SimClock {
    Dgt3000,
    DgtXl,
    DgtXlQuirky,
}

impl SimClock {
    fn kind(self) -> ClockKind {
        match self {
            SimClock::Dgt3000 => ClockKind::Dgt3000,
            SimClock::DgtXl => ClockKind::Xl { quirky_acks: false },
            SimClock::DgtXlQuirky => ClockKind::Xl { quirky_acks: true },
        }
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
    let played = tokio::select! {
        result = play(&sim, &args, &games, setup) => result,
        result = drops => result,
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
    if args.exit_when_done {
        crate::cli::say("all games played");
        // Let the last clock press reach the host before the port closes.
        sim.sleep(1_000).await;
    } else {
        crate::cli::say("all games played; the board stays connected until Ctrl-C");
        let _ = tokio::signal::ctrl_c().await;
    }
    sim.shutdown().await;
    Ok(())
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
        assert_eq!(parse_firmware("3.25"), Ok((3, 25)));
    }
}
