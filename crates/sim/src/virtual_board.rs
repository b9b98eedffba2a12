//! The pure virtual DGT e-board (+ DGT 3000 clock) state machine.
//!
//! It is fed host bytes, physical actions (pieces lifted and placed, lever presses) and the
//! time as `u64` milliseconds, and returns the bytes a real board would send, in order and
//! when they are due. No I/O: the pty driver in [`super::pty`] calls [`VirtualBoard::poll`]
//! whenever [`VirtualBoard::next_deadline`] comes round.
//!
//! What it answers is what the fact sheet and the real captures describe: reset (no reply),
//! dump, the three update modes (field updates only in an update mode; clock messages about
//! once a second in UPDATE, on change in UPDATE_NICE, never in UPDATE_BRD), serial numbers,
//! bus address, version, trademark, battery, the EEPROM move log a real board keeps
//! ([`super::eeprom`]: written while powered, dumped on 0x49), and clock commands acked
//! only in UPDATE / UPDATE_NICE.

use std::collections::VecDeque;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shakmaty::{Board, Piece, Square};

use super::clock::{ClockSetup, ClockSide, VirtualClock};
use super::clock_models::{ClockKind, ClockPresence, segments_as_text};
use super::eeprom::Eeprom;
use super::kinds::{Reporting, Revelation, SimBattery};
use eboard_core::arbiter::timecontrol::TimeControl;
use eboard_core::board::Orientation;
use eboard_core::dgt::{
    ClockAck, ClockCommand, ClockReading, ClockStatus, Command, CommandDecoder, Message, RunSide,
};

/// In UPDATE mode a clock message goes out at least this often.
const UPDATE_CLOCK_PERIOD_MS: u64 = 1_000;

/// Which update mode the board is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum UpdateMode {
    /// No unsolicited messages (after reset and at power-up).
    #[default]
    Idle,
    /// Field updates + clock messages at least once a second.
    Update,
    /// Field updates only.
    UpdateBoard,
    /// Field updates + clock messages when the clock data changed.
    UpdateNice,
}

impl UpdateMode {
    pub fn sends_fields(self) -> bool {
        self != UpdateMode::Idle
    }
    fn delivers_clock(self) -> bool {
        matches!(self, UpdateMode::Update | UpdateMode::UpdateNice)
    }
}

/// Junk bytes injected between messages, as a noisy line would deliver them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NoiseOptions {
    /// Mean time between bursts (ms of board time).
    pub mean_interval_ms: u64,
    /// A burst is 1..=max_len bytes.
    pub max_len: usize,
    /// Also emit bytes with the MSB set (they look like message ids and can cost the decoder
    /// the next real message); off: only 0x00..=0x7F, which a decoder skips for free.
    pub high_bit: bool,
    pub seed: u64,
}

/// Identity and behaviour of the virtual board.
#[derive(Debug, Clone, PartialEq)]
pub struct BoardOptions {
    /// `Reversed`: Black's pieces on the connector side (wire field = 63 − normal field).
    pub orientation: Orientation,
    pub clock: ClockPresence,
    pub clock_setup: ClockSetup,
    /// A time control for the clock's FIDE mode (periods, increments, delays); when set it
    /// replaces `clock_setup`.
    pub time_control: Option<TimeControl>,
    /// The clock shows its steady flag at the end of a period (see [`VirtualClock`]).
    pub clock_steady_flag: bool,
    /// The clock model (version answer, display command, acks).
    pub clock_kind: ClockKind,
    /// The time control's periods end by the clock's own move counter (a DGT XL in option
    /// 13 or 00), not when a period's time runs out (see [`VirtualClock`]).
    pub clock_by_counter: bool,
    /// Which display White's time is on (the first press starts it).
    pub white_display: ClockSide,
    /// Answers to commands go out this many ms late (a slow board).
    pub answer_delay_ms: u64,
    pub noise: Option<NoiseOptions>,
    /// The serial number; empty: a board that reports none (serial number questions go
    /// unanswered).
    pub serial: String,
    pub long_serial: String,
    pub version: (u8, u8),
    pub trademark: String,
    /// A Bluetooth board's battery (see [`super::models`]); `None`: a USB board, which
    /// leaves the battery question unanswered.
    pub battery: Option<SimBattery>,
    /// A Revelation II (see [`super::models`]).
    pub revelation: Option<Revelation>,
}

impl Default for BoardOptions {
    fn default() -> Self {
        BoardOptions {
            orientation: Orientation::Normal,
            clock: ClockPresence::Present,
            clock_setup: ClockSetup::default(),
            time_control: None,
            clock_steady_flag: true,
            clock_kind: ClockKind::Dgt3000,
            clock_by_counter: false,
            white_display: ClockSide::Left,
            answer_delay_ms: 0,
            noise: None,
            serial: "13116".into(),
            long_serial: "3000147740".into(),
            version: (3, 10),
            trademark: "Digital Game Technology\r\nCopyright (c) 2024 DGT\r\nsoftware version: 3.10, build: 240101\r\nhardware version: 3.10, serial no: 13116\r\n".into(),
            battery: None,
            revelation: None,
        }
    }
}

