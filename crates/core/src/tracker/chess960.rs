//! Chess960 start positions as a board shows them: any of the 960 back-rank arrangements
//! (bishops on opposite colours, the king between the rooks), mirrored for Black, pawns in
//! front, nothing else. The position is built in shakmaty's Chess960 castling mode, with the
//! castling rights at the rooks' own squares.

use shakmaty::{Bitboard, Board, CastlingMode, Chess, Color, FromSetup, Rank, Role, Setup, Square};

/// The Chess960 start position `board` shows, if it is one (the standard start is one too).
pub fn start_position(board: &Board) -> Option<Chess> {
    let white_back = back_rank(board, Color::White)?;
    let black_back = back_rank(board, Color::Black)?;
    if white_back != black_back {
        return None;
    }
    if !valid_arrangement(&white_back) {
        return None;
    }
    for sq in Square::ALL {
        let expected = match sq.rank() {
            Rank::Second => Some(Role::Pawn.of(Color::White)),
            Rank::Seventh => Some(Role::Pawn.of(Color::Black)),
            Rank::First | Rank::Eighth => continue,
            _ => None,
        };
        if board.piece_at(sq) != expected {
            return None;
        }
    }
    let mut rooks = Bitboard::EMPTY;
    for sq in (board.rooks()) & (Bitboard::from(Rank::First) | Bitboard::from(Rank::Eighth)) {
        rooks.add(sq);
    }
    let setup = Setup {
        board: board.clone(),
        castling_rights: rooks,
        ..Setup::default()
    };
    Chess::from_setup(setup, CastlingMode::Chess960).ok()
}

/// The roles on `color`'s back rank, files a to h (all eight squares must hold a piece of
/// `color`).
fn back_rank(board: &Board, color: Color) -> Option<[Role; 8]> {
    let rank = color.backrank();
    let mut roles = [Role::Pawn; 8];
    for (i, file) in shakmaty::File::ALL.into_iter().enumerate() {
        let piece = board.piece_at(Square::from_coords(file, rank))?;
        if piece.color != color {
            return None;
        }
        roles[i] = piece.role;
    }
    Some(roles)
}

/// Two rooks with the king between them, two bishops on squares of opposite colours, two
/// knights and a queen.
fn valid_arrangement(roles: &[Role; 8]) -> bool {
    let at = |r: Role| -> Vec<usize> { (0..8).filter(|&i| roles[i] == r).collect() };
    let (rooks, king, bishops) = (at(Role::Rook), at(Role::King), at(Role::Bishop));
    rooks.len() == 2
        && king.len() == 1
        && bishops.len() == 2
        && at(Role::Knight).len() == 2
        && at(Role::Queen).len() == 1
        && rooks[0] < king[0]
        && king[0] < rooks[1]
        && bishops[0] % 2 != bishops[1] % 2
}

/// The back rank of Chess960 start position `n` (0..960, Scharnagl's numbering), White's
/// pieces as upper-case FEN letters from the a-file to the h-file.
pub fn back_rank_of(mut n: usize) -> [char; 8] {
    let mut rank = [' '; 8];
    rank[(n % 4) * 2 + 1] = 'B';
    n /= 4;
    rank[(n % 4) * 2] = 'B';
    n /= 4;
    let empty = |rank: &[char; 8]| -> Vec<usize> { (0..8).filter(|&i| rank[i] == ' ').collect() };
    let q = n % 6;
    n /= 6;
    rank[empty(&rank)[q]] = 'Q';
    const KNIGHTS: [(usize, usize); 10] = [
        (0, 1),
        (0, 2),
        (0, 3),
        (0, 4),
        (1, 2),
        (1, 3),
        (1, 4),
        (2, 3),
        (2, 4),
        (3, 4),
    ];
    let (a, b) = KNIGHTS[n];
    let e = empty(&rank);
    rank[e[a]] = 'N';
    rank[e[b]] = 'N';
    let e = empty(&rank);
    rank[e[0]] = 'R';
    rank[e[1]] = 'K';
    rank[e[2]] = 'R';
    rank
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::Position;

    fn board(fen: &str) -> Board {
        fen.parse::<shakmaty::fen::Fen>()
            .unwrap()
            .into_setup()
            .board
    }

    #[test]
    fn start_positions() {
        assert!(start_position(&Board::new()).is_some());
        let p = start_position(&board("bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR")).unwrap();
        assert_eq!(p.castles().mode(), CastlingMode::Chess960);
        assert!(p.legal_moves().len() > 15);
        // Bishops on one colour, king outside the rooks, Black not mirrored: not starts.
        assert!(start_position(&board("bqbnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BQBNNRKR")).is_none());
        assert!(start_position(&board("kbbqnnrr/pppppppp/8/8/8/8/PPPPPPPP/KBBQNNRR")).is_none());
        assert!(start_position(&board("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR")).is_none());
        assert!(start_position(&board("bbqnnrkr/pppppppp/8/8/4P3/8/PPPP1PPP/BBQNNRKR")).is_none());
    }
}
