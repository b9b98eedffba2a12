//! Sensed placement (64 squares, as the board reports them) and board orientation.
//!
//! A board numbers its squares 0..=63 in reading order from its own point of view and never
//! renumbers itself (the DGT field numbering, and the frame of every `board_input::Scan`): in the normal orientation (White with the connector on the left)
//! field `i` is the square on rank `8 - i / 8`, file `i % 8`; a board turned round (Black on
//! the connector side) reports square `63 - i` as field `i`. [`Placement`] is always in chess
//! squares, orientation already applied.

use std::fmt;

use shakmaty::{Bitboard, Board, Color, Piece, Role, Square};

use crate::board_input::SquareContent;

/// How the board lies relative to the players.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Orientation {
    /// White sits with the connector on the left: field 0 = a8.
    #[default]
    Normal,
    /// Turned round: field 0 = h1.
    Reversed,
}

impl Orientation {
    /// The chess square a wire field (0..=63) stands for, or `None` for an out-of-range field.
    pub fn square_of_field(self, field: u8) -> Option<Square> {
        if field > 63 {
            return None;
        }
        let i = match self {
            Orientation::Normal => field,
            Orientation::Reversed => 63 - field,
        };
        let rank = 7 - u32::from(i / 8);
        let file = u32::from(i % 8);
        Some(Square::new(rank * 8 + file))
    }

    /// The wire field (0..=63) that reports a chess square.
    pub fn field_of_square(self, square: Square) -> u8 {
        let sq = square as u8;
        let normal = (7 - sq / 8) * 8 + sq % 8;
        match self {
            Orientation::Normal => normal,
            Orientation::Reversed => 63 - normal,
        }
    }

    /// The other orientation.
    pub fn flipped(self) -> Orientation {
        match self {
            Orientation::Normal => Orientation::Reversed,
            Orientation::Reversed => Orientation::Normal,
        }
    }
}

impl fmt::Display for Orientation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Orientation::Normal => "normal",
            Orientation::Reversed => "reversed",
        })
    }
}

/// What stands on each of the 64 squares, indexed by chess square (a1 = 0 … h8 = 63).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Placement {
    squares: [Option<Piece>; 64],
}

impl Default for Placement {
    fn default() -> Self {
        Placement::empty()
    }
}

impl Placement {
    /// No pieces at all.
    pub const fn empty() -> Placement {
        Placement {
            squares: [None; 64],
        }
    }

    /// The standard start position.
    pub fn start() -> Placement {
        Placement::from_board(&Board::new())
    }

    /// A placement from 64 fields in wire order, read with the given orientation.
    pub fn from_wire(fields: &[SquareContent; 64], orientation: Orientation) -> Placement {
        let mut p = Placement::empty();
        for (field, content) in (0u8..).zip(fields.iter()) {
            if let Some(sq) = orientation.square_of_field(field) {
                p.squares[sq as usize] = *content;
            }
        }
        p
    }

    /// The 64 fields in wire order as a board in this orientation would report them.
    pub fn to_wire(&self, orientation: Orientation) -> [SquareContent; 64] {
        let mut out = [None; 64];
        for sq in Square::ALL {
            out[usize::from(orientation.field_of_square(sq))] = self.squares[sq as usize];
        }
        out
    }

    /// The placement of a shakmaty board.
    pub fn from_board(board: &Board) -> Placement {
        let mut p = Placement::empty();
        for (sq, piece) in board {
            p.squares[sq as usize] = Some(piece);
        }
        p
    }

    /// The same pieces as a shakmaty board.
    pub fn to_board(&self) -> Board {
        let mut b = Board::empty();
        for sq in Square::ALL {
            if let Some(piece) = self.squares[sq as usize] {
                b.set_piece_at(sq, piece);
            }
        }
        b
    }

    /// The piece on a square.
    pub fn get(&self, square: Square) -> Option<Piece> {
        self.squares[square as usize]
    }

    /// Put a piece on (or clear) a square.
    pub fn set(&mut self, square: Square, content: Option<Piece>) {
        self.squares[square as usize] = content;
    }

    /// Occupied squares.
    pub fn occupied(&self) -> Bitboard {
        Square::ALL
            .into_iter()
            .filter(|sq| self.squares[*sq as usize].is_some())
            .collect()
    }