/// Counters for what the board saw, for tests and logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BoardStats {
    pub commands: u64,
    /// Commands an ordinary chess board does not answer (bus mode, LEDs, EEPROM settings).
    pub ignored_commands: u64,
    pub clock_commands: u64,
    /// Text messages received for the display (0x0C ASCII and 0x01 XL segments), repeats
    /// included.
    pub clock_texts: u64,
    pub acks_sent: u64,
    pub clock_messages_sent: u64,
    pub field_updates_sent: u64,
    pub noise_bytes: u64,
}

#[derive(Debug, Clone)]
struct Pending {
    due: u64,
    bytes: Vec<u8>,
}

/// The virtual board. See the module documentation.
#[derive(Debug, Clone)]
pub struct VirtualBoard {
    opts: BoardOptions,
    /// Sensor contents in wire order (index 0 = a8 of a normally oriented board).
    fields: [Option<Piece>; 64],
    mode: UpdateMode,
    clock: VirtualClock,
    commands: CommandDecoder,
    queue: VecDeque<Pending>,
    /// Last clock reading sent in an update mode, and when.
    last_clock: Option<(ClockReading, u64)>,
    /// Text the host put on the clock display, until END.
    display_text: Option<String>,
    noise_rng: SmallRng,
    next_noise: Option<u64>,
    stats: BoardStats,
    /// The board has power (USB plugged in): only then does it write its EEPROM log.
    powered: bool,
    eeprom: Eeprom,
    /// The sensors show the start position (its tag is written when it appears).
    at_start: bool,
    /// Which way a self-turning Revelation II reports its fields.
    reporting: Reporting,
}

impl VirtualBoard {
    /// A powered-up board with the standard start position on it.
    pub fn new(opts: BoardOptions, now: u64) -> Self {
        let clock = VirtualClock::new(opts.clock_setup, now);
        let noise_rng = SmallRng::seed_from_u64(opts.noise.map_or(0, |n| n.seed));
        let mut board = VirtualBoard {
            fields: [None; 64],
            mode: UpdateMode::Idle,
            clock,
            commands: CommandDecoder::new(),
            queue: VecDeque::new(),
            last_clock: None,
            display_text: None,
            noise_rng,
            next_noise: None,
            stats: BoardStats::default(),
            powered: false,
            eeprom: Eeprom::new(),
            at_start: false,
            reporting: Reporting::default(),
            opts,
        };
        board.clock.shows_steady_flag = board.opts.clock_steady_flag;
        board.reset_clock(now);
        board.set_position(&Board::default(), now);
        board.power_on(now);
        board.schedule_noise(now);
        board
    }

    /// The EEPROM log as a 0x49 request would dump it (payload bytes, ending with EOF).
    pub fn eeprom_dump(&self) -> Vec<u8> {
        self.eeprom.dump()
    }

    /// Whether the board has power (see [`VirtualBoard::power_off`]).
    pub fn powered(&self) -> bool {
        self.powered
    }

    /// The plug was pulled: no power, no output, nothing logged. Pieces can still be moved
    /// (the sensors just do not tell anyone).
    pub fn power_off(&mut self, now: u64) {
        self.mode = UpdateMode::Idle;
        self.queue.clear();
        self.commands = CommandDecoder::new();
        self.last_clock = None;
        self.clock.advance(now);
        self.powered = false;
    }

    /// Power comes (back): the log gets its power-up tags and one field tag per piece, and
    /// the start-position tag if the start position stands.
    fn power_on(&mut self, now: u64) {
        self.powered = true;
        self.eeprom.power_up(&self.fields, now);
        self.at_start = false;
        self.note_start_position();
    }

    /// Write BEGINPOS / BEGINPOS_ROT when the start position appears on the sensors.
    fn note_start_position(&mut self) {
        let start =
            eboard_core::board::Placement::start().to_wire(eboard_core::board::Orientation::Normal);
        let normal = self.fields == start;
        let mut turned = start;
        turned.reverse();
        let rotated = self.fields == turned;
        let now_start = normal || rotated;
        if now_start && !self.at_start && self.powered {
            self.eeprom.begin_position(rotated);
        }
        self.at_start = now_start;
    }

    pub fn options(&self) -> &BoardOptions {
        &self.opts
    }

    pub fn mode(&self) -> UpdateMode {
        self.mode
    }

    pub fn stats(&self) -> BoardStats {
        self.stats
    }

    /// Text last sent to the clock display (cleared by the END command).
    pub fn display_text(&self) -> Option<&str> {
        self.display_text.as_deref()
    }

    /// The clock, for reading times or pressing buttons directly.
    pub fn clock_mut(&mut self) -> &mut VirtualClock {
        &mut self.clock
    }

    /// What stands on a physical square.
    pub fn piece_at(&self, square: Square) -> Option<Piece> {
        self.fields[usize::from(self.opts.orientation.field_of_square(square))]
    }

    /// The sensor contents as a shakmaty board (physical squares).
    pub fn placement(&self) -> Board {
        let mut board = Board::empty();
        for square in Square::ALL {
            if let Some(piece) = self.piece_at(square) {
                board.set_piece_at(square, piece);
            }
        }
        board
    }

