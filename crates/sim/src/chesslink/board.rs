//! A Millennium board as a pure state machine (no I/O, time passed in as ms): the pieces, the
//! option bytes, the LEDs, the scans and what it sends when.
//!
//! Fed host bytes ([`MillenniumBoard::receive`]) and hands ([`MillenniumBoard::lift`], …),
//! it returns the bytes a board sends once they are due ([`MillenniumBoard::poll`]). Between
//! two calls the pieces do not move, so scans that fell due meanwhile are read from the
//! placement as it was, in order, before anything else changes.
//!
//! What the fact sheet leaves open is chosen here and said so:
//! - at power-up and after a reset the first scan is the reference: nothing is sent for it
//!   in the change-reporting modes (ask with `S`); in the report-every-scan mode it is sent;
//! - a report interval of 0 (mode 2) sends nothing;
//! - bit 0 of option byte 00 (no block check) is stored but every command still needs its
//!   check and every reply carries one;
//! - the scan time read back is the value written, even when the board uses the default for
//!   values below 15;
//! - commands that arrive during the 3 s of a reset are lost.

use std::collections::VecDeque;

use eboard_core::chesslink::settings::{
    AUTO_REPORT, DEFAULT_SCAN_TIME, REPORT_INTERVAL, SCAN_TIME, scan_period_us,
};
use eboard_core::chesslink::{
    AutoReport, Command, CommandDecoder, DecoderStats, LedPattern, ParityBy, Reply, Scan, Version,
    WireOrder,
};
use shakmaty::{Board, Piece, Square};

/// How long a reset keeps the board out of service.
pub const RESET_MS: u64 = 3_000;

/// LED patterns kept in the log (the oldest go first).
const LED_LOG_LEN: usize = 4_096;

/// How to build a simulated Millennium board.
#[derive(Debug, Clone)]
pub struct MillenniumOptions {
    /// The version reply. 2.x is what the drivers take for an eONE.
    pub version: Version,
    /// The order of the status characters and LED numbers: `A8First` is the board turned
    /// round (Black on the usual White side).
    pub order: WireOrder,
    /// Milliseconds between a command's last byte and its reply.
    pub reply_delay_ms: u64,
    /// The option bytes at first power-up (address, value); the rest read 0. The board's
    /// defaults: a report after every scan (02 = 0) and a 40.96 ms scan (01 = 20).
    pub eeprom: Vec<(u8, u8)>,
    /// The pieces at power-up.
    pub position: Board,
}

impl Default for MillenniumOptions {
    fn default() -> Self {
        MillenniumOptions {
            version: Version { high: 2, low: 0 },
            order: WireOrder::H1First,
            reply_delay_ms: 2,
            eeprom: vec![(SCAN_TIME, DEFAULT_SCAN_TIME), (AUTO_REPORT, 0)],
            position: Board::default(),
        }
    }
}

/// What the board counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MillenniumStats {
    /// Commands carried out.
    pub commands: u64,
    /// Commands lost because the board was resetting.
    pub ignored_while_resetting: u64,
    /// Status reports sent (asked for or automatic).
    pub reports: u64,
    pub resets: u64,
}

/// The simulated board. See the [module documentation](self).
#[derive(Debug, Clone)]
pub struct MillenniumBoard {
    opts: MillenniumOptions,
    placement: Board,
    eeprom: [u8; 256],
    leds: LedPattern,
    led_log: VecDeque<(u64, LedPattern)>,
    decoder: CommandDecoder,
    /// Bytes to send and the time (µs) they are due, in order.
    out: VecDeque<(u64, Vec<u8>)>,
    powered: bool,
    /// When scanning started (µs): scans fall at `epoch + k × period`.
    epoch_us: u64,
    /// The next scan not yet read (µs).
    next_scan_us: u64,
    /// The last status reported automatically (or the reference scan after power-up).
    reported: Option<Scan>,
    /// A changed scan and how many scans in a row read it (the debounce).
    settling: Option<(Scan, u8)>,
    /// The next interval report (mode 2, µs).
    next_interval_us: u64,
    /// Out of service until then (a reset, µs).
    busy_until_us: u64,
    stats: MillenniumStats,
}

fn us(ms: u64) -> u64 {
    ms.saturating_mul(1000)
}

impl MillenniumBoard {
    /// A board powered up at `now` ms.
    pub fn new(opts: MillenniumOptions, now: u64) -> MillenniumBoard {
        let mut eeprom = [0; 256];
        for &(address, value) in &opts.eeprom {
            eeprom[usize::from(address)] = value;
        }
        let mut board = MillenniumBoard {
            placement: opts.position.clone(),
            opts,
            eeprom,
            leds: LedPattern::default(),
            led_log: VecDeque::new(),
            decoder: CommandDecoder::new(),
            out: VecDeque::new(),
            powered: false,
            epoch_us: 0,
            next_scan_us: 0,
            reported: None,
            settling: None,
            next_interval_us: 0,
            busy_until_us: 0,
            stats: MillenniumStats::default(),
        };
        board.power_on(us(now));
        board
    }

