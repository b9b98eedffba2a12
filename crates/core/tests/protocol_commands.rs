//! Every host → board command against bytes written out by hand from the protocol fact sheet,
//! and the parser the board simulator uses to read them back.

use eboard_core::dgt::*;

fn t(hours: u8, minutes: u8, seconds: u8) -> DisplayTime {
    DisplayTime {
        hours,
        minutes,
        seconds,
    }
}

/// Encodes to `bytes`, and parsing `bytes` gives the command back using all of them.
fn exact(command: Command, bytes: &[u8]) {
    assert_eq!(command.to_bytes(), bytes, "{command:?}");
    assert_eq!(
        parse_command(bytes),
        Ok((command.clone(), bytes.len())),
        "{bytes:02x?}"
    );
}

#[test]
fn board_commands() {
    exact(Command::Reset, &[0x40]);
    exact(Command::SendClock, &[0x41]);
    exact(Command::SendBoard, &[0x42]);
    exact(Command::Update, &[0x43]);
    exact(Command::UpdateBoard, &[0x44]);
    exact(Command::SerialNumber, &[0x45]);
    exact(Command::BusAddress, &[0x46]);
    exact(Command::Trademark, &[0x47]);
    exact(Command::EeMoves, &[0x49]);
    exact(Command::UpdateNice, &[0x4B]);
    exact(Command::BatteryStatus, &[0x4C]);
    exact(Command::Version, &[0x4D]);
    exact(Command::LongSerialNumber, &[0x55]);
}

#[test]
fn clock_text_dgt3000() {
    exact(
        Command::Clock(ClockCommand::Ascii {
            text: ClockText::new("e2e4"),
            beep: AsciiBeep::new(3),
        }),
        &[
            0x2B, 0x0C, 0x03, 0x0C, b'e', b'2', b'e', b'4', b' ', b' ', b' ', b' ', 0x03, 0x00,
        ],
    );
    assert_eq!(ClockText::new("a very long text").as_str(), "a very l");
    assert_eq!(ClockText::new("ä\n").as_str(), "??      ");
    assert_eq!(AsciiBeep::new(99).value(), 15);
}

#[test]
fn clock_display_xl() {
    // "1A:BC 1D:EF" with A..F = "123456": wire order C, B, A, F, E, D.
    let display = XlDisplay {
        icons: 0x12,
        beep: true,
        ..XlDisplay::from_text("123456")
    };
    assert_eq!(display.digits, [0x06, 0x5B, 0x4F, 0x66, 0x6D, 0x7D]);
    exact(
        Command::Clock(ClockCommand::Display(display)),
        &[
            0x2B, 0x0B, 0x03, 0x01, 0x4F, 0x5B, 0x06, 0x7D, 0x6D, 0x66, 0x12, 0x03, 0x00,
        ],
    );
    // No beep is 0x01 as DGT documents; picochess's 0x00 reads as no beep too.
    let quiet = XlDisplay::from_text("0-");
    exact(
        Command::Clock(ClockCommand::Display(quiet)),
        &[
            0x2B, 0x0B, 0x03, 0x01, 0x00, 0x40, 0x3F, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00,
        ],
    );
    let picochess = [
        0x2B, 0x0B, 0x03, 0x01, 0x00, 0x40, 0x3F, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    ];
    assert_eq!(
        parse_command(&picochess),
        Ok((Command::Clock(ClockCommand::Display(quiet)), 13))
    );
}

#[test]
fn clock_icons_end_button_version_beep() {
    exact(
        Command::Clock(ClockCommand::Icons {
            icons: [0x01, 0x02, 0x04, 0x08],
            special: 0x41,
        }),
        &[
            0x2B, 0x0B, 0x03, 0x02, 0x01, 0x02, 0x04, 0x08, 0x41, 0x00, 0x00, 0x00, 0x00,
        ],
    );
    exact(
        Command::Clock(ClockCommand::End),
        &[0x2B, 0x03, 0x03, 0x03, 0x00],
    );
    exact(
        Command::Clock(ClockCommand::Button),
        &[0x2B, 0x03, 0x03, 0x08, 0x00],
    );
    // A Revelation II's own display: eleven characters, no beep.
    exact(
        Command::Clock(ClockCommand::RevelationText {
            text: RevelationText::new("BOARD 7"),
        }),
        &[
            0x2B, 0x0F, 0x03, 0x0D, b'B', b'O', b'A', b'R', b'D', b' ', b'7', b' ', b' ', b' ',
            b' ', 0x00, 0x00,
        ],
    );
    exact(
        Command::Clock(ClockCommand::Version),
        &[0x2B, 0x03, 0x03, 0x09, 0x00],
    );
    // 16 × 64 ms = 1024 ms.
    exact(
        Command::Clock(ClockCommand::Beep { units: 16 }),
        &[0x2B, 0x04, 0x03, 0x0B, 0x10, 0x00],
    );
}

#[test]
fn clock_set_and_run() {
    // `(left, right, which count up, which runs, switch on the lever)` and the bytes.
    let cases = [
        // Left 0:03:00 running, right 0:03:02 counting up: binary times, flags 0x01.
        (
            (t(0, 3, 0), t(0, 3, 2), [false, true], RunSide::Left, false),
            [
                0x2B, 0x0A, 0x03, 0x0A, 0x00, 0x03, 0x00, 0x10, 0x03, 0x02, 0x01, 0x00,
            ],
        ),
        (
            (
                t(1, 30, 0),
                t(0, 59, 59),
                [false, false],
                RunSide::Right,
                true,
            ),
            [
                0x2B, 0x0A, 0x03, 0x0A, 0x01, 0x1E, 0x00, 0x00, 0x3B, 0x3B, 0x0A, 0x00,
            ],
        ),
        (
            (
                t(0, 0, 0),
                t(0, 0, 0),
                [false, false],
                RunSide::Paused,
                false,
            ),
            [
                0x2B, 0x0A, 0x03, 0x0A, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
            ],
        ),
    ];
    for ((left, right, [left_counts_up, right_counts_up], run, switch_on_lever), bytes) in cases {
        let set = SetAndRun {
            left,
            right,
            left_counts_up,
            right_counts_up,
            run,
            switch_on_lever,
        };
        exact(Command::Clock(ClockCommand::SetAndRun(set)), &bytes);
    }
}

