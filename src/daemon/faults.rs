//! Storage fault injection, for tests of a full, read-only or failing disk where a real one
//! cannot be had (a test run without root cannot mount a small filesystem).
//!
//! When the environment variable [`FAULTS_ENV`] names a file, every write of the daemon's
//! state (journals, the remembered board list) and PGN files first reads that file: if it
//! holds `ENOSPC`, `EROFS`, `EDQUOT` or `EIO`, the write fails with that error, exactly as the
//! kernel would report it; an absent or empty file means no fault. A journal append that
//! meets a fault writes half of its bytes first, as a write interrupted by a full disk does,
//! so the repair of torn appends is exercised too. Without the variable this costs nothing.

use std::io;
use std::path::PathBuf;
use std::sync::OnceLock;

/// The variable naming the fault file.
pub const FAULTS_ENV: &str = "EBOARDD_STORAGE_FAULTS";

fn fault_file() -> Option<&'static PathBuf> {
    static FILE: OnceLock<Option<PathBuf>> = OnceLock::new();
    FILE.get_or_init(|| std::env::var_os(FAULTS_ENV).map(PathBuf::from))
        .as_ref()
}

/// The injected fault now in force, if any.
pub fn check() -> io::Result<()> {
    let Some(file) = fault_file() else {
        return Ok(());
    };
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let errno = match text.trim() {
        "" => return Ok(()),
        "ENOSPC" => nix::libc::ENOSPC,
        "EROFS" => nix::libc::EROFS,
        "EDQUOT" => nix::libc::EDQUOT,
        _ => nix::libc::EIO,
    };
    Err(io::Error::from_raw_os_error(errno))
}
