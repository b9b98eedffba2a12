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
//! XFS, tmpfs), and only when the file's blocks already hold the new text, so the write cannot
//! run out of space half-way; a copy-on-write or log-structured file system (btrfs, f2fs) and a
//! text that grows past its blocks take the replacement. A lease being broken is signalled to
//! the holder with SIGIO, whose default action ends the process: the daemon blocks SIGIO in
//! every thread at start ([`block_lease_signals`]); the lease works without the signal.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use nix::libc;
use nix::sys::signal::{SigSet, Signal};
use nix::sys::statfs::{EXT4_SUPER_MAGIC, TMPFS_MAGIC, XFS_SUPER_MAGIC, statfs};

/// Whether files in `dir` may be rewritten in place: its file system overwrites blocks in
/// place (see the module documentation). Anything unknown answers no.
pub fn overwrites_in_place(dir: &Path) -> bool {
    statfs(dir).is_ok_and(|s| {
        [EXT4_SUPER_MAGIC, XFS_SUPER_MAGIC, TMPFS_MAGIC].contains(&s.filesystem_type())
    })
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

/// Overwrite the regular file at `path` with `text` if nobody else has it open. `Ok(true)`:
/// written; `Ok(false)`: nothing written (no such file, someone has it open, no lease here,
/// the text outgrows the file's blocks) and the caller replaces the file instead. An error:
/// the write failed under the lease and the file may hold part of the new text, so the
/// caller must replace it.
pub fn rewrite_unshared(path: &Path, text: &[u8]) -> io::Result<bool> {
    if !SIGNAL_BLOCKED.load(Ordering::Relaxed) {
        return Ok(false);
    }
    let Ok(file) = super::state_file::open(path, OpenOptions::new().write(true)) else {
        return Ok(false);
    };
    let Ok(meta) = file.metadata() else {
        return Ok(false);
    };
    // The blocks the file has (allocated or reserved): a write within them needs no new space.
    if meta.blocks().saturating_mul(512) < text.len() as u64 {
        return Ok(false);
    }
    if !set_lease(&file, libc::F_WRLCK) {
        return Ok(false);
    }
    let written = file
        .write_all_at(text, 0)
        .and_then(|()| file.set_len(text.len() as u64));
    set_lease(&file, libc::F_UNLCK);
    written.map(|()| true)
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

    #[test]
    fn a_file_nobody_holds_is_rewritten_in_place_and_cut_to_the_new_text() {
        block_lease_signals().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.pgn");
        fs::write(&path, "1. e4 e5 2. Nf3 *\n").unwrap();
        let inode = fs::metadata(&path).unwrap().ino();
        assert!(rewrite_unshared(&path, b"1. d4 *\n").unwrap());
        assert_eq!(fs::read_to_string(&path).unwrap(), "1. d4 *\n");
        assert_eq!(
            fs::metadata(&path).unwrap().ino(),
            inode,
            "the same file, rewritten"
        );
        assert!(rewrite_unshared(&path, b"1. d4 d5 *\n").unwrap());
        assert_eq!(fs::read_to_string(&path).unwrap(), "1. d4 d5 *\n");
    }

    #[test]
    fn only_file_systems_that_overwrite_in_place_are_rewritten_in_place() {
        assert!(!overwrites_in_place(Path::new("/proc")));
        assert!(!overwrites_in_place(Path::new("/no/such/directory")));
    }

    #[test]
    fn a_file_someone_holds_open_is_left_alone() {
        block_lease_signals().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.pgn");
        fs::write(&path, "1. e4 *\n").unwrap();
        let reader = File::open(&path).unwrap();
        assert!(!rewrite_unshared(&path, b"1. d4 *\n").unwrap());
        drop(reader);
        assert_eq!(fs::read_to_string(&path).unwrap(), "1. e4 *\n");
    }

    #[test]
    fn no_file_a_directory_or_a_text_past_the_blocks_is_left_to_the_replacement() {
        block_lease_signals().unwrap();
        let dir = tempfile::tempdir().unwrap();
        assert!(!rewrite_unshared(&dir.path().join("none.pgn"), b"*\n").unwrap());
        assert!(!rewrite_unshared(dir.path(), b"*\n").unwrap());
        let path = dir.path().join("b.pgn");
        fs::write(&path, "*\n").unwrap();
        let blocks = fs::metadata(&path).unwrap().blocks() * 512;
        let long = vec![b'x'; blocks as usize + 1];
        assert!(!rewrite_unshared(&path, &long).unwrap());
        assert_eq!(fs::read_to_string(&path).unwrap(), "*\n");
    }
}
