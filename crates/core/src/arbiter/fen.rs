//! Positions as FEN text: written for the contract's properties and signals, read from
//! operators and configuration files within bounds (no FEN of outside input makes a record
//! count run away).

use shakmaty::{CastlingMode, Chess, EnPassantMode, fen::Fen};

/// Full FEN of a position (legal ep square only, as the `Fen` property shows it).
pub fn fen_of(pos: &Chess) -> String {
    Fen::from_position(pos, EnPassantMode::Legal).to_string()
}

/// Parses a FEN into a legal position, with a sentence on failure.
pub fn parse_fen(fen: &str) -> Result<Chess, String> {
    parse_fen_in(fen, false)
}

/// The longest FEN accepted, in bytes (the contract's bound on `SetPosition`).
pub use crate::contract::limits::FEN_MAX;

/// The largest halfmove clock and fullmove number a FEN may give. The 75-move rule ends every
/// game before move 9,000, so no real position is refused, while a larger number would be
/// stored saturated (shakmaty reads 99999999999 as 4294967295) and counted on from there.
pub const FEN_NUMBER_MAX: u64 = 10_000;

/// [`parse_fen`] for a board that plays Chess960 (`chess960`): castling rights name the
/// rooks' files (X-FEN or Shredder-FEN) and castling follows Chess960 rules.
pub fn parse_fen_in(fen: &str, chess960: bool) -> Result<Chess, String> {
    let shown = crate::game::shown(fen);
    if fen.len() > FEN_MAX {
        return Err(format!(
            "a FEN has at most {FEN_MAX} characters; this one has {}",
            fen.len()
        ));
    }
    let fields: Vec<&str> = fen.split_whitespace().collect();
    for (index, what) in [(4, "halfmove clock"), (5, "fullmove number")] {
        let Some(number) = fields.get(index) else {
            continue;
        };
        // A number that does not fit is out of range too; other text is shakmaty's to refuse.
        let out_of_range = number.bytes().all(|b| b.is_ascii_digit())
            && number
                .parse::<u64>()
                .ok()
                .is_none_or(|n| n > FEN_NUMBER_MAX);
        if out_of_range {
            return Err(format!(
                "`{shown}`: the {what} {} is out of range (at most {FEN_NUMBER_MAX})",
                crate::game::shown(number)
            ));
        }
    }
    let f = Fen::from_ascii(fen.trim().as_bytes())
        .map_err(|e| format!("`{shown}` is not a FEN: {e}"))?;
    let mode = if chess960 {
        CastlingMode::Chess960
    } else {
        CastlingMode::Standard
    };
    f.into_position(mode)
        .map_err(|e| format!("`{shown}` is not a legal position: {e}"))
}
