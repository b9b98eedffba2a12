//! One complete board → host frame ⇄ one [`Message`]: the payload parser the decoder calls once
//! it has framed a message, and [`Message::encode`], its exact inverse (the board simulator
//! speaks like a real board with it).
//!
//! Inverse means: for every message the decoder can produce, decoding `encode(m)` yields `m`
//! again; for a frame written the way real boards write them (as in the shared captures),
//! `encode(decode(frame))` gives back the very same bytes. Bits no field carries (for example
//! an ack's status byte) are written as 0.

use super::ee_moves;
use super::message::*;
use super::stats::DecoderStats;
use super::wire::*;

/// Why a framed payload was refused (the decoder drops the frame and counts it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BadPayload {
    /// Minutes or seconds not BCD 00–59, or an hours nibble of 11–15.
    ClockTime,
    /// A field index above 63.
    FieldIndex,
    /// A length that is impossible for this id (the decoder checks lengths first).
    Length,
}

/// Parse the payload (header stripped) of a frame whose id and total length were already
/// checked with [`frame_len_ok`].
pub(crate) fn parse_payload(
    id: u8,
    payload: &[u8],
    stats: &mut DecoderStats,
) -> Result<Message, BadPayload> {
    match id {
        MSG_BOARD_DUMP => {
            let codes: &[u8; 64] = payload.try_into().map_err(|_| BadPayload::Length)?;
            let mut fields = Box::new([None; 64]);
            for (slot, &code) in fields.iter_mut().zip(codes) {
                *slot = field_content(code, stats);
            }
            Ok(Message::BoardDump(fields))
        }
        MSG_FIELD_UPDATE => {
            let [field, code] = *payload else {
                return Err(BadPayload::Length);
            };
            if field > 63 {
                return Err(BadPayload::FieldIndex);
            }
            Ok(Message::FieldUpdate {
                field,
                content: field_content(code, stats),
            })
        }
        MSG_BWTIME => {
            let p: &[u8; 7] = payload.try_into().map_err(|_| BadPayload::Length)?;
            parse_bwtime(p, stats)
        }
        MSG_EE_MOVES => Ok(Message::EeMoves(ee_moves::parse(payload, stats))),
        MSG_BUSADRES => {
            let [hi, lo] = *payload else {
                return Err(BadPayload::Length);
            };
            Ok(Message::BusAddress((u16::from(hi) << 7) | u16::from(lo)))
        }
        MSG_SERIALNR => Ok(Message::SerialNumber(printable(payload, Lines::One, stats))),
        MSG_LONG_SERIALNR => Ok(Message::LongSerialNumber(printable(
            payload,
            Lines::One,
            stats,
        ))),
        MSG_TRADEMARK => Ok(Message::Trademark(printable(payload, Lines::Many, stats))),
        MSG_VERSION => {
            let [major, minor] = *payload else {
                return Err(BadPayload::Length);
            };
            Ok(Message::Version { major, minor })
        }
        MSG_BATTERY_STATUS => {
            let p: &[u8; 9] = payload.try_into().map_err(|_| BadPayload::Length)?;
            Ok(Message::BatteryStatus(BatteryStatus {
                percent: p[0],
                time_left: if p[1] == BATTERY_NOT_AVAILABLE && p[2] == BATTERY_NOT_AVAILABLE {
                    None
                } else {
                    Some((p[1], p[2]))
                },
                on_time: (p[3], p[4]),
                standby: (p[5], p[6], p[7]),
                charging: p[8] & 0x01 != 0,
                discharging: p[8] & 0x02 != 0,
            }))
        }
        _ => Err(BadPayload::Length),
    }
}

/// Battery "time left" bytes when the board cannot say.
const BATTERY_NOT_AVAILABLE: u8 = 0x7F;

fn field_content(code: u8, stats: &mut DecoderStats) -> FieldContent {
    match piece_from_code(code) {
        PieceCode::Known(content) => content,
        PieceCode::Unknown => {
            stats.unknown_piece_codes += 1;
            None
        }
    }
}

/// What a text byte that is not printable ASCII becomes (and what [`Message::encode`] writes
/// for a character it cannot send, so the two agree).
const UNPRINTABLE: char = '?';

/// Whether a board's text may span lines: the trademark does (a real board sends several
/// lines, each ended by CR LF), a serial number does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lines {
    One,
    Many,
}

/// Whether `c` may stand in a board's text as it is: printable ASCII, and CR and LF where the
/// text has lines.
fn keeps(c: char, lines: Lines) -> bool {
    c == ' ' || c.is_ascii_graphic() || (lines == Lines::Many && matches!(c, '\r' | '\n'))
}

