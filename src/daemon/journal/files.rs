//! The journal's files beside the journal itself: the archive a finished game's journal is
//! linked into, the lock that keeps a journal to one daemon, and the directory syncs and
//! temporary names an atomic replacement needs.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

use super::{JournalError, is_storage_fault, state_file};

/// The archive directory of a journal: `<games dir>/archive`.
pub fn archive_dir(journal: &Path) -> PathBuf {
    parent_dir(journal).join("archive")
}

/// Hard-link the journal into the archive under the first free number, unless the newest
/// archive entry already is this very file (a rotation interrupted after its link).
pub(super) fn archive(path: &Path) -> io::Result<PathBuf> {
    let dir = archive_dir(path);
    fs::create_dir_all(&dir)?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "journal".into());
    let name = |n: u32| dir.join(format!("{stem}.{n}.journal"));
    let mut n = 1;
    while name(n).exists() {
        n += 1;
    }
    let current = fs::metadata(path)?;
    if n > 1 {
        let newest = fs::metadata(name(n - 1))?;
        if newest.dev() == current.dev() && newest.ino() == current.ino() {
            return Ok(name(n - 1));
        }
    }
    let target = name(n);
    if fs::hard_link(path, &target).is_err() {
        // File systems without hard links: copy instead (a crash here may leave a duplicate).
        fs::copy(path, &target)?;
        File::open(&target)?.sync_all()?;
    }
    sync_dir(&dir)?;
    Ok(target)
}

/// Take the journal's lock file, so that two processes (or two tasks for one board) never
/// write the same journal. The kernel drops the lock when its holder dies, even by `kill -9`.
///
/// On a full or read-only disk an existing lock file is opened read-only (a lock needs no
/// write access); when there is none and none can be made, `Ok(None)`: the journal goes
/// unlocked rather than keeping the board from being served. Something that is not a regular
/// file in place of the lock file is an error naming it (and is never opened in a way that
/// could block); so is a lock held by another process, with a [`io::ErrorKind::WouldBlock`]
/// source.
pub(super) fn lock(path: &Path) -> Result<Option<Flock<File>>, JournalError> {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    let name = PathBuf::from(name);
    let opened = state_file::open(
        &name,
        OpenOptions::new().create(true).truncate(false).write(true),
    );
    let file = match opened {
        Ok(f) => f,
        Err(e) if is_storage_fault(&e) => match state_file::open_read(&name) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(JournalError::at(path, "lock it")(e)),
        },
        Err(e) => return Err(JournalError::at(path, "lock it")(e)),
    };
    Flock::lock(file, FlockArg::LockExclusiveNonblock)
        .map(Some)
        .map_err(|(_, errno)| {
            let source = if errno == Errno::EWOULDBLOCK {
                io::Error::new(
                    io::ErrorKind::WouldBlock,
                    "it is in use by another eboardd process serving the same board",
                )
            } else {
                io::Error::from(errno)
            };
            JournalError::at(path, "lock it")(source)
        })
}

pub(super) fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

pub(super) fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".tmp");
    PathBuf::from(name)
}

/// `<path>.<what>-N` for the first N that does not exist yet.
pub(super) fn free_name(path: &Path, what: &str) -> PathBuf {
    let mut n = 1u32;
    loop {
        let mut name = path.as_os_str().to_owned();
        name.push(format!(".{what}-{n}"));
        let candidate = PathBuf::from(name);
        if !candidate.exists() {
            return candidate;
        }
        n += 1;
    }
}

/// Make a directory entry (create, rename) durable.
pub(super) fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}
