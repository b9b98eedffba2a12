//! The clock command channel, sans-IO: one clock command in flight at a time, each waiting
//! for its acknowledgement, resent once when none comes or the clock reports an error
//! (protocol sheet, section 5 — what picochess and the Java driver do), and text messages
//! shown for a few seconds before the times come back (0x03).
//!
//! The caller feeds every decoded message ([`ClockChannel::on_message`]) and asks what to
//! write ([`ClockChannel::poll_transmit`]) and when to wake it ([`ClockChannel::poll_timeout`]),
//! passing the time in milliseconds; outcomes of the requests come back from
//! [`ClockChannel::poll_outcome`]. Nothing here sleeps or reads a clock.
//!
//! The model of the clock decides the message command: a DGT 3000 (version 2.x) gets the
//! ASCII command (0x0C, 8 characters), an XL (1.x) its six 7-segment digits (0x01).

use std::collections::VecDeque;

use super::command::{AsciiBeep, ClockCommand, ClockText, Command, RevelationText, XlDisplay};
use super::message::Message;

/// How long a clock command waits for its ack before it is sent again (picochess: 2 s).
pub const ACK_TIMEOUT_MS: u64 = 2_000;
/// How long a message stays on the display before the times come back.
pub const MESSAGE_HOLD_MS: u64 = 3_000;
/// Sends of one command at most: the first and one retry.
const MAX_SENDS: u8 = 2;

pub use crate::board_input::ClockModel;

/// The model of a clock reporting version `major` in its version ack (2.x a DGT 3000, 1.x
/// an XL).
pub fn clock_model_of_version(major: u8) -> ClockModel {
    if major >= 2 {
        ClockModel::Dgt3000
    } else {
        ClockModel::Xl
    }
}

/// Why a message cannot be shown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MessageError {
    #[error("the text is empty")]
    Empty,
    #[error(
        "\"{}\" has {len} characters; the {model} shows at most {width}",
        crate::vocab::excerpt(text),
        model = match model { ClockModel::Dgt3000 => "DGT 3000", ClockModel::Xl => "DGT XL" }
    )]
    TooLong {
        text: String,
        len: usize,
        width: usize,
        model: ClockModel,
    },
    #[error(
        "\"{}\" has {len} characters; the Revelation II's display shows at most {REVELATION_WIDTH}",
        crate::vocab::excerpt(text)
    )]
    TooLongForRevelation { text: String, len: usize },
    #[error(
        "\"{}\" is not printable ASCII (letters, digits, punctuation, spaces)",
        crate::vocab::excerpt(.0)
    )]
    NotAscii(String),
    #[error("the clock did not acknowledge the message, even when sent again")]
    NoAck,
    #[error("this board has no clock")]
    NoClock,
    #[error("the clock refused the message twice")]
    Refused,
    #[error(
        "{queued} clock messages are already waiting for this clock; try again once they are shown"
    )]
    Busy { queued: usize },
}

/// At most this many messages wait for one clock (each takes seconds to show): more are
/// refused with [`MessageError::Busy`] rather than queued without bound.
pub const MAX_QUEUED: usize = 16;

/// Characters on a Revelation II's own display (0x0D).
pub const REVELATION_WIDTH: usize = 11;

/// Checks `text` for a Revelation II's own display (firmware 3.25 or later, on its cable) and
/// builds the 0x0D command that shows it.
pub fn revelation_command(text: &str) -> Result<ClockCommand, MessageError> {
    if text.is_empty() {
        return Err(MessageError::Empty);
    }
    if !text.chars().all(|c| c == ' ' || c.is_ascii_graphic()) {
        return Err(MessageError::NotAscii(text.to_string()));
    }
    let len = text.chars().count();
    if len > REVELATION_WIDTH {
        return Err(MessageError::TooLongForRevelation {
            text: text.to_string(),
            len,
        });
    }
    Ok(ClockCommand::RevelationText {
        text: RevelationText::new(text),
    })
}

/// What became of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The message is on the display (the clock acknowledged it).
    Shown(u64),
    /// It could not be shown.
    Failed(u64, MessageError),
}

#[derive(Debug, Clone)]
struct Job {
    /// The request it belongs to (`None`: the follow-up 0x03, which nobody waits for).
    request: Option<u64>,
    command: ClockCommand,
    not_before: u64,
}

#[derive(Debug, Clone)]
struct InFlight {
    job: Job,
    sent_at: u64,
    sends: u8,
}

