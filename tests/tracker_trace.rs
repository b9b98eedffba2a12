//! Diagnostic, not run by default: trace the sensor steps and tracker events around one ply
//! of one corpus game under the corpus test's handling, e.g.
//! `G=300 S=1 P=58 Q=0 cargo test --test tracker_trace -- --ignored --nocapture`.

mod tracker_common;
use tracker_common::*;

#[test]
#[ignore]
fn trace_one_ply() {
    let var = |name: &str| -> u64 {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    let (gi, seed, from) = (var("G") as usize, var("S"), var("P") as usize);
    let games = corpus_games();
    let rig = replay_game(
        gi,
        &games[gi],
        seed,
        var("Q") as f64 / 100.0,
        Some(from.saturating_sub(3)..=from + 2),
    );
    println!("final: {:?}", rig.game_uci());
}
