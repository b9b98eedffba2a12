//! `eboardd --demo`: the simulator's board + clock plays a bundled real game through the
//! whole pipeline — pty, serial link, decoder, session, D-Bus — and a D-Bus client inside
//! this process prints every event as it receives it.
//!
//! The script: the bundled game, with one illegal placement shown to the arbiter before the
//! clock press and then put right; the result shown on the board with the DGT result gesture
//! (both kings on the centre squares: Black resigned, 1-0); then a short second game in which the players repeat moves and
//! the threefold-repetition claim offered in `Claims` is accepted through `AcceptClaim`.
//! The demo exits 0 once the client has seen that game end.
//!
//! It runs on the session bus when one is reachable and the name is free there, else on a
//! private `dbus-daemon` it starts. Its state, PGN files and pty link live in a temporary
//! directory removed at exit.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use shakmaty::{Chess, Move, Position, Role, Square};
use tokio::sync::mpsc;
use zbus::{Connection, MatchRule, MessageStream, Proxy};

use eboard_core::arbiter::ArbiterConfig;
use eboard_core::session::SessionConfig;

use eboard_core::vocab::Rules;
use eboard_sim::{
    ClockSetup, Pace, Scenario, ScenarioOptions, SimBoard, SimHandle, SimOptions, Step,
    default_game,
};

use super::args::Args;
use super::bus::PrivateBus;
use super::config::DaemonConfig;
use super::dbus::{BOARD_INTERFACE, BUS_NAME, board_path};
use super::settings::{BoardSpec, BusChoice, Settings};
use super::{EXIT_FAILURE, EXIT_OK, Service};

/// Board time per wall-clock time: a rapid game in well under a minute.
const SPEED: f64 = 25.0;
/// The board's object id (and name).
const BOARD: &str = "demo";
/// How long any one expected event may take before the demo gives up.
const EVENT_WAIT: Duration = Duration::from_secs(30);
/// The ply after which a player misplaces a piece (and puts it right).
const ILLEGAL_AFTER_PLY: usize = 11;

/// Run the demo; returns the exit code.
pub async fn run(args: Args) -> i32 {
    let work = std::env::temp_dir().join(format!("eboardd-demo-{}", std::process::id()));
    let result = demo(&args, &work).await;
    let _ = std::fs::remove_dir_all(&work);
    match result {
        Ok(()) => EXIT_OK,
        Err(e) => {
            eprintln!("eboardd --demo: {e:#}");
            EXIT_FAILURE
        }
    }
}

/// Where the demo's daemon runs.
struct DemoBus {
    service: Service,
    /// Keeps a private bus alive for the duration of the demo.
    _private: Option<PrivateBus>,
    client: Connection,
    description: String,
}

async fn demo(args: &Args, work: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(work).with_context(|| format!("cannot create {}", work.display()))?;
    let link = work.join("dgt-demo");
    let mut options = SimOptions {
        link: Some(link.clone()),
        speed: SPEED,
        ..SimOptions::default()
    };
    options.board.clock_setup = ClockSetup {
        base_ms: 15 * 60_000,
        increment_ms: 10_000,
    };
    // The bus first: a dbus-daemon started after the simulator would inherit its pty
    // master, which is not close-on-exec. The daemon after the simulator, so its port
    // is there from the start.
    let (conn, private, description) = choose_bus(work).await?;
    let sim = SimBoard::spawn(options)
        .await
        .context("cannot start the simulated board")?;
    let settings = demo_settings(work, &link, args.record.clone());
    let service = Service::start(conn, &settings).await?;
    let client = match &private {
        Some(p) => {
            zbus::connection::Builder::address(p.address.as_str())
                .build()
                .await
        }
        None => zbus::connection::Builder::session().build().await,
    }
    .context("cannot connect the demo's client")?;
    let bus = DemoBus {
        service,
        _private: private,
        client,
        description,
    };
    println!(
        "eboardd {} demo: simulated DGT board + clock on {} ({}), D-Bus: {}",
        env!("CARGO_PKG_VERSION"),
        sim.slave_path().display(),
        link.display(),
        bus.description
    );
    println!(
        "a client on the bus prints what it receives from {}",
        board_path(BOARD)
    );

    let outcome = play(&sim, &bus.client).await;
    // The daemon first: the simulator going away under it would be a board lost.
    bus.service.shutdown().await;
    sim.shutdown().await;
    outcome
}

