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
    "/tests/data/oracle/cha-test-vector.txt"
));
const CHASOLVER_POSITIONS: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/oracle/chasolver-positions.txt"
));

/// Every `FULL`-th position gets the full search and every `FAST`-th the fast checks: these
/// are hard composed positions (the full search averages about 40 ms per side, the fast
/// check several ms), so the default run samples them. `cargo test --release --test
/// arbiter_cha -- --ignored` checks every position.
#[cfg(debug_assertions)]
const SAMPLE: (usize, usize) = (40, 8);
#[cfg(not(debug_assertions))]
const SAMPLE: (usize, usize) = (4, 1);

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

fn check_file(name: &str, text: &str, (full_every, fast_every): (usize, usize)) -> Tally {
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
        let full = n % full_every == 0;
        if n % fast_every != 0 && !full {
            continue;
        }
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
        "{name}: full search on {} positions (every {full_every}th), {} budget hits (sides), \
         {} unreadable; fast checks on {} (every {fast_every}th) proved {} unwinnable sides",
        t.checked, t.budget_hits, t.unreadable, t.all, t.fast_found
    );
    t
}

fn assert_tally(t: &Tally, lines: usize, (full_every, fast_every): (usize, usize)) {
    assert!(
        t.checked >= lines / full_every,
        "too few positions searched"
    );
    assert!(t.all >= lines / fast_every, "too few positions checked");
    assert!(t.budget_hits * 100 <= t.checked, "too many budget hits");
    assert_eq!(t.unreadable, 0);
}

#[test]
fn cha_test_vector_verdicts_agree() {
    let t = check_file("cha-test-vector", CHA_VECTOR, SAMPLE);
    assert_tally(&t, 1802, SAMPLE);
}

#[test]
fn chasolver_positions_verdicts_agree() {
    let t = check_file("chasolver-positions", CHASOLVER_POSITIONS, SAMPLE);
    assert_tally(&t, 3414, SAMPLE);
}

#[test]
#[ignore = "minutes: every position, full search; run with --release -- --ignored"]
fn every_position_verdict_agrees() {
    for (name, text, lines) in [
        ("cha-test-vector", CHA_VECTOR, 1802),
        ("chasolver-positions", CHASOLVER_POSITIONS, 3414),
    ] {
        let t = check_file(name, text, (1, 1));
        assert_tally(&t, lines, (1, 1));
    }
}
