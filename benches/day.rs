//! The tournament-day additions on the hot path and at the operator's hand: the result
//! gesture check the session runs after every board input, the Chess960 start check on a
//! full board, the clock command channel per acknowledged message, and parsing a 200-board
//! TRF-16 pairings file.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use eboard_core::dgt::clock_channel::ClockChannel;
use eboard_core::dgt::message::{ClockAck, Message};
use eboard_core::tracker::{chess960, gesture};
use eboardd::cli::pairings;
use shakmaty::Board;

fn board(fen: &str) -> Board {
    fen.parse::<shakmaty::fen::Fen>()
        .unwrap()
        .into_setup()
        .board
}

fn trf(players: u32) -> String {
    let mut lines = vec!["012 Bench Open".to_string()];
    for rank in 1..=players {
        // Round 1: 1-2, 3-4, ... with the odd one White.
        let opp = if rank % 2 == 1 { rank + 1 } else { rank - 1 };
        let colour = if rank % 2 == 1 { 'w' } else { 'b' };
        lines.push(format!(
            "001 {rank:>4} m    {:<33} {:>4} NOR {:>11} 1990/01/01  0.0 {rank:>4}  {opp:>4} {colour}  ",
            format!("Player {rank}, Øystein"),
            2000 + rank,
            1000 + rank
        ));
    }
    lines.join("\n")
}

fn benches(c: &mut Criterion) {
    let game = board("r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R");
    let sensed = game.clone();
    c.bench_function("gesture check, ordinary board", |b| {
        b.iter(|| gesture::gesture_result(black_box(&sensed), black_box(&game)))
    });
    let end = board("8/8/4k3/8/8/4K3/8/R7");
    let kings = board("8/8/8/3k4/4K3/8/8/R7");
    c.bench_function("gesture check, kings on the centre", |b| {
        b.iter(|| gesture::gesture_result(black_box(&kings), black_box(&end)))
    });
    let start = board("rbbqnnkr/pppppppp/8/8/8/8/PPPPPPPP/RBBQNNKR");
    c.bench_function("chess960 start position", |b| {
        b.iter(|| chess960::start_position(black_box(&start)))
    });
    c.bench_function("clock message: show, ack, end, ack", |b| {
        b.iter(|| {
            let mut ch = ClockChannel::new();
            ch.show("BOARD 7", 0).unwrap();
            let a = ch.poll_transmit(0);
            ch.on_message(&Message::ClockAck(ClockAck::ok(0x0C)), 10);
            let e = ch.poll_transmit(5_000);
            ch.on_message(&Message::ClockAck(ClockAck::ok(0x03)), 5_010);
            black_box((a, e, ch.poll_outcome()))
        })
    });
    let text = trf(400);
    c.bench_function("pairings: TRF-16, 400 players (200 boards)", |b| {
        b.iter(|| pairings::parse(black_box(&text), None).unwrap().len())
    });
}

criterion_group!(day, benches);
criterion_main!(day);