    /// The plug was pulled and put back: the board powers up again in IDLE with nothing
    /// queued; pieces and the (battery-powered) clock keep their state.
    pub fn power_cycle(&mut self, now: u64) {
        self.power_off(now);
        self.power_on(now);
        self.schedule_noise(now);
    }

    /// Feed host → board bytes received at `now`.
    pub fn receive(&mut self, bytes: &[u8], now: u64) {
        self.commands.push(bytes);
        while let Some(next) = self.commands.next_command() {
            self.stats.commands += 1;
            match next {
                Ok(command) => self.execute(command, now),
                // Bus mode, boot loader, EEPROM settings, LEDs, junk: a board stays silent.
                Err(rejected) => {
                    tracing::debug!(?rejected, "simulated board ignores host bytes");
                    self.stats.ignored_commands += 1;
                }
            }
        }
    }

    /// A piece is lifted from a physical square.
    pub fn lift(&mut self, square: Square, now: u64) {
        self.set_field(square, None, now);
    }

    /// A piece is set down on a physical square (replacing whatever the sensor saw there).
    pub fn place(&mut self, square: Square, piece: Piece, now: u64) {
        self.set_field(square, Some(piece), now);
    }

    /// Make the sensors show `board` (physical squares), one field update per changed square
    /// in square order, as if someone had rearranged the pieces.
    pub fn set_position(&mut self, board: &Board, now: u64) {
        for square in Square::ALL {
            self.set_field(square, board.piece_at(square), now);
        }
    }

    fn set_field(&mut self, square: Square, content: Option<Piece>, now: u64) {
        let index = usize::from(self.opts.orientation.field_of_square(square));
        if self.fields[index] == content {
            return;
        }
        self.fields[index] = content;
        if self.powered {
            self.eeprom.field(index as u8, content, now);
            self.note_start_position();
        }
        if self.mode.sends_fields() {
            let mut out = Vec::with_capacity(5);
            Message::FieldUpdate {
                field: self.reporting.index(index) as u8,
                content,
            }
            .encode(&mut out);
            self.stats.field_updates_sent += 1;
            self.push(now, out);
        }
        // The piece set down is reported as it lies; then a self-turning board may turn and
        // send its whole board anew in the turned numbering (see `models`).
        self.turn_reporting(now);
    }

    /// A self-turning Revelation II decides after every change which way it reports; when it
    /// turns, it sends its whole board in the new numbering (in an update mode).
    fn turn_reporting(&mut self, now: u64) {
        if self.reporting.decide(self.opts.revelation, &self.fields) && self.mode.sends_fields() {
            let dump = Message::BoardDump(Box::new(self.reporting.fields(&self.fields)));
            let mut out = Vec::with_capacity(67);
            dump.encode(&mut out);
            self.push(now, out);
        }
    }

    /// The battery changes (drains, is put on charge). An empty battery not charging is a
    /// board that switches off: nothing more is sent or logged until it has power again.
    pub fn set_battery(&mut self, battery: SimBattery, now: u64) {
        self.opts.battery = Some(battery);
        if battery.percent == 0 && !battery.charging && self.powered {
            self.power_off(now);
        }
    }

    /// The board runs on its own battery (a Bluetooth board with charge left): losing the
    /// link does not cut its power.
    pub fn on_battery(&self) -> bool {
        self.opts
            .battery
            .is_some_and(|b| b.percent > 0 || b.charging)
    }

    /// The link went away while the board keeps its power (a Bluetooth board out of range):
    /// it forgets the host's mode and what was queued, and goes on logging its sensors.
    pub fn link_lost(&mut self) {
        self.mode = UpdateMode::Idle;
        self.queue.clear();
        self.commands = CommandDecoder::new();
        self.last_clock = None;
    }

    /// The player sitting at `side` presses the lever.
    pub fn press_lever(&mut self, side: ClockSide, now: u64) {
        if self.opts.clock != ClockPresence::Absent {
            self.clock.press(side, now);
            if self.powered {
                // The time tag holds the presser's display as it stands after the press.
                let reading = self.clock.reading(now);
                let time = match side {
                    ClockSide::Left => reading.left,
                    ClockSide::Right => reading.right,
                };
                self.eeprom.time(side == ClockSide::Left, time, now);
            }
        }
    }

    /// A button on the clock is pressed (0x31 back, 0x34 minus, 0x33 run, 0x32 plus, 0x35 OK):
    /// the clock reports it on its own with an ack (ack1 = 0x88, ack3 = the button), which
    /// reaches the host only in UPDATE / UPDATE_NICE.
    pub fn press_button(&mut self, button: u8, now: u64) {
        if self.opts.clock != ClockPresence::Absent && self.mode.delivers_clock() {
            self.stats.acks_sent += 1;
            let ack = ClockAck {
                bytes: [0x10, 0x88, 0, button],
            };
            let mut out = Vec::with_capacity(10);
            Message::ClockAck(ack).encode(&mut out);
            self.push(now, out);
        }
    }

    /// Set the clock to a new time control (both sides stopped, White's display to run).
    pub fn set_clock(&mut self, setup: ClockSetup, now: u64) {
        self.opts.clock_setup = setup;
        self.opts.time_control = None;
        self.reset_clock(now);
    }