/// The clock command channel of one board (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct ClockChannel {
    queue: VecDeque<Job>,
    in_flight: Option<InFlight>,
    outcomes: VecDeque<Outcome>,
    model: Option<ClockModel>,
    /// Text goes to a Revelation II's own display (0x0D) instead of the clock's.
    revelation: bool,
    next_request: u64,
}

/// Checks `text` for a clock of `model` and builds the command that shows it.
pub fn message_command(text: &str, model: ClockModel) -> Result<ClockCommand, MessageError> {
    if text.is_empty() {
        return Err(MessageError::Empty);
    }
    if !text.chars().all(|c| c == ' ' || c.is_ascii_graphic()) {
        return Err(MessageError::NotAscii(text.to_string()));
    }
    let len = text.chars().count();
    if len > model.width() {
        return Err(MessageError::TooLong {
            text: text.to_string(),
            len,
            width: model.width(),
            model,
        });
    }
    Ok(match model {
        ClockModel::Dgt3000 => ClockCommand::Ascii {
            text: ClockText::new(text),
            beep: AsciiBeep::NONE,
        },
        ClockModel::Xl => ClockCommand::Display(XlDisplay::from_text(text)),
    })
}

impl ClockChannel {
    pub fn new() -> Self {
        Self::default()
    }

    /// The clock model, once a version ack has said it.
    pub fn model(&self) -> Option<ClockModel> {
        self.model
    }

    /// Queue `text` for the display; returns the request id its [`Outcome`] will carry. A
    /// clock whose model is not known yet is taken for a DGT 3000 (the one eboardd's boards
    /// ship with); the text must then also fit an XL only once the XL has said so.
    pub fn show(&mut self, text: &str, now: u64) -> Result<u64, MessageError> {
        let command = if self.revelation {
            revelation_command(text)?
        } else {
            message_command(text, self.model.unwrap_or(ClockModel::Dgt3000))?
        };
        let queued = self.queue.iter().filter(|j| j.request.is_some()).count();
        if queued >= MAX_QUEUED {
            return Err(MessageError::Busy { queued });
        }
        let id = self.next_request;
        self.next_request += 1;
        self.queue.push_back(Job {
            request: Some(id),
            command,
            not_before: now,
        });
        Ok(id)
    }

    /// Text goes to a Revelation II's own display (see `identity::Identity::revelation_text`).
    pub fn set_revelation_display(&mut self, revelation: bool) {
        self.revelation = revelation;
    }

    /// Forget everything in flight or queued (the link went down): each waiting request fails.
    pub fn reset(&mut self) {
        let jobs = self
            .in_flight
            .take()
            .map(|f| f.job)
            .into_iter()
            .chain(self.queue.drain(..));
        for job in jobs {
            if let Some(id) = job.request {
                self.outcomes
                    .push_back(Outcome::Failed(id, MessageError::NoAck));
            }
        }
    }

    /// A decoded message from the board: acks of the command in flight, version acks.
    pub fn on_message(&mut self, message: &Message, now: u64) {
        let Message::ClockAck(ack) = message else {
            return;
        };
        if let Some((major, _)) = ack.version() {
            self.model = Some(clock_model_of_version(major));
        }
        let Some(flight) = self.in_flight.as_ref() else {
            return;
        };
        if ack.is_xl_quirk() {
            // An XL (1.14 with board 1.80 in the wild) answers a command with (0x20, 0, 0, 0),
            // naming no command: it is the answer to the one in flight. Sending it again would
            // get the same answer and hold every later message back; the XL shows computer
            // messages in every mode (its manual), so the command is taken as done.
            let flight = self.in_flight.take().expect("checked above");
            self.finish(flight.job, None, now);
            return;
        }
        if ack.acknowledged_sub_command() != Some(flight.job.command.sub_command()) {
            return;
        }
        let flight = self.in_flight.take().expect("checked above");
        if ack.is_error() {
            if flight.sends < MAX_SENDS {
                self.resend(flight, now);
            } else {
                self.finish(flight.job, Some(MessageError::Refused), now);
            }
        } else {
            self.finish(flight.job, None, now);
        }
    }

    /// The bytes to write now, if any (at most one clock command in flight).
    pub fn poll_transmit(&mut self, now: u64) -> Option<Vec<u8>> {
        if let Some(flight) = self.in_flight.as_ref() {
            if now.saturating_sub(flight.sent_at) < ACK_TIMEOUT_MS {
                return None;
            }
            let flight = self.in_flight.take().expect("checked above");
            if flight.sends < MAX_SENDS {
                return self.resend(flight, now);
            }
            self.finish(flight.job, Some(MessageError::NoAck), now);
        }
        if self.queue.front().is_none_or(|j| j.not_before > now) {
            return None;
        }
        let job = self.queue.pop_front()?;
        let bytes = Command::Clock(job.command.clone()).to_bytes();
        self.in_flight = Some(InFlight {
            job,
            sent_at: now,
            sends: 1,
        });
        Some(bytes)
    }

