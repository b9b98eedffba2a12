//! The serial device of one board: opening it with the line its protocol speaks on (DGT:
//! 9600 8N1; ChessLink: 38400 with the parity in bit 7, see [`eboard_core::link::Protocol::line`]),
//! and which protocol a port's USB identity suggests ([`usb_protocol`]). Everything the link says and decides once
//! the port is open lives in the pure [`eboard_core::link`] machine.

use std::io;
use std::path::Path;
use std::time::Duration;

use mio_serial::{DataBits, FlowControl, Parity, StopBits};

use super::serial_port::SerialPort;

use eboard_core::link::{LineSettings, Parity as LineParity, Protocol};
use eboard_core::vocab::ProtocolSetting;

/// Open the serial device with `line`'s settings, without flow control.
pub fn open(port: &Path, line: LineSettings) -> io::Result<SerialPort> {
    let path = port.to_string_lossy();
    let builder = mio_serial::new(path.as_ref(), line.baud)
        .data_bits(data_bits(line.data_bits)?)
        .parity(match line.parity {
            LineParity::None => Parity::None,
            LineParity::Odd => Parity::Odd,
            LineParity::Even => Parity::Even,
        })
        .stop_bits(if line.stop_bits == 2 {
            StopBits::Two
        } else {
            StopBits::One
        })
        .flow_control(FlowControl::None)
        .timeout(Duration::from_millis(500));
    let mut stream = SerialPort::open(&builder)?;
    // Some USB adapters want DTR raised (dgtnix does); the ChessLink drivers in use clear
    // it. Ptys and CDC-ACM devices may refuse either, which is harmless.
    let _ = stream.set_dtr(line.dtr);
    Ok(stream)
}

fn data_bits(bits: u8) -> io::Result<DataBits> {
    match bits {
        5 => Ok(DataBits::Five),
        6 => Ok(DataBits::Six),
        7 => Ok(DataBits::Seven),
        8 => Ok(DataBits::Eight),
        other => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("a serial line has 5 to 8 data bits, not {other}"),
        )),
    }
}

/// FTDI's USB vendor id: the ChessLink module's USB side is an FTDI adapter.
pub const FTDI_VENDOR: &str = "0403";

/// The protocol a board speaks as configured; `auto` from the port's USB identity: a port
/// on an FTDI adapter is taken for a Millennium ChessLink board (DGT's own boards are CDC-ACM
/// devices of vendor 045b), anything else for DGT. FTDI adapters carry countless other
/// devices too: the ChessLink handshake probes the board with its version question, and a
/// port that answers nothing is said so by the link (and by `eboardctl doctor`).
pub fn protocol_for(setting: ProtocolSetting, port: &Path) -> Protocol {
    match setting {
        ProtocolSetting::Dgt => Protocol::Dgt,
        ProtocolSetting::ChessLink => Protocol::ChessLink,
        ProtocolSetting::Auto => usb_protocol(port, Path::new("/sys")),
    }
}

/// The protocol `port`'s USB identity suggests (see [`protocol_for`]); `sys` is where sysfs
/// is mounted.
pub fn usb_protocol(port: &Path, sys: &Path) -> Protocol {
    match usb_vendor(port, sys) {
        Some(vendor) if vendor.eq_ignore_ascii_case(FTDI_VENDOR) => Protocol::ChessLink,
        _ => Protocol::Dgt,
    }
}

/// The USB vendor id of the device behind the tty `port` (through any symbolic link such as
/// `/dev/serial/by-id/…`): the nearest `idVendor` above the tty's device in sysfs.
pub fn usb_vendor(port: &Path, sys: &Path) -> Option<String> {
    let real = std::fs::canonicalize(port).ok()?;
    let name = real.file_name()?;
    let mut dir = std::fs::canonicalize(sys.join("class/tty").join(name).join("device")).ok()?;
    loop {
        if let Ok(id) = std::fs::read_to_string(dir.join("idVendor")) {
            return Some(id.trim().to_string());
        }
        if !dir.pop() || dir == sys {
            return None;
        }
    }
}

/// An `auto` port on an FTDI adapter may be a ChessLink board or an older DGT USB board
/// (an FT232 with FTDI's default strings, see the README): it is opened as ChessLink first,
/// and a connection that never answered (the link gives up after its silence) is followed
/// by one in the other protocol, and so on until one answers; from then on the one that
/// answered is kept.
#[derive(Debug, Default)]
pub struct AutoProbe {
    /// A port was opened since the board last answered.
    tried: bool,
    /// The board answered on the last connection.
    answered: bool,
}

