//! A board's open serial device on the runtime: one `read` for each wake-up.
//!
//! tokio-serial's stream keeps the read readiness after a read that returned data, so the
//! board task's next read finds the device drained only with a second `read` failing with
//! `EAGAIN`: one wasted system call for every frame of every board. A read that returns fewer
//! bytes than it asked for has already drained the device's input queue (the terminal line
//! discipline hands over all it holds), so this port clears the readiness then, as tokio does
//! for its own sockets. Bytes that arrive after that read are a new edge of epoll and wake
//! the task again; tokio only clears a readiness no newer than the one the read saw, so an
//! edge that came in between is never lost.

use std::io::{self, Read, Write};

use tokio::io::unix::AsyncFd;

/// An open serial device, non-blocking, registered with the runtime.
pub struct SerialPort {
    fd: AsyncFd<mio_serial::SerialStream>,
}

impl SerialPort {
    /// Open the device as `builder` says (exclusively, as tokio-serial does).
    pub fn open(builder: &mio_serial::SerialPortBuilder) -> io::Result<SerialPort> {
        let stream = mio_serial::SerialStream::open(builder).map_err(io::Error::from)?;
        Ok(SerialPort {
            fd: register(stream)?,
        })
    }

    /// Wait for bytes and read what is there into `buf` (`Ok(0)`: the device's end).
    /// Cancel-safe: nothing is read unless the call returns it.
    pub async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let mut ready = self.fd.readable().await?;
            match ready.try_io(|fd| fd.get_ref().read(buf)) {
                Ok(Ok(n)) => {
                    if n > 0 && n < buf.len() {
                        ready.clear_ready();
                    }
                    return Ok(n);
                }
                Ok(Err(e)) => return Err(e),
                // The readiness was stale: cleared by `try_io`, wait for the next.
                Err(_would_block) => continue,
            }
        }
    }

    /// Write all of `bytes`, waiting while the device's output queue is full.
    pub async fn write_all(&self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            let mut ready = self.fd.writable().await?;
            match ready.try_io(|fd| fd.get_ref().write(bytes)) {
                Ok(Ok(0)) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(Ok(n)) => bytes = &bytes[n..],
                Ok(Err(e)) => return Err(e),
                Err(_would_block) => continue,
            }
        }
        Ok(())
    }

    /// Raise or drop DTR (some USB adapters want it raised, the ChessLink drivers clear it).
    pub fn set_dtr(&mut self, level: bool) -> io::Result<()> {
        mio_serial::SerialPort::write_data_terminal_ready(self.fd.get_mut(), level)
            .map_err(io::Error::from)
    }
}

