//! Configuration files as users write them: the shipped example, and every kind of mistake,
//! each of which must be reported with the file, the line and the key at fault.

use std::path::{Path, PathBuf};

use eboard_core::vocab::{Edition, OrientationSetting, Rules, WhiteDisplay};
use eboardd::bus_choice::BusChoice;
use eboardd::daemon::config::{Config, ConfigError, ErrorOrigin, Overrides, TimeControl};
use proptest::prelude::*;

const EXAMPLE: &str = include_str!("../eboardd.toml.example");

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::parse(text, Path::new("/etc/eboardd/eboardd.toml"))
}

/// Assert that `text` is rejected at `line` naming `key`, and that the printed message says so.
#[track_caller]
fn rejected(text: &str, line: usize, key: &str) -> ConfigError {
    let e = parse(text).expect_err("configuration should be rejected");
    assert_eq!(
        e.origin,
        ErrorOrigin::File {
            path: PathBuf::from("/etc/eboardd/eboardd.toml"),
            line: Some(line)
        },
        "{e}"
    );
    assert_eq!(e.key.as_deref(), Some(key), "{e}");
    let printed = e.to_string();
    assert!(
        printed.starts_with(&format!("/etc/eboardd/eboardd.toml:{line}: key `{key}`: ")),
        "{printed}"
    );
    e
}

#[test]
fn the_shipped_example_is_valid() {
    let c = parse(EXAMPLE).unwrap();
    assert_eq!(c.daemon.bus, BusChoice::System);
    assert_eq!(c.daemon.state_dir, PathBuf::from("/var/lib/eboardd"));
    assert_eq!(c.daemon.pgn_dir(), PathBuf::from("/var/lib/eboardd/pgn"));
    assert_eq!(c.boards.len(), 2);
    let b = &c.boards[0];
    assert_eq!(b.rules, Some(Rules::Blitz));
    assert_eq!(b.edition, Some(Edition::Fide2005));
    // The one time-control grammar (its periods are spelled out in the arbiter's own tests).
    let example_tc: TimeControl = "40/5400+30:1800+30".parse().unwrap();
    assert_eq!(b.time_control, Some(example_tc));
    let setups = c.board_specs();
    assert_eq!(setups[0].id, "board_1");
    assert_eq!(c.boards[0].display_name(), "board-1");
    assert_eq!(setups[0].session.name, "board-1");
    assert_eq!(setups[0].session.arbiter.rules, Rules::Blitz);
    assert_eq!(
        setups[0]
            .session
            .arbiter
            .time_control
            .as_ref()
            .map(ToString::to_string)
            .as_deref(),
        Some("40/5400+30:1800+30")
    );
    let tag_names: Vec<_> = setups[0]
        .session
        .tags
        .iter()
        .map(|(k, _)| k.as_str())
        .collect();
    assert_eq!(tag_names, ["Event", "Site", "Round", "White", "Black"]);
    assert_eq!(setups[0].session.tags[0].1, "City Open");
    assert_eq!(setups[1].id, "ttyACM1");
    assert_eq!(setups[1].port, Path::new("/dev/ttyACM1"));
    assert_eq!(setups[1].session.arbiter.rules, Rules::Standard);
    assert_eq!(setups[1].session.arbiter.edition, Edition::Fide2023);
    assert_eq!(setups[1].session.arbiter.white_display, WhiteDisplay::Auto);
    assert_eq!(setups[1].session.orientation, OrientationSetting::Auto);
    assert!(!setups[1].listen_only);
}

#[test]
fn unknown_keys() {
    rejected(
        "[daemon]\nbus = \"session\"\nrule = \"blitz\"\n",
        3,
        "daemon.rule",
    );
    let e = rejected(
        "[[board]]\nport = \"/dev/a\"\n\n[[board]]\nport = \"/dev/b\"\nlisten-only = true\n",
        6,
        "board[2].listen-only",
    );
    assert!(
        e.message.contains("listen_only"),
        "lists the known keys: {e}"
    );
    rejected("[deamon]\nbus = \"system\"\n", 1, "deamon");
}