impl AutoProbe {
    /// The board answered on the open port.
    pub fn answered(&mut self) {
        self.answered = true;
    }

    /// The protocol to open the port with: `suggested` by the configuration and the USB
    /// identity, `last` the one of the last connection.
    pub fn next(
        &mut self,
        setting: ProtocolSetting,
        suggested: Protocol,
        last: Protocol,
    ) -> Protocol {
        let unanswered = self.tried && !self.answered;
        self.tried = true;
        self.answered = false;
        if setting != ProtocolSetting::Auto || suggested != Protocol::ChessLink {
            return suggested;
        }
        match (unanswered, last) {
            (true, Protocol::ChessLink) => Protocol::Dgt,
            (true, Protocol::Dgt) => Protocol::ChessLink,
            (false, last) => last,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sysfs tree with a tty on a USB device of `vendor`, and a device node for it.
    fn tree(vendor: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let root = tempfile::tempdir().unwrap();
        let sys = root.path().join("sys");
        let usb = sys.join("devices/pci0000:00/usb1/1-2");
        let iface = usb.join("1-2:1.0/ttyUSB7");
        std::fs::create_dir_all(&iface).unwrap();
        std::fs::write(usb.join("idVendor"), format!("{vendor}\n")).unwrap();
        std::fs::create_dir_all(sys.join("class/tty/ttyUSB7")).unwrap();
        std::os::unix::fs::symlink(&iface, sys.join("class/tty/ttyUSB7/device")).unwrap();
        let dev = root.path().join("dev");
        std::fs::create_dir_all(dev.join("serial/by-id")).unwrap();
        std::fs::write(dev.join("ttyUSB7"), "").unwrap();
        let link = dev.join("serial/by-id/usb-FTDI_FT232R-if00-port0");
        std::os::unix::fs::symlink(dev.join("ttyUSB7"), &link).unwrap();
        (root, link)
    }

    #[test]
    fn an_ftdi_port_is_taken_for_chesslink_and_anything_else_for_dgt() {
        let (root, port) = tree("0403");
        let sys = root.path().join("sys");
        assert_eq!(usb_vendor(&port, &sys).as_deref(), Some("0403"));
        assert_eq!(usb_protocol(&port, &sys), Protocol::ChessLink);
        let (root, port) = tree("045b");
        assert_eq!(usb_protocol(&port, &root.path().join("sys")), Protocol::Dgt);
        // No USB device behind it (a pty, a missing port): DGT.
        assert_eq!(
            usb_protocol(Path::new("/nonexistent/x"), &sys),
            Protocol::Dgt
        );
        // A configured protocol is taken as it is.
        assert_eq!(
            protocol_for(ProtocolSetting::ChessLink, Path::new("/nonexistent")),
            Protocol::ChessLink
        );
        assert_eq!(protocol_for(ProtocolSetting::Dgt, &port), Protocol::Dgt);
    }

    #[test]
    fn an_auto_ftdi_port_alternates_until_a_board_answers_then_keeps_its_protocol() {
        use Protocol::{ChessLink, Dgt};
        let auto = ProtocolSetting::Auto;
        let mut p = AutoProbe::default();
        assert_eq!(p.next(auto, ChessLink, ChessLink), ChessLink);
        // Nothing answered: the other protocol, then back.
        assert_eq!(p.next(auto, ChessLink, ChessLink), Dgt);
        assert_eq!(p.next(auto, ChessLink, Dgt), ChessLink);
        assert_eq!(p.next(auto, ChessLink, ChessLink), Dgt);
        // A DGT board answered: kept over every reconnection.
        p.answered();
        assert_eq!(p.next(auto, ChessLink, Dgt), Dgt);
        p.answered();
        assert_eq!(p.next(auto, ChessLink, Dgt), Dgt);
        // A configured protocol, or a port that is not FTDI, is never switched.
        let mut q = AutoProbe::default();
        for _ in 0..3 {
            assert_eq!(
                q.next(ProtocolSetting::ChessLink, ChessLink, ChessLink),
                ChessLink
            );
            assert_eq!(q.next(auto, Dgt, Dgt), Dgt);
        }
    }
}
