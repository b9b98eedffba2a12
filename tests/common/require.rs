//! What a test needs from the machine (a program, root, a Python module), checked in one place.
//!
//! A developer's machine may lack tmux or root, and such a test then says what it did not run.
//! CI must not pass that way: under `CI=true` (what `.ci/run` sets, as most CI services do) a
//! missing requirement is a failure that names it, never a quiet skip.
//!
//! Needs nothing but std and nix, so that the tests that do not use the rest of `tests/common`
//! include this file alone: `#[path = "common/require.rs"] mod require;`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// Whether this run is CI's: `CI` set to anything but empty, `0` or `false`.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"))
}

/// A test (or part of one) cannot run here because of `reason`. Under CI that fails the test
/// with the reason; elsewhere the reason is printed and the caller skips or falls back.
#[track_caller]
pub fn skip_or_fail(reason: &str) {
    if in_ci() {
        panic!("CI=true, and this test cannot run: {reason}");
    }
    eprintln!("skipped: {reason} (under CI=true this is a failure)");
}

/// `program` found on PATH (or in /usr/sbin and /sbin, which a user's PATH may lack).
pub fn find_tool(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Whether `program` is installed, without judging its absence.
pub fn have_tool(program: &str) -> bool {
    find_tool(program).is_some()
}

/// True when `program` is installed; otherwise [`skip_or_fail`] naming it and the Debian
/// `package` that has it, and false.
#[track_caller]
pub fn require_tool(program: &str, package: &str) -> bool {
    if have_tool(program) {
        return true;
    }
    skip_or_fail(&format!(
        "{program} is not installed (Debian package {package})"
    ));
    false
}

/// [`require_tool`] for each `(program, package)`, stopping at the first missing one.
#[track_caller]
pub fn require_tools(tools: &[(&str, &str)]) -> bool {
    tools
        .iter()
        .all(|(program, package)| require_tool(program, package))
}

/// Whether this process runs as root.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { nix::libc::geteuid() == 0 }
}

/// True when running as root; otherwise [`skip_or_fail`] saying `why` root is needed.
#[track_caller]
pub fn require_root(why: &str) -> bool {
    if is_root() {
        return true;
    }
    skip_or_fail(&format!("needs root: {why}"));
    false
}
