//! The DGT e-board + clock serial wire format, sans-IO.
//!
//! [`message`] holds the typed board → host messages; the decoder turns byte chunks of any
//! size into them (resynchronising over garbage) and the command module encodes every
//! host → board command a daemon may send. No tokio, no files, no clock reads here.

pub mod message;

pub use message::*;
