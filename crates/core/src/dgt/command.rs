//! Typed host → board commands: every board command a daemon may send and every clock command
//! (wrapped in DGT_CLOCK_MESSAGE), with their exact wire bytes, and the parser that reads them
//! back (the board simulator uses it to understand what the daemon sends).
//!
//! Commands that must never reach a chess board — the boot loader (0x4E), the scan settings
//! written to EEPROM (0x51, 0x53, 0x54) and bus mode (0x4A) — have no [`Command`] value, so
//! the daemon cannot send them; the parser reports them as [`RejectReason::Forbidden`].
//!
//! Clock frame: `2B <size> 03 <sub-command> <payload> 00`, where size counts the bytes after
//! the size byte.

use std::collections::VecDeque;

use super::message::DisplayTime;

const SEND_RESET: u8 = 0x40;
const SEND_CLK: u8 = 0x41;
const SEND_BRD: u8 = 0x42;
const SEND_UPDATE: u8 = 0x43;
const SEND_UPDATE_BRD: u8 = 0x44;
const RETURN_SERIALNR: u8 = 0x45;
const RETURN_BUSADRES: u8 = 0x46;
const SEND_TRADEMARK: u8 = 0x47;
const SEND_EE_MOVES: u8 = 0x49;
const TO_BUSMODE: u8 = 0x4A;
const SEND_UPDATE_NICE: u8 = 0x4B;
const SEND_BATTERY_STATUS: u8 = 0x4C;
const SEND_VERSION: u8 = 0x4D;
const START_BOOTLOADER: u8 = 0x4E;
const SCAN_50B: u8 = 0x51;
const SCAN_50W: u8 = 0x53;
const SCAN_100: u8 = 0x54;
const RETURN_LONG_SERIALNR: u8 = 0x55;
const SET_LEDS: u8 = 0x60;

/// DGT_CLOCK_MESSAGE, the wrapper byte of every clock command.
pub const CLOCK_MESSAGE: u8 = 0x2B;
const CLOCK_START: u8 = 0x03;
const CLOCK_END: u8 = 0x00;

const CLK_DISPLAY: u8 = 0x01;
const CLK_ICONS: u8 = 0x02;
const CLK_END: u8 = 0x03;
const CLK_BUTTON: u8 = 0x08;
const CLK_VERSION: u8 = 0x09;
const CLK_SETNRUN: u8 = 0x0A;
const CLK_BEEP: u8 = 0x0B;
const CLK_ASCII: u8 = 0x0C;
const CLK_REV2_ASCII: u8 = 0x0D;

/// The largest clock frame size byte the parser waits for; real ones are at most 0x0F.
const MAX_CLOCK_SIZE: u8 = 0x20;

/// A command from the host to the board.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Command {
    /// 0x40: go to IDLE, cancelling any update mode. No reply.
    Reset,
    /// 0x41: reply with one clock message; the mode is unchanged.
    SendClock,
    /// 0x42: reply with a board dump; the mode is unchanged.
    SendBoard,
    /// 0x43: UPDATE mode — field updates, and clock messages at least once a second.
    Update,
    /// 0x44: UPDATE_BOARD mode — field updates only, no clock data and no clock acks.
    UpdateBoard,
    /// 0x4B: UPDATE_NICE mode — field updates, and clock messages when clock data changed.
    UpdateNice,
    /// 0x45: reply with the serial number.
    SerialNumber,
    /// 0x55: reply with the long (10-digit) serial number.
    LongSerialNumber,
    /// 0x46: reply with the bus address.
    BusAddress,
    /// 0x47: reply with the trademark text.
    Trademark,
    /// 0x4D: reply with the firmware version.
    Version,
    /// 0x4C: reply with the battery status (Bluetooth boards).
    BatteryStatus,
    /// 0x49: reply with the EEPROM move log (about 8 KB, ~8 s at 9600 baud).
    EeMoves,
    /// 0x2B …: a command for the clock plugged into the board.
    Clock(ClockCommand),
}

