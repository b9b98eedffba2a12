//! Soak of gaps in the link: simulated boards (the project's virtual DGT board with its
//! EEPROM log, wired byte for byte to a board session in memory, stepped time; see
//! `eboard_sim::rig`) play real games from the shared corpus while the daemon is killed and
//! restarted, boards are unplugged (power lost) or lose their data link (power kept), frames
//! are cut on the line, and junk bursts (high bytes too) come between messages. No illegal move is ever made, so every illegal-move signal is a
//! false accusation. When several sequences explain a board, the "arbiter" resolves the gap
//! with the moves really made (counted apart).
//!
//! `cargo bench --bench gap_soak` plays 6 boards × 20 minutes of board time each;
//! `EBOARDD_SOAK_BOARDS`, `EBOARDD_SOAK_MINUTES` and `EBOARDD_SOAK_SEED` change that. Under
//! `cargo test --all-targets` (no `--bench` argument) it plays one board for 3 minutes.
//!
//! Then the scrambles (`sim::scramble`): blitz and bullet pace with unplugs, and bullet at
//! 0.1–0.3 s a ply with kills (-9) too, on a 3+2 and a 3+0 clock, each with the clock's witness of a gap on and off
//! (`EBOARDD_SOAK_SCRAMBLE_GAMES` games per row, 40; 3 in the smoke run): how often the
//! arbiter is asked. It prints figures; it fails when it could not run, and when a scramble
//! lost a ply, ended with a ply not played, or accused anyone (no illegal move is ever made).

use std::time::Instant;

use eboard_core::session::{Command, Event, SessionConfig};
use eboard_sim::rig::Rig;
use eboard_sim::scramble::{Figures as ScrambleFigures, Pace, play_game};
use eboard_sim::{BoardOptions, ClockSetup, Noise, NoiseOptions, PgnGame, parse_games};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Move};

#[derive(Default)]
struct Figures {
    games: u64,
    games_exact: u64,
    plies: u64,
    board_ms: u64,
    kills: u64,
    unplugs: u64,
    link_drops: u64,
    cut_frames: u64,
    gap_plies: u64,
    recovered: u64,
    lost: u64,
    by_memory: u64,
    by_search: u64,
    by_arbiter: u64,
    new_segments: u64,
    false_accusations: u64,
    lost_frames: u64,
    noise_bytes: u64,
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn corpus() -> Vec<PgnGame> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/corpus/twic1599.pgn"
    );
    let games: Vec<PgnGame> = match std::fs::read_to_string(path) {
        Ok(text) => parse_games(&text)
            .into_iter()
            .filter(|g| g.moves().is_ok_and(|m| m.len() >= 30) && g.tag("FEN").is_none())
            .collect(),
        Err(_) => Vec::new(),
    };
    if games.is_empty() {
        vec![eboard_sim::default_game()]
    } else {
        games
    }
}

fn count_accusations(events: &[Event]) -> u64 {
    events.iter().filter(|e| e.is_accusation()).count() as u64
}

/// Let the board settle after a gap; the arbiter resolves an ambiguous one with `truth`.
fn settle(rig: &mut Rig, truth: &[Move], f: &mut Figures) {
    rig.advance(3_000);
    for _ in 0..30 {
        let gap = rig.session().view().gap.clone();
        if gap.is_empty() {
            return;
        }
        if gap.contains("waiting for the arbiter") {
            let moves = truth
                .iter()
                .map(|m| UciMove::from_move(*m, CastlingMode::Standard).to_string())
                .collect();
            if rig.command(Command::ResolveGap(moves)).is_ok() {
                f.by_arbiter += 1;
            }
        }
        rig.advance(1_000);
    }
}

