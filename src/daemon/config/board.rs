//! One board entry — a `[[board]]` table, a `--port` or a D-Bus `AddBoard` — its id and name,
//! the session settings it gives, and the one validator of a board's port and name that all
//! three go through ([`BoardConfig::check`]).

use std::io;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use eboard_core::arbiter::ArbiterConfig;
use eboard_core::arbiter::timecontrol::TimeControl;
use eboard_core::session::SessionConfig;
use eboard_core::vocab::{
    ClockPeriods, Edition, OrientationSetting, ProtocolSetting, Rules, Variant, WhiteDisplay,
};

use super::DaemonConfig;
use super::words::validate_tag_value;

/// The longest port path accepted: Linux's `PATH_MAX` less the terminating NUL. A longer one
/// can never be opened, and would be copied into every message and file that names the port.
/// (The contract's bound on `AddBoard`'s argument.)
pub use eboard_core::contract::limits::PORT_MAX;

/// The longest board id. The id names the board's files in the state directory
/// (`<id>.journal` and the like), and a file name has at most 255 bytes (`NAME_MAX`); the rest
/// leaves room for the suffixes.
pub use eboard_core::contract::limits::ID_MAX;

/// One `[[board]]` table (or one `--port`).
#[derive(Debug, Clone, PartialEq)]
pub struct BoardConfig {
    /// Configured name; without one the port's file name is used.
    pub name: Option<String>,
    /// Serial device path.
    pub port: String,
    /// Table number (pairings, round files); `None`: not numbered.
    pub number: Option<u32>,
    /// Overrides `[daemon] variant`.
    pub variant: Option<Variant>,
    /// Overrides `[daemon] rules`.
    pub rules: Option<Rules>,
    /// Overrides `[daemon] edition`.
    pub edition: Option<Edition>,
    pub white_display: WhiteDisplay,
    pub orientation: OrientationSetting,
    pub time_control: Option<TimeControl>,
    /// How the clock moves to the next period (`clock_periods`).
    pub clock_periods: ClockPeriods,
    pub listen_only: bool,
    /// Which protocol the board speaks (`auto`: from the port's USB identity, else DGT).
    pub protocol: ProtocolSetting,
    /// Show the last move and an illegal placement on a board with LEDs (`leds`).
    pub leds: bool,
    /// PGN tags for every game on this board, in the order the file lists them.
    pub tags: Vec<(String, String)>,
    /// Line of the `[[board]]` header in the configuration file (`None`: from the command line
    /// or a D-Bus `AddBoard`). Used to name the board in errors found after parsing.
    pub line: Option<usize>,
}

/// Everything the daemon needs to start serving one board.
#[derive(Debug, Clone, PartialEq)]
pub struct BoardSpec {
    /// Object id: the last element of `/org/eboardd/Bridge1/Board/<id>`.
    pub id: String,
    /// Serial device path.
    pub port: PathBuf,
    /// Never write to the port.
    pub listen_only: bool,
    /// Which protocol the board speaks.
    pub protocol: ProtocolSetting,
    /// Light the board's LEDs (a board that has them).
    pub leds: bool,
    /// Everything the session needs (its `name` is the board's name, its `port` the port's
    /// text, set by [`BoardSpec::new`]).
    pub session: SessionConfig,
}

impl BoardSpec {
    /// A board on `port`; the session shows the same port as its `Port` property.
    pub fn new(id: String, port: PathBuf, listen_only: bool, session: SessionConfig) -> Self {
        let session = SessionConfig {
            port: port.to_string_lossy().into_owned(),
            ..session
        };
        BoardSpec {
            id,
            port,
            listen_only,
            protocol: ProtocolSetting::Auto,
            leds: true,
            session,
        }
    }

    /// The same board with its LEDs lit or left dark.
    pub fn with_leds(mut self, leds: bool) -> Self {
        self.leds = leds;
        self
    }

    /// The same board speaking `protocol`.
    pub fn with_protocol(mut self, protocol: ProtocolSetting) -> Self {
        self.protocol = protocol;
        self
    }
}

/// Which of a board's settings [`BoardConfig::check`] refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoardField {
    Port,
    Name,
}

/// A board entry refused by [`BoardConfig::check`]: the setting at fault and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoardFault {
    pub field: BoardField,
    pub message: String,
}

