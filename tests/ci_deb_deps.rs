//! `make deb` on a fresh Debian or Ubuntu: it installs its build dependencies first
//! (`.ci/deb-deps`, as `make check` runs `.ci/test-deps`), naming what it installs, and stops
//! with the way to get cargo when there is none. The script runs for real with
//! `EBOARDD_DEPS_DRY_RUN=1` (print, change nothing) and a `PATH` that has only a shell and
//! the few programs it uses, as on a machine with nothing installed; the installing itself
//! is `.ci/checks/package.sh`'s `make deb` on CI's fresh machine.

#[path = "common/require.rs"]
mod require;

use std::path::Path;
use std::process::Command;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn make_deb_installs_its_build_dependencies_before_building() {
    if !require::require_tool("make", "make") {
        return;
    }
    let out = Command::new("make")
        .args(["-n", "deb"])
        .current_dir(repo())
        .output()
        .expect("make -n deb");
    let text = String::from_utf8_lossy(&out.stdout);
    let deps = text
        .find(".ci/deb-deps")
        .unwrap_or_else(|| panic!("{text}"));
    let build = text
        .find("debian/rules binary")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(deps < build, "the dependencies come first: {text}");
}

#[test]
fn on_a_bare_machine_it_names_the_packages_and_the_way_to_cargo() {
    let bare = tempfile::tempdir().expect("temp dir");
    // A shell and the programs the script itself runs; no dh, dpkg, cc, make or cargo.
    for tool in ["bash", "env", "id", "sort"] {
        let path = ["/usr/bin", "/bin"]
            .iter()
            .map(|d| Path::new(d).join(tool))
            .find(|p| p.exists())
            .unwrap_or_else(|| panic!("{tool} is not installed"));
        std::os::unix::fs::symlink(path, bare.path().join(tool)).expect("link");
    }
    let out = Command::new(repo().join(".ci/deb-deps"))
        .env_clear()
        .env("PATH", bare.path())
        .env("HOME", bare.path())
        .env("EBOARDD_DEPS_DRY_RUN", "1")
        .output()
        .expect("running .ci/deb-deps");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("deb-deps: installing"))
        .unwrap_or_else(|| panic!("no install line: {stdout}{stderr}"));
    for pkg in ["debhelper", "dpkg-dev", "gcc", "make"] {
        assert!(line.split(' ').any(|w| w == pkg), "{pkg} in: {line}");
    }
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stderr.contains("cargo is missing") && stderr.contains("rustup"),
        "{stderr}"
    );
}
