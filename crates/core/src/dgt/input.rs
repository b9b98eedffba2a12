//! From the DGT wire to the core's [`BoardInput`]: what a DGT board and its clock say, in
//! chess terms. What only concerns the line stays here: acknowledgements of clock commands
//! (the clock channel takes them), empty clock frames, the bus address and the trademark.

use super::clock_channel::clock_model_of_version;
use super::message::{EeEvent, Message};
use crate::board_input::{BoardInput, IdentityReport, MemoryEvent};

impl Message {
    /// What this message tells the core, if anything (see the module documentation). A DGT
    /// board's field numbering is the core's square order (field 0 = a8 in the normal
    /// orientation), so squares pass through as they are.
    pub fn to_board_input(&self) -> Option<BoardInput> {
        Some(match self {
            Message::BoardDump(fields) => BoardInput::Scan(fields.clone()),
            Message::FieldUpdate { field, content } => BoardInput::Square {
                index: *field,
                content: *content,
            },
            Message::ClockTimes(reading) => BoardInput::Clock(*reading),
            // The clock's version ack names its model (2.x a DGT 3000, 1.x an XL); any other
            // ack answers a command in flight.
            Message::ClockAck(ack) => {
                let (major, _) = ack.version()?;
                BoardInput::Identity(IdentityReport::Clock(clock_model_of_version(major)))
            }
            Message::Version { major, minor } => BoardInput::Identity(IdentityReport::Firmware {
                major: *major,
                minor: *minor,
            }),
            Message::SerialNumber(s) => {
                BoardInput::Identity(IdentityReport::SerialNumber(s.clone()))
            }
            Message::LongSerialNumber(s) => {
                BoardInput::Identity(IdentityReport::LongSerialNumber(s.clone()))
            }
            Message::BatteryStatus(b) => BoardInput::Battery(*b),
            Message::EeMoves(log) => BoardInput::Memory(memory_events(log)),
            Message::ClockEmpty | Message::BusAddress(_) | Message::Trademark(_) => return None,
        })
    }

    /// [`Message::to_board_input`], taking the message.
    pub fn into_board_input(self) -> Option<BoardInput> {
        match self {
            Message::BoardDump(fields) => Some(BoardInput::Scan(fields)),
            other => other.to_board_input(),
        }
    }
}

/// The EEPROM log's tags as the recovery reads them: field changes, lever presses with the
/// pressing side's time, and power-ups. The other tags (start and end markers, no-ops, the
/// watchdog's) mark nothing a move reconstruction uses and are left out.
pub fn memory_events(log: &[EeEvent]) -> Vec<MemoryEvent> {
    log.iter()
        .filter_map(|e| match *e {
            EeEvent::Field {
                field,
                content,
                quick,
            } => Some(MemoryEvent::Square {
                index: field,
                content,
                quick,
            }),
            EeEvent::Time { left, time } => Some(MemoryEvent::Press { left, time }),
            EeEvent::PowerUp => Some(MemoryEvent::PowerUp),
            EeEvent::Eof
            | EeEvent::FourRows
            | EeEvent::EmptyBoard
            | EeEvent::Downloaded
            | EeEvent::BeginPos
            | EeEvent::BeginPosRotated
            | EeEvent::StartTag
            | EeEvent::WatchdogAction
            | EeEvent::Nop => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board_input::ClockModel;
    use crate::dgt::ClockAck;

    #[test]
    fn a_version_ack_names_the_clock_and_other_acks_stay_on_the_line() {
        let v2 = Message::ClockAck(ClockAck::version_reply(2, 1));
        assert_eq!(
            v2.to_board_input(),
            Some(BoardInput::Identity(IdentityReport::Clock(
                ClockModel::Dgt3000
            )))
        );
        let v1 = Message::ClockAck(ClockAck::version_reply(1, 0));
        assert_eq!(
            v1.to_board_input(),
            Some(BoardInput::Identity(IdentityReport::Clock(ClockModel::Xl)))
        );
        assert_eq!(Message::ClockAck(ClockAck::ok(0x0C)).to_board_input(), None);
        assert_eq!(Message::ClockEmpty.to_board_input(), None);
        assert_eq!(Message::BusAddress(7).to_board_input(), None);
        assert_eq!(Message::Trademark("DGT".into()).to_board_input(), None);
    }

    #[test]
    fn the_memory_keeps_squares_presses_and_power_ups_in_order() {
        let log = [
            EeEvent::StartTag,
            EeEvent::PowerUp,
            EeEvent::Nop,
            EeEvent::Field {
                field: 12,
                content: None,
                quick: true,
            },
            EeEvent::Time {
                left: true,
                time: Default::default(),
            },
            EeEvent::Eof,
        ];
        assert_eq!(
            memory_events(&log),
            [
                MemoryEvent::PowerUp,
                MemoryEvent::Square {
                    index: 12,
                    content: None,
                    quick: true
                },
                MemoryEvent::Press {
                    left: true,
                    time: Default::default()
                },
            ]
        );
    }
}
