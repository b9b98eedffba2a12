//! Rewriting a live PGN file in place while nobody has it open.
//!
//! Replacing a live file means a new file per change of the text (about one a move per board),
//! and a new inode is the dearest part of it: on ext4 the allocator looks past every recently
//! freed inode, so at 200 boards the writer thread took a quarter of the daemon's CPU (see
//! BENCHMARKS.md). A reader must still see the old text or the new one, never a mix.
//!
//! A write lease (`fcntl(F_SETLEASE, F_WRLCK)`) gives exactly that guarantee: the kernel grants
//! it only while no other open file refers to the file (in any process, this one included), and
//! while it is held any process opening the file waits until it is released. So under the lease
//! the text is overwritten in place and the lease released: a reader that opens the file opens
//! the old text or the new one. When the lease is refused (a reader holds the file open, a file
//! system without leases, a file not ours) nothing is written here and the caller replaces the
//! file as before, which is what keeps that reader's text whole.
//!
//! Only file systems that overwrite a file's blocks in place are rewritten this way (ext2/3/4,
//! XFS, tmpfs: the directory's, checked once, and a file elsewhere, through a link, is not),
//! and only when the file's blocks already hold the new text, so the write cannot
//! run out of space half-way; a copy-on-write or log-structured file system (btrfs, f2fs) and a
//! text that grows past its blocks take the replacement. A lease being broken is signalled to
//! the holder with SIGIO, whose default action ends the process: the daemon blocks SIGIO in
//! every thread at start ([`block_lease_signals`]); the lease works without the signal.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use nix::libc;
use nix::sys::signal::{SigSet, Signal};
use nix::sys::statfs::{EXT4_SUPER_MAGIC, TMPFS_MAGIC, XFS_SUPER_MAGIC, fstatfs};

/// A directory whose file system overwrites in place ([`overwrites_in_place`]), checked once:
/// its files are rewritten in place only while they are on that same file system (a file
/// there may be a symbolic link to one on btrfs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InPlaceDir {
    /// The file system's device number, as a file on it reports it.
    dev: u64,
}

/// Whether files in `dir` may be rewritten in place: its file system overwrites blocks in
/// place (see the module documentation). Anything unknown answers no. One `statfs` per
/// directory, not per write: each write then only compares its file's device with this one.
pub fn overwrites_in_place(dir: &Path) -> Option<InPlaceDir> {
    // The type and the device number of one and the same open directory.
    let dir = File::open(dir).ok()?;
    let kind = fstatfs(&dir).ok()?.filesystem_type();
    let in_place = [EXT4_SUPER_MAGIC, XFS_SUPER_MAGIC, TMPFS_MAGIC].contains(&kind);
    let dev = dir.metadata().ok()?.dev();
    in_place.then_some(InPlaceDir { dev })
}

/// Whether SIGIO is blocked ([`block_lease_signals`]): until it is, no lease is taken.
static SIGNAL_BLOCKED: AtomicBool = AtomicBool::new(false);

/// Block SIGIO, the signal a lease being broken sends its holder, in this thread and every
/// thread it starts afterwards: called first thing in the daemon's main thread, before any
/// other thread starts (a thread started before would still take the signal). Nothing else in
/// the daemon uses SIGIO. Without it no file is rewritten in place.
pub fn block_lease_signals() -> nix::Result<()> {
    let mut set = SigSet::empty();
    set.add(Signal::SIGIO);
    set.thread_block()?;
    SIGNAL_BLOCKED.store(true, Ordering::Relaxed);
    Ok(())
}

