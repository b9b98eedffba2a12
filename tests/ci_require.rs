//! The requirement helper (`tests/common/require.rs`) itself: under `CI=true` a missing
//! program fails the test with its name and package; elsewhere the test is skipped with the
//! same message. Each case runs this binary again as a child with the environment set, so the
//! parent's own `CI` does not matter.

#[path = "common/require.rs"]
mod require;

use std::process::Command;

/// Set in the child runs only.
const CHILD: &str = "EBOARDD_REQUIRE_CHILD";
const MISSING: &str = "eboardd-test-no-such-program";

/// Entry point of the child runs; without the variable it has nothing to do.
#[test]
fn child_needs_a_missing_program() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    assert!(!require::require_tool(MISSING, "no-such-package"));
    println!("child: went on after the skip");
}

/// This binary's `child_needs_a_missing_program` with `CI` set to `ci` (or unset).
fn child(ci: Option<&str>) -> (bool, String) {
    let mut cmd = Command::new(std::env::current_exe().expect("test binary"));
    cmd.args(["--exact", "child_needs_a_missing_program", "--nocapture"])
        .env(CHILD, "1")
        .env_remove("CI");
    if let Some(ci) = ci {
        cmd.env("CI", ci);
    }
    let out = cmd.output().expect("run the child");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn under_ci_a_missing_program_fails_the_test_and_is_named() {
    for ci in ["true", "1", "yes"] {
        let (passed, text) = child(Some(ci));
        assert!(!passed, "CI={ci}: the child passed:\n{text}");
        assert!(
            text.contains(&format!(
                "{MISSING} is not installed (Debian package no-such-package)"
            )),
            "CI={ci}: {text}"
        );
        assert!(!text.contains("went on after the skip"), "{text}");
    }
}

#[test]
fn outside_ci_a_missing_program_skips_with_the_reason() {
    for ci in [None, Some("false"), Some("0"), Some("")] {
        let (passed, text) = child(ci);
        assert!(passed, "CI={ci:?}: the child failed:\n{text}");
        assert!(
            text.contains(&format!("skipped: {MISSING} is not installed")),
            "CI={ci:?}: {text}"
        );
        assert!(text.contains("went on after the skip"), "{text}");
    }
}

#[test]
fn installed_programs_are_found() {
    assert!(require::have_tool("sh"));
    assert!(require::require_tools(&[
        ("sh", "dash"),
        ("ls", "coreutils")
    ]));
    assert!(!require::have_tool(MISSING));
}
