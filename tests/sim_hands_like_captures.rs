//! The handling generator against real hands: the two real captures are cut into plies (the
//! field updates from one move's board to the next), each ply's order of events is named
//! (slides, which square is read first, capture orders, castling orders, a captured piece
//! touching a square, adjustments), and the generator, playing the same games, must produce
//! every kind of event order the real hands produced. The frequencies of both are printed.

mod captures;

use std::collections::BTreeMap;

use eboard_core::board::{Orientation, Placement};
use eboard_core::dgt::{Decoder, Message};
use eboard_sim::handling::{Handling, Noise, SensorStep};
use shakmaty::{Board, Chess, Move, Piece, Position, Square};

/// One field change: the square and what it now reads.
type Change = (Square, Option<Piece>);

/// Cut a stream of changes into plies: a ply ends when the board shows the position after
/// it (or after the next one: a reply read together with the move joins its ply).
fn cut(start: &Board, changes: &[Change], game: &[Move]) -> Vec<(Chess, Move, Vec<Change>)> {
    let mut positions = vec![Chess::default()];
    for m in game {
        let mut next = positions[positions.len() - 1].clone();
        next.play_unchecked(*m);
        positions.push(next);
    }
    let mut board = start.clone();
    let mut out = Vec::new();
    let mut k = 0;
    let mut current = Vec::new();
    for &(sq, content) in changes {
        match content {
            Some(p) => board.set_piece_at(sq, p),
            None => {
                board.discard_piece_at(sq);
            }
        }
        current.push((sq, content));
        for ahead in [1, 2] {
            if k + ahead < positions.len() && board == *positions[k + ahead].board() {
                out.push((positions[k].clone(), game[k], std::mem::take(&mut current)));
                k += ahead;
                break;
            }
        }
    }
    out
}

/// The names of the event orders one ply shows.
fn kinds(pos: &Chess, mv: Move, changes: &[Change]) -> Vec<&'static str> {
    let mut out = Vec::new();
    let us = pos.turn();
    let (from, to) = match mv {
        Move::Normal { from, to, .. } | Move::EnPassant { from, to } => (from, to),
        Move::Castle { king, rook } => (king, rook),
        Move::Put { to, .. } => (to, to),
    };
    let first = changes.first().copied();
    let moved: Vec<Square> = changes
        .iter()
        .filter(|(_, c)| c.is_some_and(|p| p.color == us))
        .map(|(s, _)| *s)
        .collect();
    match mv {
        Move::Castle { king, rook } => {
            out.push(match first {
                Some((s, None)) if s == king => "castling king first",
                Some((s, None)) if s == rook => "castling rook first",
                _ => "castling other",
            });
        }
        Move::Normal { capture, .. } => {
            let lifted_to = changes.iter().any(|&(s, c)| s == to && c.is_none());
            if capture.is_some() {
                out.push(match first {
                    Some((s, None)) if s == to => "capture victim first",
                    _ if lifted_to => "capture attacker, victim, attacker placed",
                    _ => "capture replaced in one update",
                });
            } else {
                let place_to = changes.iter().position(|&(s, c)| s == to && c.is_some());
                let lift_from = changes.iter().position(|&(s, c)| s == from && c.is_none());
                if let (Some(p), Some(l)) = (place_to, lift_from)
                    && p < l
                {
                    out.push("destination read before the origin empties");
                }
            }
            if moved
                .iter()
                .any(|&s| s != to && shakmaty::attacks::between(from, to).contains(s))
            {
                out.push("slide over a square");
            }
        }
        Move::EnPassant { .. } => out.push("en passant"),
        Move::Put { .. } => {}
    }
    let board = pos.board();
    if changes
        .iter()
        .any(|&(s, c)| c.is_some_and(|p| p.color != us) && board.piece_at(s).is_none() && s != to)
    {
        out.push("captured piece touches a square");
    }
    let touched_own = changes.iter().any(|&(s, c)| {
        c.is_none()
            && board.color_at(s) == Some(us)
            && s != from
            && !matches!(mv, Move::Castle { .. })
    });
    if touched_own {
        out.push("own piece lifted and put back");
    }
    if out.is_empty() {
        out.push("lift, place");
    }
    out
}

fn tally(into: &mut BTreeMap<&'static str, usize>, plies: &[(Chess, Move, Vec<Change>)]) {
    for (pos, mv, changes) in plies {
        for k in kinds(pos, *mv, changes) {
            *into.entry(k).or_default() += 1;
        }
    }
}

#[test]
fn the_generator_produces_every_order_of_events_real_hands_produced() {
    let mut real = BTreeMap::new();
    let mut generated = BTreeMap::new();
    let mut real_plies = 0;
    let mut generated_plies = 0;
    for n in [1, 2] {
        let messages = Decoder::decode_all(&captures::bytes(n)).0;
        let game = captures::moves(n);
        let mut orientation = Orientation::Normal;
        let mut start = None;
        let mut changes = Vec::new();
        for m in &messages {
            match m {
                Message::BoardDump(fields) => {
                    orientation = Placement::start_orientation(fields).unwrap_or_default();
                    start = Some(Placement::from_wire(fields, orientation).to_board());
                }
                Message::FieldUpdate { field, content } => {
                    if let Some(sq) = orientation.square_of_field(*field) {
                        changes.push((sq, *content));
                    }
                }
                _ => {}
            }
        }
        let start = start.expect("a board dump");
        let plies = cut(&start, &changes, &game);
        assert!(
            plies.len() + 2 >= game.len(),
            "capture {n}: only {} of {} plies cut",
            plies.len(),
            game.len()
        );
        real_plies += plies.len();
        tally(&mut real, &plies);

        // The generator plays the same game, many times over.
        for seed in 0..40 {
            let mut hands = Handling::new(seed, Noise::Noisy);
            let mut pos = Chess::default();
            let mut steps = Vec::new();
            for &mv in &game {
                for step in hands.steps(&pos, mv) {
                    match step {
                        SensorStep::Lift(sq) => steps.push((sq, None)),
                        SensorStep::Place(sq, p) => steps.push((sq, Some(p))),
                        SensorStep::Pause(_) | SensorStep::Press => {}
                    }
                }
                pos.play_unchecked(mv);
            }
            let plies = cut(Chess::default().board(), &steps, &game);
            assert_eq!(plies.len(), game.len(), "every generated ply is cut");
            generated_plies += plies.len();
            tally(&mut generated, &plies);
        }
    }
    println!(
        "order of events          real ({real_plies} plies)  generator ({generated_plies} plies)"
    );
    for (k, n) in &real {
        println!(
            "  {k:<45} {:>5.1}%  {:>5.1}%",
            *n as f64 * 100.0 / real_plies as f64,
            generated.get(k).copied().unwrap_or(0) as f64 * 100.0 / generated_plies as f64
        );
    }
    let missing: Vec<&&str> = real
        .keys()
        .filter(|k| !generated.contains_key(*k))
        .collect();
    assert!(
        missing.is_empty(),
        "real hands do what the generator never does: {missing:?}"
    );
}