/// Overwrite the regular file at `path` (in `dir`) with `text` if nobody else has it open.
/// `Ok(true)`: written; `Ok(false)`: nothing written (no such file, not a regular file,
/// someone has it open, no lease here, another file system, the text outgrows the file's
/// blocks) and the caller replaces the file instead. An error: the write failed under the
/// lease and the file may hold part of the new text, so the caller must replace it.
///
/// Per write: a `statx` of the path, the open, the lease taken, a `statx` of the open file,
/// the write (and a truncation when the text got shorter), the lease released, the close.
/// Nothing about the file is kept from one write to the next: the path is looked up and the
/// file checked afresh each time, so a file replaced, removed or turned into something else
/// meanwhile is never written through a stale handle. The descriptor is closed after every
/// write, which is also what tells a watcher the file was written (`IN_CLOSE_WRITE`); kept
/// open, it would save the open and the close but no watcher would hear of the change.
pub fn rewrite_unshared(dir: InPlaceDir, path: &Path, text: &[u8]) -> io::Result<bool> {
    if !SIGNAL_BLOCKED.load(Ordering::Relaxed) {
        return Ok(false);
    }
    // Nothing but a regular file (or a link to one) is opened: a device opened could act on
    // it (see `state_file`). This looks before the open; the lease below proves it after.
    if !matches!(super::state_file::check(path), Ok(true)) {
        return Ok(false);
    }
    // Non-blocking, so a FIFO swapped in since the look, or a file someone else holds a lease
    // on, cannot hang the writer. Left so: a regular file ignores O_NONBLOCK for writes.
    let Ok(file) = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
    else {
        return Ok(false);
    };
    // Granted only on a regular file (EINVAL otherwise) that no other open file refers to.
    if !set_lease(&file, libc::F_WRLCK) {
        return Ok(false);
    }
    let written = write_leased(dir, &file, text);
    set_lease(&file, libc::F_UNLCK);
    written
}

/// The write itself, under the lease: nobody can open the file meanwhile, so what the file
/// is now (its blocks, its length) stays so until the lease is released.
fn write_leased(dir: InPlaceDir, file: &File, text: &[u8]) -> io::Result<bool> {
    let Ok(meta) = file.metadata() else {
        return Ok(false);
    };
    // On the checked file system, and the blocks the file has (allocated or reserved) hold
    // the text: a write within them needs no new space, so it cannot stop half-way.
    if meta.dev() != dir.dev || meta.blocks().saturating_mul(512) < text.len() as u64 {
        return Ok(false);
    }
    file.write_all_at(text, 0)?;
    // A text at least as long as the old one covers all of it: nothing to cut.
    if (text.len() as u64) < meta.len() {
        file.set_len(text.len() as u64)?;
    }
    Ok(true)
}

