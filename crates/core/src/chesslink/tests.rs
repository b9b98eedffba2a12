//! Every command and reply through its own encoder and the decoder of its direction.

use shakmaty::{Board, Square};

use super::leds::{LED_COUNT, LedPattern};
use super::*;

/// One of every reply kind.
pub(crate) fn every_reply() -> Vec<Reply> {
    let scan = Scan::from_board(&Board::default(), WireOrder::H1First);
    let turned = Scan::from_board(&Board::default(), WireOrder::A8First);
    let empty = Scan::from_board(&Board::empty(), WireOrder::H1First);
    vec![
        Reply::Version(Version { high: 1, low: 3 }),
        Reply::Status(scan),
        Reply::Status(turned),
        Reply::Status(empty),
        Reply::LedsSet,
        Reply::LedsOff,
        Reply::Written {
            address: 0x02,
            value: 0x03,
        },
        Reply::Read {
            address: 0xBB,
            value: 0xFF,
        },
    ]
}

fn every_command() -> Vec<Command> {
    let mut all_codes = LedPattern::dark(0xFF);
    for (i, code) in all_codes.codes.iter_mut().enumerate() {
        *code = (i * 37 % 256) as u8;
    }
    vec![
        Command::Version,
        Command::Status,
        Command::LedsOff,
        Command::Reset,
        Command::Read { address: 0x01 },
        Command::Write {
            address: 0x02,
            value: 0x07,
        },
        Command::Leds(LedPattern::for_move(
            Square::E2,
            Square::E4,
            WireOrder::H1First,
        )),
        Command::Leds(all_codes),
    ]
}

#[test]
fn every_reply_round_trips_in_both_parity_forms() {
    for reply in every_reply() {
        for (parity_by, check) in [
            (ParityBy::Host, ParityCheck::Verify),
            (ParityBy::Uart, ParityCheck::Ignore),
        ] {
            let bytes = reply.encode(parity_by);
            let (got, stats) = Decoder::decode_all(&bytes, check);
            assert_eq!(got, vec![reply], "{reply:?}");
            assert_eq!(stats.message_bytes, bytes.len() as u64);
            assert_eq!(stats.dropped_frames + stats.skipped_bytes, 0);
        }
    }
}

#[test]
fn every_command_round_trips_and_has_its_documented_length() {
    for command in every_command() {
        let bytes = command.encode(ParityBy::Host);
        assert_eq!(Some(bytes.len()), message::command_len(bytes[0] & 0x7F));
        let (got, stats) = CommandDecoder::decode_all(&bytes, ParityCheck::Verify);
        assert_eq!(got, vec![command.clone()]);
        assert_eq!(stats.dropped_frames, 0);
    }
    assert_eq!(Command::Leds(LedPattern::default()).chars().len(), 167);
    assert_eq!(Command::Status.reply_letter(), Some(b's'));
    assert_eq!(Command::Reset.reply_letter(), None);
}

#[test]
fn replies_have_their_documented_lengths() {
    for reply in every_reply() {
        let chars = reply.chars();
        assert_eq!(Some(chars.len()), message::reply_len(chars[0]));
    }
    // The start position's check is 73 in either order.
    let start = Reply::Status(Scan::from_board(&Board::default(), WireOrder::A8First));
    assert_eq!(&start.chars()[65..], b"73");
}

#[test]
fn led_pattern_characters() {
    let chars = Command::Leds(LedPattern::for_move(
        Square::E2,
        Square::E4,
        WireOrder::H1First,
    ))
    .chars();
    assert_eq!(&chars[..3], b"L20");
    // LED 29 (an e2 corner in the drivers' order) is the 29th pair after the slot time.
    assert_eq!(&chars[3 + 2 * 28..3 + 2 * 29], b"F0");
    // LED 31 (an e4 corner).
    assert_eq!(&chars[3 + 2 * 30..3 + 2 * 31], b"0F");
    assert_eq!(chars.len(), 3 + 2 * LED_COUNT + 2);
    assert_eq!(Version { high: 1, low: 3 }.to_string(), "01.03");
    assert_eq!(Version { high: 2, low: 0x1A }.as_u16(), 0x021A);
}
