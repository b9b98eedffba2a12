//! The serial device of one board: opening it with the line its protocol speaks on (DGT:
//! 9600 8N1, see [`eboard_core::link::Protocol::line`]). Everything the link says and decides once
//! the port is open lives in the pure [`eboard_core::link`] machine.

use std::io;
use std::path::Path;
use std::time::Duration;

use tokio_serial::{DataBits, FlowControl, Parity, SerialPortBuilderExt, SerialStream, StopBits};

use eboard_core::link::{LineSettings, Parity as LineParity};

/// Open the serial device with `line`'s settings, without flow control.
pub fn open(port: &Path, line: LineSettings) -> io::Result<SerialStream> {
    let path = port.to_string_lossy();
    let mut stream = tokio_serial::new(path.as_ref(), line.baud)
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
        .timeout(Duration::from_millis(500))
        .open_native_async()
        .map_err(io::Error::from)?;
    // Some USB adapters want DTR raised (dgtnix does); ptys and CDC-ACM devices may refuse
    // it, which is harmless.
    let _ = tokio_serial::SerialPort::write_data_terminal_ready(&mut stream, true);
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
