//! The [`Link`] state machine: one board's port from opening to losing it, and again.
//!
//! Its life: closed → (`Output::Open`) opening → open → answered once a complete message
//! arrives → connected once the whole board is read (the first thing the handshake asks, so a
//! gap ends at that reading and every change after it is followed live; a listen-only link,
//! which cannot ask, is connected by any message) → lost (end of file, an I/O error, or silence) → closed, reopened after a backoff
//! that doubles from [`BACKOFF_MIN_MS`] to [`BACKOFF_MAX_MS`] and starts again once the board
//! answers. While open it paces writes (one command per [`HANDSHAKE_GAP_MS`], the handshake
//! first, clock commands between board commands), probes a quiet board and declares a silent
//! one lost. A listen-only link never writes and is never lost by silence.

use std::collections::VecDeque;
use std::io;

use crate::board_input::{BoardInput, IdentityReport};
use crate::dgt::clock_channel::Outcome;
use crate::identity::Identity;
use crate::session::{BoardRequest, Input};
use crate::vocab::Millis;

use super::driver::{Driver, LineSettings, Protocol};
use super::idle_tick::IdleTick;
use super::output::{ClockRefusal, Fact, Lost, Output};

/// How often the session gets a `Tick` while the port is open and the session wants the
/// periodic tick (`Session::wants_ticks`: a rule judged at each tick waits); the session's
/// own deadlines and the watchdog's are exact, not on this grid.
pub const TICK_MS: Millis = 100;
/// The instants in each [`TICK_MS`] at which boards are ticked (see [`Link::with_tick_slot`]).
pub const TICK_SLOTS: u64 = 10;
/// Silence after which a probe is sent (the board answers it with its version).
pub const PROBE_AFTER_MS: Millis = 2_000;
/// Silence after which the board counts as gone (unless listen-only, which cannot probe).
pub const LOST_AFTER_MS: Millis = 5_000;
/// Reconnection backoff: first retry, and the ceiling the doubling stops at.
pub const BACKOFF_MIN_MS: Millis = 200;
pub const BACKOFF_MAX_MS: Millis = 2_000;
/// Wait after opening the port before the first command: USB boards and adapters may
/// still be settling (picochess waits 500 ms, the Dart driver 300 ms).
pub const OPEN_SETTLE_MS: Millis = 300;
/// How often a board with a battery is asked for it (0x4C) once connected; the handshake
/// asks once at every connection. A DGT Bluetooth board runs for many hours on a charge, so
/// its percentage moves by about one point in several minutes: once a minute shows the 20 %
/// warning within a minute of it being due, costs one byte up and twelve down a minute on a
/// line that carries a clock message a second, and never crowds the clock commands (a
/// Bluetooth board polls its clock only two or three times a second, DGT's header says).
pub const BATTERY_POLL_MS: Millis = 60_000;
/// After a first battery answer on a port that is not an rfcomm device, the battery is asked
/// again this soon: the second answer names the board a Bluetooth one (see `identity`), and
/// the minute's polling goes on from there.
pub const CONFIRM_ASK_MS: Millis = 1_000;
/// Gap between two commands: at power-up a board is in bus mode and buffers a single
/// command; picochess gives it 100 ms per command.
pub const HANDSHAKE_GAP_MS: Millis = 100;

/// Where the port is.
#[derive(Debug)]
enum Port {
    Closed,
    /// `Output::Open` was given; the shell answers with `on_opened` / `on_open_failed`.
    Opening,
    Open(Box<OpenLink>),
}

/// An open port and its watchdog state.
#[derive(Debug)]
struct OpenLink {
    opened_at: Millis,
    /// When a complete message (or the start of one) last arrived; `None`: not yet.
    last_rx: Option<Millis>,
    last_probe: Millis,
    /// Board commands waiting to be written, one per [`HANDSHAKE_GAP_MS`].
    outbox: VecDeque<Vec<u8>>,
    /// When the next command may go out.
    next_write: Millis,
    /// The board's protocol: its decoder, its commands, its clock commands (one in flight,
    /// acknowledged, retried once).
    driver: Driver,
    /// A complete message has arrived since the port opened: the board is there.
    answered: bool,
    /// The whole board has been read since the port opened (listen-only: a message came):
    /// the `Connected` the session is told.
    connected: bool,
    /// When the whole board was last asked for (written), while not yet connected.
    board_asked: Option<Millis>,
    /// When the battery is asked for next (`None`: the board has none, or is not connected).
    battery_due: Option<Millis>,
    /// Added to the clock channel's request ids, which start again with each channel, so
    /// that an id names one request over the link's whole life.
    clock_ids: u64,
}