#[test]
fn forbidden_commands_are_reported() {
    for byte in [0x4E, 0x4A, 0x51, 0x53, 0x54] {
        assert!(
            matches!(
                parse_command(&[byte]),
                Err(ParseError::Rejected {
                    len: 1,
                    reason: RejectReason::Forbidden(_)
                })
            ),
            "{byte:#04x}"
        );
    }
}

#[test]
fn malformed_and_unknown_bytes() {
    let rejected = |bytes: &[u8]| match parse_command(bytes) {
        Err(ParseError::Rejected { len, reason }) => (len, reason),
        other => panic!("{bytes:02x?} -> {other:?}"),
    };
    assert_eq!(rejected(&[0x00]), (1, RejectReason::Unknown));
    assert_eq!(rejected(&[0x48]), (1, RejectReason::Unknown));
    assert!(matches!(
        rejected(&[0x2B, 0x02]),
        (2, RejectReason::Malformed(_))
    ));
    // No end byte.
    assert!(matches!(
        rejected(&[0x2B, 0x03, 0x03, 0x03, 0x01]),
        (5, RejectReason::Malformed(_))
    ));
    // Wrong size for the sub-command.
    assert!(matches!(
        rejected(&[0x2B, 0x04, 0x03, 0x03, 0x00, 0x00]),
        (6, RejectReason::Malformed(_))
    ));
    // Set-and-run with 60 minutes.
    assert!(matches!(
        rejected(&[0x2B, 0x0A, 0x03, 0x0A, 0, 60, 0, 0, 0, 0, 1, 0]),
        (12, RejectReason::Malformed(_))
    ));
    // Revelation II text of another length than eleven characters.
    assert!(matches!(
        rejected(&[0x2B, 0x05, 0x03, 0x0D, b'A', 0x00, 0x00]),
        (7, RejectReason::Unsupported(_))
    ));
    // Revelation II LEDs: all off.
    assert!(matches!(
        rejected(&[0x60, 0x04, 0x00, 0x40, 0x40, 0x00]),
        (6, RejectReason::Unsupported(_))
    ));
    assert_eq!(parse_command(&[]), Err(ParseError::Incomplete));
    assert_eq!(parse_command(&[0x2B]), Err(ParseError::Incomplete));
    assert_eq!(
        parse_command(&[0x2B, 0x03, 0x03, 0x03]),
        Err(ParseError::Incomplete)
    );
}

#[test]
fn command_decoder_streams_in_any_split() {
    let commands = vec![
        Command::Reset,
        Command::SendBoard,
        Command::UpdateNice,
        Command::Clock(ClockCommand::Version),
        Command::Clock(ClockCommand::Ascii {
            text: ClockText::new("hello"),
            beep: AsciiBeep::NONE,
        }),
        Command::Version,
    ];
    let mut bytes = Vec::new();
    for c in &commands {
        c.encode(&mut bytes);
    }
    // A forbidden byte in the middle is reported in its place.
    bytes.insert(2, 0x4E);
    for size in 1..=bytes.len() {
        let mut decoder = CommandDecoder::new();
        let mut got = Vec::new();
        for chunk in bytes.chunks(size) {
            decoder.push(chunk);
            while let Some(item) = decoder.next_command() {
                got.push(item);
            }
        }
        assert_eq!(decoder.pending_len(), 0);
        assert_eq!(got.len(), commands.len() + 1, "chunks of {size}");
        assert_eq!(
            got[2],
            Err(RejectedCommand {
                bytes: vec![0x4E],
                reason: RejectReason::Forbidden("start boot loader")
            })
        );
        let ok: Vec<Command> = got.into_iter().filter_map(Result::ok).collect();
        assert_eq!(ok, commands);
    }
}

#[test]
fn ack_echo_and_replies() {
    assert_eq!(ClockCommand::Version.sub_command(), 0x09);
    assert_eq!(
        ClockCommand::Ascii {
            text: ClockText::new(""),
            beep: AsciiBeep::NONE
        }
        .sub_command(),
        0x0C
    );
    assert!(!Command::Reset.expects_reply());
    assert!(!Command::UpdateNice.expects_reply());
    assert!(Command::SendBoard.expects_reply());
}

#[test]
fn meaningless_high_bits_are_dropped_when_parsing() {
    // Found by fuzzing: a segment byte with bit 7 set must parse to what re-encodes to itself.
    let bytes = [
        0x2B, 0x0B, 0x03, 0x01, 0x00, 0x00, 0x00, 0xCC, 0x00, 0x00, 0xFF, 0x01, 0x00,
    ];
    let (command, len) = parse_command(&bytes).expect("a display command");
    assert_eq!(len, 13);
    let Command::Clock(ClockCommand::Display(display)) = &command else {
        panic!("{command:?}")
    };
    // Wire order C, B, A, F, E, D: the fourth byte is digit F.
    assert_eq!(display.digits, [0, 0, 0, 0, 0, 0x4C]);
    assert_eq!(display.icons, 0x3F);
    assert_eq!(
        parse_command(&command.to_bytes()),
        Ok((command.clone(), 13))
    );
}
