//! A fake DGT board on a pseudo-terminal, reachable through a stable symlink (as udev gives
//! real boards), that answers the daemon's start-up commands and can be unplugged and
//! plugged back in.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt, WriteHalf};
use tokio::task::JoinHandle;
use tokio_serial::SerialStream;

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
    writer: Arc<tokio::sync::Mutex<WriteHalf<SerialStream>>>,
    task: JoinHandle<()>,
    _slave: SerialStream,
}

/// A fake board. The daemon opens [`FakeBoard::path`].
pub struct FakeBoard {
    pub path: PathBuf,
    pub identity: Arc<Mutex<Identity>>,
    /// Every byte the daemon wrote to the board, across plugs.
    pub received: Arc<Mutex<Vec<u8>>>,
    /// When false the board reads commands but answers none.
    pub answering: Arc<Mutex<bool>>,
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
            plugged: None,
        };
        b.plug();
        b
    }

    /// Create a fresh pty and point the symlink at it.
    pub fn plug(&mut self) {
        assert!(self.plugged.is_none(), "already plugged");
        let (master, slave) = SerialStream::pair().expect("pty pair");
        let slave_name = tokio_serial::SerialPort::name(&slave).expect("pty name");
        let _ = std::fs::remove_file(&self.path);
        std::os::unix::fs::symlink(&slave_name, &self.path).unwrap();
        let (mut reader, writer) = tokio::io::split(master);
        let writer = Arc::new(tokio::sync::Mutex::new(writer));
        let task = {
            let writer = writer.clone();
            let identity = self.identity.clone();
            let received = self.received.clone();
            let answering = self.answering.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 256];
                // Bytes of a clock frame still to skip (0x2B, size, then `size` bytes).
                let mut skip = 0usize;
                let mut want_size = false;
                loop {
                    let n = match reader.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    received.lock().unwrap().extend_from_slice(&buf[..n]);
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
                        if writer.lock().await.write_all(&reply).await.is_err() {
                            return;
                        }
                    }
                }
            })
        };
        self.plugged = Some(Plugged {
            writer,
            task,
            _slave: slave,
        });
    }

    /// Pull the cable: the pty goes away and so does the symlink.
    pub fn unplug(&mut self) {
        if let Some(p) = self.plugged.take() {
            p.task.abort();
            drop(p);
        }
        let _ = std::fs::remove_file(&self.path);
    }

    /// Send raw bytes to the daemon as the board.
    pub async fn send(&self, bytes: &[u8]) {
        let p = self.plugged.as_ref().expect("board is unplugged");
        let mut w = p.writer.lock().await;
        w.write_all(bytes).await.expect("write to pty");
        w.flush().await.unwrap();
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
