//! Which D-Bus bus to use — `session`, `system` or an address such as `unix:path=/run/x` — as
//! `eboardd --bus`, `eboardctl --bus` and the configuration's `[daemon] bus` write it.
//!
//! This is the one parser of that word. Addresses are parsed by `zbus::Address` (the library
//! that will connect to them, so whatever passes here is something zbus can use); on top of it
//! two things zbus lets through are refused: a `;`-separated list (zbus connects to one
//! address, so a list could never be used) and characters the D-Bus specification says must
//! be `%`-escaped (a typo such as a space would otherwise become part of a socket path).

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

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

    /// `session`, `system`, or one D-Bus address.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "system" => Ok(BusChoice::System),
            "session" => Ok(BusChoice::Session),
            other => check_address(other)
                .map(|()| BusChoice::Address(other.to_owned()))
                .map_err(|why| {
                    format!(
                        "{other:?} is neither \"session\", \"system\" nor a D-Bus address \
                         such as \"unix:path=/run/eboardd/bus\": {why}"
                    )
                }),
        }
    }
}

/// Why `text` is not one usable D-Bus address.
fn check_address(text: &str) -> Result<(), String> {
    if text.is_empty() {
        return Err("it is empty".into());
    }
    if text.contains(';') {
        return Err("a list of addresses (`;`) cannot be used here; give one address".into());
    }
    if let Some((_, params)) = text.split_once(':') {
        for value in params
            .split(',')
            .filter_map(|p| p.split_once('=').map(|(_, v)| v))
        {
            if !is_escaped_value(value) {
                return Err(format!(
                    "the value {value:?} has a character that must be %-escaped \
                     (or a `%` not followed by two hex digits)"
                ));
            }
        }
    }
    zbus::Address::from_str(text)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// The D-Bus specification's address values: bytes from `[-0-9A-Za-z_/.\*]`, or `%XX`.
fn is_escaped_value(value: &str) -> bool {
    let bytes = value.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            match bytes.get(i + 1..i + 3) {
                Some(hex) if hex.iter().all(u8::is_ascii_hexdigit) => i += 3,
                _ => return false,
            }
        } else if bytes[i].is_ascii_alphanumeric() || b"-_/.*".contains(&bytes[i]) {
            i += 1;
        } else {
            return false;
        }
    }
    true
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

impl BusChoice {
    /// A zbus connection builder for this bus.
    pub fn builder(&self) -> zbus::connection::Builder<'_> {
        match self {
            BusChoice::System => zbus::connection::Builder::system(),
            BusChoice::Session => zbus::connection::Builder::session(),
            BusChoice::Address(a) => zbus::connection::Builder::address(a.as_str()),
        }
    }

    /// What to tell someone whose connection to this bus failed, when there is something to
    /// tell: without a desktop login (over SSH, on a headless Raspberry Pi) there is no
    /// session bus at all, and the bare socket error does not say what to do about it.
    pub fn connect_hint(&self) -> Option<String> {
        if *self != BusChoice::Session {
            return None;
        }
        let why = match std::env::var_os("DBUS_SESSION_BUS_ADDRESS") {
            Some(a) => format!(
                "DBUS_SESSION_BUS_ADDRESS is {:?}, but nothing answers there",
                a.to_string_lossy()
            ),
            None => match std::env::var_os("XDG_RUNTIME_DIR") {
                Some(dir) => format!(
                    "DBUS_SESSION_BUS_ADDRESS is not set and there is no {}",
                    PathBuf::from(dir).join("bus").display()
                ),
                None => "neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set".into(),
            },
        };
        Some(format!(
            "there is no session bus here ({why}), as is usual over SSH or on a machine \
             without a desktop login. Start one: run `dbus-run-session -- bash` (Debian package \
             `dbus`) and start eboardd and its clients from that shell; or serve on a bus of \
             your own with `--bus unix:path=…` (a `dbus-daemon --session --address=unix:path=…`); \
             or see it work with `eboardd --demo`, which starts a private bus by itself"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_addresses() {
        assert_eq!("system".parse::<BusChoice>(), Ok(BusChoice::System));
        assert_eq!("session".parse::<BusChoice>(), Ok(BusChoice::Session));
        assert_eq!(BusChoice::default(), BusChoice::System);
        assert_eq!(
            "unix:path=/run/x".parse::<BusChoice>(),
            Ok(BusChoice::Address("unix:path=/run/x".into()))
        );
        for good in [
            "unix:abstract=/tmp/dbus-x",
            "unix:path=/tmp/dbus-x,guid=0123456789abcdef0123456789abcdef",
            "tcp:host=localhost,port=1",
            "unix:path=/tmp/a%20b",
            "unix:dir=/tmp",
        ] {
            assert!(good.parse::<BusChoice>().is_ok(), "{good:?} refused");
        }
        for bad in [
            "",
            "Session",
            "sytem",
            "user",
            "tcp",
            "unix",
            "unix:path",
            "unix:path=/a b",
            "unix:path=/a\\b",
            "unix:=x",
            ":path=x",
            "unix:path=/x%2",
            "unix:path=/x,guid=0123abcd",
            "unix:path=/a;unix:path=/b",
            "unix:nopath=/x",
        ] {
            let e = bad.parse::<BusChoice>().expect_err(bad);
            assert!(e.contains(&format!("{bad:?}")), "names the value: {e}");
        }
    }

    #[test]
    fn messages_name_the_bus() {
        assert_eq!(BusChoice::System.to_string(), "system bus");
        assert_eq!(
            BusChoice::Address("unix:path=/b".into()).to_string(),
            "bus at unix:path=/b"
        );
        assert!(BusChoice::System.connect_hint().is_none());
        let hint = BusChoice::Session.connect_hint().unwrap();
        assert!(hint.contains("dbus-run-session"), "{hint}");
    }
}
