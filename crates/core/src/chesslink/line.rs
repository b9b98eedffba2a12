//! The line and the character framing: 38400 baud, 7 data bits, odd parity, 1 stop bit; each
//! message a letter, upper-case hex data and a two-character block check.
//!
//! The same 10-bit frame on the wire can be made two ways (both are in use with these
//! boards): the UART adds the parity bit (7O1), or the host opens the port 8N1 and puts the
//! parity bit into bit 7 of each byte itself. A pseudo-terminal cannot do 7O1 (it forces 8
//! data bits, no parity), and every public driver computes the parity itself, so
//! [`ParityBy::Host`] is the default.

/// Who makes and checks the parity bit of each character.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ParityBy {
    /// The port is opened 8N1; the host sets bit 7 of each byte it sends to the odd parity of
    /// the 7 data bits and checks bit 7 of each byte it reads.
    #[default]
    Host,
    /// The port is opened 7O1; the UART adds and checks the parity, bytes carry 7 bits.
    Uart,
}

/// The serial line settings, as data for the shell that opens the port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LineSettings {
    pub baud: u32,
    /// Data bits the port is opened with (8 when the host makes the parity bit).
    pub data_bits: u8,
    /// Whether the UART adds odd parity.
    pub uart_odd_parity: bool,
    pub stop_bits: u8,
    /// No source uses RTS/CTS or XON/XOFF.
    pub flow_control: bool,
    pub parity_by: ParityBy,
}

impl LineSettings {
    /// The board's line: 38400 baud, 7 data bits, odd parity, 1 stop bit, no flow control.
    pub const fn for_parity(parity_by: ParityBy) -> LineSettings {
        let (data_bits, uart_odd_parity) = match parity_by {
            ParityBy::Host => (8, false),
            ParityBy::Uart => (7, true),
        };
        LineSettings {
            baud: BAUD,
            data_bits,
            uart_odd_parity,
            stop_bits: 1,
            flow_control: false,
            parity_by,
        }
    }

    /// Bits on the wire per character (start, 7 data, parity, stop): the line carries
    /// `baud / 10` characters a second either way.
    pub const fn bits_per_char(&self) -> u32 {
        10
    }
}

impl Default for LineSettings {
    fn default() -> Self {
        LineSettings::for_parity(ParityBy::Host)
    }
}

/// The board's fixed speed.
pub const BAUD: u32 = 38_400;

/// The parity bit's place when the host makes it.
pub const PARITY_BIT: u8 = 0x80;

/// `c` (7 bits) with bit 7 set so that the byte has an odd number of 1 bits.
pub const fn with_odd_parity(c: u8) -> u8 {
    let c = c & 0x7F;
    if c.count_ones().is_multiple_of(2) {
        c | PARITY_BIT
    } else {
        c
    }
}

/// Whether the 8-bit byte (7 data bits and the parity bit in bit 7) has odd parity.
pub const fn has_odd_parity(byte: u8) -> bool {
    byte.count_ones() % 2 == 1
}

/// The block check: XOR of the 7-bit codes of every character from the letter to the last
/// data character (parity bits are not part of it).
pub fn block_check(chars: &[u8]) -> u8 {
    chars.iter().fold(0, |acc, &c| acc ^ (c & 0x7F))
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// The two upper-case hex digits of `value`.
pub const fn hex_pair(value: u8) -> [u8; 2] {
    [HEX[(value >> 4) as usize], HEX[(value & 0x0F) as usize]]
}

/// The value of an upper-case hex digit. The board sends upper case only, and a lower-case
/// `b` is a black bishop: accepting it would let a status payload pass for hex.
pub const fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// The byte two hex digits stand for.
pub fn parse_hex_pair(pair: &[u8]) -> Option<u8> {
    match *pair {
        [hi, lo] => Some(hex_value(hi)? << 4 | hex_value(lo)?),
        _ => None,
    }
}

/// A whole message as 7-bit characters: `letter`, `data`, the block check as two hex digits.
pub fn frame_chars(letter: u8, data: &[u8]) -> Vec<u8> {
    let mut chars = Vec::with_capacity(data.len() + 3);
    chars.push(letter);
    chars.extend_from_slice(data);
    let check = block_check(&chars);
    chars.extend_from_slice(&hex_pair(check));
    chars
}

/// The bytes to write for 7-bit `chars`: with the parity bit in bit 7 when the host makes it.
pub fn to_wire(mut chars: Vec<u8>, parity_by: ParityBy) -> Vec<u8> {
    if parity_by == ParityBy::Host {
        for c in &mut chars {
            *c = with_odd_parity(*c);
        }
    }
    chars
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parity_matches_the_fact_sheet() {
        // "W0203" with its check "56": 57 B0 32 B0 B3 B5 B6.
        let wire = to_wire(frame_chars(b'W', b"0203"), ParityBy::Host);
        assert_eq!(wire, [0x57, 0xB0, 0x32, 0xB0, 0xB3, 0xB5, 0xB6]);
        assert!(wire.iter().all(|&b| has_odd_parity(b)));
        assert_eq!(
            to_wire(frame_chars(b'V', b""), ParityBy::Host),
            [0xD6, 0xB5, 0xB6]
        );
        assert_eq!(
            to_wire(frame_chars(b'S', b""), ParityBy::Host),
            [0xD3, 0xB5, 0xB3]
        );
        assert_eq!(
            to_wire(frame_chars(b'X', b""), ParityBy::Host),
            [0x58, 0xB5, 0x38]
        );
        assert_eq!(
            to_wire(frame_chars(b'T', b""), ParityBy::Host),
            [0x54, 0xB5, 0x34]
        );
        assert_eq!(
            to_wire(frame_chars(b'R', b"02"), ParityBy::Host),
            [0x52, 0xB0, 0x32, 0xB5, 0xB0]
        );
        // The one real capture: the version reply "v010374".
        assert_eq!(
            to_wire(frame_chars(b'v', b"0103"), ParityBy::Host),
            [0x76, 0xB0, 0x31, 0xB0, 0xB3, 0x37, 0x34]
        );
        // The UART makes the parity: 7-bit characters as they are.
        assert_eq!(to_wire(frame_chars(b'V', b""), ParityBy::Uart), b"V56");
    }

    #[test]
    fn every_seven_bit_code_gets_odd_parity() {
        for c in 0..=0x7F {
            let b = with_odd_parity(c);
            assert!(has_odd_parity(b), "{c:#x}");
            assert_eq!(b & 0x7F, c);
            assert!(!has_odd_parity(b ^ PARITY_BIT));
        }
    }

    #[test]
    fn hex_is_upper_case_only() {
        for v in 0..=255u8 {
            assert_eq!(parse_hex_pair(&hex_pair(v)), Some(v));
        }
        assert_eq!(parse_hex_pair(b"0b"), None);
        assert_eq!(parse_hex_pair(b"G0"), None);
        assert_eq!(parse_hex_pair(b"0"), None);
    }

    #[test]
    fn line_settings() {
        let host = LineSettings::default();
        assert_eq!(
            (host.baud, host.data_bits, host.uart_odd_parity),
            (38_400, 8, false)
        );
        let uart = LineSettings::for_parity(ParityBy::Uart);
        assert_eq!(
            (uart.data_bits, uart.uart_odd_parity, uart.stop_bits),
            (7, true, 1)
        );
        assert_eq!(uart.baud / uart.bits_per_char(), 3840);
    }
}
