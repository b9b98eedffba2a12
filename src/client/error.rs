//! What can go wrong in an `eboardctl` command, and the exit code each failure maps to
//! (contract: 0 ok, 1 the daemon refused or is not running, 2 bad usage).

use std::fmt;

pub use eboard_core::contract::{BUS_NAME, is_not_running};

/// A failed command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CtlError {
    /// The daemon answered with a named D-Bus error.
    Daemon { name: String, message: String },
    /// Nobody owns `org.eboardd.Bridge1` on the chosen bus (or the bus itself is unreachable).
    NotRunning(String),
    /// No board matches what was asked for.
    NoSuchBoard { wanted: String, known: Vec<String> },
    /// The command line is wrong in a way the parser could not see.
    Usage(String),
    /// Anything else (a reply of the wrong shape, a broken pipe, …).
    Other(String),
}

impl CtlError {
    /// The process exit code for this failure.
    pub fn exit_code(&self) -> i32 {
        match self {
            CtlError::Usage(_) => 2,
            _ => 1,
        }
    }

    /// Classifies an error from a call to the daemon. `bus` names the bus for messages.
    pub fn from_call(err: zbus::Error, bus: &str) -> Self {
        match dbus_error_parts(&err) {
            Some((name, message)) if is_not_running(&name) => CtlError::NotRunning(format!(
                "eboardd is not running on the {bus} (nobody owns {BUS_NAME}: {name}: {message})"
            )),
            Some((name, message)) => CtlError::Daemon { name, message },
            None => CtlError::Other(format!("talking to eboardd on the {bus}: {err}")),
        }
    }
}

/// The name and message of a D-Bus error reply, if `err` is one.
pub fn dbus_error_parts(err: &zbus::Error) -> Option<(String, String)> {
    use zbus::DBusError;
    match err {
        zbus::Error::MethodError(name, message, _) => {
            Some((name.to_string(), message.clone().unwrap_or_default()))
        }
        zbus::Error::FDO(e) => Some((
            e.name().to_string(),
            e.description().unwrap_or_default().to_owned(),
        )),
        _ => None,
    }
}

impl fmt::Display for CtlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CtlError::Daemon { name, message } => {
                write!(f, "{name}: {message}")?;
                if name == eboard_core::contract::ACCESS_DENIED {
                    write!(
                        f,
                        " (changing a board needs root or membership of group eboardd)"
                    )?;
                }
                Ok(())
            }
            CtlError::NotRunning(m) | CtlError::Usage(m) | CtlError::Other(m) => f.write_str(m),
            CtlError::NoSuchBoard { wanted, known } => {
                write!(f, "no board {wanted:?}")?;
                if known.is_empty() {
                    write!(f, " (the daemon serves no boards)")
                } else {
                    write!(f, "; boards: {}", known.join(", "))
                }
            }
        }
    }
}

impl std::error::Error for CtlError {}

/// Failures of the offline commands (decode, simulate, replay): exit 1, with the whole chain
/// of context.
impl From<anyhow::Error> for CtlError {
    fn from(e: anyhow::Error) -> Self {
        CtlError::Other(format!("{e:#}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zbus::message::Message;

    fn error_reply(name: &str, text: &str) -> zbus::Error {
        let call = Message::method_call(eboard_core::contract::MANAGER_PATH, "NewGame")
            .destination(BUS_NAME)
            .build(&())
            .expect("build call");
        let reply = Message::error(&call.header(), name)
            .build(&(text,))
            .expect("build reply");
        zbus::Error::from(reply)
    }

    #[test]
    fn named_daemon_errors_keep_name_and_message() {
        let e = CtlError::from_call(
            error_reply(
                "org.eboardd.Bridge1.Error.InvalidFen",
                "the FEN has 7 ranks",
            ),
            "system bus",
        );
        assert_eq!(
            e,
            CtlError::Daemon {
                name: "org.eboardd.Bridge1.Error.InvalidFen".into(),
                message: "the FEN has 7 ranks".into()
            }
        );
        assert_eq!(e.exit_code(), 1);
        assert_eq!(
            e.to_string(),
            "org.eboardd.Bridge1.Error.InvalidFen: the FEN has 7 ranks"
        );
    }

    #[test]
    fn missing_owner_means_not_running() {
        let e = CtlError::from_call(
            error_reply(
                "org.freedesktop.DBus.Error.ServiceUnknown",
                "The name is not activatable",
            ),
            "session bus",
        );
        match &e {
            CtlError::NotRunning(m) => {
                assert!(
                    m.starts_with("eboardd is not running on the session bus"),
                    "{m}"
                )
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(e.exit_code(), 1);
    }

    #[test]
    fn access_denied_explains_who_may_change_boards() {
        let e = CtlError::from_call(
            error_reply("org.freedesktop.DBus.Error.AccessDenied", "denied"),
            "system bus",
        );
        assert!(e.to_string().contains("group eboardd"));
    }

    #[test]
    fn unknown_board_lists_the_known_ones() {
        let e = CtlError::NoSuchBoard {
            wanted: "b9".into(),
            known: vec!["board-1".into(), "board-2".into()],
        };
        assert_eq!(e.to_string(), "no board \"b9\"; boards: board-1, board-2");
        assert_eq!(CtlError::Usage("x".into()).exit_code(), 2);
    }
}
