//! Wire-level constants and small codecs shared by the decoder, the message encoder and the
//! command encoder: message ids, frame sizes, piece codes, BCD and the 14-bit length header.

use shakmaty::{Color, Piece, Role};

use super::message::FieldContent;

/// Bit 7 marks a message id; every other byte of a board → host frame has it clear.
pub const MESSAGE_BIT: u8 = 0x80;
/// Length of the id + two length bytes that start every board → host frame.
pub const HEADER_LEN: usize = 3;

pub const MSG_BOARD_DUMP: u8 = 0x86;
pub const MSG_BWTIME: u8 = 0x8D;
pub const MSG_FIELD_UPDATE: u8 = 0x8E;
pub const MSG_EE_MOVES: u8 = 0x8F;
pub const MSG_BUSADRES: u8 = 0x90;
pub const MSG_SERIALNR: u8 = 0x91;
pub const MSG_TRADEMARK: u8 = 0x92;
pub const MSG_VERSION: u8 = 0x93;
pub const MSG_BATTERY_STATUS: u8 = 0xA0;
pub const MSG_LONG_SERIALNR: u8 = 0xA2;

/// Total frame lengths (header included).
pub const SIZE_BOARD_DUMP: usize = 67;
pub const SIZE_BWTIME: usize = 10;
pub const SIZE_FIELD_UPDATE: usize = 5;
pub const SIZE_BUSADRES: usize = 5;
/// Current serial-number reply: 5 ASCII digits.
pub const SIZE_SERIALNR: usize = 8;
/// The 1998 serial-number reply: 5 digits, a space and a 3-character storage version.
pub const SIZE_SERIALNR_OLD: usize = 12;
pub const SIZE_VERSION: usize = 5;
/// 9 payload bytes, as the header's byte list documents (its size constant 7 is a known defect).
pub const SIZE_BATTERY_STATUS: usize = 12;
pub const SIZE_LONG_SERIALNR: usize = 13;
/// Trademark text "may be in the range of 0 to 256" bytes.
pub const MAX_TRADEMARK_PAYLOAD: usize = 256;
/// The EEPROM log is 0x1F00 bytes; a little slack is allowed for firmware variants, the bound
/// is what keeps the decoder's memory finite.
pub const MAX_EE_MOVES_PAYLOAD: usize = 0x2000;
/// Largest frame the decoder ever buffers.
pub const MAX_FRAME_LEN: usize = HEADER_LEN + MAX_EE_MOVES_PAYLOAD;

/// The range of total lengths (header included) that a frame with this id may have, or `None`
/// for an id this crate does not know.
pub fn frame_len_range(id: u8) -> Option<(usize, usize)> {
    let fixed = |n| Some((n, n));
    match id {
        MSG_BOARD_DUMP => fixed(SIZE_BOARD_DUMP),
        MSG_BWTIME => fixed(SIZE_BWTIME),
        MSG_FIELD_UPDATE => fixed(SIZE_FIELD_UPDATE),
        // A board's log always ends with EE_EOF, but an empty one is harmless and is what a
        // log without a single valid tag re-encodes to.
        MSG_EE_MOVES => Some((HEADER_LEN, HEADER_LEN + MAX_EE_MOVES_PAYLOAD)),
        MSG_BUSADRES => fixed(SIZE_BUSADRES),
        MSG_SERIALNR => Some((SIZE_SERIALNR, SIZE_SERIALNR_OLD)),
        MSG_TRADEMARK => Some((HEADER_LEN, HEADER_LEN + MAX_TRADEMARK_PAYLOAD)),
        MSG_VERSION => fixed(SIZE_VERSION),
        MSG_BATTERY_STATUS => fixed(SIZE_BATTERY_STATUS),
        MSG_LONG_SERIALNR => fixed(SIZE_LONG_SERIALNR),
        _ => None,
    }
}

/// Whether a total length is acceptable for a known id (the serial number has two exact sizes).
pub fn frame_len_ok(id: u8, total: usize) -> bool {
    match id {
        MSG_SERIALNR => total == SIZE_SERIALNR || total == SIZE_SERIALNR_OLD,
        _ => frame_len_range(id).is_some_and(|(lo, hi)| (lo..=hi).contains(&total)),
    }
}