/// A board's text (serial numbers, trademark) as printable ASCII: every other byte becomes
/// [`UNPRINTABLE`] and is counted in [`DecoderStats::unprintable_text_bytes`]. Real boards
/// send digits and letters; a NUL would make the string unsendable on D-Bus (the bus drops
/// the sender) and an escape byte would steer the terminal that shows it, so neither leaves
/// the decoder.
fn printable(payload: &[u8], lines: Lines, stats: &mut DecoderStats) -> String {
    payload
        .iter()
        .map(|&b| {
            let c = char::from(b);
            if keeps(c, lines) {
                c
            } else {
                stats.unprintable_text_bytes += 1;
                UNPRINTABLE
            }
        })
        .collect()
}

/// The hours nibble value that marks a clock ack instead of a time.
const ACK_NIBBLE: u8 = 0x0A;

fn parse_bwtime(p: &[u8; 7], stats: &mut DecoderStats) -> Result<Message, BadPayload> {
    if p.iter().all(|&b| b == 0) {
        return Ok(Message::ClockEmpty);
    }
    if p[0] & 0x0F == ACK_NIBBLE || p[3] & 0x0F == ACK_NIBBLE {
        // The four ack bytes travel with bit 7 stripped; their bit 7 rides in bits 4 and 5
        // of the two hours bytes.
        let high = |byte: u8, bit: u8| ((byte >> bit) & 1) << 7;
        return Ok(Message::ClockAck(ClockAck {
            bytes: [
                p[1] | high(p[3], 4),
                p[2] | high(p[3], 5),
                p[4] | high(p[0], 4),
                p[5] | high(p[0], 5),
            ],
        }));
    }
    let status = ClockStatus::from_byte(p[6]);
    let right = display_time(p[0], p[1], p[2]);
    let left = display_time(p[3], p[4], p[5]);
    let (right, left) = match (right, left) {
        (Some(r), Some(l)) => (r, l),
        // Without a clock the times are documented as invalid; the "not connected" news
        // matters more than the digits, so keep the message with zeroed times.
        _ if !status.connected => {
            stats.zeroed_clock_times += 1;
            (DisplayTime::default(), DisplayTime::default())
        }
        _ => return Err(BadPayload::ClockTime),
    };
    let times = ClockReading {
        right,
        right_flags: display_flags(p[0]),
        left,
        left_flags: display_flags(p[3]),
        status,
    };
    // Only bits that mean nothing (status bits 6-7) were set: as empty as all zeros, and it
    // must decode the same as its own encoding does.
    if times.payload() == [0; 7] {
        return Ok(Message::ClockEmpty);
    }
    Ok(Message::ClockTimes(times))
}

fn display_time(hours: u8, minutes: u8, seconds: u8) -> Option<DisplayTime> {
    let hours = hours & 0x0F;
    if hours > 9 {
        return None;
    }
    Some(DisplayTime {
        hours,
        minutes: bcd_minsec(minutes)?,
        seconds: bcd_minsec(seconds)?,
    })
}

fn display_flags(hours_byte: u8) -> DisplayFlags {
    DisplayFlags {
        flag_fallen: hours_byte & 0x10 != 0,
        time_per_move: hours_byte & 0x20 != 0,
        flag_shown: hours_byte & 0x40 != 0,
    }
}

fn hours_byte(time: DisplayTime, flags: DisplayFlags) -> u8 {
    time.hours.min(9)
        | if flags.flag_fallen { 0x10 } else { 0 }
        | if flags.time_per_move { 0x20 } else { 0 }
        | if flags.flag_shown { 0x40 } else { 0 }
}

fn time_bytes(time: DisplayTime, flags: DisplayFlags) -> [u8; 3] {
    [
        hours_byte(time, flags),
        to_bcd(time.minutes.min(59)),
        to_bcd(time.seconds.min(59)),
    ]
}

impl ClockReading {
    /// The seven BWTIME payload bytes of this reading.
    pub fn payload(&self) -> [u8; 7] {
        let [r0, r1, r2] = time_bytes(self.right, self.right_flags);
        let [l0, l1, l2] = time_bytes(self.left, self.left_flags);
        [r0, r1, r2, l0, l1, l2, self.status.to_byte()]
    }
}

impl ClockStatus {
    /// Read a status byte (wire byte 9) with the bit meanings of a real DGT 3000; bits 6 and
    /// 7 (always 0) are ignored.
    pub fn from_byte(byte: u8) -> Self {
        ClockStatus {
            running: byte & 0x01 != 0,
            lever_left_down: byte & 0x02 != 0,
            battery_low: byte & 0x04 != 0,
            left_running: byte & 0x08 != 0,
            right_running: byte & 0x10 != 0,
            connected: byte & 0x20 == 0,
        }
    }

    /// The status byte (wire byte 9) with the bit meanings of a real DGT 3000.
    pub fn to_byte(&self) -> u8 {
        u8::from(self.running)
            | u8::from(self.lever_left_down) << 1
            | u8::from(self.battery_low) << 2
            | u8::from(self.left_running) << 3
            | u8::from(self.right_running) << 4
            | u8::from(!self.connected) << 5
    }
}

