//! A disk that refuses writes, for the storage tests: a real small tmpfs when the test runs
//! as root (as CI does), or the daemon's fault injector; and the manager's `StorageProblem`
//! watched while it happens.

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::proxies::ManagerProxy;

/// Every value the manager's `StorageProblem` takes, collected in the background.
pub fn watch_storage_problem(conn: &zbus::Connection) -> Arc<Mutex<Vec<String>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let conn = conn.clone();
    let out = seen.clone();
    tokio::spawn(async move {
        let manager = ManagerProxy::new(&conn).await.unwrap();
        let mut changes = manager.receive_storage_problem_changed().await;
        while let Some(change) = super::next(&mut changes).await {
            if let Ok(v) = change.get().await {
                out.lock().unwrap().push(v);
            }
        }
    });
    seen
}

/// Wait until the collected `StorageProblem` values satisfy `pred`.
pub async fn wait_problem(
    seen: &Arc<Mutex<Vec<String>>>,
    what: &str,
    pred: impl Fn(&[String]) -> bool,
) {
    let deadline = tokio::time::Instant::now() + super::WAIT * 2;
    loop {
        if pred(&seen.lock().unwrap()) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}; StorageProblem went {:?}",
            seen.lock().unwrap()
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// Wait until the last `StorageProblem` value is empty again (the problem is over).
pub async fn wait_problem_over(seen: &Arc<Mutex<Vec<String>>>) {
    wait_problem(seen, "StorageProblem empty again", |seen| {
        seen.last().is_some_and(|p| p.is_empty())
    })
    .await;
}

/// How the disk is made to refuse writes.
pub enum Disk {
    /// The daemon's fault injector: a file it reads before each write.
    Injected { file: PathBuf },
    /// A small tmpfs mounted on the state directory, filled by another file.
    Tmpfs { mount: PathBuf, filler: PathBuf },
}

impl Disk {
    pub fn fill(&self) {
        match self {
            Disk::Injected { file } => std::fs::write(file, "ENOSPC").unwrap(),
            Disk::Tmpfs { filler, .. } => {
                let mut f = std::fs::File::create(filler).unwrap();
                let chunk = vec![0xA5u8; 4096];
                loop {
                    match f.write_all(&chunk) {
                        Ok(()) => {}
                        Err(e) if e.raw_os_error() == Some(nix::libc::ENOSPC) => break,
                        Err(e) => panic!("filling the tmpfs: {e}"),
                    }
                }
                // Every last page, so that the daemon's next write needs one.
                let one = [0u8; 1];
                while f.write_all(&one).is_ok() {}
            }
        }
    }

    pub fn free(&self) {
        match self {
            Disk::Injected { file } => std::fs::write(file, "").unwrap(),
            Disk::Tmpfs { filler, .. } => std::fs::remove_file(filler).unwrap(),
        }
    }

    /// The daemon's extra environment.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        match self {
            Disk::Injected { file } => vec![(
                eboardd::daemon::faults::FAULTS_ENV,
                file.display().to_string(),
            )],
            Disk::Tmpfs { .. } => Vec::new(),
        }
    }
}

impl Drop for Disk {
    fn drop(&mut self) {
        if let Disk::Tmpfs { mount, .. } = self {
            let _ = std::process::Command::new("umount")
                .arg("-l")
                .arg(mount)
                .status();
        }
    }
}

/// A 256 KiB tmpfs on `dir/state` when this process may mount one; otherwise the fault
/// injector stands in for it, and the test says so (CI runs as root and must mount the real
/// small filesystem, so there it fails).
pub fn tmpfs_or_injector(dir: &Path) -> Disk {
    match tmpfs(dir) {
        Ok(d) => d,
        Err(why) => {
            super::require::skip_or_fail(&format!(
                "no 256 KiB tmpfs ({why}): the fault injector stands in for it"
            ));
            Disk::Injected {
                file: dir.join("faults"),
            }
        }
    }
}

/// A 256 KiB tmpfs on `dir/state`, when this process may mount one.
pub fn tmpfs(dir: &Path) -> Result<Disk, String> {
    if !super::require::is_root() {
        return Err("not root".into());
    }
    let mount = dir.join("state");
    std::fs::create_dir_all(&mount).unwrap();
    let out = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=256k,mode=0755", "eboardd-test"])
        .arg(&mount)
        .output()
        .map_err(|e| format!("cannot run mount: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "mount failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(Disk::Tmpfs {
        filler: mount.join("filler"),
        mount,
    })
}