    /// When the channel next needs [`Self::poll_transmit`] (`None`: nothing pending).
    pub fn poll_timeout(&self) -> Option<u64> {
        match &self.in_flight {
            Some(f) => Some(f.sent_at + ACK_TIMEOUT_MS),
            None => self.queue.front().map(|j| j.not_before),
        }
    }

    /// The next outcome of a request, oldest first.
    pub fn poll_outcome(&mut self) -> Option<Outcome> {
        self.outcomes.pop_front()
    }

    fn resend(&mut self, flight: InFlight, now: u64) -> Option<Vec<u8>> {
        let bytes = Command::Clock(flight.job.command.clone()).to_bytes();
        self.in_flight = Some(InFlight {
            job: flight.job,
            sent_at: now,
            sends: flight.sends + 1,
        });
        Some(bytes)
    }

    fn finish(&mut self, job: Job, error: Option<MessageError>, now: u64) {
        let shown = error.is_none();
        if let Some(id) = job.request {
            self.outcomes.push_back(match error {
                None => Outcome::Shown(id),
                Some(e) => Outcome::Failed(id, e),
            });
        }
        // A message on the display: bring the times back after a while.
        if shown && !matches!(job.command, ClockCommand::End) {
            self.queue.push_front(Job {
                request: None,
                command: ClockCommand::End,
                not_before: now + MESSAGE_HOLD_MS,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dgt::message::ClockAck;

    fn ack(sub: u8) -> Message {
        Message::ClockAck(ClockAck::ok(sub))
    }

    #[test]
    fn text_then_ack_then_end_after_the_hold() {
        let mut c = ClockChannel::new();
        let id = c.show("BOARD 7", 0).unwrap();
        let bytes = c.poll_transmit(0).unwrap();
        assert_eq!(&bytes[..4], &[0x2B, 0x0C, 0x03, 0x0C]);
        assert_eq!(&bytes[4..12], b"BOARD 7 ");
        assert_eq!(*bytes.last().unwrap(), 0x00);
        assert_eq!(c.poll_transmit(10), None, "one command in flight");
        c.on_message(&ack(0x0C), 100);
        assert_eq!(c.poll_outcome(), Some(Outcome::Shown(id)));
        assert_eq!(c.poll_timeout(), Some(100 + MESSAGE_HOLD_MS));
        assert_eq!(c.poll_transmit(200), None, "the message stays a while");
        let end = c.poll_transmit(100 + MESSAGE_HOLD_MS).unwrap();
        assert_eq!(end, [0x2B, 0x03, 0x03, 0x03, 0x00]);
        c.on_message(&ack(0x03), 3_200);
        assert_eq!(c.poll_outcome(), None);
        assert_eq!(c.poll_timeout(), None);
    }

    #[test]
    fn retried_once_then_failed() {
        let mut c = ClockChannel::new();
        let id = c.show("HELLO", 0).unwrap();
        assert!(c.poll_transmit(0).is_some());
        assert_eq!(c.poll_transmit(ACK_TIMEOUT_MS - 1), None);
        let again = c.poll_transmit(ACK_TIMEOUT_MS).expect("sent again");
        assert_eq!(again[3], 0x0C);
        assert_eq!(c.poll_transmit(2 * ACK_TIMEOUT_MS), None);
        assert_eq!(
            c.poll_outcome(),
            Some(Outcome::Failed(id, MessageError::NoAck))
        );
        // An error ack is also retried once.
        let id = c.show("X", 5_000).unwrap();
        c.poll_transmit(5_000).unwrap();
        c.on_message(&Message::ClockAck(ClockAck::error(0x0C)), 5_100);
        assert!(c.poll_outcome().is_none());
        assert!(c.in_flight.is_some(), "sent again at once");
        c.on_message(&Message::ClockAck(ClockAck::error(0x0C)), 5_200);
        assert_eq!(
            c.poll_outcome(),
            Some(Outcome::Failed(id, MessageError::Refused))
        );
    }

    #[test]
    fn an_xl_gets_segments_and_six_characters() {
        let mut c = ClockChannel::new();
        c.on_message(&Message::ClockAck(ClockAck::version_reply(1, 14)), 0);
        assert_eq!(c.model(), Some(ClockModel::Xl));
        assert!(matches!(
            c.show("TOOLONG", 0),
            Err(MessageError::TooLong { width: 6, .. })
        ));
        c.show("b 12", 0).unwrap();
        let bytes = c.poll_transmit(0).unwrap();
        assert_eq!(&bytes[..4], &[0x2B, 0x0B, 0x03, 0x01]);
        assert_eq!(bytes.len(), 13);
        let mut d = ClockChannel::new();
        d.on_message(&Message::ClockAck(ClockAck::version_reply(2, 0)), 0);
        assert_eq!(d.model(), Some(ClockModel::Dgt3000));
        assert!(d.show("EIGHT CH", 0).is_ok());
        assert!(matches!(
            d.show("NINE CHAR", 0),
            Err(MessageError::TooLong { .. })
        ));
        assert!(matches!(d.show("Øy", 0), Err(MessageError::NotAscii(_))));
        assert!(matches!(d.show("", 0), Err(MessageError::Empty)));
    }

    /// A Revelation II's own display: 0x0D with eleven characters, encoded and parsed back;
    /// the width is the Revelation's, not the DGT 3000's.
    #[test]
    fn a_revelation_gets_its_own_text_command() {
        let mut c = ClockChannel::new();
        c.set_revelation_display(true);
        let id = c.show("TABLE 12 OK", 0).unwrap();
        let bytes = c.poll_transmit(0).unwrap();
        assert_eq!(&bytes[..4], &[0x2B, 0x0F, 0x03, 0x0D]);
        assert_eq!(&bytes[4..15], b"TABLE 12 OK");
        assert_eq!(&bytes[15..], &[0, 0]);
        let (parsed, len) = crate::dgt::parse_command(&bytes).unwrap();
        assert_eq!(len, bytes.len());
        assert!(
            matches!(parsed, Command::Clock(ClockCommand::RevelationText { text }) if text.as_str() == "TABLE 12 OK")
        );
        c.on_message(&ack(0x0D), 10);
        assert_eq!(c.poll_outcome(), Some(Outcome::Shown(id)));
        assert!(matches!(
            c.show("TWELVE CHARS", 20),
            Err(MessageError::TooLongForRevelation { len: 12, .. })
        ));
        assert!(matches!(c.show("", 20), Err(MessageError::Empty)));
        // Back to a clock's display: a DGT 3000's eight characters.
        c.set_revelation_display(false);
        assert!(matches!(
            c.show("TABLE 12 OK", 20),
            Err(MessageError::TooLong { width: 8, .. })
        ));
    }

    #[test]
    fn the_xl_quirk_ack_answers_the_command_in_flight_and_never_stalls() {
        let mut c = ClockChannel::new();
        c.on_message(&Message::ClockAck(ClockAck::version_reply(1, 14)), 0);
        let first = c.show("CABLE", 0).unwrap();
        let second = c.show("b 7", 0).unwrap();
        assert_eq!(c.poll_transmit(0).unwrap()[3], 0x01);
        c.on_message(&Message::ClockAck(ClockAck::xl_quirk()), 50);
        assert_eq!(c.poll_outcome(), Some(Outcome::Shown(first)));
        // The times come back after the hold, then the next message goes at once.
        assert_eq!(c.poll_transmit(60), None);
        assert_eq!(c.poll_transmit(50 + MESSAGE_HOLD_MS).unwrap()[3], 0x03);
        c.on_message(
            &Message::ClockAck(ClockAck::xl_quirk()),
            100 + MESSAGE_HOLD_MS,
        );
        assert_eq!(c.poll_transmit(100 + MESSAGE_HOLD_MS).unwrap()[3], 0x01);
        c.on_message(
            &Message::ClockAck(ClockAck::xl_quirk()),
            150 + MESSAGE_HOLD_MS,
        );
        assert_eq!(c.poll_outcome(), Some(Outcome::Shown(second)));
        // With nothing in flight it is ignored.
        let mut idle = ClockChannel::new();
        idle.on_message(&Message::ClockAck(ClockAck::xl_quirk()), 0);
        assert_eq!(idle.poll_outcome(), None);
        assert_eq!(idle.poll_timeout(), None);
    }

    #[test]
    fn other_acks_do_not_complete_the_command() {
        let mut c = ClockChannel::new();
        c.show("A", 0).unwrap();
        c.poll_transmit(0).unwrap();
        c.on_message(&ack(0x09), 10);
        c.on_message(
            &Message::ClockAck(ClockAck::button_press(crate::dgt::ClockButton::Ok)),
            20,
        );
        assert_eq!(c.poll_outcome(), None);
        c.reset();
        assert!(matches!(
            c.poll_outcome(),
            Some(Outcome::Failed(0, MessageError::NoAck))
        ));
    }
}
