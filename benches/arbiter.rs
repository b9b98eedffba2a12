//! Cost per move of the arbiter's per-move work: claim evaluation (repetition and fifty-move
//! claims over every legal move) plus the fast unwinnability check for a dead position.
//! Replays real games from the corpus through `Arbiter::on_move` and reports µs per move.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use eboard_core::arbiter::claims::{History, position_claims};
use eboard_core::arbiter::unwinnable::is_dead_fast;
use eboard_core::arbiter::{Arbiter, ArbiterConfig};
use shakmaty::san::San;
use shakmaty::{Chess, Move, Position};

const CORPUS: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/corpus/twic1599.pgn"
));

/// Moves of the first `n` games of the corpus that start from the initial position.
fn corpus_games(n: usize) -> Vec<Vec<Move>> {
    let mut games = Vec::new();
    for chunk in CORPUS.split("\n[Event ").take(n * 2) {
        if chunk.contains("[FEN ") {
            continue;
        }
        let movetext: String = chunk
            .lines()
            .filter(|l| !l.starts_with('['))
            .collect::<Vec<_>>()
            .join(" ");
        let mut pos = Chess::default();
        let mut moves = Vec::new();
        for tok in movetext.split_whitespace() {
            let tok = tok.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
            if tok.is_empty()
                || tok.starts_with('{')
                || tok.contains('-') && tok.len() <= 7 && !tok.starts_with('O')
            {
                continue;
            }
            let Ok(san) = tok.parse::<San>() else {
                continue;
            };
            let Ok(m) = san.to_move(&pos) else { break };
            pos.play_unchecked(m);
            moves.push(m);
        }
        if !moves.is_empty() {
            games.push(moves);
        }
        if games.len() == n {
            break;
        }
    }
    games
}

fn per_move(c: &mut Criterion) {
    let games = corpus_games(20);
    let plies: usize = games.iter().map(Vec::len).sum();
    let mut group = c.benchmark_group("arbiter");
    group.bench_function("on_move (claims + fast unwinnability), 20 games", |b| {
        b.iter(|| {
            for g in &games {
                let mut a = Arbiter::new(ArbiterConfig::default(), Chess::default(), Vec::new());
                for (i, &m) in g.iter().enumerate() {
                    black_box(a.on_move(m, i as u64 * 1000));
                }
                black_box(a.claims());
            }
        })
    });
    // The two parts alone, on every position of the same games.
    let mut positions = Vec::new();
    for g in &games {
        let mut pos = Chess::default();
        let mut h = History::new(&pos);
        for &m in g {
            pos.play_unchecked(m);
            h.push(&pos);
            positions.push((pos.clone(), h.clone()));
        }
    }
    group.bench_function("claim evaluation only, same plies", |b| {
        b.iter(|| {
            for (p, h) in &positions {
                black_box(position_claims(p, h));
            }
        })
    });
    group.bench_function("fast dead-position check only, same plies", |b| {
        b.iter(|| {
            for (p, _) in &positions {
                black_box(is_dead_fast(p));
            }
        })
    });
    group.finish();
    println!("({plies} plies per iteration: divide the times above by {plies} for µs per move)");
}

criterion_group!(benches, per_move);
criterion_main!(benches);