    /// Set the clock to a time control in its FIDE mode (stopped, White's display to run).
    pub fn set_time_control(&mut self, control: TimeControl, now: u64) {
        self.opts.time_control = Some(control);
        self.reset_clock(now);
    }

    /// The clock set to the options' time control (or setup), stopped, White's side to run.
    fn reset_clock(&mut self, now: u64) {
        match &self.opts.time_control {
            Some(tc) if self.opts.clock_by_counter => {
                self.clock
                    .set_control_by_counter(tc, self.opts.white_display, now)
            }
            Some(tc) => self.clock.set_control(tc, self.opts.white_display, now),
            None => self
                .clock
                .set(self.opts.clock_setup, self.opts.white_display, now),
        }
    }

    /// Remove every queued byte that is due at `now` (and emit clock messages and noise due
    /// by then). Call at least at every [`next_deadline`](Self::next_deadline).
    pub fn poll(&mut self, now: u64) -> Vec<u8> {
        self.clock_messages(now);
        self.noise(now);
        let mut out = Vec::new();
        while let Some(front) = self.queue.front() {
            if front.due > now {
                break;
            }
            if let Some(item) = self.queue.pop_front() {
                out.extend_from_slice(&item.bytes);
            }
        }
        out
    }

    /// The next time `poll` has something new to say, if any.
    pub fn next_deadline(&mut self, now: u64) -> Option<u64> {
        let mut next: Option<u64> = self.queue.front().map(|p| p.due);
        let mut consider = |t: u64| next = Some(next.map_or(t, |n| n.min(t)));
        if let Some(t) = self.next_noise {
            consider(t);
        }
        if self.mode.delivers_clock()
            && self.opts.clock != ClockPresence::Absent
            && let Some(t) = self.clock.next_change(now)
        {
            consider(t);
        }
        if self.mode == UpdateMode::Update {
            let t = self
                .last_clock
                .map_or(now, |(_, at)| at + UPDATE_CLOCK_PERIOD_MS);
            consider(t);
        }
        if self.mode == UpdateMode::UpdateNice && self.last_clock.is_none() {
            consider(now);
        }
        next
    }

    /// The clock data the board would report right now.
    pub fn clock_reading(&mut self, now: u64) -> ClockReading {
        match self.opts.clock {
            ClockPresence::Absent => ClockReading {
                status: ClockStatus {
                    connected: false,
                    ..ClockStatus::default()
                },
                ..ClockReading::default()
            },
            _ => self.clock.reading(now),
        }
    }

    fn clock_messages(&mut self, now: u64) {
        let due = match self.mode {
            UpdateMode::Update | UpdateMode::UpdateNice => {
                let reading = self.clock_reading(now);
                let changed = self.last_clock.is_none_or(|(last, _)| last != reading);
                let stale = self.mode == UpdateMode::Update
                    && self
                        .last_clock
                        .is_none_or(|(_, at)| now >= at + UPDATE_CLOCK_PERIOD_MS);
                (changed || stale).then_some(reading)
            }
            _ => None,
        };
        if let Some(reading) = due {
            self.last_clock = Some((reading, now));
            let mut out = Vec::with_capacity(10);
            Message::ClockTimes(reading).encode(&mut out);
            self.stats.clock_messages_sent += 1;
            self.push(now, out);
        }
    }

    fn schedule_noise(&mut self, now: u64) {
        self.next_noise = self.opts.noise.map(|n| {
            let mean = n.mean_interval_ms.max(1);
            now.saturating_add(self.noise_rng.random_range(1..=mean.saturating_mul(2)))
        });
    }

    fn noise(&mut self, now: u64) {
        let (Some(at), Some(n)) = (self.next_noise, self.opts.noise) else {
            return;
        };
        if at > now {
            return;
        }
        let len = self.noise_rng.random_range(1..=n.max_len.max(1));
        let junk: Vec<u8> = (0..len)
            .map(|_| {
                let b: u8 = self.noise_rng.random();
                if n.high_bit { b } else { b & 0x7F }
            })
            .collect();
        self.stats.noise_bytes += junk.len() as u64;
        // Junk goes between whole messages: queue it like any other output.
        self.push(now, junk);
        self.schedule_noise(now);
    }

    /// Queue output; a slow board delays answers, and the stream always stays in order.
    /// Send the clock's current frame garbled: its payload XORed with `mask` (bit 7 kept
    /// clear, as the board frames what the clock sends), at once and out of the clock's own
    /// turn — the noise of a clock–board cable. The clock's next own frame is unaffected.
    pub fn send_garbled_clock_frame(&mut self, mask: [u8; 7], now: u64) {
        let mut payload = self.clock_reading(now).payload();
        for (p, m) in payload.iter_mut().zip(mask) {
            *p = (*p ^ m) & 0x7F;
        }
        let mut frame = vec![0x8D, 0x00, 0x0A];
        frame.extend(payload);
        self.push(now, frame);
    }

    fn push(&mut self, due: u64, bytes: Vec<u8>) {
        let due = self.queue.back().map_or(due, |last| last.due.max(due));
        self.queue.push_back(Pending { due, bytes });
    }