/// Register the device with the runtime.
fn register(stream: mio_serial::SerialStream) -> io::Result<AsyncFd<mio_serial::SerialStream>> {
    // SAFETY: the stream owns its descriptor and closes it only when it is dropped, which
    // happens with the `AsyncFd` that owns it; its `as_raw_fd` is always that descriptor.
    unsafe { AsyncFd::register(stream) }.map_err(|e| e.into_parts().1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    /// A pty pair as two ports: what one side writes the other reads.
    fn pair() -> (SerialPort, SerialPort) {
        let (a, b) = mio_serial::SerialStream::pair().expect("a pseudo-terminal pair");
        (
            SerialPort {
                fd: register(a).unwrap(),
            },
            SerialPort {
                fd: register(b).unwrap(),
            },
        )
    }

    /// Whether the device has unread bytes, asked of the kernel (FIONREAD), not of the port.
    fn unread(port: &SerialPort) -> usize {
        let mut n: nix::libc::c_int = 0;
        // SAFETY: FIONREAD writes one int through the pointer, which is valid.
        let r =
            unsafe { nix::libc::ioctl(port.fd.get_ref().as_raw_fd(), nix::libc::FIONREAD, &mut n) };
        assert_eq!(r, 0, "FIONREAD: {}", io::Error::last_os_error());
        n as usize
    }

    /// Read `len` bytes, `chunk` at most a read; `lost` says what a read that never comes means
    /// (generous: waiting is the failure, never how long it took).
    async fn read_len(port: &SerialPort, len: usize, chunk: usize, lost: &str) -> Vec<u8> {
        let mut buf = vec![0u8; chunk];
        let mut got = Vec::new();
        while got.len() < len {
            let n = tokio::time::timeout(std::time::Duration::from_secs(20), port.read(&mut buf))
                .await
                .expect(lost)
                .unwrap();
            got.extend_from_slice(&buf[..n]);
        }
        got
    }

    #[tokio::test]
    async fn every_frame_after_a_short_read_still_wakes_the_reader() {
        let (board, daemon) = pair();
        // Frames one at a time: each read is short (it clears the readiness), and each next
        // frame must still be read, however soon after the read it is written.
        for i in 0..200u8 {
            let frame = [0x8d, 0, 10, i, i, i, i, i, i, i];
            board.write_all(&frame).await.unwrap();
            let got = read_len(&daemon, frame.len(), 64, "a frame was never read").await;
            assert_eq!(got, frame);
        }
    }

    /// Bytes written while the reader is between its read and the clearing of the readiness
    /// must still wake it: bursts at random spacing (none to a fraction of a millisecond) from
    /// another thread, on a runtime with two workers as the daemon's, and after every burst
    /// the reader must get all of it with nothing more written. A readiness lost at the end of
    /// a burst leaves bytes unread and the test waits in vain.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn bytes_written_during_a_read_are_never_left_unread() {
        use rand::{Rng, SeedableRng};
        let (board, daemon) = pair();
        let board = std::sync::Arc::new(board);
        let (next_burst, mut bursts) = tokio::sync::mpsc::unbounded_channel::<usize>();
        let (read_all, done) = std::sync::mpsc::channel::<()>();
        let writer = std::thread::spawn(move || {
            let mut rng = rand::rngs::SmallRng::seed_from_u64(0x5e71a1);
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            for _ in 0..300 {
                let frames = rng.random_range(1..=6);
                for _ in 0..frames {
                    let frame = [0x8e, 0, 5, rng.random(), rng.random()];
                    rt.block_on(board.write_all(&frame)).unwrap();
                    std::thread::sleep(std::time::Duration::from_micros(rng.random_range(0..400)));
                }
                next_burst.send(frames * 5).unwrap();
                if done.recv().is_err() {
                    return;
                }
            }
        });
        while let Some(bytes) = bursts.recv().await {
            let got = read_len(&daemon, bytes, 4096, "bytes of a burst were never read").await;
            assert_eq!(got.len(), bytes, "no byte comes twice or from nowhere");
            read_all.send(()).unwrap();
        }
        writer.join().unwrap();
    }

    #[tokio::test]
    async fn a_full_read_keeps_the_readiness_for_what_is_left() {
        let (board, daemon) = pair();
        let sent: Vec<u8> = (0..100u8).collect();
        board.write_all(&sent).await.unwrap();
        // Wait until every byte is on the daemon's side before reading.
        while unread(&daemon) < sent.len() {
            tokio::task::yield_now().await;
        }
        let got = read_len(
            &daemon,
            sent.len(),
            30,
            "bytes behind a full read were never read",
        );
        assert_eq!(got.await, sent);
    }

    #[tokio::test]
    async fn the_end_of_the_device_reads_as_zero_or_an_error() {
        let (board, daemon) = pair();
        board.write_all(b"\x8e\x00\x05\x0c\x01").await.unwrap();
        let mut buf = [0u8; 64];
        let n = daemon.read(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"\x8e\x00\x05\x0c\x01");
        drop(board);
        // A pty whose other side is gone reads as EOF or EIO, as an unplugged adapter does.
        let r = tokio::time::timeout(std::time::Duration::from_secs(10), daemon.read(&mut buf))
            .await
            .expect("the closed device never woke the reader");
        assert!(matches!(r, Ok(0) | Err(_)), "{r:?}");
    }
}
