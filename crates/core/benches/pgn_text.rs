//! What a board's PGN text costs per move of a long game: the renders one move causes in the
//! session's view (`session/view.rs`, `refresh_view`): the move while it is not final yet,
//! its becoming final, its press's clock stamp and the clock tags the press changes — four
//! texts per move, each the whole game.
//!
//! The game is the corpus's first game of at least 80 plies, with its tags, both clocks on
//! every move. Three figures:
//! - `80 plies, the renders of every move`: a game played from the start to ply 80, the four
//!   renders after each move (divide by 80 for a move's cost over the game);
//! - `plies 71-80, the renders of each move`: the last ten moves only, on the game of 70 plies
//!   (what a move costs late in a long game);
//! - `one text from scratch, 80 plies`: `Game::pgn_final_with_clock`, the whole text once
//!   (the finished file, `eboardctl decode`).
//!
//! `cargo bench -p eboard-core --bench pgn_text` (figures in BENCHMARKS.md).

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use eboard_core::clock_tags::ClockTags;
use eboard_core::game::{Game, MoveRecord, START_FEN};
use eboard_core::pgn::parse_games;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Color, Position};

const CORPUS: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/data/corpus/twic1599.pgn"
));

const PLIES: usize = 80;

/// The moves of the first corpus game from the start position with at least [`PLIES`] plies,
/// as the record holds them (SAN, UCI, both clocks), and its tags.
fn long_game() -> (Vec<(String, String)>, Vec<MoveRecord>) {
    let game = parse_games(CORPUS)
        .into_iter()
        .find(|g| g.tag("FEN").is_none() && g.sans.len() >= PLIES)
        .expect("a long game in the corpus");
    let mut pos = Chess::default();
    let mut records = Vec::new();
    for (i, (san, mv)) in game
        .sans
        .iter()
        .zip(game.moves().expect("a legal game"))
        .take(PLIES)
        .enumerate()
    {
        let uci = UciMove::from_move(mv, CastlingMode::Standard).to_string();
        pos.play_unchecked(mv);
        let spent = 1_000 * i as u64;
        records.push(MoveRecord {
            san: san.clone(),
            uci,
            white_ms: Some(900_000 - spent),
            black_ms: Some(895_000 - spent),
            clk_ms: None,
            comments: Vec::new(),
        });
    }
    let tags = game
        .tags
        .into_iter()
        .filter(|(k, _)| !matches!(k.as_str(), "Result" | "PlyCount" | "FEN" | "SetUp"))
        .collect();
    (tags, records)
}

/// The board's view of the text: what `refresh_view` keeps between inputs.
#[derive(Default, Clone)]
struct View {
    text: String,
    cache: eboard_core::game::PgnText,
}

impl View {
    /// The text after a change of the record, as the view renders it.
    fn render(&mut self, game: &Game, pending: usize, clock: Option<&ClockTags>) {
        self.cache.write(&mut self.text, game, pending, clock);
        black_box(&self.text);
    }
}

/// One move through the view: played (not final), final, its press stamped, the clock tags
/// of the press.
fn play(view: &mut View, game: &mut Game, m: &MoveRecord, ply: usize) {
    let clock = |ply: usize, running: Color| ClockTags {
        white_ms: 900_000 - 1_000 * ply as u64,
        black_ms: 895_000 - 1_000 * ply as u64,
        reference: Some((running, 1_800_000_000_000 + 2_000 * ply as u64)),
    };
    let mover = if ply.is_multiple_of(2) {
        Color::White
    } else {
        Color::Black
    };
    let before = clock(ply, mover);
    game.push_move(m.clone());
    view.render(game, 1, Some(&before));
    view.render(game, 0, Some(&before));
    game.stamp_press(m.white_ms.unwrap_or(0) + 2_000);
    view.render(game, 0, Some(&before));
    view.render(game, 0, Some(&clock(ply + 1, mover.other())));
}

fn per_move(c: &mut Criterion) {
    let (tags, records) = long_game();
    let mut group = c.benchmark_group("pgn_text");
    group.bench_function("80 plies, the renders of every move", |b| {
        b.iter(|| {
            let mut game = Game::new(START_FEN, tags.clone());
            let mut view = View::default();
            for (ply, m) in records.iter().enumerate() {
                play(&mut view, &mut game, m, ply);
            }
            black_box(view.text.len())
        })
    });
    // The game of 70 plies with its view up to date, then the last ten moves.
    let mut game70 = Game::new(START_FEN, tags.clone());
    let mut view70 = View::default();
    for (ply, m) in records.iter().enumerate().take(PLIES - 10) {
        play(&mut view70, &mut game70, m, ply);
    }
    group.bench_function("plies 71-80, the renders of each move", |b| {
        b.iter_batched(
            || (game70.clone(), view70.clone()),
            |(mut game, mut view)| {
                for (ply, m) in records.iter().enumerate().skip(PLIES - 10) {
                    play(&mut view, &mut game, m, ply);
                }
                black_box(view.text.len())
            },
            BatchSize::SmallInput,
        )
    });
    let mut full = Game::new(START_FEN, tags.clone());
    for m in &records {
        full.push_move(m.clone());
        full.stamp_press(m.white_ms.unwrap_or(0) + 2_000);
    }
    let tags_now = ClockTags {
        white_ms: 820_000,
        black_ms: 815_000,
        reference: Some((Color::White, 1_800_000_160_000)),
    };
    group.bench_function("one text from scratch, 80 plies", |b| {
        b.iter(|| black_box(full.pgn_final_with_clock(0, Some(&tags_now))))
    });
    group.finish();
    println!(
        "(the first figure covers {PLIES} moves, 4 renders each: divide by {PLIES} for a \
         move's cost; the second 10 moves: divide by 10)"
    );
}

criterion_group!(benches, per_move);
criterion_main!(benches);
