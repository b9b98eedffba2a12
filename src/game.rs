//! The game record (moves with clock stamps, tags, result, penalties) and its PGN.
