//! The `Round` tag's `<round>.<board>` form (contract section 3): the daemon's round
//! folders and the lichess push's round both read a board's place from it, with one parser.

/// A round and table number from a `Round` tag of the form `<round>.<board>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoundBoard {
    /// The round as written (digits only, so it is safe in a directory name).
    pub round: String,
    pub board: u32,
}

/// The round and board of a `Round` tag value, if it has the `<round>.<board>` form (both
/// whole numbers; a plain `3` names no board and gets no round file).
pub fn parse_round(value: &str) -> Option<RoundBoard> {
    let (round, board) = value.split_once('.')?;
    let digits = |s: &str| !s.is_empty() && s.len() <= 9 && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(round) || !digits(board) {
        return None;
    }
    let board: u32 = board.parse().ok().filter(|&b| b > 0)?;
    // Leading zeros would give two folders for one round.
    let round = round.trim_start_matches('0');
    (!round.is_empty()).then(|| RoundBoard {
        round: round.to_string(),
        board,
    })
}