/// A command for the clock, sent through the board.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ClockCommand {
    /// 0x0C: eight characters of text (DGT 3000 only).
    Ascii { text: ClockText, beep: AsciiBeep },
    /// 0x01: the XL's six 7-segment digits.
    Display(XlDisplay),
    /// 0x02: icon bytes (TIME/FISCH/DELAY/... symbols, period numbers, flags), then the
    /// "special" byte (bit 0 clears all icons; bit 6 keeps them after a time change).
    Icons { icons: [u8; 4], special: u8 },
    /// 0x03: clear the message and go back to showing the times.
    End,
    /// 0x0A: set both times and which side runs (clock "mode 23" only).
    SetAndRun(SetAndRun),
    /// 0x0B: beep for `units` × 64 ms.
    Beep { units: u8 },
    /// 0x09: ask the clock's version (it comes back in an ack).
    Version,
    /// 0x08: ask which button is pressed (the ack carries no button data).
    Button,
    /// 0x0D: eleven characters on a Revelation II's own display (firmware 3.25 or later),
    /// without a beep.
    RevelationText { text: RevelationText },
}

/// Exactly eleven printable ASCII characters for a Revelation II's display.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RevelationText([u8; 11]);

impl RevelationText {
    /// Text cut or padded with spaces to eleven characters; characters outside printable
    /// ASCII are shown as `?`.
    pub fn new(text: &str) -> Self {
        let mut bytes = [b' '; 11];
        for (slot, c) in bytes.iter_mut().zip(text.chars()) {
            *slot = if c.is_ascii_graphic() || c == ' ' {
                c as u8
            } else {
                b'?'
            };
        }
        RevelationText(bytes)
    }

    pub fn as_bytes(&self) -> &[u8; 11] {
        &self.0
    }

    pub fn as_str(&self) -> &str {
        // Only printable ASCII is ever stored.
        std::str::from_utf8(&self.0).unwrap_or("")
    }
}

/// Exactly eight printable ASCII characters for the DGT 3000 display.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClockText([u8; 8]);

impl ClockText {
    /// Text cut or padded with spaces to eight characters; characters outside printable
    /// ASCII are shown as `?`.
    pub fn new(text: &str) -> Self {
        let mut bytes = [b' '; 8];
        for (slot, c) in bytes.iter_mut().zip(text.chars()) {
            *slot = if c.is_ascii_graphic() || c == ' ' {
                c as u8
            } else {
                b'?'
            };
        }
        ClockText(bytes)
    }

    /// The bytes exactly as given, if all are printable ASCII.
    pub fn from_bytes(bytes: [u8; 8]) -> Option<Self> {
        bytes
            .iter()
            .all(|&b| (0x20..=0x7E).contains(&b))
            .then_some(ClockText(bytes))
    }

    pub fn as_bytes(&self) -> &[u8; 8] {
        &self.0
    }

    pub fn as_str(&self) -> &str {
        // Only printable ASCII is ever stored.
        std::str::from_utf8(&self.0).unwrap_or("")
    }
}

/// Beep of the DGT 3000 text command: 0 = none, otherwise 62.5 ms + value/16 s (0–15).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AsciiBeep(u8);

impl AsciiBeep {
    pub const NONE: AsciiBeep = AsciiBeep(0);

    /// Values above 15 are capped at 15.
    pub fn new(value: u8) -> Self {
        AsciiBeep(value.min(15))
    }

    pub fn value(self) -> u8 {
        self.0
    }
}

/// Contents of the DGT XL display, laid out as "1A:BC 1D:EF".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct XlDisplay {
    /// Segment bytes of digits A, B, C, D, E, F (left to right as read). Bits: 0x01 top,
    /// 0x02 upper right, 0x04 lower right, 0x08 bottom, 0x10 lower left, 0x20 upper left,
    /// 0x40 middle. Bit 7 is not sent.
    pub digits: [u8; 6],
    /// 0x01 right dot, 0x02 right colon, 0x04 right "1", 0x08 left dot, 0x10 left colon,
    /// 0x20 left "1".
    pub icons: u8,
    pub beep: bool,
}

