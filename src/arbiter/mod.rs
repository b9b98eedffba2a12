//! The Laws of Chess on top of moves and the clock: clock model, illegal-move lifecycle, claims, results.
