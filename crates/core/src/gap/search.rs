//! The legal sequences of moves from a known position to a sensed board: the one search of
//! the crate, kept with the tracker ([`crate::tracker::sequences`]), which runs it when the
//! board cannot be explained live; a gap runs the same search on the board read after it.

pub use crate::tracker::sequences::*;