impl XlDisplay {
    /// Six characters of text as 7-segment digits (characters without a segment shape show
    /// as blank), no icons, no beep.
    pub fn from_text(text: &str) -> Self {
        let mut digits = [0; 6];
        for (slot, c) in digits.iter_mut().zip(text.chars()) {
            *slot = segments_for(c);
        }
        XlDisplay {
            digits,
            icons: 0,
            beep: false,
        }
    }

    /// The payload in wire order: C, B, A, F, E, D, icons, beep (0x03 beep, 0x01 none).
    fn wire(&self) -> [u8; 8] {
        let [a, b, c, d, e, f] = self.digits.map(|s| s & 0x7F);
        [
            c,
            b,
            a,
            f,
            e,
            d,
            self.icons & 0x3F,
            if self.beep { 0x03 } else { 0x01 },
        ]
    }

    /// Bits that carry no meaning (bit 7 of a segment, bits 6–7 of the icons) are dropped, as
    /// [`wire`](Self::wire) never sends them.
    fn from_wire(p: &[u8; 8]) -> Self {
        XlDisplay {
            digits: [p[2], p[1], p[0], p[5], p[4], p[3]].map(|s| s & 0x7F),
            icons: p[6] & 0x3F,
            beep: p[7] & 0x02 != 0,
        }
    }
}

/// The 7-segment shape of a character on the XL, 0 (blank) for characters it cannot show.
pub fn segments_for(c: char) -> u8 {
    match c.to_ascii_lowercase() {
        '0' => 0x3F,
        '1' | 'i' => 0x06,
        '2' | 'z' => 0x5B,
        '3' => 0x4F,
        '4' => 0x66,
        '5' | 's' => 0x6D,
        '6' => 0x7D,
        '7' => 0x07,
        '8' => 0x7F,
        '9' | 'g' => 0x6F,
        'a' => 0x77,
        'b' => 0x7C,
        'c' => 0x39,
        'd' => 0x5E,
        'e' => 0x79,
        'f' => 0x71,
        'h' => 0x76,
        'j' => 0x1E,
        'l' => 0x38,
        'n' => 0x54,
        'o' => 0x5C,
        'p' => 0x73,
        'q' => 0x67,
        'r' => 0x50,
        't' => 0x78,
        'u' => 0x3E,
        'y' => 0x6E,
        '-' => 0x40,
        '_' => 0x08,
        _ => 0,
    }
}

/// Which side the clock runs after a set-and-run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RunSide {
    /// Flag 0x01: the left display runs.
    Left,
    /// Flag 0x02: the right display runs.
    Right,
    /// Flag 0x04: both stopped.
    Paused,
}

/// Set both clock times and start one side (sub-command 0x0A). Times go on the wire as plain
/// binary hours, minutes and seconds (as every known implementation sends them), hours 0–9,
/// minutes and seconds 0–59; larger values are capped when encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SetAndRun {
    pub left: DisplayTime,
    pub right: DisplayTime,
    /// Count this side up instead of down (hours byte | 0x10; not on XL firmware ≤ 1.14).
    pub left_counts_up: bool,
    pub right_counts_up: bool,
    pub run: RunSide,
    /// Flag 0x08: the running side follows the lever.
    pub switch_on_lever: bool,
}

const COUNT_UP: u8 = 0x10;
const FLAG_SWITCH_ON_LEVER: u8 = 0x08;

impl SetAndRun {
    fn wire(&self) -> [u8; 7] {
        let side = |t: DisplayTime, up: bool| {
            [
                t.hours.min(9) | if up { COUNT_UP } else { 0 },
                t.minutes.min(59),
                t.seconds.min(59),
            ]
        };
        let [lh, lm, ls] = side(self.left, self.left_counts_up);
        let [rh, rm, rs] = side(self.right, self.right_counts_up);
        let run = match self.run {
            RunSide::Left => 0x01,
            RunSide::Right => 0x02,
            RunSide::Paused => 0x04,
        };
        let lever = if self.switch_on_lever {
            FLAG_SWITCH_ON_LEVER
        } else {
            0
        };
        [lh, lm, ls, rh, rm, rs, run | lever]
    }

