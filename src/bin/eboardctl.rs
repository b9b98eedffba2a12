//! eboardctl: watch, inspect and steer boards over D-Bus.
//!
//! Only argument parsing lives here; every command is in `eboardd::cli`. Exit codes: 0 ok,
//! 1 the daemon refused (its D-Bus error name and message on stderr) or is not running,
//! 2 bad usage.

use clap::{Parser, Subcommand};

use eboardd::cli::{self, Globals, bus::BusChoice, error::CtlError};

/// Watch, inspect and steer eboardd's boards over D-Bus.
#[derive(Debug, Parser)]
#[command(name = "eboardctl", version)]
struct Cli {
    /// Which bus eboardd is on: session, system, or a D-Bus address such as unix:path=/run/x.
    #[arg(
        long,
        global = true,
        default_value = "system",
        value_name = "session|system|ADDRESS"
    )]
    bus: BusChoice,
    /// Print JSON (list, status; one object per line for watch).
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// One line per board: name, port, connected, state, number of half-moves.
    List,
    /// The position, clocks, side to move, moves, claims, illegal placement and moves, result.
    Status(cli::status::StatusArgs),
    /// Follow boards live (full screen on a terminal, one line per event otherwise).
    Watch(cli::watch::WatchArgs),
    /// The game as PGN.
    Pgn(cli::pgn::PgnArgs),
    #[command(flatten)]
    Verb(cli::verbs::Verb),
}

async fn run(cli: Cli) -> Result<(), CtlError> {
    let globals = Globals {
        bus: cli.bus,
        json: cli.json,
    };
    let client = cli::client(&globals).await?;
    match &cli.command {
        Command::List => cli::list::run(&client, globals.json).await,
        Command::Status(args) => cli::status::run(&client, globals.json, args).await,
        Command::Watch(args) => cli::watch::run(&client, globals.json, args).await,
        Command::Pgn(args) => cli::pgn::run(&client, args).await,
        Command::Verb(verb) => cli::verbs::run(&client, verb).await,
    }
}

fn main() {
    // clap exits with 2 on bad usage, 0 for --help/--version.
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("eboardctl: cannot start the async runtime: {e}");
            std::process::exit(1);
        }
    };
    if let Err(e) = runtime.block_on(run(cli)) {
        eprintln!("eboardctl: {e}");
        std::process::exit(e.exit_code());
    }
}
