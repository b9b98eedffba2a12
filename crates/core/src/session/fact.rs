//! The facts the session reports for the daemon's log (see [`crate::fact`]), kept until the
//! shell drains them.

use super::Session;
use crate::fact::Fact;

/// Facts kept for a shell that does not drain them (a test, an offline decoder): the oldest
/// go first, so a long run cannot grow without bound.
const KEPT: usize = 256;

impl Session {
    /// The next fact for the log, oldest first, if any.
    pub fn poll_fact(&mut self) -> Option<Fact> {
        (!self.facts.is_empty()).then(|| self.facts.remove(0))
    }

    pub(super) fn report(&mut self, fact: Fact) {
        if self.facts.len() >= KEPT {
            self.facts.remove(0);
        }
        self.facts.push(fact);
    }
}
