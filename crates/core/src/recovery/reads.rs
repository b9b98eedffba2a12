//! What the session reads of the recovery: whether a gap holds the board back, the `Gap`
//! text, the requests for the board, the placement shown meanwhile and the next deadline.
//! Nothing here changes the state (that is `machine.rs`'s).

use super::state::State;
use super::{BoardRequest, Host, Recovery, evidence, reading, resolve};
use crate::board::Placement;
use crate::board_input::SquareContent;
use crate::vocab::Millis;

impl Recovery {
    /// A gap is open: the board is held back from the tracker.
    pub fn is_open(&self) -> bool {
        self.state.gap().is_some()
    }

    /// The clock's readings are held back from the arbiter: a gap is open, or one closed on a
    /// move begun is still watched (`Begun`).
    pub fn holds_clock(&self) -> bool {
        matches!(self.state, State::Gap(_) | State::Begun(..))
    }

    /// The `Gap` property.
    pub fn text(&self) -> String {
        self.state.text()
    }

    /// The next thing the shell should send to the board, if any.
    pub fn poll_request(&mut self) -> Option<BoardRequest> {
        (!self.requests.is_empty()).then(|| self.requests.remove(0))
    }

    /// The placement the view shows while a gap holds the board back.
    pub fn placement(&self, h: &dyn Host) -> Option<String> {
        self.sensed()
            .map(|f| Placement::from_wire(&f, reading::orientation(h)).board_fen())
    }

    /// When the recovery next needs a tick (part of the session's `next_wakeup`): the
    /// memory awaited, a board settling in a gap, a still board to ask about.
    pub fn next_wakeup(&self, h: &dyn Host) -> Option<Millis> {
        match &self.state {
            State::Gap(g) => g.deadline(evidence::settle_ms(h, Some(g))),
            State::Asking(_) => None,
            State::Closed => resolve::ask_due(h),
            State::Begun(..) => self.state.watch_still_at(),
            State::Watched(..) => self
                .state
                .watch_still_at()
                .filter(|_| !h.tracker().in_sync()),
        }
    }

    pub(super) fn sensed(&self) -> Option<[SquareContent; 64]> {
        self.state.gap().and_then(|g| g.sensed)
    }

    pub(super) fn cause(&self) -> &'static str {
        self.state.gap().map_or("", |g| g.cause.text())
    }
}