#[test]
fn bad_values() {
    let e = rejected("[daemon]\nrules = \"bullet\"\n", 2, "daemon.rules");
    assert!(e.message.contains("standard"), "{e}");
    rejected(
        "[[board]]\nport = \"/dev/a\"\nrules = \"Blitz\"\n",
        3,
        "board[1].rules",
    );
    rejected("[daemon]\nedition = \"fide-2018\"\n", 2, "daemon.edition");
    rejected("[daemon]\nbus = \"user\"\n", 2, "daemon.bus");
    rejected("[daemon]\nstate_dir = \"\"\n", 2, "daemon.state_dir");
    rejected(
        "[[board]]\nport = \"/dev/a\"\nwhite_display = \"top\"\n",
        3,
        "board[1].white_display",
    );
    rejected(
        "[[board]]\nport = \"/dev/a\"\norientation = \"flipped\"\n",
        3,
        "board[1].orientation",
    );
    rejected("[[board]]\nport = \"\"\n", 2, "board[1].port");
    rejected(
        "[[board]]\nport = \"/dev/a\"\nname = \"\"\n",
        3,
        "board[1].name",
    );
    // Wrong TOML types are reported by the parser, still with line and key.
    rejected(
        "[[board]]\nport = \"/dev/a\"\nlisten_only = \"yes\"\n",
        3,
        "board[1].listen_only",
    );
    rejected("[daemon]\nguidelines_iii = 1\n", 2, "daemon.guidelines_iii");
}

#[test]
fn clock_periods_are_carried_to_the_arbiter_and_unknown_ones_refused() {
    use eboard_core::vocab::ClockPeriods;
    let c = parse(EXAMPLE).unwrap();
    assert_eq!(
        c.board_specs()[0].session.arbiter.clock_periods,
        ClockPeriods::Time
    );
    let c = parse("[[board]]\nport = \"/dev/a\"\nclock_periods = \"moves\"\n").unwrap();
    assert_eq!(
        c.board_specs()[0].session.arbiter.clock_periods,
        ClockPeriods::Moves
    );
    let c = parse("[[board]]\nport = \"/dev/a\"\n").unwrap();
    assert_eq!(
        c.board_specs()[0].session.arbiter.clock_periods,
        ClockPeriods::Time
    );
    let e = rejected(
        "[[board]]\nport = \"/dev/a\"\n\nclock_periods = \"counter\"\n",
        4,
        "board[1].clock_periods",
    );
    assert!(
        e.message.contains("time") && e.message.contains("moves"),
        "{e}"
    );
}

#[test]
fn bad_time_controls() {
    for bad in ["40/90m", "5400:40/1800", "40/5400+", "G/60", "", "40/0"] {
        let text = format!("[[board]]\nport = \"/dev/a\"\n\ntime_control = \"{bad}\"\n");
        let e = rejected(&text, 4, "board[1].time_control");
        assert!(e.message.contains("40/5400+30:1800+30"), "{e}");
    }
}

#[test]
fn bad_tags() {
    rejected(
        "[[board]]\nport = \"/dev/a\"\ntags = { \"1st\" = \"x\" }\n",
        3,
        "board[1].tags.1st",
    );
    rejected(
        "[[board]]\nport = \"/dev/a\"\ntags = { Event = \"City \\\"Open\\\"\" }\n",
        3,
        "board[1].tags.Event",
    );
    rejected(
        "[[board]]\nport = \"/dev/a\"\n[board.tags]\nWhite = \"A\"\nBlack = \"line\\nbreak\"\n",
        5,
        "board[1].tags.Black",
    );
    // The board name is the "Board" tag's value.
    rejected(
        "[[board]]\nport = \"/dev/a\"\nname = \"say \\\"hi\\\"\"\n",
        3,
        "board[1].name",
    );
}

#[test]
fn duplicate_board_ids() {
    let e = rejected(
        "[[board]]\nname = \"board-1\"\nport = \"/dev/a\"\n\n[[board]]\nname = \"board_1\"\nport = \"/dev/b\"\n",
        5,
        "board[2].name",
    );
    assert!(
        e.message.contains("board_1") && e.message.contains("line 1"),
        "{e}"
    );
    // Ids from port file names collide too.
    let e = rejected(
        "[[board]]\nport = \"/dev/serial/a\"\n[[board]]\nport = \"/dev/usb/a\"\n",
        3,
        "board[2].port",
    );
    assert!(e.message.contains("`a`"), "{e}");
    // And one port served twice.
    let e = rejected(
        "[[board]]\nname = \"x\"\nport = \"/dev/a\"\n[[board]]\nname = \"y\"\nport = \"/dev/a\"\n",
        4,
        "board[2].name",
    );
    assert!(e.message.contains("already served"), "{e}");
}

#[test]
fn toml_syntax_errors() {
    rejected("[daemon]\nbus = \"system\n", 2, "daemon.bus");
    rejected(
        "[daemon]\nrules = \"blitz\"\n\n[[board]]\nport = /dev/a\n",
        5,
        "board[1].port",
    );
    let e = parse("[daemon]\nbus = \"system\"\n[daemon]\n").unwrap_err();
    assert!(
        matches!(e.origin, ErrorOrigin::File { line: Some(3), .. }),
        "{e}"
    );
    let e = rejected("[[board]]\nname = \"x\"\n", 1, "board[1].port");
    assert!(e.message.contains("missing"), "{e}");
}