impl OpenLink {
    fn new(now: Millis, clock_ids: u64, protocol: Protocol) -> Self {
        OpenLink {
            opened_at: now,
            last_rx: None,
            last_probe: now,
            outbox: VecDeque::new(),
            next_write: now,
            driver: Driver::new(protocol),
            answered: false,
            connected: false,
            board_asked: None,
            battery_due: None,
            clock_ids,
        }
    }

    /// Queue the handshake (a board that never answered gets it again on a probe).
    fn queue_handshake(&mut self, not_before: Millis) {
        self.outbox.extend(self.driver.handshake());
        self.next_write = self.next_write.max(not_before);
    }

    /// When something may be written next (`None`: nothing waits to be written).
    fn write_due(&self) -> Option<Millis> {
        if !self.outbox.is_empty() {
            return Some(self.next_write);
        }
        self.driver.poll_timeout().map(|t| t.max(self.next_write))
    }

    fn heard(&self) -> Millis {
        self.last_rx.unwrap_or(self.opened_at)
    }

    /// When the watchdog next has something to decide: the next probe, the loss, or asking
    /// again for a whole board that did not come.
    fn watchdog_due(&self) -> Millis {
        let heard = self.heard();
        let probe = (heard + PROBE_AFTER_MS).max(self.last_probe + PROBE_AFTER_MS);
        let board = self.board_overdue_at().unwrap_or(Millis::MAX);
        let battery = self.battery_due.unwrap_or(Millis::MAX);
        probe.min(heard + LOST_AFTER_MS).min(board).min(battery)
    }

    /// When a board that answers but whose whole board has not come is asked again.
    fn board_overdue_at(&self) -> Option<Millis> {
        if self.connected || !self.answered || self.board_queued() {
            return None;
        }
        Some(self.board_asked.unwrap_or(self.opened_at) + PROBE_AFTER_MS)
    }

    /// A request for the whole board waits in the outbox.
    fn board_queued(&self) -> bool {
        let send_board = self.driver.request(BoardRequest::SendBoard);
        self.outbox.iter().any(|b| *b == send_board)
    }

    /// Ask for the whole board (again), unless a request waits to be written.
    fn ask_board(&mut self) {
        if !self.board_queued() {
            let send_board = self.driver.request(BoardRequest::SendBoard);
            self.outbox.push_back(send_board);
        }
    }

    /// Move the clock channel's outcomes to the outputs.
    fn drain_clock(&mut self, outputs: &mut VecDeque<Output>) {
        while let Some(outcome) = self.driver.poll_clock() {
            outputs.push_back(match outcome {
                Outcome::Shown(id) => Output::Clock {
                    request: self.clock_ids + id,
                    result: Ok(()),
                },
                Outcome::Failed(id, e) => Output::Clock {
                    request: self.clock_ids + id,
                    result: Err(e),
                },
            });
        }
    }
}

/// What the session waits on, as the shell tells the link before it sleeps: its exact
/// deadline (`Session::next_wakeup`) and whether it wants the periodic tick
/// (`Session::wants_ticks`). The default (never told) ticks on the grid, as a link without a
/// session to ask does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionTimer {
    pub wakeup: Option<Millis>,
    pub ticks: bool,
}

impl Default for SessionTimer {
    fn default() -> Self {
        SessionTimer {
            wakeup: None,
            ticks: true,
        }
    }
}

