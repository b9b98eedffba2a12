//! eboardctl: watch, inspect and steer boards over D-Bus.
//!
//! Only argument parsing lives here; every command is in `eboardd::cli`. Exit codes: 0 ok,
//! 1 the daemon refused (its D-Bus error name and message on stderr) or is not running,
//! 2 bad usage.

use clap::{Parser, Subcommand};

use eboardd::cli::{self, Globals};
use eboardd::client::{bus::BusChoice, error::CtlError};

/// Watch, inspect and steer eboardd's boards over D-Bus.
#[derive(Debug, Parser)]
#[command(
    name = "eboardctl",
    version,
    after_help = "BOARD is a board's name or object id (as `list` shows them).\n\
Exit codes: 0 ok; 1 the daemon refused (its D-Bus error name and message are printed) or \
is not running; 2 bad usage.\n\
--json: `list` prints an array and `status` an object of the board properties under their \
D-Bus names (plus Path and Id); `watch` prints one object per event (`event`, `time_ms`, \
`board`, `path`, and the signal's arguments, `changed` or `properties`)."
)]
pub(crate) struct Cli {
    /// Which bus eboardd is on: session, system, or a D-Bus address such as unix:path=/run/x.
    #[arg(
        long,
        global = true,
        default_value = "system",
        value_name = "session|system|ADDRESS"
    )]
    bus: BusChoice,
    /// Print JSON (list, status, doctor; one object per line for watch).
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    #[command(flatten)]
    Bus(BusCommand),
    // Offline commands need no bus and start their own runtime, so `main` runs them directly.
    /// A virtual DGT board + clock on a pseudo-terminal, playing real games as people do.
    #[cfg(feature = "sim")]
    Simulate(cli::simulate::SimulateArgs),
    /// Replay a recorded capture into a pseudo-terminal.
    #[cfg(feature = "sim")]
    Replay(cli::replay::ReplayArgs),
    /// Read a capture offline and print the reconstructed game as PGN (`--events`: every event).
    Decode(cli::decode::DecodeArgs),
    /// The web bridge: pages, JSON, live events and PGN over HTTP (follows the bus by itself).
    Serve(cli::serve::ServeArgs),
    /// The LiveChess-compatible local API for the lichess and chess.com board connectors and
    /// LiveChess tools (follows the bus by itself).
    Livechess(cli::livechess::LiveChessArgs),
    /// Check this host as a rig: one line per check with ✓ or ✗ and, for each ✗, what fixes
    /// it (the daemon, your group, the udev rule, ModemManager, ports, boards and clocks, the
    /// state and PGN directories, the bridges' units). Exit 0 only when every check passes.
    Doctor(cli::doctor::DoctorArgs),
}

/// The commands that talk to the daemon.
#[derive(Debug, Subcommand)]
enum BusCommand {
    /// One line per board: name, port, connected, state, number of half-moves.
    List,
    /// The position, clocks, side to move, moves, claims, illegal placement and moves, result.
    Status(cli::status::StatusArgs),
    /// Follow boards live (full screen on a terminal, one line per event otherwise).
    Watch(cli::watch::WatchArgs),
    /// The game as PGN.
    Pgn(cli::pgn::PgnArgs),
    /// Set the tags of every board of a round from a pairings file (TRF-16, CSV or TSV).
    Pairings(cli::pairings::PairingsArgs),
    #[command(flatten)]
    Verb(cli::verbs::Verb),
    /// The hall relay: every board of this rig on an MQTT broker (retained state and PGN,
    /// QoS 1 events with a per-board seq, the rig's status with a Last Will).
    Relay(cli::relay::RelayArgs),
    /// Push this rig's games of a round straight to a lichess broadcast round (final moves
    /// only, within a second of each, at most one push a second).
    Broadcast(cli::broadcast::BroadcastArgs),
}

/// Runs a command that talks to the daemon, on a single-threaded runtime.
fn on_bus(globals: &Globals, command: BusCommand) -> Result<(), CtlError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CtlError::Other(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(async {
        // The relay follows the daemon coming and going, so it does not need it at start.
        if let BusCommand::Relay(args) = &command {
            return cli::relay::run(globals, args).await;
        }
        // So does the broadcaster.
        if let BusCommand::Broadcast(args) = &command {
            return cli::broadcast::run(globals, args).await;
        }
        // `watch --mqtt` follows a hall on a broker, not the local bus.
        if let BusCommand::Watch(args) = &command
            && let Some(source) = args.hall.source()?
        {
            return cli::watch::run_hall(source, globals.json, args.boards.clone()).await;
        }
        let client = cli::client(globals).await?;
        match &command {
            BusCommand::List => cli::list::run(&client, globals.json).await,
            BusCommand::Status(args) => cli::status::run(&client, globals.json, args).await,
            BusCommand::Watch(args) => {
                cli::watch::run(&client, &globals.bus, globals.json, args).await
            }
            BusCommand::Pgn(args) => cli::pgn::run(&client, args).await,
            BusCommand::Pairings(args) => cli::pairings::run(&client, args).await,
            BusCommand::Verb(verb) => cli::verbs::run(&client, verb).await,
            BusCommand::Relay(_) | BusCommand::Broadcast(_) => unreachable!("handled above"),
        }
    })
}

fn main() {
    // clap exits with 2 on bad usage, 0 for --help/--version. A usage error quotes what was
    // typed, so it is printed through the one escaping path like every other error.
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            cli::print_error(e.render().to_string().trim_end());
            std::process::exit(e.exit_code());
        }
        Err(e) => e.exit(),
    };
    let globals = Globals {
        bus: cli.bus,
        json: cli.json,
    };
    let result = match cli.command {
        Command::Bus(command) => on_bus(&globals, command),
        #[cfg(feature = "sim")]
        Command::Simulate(args) => cli::simulate::run(args).map_err(CtlError::from),
        #[cfg(feature = "sim")]
        Command::Replay(args) => cli::replay::run(args).map_err(CtlError::from),
        Command::Decode(args) => cli::decode::run(&args).map_err(CtlError::from),
        Command::Serve(args) => cli::serve::run(&globals, &args),
        Command::Livechess(args) => cli::livechess::run(&globals, &args),
        Command::Doctor(args) => cli::doctor::main(&globals, &args),
    };
    if let Err(e) = result {
        cli::print_error(&format!("eboardctl: {e}"));
        std::process::exit(e.exit_code());
    }
}