    fn from_wire(p: &[u8; 7]) -> Result<Self, RejectReason> {
        let side = |h: u8, m: u8, s: u8| {
            let hours = h & !COUNT_UP;
            (hours <= 9 && m <= 59 && s <= 59)
                .then_some((
                    DisplayTime {
                        hours,
                        minutes: m,
                        seconds: s,
                    },
                    h & COUNT_UP != 0,
                ))
                .ok_or(RejectReason::Malformed("set-and-run time out of range"))
        };
        let (left, left_counts_up) = side(p[0], p[1], p[2])?;
        let (right, right_counts_up) = side(p[3], p[4], p[5])?;
        let run = match p[6] & !FLAG_SWITCH_ON_LEVER {
            0x01 => RunSide::Left,
            0x02 => RunSide::Right,
            0x04 => RunSide::Paused,
            _ => {
                return Err(RejectReason::Malformed(
                    "set-and-run flags name no single side",
                ));
            }
        };
        Ok(SetAndRun {
            left,
            right,
            left_counts_up,
            right_counts_up,
            run,
            switch_on_lever: p[6] & FLAG_SWITCH_ON_LEVER != 0,
        })
    }
}

impl Command {
    /// Append this command's exact wire bytes to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let byte = match self {
            Command::Reset => SEND_RESET,
            Command::SendClock => SEND_CLK,
            Command::SendBoard => SEND_BRD,
            Command::Update => SEND_UPDATE,
            Command::UpdateBoard => SEND_UPDATE_BRD,
            Command::UpdateNice => SEND_UPDATE_NICE,
            Command::SerialNumber => RETURN_SERIALNR,
            Command::LongSerialNumber => RETURN_LONG_SERIALNR,
            Command::BusAddress => RETURN_BUSADRES,
            Command::Trademark => SEND_TRADEMARK,
            Command::Version => SEND_VERSION,
            Command::BatteryStatus => SEND_BATTERY_STATUS,
            Command::EeMoves => SEND_EE_MOVES,
            Command::Clock(clock) => return clock.encode(out),
        };
        out.push(byte);
    }

    /// The command's wire bytes as a new vector.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }

    /// Whether the board answers this command with a message.
    pub fn expects_reply(&self) -> bool {
        !matches!(
            self,
            Command::Reset | Command::Update | Command::UpdateBoard | Command::UpdateNice
        )
    }
}

impl ClockCommand {
    /// Append the whole DGT_CLOCK_MESSAGE frame to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut frame = |sub: u8, payload: &[u8]| {
            // size = start byte + sub-command + payload + end byte.
            out.extend_from_slice(&[CLOCK_MESSAGE, (payload.len() + 3) as u8, CLOCK_START, sub]);
            out.extend_from_slice(payload);
            out.push(CLOCK_END);
        };
        match self {
            ClockCommand::Ascii { text, beep } => {
                let mut p = [0; 9];
                p[..8].copy_from_slice(text.as_bytes());
                p[8] = beep.value();
                frame(CLK_ASCII, &p);
            }
            ClockCommand::Display(display) => frame(CLK_DISPLAY, &display.wire()),
            ClockCommand::Icons { icons, special } => {
                let [a, b, c, d] = icons.map(|i| i & 0x7F);
                frame(CLK_ICONS, &[a, b, c, d, special & 0x7F, 0, 0, 0]);
            }
            ClockCommand::End => frame(CLK_END, &[]),
            ClockCommand::SetAndRun(set) => frame(CLK_SETNRUN, &set.wire()),
            ClockCommand::Beep { units } => frame(CLK_BEEP, &[*units]),
            ClockCommand::Version => frame(CLK_VERSION, &[]),
            ClockCommand::Button => frame(CLK_BUTTON, &[]),
            ClockCommand::RevelationText { text } => {
                let mut p = [0; 12];
                p[..11].copy_from_slice(text.as_bytes());
                frame(CLK_REV2_ASCII, &p);
            }
        }
    }

    /// The clock sub-command byte, which a successful ack echoes in its second byte.
    pub fn sub_command(&self) -> u8 {
        match self {
            ClockCommand::Ascii { .. } => CLK_ASCII,
            ClockCommand::Display(_) => CLK_DISPLAY,
            ClockCommand::Icons { .. } => CLK_ICONS,
            ClockCommand::End => CLK_END,
            ClockCommand::SetAndRun(_) => CLK_SETNRUN,
            ClockCommand::Beep { .. } => CLK_BEEP,
            ClockCommand::Version => CLK_VERSION,
            ClockCommand::Button => CLK_BUTTON,
            ClockCommand::RevelationText { .. } => CLK_REV2_ASCII,
        }
    }
}

