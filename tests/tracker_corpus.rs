//! Property test: every corpus game, replayed through random human handling under several
//! seeds, is reconstructed exactly — no wrong move, no missed move, no illegal placement
//! reported — with at most 5 corrections (a published move retracted and replaced) per 1,000
//! plies at the tracker's dwell. A second test plays quick replies read together with the
//! move: a game may stay out of sync where the boards cannot tell two stories apart, but it
//! is never wrong while in sync.
//!
//! Debug builds use three seeds (normal/reversed board, with and without clock presses) to stay
//! well under a minute; release builds (or `EBOARDD_FULL_CORPUS=1`) use eight.

mod tracker_common;

use eboardd::tracker::TrackerEvent;
use tracker_common::*;

#[test]
fn corpus_games_reconstructed_exactly_under_noisy_handling() {
    let games = corpus_games();
    assert!(games.len() >= 1100, "corpus has {} games", games.len());
    let full = !cfg!(debug_assertions) || std::env::var_os("EBOARDD_FULL_CORPUS").is_some();
    let step = 1;
    let seeds: &[u64] = if full {
        &[1, 2, 3, 4, 5, 6, 7, 8]
    } else {
        &[1, 2, 3]
    };
    let (mut plies, mut corrections, mut failures) = (0usize, 0u64, Vec::new());
    let (mut wrong, mut missed, mut wrong_in_sync) = (0usize, 0usize, 0usize);
    for (i, game) in games.iter().enumerate().step_by(step) {
        for &seed in seeds {
            let rig = replay_game(i, game, seed, 0.0, None);
            let got = rig.game_uci();
            let want: Vec<String> = game
                .iter()
                .map(|m| {
                    shakmaty::uci::UciMove::from_move(*m, shakmaty::CastlingMode::Standard)
                        .to_string()
                })
                .collect();
            plies += game.len();
            corrections += u64::from(rig.tracker.corrections());
            let reports: Vec<&TrackerEvent> = rig
                .events
                .iter()
                .filter(|e| matches!(e, TrackerEvent::IllegalPlacement { .. }))
                .collect();
            let illegal = reports.len();
            if got.len() < want.len() && want.starts_with(&got) {
                missed += 1;
            } else if got != want {
                wrong += 1;
                wrong_in_sync += usize::from(rig.tracker.in_sync());
            }
            if got != want || illegal > 0 || !rig.tracker.in_sync() {
                let first = got
                    .iter()
                    .zip(&want)
                    .position(|(a, b)| a != b)
                    .unwrap_or(got.len().min(want.len()));
                failures.push(format!(
                    "game {i} seed {seed}: diverges at ply {first} (got {:?}, want {:?}), {} plies vs {}, illegal reports {illegal} (first {:?}), in sync {}",
                    got.get(first), want.get(first), got.len(), want.len(), reports.first(), rig.tracker.in_sync()
                ));
            }
        }
    }
    let per_1000 = corrections as f64 * 1000.0 / plies as f64;
    println!(
        "replayed {plies} plies: {} failures ({wrong} wrong, {wrong_in_sync} of them in sync, {missed} missing moves), {corrections} corrections = {per_1000:.1} per 1,000 plies",
        failures.len(),
    );
    for f in failures.iter().take(20) {
        println!("{f}");
    }
    assert_eq!((wrong, wrong_in_sync, missed), (0, 0, 0));
    assert!(
        failures.is_empty(),
        "{} games not reconstructed",
        failures.len()
    );
    assert!(per_1000 <= 5.0, "{per_1000:.1} corrections per 1,000 plies");
}

/// Quick replies (the reply's first lift read before the move's last placement), with the
/// clock, at 5% of plies. Most are inferred; the rest are cases the board cannot tell apart
/// (see the tracker's module documentation) and must never end in a wrong final game
/// without being out of sync.
#[test]
fn quick_replies_read_with_the_move() {
    let games = corpus_games();
    let step = if cfg!(debug_assertions) { 4 } else { 1 };
    let (mut runs, mut exact, mut wrong_in_sync) = (0usize, 0usize, Vec::new());
    for (i, game) in games.iter().enumerate().step_by(step) {
        for seed in [1u64, 2] {
            let rig = replay_game(i, game, seed, 0.05, None);
            let got = rig.game_uci();
            let want: Vec<String> = game
                .iter()
                .map(|m| shakmaty::uci::UciMove::from_standard(*m).to_string())
                .collect();
            runs += 1;
            if got == want {
                exact += 1;
            } else if rig.tracker.in_sync() {
                wrong_in_sync.push(format!("game {i} seed {seed}"));
            }
        }
    }
    println!(
        "quick replies: {exact} of {runs} games exact ({:.1}%); in sync with a different game: {}",
        exact as f64 * 100.0 / runs as f64,
        wrong_in_sync.len()
    );
    for w in wrong_in_sync.iter().take(10) {
        println!("  {w}");
    }
    assert!(
        wrong_in_sync.is_empty(),
        "in sync with a game that was not played: {wrong_in_sync:?}"
    );
    assert!(exact * 100 >= runs * 97, "{exact} of {runs}");
}