/// One board's serial link (see the module documentation).
#[derive(Debug)]
pub struct Link {
    listen_only: bool,
    port: Port,
    backoff: Millis,
    next_attempt: Millis,
    /// Open failures in a row (reset when the board answers): only the first is loud.
    open_failures: u32,
    /// When the session was last ticked, and so when its idle tick is due.
    idle: IdleTick,
    /// The next periodic session tick while the port is open.
    next_tick: Millis,
    /// Where in each [`TICK_MS`] this link's ticks fall (see [`Link::with_tick_slot`]).
    tick_phase: Millis,
    /// What the session waits on, as the shell last said (see [`SessionTimer`]).
    session: SessionTimer,
    /// Ports opened so far: each open link's clock request ids start at this many 2^32.
    opened: u64,
    outputs: VecDeque<Output>,
    /// What the board says it is: whether it has a battery to ask about, where text goes.
    identity: Identity,
    /// The protocol the board speaks.
    protocol: Protocol,
}

impl Link {
    /// A closed link; the first [`Link::handle_timeout`] asks for the port to be opened.
    pub fn new(listen_only: bool) -> Self {
        Link {
            listen_only,
            port: Port::Closed,
            backoff: BACKOFF_MIN_MS,
            next_attempt: 0,
            open_failures: 0,
            idle: IdleTick::default(),
            next_tick: 0,
            tick_phase: 0,
            session: SessionTimer::default(),
            opened: 0,
            outputs: VecDeque::new(),
            identity: Identity::default(),
            protocol: Protocol::default(),
        }
    }

    /// A link to a board speaking `protocol` (DGT unless told).
    pub fn with_protocol(mut self, protocol: Protocol) -> Self {
        self.protocol = protocol;
        self
    }

    /// The protocol the board on the port speaks, decided by the shell before it opens the
    /// port (`protocol = "auto"`: from the port's USB identity); taken at the next opening.
    pub fn set_protocol(&mut self, protocol: Protocol) {
        self.protocol = protocol;
    }

    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// How the shell sets up the serial port for this board's protocol.
    pub fn line(&self) -> LineSettings {
        self.protocol.line()
    }

    /// The port is a Bluetooth serial link (an rfcomm device): its battery is asked for from
    /// the start.
    pub fn set_bluetooth_port(&mut self, bluetooth: bool) {
        self.identity.set_bluetooth_port(bluetooth);
    }

    /// What the board has said about itself on this link.
    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    /// Tick the session in slot `slot` (of [`TICK_SLOTS`]) of every [`TICK_MS`] since the time
    /// origin: boards given the same slot are ticked at the same instants, so the daemon's
    /// runtime wakes once per slot for all of them instead of once per board (at 200 boards,
    /// 100 wake-ups a second instead of 2,000), while spreading the boards over the slots
    /// keeps each burst of ticks short, so a move read during one waits little.
    pub fn with_tick_slot(mut self, slot: u64) -> Self {
        self.tick_phase = (slot % TICK_SLOTS) * (TICK_MS / TICK_SLOTS);
        self
    }

    /// The port is open (the board may not have answered yet).
    pub fn is_open(&self) -> bool {
        matches!(self.port, Port::Open(_))
    }

    /// A board answers on the open port: the `Connected` property.
    pub fn is_connected(&self) -> bool {
        matches!(&self.port, Port::Open(o) if o.connected)
    }

    /// The next thing for the shell to do or know, oldest first.
    pub fn poll_output(&mut self) -> Option<Output> {
        self.outputs.pop_front()
    }

    /// What the session waits on, said by the shell at `now` before it sleeps
    /// (`Session::next_wakeup`, `Session::wants_ticks`); it counts while the port is open.
    /// The grid is brought up to `now` (instants passed while the session wanted no tick are
    /// not owed), so a session that wants the tick again gets it at the grid's next instant,
    /// as it would have had it wanted it all along.
    pub fn set_session_timer(&mut self, timer: SessionTimer, now: Millis) {
        self.session = timer;
        if self.next_tick < now {
            let since = (now + TICK_MS - self.tick_phase) % TICK_MS;
            self.next_tick = now + (TICK_MS - since) % TICK_MS;
        }
    }

    /// When the machine next needs [`Link::handle_timeout`], if nothing else arrives: the
    /// link's own deadlines, and while the port is open the session's next tick (unclamped:
    /// see [`Link::wake_at`]).
    pub fn poll_timeout(&self) -> Millis {
        match self.session_due() {
            Some(session) => self.own_due().min(session),
            None => self.own_due(),
        }
    }

