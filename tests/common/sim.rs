//! Simulated boards (the crate's own simulator) behind a stable link in the test directory.

use std::path::Path;

use eboard_sim::{BoardOptions, SimBoard, SimHandle, SimOptions};

/// A simulated board + clock whose port is `dir/name`, running `speed` times real time.
pub async fn sim_board(dir: &Path, name: &str, speed: f64, board: BoardOptions) -> SimHandle {
    SimBoard::spawn(SimOptions {
        board,
        link: Some(dir.join(name)),
        speed,
        ..SimOptions::default()
    })
    .await
    .expect("simulated board")
}

/// The first games of the shared corpus with `plies` moves (a range).
pub fn corpus_games(
    count: usize,
    plies: std::ops::RangeInclusive<usize>,
) -> Vec<eboard_sim::PgnGame> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/corpus/twic1599.pgn"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    eboard_sim::parse_games(&text)
        .into_iter()
        .filter(|g| g.moves().map(|m| plies.contains(&m.len())).unwrap_or(false))
        .take(count)
        .collect()
}

/// A simulated Millennium ChessLink board `board` whose port is `dir/name`, running `speed`
/// times real time.
pub async fn chesslink_board(
    dir: &Path,
    name: &str,
    speed: f64,
    board: eboard_sim::chesslink::MillenniumOptions,
) -> eboard_sim::chesslink::ChessLinkHandle {
    eboard_sim::chesslink::ChessLinkSim::spawn(eboard_sim::chesslink::ChessLinkSimOptions {
        board,
        link: Some(dir.join(name)),
        speed,
        tap: false,
    })
    .await
    .expect("the simulated ChessLink board")
}
