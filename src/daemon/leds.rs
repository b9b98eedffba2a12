//! What a board's LEDs show (a board that has them: the Millennium ChessLink boards): the
//! last move by default, and an illegal placement's squares, steadily lit, until it is put
//! right, so the arbiter walking past sees it on the board itself. Read from what the
//! session publishes (its events and the board's properties); the driver paces the
//! commands (at most one a second).
//!
//! The last move's squares come from the session's own events: `MovePlayed` carries the
//! move in UCI, `MoveRetracted` takes the last one back, `GameStarted` begins anew. The
//! squares of every move of the record are kept (two bytes a ply) so that a retraction
//! shows the move before it at once. Only a game restored from the journal at start (its
//! moves were never played as events) is worked out from the view, once.

use shakmaty::fen::Fen;
use shakmaty::san::San;
use shakmaty::uci::UciMove;
use shakmaty::{Board, CastlingMode, CastlingSide, Chess, Position, Square};

use eboard_core::chesslink::driver::LedRequest;
use eboard_core::contract::props::BoardProps;
use eboard_core::event::Event;

/// A move's two squares as the LEDs show them (castling: the king's from and to).
type MoveSquares = (Square, Square);

/// One board's LED policy.
#[derive(Debug)]
pub struct LedPolicy {
    /// `leds = false` in the board's configuration: the LEDs are left dark.
    enabled: bool,
    /// An illegal placement was reported and is not put right yet.
    illegal: bool,
    /// What was last asked for, so that the same is not asked again.
    last: Option<LedRequest>,
    /// The squares of the record's moves, ply 1 first, kept in step with `MovePlayed` and
    /// `MoveRetracted`. `None`: a move the events did not show (a game restored at start)
    /// and the view did not explain.
    squares: Vec<Option<MoveSquares>>,
    /// How many moves the view had when it was last replayed for moves the events did not
    /// show: a replay that cannot be done is not tried again until the moves change.
    replayed_at: Option<usize>,
    /// While an illegal placement stands: the game's FEN and the board's placement its
    /// squares were worked out from (buffers reused, so a call that finds them unchanged
    /// allocates nothing). `None`: nothing worked out since the placement became illegal.
    illegal_from: Option<(String, String)>,
}

impl LedPolicy {
    pub fn new(enabled: bool) -> Self {
        LedPolicy {
            enabled,
            illegal: false,
            last: None,
            squares: Vec::new(),
            replayed_at: None,
            illegal_from: None,
        }
    }