    fn answer(&mut self, now: u64, message: &Message) {
        let mut out = Vec::new();
        message.encode(&mut out);
        self.push(now.saturating_add(self.opts.answer_delay_ms), out);
    }

    fn execute(&mut self, command: Command, now: u64) {
        match command {
            Command::Reset => self.mode = UpdateMode::Idle,
            Command::SendClock => {
                let reading = self.clock_reading(now);
                self.answer(now, &Message::ClockTimes(reading));
            }
            Command::SendBoard => {
                let fields = self.reporting.fields(&self.fields);
                self.answer(now, &Message::BoardDump(Box::new(fields)));
            }
            Command::Update => self.enter(UpdateMode::Update),
            Command::UpdateBoard => self.enter(UpdateMode::UpdateBoard),
            Command::UpdateNice => self.enter(UpdateMode::UpdateNice),
            // A board with no serial number set (`serial` empty) leaves the question
            // unanswered, as some real boards do.
            Command::SerialNumber | Command::LongSerialNumber if self.opts.serial.is_empty() => {}
            Command::SerialNumber => {
                let serial = super::kinds::digits(&self.opts.serial, 5);
                self.answer(now, &Message::SerialNumber(serial));
            }
            Command::LongSerialNumber => {
                // A Revelation II's begins with its firmware ("3.25…"), not only digits.
                let serial = match self.opts.revelation {
                    Some(_) => self.opts.long_serial.chars().take(10).collect(),
                    None => super::kinds::digits(&self.opts.long_serial, 10),
                };
                self.answer(now, &Message::LongSerialNumber(serial));
            }
            Command::BusAddress => {
                // The short serial number read as a 14-bit binary value ("01025" → 8·128 + 1).
                let value = self.opts.serial.parse::<u32>().unwrap_or(0) % (1 << 14);
                self.answer(now, &Message::BusAddress(value as u16));
            }
            Command::Trademark => {
                let text = self.opts.trademark.clone();
                self.answer(now, &Message::Trademark(text));
            }
            Command::EeMoves => {
                // The raw log, as a real board sends it: it may begin inside a tag that the
                // circular buffer overwrote, so it is framed by hand, not from parsed events.
                let payload = self.eeprom.dump();
                let total = payload.len() + 3;
                let mut out = Vec::with_capacity(total);
                out.extend_from_slice(&[0x8F, (total >> 7) as u8 & 0x7F, total as u8 & 0x7F]);
                out.extend_from_slice(&payload);
                self.push(now.saturating_add(self.opts.answer_delay_ms), out);
            }
            // A board without a battery (USB) does not answer.
            Command::BatteryStatus => {
                if let Some(b) = self.opts.battery {
                    self.answer(now, &Message::BatteryStatus(b.status()));
                }
            }
            Command::Version => {
                let (major, minor) = self.opts.version;
                self.answer(now, &Message::Version { major, minor });
            }
            Command::Clock(clock) => self.clock_command(clock, now),
        }
    }

    fn enter(&mut self, mode: UpdateMode) {
        if self.mode != mode {
            self.last_clock = None;
        }
        self.mode = mode;
    }

