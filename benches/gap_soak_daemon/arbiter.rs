//! The arbiter at each board, over D-Bus: reads the board's `Gap`, `Connected` and `Moves`
//! five times a second (a read, not a signal, so a restarted daemon's state is never missed), and when
//! the gap has waited for him for [`Pace::arbiter_after_ms`](eboard_sim::scramble::Pace),
//! answers `ResolveGap` from the scoresheet: the moves really played from the last position
//! the record knows (the gap's and any since). Also the property reads the players use.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use shakmaty::san::San;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Position as _};
use zbus::OwnedVariant;

use super::client::BOARD_PREFIX;
use super::state::Shared;

const DESTINATION: &str = "org.eboardd.Bridge1";
const BOARD_INTERFACE: &str = "org.eboardd.Bridge1.Board";
/// How long one call may take before it counts as failed (the daemon may be down).
const CALL_LIMIT: Duration = Duration::from_secs(5);
/// How often the arbiter looks at a board.
const LOOK_EVERY: Duration = Duration::from_millis(200);
/// After a refused `ResolveGap` (a move half made, say), the next try.
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// The object path of board `i`.
pub fn board_path(i: usize) -> String {
    format!("{BOARD_PREFIX}{i:03}")
}

/// Board `i`'s property `name`.
pub async fn get<T>(conn: &zbus::Connection, i: usize, name: &str) -> anyhow::Result<T>
where
    T: TryFrom<OwnedVariant>,
    T::Error: std::error::Error + Send + Sync + 'static,
{
    let path = board_path(i);
    let body = (BOARD_INTERFACE, name);
    let call = conn.call_method(
        Some(DESTINATION),
        path.as_str(),
        Some("org.freedesktop.DBus.Properties"),
        "Get",
        &body,
    );
    let reply = tokio::time::timeout(CALL_LIMIT, call)
        .await
        .with_context(|| format!("Get {name}: no answer in {CALL_LIMIT:?}"))??;
    let value: OwnedVariant = reply.body().deserialize()?;
    T::try_from(value).with_context(|| format!("{name} has another type"))
}

/// The board's record (`Moves`) as UCI moves from the start position.
pub async fn record(conn: &zbus::Connection, i: usize) -> anyhow::Result<Vec<String>> {
    let sans: Vec<String> = get(conn, i, "Moves").await?;
    let mut position = Chess::default();
    let mut ucis = Vec::with_capacity(sans.len());
    for (n, text) in sans.iter().enumerate() {
        let m = text
            .parse::<San>()
            .ok()
            .and_then(|s| s.to_move(&position).ok())
            .with_context(|| format!("Moves[{n}] = {text:?} is no legal move"))?;
        ucis.push(UciMove::from_move(m, CastlingMode::Standard).to_string());
        position.play_unchecked(m);
    }
    Ok(ucis)
}

/// Looks after board `i` until `stop` is set; `step_in`: also resolves a gap no legal
/// sequence explains.
pub async fn watch(
    conn: zbus::Connection,
    shared: Arc<Shared>,
    i: usize,
    after: Duration,
    step_in: bool,
    stop: Arc<tokio::sync::Notify>,
) {
    let mut listed: Option<Instant> = None;
    let stopped = stop.notified();
    tokio::pin!(stopped);
    loop {
        tokio::select! {
            _ = &mut stopped => return,
            _ = tokio::time::sleep(LOOK_EVERY) => {}
        }
        let gap = get::<String>(&conn, i, "Gap").await.unwrap_or_default();
        let connected = get::<bool>(&conn, i, "Connected").await.unwrap_or(false);
        let recorded = get::<Vec<String>>(&conn, i, "Moves").await.map(|m| m.len());
        {
            let mut hall = shared.lock();
            let board = &mut hall.boards[i];
            board.gap = gap.clone();
            board.connected = connected;
            if let Ok(n) = recorded {
                board.recorded = n;
            }
        }
        // Asked for; or, unasked, a gap no legal sequence of up to 6 plies explains (it grew
        // too long before the board could be read): the daemon would continue from the board
        // in a new segment, so the arbiter with the scoresheet steps in.
        let asked = gap.contains("waiting for the arbiter");
        let unexplained = gap.contains("no legal sequence");
        if !(asked || unexplained && step_in) {
            listed = None;
            continue;
        }
        let since = *listed.get_or_insert_with(Instant::now);
        if since.elapsed() < after {
            continue;
        }
        match resolve(&conn, &shared, i, !asked).await {
            Ok(()) => listed = None,
            Err(e) => {
                eprintln!("gap_soak_daemon: board {i}: ResolveGap refused: {e:#}");
                shared.lock().boards[i].refused += 1;
                listed = Instant::now().checked_sub(after.saturating_sub(RETRY_AFTER));
            }
        }
    }
}

/// `ResolveGap` with the moves played since the position the record knows.
async fn resolve(
    conn: &zbus::Connection,
    shared: &Shared,
    i: usize,
    unasked: bool,
) -> anyhow::Result<()> {
    let known = record(conn, i).await?;
    let moves: Vec<String> = {
        let hall = shared.lock();
        let played: Vec<&str> = hall.boards[i]
            .plies
            .iter()
            .map(|p| p.uci.as_str())
            .collect();
        anyhow::ensure!(
            played.starts_with(&known.iter().map(String::as_str).collect::<Vec<_>>()),
            "the record ({} plies) is not the beginning of the game played ({} plies)",
            known.len(),
            played.len()
        );
        played[known.len()..]
            .iter()
            .map(|s| s.to_string())
            .collect()
    };
    let path = board_path(i);
    let body = (moves.clone(),);
    let call = conn.call_method(
        Some(DESTINATION),
        path.as_str(),
        Some(BOARD_INTERFACE),
        "ResolveGap",
        &body,
    );
    tokio::time::timeout(CALL_LIMIT, call)
        .await
        .context("no answer")?
        .with_context(|| format!("moves {}", moves.join(" ")))?;
    let mut hall = shared.lock();
    let board = &mut hall.boards[i];
    board.asked += 1;
    board.stepped_in += u64::from(unasked);
    if let Some(last) = board.episodes.last_mut() {
        last.asked = true;
    }
    Ok(())
}
