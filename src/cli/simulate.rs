//! `eboardctl simulate`: a virtual DGT board + clock on a pseudo-terminal, playing real games
//! as people do, for trying eboardd (or any DGT software) without hardware.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use shakmaty::san::San;
use shakmaty::{Color, Position as _};

use crate::board::Orientation;
use crate::protocol::DisplayTime;
use crate::sim::{
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
    pub time_control: Option<crate::arbiter::timecontrol::TimeControl>,
    /// The clock behind the board: dgt3000 (version 2.0, eight characters of text), dgt-xl
    /// (version 1.14, six 7-segment digits), or dgt-xl-quirky (an XL that answers text with
    /// the undocumented acknowledgement (0x20, 0, 0, 0)).
    #[arg(long, value_enum, default_value = "dgt3000", value_name = "MODEL")]
    pub clock: SimClock,
    /// How the clock moves to the next period of --time-control: time (when a period's time
    /// runs out, steady flag: DGT 3000 FIDE modes, XL options 8, 9, 17, 18) or moves (at the
    /// press the XL's own move counter counts as the period's last: option 13, option 00).
    #[arg(long, default_value = "time", value_name = "HOW")]
    pub clock_periods: crate::vocab::ClockPeriods,
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
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(simulate(args, games))
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
            clock_by_counter: args.clock_periods == crate::vocab::ClockPeriods::Moves,
            ..BoardOptions::default()
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
    let played = tokio::select! {
        result = play(&sim, &args, &games, setup) => result,
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
    setup: crate::sim::ClockSetup,
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
            let result: crate::vocab::GameResult = result.parse()?;
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