fn demo_settings(work: &Path, link: &Path, record_dir: Option<PathBuf>) -> Settings {
    let daemon = DaemonConfig {
        state_dir: work.join("state"),
        pgn_dir: Some(work.join("pgn")),
        rules: Rules::Rapid,
        ..DaemonConfig::default()
    };
    let session = SessionConfig {
        name: BOARD.into(),
        arbiter: ArbiterConfig {
            rules: Rules::Rapid,
            ..ArbiterConfig::default()
        },
        tags: vec![("Event".into(), "eboardd demo".into())],
        ..SessionConfig::default()
    };
    Settings {
        bus: BusChoice::Session,
        state_dir: daemon.state_dir.clone(),
        pgn_dir: daemon.pgn_dir.clone(),
        record_dir,
        daemon,
        boards: vec![BoardSpec::new(
            BOARD.into(),
            link.to_path_buf(),
            false,
            session,
        )],
    }
}

/// The session bus if reachable and the name is free there, else a private bus.
async fn choose_bus(work: &Path) -> anyhow::Result<(Connection, Option<PrivateBus>, String)> {
    if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some() {
        let conn = zbus::connection::Builder::session().build();
        if let Ok(Ok(conn)) = tokio::time::timeout(Duration::from_secs(2), conn).await {
            let free = match zbus::fdo::DBusProxy::new(&conn).await {
                Ok(dbus) => match BUS_NAME.try_into() {
                    Ok(name) => !dbus.name_has_owner(name).await.unwrap_or(true),
                    Err(_) => false,
                },
                Err(_) => false,
            };
            if free {
                return Ok((conn, None, "the session bus".into()));
            }
            tracing::info!("{BUS_NAME} is taken on the session bus; using a private bus");
        }
    }
    let private = PrivateBus::start(work).await?;
    let conn = zbus::connection::Builder::address(private.address.as_str())
        .build()
        .await
        .context("cannot connect to the private bus")?;
    let description = format!("a private bus at {}", private.address);
    Ok((conn, Some(private), description))
}

/// What the printing client tells the script.
#[derive(Debug, Clone, PartialEq)]
enum Seen {
    GameStarted,
    IllegalPlacement,
    GameEnded,
    Claims(Vec<(String, String, String)>),
    Connected(bool),
    /// The ply number of a move played.
    MovePlayed(u32),
}

