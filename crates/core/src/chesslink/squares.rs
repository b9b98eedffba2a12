//! The 64 squares of a status report, and which square each character stands for.
//!
//! The maker's description lists the characters A8…H8, A7…, A1…H1, but every working driver
//! (and the phone apps' emulators) reads the same string the other way round, h1 first, with
//! White on the usual side: the description seems to see the board from the other side. The
//! two orders are one another turned by 180°, exactly what a board turned round sends, so a
//! driver tells them apart from the start position ([`WireOrder::of_start_position`]).

use shakmaty::{Board, Color, File, Piece, Rank, Role, Square};

/// Which square the first character of a status report (and LED 1) stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum WireOrder {
    /// Index 0 = h1, 1 = g1, … 7 = a1, 8 = h2, … 63 = a8: what the drivers in use read with
    /// White on the usual side.
    #[default]
    H1First,
    /// Index 0 = a8, … 7 = h8, 8 = a7, … 63 = h1: the maker's description, and what an
    /// `H1First` board sends when it is turned round.
    A8First,
}

impl WireOrder {
    /// The square the `index`-th character (0–63) stands for.
    pub fn square_of_index(self, index: usize) -> Square {
        let h1_first = match self {
            WireOrder::H1First => index & 63,
            WireOrder::A8First => 63 - (index & 63),
        };
        let rank = Rank::new((h1_first / 8) as u32);
        let file = File::new(7 - (h1_first % 8) as u32);
        Square::from_coords(file, rank)
    }

    /// The index (0–63) of `square`'s character.
    pub fn index_of_square(self, square: Square) -> usize {
        let h1_first = usize::from(square.rank()) * 8 + (7 - usize::from(square.file()));
        match self {
            WireOrder::H1First => h1_first,
            WireOrder::A8First => 63 - h1_first,
        }
    }

    /// The other order (the board turned round).
    pub fn turned(self) -> WireOrder {
        match self {
            WireOrder::H1First => WireOrder::A8First,
            WireOrder::A8First => WireOrder::H1First,
        }
    }

    /// The order in which `scan` shows the start position, if it does (either orientation).
    pub fn of_start_position(scan: &Scan) -> Option<WireOrder> {
        let start = Board::default();
        [WireOrder::H1First, WireOrder::A8First]
            .into_iter()
            .find(|&order| scan.board(order) == start)
    }
}

/// The character for a square's content.
pub fn piece_char(piece: Option<Piece>) -> u8 {
    match piece {
        None => b'.',
        Some(p) => {
            let c = p.role.char() as u8; // lower case: p n b r q k
            match p.color {
                Color::White => c.to_ascii_uppercase(),
                Color::Black => c,
            }
        }
    }
}

/// The content a status character stands for: `None` for a character outside `KQRNBP`,
/// `kqrnbp` and `.` (what a board sends for an unknown piece is not documented).
pub fn char_piece(c: u8) -> Option<Option<Piece>> {
    if c == b'.' {
        return Some(None);
    }
    let role = Role::from_char(c.to_ascii_lowercase() as char)?;
    let color = if c.is_ascii_uppercase() {
        Color::White
    } else {
        Color::Black
    };
    Some(Some(Piece { color, role }))
}

/// One status report: the 64 squares' contents in the order they were sent.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Scan {
    pub squares: [Option<Piece>; 64],
}

impl Scan {
    /// The report of a board showing `board`, its characters in `order`.
    pub fn from_board(board: &Board, order: WireOrder) -> Scan {
        let mut squares = [None; 64];
        for (index, content) in squares.iter_mut().enumerate() {
            *content = board.piece_at(order.square_of_index(index));
        }
        Scan { squares }
    }

    /// The placement this report shows, reading it in `order`.
    pub fn board(&self, order: WireOrder) -> Board {
        let mut board = Board::empty();
        for (index, content) in self.squares.iter().enumerate() {
            if let Some(piece) = *content {
                board.set_piece_at(order.square_of_index(index), piece);
            }
        }
        board
    }

    /// The 64 characters as sent.
    pub fn chars(&self) -> [u8; 64] {
        self.squares.map(piece_char)
    }

    /// The report of 64 status characters; `None` if one is not a piece, nor `.`.
    pub fn from_chars(chars: &[u8]) -> Option<Scan> {
        if chars.len() != 64 {
            return None;
        }
        let mut squares = [None; 64];
        for (content, &c) in squares.iter_mut().zip(chars) {
            *content = char_piece(c)?;
        }
        Some(Scan { squares })
    }
}

impl std::fmt::Debug for Scan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Scan({})", String::from_utf8_lossy(&self.chars()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const START_H1_FIRST: &[u8] =
        b"RNBKQBNRPPPPPPPP................................pppppppprnbkqbnr";
    const START_A8_FIRST: &[u8] =
        b"rnbqkbnrpppppppp................................PPPPPPPPRNBQKBNR";

    #[test]
    fn start_position_in_both_orders() {
        let start = Board::default();
        let h1 = Scan::from_board(&start, WireOrder::H1First);
        assert_eq!(&h1.chars()[..], START_H1_FIRST);
        let a8 = Scan::from_board(&start, WireOrder::A8First);
        assert_eq!(&a8.chars()[..], START_A8_FIRST);
        assert_eq!(WireOrder::of_start_position(&h1), Some(WireOrder::H1First));
        assert_eq!(WireOrder::of_start_position(&a8), Some(WireOrder::A8First));
        let empty = Scan::from_board(&Board::empty(), WireOrder::H1First);
        assert_eq!(WireOrder::of_start_position(&empty), None);
    }

    #[test]
    fn the_orders_name_the_documented_squares() {
        use Square::*;
        let h1 = WireOrder::H1First;
        assert_eq!(
            [0, 1, 7, 8, 63].map(|i| h1.square_of_index(i)),
            [H1, G1, A1, H2, A8]
        );
        let a8 = WireOrder::A8First;
        assert_eq!(
            [0, 7, 8, 56, 63].map(|i| a8.square_of_index(i)),
            [A8, H8, A7, A1, H1]
        );
        for order in [h1, a8] {
            for index in 0..64 {
                assert_eq!(order.index_of_square(order.square_of_index(index)), index);
                assert_eq!(
                    order.turned().square_of_index(index),
                    order.square_of_index(63 - index)
                );
            }
        }
    }

    #[test]
    fn characters_round_trip_and_strangers_are_refused() {
        for c in b"KQRNBPkqrnbp.".iter().copied() {
            assert_eq!(char_piece(c).map(piece_char), Some(c));
        }
        for c in [b'O', b'x', b'0', b'A', b' ', 0, b's'] {
            assert_eq!(char_piece(c), None, "{}", c as char);
        }
        let mut chars = START_H1_FIRST.to_vec();
        assert!(Scan::from_chars(&chars).is_some());
        chars[20] = b'?';
        assert_eq!(Scan::from_chars(&chars), None);
        assert_eq!(Scan::from_chars(&chars[..63]), None);
    }
}
