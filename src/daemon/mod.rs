//! The async shell: serial links, D-Bus objects, the game journal, configuration.

pub mod config;
pub mod journal;
pub mod pgn_files;
pub mod recorder;
