//! The units in `systemd/` as shipped: every one sets `LimitNOFILE=` (the default soft limit
//! of 1024 handles is what idle clients exhausted; the bridges bound their connections below
//! the unit's limit), and the daemon's `UMask=` is the one ARCHITECTURE.md's threat model
//! states. `systemd-analyze verify` on the same files is `.ci/checks/linux.sh`.

use std::path::{Path, PathBuf};

fn units() -> Vec<(PathBuf, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("systemd");
    let mut units: Vec<(PathBuf, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("unit dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "service"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("unit text");
            (p, text)
        })
        .collect();
    units.sort();
    units
}

/// The value of `key=` in the `[Service]` section (the last one, as systemd reads it).
fn service_value(text: &str, key: &str) -> Option<String> {
    let mut section = "";
    let mut value = None;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line;
        } else if section == "[Service]"
            && let Some(v) = line.strip_prefix(key).and_then(|r| r.strip_prefix('='))
        {
            value = Some(v.trim().to_owned());
        }
    }
    value
}

#[test]
fn every_unit_sets_a_file_handle_limit() {
    let units = units();
    assert!(units.len() >= 6, "{units:?}");
    for (path, text) in &units {
        let limit = service_value(text, "LimitNOFILE")
            .unwrap_or_else(|| panic!("{} sets no LimitNOFILE=", path.display()));
        let n: u64 = limit.parse().unwrap_or_else(|_| {
            panic!("{}: LimitNOFILE={limit} is not one number", path.display())
        });
        assert!(n >= 256, "{}: LimitNOFILE={n}", path.display());
    }
    let web = units
        .iter()
        .find(|(p, _)| p.ends_with("eboardd-web.service"))
        .expect("the web unit");
    let n: u64 = service_value(&web.1, "LimitNOFILE")
        .unwrap()
        .parse()
        .unwrap();
    assert!(n > 2_000, "the web bridge holds thousands of clients: {n}");
}

#[test]
fn the_daemon_umask_is_the_one_the_threat_model_states() {
    let (_, daemon) = units()
        .into_iter()
        .find(|(p, _)| p.ends_with("eboardd.service"))
        .expect("eboardd.service");
    let umask = service_value(&daemon, "UMask").expect("eboardd.service sets UMask=");
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/ARCHITECTURE.md"))
        .expect("ARCHITECTURE.md");
    let row = doc
        .lines()
        .find(|l| l.starts_with("| **The state directory**"))
        .expect("the threat model's state directory row");
    assert!(
        row.contains(&format!("`UMask={umask}`")),
        "the unit says UMask={umask}, the threat model: {row}"
    );
    for (other, text) in units() {
        if let Some(u) = service_value(&text, "UMask")
            && !other.ends_with("eboardd.service")
        {
            assert_eq!(
                u,
                "0077",
                "{}: bridges keep their files to themselves",
                other.display()
            );
        }
    }
}