/// Why bytes from the host were not a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RejectReason {
    /// A command that must never reach a chess board (boot loader, EEPROM scan settings, bus
    /// mode); the name says which.
    Forbidden(&'static str),
    /// A real DGT command this crate does not speak (draughts dumps, Revelation II LEDs and
    /// text); its whole frame is consumed.
    Unsupported(&'static str),
    /// A byte that starts no command.
    Unknown,
    /// A clock frame with a wrong size, start or end byte, or impossible values.
    Malformed(&'static str),
}

/// Result of [`parse_command`] when the bytes do not start with a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParseError {
    /// More bytes are needed to tell.
    Incomplete,
    /// The first `len` bytes (at least 1) are not a command.
    Rejected { len: usize, reason: RejectReason },
}

/// Parse one command from the start of `bytes`: the command and how many bytes it used.
pub fn parse_command(bytes: &[u8]) -> Result<(Command, usize), ParseError> {
    let Some(&first) = bytes.first() else {
        return Err(ParseError::Incomplete);
    };
    let reject = |len, reason| Err(ParseError::Rejected { len, reason });
    let single = match first {
        SEND_RESET => Command::Reset,
        SEND_CLK => Command::SendClock,
        SEND_BRD => Command::SendBoard,
        SEND_UPDATE => Command::Update,
        SEND_UPDATE_BRD => Command::UpdateBoard,
        SEND_UPDATE_NICE => Command::UpdateNice,
        RETURN_SERIALNR => Command::SerialNumber,
        RETURN_LONG_SERIALNR => Command::LongSerialNumber,
        RETURN_BUSADRES => Command::BusAddress,
        SEND_TRADEMARK => Command::Trademark,
        SEND_VERSION => Command::Version,
        SEND_BATTERY_STATUS => Command::BatteryStatus,
        SEND_EE_MOVES => Command::EeMoves,
        START_BOOTLOADER => return reject(1, RejectReason::Forbidden("start boot loader")),
        TO_BUSMODE => return reject(1, RejectReason::Forbidden("switch to bus mode")),
        SCAN_50B | SCAN_50W | SCAN_100 => {
            return reject(1, RejectReason::Forbidden("scan setting written to EEPROM"));
        }
        0x50 | 0x52 => return reject(1, RejectReason::Unsupported("draughts board dump")),
        SET_LEDS => {
            // `60 <size> <size bytes>` (Revelation II only).
            let Some(&size) = bytes.get(1) else {
                return Err(ParseError::Incomplete);
            };
            if size > MAX_CLOCK_SIZE {
                return reject(2, RejectReason::Malformed("LED frame size"));
            }
            let total = 2 + usize::from(size);
            if bytes.len() < total {
                return Err(ParseError::Incomplete);
            }
            return reject(total, RejectReason::Unsupported("Revelation II LEDs"));
        }
        CLOCK_MESSAGE => return parse_clock(bytes),
        _ => return reject(1, RejectReason::Unknown),
    };
    Ok((single, 1))
}

fn parse_clock(bytes: &[u8]) -> Result<(Command, usize), ParseError> {
    let Some(&size) = bytes.get(1) else {
        return Err(ParseError::Incomplete);
    };
    if !(3..=MAX_CLOCK_SIZE).contains(&size) {
        return Err(ParseError::Rejected {
            len: 2,
            reason: RejectReason::Malformed("clock frame size"),
        });
    }
    let total = 2 + usize::from(size);
    let Some(frame) = bytes.get(..total) else {
        return Err(ParseError::Incomplete);
    };
    let reject = |reason| {
        Err(ParseError::Rejected {
            len: total,
            reason: RejectReason::Malformed(reason),
        })
    };
    if frame[2] != CLOCK_START {
        return reject("clock frame without start byte 03");
    }
    if frame[total - 1] != CLOCK_END {
        return reject("clock frame without end byte 00");
    }
    let sub = frame[3];
    let payload = &frame[4..total - 1];
    let clock = match (sub, payload.len()) {
        (CLK_ASCII, 9) => {
            let mut text = [0; 8];
            text.copy_from_slice(&payload[..8]);
            let Some(text) = ClockText::from_bytes(text) else {
                return reject("clock text is not printable ASCII");
            };
            if payload[8] > 15 {
                return reject("clock text beep above 15");
            }
            ClockCommand::Ascii {
                text,
                beep: AsciiBeep(payload[8]),
            }
        }
        (CLK_DISPLAY, 8) => {
            let mut p = [0; 8];
            p.copy_from_slice(payload);
            ClockCommand::Display(XlDisplay::from_wire(&p))
        }
        (CLK_ICONS, 8) => ClockCommand::Icons {
            icons: [payload[0], payload[1], payload[2], payload[3]].map(|i| i & 0x7F),
            special: payload[4] & 0x7F,
        },
        (CLK_END, 0) => ClockCommand::End,
        (CLK_BUTTON, 0) => ClockCommand::Button,
        (CLK_VERSION, 0) => ClockCommand::Version,
        (CLK_BEEP, 1) => ClockCommand::Beep { units: payload[0] },
        (CLK_SETNRUN, 7) => {
            let mut p = [0; 7];
            p.copy_from_slice(payload);
            match SetAndRun::from_wire(&p) {
                Ok(set) => ClockCommand::SetAndRun(set),
                Err(reason) => {
                    return Err(ParseError::Rejected { len: total, reason });
                }
            }
        }
        (CLK_REV2_ASCII, 12) => {
            let mut text = [0; 11];
            text.copy_from_slice(&payload[..11]);
            if !text.iter().all(|b| (0x20..=0x7E).contains(b)) {
                return reject("Revelation II text is not printable ASCII");
            }
            ClockCommand::RevelationText {
                text: RevelationText(text),
            }
        }
        (CLK_REV2_ASCII, _) => {
            return Err(ParseError::Rejected {
                len: total,
                reason: RejectReason::Unsupported("Revelation II text of another size"),
            });
        }
        _ => return reject("unknown clock sub-command or wrong size for it"),
    };
    Ok((Command::Clock(clock), total))
}

/// Bytes from the host that were not a command, as [`CommandDecoder`] reports them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RejectedCommand {
    pub bytes: Vec<u8>,
    pub reason: RejectReason,
}

