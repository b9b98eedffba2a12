//! Which clock stands behind the simulated board: whether there is one and whether it answers
//! (`ClockPresence`), and which model it is (`ClockKind`) — what its version answer says,
//! which display command it understands and how it acknowledges commands.

use eboard_core::dgt::command::segments_for;
use eboard_core::dgt::{ClockCommand, XlDisplay};

/// Is there a clock behind the board, and does it answer commands?
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ClockPresence {
    /// A DGT 3000 that reports times and acks commands.
    #[default]
    Present,
    /// No clock: status bit 5 set, no acks.
    Absent,
    /// A clock that reports times but never acks a command (a "locked" clock).
    NotAnswering,
}

/// Which clock model is behind the board: what its version answer says and which display
/// command it understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ClockKind {
    /// A DGT 3000: version 2.0, eight ASCII characters (0x0C).
    #[default]
    Dgt3000,
    /// A DGT XL: version 1.14, six 7-segment digits (0x01 DISPLAY); the ASCII command is
    /// refused. `quirky_acks`: it answers display and end commands with (0x20, 0, 0, 0), as
    /// an XL 1.14 on a board 1.80 was seen to (protocol sheet, section 5).
    Xl { quirky_acks: bool },
}

impl ClockKind {
    pub fn is_xl(self) -> bool {
        matches!(self, ClockKind::Xl { .. })
    }

    /// The acknowledgement this model sends for `command`: the standard one (0x10 and the
    /// sub-command), with the version in ack2 (a DGT 3000 2.0, an XL 1.14); an XL refuses the
    /// ASCII command (0x40) and, when quirky, answers display and end with (0x20, 0, 0, 0).
    pub fn ack(self, command: &ClockCommand) -> [u8; 4] {
        let mut ack = [0x10, command.sub_command(), 0, 0];
        match (command, self) {
            (ClockCommand::Display(_) | ClockCommand::End, ClockKind::Xl { quirky_acks: true }) => {
                ack = [0x20, 0, 0, 0];
            }
            (ClockCommand::Ascii { .. }, ClockKind::Xl { .. }) => ack[0] = 0x40,
            (ClockCommand::Version, ClockKind::Xl { .. }) => ack[2] = 0x1E,
            (ClockCommand::Version, ClockKind::Dgt3000) => ack[2] = 0x20,
            _ => {}
        }
        ack
    }
}

/// What six 7-segment digits read as (lower case where a letter has one shape; a digit
/// with no known shape reads as `?`), trailing blanks dropped.
pub fn segments_as_text(display: &XlDisplay) -> String {
    const SHAPES: &str = "0123456789abcdefhjlnopqrtuy-_";
    let text: String = display
        .digits
        .iter()
        .map(|&s| match s {
            0 => ' ',
            s => SHAPES
                .chars()
                .find(|&c| segments_for(c) == s)
                .unwrap_or('?'),
        })
        .collect();
    text.trim_end().to_owned()
}
