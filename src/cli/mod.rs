//! `eboardctl` subcommands, one module each. The binary only parses arguments.