    /// The link's own next deadline: a write, the watchdog, reopening, the idle tick.
    fn own_due(&self) -> Millis {
        match &self.port {
            Port::Open(o) if !self.listen_only => o
                .write_due()
                .map_or(Millis::MAX, |w| w)
                .min(o.watchdog_due()),
            Port::Open(_) => Millis::MAX,
            Port::Closed => self.idle.timer_due(false).min(self.next_attempt),
            Port::Opening => self.idle.timer_due(false),
        }
    }

    /// While the port is open, the session's next tick: on the grid while it wants the
    /// periodic tick, else a second after the last; sooner at its own deadline.
    fn session_due(&self) -> Option<Millis> {
        if !self.is_open() {
            return None;
        }
        let periodic = if self.session.ticks {
            self.next_tick
        } else {
            self.idle.timer_due(true)
        };
        Some(self.session.wakeup.map_or(periodic, |w| w.min(periodic)))
    }

    /// When the shell should wake: [`Link::poll_timeout`], the session's part never sooner
    /// than a millisecond from `now`, so a deadline a tick does not clear cannot spin.
    pub fn wake_at(&self, now: Millis) -> Millis {
        match self.session_due() {
            Some(session) => self.own_due().min(session.max(now + 1)),
            None => self.own_due(),
        }
    }

    /// Time has passed: tick the session if its tick is due, write what is due, probe or
    /// give up on a quiet board, or ask for the port to be opened again.
    pub fn handle_timeout(&mut self, now: Millis) {
        let on_grid = now >= self.next_tick;
        if on_grid {
            // On this link's slot of the grid since the time origin, not `now + TICK_MS`:
            // see `with_tick_slot`. Still one tick every TICK_MS.
            let since = (now + TICK_MS - self.tick_phase) % TICK_MS;
            self.next_tick = now + (TICK_MS - since);
        }
        let open = self.is_open();
        let idle = now >= self.idle.timer_due(open);
        let s = self.session;
        let tick = idle || (open && ((on_grid && s.ticks) || s.wakeup.is_some_and(|w| w <= now)));
        if tick {
            self.idle.ticked(now);
            self.outputs.push_back(Output::Session(Input::Tick));
        }
        match self.port {
            Port::Open(_) => {
                self.watchdog(now);
                self.pump(now);
            }
            Port::Closed if now >= self.next_attempt => {
                self.port = Port::Opening;
                // The attempt counts whether or not it works: a port that opens but never
                // answers is retried ever more slowly too.
                self.backoff = (self.backoff * 2).min(BACKOFF_MAX_MS);
                self.next_attempt = now + self.backoff;
                self.outputs.push_back(Output::Open);
            }
            Port::Closed | Port::Opening => {}
        }
    }

    /// The port asked for with `Output::Open` is open: queue the handshake (unless
    /// listen-only) after the settling time.
    pub fn on_opened(&mut self, now: Millis) {
        if self.is_open() {
            return;
        }
        let mut o = OpenLink::new(now, self.opened << 32, self.protocol);
        self.opened += 1;
        self.identity.link_up();
        if !self.listen_only {
            o.queue_handshake(now + OPEN_SETTLE_MS);
        }
        self.port = Port::Open(Box::new(o));
        self.outputs.push_back(Output::Fact(Fact::PortOpened));
    }

    /// The port could not be opened; it is tried again after the backoff.
    pub fn on_open_failed(&mut self, error: io::Error) {
        if self.is_open() {
            return;
        }
        self.port = Port::Closed;
        self.open_failures += 1;
        self.outputs.push_back(Output::Fact(Fact::OpenFailed {
            error,
            first: self.open_failures == 1,
        }));
    }

