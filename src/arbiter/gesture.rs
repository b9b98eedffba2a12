//! The result gesture as the arbiter records it (see [`crate::tracker::gesture`] for how it
//! is recognised). Part of [`Arbiter`].

use shakmaty::Chess;

use super::{Arbiter, ArbiterEvent};

impl Arbiter {
    /// The position before the last move of the current segment, if there is a last move.
    pub fn previous_position(&self) -> Option<&Chess> {
        let n = self.positions.len();
        (n >= 2).then(|| &self.positions[n - 2])
    }

    /// The kings on the centre squares ended the game with `result` (`1-0`, `0-1`,
    /// `1/2-1/2`); nothing happens when the game is already over.
    pub fn result_gesture(&mut self, result: &str) -> Vec<ArbiterEvent> {
        let mut ev = Vec::new();
        if self.is_finished() || !matches!(result, "1-0" | "0-1" | "1/2-1/2") {
            return ev;
        }
        self.game.add_decision(format!(
            "{result} shown on the board: both kings on the centre squares (result gesture)"
        ));
        self.end(result, "result-gesture", &mut ev);
        ev
    }
}
