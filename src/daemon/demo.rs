//! `eboardd --demo`: a simulated board + clock plays a bundled real game through the whole
//! pipeline, and a D-Bus client inside the process prints every event it receives.

use super::args::Args;

/// Run the demo; returns the exit code.
pub async fn run(args: Args) -> i32 {
    let _ = args;
    eprintln!("eboardd: the demo needs the simulator, which this build does not have yet");
    super::EXIT_FAILURE
}