/// `fcntl(F_SETLEASE, kind)` on `file`; whether it was granted.
fn set_lease(file: &File, kind: libc::c_int) -> bool {
    // SAFETY: F_SETLEASE takes an integer argument and reads or writes no memory of ours;
    // the descriptor is `file`'s, open for the whole call. (Neither nix nor rustix wraps it.)
    unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLEASE, kind) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// The directory's own device, whatever its file system: these tests are about the lease.
    fn on(dir: &Path) -> InPlaceDir {
        InPlaceDir {
            dev: fs::metadata(dir).unwrap().dev(),
        }
    }

    #[test]
    fn a_file_nobody_holds_is_rewritten_in_place_and_cut_to_the_new_text() {
        block_lease_signals().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let here = on(dir.path());
        let path = dir.path().join("b.pgn");
        fs::write(&path, "1. e4 e5 2. Nf3 *\n").unwrap();
        let inode = fs::metadata(&path).unwrap().ino();
        assert!(rewrite_unshared(here, &path, b"1. d4 *\n").unwrap());
        assert_eq!(fs::read_to_string(&path).unwrap(), "1. d4 *\n");
        assert_eq!(
            fs::metadata(&path).unwrap().ino(),
            inode,
            "the same file, rewritten"
        );
        assert!(rewrite_unshared(here, &path, b"1. d4 d5 *\n").unwrap());
        assert_eq!(fs::read_to_string(&path).unwrap(), "1. d4 d5 *\n");
        assert!(rewrite_unshared(here, &path, b"1. d4 d5 2. c4 *\n").unwrap());
        assert_eq!(fs::read_to_string(&path).unwrap(), "1. d4 d5 2. c4 *\n");
        assert!(rewrite_unshared(here, &path, b"*\n").unwrap());
        assert_eq!(fs::read_to_string(&path).unwrap(), "*\n");
    }

    #[test]
    fn only_file_systems_that_overwrite_in_place_are_rewritten_in_place() {
        assert_eq!(overwrites_in_place(Path::new("/proc")), None);
        assert_eq!(overwrites_in_place(Path::new("/no/such/directory")), None);
        // tmpfs overwrites in place; the device found is the directory's own.
        assert_eq!(
            overwrites_in_place(Path::new("/dev/shm")),
            Some(on(Path::new("/dev/shm")))
        );
    }

    #[test]
    fn a_file_on_another_file_system_than_the_checked_one_is_left_alone() {
        block_lease_signals().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.pgn");
        fs::write(&path, "1. e4 *\n").unwrap();
        // As if the file were a link to one on a file system that was never checked.
        let elsewhere = InPlaceDir {
            dev: on(dir.path()).dev ^ 1,
        };
        assert!(!rewrite_unshared(elsewhere, &path, b"1. d4 *\n").unwrap());
        assert_eq!(fs::read_to_string(&path).unwrap(), "1. e4 *\n");
        // The lease was released: the file is leased again at once.
        assert!(rewrite_unshared(on(dir.path()), &path, b"1. d4 *\n").unwrap());
    }

    #[test]
    fn a_file_someone_holds_open_is_left_alone() {
        block_lease_signals().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.pgn");
        fs::write(&path, "1. e4 *\n").unwrap();
        let reader = File::open(&path).unwrap();
        assert!(!rewrite_unshared(on(dir.path()), &path, b"1. d4 *\n").unwrap());
        drop(reader);
        assert_eq!(fs::read_to_string(&path).unwrap(), "1. e4 *\n");
    }

    #[test]
    fn a_file_replaced_or_removed_between_writes_is_looked_up_afresh() {
        block_lease_signals().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let here = on(dir.path());
        let path = dir.path().join("b.pgn");
        fs::write(&path, "1. e4 *\n").unwrap();
        assert!(rewrite_unshared(here, &path, b"1. e4 e5 *\n").unwrap());
        // Someone else puts their own file in its place, keeping the old one open.
        let old = File::open(&path).unwrap();
        let theirs = dir.path().join("theirs");
        fs::write(&theirs, "1. c4 *\n").unwrap();
        fs::rename(&theirs, &path).unwrap();
        assert!(rewrite_unshared(here, &path, b"1. e4 e5 2. Nf3 *\n").unwrap());
        assert_eq!(fs::read_to_string(&path).unwrap(), "1. e4 e5 2. Nf3 *\n");
        let mut was = String::new();
        io::Read::read_to_string(&mut &old, &mut was).unwrap();
        assert_eq!(was, "1. e4 e5 *\n", "the replaced file was not written");
        // Removed: nothing to rewrite, and nothing is made here.
        fs::remove_file(&path).unwrap();
        assert!(!rewrite_unshared(here, &path, b"1. e4 e5 2. Nf3 Nc6 *\n").unwrap());
        assert!(!path.exists());
        // The directory removed: the same.
        let gone = dir.path().join("gone");
        fs::create_dir(&gone).unwrap();
        fs::write(gone.join("b.pgn"), "*\n").unwrap();
        fs::remove_dir_all(&gone).unwrap();
        assert!(!rewrite_unshared(here, &gone.join("b.pgn"), b"1. d4 *\n").unwrap());
        assert!(!gone.exists());
    }

    #[test]
    fn no_file_a_directory_a_fifo_or_a_text_past_the_blocks_is_left_to_the_replacement() {
        block_lease_signals().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let here = on(dir.path());
        assert!(!rewrite_unshared(here, &dir.path().join("none.pgn"), b"*\n").unwrap());
        assert!(!rewrite_unshared(here, dir.path(), b"*\n").unwrap());
        let fifo = dir.path().join("fifo.pgn");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(!rewrite_unshared(here, &fifo, b"*\n").unwrap());
        let path = dir.path().join("b.pgn");
        fs::write(&path, "*\n").unwrap();
        let blocks = fs::metadata(&path).unwrap().blocks() * 512;
        let long = vec![b'x'; blocks as usize + 1];
        assert!(!rewrite_unshared(here, &path, &long).unwrap());
        assert_eq!(fs::read_to_string(&path).unwrap(), "*\n");
    }
}
