//! How much of a caller's text the program ever quotes back. An error message, a log line or
//! a refusal that repeats what it was sent repeats it as an [`excerpt`]: at most
//! [`EXCERPT_CHARS`] characters, control characters escaped. A 40 MB argument echoed whole
//! would make the daemon's reply larger than the bus carries, and the bus answers that by
//! dropping the daemon with every board it serves; an escape sequence echoed raw would steer
//! the terminal that prints the error.
//!
//! In the vocabulary (the leaf) because every refusal, down to an unknown word, quotes through
//! it; `contract::limits` re-exports it with the bounds of every method's arguments.

/// The most characters of a caller's text that any error message, log line or signal quotes
/// back (followed by `…` when the text was longer).
pub const EXCERPT_CHARS: usize = 60;

/// `text` for an error message: at most [`EXCERPT_CHARS`] characters, control characters
/// escaped as Rust writes them (`\u{1b}`), `…` when it was cut.
pub fn excerpt(text: &str) -> String {
    let mut out: String = text
        .chars()
        .take(EXCERPT_CHARS)
        .flat_map(char::escape_debug)
        .collect();
    if text.chars().nth(EXCERPT_CHARS).is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_excerpt_is_short_and_escaped() {
        assert_eq!(excerpt("white"), "white");
        assert_eq!(excerpt("a\u{1b}[2J"), "a\\u{1b}[2J");
        let huge = "x".repeat(40 << 20);
        let cut = excerpt(&huge);
        assert_eq!(cut.chars().count(), EXCERPT_CHARS + 1);
        assert!(cut.ends_with('…'));
    }
}
