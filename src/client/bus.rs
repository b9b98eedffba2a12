//! Connecting `eboardctl` to the bus its `--bus` names (the word itself is parsed by
//! [`crate::bus_choice`], the same parser eboardd uses).

use crate::client::error::CtlError;

pub use crate::bus_choice::BusChoice;

/// Connects to the chosen bus. An unreachable bus is reported like a missing daemon (exit 1)
/// with the reason, since for the user the effect is the same.
pub async fn connect(bus: &BusChoice) -> Result<zbus::Connection, CtlError> {
    bus.builder().build().await.map_err(|e| {
        let hint = bus
            .connect_hint()
            .map_or(String::new(), |h| format!("; {h}"));
        CtlError::NotRunning(format!(
            "cannot reach the {bus}, so eboardd cannot be asked: {e}{hint}"
        ))
    })
}