/// Drive the simulator through the script while the client prints.
async fn play(sim: &SimHandle, client: &Connection) -> anyhow::Result<()> {
    let (seen_tx, mut seen) = mpsc::unbounded_channel();
    let stream = subscribe(client).await?;
    let printer = tokio::spawn(print_events(stream, seen_tx));
    let board = Proxy::new(client, BUS_NAME, board_path(BOARD), BOARD_INTERFACE)
        .await
        .context("board proxy")?;

    sim.wait_for_update_mode(EVENT_WAIT)
        .await
        .context("the daemon never put the board in update mode")?;
    // The board is read whole before `Connected` turns true, so its start position (the
    // GameStarted) may come before or after it: wait for both, in either order.
    let mut connected = board
        .get_property::<bool>("Connected")
        .await
        .unwrap_or(false);
    let mut started = board
        .get_property::<String>("State")
        .await
        .unwrap_or_default()
        == "playing";
    while !(connected && started) {
        let what = if connected {
            "GameStarted"
        } else {
            "the board to answer"
        };
        match wait_for(&mut seen, what, |s| {
            matches!(s, Seen::Connected(true) | Seen::GameStarted)
        })
        .await?
        {
            Seen::GameStarted => started = true,
            _ => connected = true,
        }
    }

    // The bundled game, with an illegal placement shown and put right.
    let game = default_game();
    let moves = game.moves()?;
    let mut scenario = Scenario::new(
        sim,
        ScenarioOptions {
            pace: Pace::human(),
            ..ScenarioOptions::default()
        },
    );
    for (ply, mv) in moves.iter().enumerate() {
        if ply == ILLEGAL_AFTER_PLY
            && let Some((from, to)) = an_illegal_placement(scenario.position())
        {
            scenario.step(&Step::IllegalPlacement { from, to }).await?;
            wait_for(&mut seen, "the IllegalPlacement alert", |s| {
                *s == Seen::IllegalPlacement
            })
            .await?;
            scenario.step(&Step::CorrectIllegal).await?;
        }
        scenario.play_move(mv).await?;
    }
    // Black resigned: the players show the result with the kings on the centre squares,
    // once the last move is seen (its line comes before the players' in the output).
    let plies = moves.len() as u32;
    wait_for(&mut seen, "the last move", |s| {
        *s == Seen::MovePlayed(plies)
    })
    .await?;
    scenario.step(&Step::Pause(3_000)).await?;
    let result: eboard_core::vocab::GameResult = game.result.as_deref().unwrap_or("1-0").parse()?;
    println!("players: result gesture {result} (both kings on the centre squares)");
    scenario.step(&Step::ResultGesture(result)).await?;
    wait_for(&mut seen, "GameEnded", |s| *s == Seen::GameEnded).await?;

    // A second game: the players repeat moves; Black claims the threefold repetition.
    println!("--- a new game: the players repeat moves ---");
    scenario
        .step(&Step::NewGame {
            clock: ClockSetup {
                base_ms: 5 * 60_000,
                increment_ms: 3_000,
            },
        })
        .await?;
    wait_for(&mut seen, "the second GameStarted", |s| {
        *s == Seen::GameStarted
    })
    .await?;
    let shuffle = ["Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1"];
    scenario
        .step(&Step::Moves(
            shuffle.iter().map(|s| s.to_string()).collect(),
        ))
        .await?;
    let claims = wait_for(
        &mut seen,
        "a threefold-repetition claim",
        |s| matches!(s, Seen::Claims(c) if c.iter().any(|(_, k, _)| k == "threefold-repetition")),
    )
    .await?;
    let Seen::Claims(claims) = claims else {
        bail!("unexpected claims report");
    };
    let (player, kind, detail) = claims
        .into_iter()
        .find(|(_, k, _)| k == "threefold-repetition")
        .context("the claim vanished")?;
    println!("arbiter: AcceptClaim({player:?}, {kind:?}, {detail:?})");
    board
        .call_method(
            "AcceptClaim",
            &(player.as_str(), kind.as_str(), detail.as_str()),
        )
        .await
        .context("AcceptClaim")?;
    wait_for(&mut seen, "GameEnded after the claim", |s| {
        *s == Seen::GameEnded
    })
    .await?;
    // Let the printer show the last property changes.
    tokio::time::sleep(Duration::from_millis(200)).await;
    printer.abort();
    let pgn: String = board.get_property("Pgn").await.unwrap_or_default();
    println!("--- the game as the Pgn property shows it ---\n{pgn}");
    Ok(())
}

/// Wait for a report matching `pred`, skipping others.
async fn wait_for(
    seen: &mut mpsc::UnboundedReceiver<Seen>,
    what: &str,
    pred: impl Fn(&Seen) -> bool,
) -> anyhow::Result<Seen> {
    let wait = async {
        while let Some(s) = seen.recv().await {
            if pred(&s) {
                return Some(s);
            }
        }
        None
    };
    match tokio::time::timeout(EVENT_WAIT, wait).await {
        Ok(Some(s)) => Ok(s),
        Ok(None) => bail!("the D-Bus client stopped before {what}"),
        Err(_) => bail!("no {what} within {} s", EVENT_WAIT.as_secs()),
    }
}

/// Every signal of the board object: its own and `PropertiesChanged`.
async fn subscribe(client: &Connection) -> anyhow::Result<MessageStream> {
    let rule = MatchRule::builder()
        .msg_type(zbus::message::Type::Signal)
        .path(board_path(BOARD))
        .build()?;
    MessageStream::for_match_rule(rule, client, std::num::NonZeroUsize::new(256))
        .await
        .context("cannot subscribe to the board's signals")
}

