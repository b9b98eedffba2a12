//! Writes the man pages of `eboardd` and `eboardctl` (one more page per `eboardctl` command)
//! from their clap definitions, so the pages say exactly what `--help` says:
//! `eboardd-manpages DIR`. Built only with `--features manpages`, by `make man` and the Debian
//! package; it is not installed.

use clap::CommandFactory;

// The client's command line lives in its binary; read it from there rather than copy it.
#[allow(dead_code)]
#[path = "eboardctl.rs"]
mod eboardctl;

fn main() {
    let Some(dir) = std::env::args_os().nth(1) else {
        eprintln!("usage: eboardd-manpages DIR");
        std::process::exit(2);
    };
    let dir = std::path::PathBuf::from(dir);
    let written = std::fs::create_dir_all(&dir)
        .and_then(|()| clap_mangen::generate_to(eboardd::daemon::args::Args::command(), &dir))
        .and_then(|()| clap_mangen::generate_to(eboardctl::Cli::command(), &dir));
    if let Err(e) = written {
        eprintln!("eboardd-manpages: writing into {}: {e}", dir.display());
        std::process::exit(1);
    }
}
