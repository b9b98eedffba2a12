//! The external D-Bus contract (section 2 of the contract) written down once: the bus name,
//! the object paths, the interface names, every error name, and the tables of properties,
//! methods and signals with their D-Bus signatures — and, in [`props`], the board's properties:
//! their table [`BOARD_PROPERTIES`] and the struct [`BoardProps`] that the daemon serves and
//! every client reads, both generated from one list.
//!
//! A leaf module — plain constants, tables and values, no zbus, no tokio — so the daemon
//! (`daemon::dbus`), the command-line client (`cli`), the bridges' client model (`client`)
//! and the tests' stand-in daemon all read the same words. The tables are checked against the
//! shipped introspection XML (`dbus/*.xml`) by a test, the same way the running daemon is.

pub mod limits;
#[macro_use]
mod property_table;
pub mod props;

pub use props::{
    BOARD_PROPERTIES, Battery, BoardProps, Claim, IllegalCounts, PropertyType, WireValue,
};

/// The well-known bus name the daemon owns.
pub const BUS_NAME: &str = "org.eboardd.Bridge1";
/// The manager object, which also implements the ObjectManager.
pub const MANAGER_PATH: &str = "/org/eboardd/Bridge1";
/// The manager interface (`AddBoard`, `RemoveBoard`, `Version`, `StorageProblem`).
pub const MANAGER_INTERFACE: &str = "org.eboardd.Bridge1";
/// The interface of every board object.
pub const BOARD_INTERFACE: &str = "org.eboardd.Bridge1.Board";
/// The prefix of every board object's path; the board's object id follows it.
pub const BOARD_PATH_PREFIX: &str = "/org/eboardd/Bridge1/Board/";

/// The standard interfaces the contract relies on (boards come and go through the
/// ObjectManager; every property change is a `PropertiesChanged`).
pub const OBJECT_MANAGER_INTERFACE: &str = "org.freedesktop.DBus.ObjectManager";
pub const PROPERTIES_INTERFACE: &str = "org.freedesktop.DBus.Properties";
/// The bus daemon itself, which announces owner changes of [`BUS_NAME`].
pub const DBUS_NAME: &str = "org.freedesktop.DBus";

/// The object path of the board with object id `id`.
pub fn board_path(id: &str) -> String {
    format!("{BOARD_PATH_PREFIX}{id}")
}

/// The object id of a board's path (`…/Board/<id>` → `<id>`); `None` for any other path.
pub fn board_id_of(path: &str) -> Option<&str> {
    path.strip_prefix(BOARD_PATH_PREFIX)
        .filter(|id| !id.is_empty() && !id.contains('/'))
}

/// The object id of a board named `name`: every character outside `[A-Za-z0-9_]` becomes
/// `_` (stable across restarts, since it depends on the name only).
pub fn object_id(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The prefix of the contract's own error names.
pub const ERROR_PREFIX: &str = "org.eboardd.Bridge1.Error";

/// Every error the daemon names: the four of the contract's method table and three of its
/// own (a listen-only board refuses to write; a clock message needs a clock that answers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorName {
    InvalidFen,
    InvalidArgument,
    NothingToTakeBack,
    ClaimNotAvailable,
    ListenOnly,
    NoClock,
    ClockTimeout,
    /// Too many requests already wait (a board's clock-message queue is full).
    Busy,
}

impl ErrorName {
    /// All of them, in the order above.
    pub const ALL: [ErrorName; 8] = [
        ErrorName::InvalidFen,
        ErrorName::InvalidArgument,
        ErrorName::NothingToTakeBack,
        ErrorName::ClaimNotAvailable,
        ErrorName::ListenOnly,
        ErrorName::NoClock,
        ErrorName::ClockTimeout,
        ErrorName::Busy,
    ];

