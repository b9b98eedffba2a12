//! A fake DGT board on a pseudo-terminal, reachable through a stable symlink (as udev gives
//! real boards), that answers the daemon's start-up commands and can be unplugged and
//! plugged back in.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc as std_mpsc;
use std::time::Duration;

use tokio::sync::oneshot;

/// The standard start position as a board dump payload, normal orientation (a8 first).
pub fn start_position() -> [u8; 64] {
    let mut f = [0u8; 64];
    f[..8].copy_from_slice(&[8, 9, 10, 12, 11, 10, 9, 8]);
    f[8..16].fill(7);
    f[48..56].fill(1);
    f[56..].copy_from_slice(&[2, 3, 4, 6, 5, 4, 3, 2]);
    f
}

/// A full board dump message.
pub fn dump_message(fields: &[u8; 64]) -> Vec<u8> {
    let mut m = vec![0x86, 0x00, 0x43];
    m.extend_from_slice(fields);
    m
}

/// A field update message.
pub fn field_update(field: u8, code: u8) -> Vec<u8> {
    vec![0x8E, 0x00, 0x05, field, code]
}

/// The board's identity as it reports it.
#[derive(Clone)]
pub struct Identity {
    pub version: (u8, u8),
    pub serial: String,
    pub fields: [u8; 64],
}

impl Default for Identity {
    fn default() -> Self {
        Identity {
            version: (3, 10),
            serial: "13116".into(),
            fields: start_position(),
        }
    }
}

struct Plugged {
    /// Bytes for the board thread to write (from [`FakeBoard::send`]).
    outgoing: std_mpsc::Sender<(Vec<u8>, oneshot::Sender<()>)>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// The board's own handle on the slave keeps the pty alive between daemon opens.
    _slave: OwnedFd,
}

impl Drop for Plugged {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A fake board. The daemon opens [`FakeBoard::path`].
pub struct FakeBoard {
    pub path: PathBuf,
    pub identity: Arc<Mutex<Identity>>,
    /// Every byte the daemon wrote to the board, across plugs.
    pub received: Arc<Mutex<Vec<u8>>>,
    /// When false the board reads commands but answers none.
    pub answering: Arc<Mutex<bool>>,
    /// Woken whenever `received` grows (see [`FakeBoard::wait_received`]).
    written: Arc<tokio::sync::Notify>,
    plugged: Option<Plugged>,
}

impl FakeBoard {
    /// A board plugged in at `dir/name`.
    pub fn new(dir: &Path, name: &str) -> FakeBoard {
        let mut b = FakeBoard {
            path: dir.join(name),
            identity: Arc::new(Mutex::new(Identity::default())),
            received: Arc::new(Mutex::new(Vec::new())),
            answering: Arc::new(Mutex::new(true)),
            written: Arc::new(tokio::sync::Notify::new()),
            plugged: None,
        };
        b.plug();
        b
    }

