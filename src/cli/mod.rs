//! `eboardctl` subcommands, one module each. The binary only parses arguments.

pub mod replay;
pub mod simulate;
