//! The install path: `make install` / `make uninstall` into a staging `DESTDIR`, for a package
//! prefix (`/usr`) and a local one (`/usr/local`), with stand-in binaries so that no release
//! build is needed. Checked: every file lands where udev, systemd, sysusers and dbus-daemon read
//! it; the units and the helper name the installed programs; an existing configuration file is
//! never overwritten; uninstall leaves only the configuration. The Debian package is built by
//! this same `make install` (debian/rules) and checked installed by `.ci/checks/package.sh`.
//! Needs `make`; skips with a printed reason without it (under `CI=true` that is a failure).

#[path = "common/require.rs"]
mod require;

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Stand-ins for the release binaries.
fn fake_target(dir: &Path) -> PathBuf {
    let bin = dir.join("target");
    std::fs::create_dir_all(&bin).expect("target dir");
    for name in ["eboardd", "eboardctl"] {
        let path = bin.join(name);
        std::fs::write(&path, "#!/bin/sh\n").expect("stand-in binary");
        let mut perms = std::fs::metadata(&path).expect("metadata").permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&path, perms).expect("chmod");
    }
    bin
}

fn make(target: &str, destdir: &Path, prefix: &str, bin: &Path) {
    let out = Command::new("make")
        .arg("-C")
        .arg(repo())
        .arg(target)
        .arg(format!("DESTDIR={}", destdir.display()))
        .arg(format!("PREFIX={prefix}"))
        .arg(format!("TARGETDIR={}", bin.display()))
        .output()
        .expect("running make");
    assert!(
        out.status.success(),
        "make {target} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// All regular files under `root`, as absolute paths inside the staged system.
fn files(root: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(root, &path, out);
            } else if let Ok(rel) = path.strip_prefix(root) {
                out.push(format!("/{}", rel.display()));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

fn xml_interfaces() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(repo().join("dbus"))
        .expect("dbus dir")
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with("org.eboardd.Bridge1") && n.ends_with(".xml"))
        .collect();
    names.sort();
    names
}

/// The names of the files in `dir` that `keep` accepts (none when `dir` is missing).
fn names_in(dir: &Path, keep: impl Fn(&str) -> bool) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| keep(n))
                .collect()
        })
        .unwrap_or_default()
}

fn expected(prefix: &str) -> Vec<String> {
    let system = prefix == "/usr";
    let (udev, units, sysusers, policy) = if system {
        (
            "/usr/lib/udev/rules.d",
            "/usr/lib/systemd/system",
            "/usr/lib/sysusers.d",
            "/usr/share/dbus-1/system.d",
        )
    } else {
        (
            "/etc/udev/rules.d",
            "/etc/systemd/system",
            "/etc/sysusers.d",
            "/etc/dbus-1/system.d",
        )
    };
    let mut want = vec![
        format!("{prefix}/bin/eboardd"),
        format!("{prefix}/bin/eboardctl"),
        format!("{prefix}/libexec/eboardd/eboardd-board"),
        format!("{udev}/70-eboardd.rules"),
        format!("{sysusers}/eboardd.conf"),
        format!("{policy}/org.eboardd.Bridge1.conf"),
        format!("{prefix}/share/dbus-1/system-services/org.eboardd.Bridge1.service"),
        "/etc/eboardd/eboardd.toml".to_owned(),
    ];
    for xml in xml_interfaces() {
        want.push(format!("{prefix}/share/dbus-1/interfaces/{xml}"));
    }
    // Every unit of systemd/ (the daemon, the board helper, each bridge), and the man pages
    // when `make man` has written them.
    for unit in names_in(&repo().join("systemd"), |n| {
        n.starts_with("eboardd") && n.ends_with(".service")
    }) {
        want.push(format!("{units}/{unit}"));
    }
    for page in names_in(&repo().join("target/man"), |n| n.ends_with(".1")) {
        want.push(format!("{prefix}/share/man/man1/{page}"));
    }
    want.sort();
    want
}

#[test]
fn make_install_places_everything_and_uninstall_removes_it() {
    if !require::require_tool("make", "make") {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let bin = fake_target(dir.path());
    for prefix in ["/usr", "/usr/local"] {
        let dest = dir.path().join(format!("root{}", prefix.replace('/', "-")));
        make("install", &dest, prefix, &bin);
        assert_eq!(
            files(&dest),
            expected(prefix),
            "installed files for PREFIX={prefix}"
        );

        let units = if prefix == "/usr" {
            "usr/lib/systemd/system"
        } else {
            "etc/systemd/system"
        };
        let service =
            std::fs::read_to_string(dest.join(units).join("eboardd.service")).expect("unit");
        assert!(service.contains(&format!(
            "ExecStart={prefix}/bin/eboardd --bus system --log-format journald"
        )));
        assert!(service.contains(&format!(
            "ExecStartPost=+{prefix}/libexec/eboardd/eboardd-board resync"
        )));
        let template =
            std::fs::read_to_string(dest.join(units).join("eboardd-board@.service")).expect("unit");
        assert!(template.contains(&format!(
            "ExecStart={prefix}/libexec/eboardd/eboardd-board attach %I"
        )));
        assert!(template.contains(&format!(
            "ExecStop={prefix}/libexec/eboardd/eboardd-board detach %I"
        )));
        let relay =
            std::fs::read_to_string(dest.join(units).join("eboardd-relay.service")).expect("unit");
        assert!(relay.contains(&format!(
            "ExecStart={prefix}/bin/eboardctl --bus system relay --mqtt ${{EBOARDD_RELAY_MQTT}}"
        )));
        let livechess = std::fs::read_to_string(dest.join(units).join("eboardd-livechess.service"))
            .expect("unit");
        assert!(livechess.contains(&format!(
            "ExecStart={prefix}/bin/eboardctl --bus system livechess --listen 127.0.0.1:1982"
        )));
        let helper = dest.join(format!("{}/libexec/eboardd/eboardd-board", &prefix[1..]));
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&helper).expect("helper").permissions(),
        );
        assert_eq!(mode & 0o777, 0o755, "helper mode");

        // The operator's configuration survives a reinstall.
        let config = dest.join("etc/eboardd/eboardd.toml");
        std::fs::write(&config, "# mine\n").expect("edit config");
        make("install", &dest, prefix, &bin);
        assert_eq!(
            std::fs::read_to_string(&config).expect("config"),
            "# mine\n"
        );

        make("uninstall", &dest, prefix, &bin);
        assert_eq!(
            files(&dest),
            vec!["/etc/eboardd/eboardd.toml".to_owned()],
            "left after uninstall"
        );
    }
}
