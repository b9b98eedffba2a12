//! The eboardd daemon.
fn main() {
    eprintln!("eboardd: the daemon is not built yet");
    std::process::exit(1);
}
