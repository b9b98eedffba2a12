//! The unwinnability verdicts used at a flag fall, a losing illegal move and a resignation,
//! against the labelled positions of the Chess Unwinnability Analyzer (`cha-test-vector.txt`)
//! and of the `chasolver` crate's community queries (`chasolver-positions.txt`).
//!
//! Every verdict must agree, except positions where the analyser's node budget is hit (which
//! the arbiter treats as "can mate"); those are counted, printed and must stay few. The fast
//! check used after every move must be sound: it may only say "cannot mate" when the label
//! agrees.

use std::collections::HashMap;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use eboard_core::arbiter::unwinnable::{Verdict, cannot_mate_fast, is_dead_fast, winnability};
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Color};

const CHA_VECTOR: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/data/oracle/cha-test-vector.txt"
));
const CHASOLVER_POSITIONS: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/data/oracle/chasolver-positions.txt"
));

fn position(fen: &str) -> Option<Chess> {
    // One line of the vector lacks the castling and ep fields.
    let mut fields: Vec<&str> = fen.split_whitespace().collect();
    while fields.len() < 4 {
        fields.push("-");
    }
    let full = format!("{} 0 1", fields.join(" "));
    let setup = Fen::from_ascii(full.as_bytes()).ok()?;
    match setup.into_position::<Chess>(CastlingMode::Standard) {
        Ok(p) => Some(p),
        // Composed positions may have checks no legal game reaches; the question is still
        // well posed, so accept them as the analyser does.
        // Composed positions may also have more material than a game can (ten bishops).
        Err(e) => match e.ignore_too_much_material() {
            Ok(p) => Some(p),
            Err(e) => e.ignore_impossible_check().ok(),
        },
    }
}

/// What the analyser says about one position: the fast check and the full search for each
/// side (White, Black), and the dead-position check.
struct Answers {
    fast: [bool; 2],
    full: [Verdict; 2],
    dead: bool,
}

/// The positions of a file as (label, FEN) pairs.
fn entries(text: &str) -> Vec<(&str, &str)> {
    text.lines()
        .filter(|l| !l.starts_with('#') && l.len() > 3)
        .map(|line| {
            let (label, fen) = line.split_at(2);
            (label, fen.trim())
        })
        .collect()
}

/// The analyser's answers for every distinct readable position of both files, computed once
/// for both tests: all but two of the vector's positions are also among the community
/// queries, and the analyser is nearly all of the cost (the full search averages about 15 ms
/// a side, the hardest take seconds, and so do a few fast checks). The work is shared out
/// over every core position by position, since a few positions take a hundred times the
/// average.
fn answers() -> &'static HashMap<&'static str, Answers> {
    static ANSWERS: OnceLock<HashMap<&'static str, Answers>> = OnceLock::new();
    ANSWERS.get_or_init(|| {
        let mut fens: Vec<&'static str> = entries(CHA_VECTOR)
            .into_iter()
            .chain(entries(CHASOLVER_POSITIONS))
            .map(|(_, fen)| fen)
            .collect();
        fens.sort_unstable();
        fens.dedup();
        let next = AtomicUsize::new(0);
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    scope.spawn(|| {
                        let mut done = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(&fen) = fens.get(i) else {
                                return done;
                            };
                            let Some(pos) = position(fen) else {
                                continue;
                            };
                            let sides = [Color::White, Color::Black];
                            let answers = Answers {
                                fast: sides.map(|c| cannot_mate_fast(&pos, c)),
                                full: sides.map(|c| winnability(&pos, c)),
                                dead: is_dead_fast(&pos),
                            };
                            done.push((fen, answers));
                        }
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().expect("an analyser thread panicked"))
                .collect()
        })
    })
}

struct Tally {
    checked: usize,
    budget_hits: usize,
    unreadable: usize,
    fast_found: usize,
}

/// Every position of a file: the full search agrees with the label on both sides unless its
/// budget ran out, and the fast checks never claim "cannot mate" against the label.
fn check_file(name: &str, text: &str) -> Tally {
    let answers = answers();
    let mut t = Tally {
        checked: 0,
        budget_hits: 0,
        unreadable: 0,
        fast_found: 0,
    };
    for (label, fen) in entries(text) {
        let Some(a) = answers.get(fen) else {
            t.unreadable += 1;
            continue;
        };
        let expect = [label.as_bytes()[0] == b'W', label.as_bytes()[1] == b'B'];
        for (i, c) in [Color::White, Color::Black].into_iter().enumerate() {
            if a.fast[i] {
                t.fast_found += 1;
                assert!(
                    !expect[i],
                    "{name}: fast check unsound on {label} {fen} for {c:?}"
                );
            }
            match a.full[i] {
                Verdict::Unknown => t.budget_hits += 1,
                v => assert_eq!(
                    v == Verdict::CanMate,
                    expect[i],
                    "{name}: {label} {fen}: {c:?} verdict {v:?}"
                ),
            }
        }
        if a.dead {
            assert_eq!(label, "--", "{name}: dead-position check unsound on {fen}");
        }
        t.checked += 1;
    }
    eprintln!(
        "{name}: full search and fast checks on {} positions, {} budget hits (sides), {} \
         unreadable; the fast checks proved {} unwinnable sides",
        t.checked, t.budget_hits, t.unreadable, t.fast_found
    );
    t
}

fn assert_tally(t: &Tally, positions: usize) {
    assert_eq!(t.checked, positions, "every position searched");
    assert!(t.budget_hits * 100 <= t.checked, "too many budget hits");
    assert_eq!(t.unreadable, 0);
}

#[test]
fn cha_test_vector_verdicts_agree() {
    let t = check_file("cha-test-vector", CHA_VECTOR);
    assert_tally(&t, 1803);
}

#[test]
fn chasolver_positions_verdicts_agree() {
    let t = check_file("chasolver-positions", CHASOLVER_POSITIONS);
    assert_tally(&t, 3414);
}
