//! Property test: every corpus game, replayed through random human handling under several
//! seeds, is reconstructed exactly — no wrong move, no missed move.
//!
//! Debug builds use three seeds (normal/reversed board, with and without clock presses) to stay
//! well under a minute; release builds (or `EBOARDD_FULL_CORPUS=1`) use eight.

mod tracker_common;

use eboardd::board::Orientation;
use eboardd::session::OrientationSetting;
use eboardd::sim::handling::{Handling, Noise};
use eboardd::tracker::TrackerEvent;
use shakmaty::Chess;
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
    for (i, game) in games.iter().enumerate().step_by(step) {
        for &seed in seeds {
            let reversed = seed.is_multiple_of(2);
            let clock = !seed.is_multiple_of(3);
            let (setting, orientation) = if reversed {
                (OrientationSetting::Auto, Orientation::Reversed)
            } else {
                (OrientationSetting::Auto, Orientation::Normal)
            };
            let mut rig = Rig::new(Chess::default(), setting, orientation);
            let mut hands =
                Handling::new(seed * 1_000_003 + i as u64, Noise::Noisy).with_clock(clock);
            for &mv in game {
                rig.handle(&mut hands, mv);
            }
            rig.wait(5_000);
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
            let illegal = rig
                .events
                .iter()
                .filter(|e| matches!(e, TrackerEvent::IllegalPlacement { .. }))
                .count();
            if got != want || illegal > 0 || !rig.tracker.in_sync() {
                let first = got
                    .iter()
                    .zip(&want)
                    .position(|(a, b)| a != b)
                    .unwrap_or(got.len().min(want.len()));
                failures.push(format!(
                    "game {i} seed {seed}: diverges at ply {first} (got {:?}, want {:?}), {} plies vs {}, illegal reports {illegal}, in sync {}",
                    got.get(first), want.get(first), got.len(), want.len(), rig.tracker.in_sync()
                ));
            }
        }
    }
    println!(
        "replayed {plies} plies: {} failures, {corrections} corrections = {:.1} per 1,000 plies",
        failures.len(),
        corrections as f64 * 1000.0 / plies as f64
    );
    for f in failures.iter().take(20) {
        println!("{f}");
    }
    assert!(
        failures.is_empty(),
        "{} games not reconstructed",
        failures.len()
    );
}
