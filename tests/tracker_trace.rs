//! Diagnostic, not run by default: trace the sensor steps and tracker events around one ply
//! of one corpus game under the corpus test's handling, e.g.
//! `G=300 S=1 P=58 cargo test --test tracker_trace -- --ignored --nocapture`.

mod tracker_common;
use eboardd::board::Orientation;
use eboardd::session::OrientationSetting;
use eboardd::sim::handling::{Handling, Noise};
use shakmaty::Chess;
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
    let game = &games[gi];
    let orientation = if seed.is_multiple_of(2) {
        Orientation::Reversed
    } else {
        Orientation::Normal
    };
    let mut rig = Rig::new(Chess::default(), OrientationSetting::Auto, orientation);
    let mut hands = Handling::new(seed * 1_000_003 + gi as u64, Noise::Noisy)
        .with_clock(!seed.is_multiple_of(3));
    for (ply, &mv) in game.iter().enumerate() {
        let pos = rig.tracker.position().clone();
        let steps = hands.steps(&pos, mv);
        if ply + 3 >= from && ply <= from + 2 {
            println!("ply {ply} {mv}");
            for s in &steps {
                let ev = rig.steps(&[*s]);
                println!("   {s:?} -> {ev:?}");
            }
        } else {
            rig.steps(&steps);
        }
    }
}
