//! `systemd/eboardd-broadcast@.service`: an instance per lichess round that systemd takes
//! without a warning, hardened (exposure "OK", as low as the relay's), with the token handed
//! over as a credential (never on the command line or in the environment) and the state file
//! `status` reads in its own runtime folder.

mod common;

use std::process::Command;

const UNIT: &str = include_str!("../systemd/eboardd-broadcast@.service");

#[test]
fn the_unit_is_a_hardened_instance_per_round() {
    for line in [
        "LoadCredential=lichess-token:/etc/eboardd/lichess-token",
        "--round %i --token-file ${CREDENTIALS_DIRECTORY}/lichess-token",
        "RuntimeDirectory=eboardd-broadcast/%i",
        "RestartPreventExitStatus=2",
        "DynamicUser=yes",
    ] {
        assert!(UNIT.contains(line), "{line}");
    }
    assert!(
        !UNIT.contains("LICHESS_TOKEN="),
        "no token in the environment"
    );
    if !common::require::require_tool("systemd-analyze", "systemd") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // The unit as installed, pointing at the binary under test, as one instance.
    let text = UNIT.replace("/usr/bin/eboardctl", env!("CARGO_BIN_EXE_eboardctl"));
    let unit = dir.path().join("eboardd-broadcast@aBcD1234.service");
    std::fs::write(dir.path().join("eboardd-broadcast@.service"), &text).unwrap();
    std::fs::write(&unit, &text).unwrap();
    let verify = Command::new("systemd-analyze")
        .arg("verify")
        .arg(&unit)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&verify.stdout),
        String::from_utf8_lossy(&verify.stderr)
    );
    assert!(verify.status.success() && said.trim().is_empty(), "{said}");
    let security = Command::new("systemd-analyze")
        .args(["security", "--offline=true"])
        .arg(&unit)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&security.stdout);
    let score: f64 = report
        .lines()
        .find_map(|l| l.split("exposure level for").nth(1))
        .and_then(|rest| rest.split(':').nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no exposure level in {report}"));
    assert!(score <= 2.0, "exposure {score}: {report}");
}
