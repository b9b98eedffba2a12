//! Storage fault injection, for tests of a full, read-only or failing disk where a real one
//! cannot be had (a test run without root cannot mount a small filesystem), and of failures
//! no real disk produces on demand.
//!
//! When the environment variable [`FAULTS_ENV`] names a file, every write of the daemon's
//! state (journals, the remembered board list) and PGN files first reads that file. It holds
//! words, separated by white space; an absent or empty file means no fault:
//!
//! - `ENOSPC`, `EROFS`, `EDQUOT` or `EIO` (any other word without a `:` counts as `EIO`):
//!   the writes fail with that error, exactly as the kernel would report it. A journal append
//!   that meets a fault writes half of its bytes first, as a write interrupted by a full disk
//!   does, so the repair of torn appends is exercised too.
//! - `truncate:<errno>`: cutting a journal back after a failed append fails too, so the torn
//!   bytes stay in the middle of the file.
//! - `read:<errno>`: reading the remembered board list (`boards.json`) fails.
//! - `panic:writer`: the journal writer thread panics, as a bug in it would.
//!
//! Without the variable this costs nothing.

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

/// The words of the fault file now (none without the variable).
fn words() -> Vec<String> {
    let Some(file) = fault_file() else {
        return Vec::new();
    };
    let text = std::fs::read_to_string(file).unwrap_or_default();
    text.split_whitespace().map(str::to_string).collect()
}

fn errno(word: &str) -> io::Error {
    let errno = match word {
        "ENOSPC" => nix::libc::ENOSPC,
        "EROFS" => nix::libc::EROFS,
        "EDQUOT" => nix::libc::EDQUOT,
        _ => nix::libc::EIO,
    };
    io::Error::from_raw_os_error(errno)
}

/// The fault with the `scope:` prefix now in force (`""`: a plain write fault), if any.
fn scoped(scope: &str) -> io::Result<()> {
    for word in words() {
        let hit = match word.split_once(':') {
            Some((s, e)) if s == scope => Some(e.to_string()),
            None if scope.is_empty() => Some(word.clone()),
            _ => None,
        };
        if let Some(e) = hit {
            return Err(errno(&e));
        }
    }
    Ok(())
}

/// The injected write fault now in force, if any.
pub fn check() -> io::Result<()> {
    scoped("")
}

/// The injected fault of a journal's cut-back (`truncate:`), if any.
pub fn check_truncate() -> io::Result<()> {
    scoped("truncate")
}

/// The injected fault of reading the board list (`read:`), if any.
pub fn check_read() -> io::Result<()> {
    scoped("read")
}

/// Whether the journal writer is to panic now (`panic:writer`).
pub fn writer_panics() -> bool {
    words().iter().any(|w| w == "panic:writer")
}
