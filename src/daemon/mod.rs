//! The async shell: command line, bus, D-Bus objects, one task per board over its serial
//! link, and the persistence hooks around the pure [`eboard_core::session::Session`].
//!
//! ```text
//! serial port ─► board task ─► link::Link ─► Session::handle ─► events ─► journal ─► signals
//!                 (board.rs,    (pure)        (pure)                        (store)    + PropertiesChanged
//!                  link.rs)                                                            (dbus.rs)
//! ```
//!
//! [`main`] is the whole of the `eboardd` binary.

pub mod added;
pub mod args;
pub mod board;
pub mod bounds;
pub mod bus;
pub mod commit_log;
pub mod config;
pub mod dbus;
#[cfg(feature = "sim")]
pub mod demo;
pub mod faults;
pub mod file_error;
pub mod health;
pub mod journal;
pub mod kept;
pub mod leased_write;
pub mod leds;
pub mod link;
pub mod logging;
pub mod pgn_files;
pub mod pgn_writer;
pub mod recorder;
pub mod round_writer;
pub mod rounds;
pub mod serial_port;
pub mod service;
pub mod settings;
pub mod signature;
pub mod state_file;
pub mod store;
pub mod writer;

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use tokio::time::Instant;
use zbus::Connection;
use zbus::fdo::{ObjectManager, RequestNameFlags, RequestNameReply};

use args::Args;
use dbus::{BUS_NAME, MANAGER_PATH};
use health::Health;
use pgn_writer::PgnWriter;
use service::{Boards, Manager};
use settings::Settings;
use signature::Checked;
use store::StorePaths;
use writer::{Config as WriterConfig, Writer};

/// Exit code: clean shutdown.
pub const EXIT_OK: i32 = 0;
/// Exit code: runtime failure.
pub const EXIT_FAILURE: i32 = 1;
/// Exit code: bad configuration or arguments.
pub const EXIT_USAGE: i32 = 2;

/// `--demo`: the simulated board plays through the whole pipeline.
#[cfg(feature = "sim")]
fn run_demo(runtime: &tokio::runtime::Runtime, args: Args) -> i32 {
    runtime.block_on(demo::run(args))
}

/// `--demo` in a build without the simulator (the production build of `make` and the Debian
/// package, which keeps the simulated board out of the daemon): say so and how to get one.
#[cfg(not(feature = "sim"))]
fn run_demo(_runtime: &tokio::runtime::Runtime, _args: Args) -> i32 {
    eprintln!(
        "eboardd: --demo: this eboardd was built without the simulated board (cargo feature \"sim\"); \
         run the demo from a source checkout with `cargo run --release -- --demo`, or try \
         `eboardctl simulate` with this daemon"
    );
    EXIT_USAGE
}

/// Run `eboardd` with the process's arguments; returns the exit code.
pub fn main() -> i32 {
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
        }
    };
    // Before any other thread starts: a live file's write lease, when broken, signals SIGIO
    // (see `leased_write`); blocked, it cannot end the daemon. Failing that, no leases.
    let leases = leased_write::block_lease_signals();
    // The demo's terminal is for the events; the daemon's own story only when asked.
    logging::init(args.log_format, if args.demo { "warn" } else { "info" });
    if let Err(e) = leases {
        tracing::warn!("live PGN files are replaced, never rewritten in place: SIGIO: {e}");
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("eboardd: cannot start the async runtime: {e}");
            return EXIT_FAILURE;
        }
    };
    let code = if args.demo {
        run_demo(&runtime, args)
    } else {
        match Settings::resolve(&args) {
            Ok(settings) => match runtime.block_on(run(settings)) {
                Ok(()) => EXIT_OK,
                Err(e) => {
                    tracing::error!("{e:#}");
                    eprintln!("eboardd: {e:#}");
                    EXIT_FAILURE
                }
            },
            Err(e) => {
                eprintln!("eboardd: {e}");
                EXIT_USAGE
            }
        }
    };
    runtime.shutdown_timeout(Duration::from_millis(300));
    code
}

/// A started service: the bus connection and its boards.
pub struct Service {
    pub conn: Connection,
    pub boards: Arc<Boards>,
}