    /// Note what the session reported.
    pub fn saw(&mut self, events: &[Event]) {
        for event in events {
            match event {
                Event::IllegalPlacement { .. } => self.illegal = true,
                Event::GameStarted { .. } => {
                    self.illegal = false;
                    // A new game's moves all come as events.
                    self.squares.clear();
                }
                Event::MovePlayed { ply, san, uci, .. } => {
                    // Ply `ply` is the record's `ply`-th move: what stood at or after it is
                    // replaced (a correction), what is missing before it is not known.
                    let before = (*ply as usize).saturating_sub(1);
                    self.squares.resize(before, None);
                    self.squares.push(squares_of(san, uci));
                }
                Event::MoveRetracted { ply, .. } => {
                    self.squares.truncate((*ply as usize).saturating_sub(1));
                }
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
        if !self.illegal {
            self.illegal_from = None;
            let request = match self.last_move(view) {
                Some((from, to)) => LedRequest::Move { from, to },
                None => LedRequest::Off,
            };
            return self.ask(request);
        }
        if let Some((fen, placement)) = &self.illegal_from
            && *fen == view.fen
            && *placement == view.placement
        {
            return None;
        }
        let (fen, placement) = self.illegal_from.get_or_insert_default();
        fen.clone_from(&view.fen);
        placement.clone_from(&view.placement);
        self.ask(LedRequest::Squares(differing_squares(view)))
    }

    /// The link was reopened: the LEDs are asked for again.
    pub fn forget(&mut self) {
        self.last = None;
        self.illegal_from = None;
    }

    /// `request`, unless it is what was asked for last.
    fn ask(&mut self, request: LedRequest) -> Option<LedRequest> {
        if self.last.as_ref() == Some(&request) {
            return None;
        }
        self.last = Some(request.clone());
        Some(request)
    }

    /// The squares of the record's last move (`Moves` says how many there are).
    fn last_move(&mut self, view: &BoardProps) -> Option<MoveSquares> {
        let last = view.moves.len().checked_sub(1)?;
        if self.squares.get(last).copied().flatten().is_none()
            && self.replayed_at != Some(view.moves.len())
        {
            // Moves no event showed: a game restored from the journal.
            self.replayed_at = Some(view.moves.len());
            self.fill_from_view(view);
        }
        self.squares.get(last).copied().flatten()
    }

    /// Work the squares of the moves no event showed out of the view (`Moves` replayed from
    /// the start position of `Pgn`), keeping those the events gave.
    fn fill_from_view(&mut self, view: &BoardProps) {
        let replayed = replay(view);
        if self.squares.len() < replayed.len() {
            self.squares.resize(replayed.len(), None);
        }
        for (known, worked_out) in self.squares.iter_mut().zip(replayed) {
            if known.is_none() {
                *known = Some(worked_out);
            }
        }
    }
}

/// A move's squares from its SAN and UCI (as `MovePlayed` carries them). Castling shows
/// the king's two squares, whether UCI writes it as the king's step (`e1g1`) or, in
/// Chess960, as the king taking its rook (`e1h1`).
fn squares_of(san: &str, uci: &str) -> Option<MoveSquares> {
    let UciMove::Normal { from, to, .. } = uci.parse::<UciMove>().ok()? else {
        return None;
    };
    let side = if san.starts_with("O-O-O") {
        Some(CastlingSide::QueenSide)
    } else if san.starts_with("O-O") {
        Some(CastlingSide::KingSide)
    } else {
        None
    };
    Some(match side {
        Some(side) => (from, Square::from_coords(side.king_to_file(), from.rank())),
        None => (from, to),
    })
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

/// The squares of `Moves` replayed from the start position of `Pgn`, as far as they replay
/// (a record of several segments stops at the first move of the second).
fn replay(view: &BoardProps) -> Vec<MoveSquares> {
    let mut squares = Vec::with_capacity(view.moves.len());
    let start = match start_fen(&view.pgn) {
        Some(fen) => fen
            .parse::<Fen>()
            .ok()
            .and_then(|fen| fen.into_position(CastlingMode::Chess960).ok()),
        None => Some(Chess::default()),
    };
    let Some(mut position) = start else {
        return squares;
    };
    for san in &view.moves {
        let Some(mv) = san
            .parse::<San>()
            .ok()
            .and_then(|san| san.to_move(&position).ok())
        else {
            break;
        };
        let to = match mv {
            shakmaty::Move::Castle { king, rook } => {
                CastlingSide::from_king_side(rook.file() > king.file()).king_to(position.turn())
            }
            other => other.to(),
        };
        let Some(from) = mv.from() else {
            break;
        };
        squares.push((from, to));
        position.play_unchecked(mv);
    }
    squares
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

    fn played(ply: u32, san: &str, uci: &str) -> Event {
        Event::MovePlayed {
            ply,
            san: san.into(),
            uci: uci.into(),
            fen: String::new(),
            white_ms: 0,
            black_ms: 0,
        }
    }

    fn retracted(ply: u32) -> Event {
        Event::MoveRetracted {
            ply,
            fen: String::new(),
        }
    }

    fn shown(from: Square, to: Square) -> Option<LedRequest> {
        Some(LedRequest::Move { from, to })
    }

    /// A view of `n` moves whose SAN and PGN cannot be replayed: what the policy shows of
    /// it comes from the events alone.
    fn unreplayable(n: usize) -> BoardProps {
        BoardProps {
            moves: vec!["??".to_string(); n],
            pgn: "[FEN \"not a position\"]\n\n?? *".into(),
            in_sync: true,
            ..BoardProps::default()
        }
    }

    #[test]
    fn the_squares_come_from_the_events_alone() {
        let mut p = LedPolicy::new(true);
        p.saw(&[
            Event::GameStarted { fen: String::new() },
            played(1, "e4", "e2e4"),
            played(2, "c5", "c7c5"),
        ]);
        assert_eq!(p.wish(&unreplayable(2)), shown(Square::C7, Square::C5));
        p.saw(&[played(3, "Nf3", "g1f3")]);
        assert_eq!(p.wish(&unreplayable(3)), shown(Square::G1, Square::F3));
        assert_eq!(p.wish(&unreplayable(3)), None, "asked once");
        assert_eq!(p.replayed_at, None, "no SAN was replayed");
    }

    #[test]
    fn a_retraction_shows_the_move_before_it() {
        let mut p = LedPolicy::new(true);
        p.saw(&[played(1, "e4", "e2e4"), played(2, "e5", "e7e5")]);
        assert_eq!(p.wish(&unreplayable(2)), shown(Square::E7, Square::E5));
        p.saw(&[retracted(2)]);
        assert_eq!(p.wish(&unreplayable(1)), shown(Square::E2, Square::E4));
        p.saw(&[retracted(1)]);
        assert_eq!(p.wish(&unreplayable(0)), Some(LedRequest::Off));
        assert_eq!(p.replayed_at, None);
    }

    #[test]
    fn a_correction_shows_the_new_move() {
        let mut p = LedPolicy::new(true);
        p.saw(&[played(1, "e4", "e2e4"), played(2, "e5", "e7e5")]);
        assert_eq!(p.wish(&unreplayable(2)), shown(Square::E7, Square::E5));
        // The reply corrected before the next move: retracted and played again, one batch.
        p.saw(&[retracted(2), played(2, "d5", "d7d5")]);
        assert_eq!(p.wish(&unreplayable(2)), shown(Square::D7, Square::D5));
        // A move played again at a ply already held replaces it, even with no retraction.
        p.saw(&[played(2, "c5", "c7c5")]);
        assert_eq!(p.wish(&unreplayable(2)), shown(Square::C7, Square::C5));
        p.saw(&[retracted(2)]);
        assert_eq!(p.wish(&unreplayable(1)), shown(Square::E2, Square::E4));
    }

    #[test]
    fn a_new_game_clears_the_moves() {
        let mut p = LedPolicy::new(true);
        p.saw(&[played(1, "e4", "e2e4"), played(2, "e5", "e7e5")]);
        assert_eq!(p.wish(&unreplayable(2)), shown(Square::E7, Square::E5));
        p.saw(&[Event::GameStarted { fen: String::new() }]);
        assert_eq!(p.wish(&unreplayable(0)), Some(LedRequest::Off));
        p.saw(&[played(1, "d4", "d2d4")]);
        assert_eq!(p.wish(&unreplayable(1)), shown(Square::D2, Square::D4));
        assert_eq!(p.replayed_at, None);
    }

    #[test]
    fn a_restored_game_shows_its_last_move_then_follows_the_events() {
        // Restored from the journal: no event showed its moves; it starts from a FEN tag.
        let start = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1";
        let restored = |moves: &[&str]| BoardProps {
            moves: moves.iter().map(|m| m.to_string()).collect(),
            pgn: format!("[Event \"?\"]\n[SetUp \"1\"]\n[FEN \"{start}\"]\n\n1. O-O O-O-O *"),
            in_sync: true,
            ..BoardProps::default()
        };
        let mut p = LedPolicy::new(true);
        assert_eq!(
            p.wish(&restored(&["O-O", "O-O-O"])),
            shown(Square::E8, Square::C8)
        );
        // The game goes on with events; a retraction reaches back into the restored moves.
        p.saw(&[played(3, "Rfe1", "f1e1")]);
        assert_eq!(
            p.wish(&restored(&["O-O", "O-O-O", "Rfe1"])),
            shown(Square::F1, Square::E1)
        );
        p.saw(&[retracted(3)]);
        assert_eq!(
            p.wish(&restored(&["O-O", "O-O-O"])),
            shown(Square::E8, Square::C8)
        );
        p.saw(&[retracted(2)]);
        assert_eq!(p.wish(&restored(&["O-O"])), shown(Square::E1, Square::G1));
        assert_eq!(
            p.replayed_at,
            Some(2),
            "the view was replayed once, at start"
        );
        // A restored record that does not replay shows nothing, and is not replayed again
        // while its moves stay the same.
        let mut p = LedPolicy::new(true);
        assert_eq!(p.wish(&unreplayable(4)), Some(LedRequest::Off));
        assert_eq!(p.replayed_at, Some(4));
        assert_eq!(p.wish(&unreplayable(4)), None);
    }

    #[test]
    fn castling_en_passant_and_promotion_show_their_squares() {
        let cases = [
            // Castling shows the king's squares, in UCI's standard and Chess960 forms.
            ("O-O", "e1g1", Square::E1, Square::G1),
            ("O-O-O+", "e8c8", Square::E8, Square::C8),
            ("O-O", "f1h1", Square::F1, Square::G1),
            ("O-O-O", "b1a1", Square::B1, Square::C1),
            ("exd6", "e5d6", Square::E5, Square::D6),
            ("e8=Q+", "e7e8q", Square::E7, Square::E8),
            ("bxa1=N#", "b2a1n", Square::B2, Square::A1),
        ];
        for (san, uci, from, to) in cases {
            let mut p = LedPolicy::new(true);
            p.saw(&[played(1, san, uci)]);
            assert_eq!(p.wish(&unreplayable(1)), shown(from, to), "{san} {uci}");
        }
        // A move with no squares (a null move) leaves the LEDs dark.
        let mut p = LedPolicy::new(true);
        p.saw(&[played(1, "--", "0000")]);
        assert_eq!(p.wish(&unreplayable(1)), Some(LedRequest::Off));
    }
}
