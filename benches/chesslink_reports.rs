//! What a Millennium ChessLink board sends per move, by report mode: every corpus game played
//! by noisy human hands (slides, capture orders, touches, adjustments; no clock) on the
//! simulated board in stepped time, the host's report mode written to the board's option
//! bytes at power-up. Prints, per mode, status reports and bytes per move and the time the
//! core's reply decoder takes per report. Figures only: nothing here fails on them.
//!
//! `cargo bench --bench chesslink_reports` (`EBOARDD_BENCH_GAMES=N` plays the first N games).

#[path = "../tests/tracker_common/mod.rs"]
mod tracker_common;

use std::time::{Duration, Instant};

use eboard_core::chesslink::settings::{AUTO_REPORT, AutoReport, DEFAULT_SCAN_TIME, SCAN_TIME};
use eboard_core::chesslink::{Decoder, ParityCheck};
use eboard_sim::chesslink::pty::AFTER_MOVE_MS;
use eboard_sim::chesslink::{MillenniumBoard, MillenniumOptions};
use eboard_sim::handling::{Handling, Noise, SensorStep};
use shakmaty::{Chess, Position as _};

/// What one mode cost over the games.
#[derive(Default)]
struct Tally {
    moves: u64,
    reports: u64,
    bytes: u64,
    decoded: u64,
    decode_time: Duration,
}

/// Advance the board's time to `to`, visiting every deadline on the way, and collect what it
/// writes.
fn advance(board: &mut MillenniumBoard, now: &mut u64, to: u64, out: &mut Vec<u8>) {
    while let Some(next) = board.next_deadline(*now).filter(|&t| t <= to) {
        *now = next.max(*now + 1).min(to);
        out.extend(board.poll(*now));
        if *now == to {
            break;
        }
    }
    *now = to;
    out.extend(board.poll(*now));
}

fn play(games: &[Vec<shakmaty::Move>], mode: AutoReport) -> Tally {
    let mut tally = Tally::default();
    for (i, game) in games.iter().enumerate() {
        let mut board = MillenniumBoard::new(
            MillenniumOptions {
                eeprom: vec![(SCAN_TIME, DEFAULT_SCAN_TIME), (AUTO_REPORT, mode.code())],
                ..MillenniumOptions::default()
            },
            0,
        );
        let mut hands = Handling::new(i as u64, Noise::Noisy).with_clock(false);
        let mut position = Chess::default();
        let mut now = 0;
        let mut wire = Vec::new();
        // Past the power-up reset before the first hand.
        advance(&mut board, &mut now, 5_000, &mut wire);
        wire.clear();
        let before = board.stats().reports;
        for &mv in game {
            for step in hands.steps(&position, mv) {
                match step {
                    SensorStep::Lift(sq) => board.lift(sq, now),
                    SensorStep::Place(sq, piece) => board.place(sq, piece, now),
                    SensorStep::Pause(ms) => {
                        let to = now + ms;
                        advance(&mut board, &mut now, to, &mut wire);
                    }
                    SensorStep::Press => {}
                }
            }
            let to = now + AFTER_MOVE_MS;
            advance(&mut board, &mut now, to, &mut wire);
            position.play_unchecked(mv);
        }
        tally.moves += game.len() as u64;
        tally.reports += board.stats().reports - before;
        tally.bytes += wire.len() as u64;
        let started = Instant::now();
        let (replies, _) = Decoder::decode_all(&wire, ParityCheck::Verify);
        tally.decode_time += started.elapsed();
        tally.decoded += replies.len() as u64;
    }
    tally
}

fn main() {
    let mut games = tracker_common::corpus_games();
    if let Some(n) = std::env::var("EBOARDD_BENCH_GAMES")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        games.truncate(n);
    }
    println!(
        "{} games, noisy human hands, no clock, {AFTER_MOVE_MS} ms standing after each move",
        games.len()
    );
    for (name, mode) in [
        ("on change (eboardd's)", AutoReport::OnChange),
        ("debounced 2 scans", AutoReport::Debounced(2)),
        ("debounced 4 scans", AutoReport::Debounced(4)),
        ("every scan (the board's default)", AutoReport::EveryScan),
    ] {
        let t = play(&games, mode);
        println!(
            "{name}: {:.2} reports and {:.0} bytes a move; {} of {} reports decoded, {:.2} µs each",
            t.reports as f64 / t.moves as f64,
            t.bytes as f64 / t.moves as f64,
            t.decoded,
            t.reports,
            t.decode_time.as_secs_f64() * 1e6 / t.decoded.max(1) as f64
        );
    }
}