impl BoardConfig {
    /// A board on `port` with every setting at its default (what `--port` and `AddBoard` add).
    pub fn for_port(port: &str) -> Self {
        BoardConfig {
            name: None,
            port: port.to_string(),
            number: None,
            variant: None,
            rules: None,
            edition: None,
            white_display: WhiteDisplay::Auto,
            orientation: OrientationSetting::Auto,
            time_control: None,
            clock_periods: ClockPeriods::Time,
            listen_only: false,
            protocol: ProtocolSetting::Auto,
            leds: true,
            tags: Vec::new(),
            line: None,
        }
    }

    /// The `Name` property: the configured name, else the port's file name.
    pub fn display_name(&self) -> String {
        match &self.name {
            Some(name) => name.clone(),
            None => port_file_name(&self.port).unwrap_or_default(),
        }
    }

    /// The board's object-path id (contract section 2).
    pub fn id(&self) -> String {
        board_id(&self.display_name())
    }

    /// Whether this board can be served at all, wherever it came from (file, `--port`,
    /// `AddBoard`): the name, if given, is a valid PGN tag value; the port is an absolute path
    /// of at most [`PORT_MAX`] bytes without NUL, and if something exists there it is a
    /// character device (a tty or pty — a regular file or a directory is not a board; a path
    /// that does not exist yet is fine, the board may be plugged in later); and the board's
    /// id is not empty and at most [`ID_MAX`] bytes.
    pub fn check(&self) -> Result<(), BoardFault> {
        let port = |message: String| BoardFault {
            field: BoardField::Port,
            message,
        };
        check_port(&self.port).map_err(port)?;
        if let Some(name) = &self.name {
            check_name(name).map_err(|message| BoardFault {
                field: BoardField::Name,
                message,
            })?;
        }
        match &self.name {
            Some(name) if board_id(name).len() > ID_MAX => Err(BoardFault {
                field: BoardField::Name,
                message: format!(
                    "the board name is {} bytes long; a board's name (its object id and the \
                     name of its files) has at most {ID_MAX}",
                    name.len()
                ),
            }),
            Some(_) => Ok(()),
            None => match port_file_name(&self.port) {
                None => Err(port(format!(
                    "the port \"{}\" has no file name to name the board after",
                    eboard_core::vocab::excerpt(&self.port)
                ))),
                Some(file) if board_id(&file).len() > ID_MAX => Err(port(format!(
                    "the port's file name is {} bytes long; a board's name (its object id and \
                     the name of its files) has at most {ID_MAX}; set a shorter `name`",
                    file.len()
                ))),
                Some(_) => Ok(()),
            },
        }
    }

    /// The session configuration, with `[daemon]` defaults filled in.
    pub fn session_config(&self, daemon: &DaemonConfig) -> SessionConfig {
        SessionConfig {
            name: self.display_name(),
            port: self.port.clone(),
            arbiter: ArbiterConfig {
                rules: self.rules.unwrap_or(daemon.rules),
                edition: self.edition.unwrap_or(daemon.edition),
                guidelines_iii: daemon.guidelines_iii,
                white_display: self.white_display,
                time_control: self.time_control.clone(),
                clock_periods: self.clock_periods,
            },
            orientation: self.orientation,
            tags: self.tags.clone(),
            number: self.number.unwrap_or(0),
            variant: self.variant.unwrap_or(daemon.variant),
            gap_without_clock_witness: false,
        }
    }

    /// What the daemon serves for this board, with `[daemon]` defaults filled in.
    pub fn spec(&self, daemon: &DaemonConfig) -> BoardSpec {
        BoardSpec::new(
            self.id(),
            PathBuf::from(&self.port),
            self.listen_only,
            self.session_config(daemon),
        )
        .with_protocol(self.protocol)
        .with_leds(self.leds)
    }
}

/// A board name: not empty, and (being the PGN "Board" tag's value) a valid tag value.
fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("the board name must not be empty".into());
    }
    validate_tag_value(name).map_err(|m| m.replace("a tag value", "the board name"))
}

