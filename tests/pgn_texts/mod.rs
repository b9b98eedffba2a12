//! Game texts of every length for the live-file tests (`persist_files`, `persist_live_lease`):
//! each one a whole PGN a reader can tell from every other.

/// A game of `n` moves by each side.
pub fn game(n: usize) -> String {
    let mut pgn = format!("[Event \"Test\"]\n[Round \"{n}\"]\n\n");
    for i in 1..=n {
        pgn.push_str(&format!(
            "{i}. Nf3 {{[%clk 1:30:00]}} Nf6 {{[%clk 1:30:00]}} "
        ));
    }
    pgn.push_str("*\n");
    pgn
}
