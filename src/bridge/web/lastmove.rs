//! The last move of a board's game as squares, for the pages to mark on the diagram.
//!
//! The properties carry the moves in SAN only; the squares come from replaying them with
//! shakmaty from the game's start position (the PGN's `FEN` tag when it has one). Pure.

use serde::Serialize;
use serde_json::Value;
use shakmaty::fen::Fen;
use shakmaty::san::San;
use shakmaty::{CastlingMode, Chess, Position};

use crate::client::Props;

/// The last move: UCI and SAN, with its from/to squares by name (`"e2"`, `"e4"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LastMove {
    pub uci: String,
    pub san: String,
    pub from: String,
    pub to: String,
}

/// The last move of the board's `Moves`, or `None` when there is none or the moves do not
/// replay from the start position (a game whose record holds a standing illegal move).
pub fn last_move(props: &Props) -> Option<LastMove> {
    let moves = props.get("Moves")?.as_array()?;
    let last_san = moves.last()?.as_str()?;
    let chess960 = props.get("Variant").and_then(Value::as_str) == Some("chess960");
    let mode = if chess960 {
        CastlingMode::Chess960
    } else {
        CastlingMode::Standard
    };
    let mut pos = start_position(props, mode)?;
    let mut last = None;
    for san in moves {
        let san: San = san.as_str()?.parse().ok()?;
        let m = san.to_move(&pos).ok()?;
        last = Some(m);
        pos.play_unchecked(m);
    }
    let m = last?;
    let uci = m.to_uci(mode).to_string();
    // In standard castling the UCI names the king's squares (e1g1), which is what a reader
    // expects marked; Chess960 UCI is king-takes-rook, marking the rook's square.
    let (from, to) = (uci.get(0..2)?.to_owned(), uci.get(2..4)?.to_owned());
    Some(LastMove {
        uci,
        san: last_san.to_owned(),
        from,
        to,
    })
}

/// The position the game started from: the `FEN` tag of its PGN, else the standard start.
fn start_position(props: &Props, mode: CastlingMode) -> Option<Chess> {
    let pgn = props.get("Pgn").and_then(Value::as_str).unwrap_or("");
    match pgn_tag(pgn, "FEN") {
        Some(fen) => fen.parse::<Fen>().ok()?.into_position(mode).ok(),
        None => Some(Chess::default()),
    }
}

/// The value of a PGN tag (`[Name "value"]`) in the header of `pgn`.
pub fn pgn_tag<'a>(pgn: &'a str, name: &str) -> Option<&'a str> {
    pgn.lines()
        .map(str::trim)
        .take_while(|l| l.starts_with('[') || l.is_empty())
        .find_map(|l| {
            let rest = l.strip_prefix('[')?.strip_prefix(name)?;
            let value = rest.trim_start().strip_prefix('"')?;
            value.strip_suffix("\"]")
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn props(v: Value) -> Props {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn squares_of_the_last_move() {
        let lm = last_move(&props(json!({"Moves": ["e4", "e5", "Nf3"]}))).unwrap();
        assert_eq!((lm.from.as_str(), lm.to.as_str()), ("g1", "f3"));
        assert_eq!(lm.uci, "g1f3");
        assert_eq!(lm.san, "Nf3");
        let castle = last_move(&props(
            json!({"Moves": ["e4","e5","Nf3","Nc6","Bc4","Bc5","O-O"]}),
        ));
        assert_eq!(castle.unwrap().uci, "e1g1");
    }

    #[test]
    fn from_a_set_up_position() {
        let pgn =
            "[Event \"x\"]\n[SetUp \"1\"]\n[FEN \"4k3/8/8/8/8/8/4P3/4K3 w - - 0 1\"]\n\n1. e4 *";
        let lm = last_move(&props(json!({"Moves": ["e4"], "Pgn": pgn}))).unwrap();
        assert_eq!(lm.uci, "e2e4");
    }

    #[test]
    fn nothing_when_there_is_no_move_or_it_does_not_replay() {
        assert_eq!(last_move(&props(json!({"Moves": []}))), None);
        assert_eq!(last_move(&props(json!({}))), None);
        assert_eq!(
            last_move(&props(json!({"Moves": ["e4", "Ke7", "Qh5"]}))),
            None
        );
        assert_eq!(last_move(&props(json!({"Moves": ["e4", 3]}))), None);
    }

    #[test]
    fn tags_are_read_from_the_header_only() {
        let pgn = "[White \"Carlsen, M\"]\n[Black \"\"]\n\n1. e4 {[White \"no\"]} *";
        assert_eq!(pgn_tag(pgn, "White"), Some("Carlsen, M"));
        assert_eq!(pgn_tag(pgn, "Black"), Some(""));
        assert_eq!(pgn_tag(pgn, "Event"), None);
    }
}
