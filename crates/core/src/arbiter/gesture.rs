//! The result gesture as the arbiter records it (see [`crate::tracker::gesture`] for how it
//! is recognised). Part of [`Arbiter`].

use shakmaty::Chess;

use super::{Arbiter, Ruling};
use crate::vocab::{GameResult, Termination};

impl Arbiter {
    /// The position before the last move of the current segment, if there is a last move.
    pub fn previous_position(&self) -> Option<&Chess> {
        let n = self.positions.len();
        (n >= 2).then(|| &self.positions[n - 2])
    }

    /// The kings on the centre squares ended the game with `result`; nothing happens when
    /// the game is already over (or `result` is no end).
    pub fn result_gesture(&mut self, result: GameResult) -> Vec<Ruling> {
        let mut ev = Vec::new();
        if self.is_finished() || !result.is_finished() {
            return ev;
        }
        self.game.add_decision(format!(
            "{result} shown on the board: both kings on the centre squares (result gesture)"
        ));
        self.end(result, Termination::ResultGesture, &mut ev);
        ev
    }
}