fn play_board(board: u64, games: &[PgnGame], minutes: u64, seed: u64, f: &mut Figures) {
    let mut rng = SmallRng::seed_from_u64(seed ^ board.wrapping_mul(0x9E37_79B9));
    // 90+30: no flag falls during the soak (a lost game on time would end the record).
    let clock = ClockSetup {
        base_ms: 90 * 60_000,
        increment_ms: 30_000,
    };
    let mut rig = Rig::new(
        BoardOptions {
            clock_setup: clock,
            // Junk bursts between messages, high bytes too: some cut the next real frame.
            noise: Some(NoiseOptions {
                mean_interval_ms: 20_000,
                max_len: 6,
                high_bit: true,
                seed: seed + board,
            }),
            ..BoardOptions::default()
        },
        SessionConfig {
            name: format!("soak-{board}"),
            ..SessionConfig::default()
        },
        seed + board,
        Noise::Noisy,
    );
    let budget = minutes * 60_000;
    let mut index = (board as usize * 7) % games.len();
    while rig.now() < budget {
        let game = &games[index % games.len()];
        index += 1;
        let Ok(moves) = game.moves() else { continue };
        if !rig.played_san.is_empty() {
            rig.new_game();
        }
        rig.take_events();
        let mut k = 0;
        while k < moves.len() && rig.now() < budget {
            let roll: f64 = rng.random();
            let gap_len = if roll < 0.08 {
                rng.random_range(1..=6usize).min(moves.len() - k)
            } else {
                0
            };
            if gap_len > 0 {
                let truth = &moves[k..k + gap_len];
                let kind = rng.random_range(0..4);
                match kind {
                    0 => {
                        f.kills += 1;
                        rig.kill();
                    }
                    1 => {
                        f.unplugs += 1;
                        rig.unplug();
                    }
                    2 => {
                        f.link_drops += 1;
                        rig.disconnect();
                    }
                    _ => {
                        f.cut_frames += 1;
                        rig.cut_next_frame();
                    }
                }
                for &m in truth {
                    rig.play_move(m);
                }
                match kind {
                    0 => rig.restart(),
                    1 => rig.replug(),
                    2 => rig.connect(),
                    _ => {}
                }
                settle(&mut rig, truth, f);
                f.gap_plies += gap_len as u64;
                let exact = rig.session().view().moves == rig.played_san;
                if exact {
                    f.recovered += gap_len as u64;
                } else {
                    f.lost += gap_len as u64;
                }
                k += gap_len;
            } else {
                rig.play_move(moves[k]);
                k += 1;
            }
        }
        rig.advance(3_000);
        let view = rig.session().view();
        f.games += 1;
        f.plies += rig.played_san.len() as u64;
        // A game the Laws ended (a dead position the corpus game played on) ends its record.
        let ended_early = view.result != "*" && rig.played_san.starts_with(&view.moves);
        if view.moves == rig.played_san || ended_early {
            f.games_exact += 1;
        } else {
            let first = view
                .moves
                .iter()
                .zip(&rig.played_san)
                .position(|(a, b)| a != b)
                .unwrap_or(view.moves.len().min(rig.played_san.len()));
            println!(
                "  board {board}, {}: the record differs from ply {} ({} recorded, {} played; result {} {})",
                game.title(),
                first + 1,
                view.moves.len(),
                rig.played_san.len(),
                view.result,
                view.termination
            );
        }
        let pgn = view.pgn.split_whitespace().collect::<Vec<_>>().join(" ");
        f.by_memory += pgn.matches("read from the board's memory").count() as u64;
        f.by_search += pgn.matches("recovered: the only legal sequence").count() as u64;
        f.new_segments += pgn.matches("that no legal sequence").count() as u64;
        f.false_accusations += count_accusations(&rig.take_events());
    }
    f.false_accusations += count_accusations(&rig.take_events());
    f.board_ms += rig.now();
    f.lost_frames += rig.lost_frames;
    f.noise_bytes += rig.board.stats().noise_bytes;
}

