//! Every corpus game, played through the arbiter with a simulated clock, exports as PGN that
//! re-parses (pgn-reader + shakmaty SAN) to the same moves, with a `%clk` for
//! every move, the seven-tag roster and the result.

use eboard_core::arbiter::{Arbiter, ArbiterConfig};
use eboard_core::dgt::message::{ClockReading, ClockStatus, DisplayFlags, DisplayTime};
use eboard_core::vocab::WhiteDisplay;
use shakmaty::san::San;
use shakmaty::{Chess, Color, Move, Position};

const CORPUS: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/corpus/twic1599.pgn"
));

struct PgnGame {
    tags: Vec<(String, String)>,
    /// SAN tokens and the `%clk` comments that follow each.
    moves: Vec<String>,
    clks: Vec<Option<String>>,
    result: String,
}

/// The games of a PGN text as this test checks them, read with `pgn-reader` (through
/// `sim::pgn`, an independent parser by shakmaty's author, not the exporter under test): tags,
/// main-line SAN, the `%clk` of the comments after each move, the result.
fn read_pgn(text: &str) -> Vec<PgnGame> {
    eboard_sim::parse_games(text)
        .into_iter()
        .map(|g| {
            let mut clks: Vec<Option<String>> = vec![None; g.sans.len()];
            for (after, comment) in &g.comments {
                if let Some(slot) = after.checked_sub(1).and_then(|i| clks.get_mut(i))
                    && let Some(rest) = comment.split("[%clk ").nth(1)
                    && let Some(v) = rest.split(']').next()
                {
                    *slot = Some(v.trim().to_string());
                }
            }
            PgnGame {
                tags: g.tags,
                moves: g.sans,
                clks,
                result: g.result.unwrap_or_default(),
            }
        })
        .collect()
}

fn to_moves(start: &Chess, sans: &[String]) -> Result<Vec<Move>, String> {
    let mut pos = start.clone();
    let mut out = Vec::new();
    for (i, s) in sans.iter().enumerate() {
        let san: San = s
            .trim_end_matches(['+', '#', '!', '?'])
            .parse()
            .map_err(|e| format!("ply {} `{s}`: {e}", i + 1))?;
        let m = san
            .to_move(&pos)
            .map_err(|e| format!("ply {} `{s}`: {e}", i + 1))?;
        pos.play_unchecked(m);
        out.push(m);
    }
    Ok(out)
}

fn dt(ms: u64) -> DisplayTime {
    let s = ms / 1000;
    DisplayTime {
        hours: (s / 3600).min(9) as u8,
        minutes: ((s / 60) % 60) as u8,
        seconds: (s % 60) as u8,
    }
}

/// A clock reading with White on the left, `run` = the colour whose time runs.
fn reading(w: u64, b: u64, run: Color) -> ClockReading {
    ClockReading {
        left: dt(w),
        right: dt(b),
        left_flags: DisplayFlags::default(),
        right_flags: DisplayFlags::default(),
        status: ClockStatus {
            running: true,
            lever_left_down: run == Color::Black,
            battery_low: false,
            left_running: run == Color::White,
            right_running: run == Color::Black,
            connected: true,
        },
    }
}

#[test]
fn corpus_games_export_and_reparse_to_the_same_moves_with_clk() {
    let games = read_pgn(CORPUS);
    assert_eq!(games.len(), 1110, "the corpus reader found every game");
    let mut replayed = 0;
    let mut ended_early = 0;
    let mut plies = 0;
    for (n, g) in games.iter().enumerate() {
        let moves = to_moves(&Chess::default(), &g.moves)
            .unwrap_or_else(|e| panic!("corpus game {n}: {e}"));
        let cfg = ArbiterConfig {
            white_display: WhiteDisplay::Left,
            time_control: Some("5400+30".parse().unwrap()),
            ..ArbiterConfig::default()
        };
        let tags: Vec<(String, String)> = g
            .tags
            .iter()
            .filter(|(k, _)| k != "Result")
            .cloned()
            .collect();
        let mut a = Arbiter::new(cfg, Chess::default(), tags);
        let (mut w, mut b) = (5_400_000u64, 5_400_000u64);
        let mut now = 0u64;
        let _ = a.on_clock(&reading(w, b, Color::White), now);
        for (i, &m) in moves.iter().enumerate() {
            if a.is_finished() {
                break;
            }
            let mover = a.position().turn();
            // Deterministic thinking time, 1-60 s.
            let think = 1_000 + ((i as u64 * 7_919) % 59) * 1_000;
            now += think;
            let t = if mover == Color::White {
                &mut w
            } else {
                &mut b
            };
            *t = t.saturating_sub(think);
            let _ = a.on_clock(&reading(w, b, mover), now);
            let _ = a.on_move(m, now + 50);
            let t = if mover == Color::White {
                &mut w
            } else {
                &mut b
            };
            *t += 30_000;
            now += 200;
            let _ = a.on_clock(&reading(w, b, mover.other()), now);
        }
        let accepted = a.game().current_moves().len();
        if accepted < moves.len() {
            // Only a game end (mate, stalemate, dead position, fivefold, 75 moves) stops the
            // record: the corpus has games transmitted on past the mate.
            assert!(a.is_finished(), "corpus game {n} stopped at ply {accepted}");
            ended_early += 1;
        }
        let pgn = a.game().pgn();
        let back = read_pgn(&pgn);
        assert_eq!(back.len(), 1, "game {n}: one PGN game\n{pgn}");
        let back = &back[0];
        let re = to_moves(&Chess::default(), &back.moves)
            .unwrap_or_else(|e| panic!("game {n} exported PGN does not re-parse: {e}\n{pgn}"));
        assert_eq!(re, moves[..accepted], "game {n}: moves differ\n{pgn}");
        assert!(
            back.clks.iter().all(Option::is_some),
            "game {n}: a move without %clk\n{pgn}"
        );
        for tag in ["Event", "Site", "Date", "Round", "White", "Black", "Result"] {
            assert!(
                back.tags.iter().any(|(k, _)| k == tag),
                "game {n}: no {tag}"
            );
        }
        let white = g.tags.iter().find(|(k, _)| k == "White").map(|(_, v)| v);
        assert_eq!(
            back.tags.iter().find(|(k, _)| k == "White").map(|(_, v)| v),
            white
        );
        assert_eq!(back.result, a.result().as_str());
        replayed += 1;
        plies += accepted;
    }
    eprintln!(
        "{replayed} corpus games ({plies} plies) exported and re-parsed; {ended_early} ended \
         by the arbiter before the recorded score did"
    );
}

#[test]
fn pgn_reader_of_this_test_reads_clk_and_variations() {
    let g = read_pgn(
        "[Event \"x\"]\n\n1. e4 {[%clk 0:01:00]} (1. d4 d5) 1... e5 $1 {[%clk 0:00:59]} *\n",
    );
    assert_eq!(g[0].moves, vec!["e4", "e5"]);
    assert_eq!(
        g[0].clks,
        vec![Some("0:01:00".to_string()), Some("0:00:59".to_string())]
    );
    assert_eq!(g[0].result, "*");
}
