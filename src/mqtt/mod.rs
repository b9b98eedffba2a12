//! The hall on MQTT (contract section 6), shared by the side that writes it (the relay,
//! `bridge::relay`) and the side that reads it (`client::mqtt`): topic names, the `status`
//! words, broker options and the reconnect pacing. Keeping them here, below both, is what lets
//! the relay use the client model without the client reaching back into the relay.

pub mod broker;
pub mod topics;

use std::time::Duration;

/// The `status` payloads.
pub const ONLINE: &str = "online";
pub const OFFLINE: &str = "offline";

/// The longest relay run id, in bytes.
pub const MAX_RUN_LEN: usize = 64;

/// Whether `run` can be a relay's run id (the relay makes them of hex digits and `-`; a
/// reader takes ASCII letters, digits, `-`, `_` and `.`, 1 to [`MAX_RUN_LEN`] bytes).
pub fn is_run_id(run: &str) -> bool {
    !run.is_empty()
        && run.len() <= MAX_RUN_LEN
        && run
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// How long to wait before reconnect attempt `attempt` (0 = the first after a loss): 0.5 s,
/// doubling up to 30 s. A rig on a flaky network reconnects quickly, one whose broker is
/// down for long does not hammer it.
pub fn backoff(attempt: u32) -> Duration {
    let ms = 500u64.saturating_mul(1u64 << attempt.min(6));
    Duration::from_millis(ms.min(30_000))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_are_short_plain_words() {
        assert!(is_run_id("18c3f2a9b1e-4d2"));
        for bad in ["", "a b", "a\nb", "é", &"r".repeat(MAX_RUN_LEN + 1)] {
            assert!(!is_run_id(bad), "{bad:?}");
        }
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        assert_eq!(backoff(0), Duration::from_millis(500));
        assert_eq!(backoff(1), Duration::from_secs(1));
        assert_eq!(backoff(5), Duration::from_secs(16));
        assert_eq!(backoff(6), Duration::from_secs(30));
        assert_eq!(backoff(60), Duration::from_secs(30));
    }
}
