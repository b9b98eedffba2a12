//! The serial device of one board: opening it at 9600 8N1. Everything the link says and
//! decides once the port is open lives in the pure [`crate::link`] machine.

use std::io;
use std::path::Path;
use std::time::Duration;

use tokio_serial::{DataBits, FlowControl, Parity, SerialPortBuilderExt, SerialStream, StopBits};

/// Open the serial device at 9600 8N1 without flow control.
pub fn open(port: &Path) -> io::Result<SerialStream> {
    let path = port.to_string_lossy();
    let mut stream = tokio_serial::new(path.as_ref(), 9600)
        .data_bits(DataBits::Eight)
        .parity(Parity::None)
        .stop_bits(StopBits::One)
        .flow_control(FlowControl::None)
        .timeout(Duration::from_millis(500))
        .open_native_async()
        .map_err(io::Error::from)?;
    // Some USB adapters want DTR raised (dgtnix does); ptys and CDC-ACM devices may refuse
    // it, which is harmless.
    let _ = tokio_serial::SerialPort::write_data_terminal_ready(&mut stream, true);
    Ok(stream)
}