impl ClockAck {
    /// The seven BWTIME payload bytes carrying this ack (both hours nibbles 0x0A, status 0).
    pub fn payload(&self) -> [u8; 7] {
        let [a0, a1, a2, a3] = self.bytes;
        let top = |byte: u8, bit: u8| (byte >> 7) << bit;
        [
            ACK_NIBBLE | top(a2, 4) | top(a3, 5),
            a0 & 0x7F,
            a1 & 0x7F,
            ACK_NIBBLE | top(a0, 4) | top(a1, 5),
            a2 & 0x7F,
            a3 & 0x7F,
            0,
        ]
    }
}

impl Message {
    /// Append this message's wire frame (header included) to `out`, as a board would send it.
    ///
    /// Values a board cannot send are brought into range rather than corrupting the framing:
    /// every data byte is masked to 7 bits, characters that are not printable ASCII become `?`, hours are capped
    /// at 9 and minutes/seconds at 59, over-long text is cut to what the decoder accepts.
    /// One representation is shared: a [`ClockReading`] whose seven payload bytes are all zero
    /// encodes exactly like [`Message::ClockEmpty`] and decodes as that.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Message::BoardDump(fields) => {
                put_header(out, MSG_BOARD_DUMP, SIZE_BOARD_DUMP);
                out.extend(fields.iter().map(|&f| piece_to_code(f)));
            }
            Message::FieldUpdate { field, content } => {
                put_header(out, MSG_FIELD_UPDATE, SIZE_FIELD_UPDATE);
                out.extend_from_slice(&[field & 0x3F, piece_to_code(*content)]);
            }
            Message::ClockTimes(times) => put_bwtime(out, times.payload()),
            Message::ClockAck(ack) => put_bwtime(out, ack.payload()),
            Message::ClockEmpty => put_bwtime(out, [0; 7]),
            Message::Version { major, minor } => {
                put_header(out, MSG_VERSION, SIZE_VERSION);
                out.extend_from_slice(&[major & 0x7F, minor & 0x7F]);
            }
            Message::SerialNumber(text) => {
                // The two sizes a board sends: 5 digits, or the 1998 form of 9 characters.
                let len = if text.len() > 5 { 9 } else { 5 };
                put_text(out, MSG_SERIALNR, text, Lines::One, len, len);
            }
            Message::LongSerialNumber(text) => {
                put_text(out, MSG_LONG_SERIALNR, text, Lines::One, 10, 10);
            }
            Message::Trademark(text) => {
                put_text(
                    out,
                    MSG_TRADEMARK,
                    text,
                    Lines::Many,
                    0,
                    MAX_TRADEMARK_PAYLOAD,
                );
            }
            Message::BusAddress(addr) => {
                put_header(out, MSG_BUSADRES, SIZE_BUSADRES);
                out.extend_from_slice(&[((addr >> 7) & 0x7F) as u8, (addr & 0x7F) as u8]);
            }
            Message::BatteryStatus(b) => {
                put_header(out, MSG_BATTERY_STATUS, SIZE_BATTERY_STATUS);
                let (left_h, left_m) = b
                    .time_left
                    .unwrap_or((BATTERY_NOT_AVAILABLE, BATTERY_NOT_AVAILABLE));
                let bytes = [
                    b.percent,
                    left_h,
                    left_m,
                    b.on_time.0,
                    b.on_time.1,
                    b.standby.0,
                    b.standby.1,
                    b.standby.2,
                    u8::from(b.charging) | u8::from(b.discharging) << 1,
                ];
                out.extend(bytes.iter().map(|b| b & 0x7F));
            }
            Message::EeMoves(events) => {
                let start = out.len();
                put_header(out, MSG_EE_MOVES, 0);
                ee_moves::encode(events, out, MAX_EE_MOVES_PAYLOAD);
                let total = out.len() - start;
                out[start + 1..start + 3].copy_from_slice(&length_bytes(total));
            }
        }
    }

    /// The message's wire frame as a new vector.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }
}

fn put_bwtime(out: &mut Vec<u8>, payload: [u8; 7]) {
    put_header(out, MSG_BWTIME, SIZE_BWTIME);
    out.extend(payload.iter().map(|b| b & 0x7F));
}

/// Text padded with spaces to `min` and cut at `max` characters, one ASCII byte each; what
/// the decoder would not keep ([`keeps`]) goes out as [`UNPRINTABLE`].
fn put_text(out: &mut Vec<u8>, id: u8, text: &str, lines: Lines, min: usize, max: usize) {
    let bytes = text
        .chars()
        .map(|c| {
            if keeps(c, lines) {
                c as u8
            } else {
                UNPRINTABLE as u8
            }
        })
        .chain(std::iter::repeat(b' '))
        .take(text.chars().count().clamp(min, max));
    let start = out.len();
    put_header(out, id, 0);
    out.extend(bytes);
    let total = out.len() - start;
    out[start + 1..start + 3].copy_from_slice(&length_bytes(total));
}