    /// Bytes read from the port.
    pub fn on_bytes(&mut self, bytes: &[u8], now: Millis) {
        let Port::Open(o) = &mut self.port else {
            return;
        };
        let out = &mut self.outputs;
        let before = o.driver.stats();
        let heard = o.driver.push(bytes, now);
        let after = o.driver.stats();
        let skipped = after.skipped - before.skipped;
        if skipped > 0 {
            out.push_back(Output::Fact(Fact::Skipped(skipped)));
        }
        let unprintable = after.unprintable_text - before.unprintable_text;
        if unprintable > 0 {
            out.push_back(Output::Fact(Fact::UnprintableText(unprintable)));
        }
        let lost_frame = after.lost_frames > before.lost_frames;
        if !heard.is_empty() || o.driver.in_frame() {
            o.last_rx = Some(now);
        }
        if !heard.is_empty() && !o.answered {
            o.answered = true;
            self.backoff = BACKOFF_MIN_MS;
            self.open_failures = 0;
            out.push_back(Output::Fact(Fact::Answers));
        }
        if lost_frame && o.connected {
            out.push_back(Output::Fact(Fact::FrameLost));
            out.push_back(Output::Session(Input::LineLoss));
        } else if lost_frame && !self.listen_only {
            // Not connected yet: the cut frame may have been the whole board asked for.
            o.ask_board();
        }
        let mut answered_battery = false;
        let mut named_clock = false;
        for input in heard.iter().flatten() {
            self.identity.on_input(input);
            answered_battery |= matches!(input, BoardInput::Battery(_));
            named_clock |= matches!(input, BoardInput::Identity(IdentityReport::Clock(_)));
        }
        o.driver.learn(&self.identity);
        // One answer is not a fact (see `identity`): what was said once is asked again.
        let confirm = self.identity.to_confirm();
        if named_clock
            && confirm.clock
            && let Some(ask) = o.driver.clock_model_request()
            && !o.outbox.contains(&ask)
        {
            o.outbox.push_back(ask);
        }
        o.drain_clock(out);
        for input in heard {
            let whole_board = matches!(input, Some(BoardInput::Scan(_)));
            if !o.connected && (self.listen_only || whole_board) {
                // `Connected` turns true with the whole board: only now is the clock's
                // silence meaningful again, and what the board shows known.
                o.connected = true;
                o.board_asked = None;
                out.push_back(Output::Session(Input::Link(true)));
            }
            // Acks and empty clock frames are the line's business: the session gets the rest.
            if let Some(input) = input {
                out.push_back(Output::Session(Input::Board(input)));
            }
        }
        if o.connected && self.identity.has_battery() {
            if answered_battery && confirm.battery {
                o.battery_due = Some(now + CONFIRM_ASK_MS);
            } else if o.battery_due.is_none() {
                o.battery_due = Some(now + BATTERY_POLL_MS);
            }
        }
        // An ack frees the clock channel for its next command.
        self.pump(now);
        // The idle tick rides on the read (see `idle_tick`), after what it brought.
        if self.idle.read_brings_tick(now) {
            self.idle.ticked(now);
            self.outputs.push_back(Output::Session(Input::Tick));
        }
    }

    /// A read of zero bytes: the device went away.
    pub fn on_eof(&mut self, now: Millis) {
        self.lose(Lost::Eof, now);
    }

    /// Reading from the port failed.
    pub fn on_read_failed(&mut self, error: io::Error, now: Millis) {
        self.lose(Lost::Io(error), now);
    }

    /// Writing to the port failed (or did not complete in time: the line is stuck).
    pub fn on_write_failed(&mut self, error: io::Error, now: Millis) {
        self.lose(Lost::Io(error), now);
    }

    /// Send what the session asks of the board (a gap's memory read, a whole board). A
    /// listen-only or closed link cannot, nor has a board without move memory any to read:
    /// for the memory, the session is told so and does without; a whole board comes by
    /// itself with the next handshake.
    pub fn request(&mut self, request: BoardRequest, now: Millis) {
        match &mut self.port {
            Port::Open(o)
                if !self.listen_only
                    && (request != BoardRequest::ReadMemory || o.driver.has_memory()) =>
            {
                let command = o.driver.request(request);
                o.outbox.push_back(command);
                self.outputs.push_back(Output::Fact(Fact::Asking(request)));
                self.pump(now);
            }
            Port::Open(_) | Port::Closed | Port::Opening => {
                if request == BoardRequest::ReadMemory {
                    self.outputs
                        .push_back(Output::Session(Input::MemoryUnavailable));
                }
            }
        }
    }

