//! The eboardd daemon: see `eboardd --help` and the crate's `daemon` module.

fn main() {
    std::process::exit(eboardd::daemon::main());
}