/// How long the gap search takes on typical boards (median of a few runs, ms).
fn search_times() {
    use eboard_core::tracker::sequences::explain;
    use shakmaty::san::San;
    use shakmaty::{Chess, Position};
    let play = |pos: &Chess, sans: &str| {
        let mut p = pos.clone();
        for s in sans.split_whitespace() {
            let m = s.parse::<San>().unwrap().to_move(&p).unwrap();
            p.play_unchecked(m);
        }
        p
    };
    let cases = [
        ("3 plies, one sequence", "e4", "d5 exd5 Qxd5"),
        ("3 plies, two sequences", "e4 e5", "Nf3 Nc6 Bc4"),
        ("6 quiet plies", "e4 e5 Nf3 Nc6", "Bb5 a6 Ba4 Nf6 O-O Be7"),
        (
            "6 middlegame plies",
            "d4 Nf6 c4 e6 Nc3 Bb4 e3 O-O Bd3 d5 Nf3 c5 O-O Nc6",
            "a3 Bxc3 bxc3 dxc4 Bxc4 Qc7",
        ),
        (
            "7 quiet plies (beyond the bound)",
            "e4 e5 Nf3 Nc6",
            "Bb5 a6 Ba4 Nf6 O-O Be7 Re1",
        ),
    ];
    for (what, before, gap) in cases {
        let from = play(&Chess::default(), before);
        let target = play(&from, gap);
        let mut kind = String::new();
        let mut times: Vec<f64> = (0..3)
            .map(|_| {
                let t = Instant::now();
                let outcome = explain(&from, target.board(), None);
                let ms = t.elapsed().as_secs_f64() * 1000.0;
                kind = match outcome {
                    eboard_core::tracker::sequences::Outcome::Several { total, .. } => {
                        format!("{total} sequences")
                    }
                    eboard_core::tracker::sequences::Outcome::Unique(_) => "unique".into(),
                    other => format!("{other:?}"),
                };
                ms
            })
            .collect();
        times.sort_by(f64::total_cmp);
        println!("search, {what}: {:.2} ms ({kind})", times[1]);
    }
}

/// One row of the scramble table: `games` corpus games (first 80 plies) at `pace` on a
/// clock with `setup`, the clock witness on or off.
fn scramble_row(
    games: &[PgnGame],
    count: u64,
    pace: &Pace,
    setup: ClockSetup,
    witness: bool,
    seed: u64,
) -> ScrambleFigures {
    let mut all = ScrambleFigures::default();
    for g in 0..count {
        let Ok(moves) = games[(g as usize * 13) % games.len()].moves() else {
            continue;
        };
        let moves = &moves[..moves.len().min(80)];
        let mut rig = Rig::new(
            BoardOptions {
                clock_setup: setup,
                ..BoardOptions::default()
            },
            SessionConfig {
                name: format!("scramble-{g}"),
                gap_without_clock_witness: !witness,
                ..SessionConfig::default()
            },
            seed + g,
            Noise::Noisy,
        );
        let f = play_game(&mut rig, moves, pace, seed * 1_000 + g);
        if f.false_accusations > 0 || f.wrong > 0 || f.lost > 0 {
            let accused: Vec<String> = rig
                .journal()
                .iter()
                .filter(|e| e.is_accusation())
                .map(|e| format!("{e:?}"))
                .collect();
            println!(
                "  game {g}: {} wrong, {} lost, accused {accused:?}; record {:?}",
                f.wrong,
                f.lost,
                rig.session().view().moves
            );
        }
        all.add(&f);
    }
    all
}