    /// The piece-placement field of a FEN (rank 8 first), e.g. the start position's
    /// `rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR`.
    pub fn board_fen(&self) -> String {
        let mut out = String::with_capacity(72);
        for rank in (0..8u32).rev() {
            let mut empty = 0;
            for file in 0..8u32 {
                match self.squares[(rank * 8 + file) as usize] {
                    Some(piece) => {
                        if empty > 0 {
                            out.push(char::from(b'0' + empty));
                            empty = 0;
                        }
                        out.push(piece.char());
                    }
                    None => empty += 1,
                }
            }
            if empty > 0 {
                out.push(char::from(b'0' + empty));
            }
            if rank > 0 {
                out.push('/');
            }
        }
        out
    }

    /// Parse a FEN piece-placement field (anything after the first space is ignored).
    pub fn from_board_fen(text: &str) -> Result<Placement, shakmaty::fen::ParseFenError> {
        let field = text.split_whitespace().next().unwrap_or("");
        let board = Board::from_ascii_board_fen(field.as_bytes())?;
        Ok(Placement::from_board(&board))
    }

    /// Whether this is the standard start position (White on ranks 1-2).
    pub fn is_start(&self) -> bool {
        *self == Placement::start()
    }

    /// If the wire fields show the standard start position in either orientation, which one.
    pub fn start_orientation(fields: &[SquareContent; 64]) -> Option<Orientation> {
        [Orientation::Normal, Orientation::Reversed]
            .into_iter()
            .find(|&o| Placement::from_wire(fields, o).is_start())
    }

    /// Number of pieces of a colour.
    pub fn count(&self, color: Color) -> usize {
        self.squares
            .iter()
            .filter(|p| p.is_some_and(|p| p.color == color))
            .count()
    }

    /// Squares holding a given role of a colour.
    pub fn squares_of(&self, piece: Piece) -> impl Iterator<Item = Square> + '_ {
        Square::ALL
            .into_iter()
            .filter(move |sq| self.squares[*sq as usize] == Some(piece))
    }

    /// Whether the colour has exactly one king.
    pub fn has_one_king(&self, color: Color) -> bool {
        self.squares_of(Role::King.of(color)).count() == 1
    }
}

impl fmt::Debug for Placement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Placement({})", self.board_fen())
    }
}

impl fmt::Display for Placement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.board_fen())
    }
}

impl From<&Board> for Placement {
    fn from(board: &Board) -> Self {
        Placement::from_board(board)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_numbering_matches_the_protocol() {
        let n = Orientation::Normal;
        assert_eq!(n.square_of_field(0), Some(Square::A8));
        assert_eq!(n.square_of_field(7), Some(Square::H8));
        assert_eq!(n.square_of_field(8), Some(Square::A7));
        assert_eq!(n.square_of_field(56), Some(Square::A1));
        assert_eq!(n.square_of_field(63), Some(Square::H1));
        assert_eq!(n.square_of_field(64), None);
        let r = Orientation::Reversed;
        assert_eq!(r.square_of_field(0), Some(Square::H1));
        assert_eq!(r.square_of_field(63), Some(Square::A8));
        for o in [n, r] {
            for sq in Square::ALL {
                assert_eq!(o.square_of_field(o.field_of_square(sq)), Some(sq));
            }
        }
    }

    #[test]
    fn start_position_in_both_orientations() {
        let start = Placement::start();
        assert_eq!(
            start.board_fen(),
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"
        );
        let normal = start.to_wire(Orientation::Normal);
        // Field 0 is a8 (black rook), field 60 is e1 (white king).
        assert_eq!(normal[0], Some(Piece::from_char('r').unwrap()));
        assert_eq!(normal[60], Some(Piece::from_char('K').unwrap()));
        assert_eq!(
            Placement::start_orientation(&normal),
            Some(Orientation::Normal)
        );
        let reversed = start.to_wire(Orientation::Reversed);
        assert_eq!(reversed[0], Some(Piece::from_char('R').unwrap()));
        assert_eq!(
            Placement::start_orientation(&reversed),
            Some(Orientation::Reversed)
        );
        assert_eq!(
            Placement::from_wire(&reversed, Orientation::Reversed),
            start
        );
        assert_eq!(Placement::start_orientation(&[None; 64]), None);
    }

    #[test]
    fn fen_round_trip() {
        let text = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R";
        let p = Placement::from_board_fen(text).unwrap();
        assert_eq!(p.board_fen(), text);
        assert_eq!(
            p.to_board(),
            Placement::from_board(&p.to_board()).to_board()
        );
        assert_eq!(Placement::empty().board_fen(), "8/8/8/8/8/8/8/8");
        assert!(Placement::from_board_fen("xyz").is_err());
        assert!(p.has_one_king(Color::White));
        assert_eq!(p.count(Color::Black), 16);
    }
}
