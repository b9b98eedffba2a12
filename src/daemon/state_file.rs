//! Opening the daemon's own files (journals, their locks, the commit log, the board list, the
//! PGN files) so that no open can block and nothing but a regular file is ever used.
//!
//! A FIFO in place of a journal would block a plain `open` until some writer came along (the
//! start hung, and SIGTERM with it); a device could do anything on open. So the type is
//! checked first without opening (a symbolic link to a regular file is fine), and the open
//! itself is `O_NONBLOCK | O_NOCTTY` with the type checked again on the open file (whatever
//! replaced the file in between). What is not a regular file is refused with a
//! [`NotRegular`] error naming what is there.

use std::fs::{self, File, FileType, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use nix::fcntl::{FcntlArg, OFlag, fcntl};

/// Something other than a regular file stands where a state file should be.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} is {what}, not a regular file", path.display())]
pub struct NotRegular {
    /// Where.
    pub path: PathBuf,
    /// What is there: `a directory`, `a FIFO`, ...
    pub what: &'static str,
}

/// What a file type is, for messages.
fn describe(t: FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_symlink() {
        "a dangling symbolic link"
    } else {
        "a special file"
    }
}

fn not_regular(path: &Path, t: FileType) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        NotRegular {
            path: path.to_path_buf(),
            what: describe(t),
        },
    )
}

/// The [`NotRegular`] an error carries, if it is one.
pub fn as_not_regular(e: &io::Error) -> Option<&NotRegular> {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<NotRegular>())
}

/// Whether `path` holds a regular file (following symbolic links): `Ok(false)` when nothing
/// is there, a [`NotRegular`] error when something else is.
pub fn check(path: &Path) -> io::Result<bool> {
    match fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(true),
        Ok(m) => Err(not_regular(path, m.file_type())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => match fs::symlink_metadata(path) {
            // A link pointing nowhere: creating through it would make a file elsewhere.
            Ok(m) if m.file_type().is_symlink() => Err(not_regular(path, m.file_type())),
            _ => Ok(false),
        },
        Err(e) => Err(e),
    }
}

/// Open `path` with `options` (which may create it), never blocking and only if it is (or
/// becomes) a regular file.
pub fn open(path: &Path, options: &OpenOptions) -> io::Result<File> {
    check(path)?;
    let mut options = options.clone();
    options.custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY);
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(path, meta.file_type()));
    }
    // Regular files ignore O_NONBLOCK; cleared all the same, so the handle is an ordinary one.
    let flags = fcntl(&file, FcntlArg::F_GETFL).map_err(io::Error::from)?;
    let flags = OFlag::from_bits_truncate(flags) & !OFlag::O_NONBLOCK;
    fcntl(&file, FcntlArg::F_SETFL(flags)).map_err(io::Error::from)?;
    Ok(file)
}

/// Open a regular file for reading (see [`open`]).
pub fn open_read(path: &Path) -> io::Result<File> {
    open(path, OpenOptions::new().read(true))
}

/// Read a whole regular file (see [`open`]).
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    open_read(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Create or truncate a regular file for writing, as `File::create` does (see [`open`]).
pub fn create(path: &Path) -> io::Result<File> {
    open(
        path,
        OpenOptions::new().write(true).create(true).truncate(true),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_open_and_everything_else_is_named_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        fs::write(&file, "x").unwrap();
        assert_eq!(read(&file).unwrap(), b"x");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert_eq!(read(&link).unwrap(), b"x");
        assert!(!check(&dir.path().join("none")).unwrap());
        create(&dir.path().join("new")).unwrap();

        let sub = dir.path().join("d");
        fs::create_dir(&sub).unwrap();
        let e = read(&sub).unwrap_err();
        assert_eq!(as_not_regular(&e).unwrap().what, "a directory");
        assert_eq!(
            e.to_string(),
            format!("{} is a directory, not a regular file", sub.display())
        );

        // A FIFO nobody writes to: a plain open would wait forever.
        let fifo = dir.path().join("p");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        for e in [read(&fifo).unwrap_err(), create(&fifo).unwrap_err()] {
            assert_eq!(as_not_regular(&e).unwrap().what, "a FIFO");
        }
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
        assert!(as_not_regular(&create(&dangling).unwrap_err()).is_some());
        assert!(as_not_regular(&io::Error::other("x")).is_none());
    }
}
