//! The shared captures of real DGT boards (`<n>.inbytes`, what the board sent, and `<n>.uci`,
//! the moves of the game), read once here for every test that replays them.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use shakmaty::uci::UciMove;
use shakmaty::{Chess, Move, Position};

/// Where the captures are: the workspace's `tests/data/captures`, found from the crate whose
/// tests include this file (the root crate, or the core's `crates/core/tests`).
pub fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|folder| folder.join("tests/data/captures"))
        .find(|captures| captures.is_dir())
        .expect("tests/data/captures in the workspace")
}

/// The path of capture `n`'s file with `extension`.
pub fn path(n: u32, extension: &str) -> String {
    format!("{}/{n}.{extension}", dir().display())
}

/// Capture `n` as the reads it was recorded in.
pub fn chunks(n: u32) -> Vec<eboard_core::capture::Chunk> {
    let path = path(n, "inbytes");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
    eboard_core::capture::parse(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Capture `n`'s bytes, in order.
pub fn bytes(n: u32) -> Vec<u8> {
    chunks(n).into_iter().flat_map(|c| c.bytes).collect()
}

/// The moves of capture `n` in UCI, from its `.uci` file ("1. e2e4 e7e5 ..." and a result).
pub fn uci(n: u32) -> Vec<String> {
    let path = path(n, "uci");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
    text.split_whitespace()
        .filter(|t| !t.ends_with('.') && !matches!(*t, "*" | "1-0" | "0-1" | "1/2-1/2"))
        .map(str::to_string)
        .collect()
}

/// The moves of capture `n`, each legal where it stands from the start position.
pub fn moves(n: u32) -> Vec<Move> {
    let mut pos = Chess::default();
    uci(n)
        .iter()
        .map(|token| {
            let uci: UciMove = token.parse().expect("uci");
            let mv = uci.to_move(&pos).expect("legal capture move");
            pos.play_unchecked(mv);
            mv
        })
        .collect()
}