/// The two 7-bit length bytes of a frame of `total` bytes.
pub fn length_bytes(total: usize) -> [u8; 2] {
    [((total >> 7) & 0x7F) as u8, (total & 0x7F) as u8]
}

/// Write a frame header for a frame of `total` bytes.
pub fn put_header(out: &mut Vec<u8>, id: u8, total: usize) {
    let [hi, lo] = length_bytes(total);
    out.extend_from_slice(&[id, hi, lo]);
}

/// Result of reading one piece code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PieceCode {
    /// A chess piece or an empty field.
    Known(FieldContent),
    /// A magic piece (0x0D–0x0F) or an undefined code: reported as empty and counted.
    Unknown,
}

const ROLES: [Role; 6] = [
    Role::Pawn,
    Role::Rook,
    Role::Knight,
    Role::Bishop,
    Role::King,
    Role::Queen,
];

/// Decode a DGT piece code (0 empty, 1–6 white P R N B K Q, 7–12 black in the same order).
pub fn piece_from_code(code: u8) -> PieceCode {
    match code {
        0 => PieceCode::Known(None),
        1..=6 => PieceCode::Known(Some(Piece {
            color: Color::White,
            role: ROLES[usize::from(code - 1)],
        })),
        7..=12 => PieceCode::Known(Some(Piece {
            color: Color::Black,
            role: ROLES[usize::from(code - 7)],
        })),
        _ => PieceCode::Unknown,
    }
}

/// Encode a field's content as a DGT piece code.
pub fn piece_to_code(content: FieldContent) -> u8 {
    let Some(piece) = content else { return 0 };
    let role_index = match piece.role {
        Role::Pawn => 0,
        Role::Rook => 1,
        Role::Knight => 2,
        Role::Bishop => 3,
        Role::King => 4,
        Role::Queen => 5,
    };
    match piece.color {
        Color::White => 1 + role_index,
        Color::Black => 7 + role_index,
    }
}

/// A BCD byte 0x00–0x59 as its binary value; `None` for anything else (a digit above 9 or a
/// value of 60 and more is impossible for minutes and seconds).
pub fn bcd_minsec(byte: u8) -> Option<u8> {
    let (tens, units) = (byte >> 4, byte & 0x0F);
    (tens <= 5 && units <= 9).then_some(tens * 10 + units)
}

/// Binary 0–99 as BCD; callers keep values within 0–59 for minutes and seconds.
pub fn to_bcd(value: u8) -> u8 {
    let v = value.min(99);
    ((v / 10) << 4) | (v % 10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn piece_codes_round_trip() {
        for code in 0..=12u8 {
            let PieceCode::Known(content) = piece_from_code(code) else {
                panic!("code {code} should be known");
            };
            assert_eq!(piece_to_code(content), code);
        }
        for code in 13..=0x7Fu8 {
            assert_eq!(piece_from_code(code), PieceCode::Unknown);
        }
        assert_eq!(
            piece_from_code(0x05),
            PieceCode::Known(Some(Piece {
                color: Color::White,
                role: Role::King
            }))
        );
        assert_eq!(
            piece_from_code(0x0C),
            PieceCode::Known(Some(Piece {
                color: Color::Black,
                role: Role::Queen
            }))
        );
    }

    #[test]
    fn bcd() {
        assert_eq!(bcd_minsec(0x59), Some(59));
        assert_eq!(bcd_minsec(0x00), Some(0));
        assert_eq!(bcd_minsec(0x60), None);
        assert_eq!(bcd_minsec(0x0A), None);
        assert_eq!(to_bcd(47), 0x47);
    }

    #[test]
    fn lengths() {
        assert_eq!(length_bytes(67), [0x00, 0x43]);
        assert_eq!(length_bytes(0x1F03), [0x3E, 0x03]);
        assert!(frame_len_ok(MSG_SERIALNR, 8));
        assert!(frame_len_ok(MSG_SERIALNR, 12));
        assert!(!frame_len_ok(MSG_SERIALNR, 10));
        assert!(!frame_len_ok(MSG_BWTIME, 11));
        assert!(frame_len_ok(MSG_TRADEMARK, 3));
        assert!(!frame_len_ok(0x80, 3));
    }
}
