//! The unwinnability verdicts used at a flag fall, a losing illegal move and a resignation,
//! against the labelled positions of the Chess Unwinnability Analyzer (`cha-test-vector.txt`)
//! and of the `chasolver` crate's community queries (`chasolver-positions.txt`).
//!
//! Every verdict must agree, except positions where the analyser's node budget is hit (which
//! the arbiter treats as "can mate"); those are counted, printed and must stay few. The fast
//! check used after every move must be sound: it may only say "cannot mate" when the label
//! agrees.

use eboardd::arbiter::unwinnable::{Verdict, cannot_mate_fast, is_dead_fast, winnability};
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Color};

const CHA_VECTOR: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/oracle/cha-test-vector.txt"
));
const CHASOLVER_POSITIONS: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/oracle/chasolver-positions.txt"
));

/// Debug builds run the full search on every `STRIDE`-th position (the analyser itself is
/// optimised in every profile, but these hard positions average about 15 ms per side); the
/// fast checks run on all of them. Release builds search all.
#[cfg(debug_assertions)]
const STRIDE: usize = 12;
#[cfg(not(debug_assertions))]
const STRIDE: usize = 1;

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

struct Tally {
    checked: usize,
    budget_hits: usize,
    unreadable: usize,
    fast_found: usize,
    all: usize,
}

fn check_file(name: &str, text: &str) -> Tally {
    let mut t = Tally {
        checked: 0,
        budget_hits: 0,
        unreadable: 0,
        fast_found: 0,
        all: 0,
    };
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#') && l.len() > 3)
        .collect();
    for (n, line) in lines.iter().enumerate() {
        let (label, fen) = line.split_at(2);
        let fen = fen.trim();
        let Some(pos) = position(fen) else {
            t.unreadable += 1;
            continue;
        };
        let expect = [label.as_bytes()[0] == b'W', label.as_bytes()[1] == b'B'];
        let full = n % STRIDE == 0;
        for (i, c) in [Color::White, Color::Black].into_iter().enumerate() {
            if cannot_mate_fast(&pos, c) {
                t.fast_found += 1;
                assert!(
                    !expect[i],
                    "{name}: fast check unsound on {label} {fen} for {c:?}"
                );
            }
            if !full {
                continue;
            }
            match winnability(&pos, c) {
                Verdict::Unknown => t.budget_hits += 1,
                v => assert_eq!(
                    v == Verdict::CanMate,
                    expect[i],
                    "{name}: {label} {fen}: {c:?} verdict {v:?}"
                ),
            }
        }
        if is_dead_fast(&pos) {
            assert_eq!(label, "--", "{name}: dead-position check unsound on {fen}");
        }
        t.checked += usize::from(full);
        t.all += 1;
    }
    eprintln!(
        "{name}: full search on {} positions (every {STRIDE}th), {} budget hits (sides), \
         {} unreadable; fast check on all {} proved {} unwinnable sides",
        t.checked, t.budget_hits, t.unreadable, t.all, t.fast_found
    );
    t
}

#[test]
fn cha_test_vector_verdicts_agree() {
    let t = check_file("cha-test-vector", CHA_VECTOR);
    assert!(t.checked > 1800 / STRIDE - 10 && t.all > 1790);
    assert!(t.budget_hits * 100 <= t.checked, "too many budget hits");
    assert_eq!(t.unreadable, 0);
}

#[test]
fn chasolver_positions_verdicts_agree() {
    let t = check_file("chasolver-positions", CHASOLVER_POSITIONS);
    assert!(t.checked > 3400 / STRIDE - 10 && t.all > 3390);
    assert!(t.budget_hits * 100 <= t.checked, "too many budget hits");
    assert_eq!(t.unreadable, 0);
}