#[test]
fn overrides_from_the_command_line() {
    let c = parse(EXAMPLE)
        .unwrap()
        .with_overrides(&Overrides {
            ports: vec!["/dev/ttyUSB0".into(), "/dev/pts/7".into()],
            bus: Some("unix:path=/tmp/bus".into()),
            rules: Some("rapid".into()),
            state_dir: Some("/srv/chess".into()),
        })
        .unwrap();
    assert_eq!(
        c.daemon.bus,
        BusChoice::Address("unix:path=/tmp/bus".into())
    );
    // pgn_dir set in the file stays; rules only change boards without their own.
    assert_eq!(c.daemon.pgn_dir(), PathBuf::from("/var/lib/eboardd/pgn"));
    let setups = c.board_specs();
    let ids: Vec<_> = setups.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["board_1", "ttyACM1", "ttyUSB0", "7"]);
    assert_eq!(setups[0].session.arbiter.rules, Rules::Blitz);
    assert_eq!(setups[1].session.arbiter.rules, Rules::Rapid);
    assert_eq!(setups[3].session.arbiter.rules, Rules::Rapid);

    let e = parse(EXAMPLE)
        .unwrap()
        .with_overrides(&Overrides {
            ports: vec!["/dev/ttyACM1".into()],
            ..Overrides::default()
        })
        .unwrap_err();
    assert_eq!(e.origin, ErrorOrigin::CommandLine);
    assert!(
        e.to_string().starts_with("command line: key `--port`: "),
        "{e}"
    );
    assert!(
        e.message.contains("line 83"),
        "names the configured board: {e}"
    );

    for (o, flag) in [
        (
            Overrides {
                bus: Some("tcp".into()),
                ..Overrides::default()
            },
            "--bus",
        ),
        (
            Overrides {
                rules: Some("classical".into()),
                ..Overrides::default()
            },
            "--rules",
        ),
        (
            Overrides {
                state_dir: Some(PathBuf::new()),
                ..Overrides::default()
            },
            "--state-dir",
        ),
        (
            Overrides {
                ports: vec!["/dev/x".into(), "/dev/x".into()],
                ..Overrides::default()
            },
            "--port",
        ),
    ] {
        let e = Config::default().with_overrides(&o).unwrap_err();
        assert_eq!(e.key.as_deref(), Some(flag), "{e}");
    }
}

#[test]
fn loading_files() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.toml");
    // No --config and no default file: built-in defaults.
    let c = Config::load_with_default(None, &missing).unwrap();
    assert_eq!(c, Config::default());
    // An explicit file must exist.
    let e = Config::load_with_default(Some(&missing), &missing).unwrap_err();
    assert!(e.to_string().contains("none.toml"), "{e}");
    // The default file is read when present, and errors name it.
    let file = dir.path().join("eboardd.toml");
    std::fs::write(&file, "[daemon]\nbus = \"session\"\n").unwrap();
    let c = Config::load_with_default(None, &file).unwrap();
    assert_eq!(c.daemon.bus, BusChoice::Session);
    assert_eq!(c.source.as_deref(), Some(file.as_path()));
    std::fs::write(&file, "[daemon]\n\nbus = \"bus\"\n").unwrap();
    let e = Config::load_with_default(None, &file).unwrap_err();
    assert!(
        e.to_string()
            .starts_with(&format!("{}:3: key `daemon.bus`: ", file.display())),
        "{e}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Any damage to a valid file is either accepted or reported at a line of the file.
    #[test]
    fn damaged_files_never_panic(edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6)) {
        let mut bytes = EXAMPLE.as_bytes().to_vec();
        for (at, b) in edits {
            let i = at.index(bytes.len());
            bytes[i] = b;
        }
        let text = String::from_utf8_lossy(&bytes);
        if let Err(e) = parse(&text) {
            let lines = text.lines().count().max(1);
            match e.origin {
                ErrorOrigin::File { line: Some(l), .. } => prop_assert!(l >= 1 && l <= lines + 1, "{}", e),
                ErrorOrigin::File { line: None, .. } => {}
                ErrorOrigin::CommandLine => prop_assert!(false, "{}", e),
            }
        }
    }

    #[test]
    fn arbitrary_text_never_panics(text in ".{0,200}") {
        let _ = parse(&text);
    }
}