/// Print each received signal; report the interesting ones to the script.
async fn print_events(mut stream: MessageStream, seen: mpsc::UnboundedSender<Seen>) {
    use futures_core::Stream;
    loop {
        let next = std::future::poll_fn(|cx| std::pin::Pin::new(&mut stream).poll_next(cx)).await;
        let Some(Ok(msg)) = next else { return };
        let header = msg.header();
        let (Some(iface), Some(member)) = (header.interface(), header.member()) else {
            continue;
        };
        let body = msg.body();
        let member = member.as_str();
        if iface.as_str() == "org.freedesktop.DBus.Properties" {
            if let Ok((_, changed, _)) = body.deserialize::<(
                String,
                std::collections::HashMap<String, zbus::OwnedVariant>,
                Vec<String>,
            )>() {
                if let Some(v) = changed.get("Connected")
                    && let Ok(c) = bool::try_from(v.clone())
                {
                    println!("  Connected = {c}");
                    let _ = seen.send(Seen::Connected(c));
                }
                if let Some(v) = changed.get("Claims")
                    && let Ok(c) = <Vec<(String, String, String)>>::try_from(v.clone())
                {
                    for (player, kind, detail) in &c {
                        println!("  claim available: {player} may claim {kind} {detail}");
                    }
                    let _ = seen.send(Seen::Claims(c));
                }
            }
            continue;
        }
        if iface.as_str() != BOARD_INTERFACE {
            continue;
        }
        // What the script waits for is reported once its line is printed, so that the
        // script's own lines come after it.
        let mut report = None;
        let line = match member {
            "GameStarted" => body.deserialize::<String>().map(|fen| {
                report = Some(Seen::GameStarted);
                format!("GameStarted {fen}")
            }),
            "MovePlayed" => body
                .deserialize::<(u32, String, String, String, u64, u64)>()
                .map(|(ply, san, uci, _, w, b)| {
                    report = Some(Seen::MovePlayed(ply));
                    let number = if ply % 2 == 1 {
                        format!("{}.", ply.div_ceil(2))
                    } else {
                        format!("{}...", ply / 2)
                    };
                    format!(
                        "MovePlayed {number:>6} {san:<8} ({uci})  white {}  black {}",
                        clock(w),
                        clock(b)
                    )
                }),
            "MoveRetracted" => body
                .deserialize::<(u32, String)>()
                .map(|(ply, _)| format!("MoveRetracted ply {ply}")),
            "IllegalPlacement" => {
                body.deserialize::<(String, String, String)>()
                    .map(|(player, description, _)| {
                        report = Some(Seen::IllegalPlacement);
                        format!(
                            "IllegalPlacement ({player} to move, clock not pressed): {description}"
                        )
                    })
            }
            "IllegalMoveCompleted" => body
                .deserialize::<(String, u32, String)>()
                .map(|(player, n, d)| format!("IllegalMoveCompleted {player} #{n}: {d}")),
            "FlagFell" => body
                .deserialize::<String>()
                .map(|p| format!("FlagFell {p}")),
            "GameEnded" => body.deserialize::<(String, String)>().map(|(r, t)| {
                report = Some(Seen::GameEnded);
                format!("GameEnded {r} ({t})")
            }),
            other => Ok(other.to_string()),
        };
        match line {
            Ok(l) => println!("{l}"),
            Err(e) => println!("{member}: unreadable arguments: {e}"),
        }
        if let Some(r) = report {
            let _ = seen.send(r);
        }
    }
}

/// `h:mm:ss` of milliseconds.
fn clock(ms: u64) -> String {
    let s = ms / 1000;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// A placement no legal move produces, as people make them: a piece of the side to move
/// set down on a nearby empty square it cannot reach.
fn an_illegal_placement(pos: &Chess) -> Option<(Square, Square)> {
    let legal = pos.legal_moves();
    let reaches = |from: Square, to: Square| {
        legal
            .iter()
            .any(|m: &Move| m.from() == Some(from) && m.to() == to)
    };
    let board = pos.board();
    let ours = board.by_color(pos.turn());
    for role in [Role::Bishop, Role::Knight, Role::Queen, Role::Rook] {
        for from in ours & board.by_role(role) {
            for to in Square::ALL {
                let near = from.distance(to) <= 2;
                if near && board.piece_at(to).is_none() && !reaches(from, to) {
                    return Some((from, to));
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_format() {
        assert_eq!(clock(0), "0:00:00");
        assert_eq!(clock(61_999), "0:01:01");
        assert_eq!(clock(3_600_000), "1:00:00");
    }

    #[test]
    fn illegal_placement_is_illegal() {
        let pos = Chess::default();
        let (from, to) = an_illegal_placement(&pos).unwrap();
        assert!(pos.board().piece_at(to).is_none());
        assert!(
            !pos.legal_moves()
                .iter()
                .any(|m| m.from() == Some(from) && m.to() == to)
        );
    }

    #[test]
    fn the_bundled_game_reaches_the_illegal_ply() {
        let moves = default_game().moves().unwrap();
        assert!(moves.len() > ILLEGAL_AFTER_PLY);
        let mut pos = Chess::default();
        for m in &moves[..ILLEGAL_AFTER_PLY] {
            pos.play_unchecked(*m);
        }
        assert!(an_illegal_placement(&pos).is_some());
    }
}
