//! eboardctl: watch, inspect and steer boards over D-Bus.
fn main() {
    eprintln!("eboardctl: no commands are built yet");
    std::process::exit(2);
}