#[test]
fn table_numbers_and_variants() {
    let c = parse(EXAMPLE).unwrap();
    let setups = c.board_specs();
    assert_eq!(setups[0].session.number, 1);
    assert_eq!(setups[1].session.number, 0, "no number: 0 on the bus");
    assert_eq!(
        setups[0].session.variant,
        eboard_core::vocab::Variant::Standard
    );
    let c = parse(
        "[daemon]\nvariant = \"chess960\"\n[[board]]\nport = \"/dev/a\"\nnumber = 7\n\
         [[board]]\nport = \"/dev/b\"\nvariant = \"standard\"\n",
    )
    .unwrap();
    let setups = c.board_specs();
    assert_eq!(
        setups[0].session.variant,
        eboard_core::vocab::Variant::Chess960
    );
    assert_eq!(setups[0].session.number, 7);
    assert_eq!(
        setups[1].session.variant,
        eboard_core::vocab::Variant::Standard
    );
}

#[test]
fn bad_table_numbers_and_variants_are_named() {
    let e = parse("[[board]]\nport = \"/dev/a\"\nnumber = 0\n").unwrap_err();
    assert_eq!(e.key.as_deref(), Some("board[1].number"), "{e}");
    assert!(e.to_string().contains(":3:"), "{e}");
    let e = parse(
        "[[board]]\nport = \"/dev/a\"\nnumber = 2\n[[board]]\nport = \"/dev/b\"\nnumber = 2\n",
    )
    .unwrap_err();
    assert_eq!(e.key.as_deref(), Some("board[2].number"), "{e}");
    assert!(
        e.message.contains("already") && e.message.contains("line 1"),
        "{e}"
    );
    let e = parse("[[board]]\nport = \"/dev/a\"\nnumber = \"3\"\n").unwrap_err();
    assert!(e.to_string().contains("number"), "{e}");
    let e = parse("[daemon]\nvariant = \"fischer\"\n").unwrap_err();
    assert_eq!(e.key.as_deref(), Some("daemon.variant"), "{e}");
    assert!(e.message.contains("chess960"), "{e}");
}

#[test]
fn ports_that_cannot_be_boards_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "not a board").unwrap();
    let text = format!(
        "[[board]]\nname = \"a\"\n\nport = \"{}\"\n",
        notes.display()
    );
    let e = rejected(&text, 4, "board[1].port");
    assert!(
        e.message.contains("a regular file") && e.message.contains("not a serial device"),
        "{e}"
    );
    let e = rejected("[[board]]\nport = \"/etc\"\n", 2, "board[1].port");
    assert!(e.message.contains("a directory"), "{e}");
    let e = rejected("[[board]]\nport = \"ttyACM0\"\n", 2, "board[1].port");
    assert!(e.message.contains("absolute"), "{e}");
    let long = format!("/{}", "x".repeat(5000));
    let e = rejected(
        &format!("[daemon]\n[[board]]\nport = \"{long}\"\n"),
        3,
        "board[1].port",
    );
    assert!(e.message.contains("at most 4095"), "{e}");
    let e = rejected(
        &format!(
            "[[board]]\nname = \"{}\"\nport = \"/dev/a\"\n",
            "n".repeat(300)
        ),
        2,
        "board[1].name",
    );
    assert!(e.message.contains("at most 200"), "{e}");
    // A character device is a board, and so is one that is not plugged in yet.
    let c = parse("[[board]]\nport = \"/dev/null\"\n[[board]]\nport = \"/dev/none/a\"\n").unwrap();
    assert_eq!(c.boards.len(), 2);
    // `--port` goes through the same check.
    let e = Config::default()
        .with_overrides(&Overrides {
            ports: vec![notes.display().to_string()],
            ..Overrides::default()
        })
        .unwrap_err();
    assert_eq!(e.key.as_deref(), Some("--port"), "{e}");
    assert!(e.message.contains("a regular file"), "{e}");
}

#[test]
fn the_protocol_key_picks_the_board_family_and_unknown_ones_are_refused() {
    use eboard_core::vocab::ProtocolSetting;
    let c = parse("[[board]]\nport = \"/dev/a\"\n").unwrap();
    assert_eq!(c.board_specs()[0].protocol, ProtocolSetting::Auto);
    for (word, setting) in [
        ("auto", ProtocolSetting::Auto),
        ("dgt", ProtocolSetting::Dgt),
        ("chesslink", ProtocolSetting::ChessLink),
    ] {
        let c = parse(&format!(
            "[[board]]\nport = \"/dev/a\"\nprotocol = \"{word}\"\n"
        ))
        .unwrap();
        assert_eq!(c.board_specs()[0].protocol, setting);
    }
    let e = rejected(
        "[[board]]\nport = \"/dev/a\"\n\n[[board]]\nport = \"/dev/b\"\nprotocol = \"millennium\"\n",
        6,
        "board[2].protocol",
    );
    let e = e.to_string();
    assert!(
        e.contains("\"auto\", \"dgt\" or \"chesslink\""),
        "the accepted words are named: {e}"
    );
}
