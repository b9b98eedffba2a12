//! The DGT driver of the link (`crate::link::Driver::Dgt`): the line (9600 8N1), the
//! start-up handshake and the probe (which commands, in what order), the per-model requests
//! (the battery of a Bluetooth board, text on a Revelation II's own display), the [`Reader`]
//! that turns received bytes into [`Message`]s while counting what it had to skip, and the
//! clock channel. What the board says goes to the core as [`BoardInput`]s; acknowledgements
//! of the clock's commands and empty clock frames stay here.

use super::clock_channel::{ClockChannel, MessageError, Outcome};
use crate::board_input::BoardInput;
use crate::dgt::{ClockCommand, Command, Decoder, Message};
use crate::identity::Identity;
use crate::session::BoardRequest;
use crate::vocab::Millis;

/// The line every DGT board speaks: 9600 baud, 8 data bits, no parity, 1 stop bit.
pub const BAUD: u32 = 9600;

/// One open DGT link's driver state: the decoder and the clock channel.
#[derive(Debug, Default)]
pub struct Dgt {
    reader: Reader,
    clock: ClockChannel,
}

impl Dgt {
    pub fn new() -> Self {
        Dgt::default()
    }

    /// The command that asks for `request`.
    pub fn request(request: BoardRequest) -> Vec<u8> {
        match request {
            BoardRequest::ReadMemory => Command::EeMoves,
            BoardRequest::SendBoard => Command::SendBoard,
        }
        .to_bytes()
    }

    /// The periodic question for a board with a battery (a Bluetooth board answers it).
    pub fn battery_request(identity: &Identity) -> Option<Vec<u8>> {
        identity
            .has_battery()
            .then(|| Command::BatteryStatus.to_bytes())
    }

    /// The clock's version question (its answer names its model).
    pub fn clock_model_request() -> Vec<u8> {
        Command::Clock(ClockCommand::Version).to_bytes()
    }

    /// Feed one read's worth of bytes: one entry per complete message, the core's input or
    /// `None` for what only concerns the line (the clock channel takes the acks).
    pub fn push(&mut self, bytes: &[u8], now: Millis) -> Vec<Option<BoardInput>> {
        self.reader
            .push(bytes)
            .into_iter()
            .map(|message| {
                self.clock.on_message(&message, now);
                message.into_board_input()
            })
            .collect()
    }

    pub fn reader(&self) -> &Reader {
        &self.reader
    }

    /// What the board said about itself decides where clock text goes.
    pub fn learn(&mut self, identity: &Identity) {
        self.clock
            .set_revelation_display(identity.revelation_text());
    }

    /// Queue a text for the clock display; its outcome comes from [`Dgt::poll_clock`].
    pub fn show(&mut self, text: &str, now: Millis) -> Result<u64, MessageError> {
        self.clock.show(text, now)
    }

    /// The next clock command to write, if one is due.
    pub fn poll_transmit(&mut self, now: Millis) -> Option<Vec<u8>> {
        self.clock.poll_transmit(now)
    }

    /// When the clock channel next needs to write or give up.
    pub fn poll_timeout(&self) -> Option<Millis> {
        self.clock.poll_timeout()
    }

    pub fn poll_clock(&mut self) -> Option<Outcome> {
        self.clock.poll_outcome()
    }

    /// The link is gone: the clock requests still waiting fail.
    pub fn reset(&mut self) {
        self.clock.reset();
    }
}

/// Board commands sent on every (re)connection, in order (protocol sheet, section 7.2):
/// update-nice mode, a full board dump, serial number, firmware version, clock version.
/// Each is written on its own (see [`crate::link::HANDSHAKE_GAP_MS`]). The whole board is the first
/// thing asked: a gap ends at that reading and `Connected` turns true with it, so play that
/// goes on the moment a board is back is followed live instead of joining the gap. Update mode
/// comes before it so that no change after the dump goes unreported (changes between the two
/// are in the dump). The serial number comes before the version (as in the MONO/FNOG drivers)
/// so that a board whose firmware version is known is fully identified. The long serial number
/// tells a Revelation II (its firmware leads it), the battery question a Bluetooth board (a
/// USB-only board has no battery and leaves it unanswered; see `identity`).
pub fn handshake() -> Vec<Vec<u8>> {
    [
        Command::UpdateNice,
        Command::SendBoard,
        Command::SerialNumber,
        Command::LongSerialNumber,
        Command::Version,
        Command::BatteryStatus,
        Command::Clock(ClockCommand::Version),
    ]
    .iter()
    .map(Command::to_bytes)
    .collect()
}

/// Sent when the line has been silent for a while: a board answers with its version, a
/// vanished one shows up as a write error or as continued silence.
pub fn probe() -> Vec<u8> {
    Command::Version.to_bytes()
}

/// Bytes in, messages out: the protocol decoder, with a count of what it had to skip.
#[derive(Debug, Default)]
pub struct Reader {
    decoder: Decoder,
}

impl Reader {
    pub fn new() -> Self {
        Reader {
            decoder: Decoder::new(),
        }
    }

    /// Feed one read's worth of bytes; returns the complete messages in it.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<Message> {
        self.decoder.feed(bytes).collect()
    }

    /// Bytes skipped so far because they were not part of a valid message.
    pub fn skipped(&self) -> u64 {
        self.decoder.stats().skipped_bytes
    }

    /// Bytes of the board's text that were not printable ASCII, so far (shown as `?`).
    pub fn unprintable_text(&self) -> u64 {
        self.decoder.stats().unprintable_text_bytes
    }

    /// Frames dropped so far (cut by junk or impossible): a message may have been lost. A
    /// whole clock frame with impossible digits is not counted: it hid no board message.
    pub fn dropped_frames(&self) -> u64 {
        self.decoder.stats().lost_frames()
    }

    /// A frame has begun and is not complete yet (the board is still sending it: the ~8 s of
    /// an EEPROM dump at 9600 baud count as a live line).
    pub fn in_frame(&self) -> bool {
        self.decoder.pending_len() > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_survive_junk_and_splits() {
        let mut r = Reader::new();
        let mut bytes = vec![0x01, 0x7F, 0x93, 0x00];
        let tail = [0x05, 0x03, 0x0A];
        assert!(r.push(&bytes).is_empty());
        bytes.clear();
        let msgs = r.push(&tail);
        assert_eq!(
            msgs,
            [Message::Version {
                major: 3,
                minor: 10
            }]
        );
        assert_eq!(r.skipped(), 2);
        assert!(r.push(&[0x93, 0x00]).is_empty());
        // A frame cut by a new id byte is dropped, the next one read.
        let msgs = r.push(&[
            0x91, 0x00, 0x08, b'1', 0x91, 0x00, 0x08, b'1', b'2', b'3', b'4', b'5',
        ]);
        assert_eq!(msgs, [Message::SerialNumber("12345".into())]);
    }

    #[test]
    fn handshake_starts_update_nice_and_asks_for_a_dump() {
        let h: Vec<u8> = handshake().concat();
        assert_eq!(h[0], 0x4B);
        assert!(h.ends_with(&[0x2B, 0x03, 0x03, 0x09, 0x00]), "{h:02x?}");
        assert!(h.contains(&0x42));
        assert!(
            !h.contains(&0x49),
            "the EEPROM dump is asked for only after a gap, never at start-up"
        );
    }
}