fn check_port(port: &str) -> Result<(), String> {
    if port.is_empty() {
        return Err("the port (serial device path) must not be empty".into());
    }
    if port.contains('\0') {
        return Err("the port must not contain a NUL character".into());
    }
    if port.len() > PORT_MAX {
        // Not quoted: the message would be as long as the path.
        return Err(format!(
            "the port is {} bytes long; a device path has at most {PORT_MAX}",
            port.len()
        ));
    }
    if !Path::new(port).is_absolute() {
        return Err(format!(
            "\"{}\" is not an absolute device path (such as /dev/ttyACM0)",
            eboard_core::vocab::excerpt(port)
        ));
    }
    // Follows symbolic links: /dev/serial/by-id/… and a simulator's --link are links to ttys.
    match std::fs::metadata(port) {
        Ok(meta) if meta.file_type().is_char_device() => Ok(()),
        Ok(meta) => {
            let what = file_kind(&meta.file_type());
            Err(format!(
                "\"{}\" is {what}, not a serial device (a character device such as \
                 /dev/ttyACM0)",
                eboard_core::vocab::excerpt(port)
            ))
        }
        // Not there (yet): a board that is plugged in later is served from then on.
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        // Cannot look (a directory we may not search): opening it will say more.
        Err(_) => Ok(()),
    }
}

fn file_kind(t: &std::fs::FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_file() {
        "a regular file"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_fifo() {
        "a named pipe"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a device"
    }
}

/// The board id rule of the contract (written once, in [`eboard_core::contract::object_id`]).
pub fn board_id(name: &str) -> String {
    eboard_core::contract::object_id(name)
}

/// The file name of a port path (`/dev/ttyACM0` → `ttyACM0`), if it has one.
pub fn port_file_name(port: &str) -> Option<String> {
    Path::new(port)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fault(board: &BoardConfig) -> BoardFault {
        board.check().expect_err("the board should be refused")
    }

    #[test]
    fn board_ids_follow_the_contract() {
        assert_eq!(board_id("board-1"), "board_1");
        assert_eq!(board_id("Brett 3 (ä)"), "Brett_3____");
        let b = BoardConfig::for_port("/dev/serial/by-id/usb-DGT_0123-if00");
        assert_eq!(b.display_name(), "usb-DGT_0123-if00");
        assert_eq!(b.id(), "usb_DGT_0123_if00");
    }

    #[test]
    fn ports_that_cannot_be_boards_are_refused() {
        for (port, needle) in [
            ("", "must not be empty"),
            ("/dev/a\0b", "NUL"),
            ("ttyACM0", "absolute"),
            ("/", "a directory"),
            ("/nonexistent/..", "no file name"),
            ("/dev", "a directory"),
            ("/dev/", "a directory"),
        ] {
            let f = fault(&BoardConfig::for_port(port));
            assert_eq!(f.field, BoardField::Port, "{port:?}");
            assert!(f.message.contains(needle), "{port:?}: {}", f.message);
        }
        let long = format!("/{}", "x".repeat(5000));
        let f = fault(&BoardConfig::for_port(&long));
        assert!(f.message.contains("5001 bytes"), "{}", f.message);
        assert!(
            f.message.len() < 200,
            "the message does not repeat the path"
        );
        let file = tempfile::NamedTempFile::new().unwrap();
        let f = fault(&BoardConfig::for_port(file.path().to_str().unwrap()));
        assert!(f.message.contains("a regular file"), "{}", f.message);
        // A file name too long for the state directory's files.
        let f = fault(&BoardConfig::for_port(&format!(
            "/nonexistent/{}",
            "y".repeat(300)
        )));
        assert!(f.message.contains("at most 200"), "{}", f.message);
        let mut named = BoardConfig::for_port("/nonexistent/a");
        named.name = Some("n".repeat(201));
        assert_eq!(fault(&named).field, BoardField::Name);
        named.name = Some(String::new());
        assert_eq!(fault(&named).field, BoardField::Name);
    }

    #[test]
    fn devices_and_future_devices_are_accepted() {
        // A character device, one that does not exist yet, and a link to a character device.
        BoardConfig::for_port("/dev/null").check().unwrap();
        BoardConfig::for_port("/nonexistent/ttyACM0")
            .check()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("dgt0");
        std::os::unix::fs::symlink("/dev/null", &link).unwrap();
        BoardConfig::for_port(link.to_str().unwrap())
            .check()
            .unwrap();
        let pty = nix::pty::openpty(None, None).unwrap();
        let name = std::fs::read_link(format!(
            "/proc/self/fd/{}",
            std::os::fd::AsRawFd::as_raw_fd(&pty.slave)
        ))
        .unwrap();
        BoardConfig::for_port(name.to_str().unwrap())
            .check()
            .unwrap();
        // "/nonexistent/" names the board "nonexistent".
        let b = BoardConfig::for_port("/nonexistent/");
        b.check().unwrap();
        assert_eq!(b.id(), "nonexistent");
    }
}