impl Service {
    /// Register the manager object and the configured boards on `conn`, then own the
    /// well-known name. A board that cannot be started is logged and skipped.
    pub async fn start(conn: Connection, settings: &Settings) -> anyhow::Result<Service> {
        match std::fs::create_dir_all(&settings.state_dir) {
            // A full or failing disk: the boards are served from memory, the journals say
            // why in `StorageProblem` and are written once the disk takes them.
            Err(e) if journal::is_storage_fault(&e) => tracing::error!(
                "cannot create the state directory {}: {e}",
                settings.state_dir.display()
            ),
            r => r.with_context(|| {
                format!(
                    "cannot create the state directory {}",
                    settings.state_dir.display()
                )
            })?,
        }
        let paths = StorePaths {
            state_dir: settings.state_dir.clone(),
            pgn_dir: settings.pgn_dir.clone(),
            record_dir: settings.record_dir.clone(),
        };
        let health = Health::new();
        let games = settings.state_dir.join("games");
        let writer = Writer::start(&games, WriterConfig::default(), health.clone())
            .context("cannot start the journal writer")?;
        let pgn_writer = PgnWriter::start(health.clone()).context("cannot start the PGN writer")?;
        let boards = Boards::new(
            conn.clone(),
            paths,
            settings.daemon.clone(),
            Instant::now(),
            writer,
            pgn_writer,
            health.clone(),
        );
        let server = conn.object_server();
        // The ObjectManager first, so that every board appears through InterfacesAdded.
        server
            .at(MANAGER_PATH, ObjectManager)
            .await
            .context("cannot register the object manager")?;
        server
            .at(MANAGER_PATH, Checked::new(Manager::new(boards.clone())))
            .await
            .context("cannot register the manager object")?;
        for spec in &settings.boards {
            if let Err(e) = boards.add(spec.clone()).await {
                tracing::error!(board = %spec.id, "cannot start board: {e}");
            }
        }
        // Then the boards added with AddBoard before the restart, unless the configuration
        // now serves their id or port.
        for spec in boards.remembered() {
            let taken = settings
                .boards
                .iter()
                .any(|b| b.id == spec.id || b.port == spec.port);
            if taken {
                tracing::info!(board = %spec.id, "added board now in the configuration");
                continue;
            }
            match boards.add(spec.clone()).await {
                Ok(_) => {
                    tracing::info!(board = %spec.id, port = %spec.port.display(), "added board restored")
                }
                Err(e) => tracing::error!(board = %spec.id, "cannot start added board: {e}"),
            }
        }
        announce_storage_problems(&conn, &boards).await?;
        let taken = || {
            anyhow::anyhow!("{BUS_NAME} is already owned on this bus: is another eboardd running?")
        };
        match conn
            .request_name_with_flags(BUS_NAME, RequestNameFlags::DO_NOT_QUEUE)
            .await
        {
            Ok(RequestNameReply::PrimaryOwner | RequestNameReply::AlreadyOwner) => {}
            Ok(RequestNameReply::Exists | RequestNameReply::InQueue)
            | Err(zbus::Error::NameTaken) => {
                boards.stop_all().await;
                return Err(taken());
            }
            Err(e) => {
                boards.stop_all().await;
                return Err(
                    anyhow::Error::new(e).context(format!("cannot request the name {BUS_NAME}"))
                );
            }
        }
        Ok(Service { conn, boards })
    }

    /// Stop every board (journals flushed) and give the name back.
    pub async fn shutdown(self) {
        self.boards.stop_all().await;
        let _ = self.conn.release_name(BUS_NAME).await;
    }
}

/// Keep the manager's `StorageProblem` announced (`PropertiesChanged`) and retry writing
/// the list of added boards while that fails.
async fn announce_storage_problems(conn: &Connection, boards: &Arc<Boards>) -> anyhow::Result<()> {
    let iface = conn
        .object_server()
        .interface::<_, Checked<Manager>>(MANAGER_PATH)
        .await
        .context("the manager object")?;
    let mut changes = boards.health().subscribe();
    tokio::spawn(async move {
        while changes.changed().await.is_ok() {
            let manager = iface.get().await;
            if let Err(e) = manager
                .storage_problem_changed(iface.signal_emitter())
                .await
            {
                tracing::debug!("cannot announce StorageProblem: {e}");
            }
        }
    });
    let weak = Arc::downgrade(boards);
    let mut problems = boards.health().subscribe();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_secs(1));
        loop {
            // Nothing to retry while every write succeeds (the list unwritten, a file kept
            // aside are both storage problems): an idle daemon sleeps until one is reported
            // rather than waking every second.
            while problems.borrow_and_update().is_empty() {
                if problems.changed().await.is_err() {
                    return;
                }
                every.reset();
            }
            every.tick().await;
            match weak.upgrade() {
                Some(b) => b.retry_storage(),
                None => break,
            }
        }
    });
    Ok(())
}

