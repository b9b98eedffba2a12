//! What a board's LEDs show (a board that has them: the Millennium ChessLink boards): the
//! last move by default, and an illegal placement's squares, steadily lit, until it is put
//! right, so the arbiter walking past sees it on the board itself. Read from what the
//! session publishes (its events and the board's properties); the driver paces the
//! commands (at most one a second).

use shakmaty::fen::Fen;
use shakmaty::san::San;
use shakmaty::{Board, CastlingMode, Chess, Position, Square};

use eboard_core::chesslink::driver::LedRequest;
use eboard_core::contract::props::BoardProps;
use eboard_core::event::Event;

/// One board's LED policy.
#[derive(Debug)]
pub struct LedPolicy {
    /// `leds = false` in the board's configuration: the LEDs are left dark.
    enabled: bool,
    /// An illegal placement was reported and is not put right yet.
    illegal: bool,
    /// What was last asked for, so that the same is not asked again.
    last: Option<LedRequest>,
    /// What the last answer was computed from (moves, the last of them, in sync, the
    /// placement while illegal): the moves are not replayed while it stays the same.
    key: Option<(usize, String, bool, bool, String)>,
}

impl LedPolicy {
    pub fn new(enabled: bool) -> Self {
        LedPolicy {
            enabled,
            illegal: false,
            last: None,
            key: None,
        }
    }

    /// Note what the session reported.
    pub fn saw(&mut self, events: &[Event]) {
        for event in events {
            match event {
                Event::IllegalPlacement { .. } => self.illegal = true,
                Event::GameStarted { .. } => self.illegal = false,
                _ => {}
            }
        }
    }

    /// What the LEDs should show now, if it changed since the last call.
    pub fn wish(&mut self, view: &BoardProps) -> Option<LedRequest> {
        if !self.enabled {
            return None;
        }
        if view.in_sync {
            self.illegal = false;
        }
        let key = (
            view.moves.len(),
            view.moves.last().cloned().unwrap_or_default(),
            view.in_sync,
            self.illegal,
            if self.illegal {
                view.placement.clone()
            } else {
                String::new()
            },
        );
        if self.key.as_ref() == Some(&key) {
            return None;
        }
        self.key = Some(key);
        let request = if self.illegal {
            LedRequest::Squares(differing_squares(view))
        } else {
            last_move(view).map_or(LedRequest::Off, |(from, to)| LedRequest::Move { from, to })
        };
        if self.last.as_ref() == Some(&request) {
            return None;
        }
        self.last = Some(request.clone());
        Some(request)
    }

    /// The link was reopened: the LEDs are asked for again.
    pub fn forget(&mut self) {
        self.last = None;
        self.key = None;
    }
}

/// The squares where the board (`Placement`) differs from the game (`Fen`).
fn differing_squares(view: &BoardProps) -> Vec<Square> {
    let game = board_of(&view.fen);
    let sensed = board_of(&view.placement);
    match (game, sensed) {
        (Some(game), Some(sensed)) => Square::ALL
            .into_iter()
            .filter(|&sq| game.piece_at(sq) != sensed.piece_at(sq))
            .collect(),
        _ => Vec::new(),
    }
}

fn board_of(fen: &str) -> Option<Board> {
    let placement = fen.split_whitespace().next()?;
    placement.parse::<Board>().ok()
}

/// The last move of the game (`Moves` replayed from the start position of `Pgn`).
fn last_move(view: &BoardProps) -> Option<(Square, Square)> {
    let (last, before) = view.moves.split_last()?;
    let mut position: Chess = match start_fen(&view.pgn) {
        Some(fen) => fen
            .parse::<Fen>()
            .ok()?
            .into_position(CastlingMode::Chess960)
            .ok()?,
        None => Chess::default(),
    };
    for san in before {
        let mv = san.parse::<San>().ok()?.to_move(&position).ok()?;
        position.play_unchecked(mv);
    }
    let mv = last.parse::<San>().ok()?.to_move(&position).ok()?;
    // Castling shows the king's two squares.
    let to = match mv {
        shakmaty::Move::Castle { king, rook } => {
            let side = shakmaty::CastlingSide::from_king_side(rook.file() > king.file());
            side.king_to(position.turn())
        }
        other => other.to(),
    };
    Some((mv.from()?, to))
}

/// The `FEN` tag of a PGN text's header, if it has one.
fn start_fen(pgn: &str) -> Option<&str> {
    pgn.lines()
        .take_while(|line| line.starts_with('['))
        .find_map(|line| line.strip_prefix("[FEN \"")?.strip_suffix("\"]"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(moves: &[&str], fen: &str, placement: &str, in_sync: bool) -> BoardProps {
        BoardProps {
            moves: moves.iter().map(|m| m.to_string()).collect(),
            fen: fen.into(),
            placement: placement.into(),
            in_sync,
            ..BoardProps::default()
        }
    }

    #[test]
    fn the_last_move_then_an_illegal_placement_until_put_right() {
        let mut p = LedPolicy::new(true);
        let after = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
        let v = view(&["e4"], after, after, true);
        assert_eq!(
            p.wish(&v),
            Some(LedRequest::Move {
                from: Square::E2,
                to: Square::E4
            })
        );
        assert_eq!(p.wish(&v), None, "asked once");
        // A white knight put on e5 instead of Black moving.
        p.saw(&[Event::IllegalPlacement {
            player: eboard_core::vocab::Player::White,
            description: String::new(),
            placement: String::new(),
        }]);
        let wrong = view(
            &["e4"],
            after,
            "rnbqkbnr/pppppppp/8/4N3/4P3/8/PPPP1PPP/R1BQKBNR",
            false,
        );
        assert_eq!(
            p.wish(&wrong),
            Some(LedRequest::Squares(vec![Square::B1, Square::E5]))
        );
        // Put right: the last move again.
        assert!(matches!(p.wish(&v), Some(LedRequest::Move { .. })));
        // Castling shows the king's squares; a board with its LEDs off is never asked.
        let castled = view(
            &["e4", "e5", "Nf3", "Nc6", "Bc4", "Bc5", "O-O"],
            "",
            "",
            true,
        );
        assert_eq!(
            p.wish(&castled),
            Some(LedRequest::Move {
                from: Square::E1,
                to: Square::G1
            })
        );
        assert_eq!(LedPolicy::new(false).wish(&castled), None);
        assert_eq!(
            LedPolicy::new(true).wish(&view(&[], "", "", true)),
            Some(LedRequest::Off)
        );
    }
}