    fn clock_command(&mut self, command: ClockCommand, now: u64) {
        self.stats.clock_commands += 1;
        let ack = self.opts.clock_kind.ack(&command);
        let xl = self.opts.clock_kind.is_xl();
        match command {
            ClockCommand::SetAndRun(set) => {
                let run = match set.run {
                    RunSide::Left => Some(ClockSide::Left),
                    RunSide::Right => Some(ClockSide::Right),
                    RunSide::Paused => None,
                };
                if self.opts.clock != ClockPresence::Absent {
                    self.clock
                        .set_and_run(set.left.as_millis(), set.right.as_millis(), run, now);
                }
            }
            // An XL has no ASCII display: it refuses the command (see `ClockKind::ack`).
            ClockCommand::Ascii { .. } if xl => {}
            ClockCommand::Ascii { text, .. } => {
                self.stats.clock_texts += 1;
                self.display_text = Some(text.as_str().to_owned());
            }
            ClockCommand::Display(display) => {
                self.stats.clock_texts += 1;
                self.display_text = Some(segments_as_text(&display));
            }
            ClockCommand::RevelationText { text } => {
                // Only a Revelation II from firmware 3.25 knows it; anything else leaves it
                // unanswered.
                if !self.opts.revelation.is_some_and(|r| r.shows_text()) {
                    self.stats.ignored_commands += 1;
                    return;
                }
                self.stats.clock_texts += 1;
                self.display_text = Some(text.as_str().trim_end().to_owned());
            }
            ClockCommand::End => self.display_text = None,
            ClockCommand::Version
            | ClockCommand::Icons { .. }
            | ClockCommand::Beep { .. }
            | ClockCommand::Button => {}
        }
        if self.opts.clock == ClockPresence::Present && self.mode.delivers_clock() {
            self.stats.acks_sent += 1;
            self.answer(now, &Message::ClockAck(ClockAck { bytes: ack }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use eboard_core::dgt::EeEvent;
    use shakmaty::{Color, Role};

    #[test]
    fn eeprom_logs_only_while_powered() {
        let mut b = board();
        let parse = |b: &VirtualBoard| {
            let mut stats = eboard_core::dgt::DecoderStats::default();
            eboard_core::dgt::ee_moves::parse(&b.eeprom_dump(), &mut stats)
        };
        let fresh = parse(&b);
        assert_eq!(
            fresh[..4],
            [EeEvent::Nop, EeEvent::Nop, EeEvent::Nop, EeEvent::PowerUp]
        );
        assert_eq!(fresh.len(), 4 + 32 + 2, "32 pieces, BEGINPOS, EOF");
        b.lift(Square::E2, 1_000);
        b.press_lever(ClockSide::Left, 1_100);
        let log = parse(&b);
        assert!(matches!(
            log[log.len() - 3],
            EeEvent::Field {
                field: 52,
                content: None,
                quick: false
            }
        ));
        assert!(matches!(
            log[log.len() - 2],
            EeEvent::Time { left: true, .. }
        ));
        b.power_off(2_000);
        b.lift(Square::D2, 2_100);
        assert_eq!(parse(&b).len(), log.len(), "nothing logged without power");
        b.power_cycle(3_000);
        let after = parse(&b);
        assert_eq!(
            after[log.len() - 1..log.len() + 3],
            [EeEvent::Nop, EeEvent::Nop, EeEvent::Nop, EeEvent::PowerUp]
        );
        assert_eq!(
            after.len(),
            log.len() + 4 + 30,
            "30 pieces at power-up, no start position"
        );
    }

    fn board() -> VirtualBoard {
        VirtualBoard::new(BoardOptions::default(), 0)
    }

    #[test]
    fn idle_board_sends_nothing_but_answers() {
        let mut b = board();
        b.lift(Square::E2, 0);
        assert!(b.poll(10).is_empty());
        b.receive(&[0x4D, 0x45], 10);
        assert_eq!(
            b.poll(10),
            vec![0x93, 0, 5, 3, 10, 0x91, 0, 8, b'1', b'3', b'1', b'1', b'6']
        );
        assert_eq!(b.next_deadline(10), None);
    }

    #[test]
    fn dump_in_wire_order_for_both_orientations() {
        let mut b = board();
        b.receive(&[0x42], 0);
        let out = b.poll(0);
        assert_eq!(&out[..3], &[0x86, 0, 67]);
        assert_eq!(out[3], 8, "a8 = black rook");
        assert_eq!(out[3 + 60], 5, "e1 = white king");
        let mut r = VirtualBoard::new(
            BoardOptions {
                orientation: Orientation::Reversed,
                ..BoardOptions::default()
            },
            0,
        );
        r.receive(&[0x42], 0);
        let out = r.poll(0);
        assert_eq!(out[3], 2, "field 0 = h1 white rook");
        assert_eq!(out[3 + 3], 5, "field 3 = e1 white king");
    }

    #[test]
    fn field_updates_only_in_update_modes() {
        let mut b = board();
        b.receive(&[0x44], 0);
        b.lift(Square::E2, 0);
        b.place(
            Square::E4,
            Piece {
                color: Color::White,
                role: Role::Pawn,
            },
            0,
        );
        assert_eq!(b.poll(0), vec![0x8E, 0, 5, 52, 0, 0x8E, 0, 5, 36, 1]);
        b.press_lever(ClockSide::Right, 0);
        assert!(b.poll(5_000).is_empty(), "UPDATE_BRD sends no clock data");
        b.receive(&[0x40], 5_000);
        b.lift(Square::E4, 5_000);
        assert!(b.poll(5_000).is_empty());
    }

    #[test]
    fn nice_sends_on_change_update_every_second() {
        let mut b = board();
        b.receive(&[0x4B], 0);
        let first = b.poll(0);
        assert_eq!(first, vec![0x8D, 0, 10, 0x20, 3, 2, 0x20, 3, 2, 0x08]);
        assert!(b.poll(5_000).is_empty(), "stopped clock: nothing changes");
        b.press_lever(ClockSide::Right, 5_000);
        assert_eq!(b.poll(5_000).len(), 10);
        assert_eq!(b.next_deadline(5_000), Some(6_000));
        assert_eq!(b.poll(6_000).len(), 10);
        let mut u = board();
        u.receive(&[0x43], 0);
        assert_eq!(u.poll(0).len(), 10);
        assert_eq!(u.next_deadline(0), Some(1_000));
        assert_eq!(u.poll(1_000).len(), 10, "repeated while stopped");
    }

    #[test]
    fn clock_acks_only_in_update_modes() {
        let version = [0x2B, 0x03, 0x03, 0x09, 0x00];
        let mut b = board();
        b.receive(&version, 0);
        assert!(b.poll(0).is_empty());
        b.receive(&[0x44], 0);
        b.receive(&version, 0);
        assert!(b.poll(0).is_empty());
        b.receive(&[0x4B], 0);
        let _ = b.poll(0);
        b.receive(&version, 0);
        assert_eq!(
            b.poll(0),
            vec![0x8D, 0, 10, 0x0A, 0x10, 0x09, 0x0A, 0x20, 0, 0]
        );
    }

    #[test]
    fn absent_and_silent_clocks() {
        let mut b = VirtualBoard::new(
            BoardOptions {
                clock: ClockPresence::Absent,
                ..BoardOptions::default()
            },
            0,
        );
        b.receive(&[0x41], 0);
        assert_eq!(b.poll(0), vec![0x8D, 0, 10, 0, 0, 0, 0, 0, 0, 0x20]);
        b.receive(&[0x4B, 0x2B, 0x03, 0x03, 0x09, 0x00], 0);
        assert_eq!(b.poll(0).len(), 10, "one status message, no ack");
        let mut s = VirtualBoard::new(
            BoardOptions {
                clock: ClockPresence::NotAnswering,
                ..BoardOptions::default()
            },
            0,
        );
        s.receive(&[0x4B], 0);
        let _ = s.poll(0);
        s.receive(&[0x2B, 0x03, 0x03, 0x09, 0x00], 0);
        assert!(s.poll(0).is_empty());
    }

    #[test]
    fn slow_board_delays_answers_in_order() {
        let mut b = VirtualBoard::new(
            BoardOptions {
                answer_delay_ms: 300,
                ..BoardOptions::default()
            },
            0,
        );
        b.receive(&[0x4D], 0);
        assert!(b.poll(299).is_empty());
        assert_eq!(b.next_deadline(299), Some(300));
        assert_eq!(b.poll(300).len(), 5);
    }

    #[test]
    fn noise_is_seeded_and_low_bit_only() {
        let opts = BoardOptions {
            noise: Some(NoiseOptions {
                mean_interval_ms: 100,
                max_len: 4,
                high_bit: false,
                seed: 7,
            }),
            ..BoardOptions::default()
        };
        let run = || {
            let mut b = VirtualBoard::new(opts.clone(), 0);
            let mut all = Vec::new();
            for t in (0..10_000).step_by(10) {
                all.extend(b.poll(t));
            }
            all
        };
        let a = run();
        assert!(!a.is_empty());
        assert!(a.iter().all(|b| b & 0x80 == 0));
        assert_eq!(a, run());
    }

    #[test]
    fn every_answer_decodes_to_what_the_board_holds() {
        use eboard_core::dgt::Decoder;
        let mut b = VirtualBoard::new(
            BoardOptions {
                battery: Some(SimBattery {
                    percent: 87,
                    charging: false,
                }),
                ..BoardOptions::default()
            },
            0,
        );
        b.receive(&[0x45, 0x55, 0x46, 0x47, 0x4D, 0x4C, 0x49, 0x41, 0x42], 0);
        let (messages, stats) = Decoder::decode_all(&b.poll(0));
        assert_eq!(stats.skipped_bytes, 0, "{stats:?}");
        assert_eq!(messages.len(), 9, "{messages:?}");
        assert_eq!(messages[0], Message::SerialNumber("13116".into()));
        assert_eq!(messages[1], Message::LongSerialNumber("3000147740".into()));
        assert_eq!(messages[2], Message::BusAddress(13116));
        assert_eq!(
            messages[3],
            Message::Trademark(BoardOptions::default().trademark)
        );
        assert_eq!(
            messages[4],
            Message::Version {
                major: 3,
                minor: 10
            }
        );
        assert!(
            matches!(&messages[5], Message::BatteryStatus(s) if s.percent == 87 && s.discharging)
        );
        let Message::EeMoves(log) = &messages[6] else {
            panic!("{:?}", messages[6]);
        };
        assert_eq!(log.first(), Some(&EeEvent::Nop));
        assert!(log.contains(&EeEvent::BeginPos));
        assert_eq!(log.last(), Some(&EeEvent::Eof));
        assert!(
            matches!(&messages[7], Message::ClockTimes(t) if !t.status.running && t.status.connected)
        );
        assert!(
            matches!(&messages[8], Message::BoardDump(f) if f[0] == Some(Piece { color: Color::Black, role: Role::Rook }))
        );
    }

    #[test]
    fn only_a_battery_board_answers_the_battery_question() {
        let mut usb = board();
        usb.receive(&[0x4C], 0);
        assert!(usb.poll(0).is_empty());
        let mut bt = VirtualBoard::new(super::super::models::bluetooth_board(15), 0);
        bt.receive(&[0x4C], 0);
        let (messages, _) = eboard_core::dgt::Decoder::decode_all(&bt.poll(0));
        assert!(
            matches!(&messages[..], [Message::BatteryStatus(s)] if s.percent == 15 && !s.charging)
        );
        bt.set_battery(
            SimBattery {
                percent: 16,
                charging: true,
            },
            0,
        );
        bt.receive(&[0x4C], 0);
        let (messages, _) = eboard_core::dgt::Decoder::decode_all(&bt.poll(0));
        assert!(
            matches!(&messages[..], [Message::BatteryStatus(s)] if s.percent == 16 && s.charging)
        );
    }

    #[test]
    fn a_revelation_tells_its_firmware_shows_text_and_turns_itself() {
        use super::super::models::revelation_board;
        let text = [
            0x2B, 0x0F, 0x03, 0x0D, b'B', b'O', b'A', b'R', b'D', b' ', b'7', b' ', b' ', b' ',
            b' ', 0, 0,
        ];
        let mut new = VirtualBoard::new(revelation_board((3, 25)), 0);
        new.receive(&[0x55, 0x4B], 0);
        let (messages, _) = eboard_core::dgt::Decoder::decode_all(&new.poll(0));
        assert_eq!(messages[0], Message::LongSerialNumber("3.25001000".into()));
        new.receive(&text, 0);
        assert_eq!(new.display_text(), Some("BOARD 7"));
        let mut old = VirtualBoard::new(revelation_board((3, 21)), 0);
        old.receive(&[0x4B], 0);
        old.receive(&text, 0);
        assert_eq!(old.display_text(), None, "3.21 has no text command");

        // Set up reversed (Black on the connector side): the new firmware turns round and
        // sends its whole board the normal way; the old one reports the fields as they lie.
        let reversed = BoardOptions {
            orientation: Orientation::Reversed,
            ..revelation_board((3, 25))
        };
        let mut b = VirtualBoard::new(reversed.clone(), 0);
        b.receive(&[0x42], 0);
        let (messages, _) = eboard_core::dgt::Decoder::decode_all(&b.poll(0));
        let Message::BoardDump(f) = &messages[0] else {
            panic!()
        };
        assert_eq!(
            f[0].map(|p| p.color),
            Some(Color::Black),
            "a8 holds Black's rook"
        );
        let old_reversed = BoardOptions {
            orientation: Orientation::Reversed,
            ..revelation_board((3, 21))
        };
        let mut o = VirtualBoard::new(old_reversed, 0);
        o.receive(&[0x42], 0);
        let (messages, _) = eboard_core::dgt::Decoder::decode_all(&o.poll(0));
        let Message::BoardDump(f) = &messages[0] else {
            panic!()
        };
        assert_eq!(f[0].map(|p| p.color), Some(Color::White), "field 0 is h1");
    }

    #[test]
    fn forbidden_and_foreign_commands_get_no_answer() {
        let mut b = board();
        // Boot loader, EEPROM scan setting, bus mode, a bus ping, a Revelation LED frame.
        b.receive(
            &[
                0x4E, 0x54, 0x4A, 0x87, 0x10, 0x06, 0x1D, 0x60, 0x04, 0, 0x40, 0x40, 0,
            ],
            0,
        );
        assert!(b.poll(0).is_empty());
        assert!(b.stats().ignored_commands >= 4, "{:?}", b.stats());
        assert_eq!(b.mode(), UpdateMode::Idle);
    }

    proptest::proptest! {
        /// Whatever a host sends, whenever: no panic, and every byte the board sends is part
        /// of a well-formed message.
        #[test]
        fn any_host_bytes_give_well_formed_output(
            chunks in proptest::collection::vec(
                (proptest::collection::vec(proptest::num::u8::ANY, 0..24), 0u64..3_000),
                0..40,
            ),
            moves in proptest::collection::vec((0usize..64, 0u8..13), 0..20),
        ) {
            let mut b = board();
            let mut now = 0;
            let mut out = Vec::new();
            for (i, (bytes, dt)) in chunks.iter().enumerate() {
                now += dt;
                b.receive(bytes, now);
                if let Some(&(sq, code)) = moves.get(i) {
                    let square = Square::ALL[sq];
                    // Codes 1–12 are the pieces in the protocol's own order.
                    match eboard_core::dgt::wire::piece_from_code(code) {
                        eboard_core::dgt::wire::PieceCode::Known(Some(piece)) => {
                            b.place(square, piece, now)
                        }
                        _ => b.lift(square, now),
                    }
                    b.press_lever(if code % 2 == 0 { ClockSide::Left } else { ClockSide::Right }, now);
                }
                out.extend(b.poll(now));
                proptest::prop_assert!(b.next_deadline(now).is_none_or(|t| t >= now));
            }
            let (_, stats) = eboard_core::dgt::Decoder::decode_all(&out);
            proptest::prop_assert_eq!(stats.skipped_bytes, 0);
        }
    }

    #[test]
    fn clock_buttons_are_reported_in_update_modes() {
        let mut b = board();
        b.press_button(0x33, 0);
        assert!(b.poll(0).is_empty());
        b.receive(&[0x4B], 0);
        let _ = b.poll(0);
        b.press_button(0x33, 0);
        let (messages, _) = eboard_core::dgt::Decoder::decode_all(&b.poll(0));
        assert_eq!(
            messages,
            [Message::ClockAck(ClockAck {
                bytes: [0x10, 0x88, 0, 0x33]
            })]
        );
    }

    #[test]
    fn setnrun_sets_times() {
        let mut b = board();
        b.receive(&[0x4B], 0);
        let _ = b.poll(0);
        // left 0:05:00 right 0:04:00, left runs.
        b.receive(&[0x2B, 0x0A, 0x03, 0x0A, 0, 5, 0, 0, 4, 0, 0x01, 0x00], 0);
        let out = b.poll(0);
        // ack then new times.
        assert_eq!(&out[..10], &[0x8D, 0, 10, 0x0A, 0x10, 0x0A, 0x0A, 0, 0, 0]);
        assert_eq!(&out[10..], &[0x8D, 0, 10, 0x20, 4, 0, 0x20, 5, 0, 0x09]);
    }
}