    pub fn options(&self) -> &MillenniumOptions {
        &self.opts
    }

    /// The pieces on the board (game squares).
    pub fn placement(&self) -> &Board {
        &self.placement
    }

    /// What the LEDs show now.
    pub fn leds(&self) -> &LedPattern {
        &self.leds
    }

    /// Every LED state the board was put in, with the board time (ms), oldest first.
    pub fn led_log(&self) -> impl Iterator<Item = &(u64, LedPattern)> {
        self.led_log.iter()
    }

    /// The option byte at `address`.
    pub fn option_byte(&self, address: u8) -> u8 {
        self.eeprom[usize::from(address)]
    }

    pub fn auto_report(&self) -> AutoReport {
        AutoReport::from_code(self.option_byte(AUTO_REPORT))
    }

    pub fn powered(&self) -> bool {
        self.powered
    }

    pub fn stats(&self) -> MillenniumStats {
        self.stats
    }

    /// What the board's command decoder dropped (wrong parity, wrong check, cut short).
    pub fn line_stats(&self) -> DecoderStats {
        self.decoder.stats()
    }

    /// The status report of the pieces as they stand.
    pub fn scan(&self) -> Scan {
        Scan::from_board(&self.placement, self.opts.order)
    }

    fn scan_period_us(&self) -> u64 {
        u64::from(scan_period_us(self.option_byte(SCAN_TIME)))
    }

    /// Power (back) on at `now_us`: LEDs off, nothing queued, scanning from now.
    fn power_on(&mut self, now_us: u64) {
        self.powered = true;
        self.leds = LedPattern::default();
        self.out.clear();
        self.decoder.reset();
        self.epoch_us = now_us;
        self.next_scan_us = now_us;
        self.next_interval_us = now_us;
        self.reported = None;
        self.settling = None;
    }

    /// The USB plug is pulled: no power, nothing sent, LEDs dark. The pieces stay where they
    /// are and can still be moved; the option bytes are kept.
    pub fn power_off(&mut self, now: u64) {
        self.catch_up(us(now));
        self.powered = false;
        self.out.clear();
        self.set_leds(LedPattern::default(), now);
    }

    /// Plugged back in at `now`.
    pub fn power_cycle(&mut self, now: u64) {
        self.power_on(us(now));
        self.log_leds(now);
    }

    pub fn lift(&mut self, square: Square, now: u64) {
        self.catch_up(us(now));
        self.placement.discard_piece_at(square);
    }

    pub fn place(&mut self, square: Square, piece: Piece, now: u64) {
        self.catch_up(us(now));
        self.placement.set_piece_at(square, piece);
    }

    /// Rearrange every piece at once.
    pub fn set_position(&mut self, position: &Board, now: u64) {
        self.catch_up(us(now));
        self.placement = position.clone();
    }

    /// Put `bytes` on the line now, as they are (line noise).
    pub fn send_raw(&mut self, bytes: Vec<u8>, now: u64) {
        self.catch_up(us(now));
        if self.powered {
            self.queue(us(now), bytes);
        }
    }

    /// Bytes from the host.
    pub fn receive(&mut self, bytes: &[u8], now: u64) {
        self.catch_up(us(now));
        if !self.powered {
            return;
        }
        self.decoder.push(bytes);
        while let Some(command) = self.decoder.next_message() {
            if us(now) < self.busy_until_us {
                self.stats.ignored_while_resetting += 1;
                continue;
            }
            self.stats.commands += 1;
            self.carry_out(command, now);
        }
    }

    fn carry_out(&mut self, command: Command, now: u64) {
        let due = us(now + self.opts.reply_delay_ms);
        let reply = match command {
            Command::Version => Reply::Version(self.opts.version),
            Command::Status => {
                self.stats.reports += 1;
                Reply::Status(self.scan())
            }
            Command::Leds(pattern) => {
                self.set_leds(pattern, now);
                Reply::LedsSet
            }
            Command::LedsOff => {
                self.set_leds(LedPattern::dark(self.leds.slot_time), now);
                Reply::LedsOff
            }
            Command::Reset => {
                self.stats.resets += 1;
                self.power_on(us(now));
                self.log_leds(now);
                self.busy_until_us = us(now + RESET_MS);
                self.epoch_us = self.busy_until_us;
                self.next_scan_us = self.busy_until_us;
                self.next_interval_us = self.busy_until_us;
                return;
            }
            Command::Write { address, value } => {
                self.eeprom[usize::from(address)] = value;
                if matches!(address, SCAN_TIME | AUTO_REPORT | REPORT_INTERVAL) {
                    // A new mode starts from the pieces as they stand.
                    self.reported = Some(self.scan());
                    self.settling = None;
                    self.next_interval_us = us(now);
                }
                Reply::Written { address, value }
            }
            Command::Read { address } => Reply::Read {
                address,
                value: self.option_byte(address),
            },
        };
        self.queue(due, reply.encode(ParityBy::Host));
    }