    /// The last part of the name (`InvalidFen`).
    pub const fn short(self) -> &'static str {
        match self {
            ErrorName::InvalidFen => "InvalidFen",
            ErrorName::InvalidArgument => "InvalidArgument",
            ErrorName::NothingToTakeBack => "NothingToTakeBack",
            ErrorName::ClaimNotAvailable => "ClaimNotAvailable",
            ErrorName::ListenOnly => "ListenOnly",
            ErrorName::NoClock => "NoClock",
            ErrorName::ClockTimeout => "ClockTimeout",
            ErrorName::Busy => "Busy",
        }
    }

    /// The full D-Bus error name (`org.eboardd.Bridge1.Error.InvalidFen`).
    pub const fn name(self) -> &'static str {
        match self {
            ErrorName::InvalidFen => "org.eboardd.Bridge1.Error.InvalidFen",
            ErrorName::InvalidArgument => "org.eboardd.Bridge1.Error.InvalidArgument",
            ErrorName::NothingToTakeBack => "org.eboardd.Bridge1.Error.NothingToTakeBack",
            ErrorName::ClaimNotAvailable => "org.eboardd.Bridge1.Error.ClaimNotAvailable",
            ErrorName::ListenOnly => "org.eboardd.Bridge1.Error.ListenOnly",
            ErrorName::NoClock => "org.eboardd.Bridge1.Error.NoClock",
            ErrorName::ClockTimeout => "org.eboardd.Bridge1.Error.ClockTimeout",
            ErrorName::Busy => "org.eboardd.Bridge1.Error.Busy",
        }
    }

    /// The error of a full D-Bus error name, if it is one of the daemon's.
    pub fn from_name(name: &str) -> Option<ErrorName> {
        ErrorName::ALL.into_iter().find(|e| e.name() == name)
    }
}

impl std::fmt::Display for ErrorName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The bus's error when a method is called with the wrong argument types.
pub const INVALID_ARGS: &str = "org.freedesktop.DBus.Error.InvalidArgs";
/// The bus's error for a caller the policy does not allow (section 2: root or group eboardd).
pub const ACCESS_DENIED: &str = "org.freedesktop.DBus.Error.AccessDenied";

/// The D-Bus error names that mean "no daemon behind the name" rather than "the daemon
/// refused": no owner, or bus activation failed to start it.
pub fn is_not_running(error_name: &str) -> bool {
    error_name == "org.freedesktop.DBus.Error.ServiceUnknown"
        || error_name == "org.freedesktop.DBus.Error.NameHasNoOwner"
        || error_name.starts_with("org.freedesktop.DBus.Error.Spawn.")
}

/// A read-only property of one of the two interfaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Property {
    pub interface: &'static str,
    pub name: &'static str,
    /// Its D-Bus type signature.
    pub signature: &'static str,
    /// Never changes while the daemon runs (`EmitsChangedSignal=const`).
    pub constant: bool,
}

/// The manager's properties.
pub const MANAGER_PROPERTIES: &[Property] = &[
    Property {
        interface: MANAGER_INTERFACE,
        name: "Version",
        signature: "s",
        constant: true,
    },
    Property {
        interface: MANAGER_INTERFACE,
        name: "StorageProblem",
        signature: "s",
        constant: false,
    },
];

/// The board property called `name`, if there is one.
pub fn board_property(name: &str) -> Option<&'static Property> {
    BOARD_PROPERTIES.iter().find(|p| p.name == name)
}

/// One argument of a method or signal: its name (empty for an unnamed out argument) and type.
pub type Arg = (&'static str, &'static str);

/// A method: its arguments in, and its results out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Method {
    pub interface: &'static str,
    pub name: &'static str,
    pub inputs: &'static [Arg],
    pub outputs: &'static [Arg],
}

const fn board_method(name: &'static str, inputs: &'static [Arg]) -> Method {
    Method {
        interface: BOARD_INTERFACE,
        name,
        inputs,
        outputs: &[],
    }
}

/// Every method of both interfaces.
pub const METHODS: &[Method] = &[
    Method {
        interface: MANAGER_INTERFACE,
        name: "AddBoard",
        inputs: &[("port", "s")],
        outputs: &[("", "o")],
    },
    Method {
        interface: MANAGER_INTERFACE,
        name: "RemoveBoard",
        inputs: &[("board", "o")],
        outputs: &[],
    },
    board_method("NewGame", &[]),
    board_method("SetPosition", &[("fen", "s")]),
    board_method("SetTags", &[("tags", "a{ss}")]),
    board_method("SetRules", &[("rules", "s")]),
    board_method("TakeBack", &[]),
    board_method(
        "AcceptClaim",
        &[("player", "s"), ("kind", "s"), ("detail", "s")],
    ),
    board_method("Adjudicate", &[("result", "s"), ("reason", "s")]),
    board_method("ResolveGap", &[("moves", "as")]),
    board_method(
        "RejectClaim",
        &[("player", "s"), ("kind", "s"), ("detail", "s")],
    ),
    board_method("ShowClockMessage", &[("text", "s")]),
];

