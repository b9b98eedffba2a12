//! The pure per-board state machine: tracker + clock + arbiter + game, time passed in.