    fn set_leds(&mut self, pattern: LedPattern, now: u64) {
        self.leds = pattern;
        self.log_leds(now);
    }

    fn log_leds(&mut self, now: u64) {
        if self.led_log.len() == LED_LOG_LEN {
            self.led_log.pop_front();
        }
        self.led_log.push_back((now, self.leds));
    }

    /// Queue `bytes` at `due` after everything due no later.
    fn queue(&mut self, due: u64, bytes: Vec<u8>) {
        let at = self.out.partition_point(|(t, _)| *t <= due);
        self.out.insert(at, (due, bytes));
    }

    /// Read every scan due by `now_us` (the pieces as they stand) and queue its report.
    fn catch_up(&mut self, now_us: u64) {
        if !self.powered || now_us < self.busy_until_us {
            return;
        }
        let period = self.scan_period_us().max(1);
        while self.next_scan_us <= now_us {
            let at = self.next_scan_us;
            if self.idle() {
                // Nothing can come of the scans until the pieces move: skip to the next
                // scan after now.
                let k = (now_us - self.epoch_us) / period + 1;
                self.next_scan_us = self.epoch_us + k * period;
                break;
            }
            self.read_scan(at);
            self.next_scan_us = at + period;
        }
    }

    /// Whether a scan would neither report nor change the debounce.
    fn idle(&self) -> bool {
        let mode = self.auto_report();
        match mode {
            AutoReport::EveryScan => false,
            // An interval of 0 sends nothing (see the module documentation).
            AutoReport::Interval => self.option_byte(REPORT_INTERVAL) == 0,
            AutoReport::Off => true,
            _ => self.settling.is_none() && self.reported == Some(self.scan()),
        }
    }

    fn read_scan(&mut self, at: u64) {
        let scan = self.scan();
        let mode = self.auto_report();
        let Some(reference) = self.reported else {
            // The first scan after power-up: the reference.
            self.reported = Some(scan);
            if mode == AutoReport::EveryScan {
                self.report(scan, at);
            }
            return;
        };
        match mode {
            AutoReport::EveryScan => self.report(scan, at),
            AutoReport::Off => {}
            AutoReport::Interval => {
                let interval = u64::from(self.option_byte(REPORT_INTERVAL)) * 4_096;
                if interval > 0 && at >= self.next_interval_us {
                    self.report(scan, at);
                    while self.next_interval_us <= at {
                        self.next_interval_us += interval;
                    }
                }
            }
            _ => {
                let need = mode.scans_to_settle().unwrap_or(1);
                let seen = match self.settling {
                    Some((s, n)) if s == scan => n.saturating_add(1),
                    _ => 1,
                };
                if scan == reference {
                    self.settling = None;
                } else if seen >= need {
                    self.settling = None;
                    self.reported = Some(scan);
                    self.report(scan, at);
                } else {
                    self.settling = Some((scan, seen));
                }
            }
        }
    }

    fn report(&mut self, scan: Scan, at: u64) {
        self.stats.reports += 1;
        self.queue(at, Reply::Status(scan).encode(ParityBy::Host));
    }

    /// When (ms) something is next due: a queued reply or a scan that may report.
    pub fn next_deadline(&self, now: u64) -> Option<u64> {
        if !self.powered {
            return None;
        }
        let queued = self.out.front().map(|(t, _)| t.div_ceil(1000));
        let scan = if us(now) < self.busy_until_us {
            Some(self.busy_until_us)
        } else if self.idle() {
            None
        } else {
            Some(self.next_scan_us)
        };
        let scan = scan.map(|t| t.div_ceil(1000));
        [queued, scan].into_iter().flatten().min()
    }

    /// Every byte due by `now`, in order.
    pub fn poll(&mut self, now: u64) -> Vec<u8> {
        self.catch_up(us(now));
        let mut bytes = Vec::new();
        while let Some((due, _)) = self.out.front() {
            if *due > us(now) {
                break;
            }
            if let Some((_, chunk)) = self.out.pop_front() {
                bytes.extend(chunk);
            }
        }
        bytes
    }
}

#[cfg(test)]
#[path = "board_tests.rs"]
mod tests;