/// A signal and its arguments, whose names are the contract's (the web bridge and the relay
/// publish the arguments under them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signal {
    pub interface: &'static str,
    pub name: &'static str,
    pub args: &'static [Arg],
}

const fn board_signal(name: &'static str, args: &'static [Arg]) -> Signal {
    Signal {
        interface: BOARD_INTERFACE,
        name,
        args,
    }
}

/// Every signal of the board interface (the manager has none of its own).
pub const SIGNALS: &[Signal] = &[
    board_signal("GameStarted", &[("fen", "s")]),
    board_signal(
        "MovePlayed",
        &[
            ("ply", "u"),
            ("san", "s"),
            ("uci", "s"),
            ("fen", "s"),
            ("white_ms", "t"),
            ("black_ms", "t"),
        ],
    ),
    board_signal("MoveRetracted", &[("ply", "u"), ("fen", "s")]),
    board_signal(
        "IllegalPlacement",
        &[("player", "s"), ("description", "s"), ("placement", "s")],
    ),
    board_signal(
        "IllegalMoveCompleted",
        &[("player", "s"), ("count", "u"), ("description", "s")],
    ),
    board_signal("FlagFell", &[("player", "s")]),
    board_signal("GameEnded", &[("result", "s"), ("termination", "s")]),
];

/// The board signal called `name`, if there is one.
pub fn board_signal_named(name: &str) -> Option<&'static Signal> {
    SIGNALS
        .iter()
        .find(|s| s.interface == BOARD_INTERFACE && s.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_ids_go_both_ways() {
        assert_eq!(board_path("board_1"), "/org/eboardd/Bridge1/Board/board_1");
        assert_eq!(board_id_of(&board_path("board_1")), Some("board_1"));
        assert_eq!(board_id_of(MANAGER_PATH), None);
        assert_eq!(board_id_of(BOARD_PATH_PREFIX), None);
        assert_eq!(board_id_of("/org/eboardd/Bridge1/Board/a/b"), None);
        assert_eq!(object_id("board-1.ü"), "board_1__");
        assert!(BOARD_PATH_PREFIX.starts_with(MANAGER_PATH));
    }

    #[test]
    fn error_names_are_prefixed_and_round_trip() {
        for e in ErrorName::ALL {
            assert_eq!(e.name(), format!("{ERROR_PREFIX}.{}", e.short()));
            assert_eq!(ErrorName::from_name(e.name()), Some(e));
        }
        assert_eq!(ErrorName::from_name("org.eboardd.Bridge1.Error.Nope"), None);
        assert!(is_not_running("org.freedesktop.DBus.Error.ServiceUnknown"));
        assert!(is_not_running(
            "org.freedesktop.DBus.Error.Spawn.ChildExited"
        ));
        assert!(!is_not_running(ACCESS_DENIED));
    }

    #[test]
    fn member_names_are_unique_per_interface() {
        let mut seen = std::collections::HashSet::new();
        let names = MANAGER_PROPERTIES
            .iter()
            .chain(BOARD_PROPERTIES)
            .map(|p| (p.interface, p.name))
            .chain(METHODS.iter().map(|m| (m.interface, m.name)))
            .chain(SIGNALS.iter().map(|s| (s.interface, s.name)));
        for n in names {
            assert!(seen.insert(n), "{n:?} twice");
        }
        assert_eq!(
            board_property("Claims").map(|p| p.signature),
            Some("a(sss)")
        );
        assert!(board_property("Version").is_none());
        assert_eq!(
            board_signal_named("FlagFell").map(|s| s.args.len()),
            Some(1)
        );
    }
}
