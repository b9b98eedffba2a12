//! `eboardctl` subcommands, one module each. The binary only parses arguments.

pub mod decode;
pub mod replay;
pub mod simulate;