/// Streaming parser for the host → board direction (the simulator's side of the wire): push
/// byte chunks of any size, take commands or rejections in order. At most one incomplete
/// command (≤ 34 bytes) is held back.
#[derive(Debug, Clone, Default)]
pub struct CommandDecoder {
    pending: Vec<u8>,
    ready: VecDeque<Result<Command, RejectedCommand>>,
}

impl CommandDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Parse `bytes` and queue every command (or rejected run of bytes) they complete.
    pub fn push(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        let mut used = 0;
        loop {
            match parse_command(&self.pending[used..]) {
                Ok((command, len)) => {
                    self.ready.push_back(Ok(command));
                    used += len;
                }
                Err(ParseError::Rejected { len, reason }) => {
                    self.ready.push_back(Err(RejectedCommand {
                        bytes: self.pending[used..used + len].to_vec(),
                        reason,
                    }));
                    used += len;
                }
                Err(ParseError::Incomplete) => break,
            }
        }
        self.pending.drain(..used);
    }

    /// The next command or rejection, oldest first.
    pub fn next_command(&mut self) -> Option<Result<Command, RejectedCommand>> {
        self.ready.pop_front()
    }

    /// Bytes of an incomplete command held back.
    pub fn pending_len(&self) -> usize {
        self.pending.len()
    }
}
