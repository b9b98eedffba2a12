//! Which bus to talk on (`--bus session|system|ADDRESS`, as for eboardd) and connecting to it.

use std::fmt;
use std::str::FromStr;

use crate::cli::error::CtlError;

/// The `--bus` choice.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum BusChoice {
    #[default]
    System,
    Session,
    /// A D-Bus address such as `unix:path=/run/x`.
    Address(String),
}

impl FromStr for BusChoice {
    type Err = String;

    /// `session`, `system`, or anything that parses as a D-Bus address.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "system" => Ok(BusChoice::System),
            "session" => Ok(BusChoice::Session),
            other => match zbus::Address::from_str(other) {
                Ok(_) => Ok(BusChoice::Address(other.to_owned())),
                Err(e) => Err(format!(
                    "{other:?} is neither `session`, `system` nor a D-Bus address \
                     like unix:path=/run/bus ({e})"
                )),
            },
        }
    }
}

impl fmt::Display for BusChoice {
    /// How messages name the bus: "system bus", "session bus", "bus at unix:path=…".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BusChoice::System => f.write_str("system bus"),
            BusChoice::Session => f.write_str("session bus"),
            BusChoice::Address(a) => write!(f, "bus at {a}"),
        }
    }
}

/// Connects to the chosen bus. An unreachable bus is reported like a missing daemon (exit 1)
/// with the reason, since for the user the effect is the same.
pub async fn connect(bus: &BusChoice) -> Result<zbus::Connection, CtlError> {
    let builder = match bus {
        BusChoice::System => zbus::connection::Builder::system(),
        BusChoice::Session => zbus::connection::Builder::session(),
        BusChoice::Address(a) => zbus::connection::Builder::address(a.as_str()),
    };
    builder.build().await.map_err(|e| {
        CtlError::NotRunning(format!(
            "cannot reach the {bus}, so eboardd cannot be asked: {e}"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bus_choices_parse() {
        assert_eq!("system".parse::<BusChoice>(), Ok(BusChoice::System));
        assert_eq!("session".parse::<BusChoice>(), Ok(BusChoice::Session));
        assert_eq!(
            "unix:path=/run/x".parse::<BusChoice>(),
            Ok(BusChoice::Address("unix:path=/run/x".into()))
        );
        let err = "sytem".parse::<BusChoice>().expect_err("typo is refused");
        assert!(err.contains("\"sytem\""), "{err}");
        assert_eq!(BusChoice::default(), BusChoice::System);
        assert_eq!(
            BusChoice::Address("unix:path=/b".into()).to_string(),
            "bus at unix:path=/b"
        );
    }
}