    /// Create a fresh pty and point the symlink at it.
    ///
    /// The board runs on its own thread with plain non-blocking reads of the pty master, so
    /// it does not depend on the async runtime of the test (or its wake-ups).
    pub fn plug(&mut self) {
        assert!(self.plugged.is_none(), "already plugged");
        let pty = nix::pty::openpty(None, None).expect("openpty");
        // Raw mode before anyone opens the slave: no echo, no line editing, no XON/XOFF.
        let mut tio = nix::sys::termios::tcgetattr(&pty.slave).unwrap();
        nix::sys::termios::cfmakeraw(&mut tio);
        nix::sys::termios::tcsetattr(&pty.slave, nix::sys::termios::SetArg::TCSANOW, &tio).unwrap();
        let slave_name = nix::unistd::ttyname(&pty.slave).expect("pty name");
        let _ = std::fs::remove_file(&self.path);
        std::os::unix::fs::symlink(&slave_name, &self.path).unwrap();
        let flags = nix::fcntl::fcntl(&pty.master, nix::fcntl::FcntlArg::F_GETFL).unwrap();
        let flags = nix::fcntl::OFlag::from_bits_truncate(flags) | nix::fcntl::OFlag::O_NONBLOCK;
        nix::fcntl::fcntl(&pty.master, nix::fcntl::FcntlArg::F_SETFL(flags)).unwrap();
        let mut master = std::fs::File::from(pty.master);

        let (outgoing, to_write) = std_mpsc::channel::<(Vec<u8>, oneshot::Sender<()>)>();
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let identity = self.identity.clone();
            let received = self.received.clone();
            let answering = self.answering.clone();
            let written = self.written.clone();
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 256];
                // Bytes of a clock frame still to skip (0x2B, size, then `size` bytes).
                let mut skip = 0usize;
                let mut want_size = false;
                while !stop.load(Ordering::Relaxed) {
                    while let Ok((bytes, done)) = to_write.try_recv() {
                        if write_all(&mut master, &bytes, &stop).is_err() {
                            return;
                        }
                        let _ = done.send(());
                    }
                    let n = match master.read(&mut buf) {
                        Ok(0) => return,
                        Ok(n) => n,
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                            std::thread::sleep(Duration::from_millis(1));
                            continue;
                        }
                        // EIO: nobody has the slave open right now.
                        Err(_) => {
                            std::thread::sleep(Duration::from_millis(5));
                            continue;
                        }
                    };
                    received.lock().unwrap().extend_from_slice(&buf[..n]);
                    written.notify_waiters();
                    for &b in &buf[..n] {
                        if want_size {
                            want_size = false;
                            skip = usize::from(b);
                            continue;
                        }
                        if skip > 0 {
                            skip -= 1;
                            continue;
                        }
                        if b == 0x2B {
                            want_size = true;
                            continue;
                        }
                        if !*answering.lock().unwrap() {
                            continue;
                        }
                        let id = identity.lock().unwrap().clone();
                        let reply = match b {
                            0x4D => vec![0x93, 0x00, 0x05, id.version.0, id.version.1],
                            0x45 => {
                                let mut m = vec![0x91, 0x00, 0x08];
                                m.extend_from_slice(id.serial.as_bytes());
                                m
                            }
                            0x42 => dump_message(&id.fields),
                            _ => continue,
                        };
                        if write_all(&mut master, &reply, &stop).is_err() {
                            return;
                        }
                    }
                }
            })
        };
        self.plugged = Some(Plugged {
            outgoing,
            stop,
            thread: Some(thread),
            _slave: pty.slave,
        });
    }

    /// Pull the cable: the pty goes away and so does the symlink.
    pub fn unplug(&mut self) {
        drop(self.plugged.take());
        let _ = std::fs::remove_file(&self.path);
    }

    /// Send raw bytes to the daemon as the board; returns once they are written.
    pub async fn send(&self, bytes: &[u8]) {
        let p = self.plugged.as_ref().expect("board is unplugged");
        let (done, written) = oneshot::channel();
        p.outgoing
            .send((bytes.to_vec(), done))
            .expect("fake board thread alive");
        written.await.expect("write to pty");
    }

    /// Wait (at most [`super::WAIT`]) until what the daemon wrote so far satisfies `done`:
    /// woken by each write, no polling.
    pub async fn wait_received(&self, what: &str, done: impl Fn(&[u8]) -> bool) {
        super::within(super::WAIT, what, async {
            loop {
                let notified = self.written.notified();
                tokio::pin!(notified);
                // Registered before looking, so a write in between is not missed.
                notified.as_mut().enable();
                if done(&self.received.lock().unwrap()) {
                    return;
                }
                notified.await;
            }
        })
        .await
    }

    pub fn path_str(&self) -> String {
        self.path.display().to_string()
    }
}

impl Drop for FakeBoard {
    fn drop(&mut self) {
        self.unplug();
    }
}

/// Write everything to a non-blocking fd, waiting out a full buffer.
fn write_all(f: &mut std::fs::File, mut bytes: &[u8], stop: &AtomicBool) -> std::io::Result<()> {
    while !bytes.is_empty() {
        match f.write(bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if stop.load(Ordering::Relaxed) {
                    return Err(e);
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