/// Blitz and bullet scrambles with unplugs (`sim::scramble`): how often a gap needs the
/// arbiter, with the clock's witness (its times after the gap, with an increment the
/// presses they imply) and without it.
fn scramble_table(games: &[PgnGame], count: u64, seed: u64) -> u64 {
    println!(
        "\nscrambles: {count} games per row (first 80 plies), unplugs with moves made meanwhile, the arbiter answering 3 s after a Gap that waits for him"
    );
    println!(
        "| pace | clock | clock witness | unplugs | kills (unplugged too) | plies in gaps | arbiter asked | per 100 faults | games exact | wrong | lost | invisible | false accusations | longest stall |"
    );
    println!("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut bad = 0;
    let paces = [
        (
            "blitz 0.5-1.1 s/ply, 1-1.6 s unplugs",
            Pace {
                unplug_chance: 0.12,
                ..Pace::blitz()
            },
        ),
        (
            "bullet 0.2-0.5 s/ply, 1 s unplugs",
            Pace {
                unplug_chance: 0.08,
                ..Pace::bullet()
            },
        ),
        (
            "bullet 0.1-0.3 s/ply, 1 s unplugs, kills down 1-3 s",
            Pace::bullet_fast(),
        ),
    ];
    let clocks = [
        (
            "3+2",
            ClockSetup {
                base_ms: 180_000,
                increment_ms: 2_000,
            },
        ),
        (
            "3+0",
            ClockSetup {
                base_ms: 180_000,
                increment_ms: 0,
            },
        ),
    ];
    for (pace_name, pace) in &paces {
        for (clock_name, setup) in clocks {
            for witness in [false, true] {
                let f = scramble_row(games, count, pace, setup, witness, seed);
                bad += f.lost + f.wrong + f.false_accusations;
                println!(
                    "| {pace_name} | {clock_name} | {} | {} | {} ({}) | {} | {} | {:.1} | {}/{} | {} | {} | {} | {} | {} ms |",
                    if witness { "on" } else { "off" },
                    f.unplugs,
                    f.kills,
                    f.kills_unplugged,
                    f.gap_plies,
                    f.asked,
                    f.asked as f64 * 100.0 / (f.unplugs + f.kills).max(1) as f64,
                    f.games_exact,
                    f.games,
                    f.wrong,
                    f.lost,
                    f.invisible,
                    f.false_accusations,
                    f.longest_stall_ms
                );
            }
        }
    }
    bad
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let boards = if full {
        env_u64("EBOARDD_SOAK_BOARDS", 6)
    } else {
        1
    };
    let minutes = if full {
        env_u64("EBOARDD_SOAK_MINUTES", 20)
    } else {
        3
    };
    let seed = env_u64("EBOARDD_SOAK_SEED", 1);
    search_times();
    let games = corpus();
    let started = Instant::now();
    let mut f = Figures::default();
    for board in 0..boards {
        play_board(board, &games, minutes, seed, &mut f);
    }
    let wall = started.elapsed();
    println!(
        "gap soak: {boards} boards x {minutes} min of board time ({:.0} min in all), seed {seed}, {:.1} s wall",
        f.board_ms as f64 / 60_000.0,
        wall.as_secs_f64()
    );
    println!(
        "gaps: {} ({} daemon kills, {} unplugs, {} link drops, {} cut frames)",
        f.kills + f.unplugs + f.link_drops + f.cut_frames,
        f.kills,
        f.unplugs,
        f.link_drops,
        f.cut_frames
    );
    println!(
        "junk: {} bytes in bursts; frames lost on the line: {} (each read as a gap)",
        f.noise_bytes, f.lost_frames
    );
    println!(
        "games exact: {}/{} ({} plies)",
        f.games_exact, f.games, f.plies
    );
    println!("false accusations: {}", f.false_accusations);
    println!(
        "moves made during gaps: {}; recovered {} (gaps closed by the board's memory {}, by the search {}, by the arbiter {}), lost {}; new segments {}",
        f.gap_plies, f.recovered, f.by_memory, f.by_search, f.by_arbiter, f.lost, f.new_segments
    );
    let per_row = if full {
        env_u64("EBOARDD_SOAK_SCRAMBLE_GAMES", 40)
    } else {
        3
    };
    let bad = scramble_table(&games, per_row, seed);
    // A lost ply or a false accusation in a scramble is a defect, in the smoke run too.
    assert_eq!(bad, 0, "scrambles lost plies or accused someone falsely");
}