    /// What the board's LEDs should show (a board with LEDs on an open, writable link; the
    /// driver paces the commands).
    pub fn show_leds(&mut self, request: crate::chesslink::driver::LedRequest, now: Millis) {
        if let Port::Open(o) = &mut self.port
            && !self.listen_only
        {
            o.driver.show_leds(request);
            self.pump(now);
        }
    }

    /// Queue a text for the clock display; its outcome comes back as `Output::Clock` with
    /// the returned request id. `clock_reports`: the session hears a clock (its view's
    /// `clock_connected`).
    pub fn show_clock_message(
        &mut self,
        text: &str,
        clock_reports: bool,
        now: Millis,
    ) -> Result<u64, ClockRefusal> {
        if self.listen_only {
            return Err(ClockRefusal::ListenOnly);
        }
        let Port::Open(o) = &mut self.port else {
            return Err(ClockRefusal::NotConnected);
        };
        if !o.connected {
            return Err(ClockRefusal::NotConnected);
        }
        if !clock_reports {
            return Err(ClockRefusal::NoClock);
        }
        let id = o.clock_ids + o.driver.show(text, now).map_err(ClockRefusal::Invalid)?;
        self.pump(now);
        Ok(id)
    }

    /// Probe a quiet board, declare a silent one lost.
    fn watchdog(&mut self, now: Millis) {
        if self.listen_only {
            // A listen-only link cannot ask; silence is a quiet game, not a lost board.
            return;
        }
        let Port::Open(o) = &mut self.port else {
            return;
        };
        let silence = now.saturating_sub(o.heard());
        if silence >= LOST_AFTER_MS {
            self.lose(Lost::Silent(silence), now);
            return;
        }
        if o.board_overdue_at().is_some_and(|at| now >= at) {
            // The board answers but its whole board did not come (a cut frame, a board that
            // took the command for noise): ask again, `Connected` waits for it.
            o.board_asked = Some(now);
            o.ask_board();
        }
        if o.battery_due.is_some_and(|at| now >= at) {
            o.battery_due = Some(now + BATTERY_POLL_MS);
            if let Some(ask) = o.driver.battery_request(&self.identity)
                && !o.outbox.contains(&ask)
            {
                o.outbox.push_back(ask);
            }
        }
        if silence >= PROBE_AFTER_MS && now.saturating_sub(o.last_probe) >= PROBE_AFTER_MS {
            o.last_probe = now;
            if o.last_rx.is_some() {
                let probe = o.driver.probe();
                o.outbox.push_back(probe);
            } else if o.outbox.is_empty() {
                // Never heard since opening: the whole handshake again.
                o.queue_handshake(now);
            }
        }
    }

    /// Write the next command if the line is free: queued board commands first, clock
    /// commands between them (never during the handshake).
    fn pump(&mut self, now: Millis) {
        let Port::Open(o) = &mut self.port else {
            return;
        };
        if self.listen_only || now < o.next_write {
            return;
        }
        let bytes = match o.outbox.pop_front() {
            Some(bytes) => Some(bytes),
            None => o.driver.poll_transmit(now),
        };
        if let Some(bytes) = bytes {
            if !o.connected && bytes == o.driver.request(BoardRequest::SendBoard) {
                o.board_asked = Some(now);
            }
            o.next_write = now + HANDSHAKE_GAP_MS;
            o.driver.on_sent(&bytes);
            self.outputs.push_back(Output::Write(bytes));
        }
        // A command sent twice without an ack has just been given up on.
        o.drain_clock(&mut self.outputs);
    }

    /// The link is gone: close the port, fail the clock requests still waiting, tell the
    /// session (no flag falls by silence while nobody listens), retry after the backoff.
    fn lose(&mut self, lost: Lost, now: Millis) {
        let Port::Open(mut o) = std::mem::replace(&mut self.port, Port::Closed) else {
            return;
        };
        self.outputs.push_back(Output::Close);
        o.driver.reset();
        o.drain_clock(&mut self.outputs);
        self.next_attempt = now + self.backoff;
        self.outputs.push_back(Output::Fact(Fact::Lost(lost)));
        self.outputs.push_back(Output::Session(Input::Link(false)));
    }
}