/// The daemon proper: serve until SIGTERM or SIGINT.
pub async fn run(settings: Settings) -> anyhow::Result<()> {
    // Watch the signals before the name is owned: a client that sees the name may stop us
    // at once, and SIGTERM's default action would not flush the journals.
    let mut termination = std::pin::pin!(termination_signals()?);
    // The start (the bus, the boards) on a task of its own: SIGTERM ends the daemon even
    // while it is starting.
    let start = {
        let settings = settings.clone();
        tokio::spawn(async move {
            let conn = bus::connect(&settings.bus).await?;
            Service::start(conn, &settings).await
        })
    };
    let service = tokio::select! {
        started = start => started.context("the start failed")??,
        signal = &mut termination => {
            tracing::info!("{} while starting: shutting down", signal?);
            return Ok(());
        }
    };
    tracing::info!(
        bus = %settings.bus,
        boards = settings.boards.len(),
        "eboardd {} serving {BUS_NAME}",
        env!("CARGO_PKG_VERSION")
    );
    if let Err(e) = sd_notify::notify(&[sd_notify::NotifyState::Ready]) {
        tracing::warn!("cannot notify systemd: {e}");
    }
    let bus_gone = watch_bus(&service.conn).await?;
    tokio::select! {
        signal = &mut termination => {
            tracing::info!("{}: shutting down", signal?);
            let _ = sd_notify::notify(&[sd_notify::NotifyState::Stopping]);
            service.shutdown().await;
            Ok(())
        }
        reason = bus_gone => {
            // Without the bus nobody sees the games: stop (journals flushed) and let the
            // service manager restart us.
            let _ = sd_notify::notify(&[sd_notify::NotifyState::Stopping]);
            service.boards.stop_all().await;
            Err(anyhow::anyhow!("{reason}"))
        }
    }
}

/// Resolves when the daemon can no longer serve on the bus: the connection closed, or the
/// well-known name was taken away.
async fn watch_bus(conn: &Connection) -> anyhow::Result<impl Future<Output = String> + use<>> {
    let rule = zbus::MatchRule::builder()
        .msg_type(zbus::message::Type::Signal)
        .sender("org.freedesktop.DBus")
        .interface("org.freedesktop.DBus")
        .member("NameLost")
        .arg(0, BUS_NAME)
        .build()
        .context("NameLost match rule")?;
    let mut stream = zbus::MessageStream::for_match_rule(rule, conn, None)
        .await
        .context("cannot watch the bus")?;
    Ok(async move {
        match next(&mut stream).await {
            Some(Ok(_)) => format!("lost the name {BUS_NAME} on the bus"),
            Some(Err(e)) => format!("the bus connection failed: {e}"),
            None => "the bus connection closed".to_string(),
        }
    })
}

/// The next item of an `Unpin` stream.
pub(crate) async fn next<S>(stream: &mut S) -> Option<S::Item>
where
    S: futures_core::Stream + Unpin,
{
    std::future::poll_fn(|cx| std::pin::Pin::new(&mut *stream).poll_next(cx)).await
}

/// Wait for SIGTERM or SIGINT; returns which one came.
pub async fn wait_for_termination() -> anyhow::Result<&'static str> {
    termination_signals()?.await
}

/// Start watching SIGTERM and SIGINT now; the future resolves with the one that came.
pub fn termination_signals()
-> anyhow::Result<impl Future<Output = anyhow::Result<&'static str>> + use<>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).context("cannot watch SIGTERM")?;
    let mut int = signal(SignalKind::interrupt()).context("cannot watch SIGINT")?;
    Ok(async move {
        Ok(tokio::select! {
            _ = term.recv() => "SIGTERM",
            _ = int.recv() => "SIGINT",
        })
    })
}
