//! The bounds of every method's arguments, written down once: how many bytes a string, how
//! many items a list and how many entries a dict may hold. The daemon refuses a call with a
//! larger argument before it runs (`org.eboardd.Bridge1.Error.InvalidArgument`, naming the
//! argument and its bound, never echoing it), so nothing a caller sends can grow a reply, a
//! log line, a signal or a file past these sizes; and a refusal quotes at most an
//! [`excerpt`] of what it was sent.
//!
//! Each bound is far above any real value (the longest real FEN is under 100 bytes, a UCI
//! move 5) and far below what a D-Bus message may carry (the system bus's default limit is
//! 32 MiB), so a well-meant call never meets one.

use super::{BOARD_PATH_PREFIX, ErrorName, METHODS};

pub use crate::vocab::{EXCERPT_CHARS, excerpt};

/// The longest FEN accepted, in bytes; the longest real one is under 100.
pub const FEN_MAX: usize = 128;
/// The longest tag value accepted, in bytes. Names, events and sites fit many times over; the
/// bound keeps one value from growing the PGN (which repeats every tag in each segment) past
/// what D-Bus and the brokers carry in one message.
pub const TAG_VALUE_MAX: usize = 1024;
/// The longest tag name accepted, in bytes (the PGN standard's limit on a symbol).
pub const TAG_NAME_MAX: usize = 255;
/// The most tags one game carries (the Seven Tag Roster and every optional tag the PGN
/// standard and the broadcast tools use fit with room to spare).
pub const TAGS_MAX: usize = 64;
/// The longest contract word accepted (`standard`, `white`, `threefold-repetition`, `1/2-1/2`;
/// the longest is 20 bytes).
pub const WORD_MAX: usize = 32;
/// The longest claim detail: empty, a UCI move, or the description of an illegal move the
/// daemon wrote in `Claims` (one line, like a tag value).
pub const DETAIL_MAX: usize = TAG_VALUE_MAX;
/// The longest adjudication reason: it goes into the PGN as a comment, a line like a tag value.
pub const REASON_MAX: usize = TAG_VALUE_MAX;
/// The longest clock message accepted before the clock's own width is checked (8 characters
/// on a DGT 3000, 6 on an XL): room for a few characters too many, so the refusal can say
/// which clock shows how many.
pub const CLOCK_TEXT_MAX: usize = 64;
/// The most moves `ResolveGap` takes: those of a gap and those played since, far more than a
/// whole game of the longest tournament ever played (538 half-moves).
pub const MOVES_MAX: usize = 4096;
/// The longest UCI move (`e7e8q` is 5 bytes).
pub const UCI_MAX: usize = 8;
/// The longest port path: Linux's `PATH_MAX` less the terminating NUL. A longer one can never
/// be opened.
pub const PORT_MAX: usize = 4095;
/// The longest board id (it names the board's files, at most 255 bytes with their suffixes).
pub const ID_MAX: usize = 200;
/// The longest board object path: the prefix and the longest id.
pub const BOARD_PATH_MAX: usize = BOARD_PATH_PREFIX.len() + ID_MAX;

/// What one argument may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// A string or object path of at most this many bytes.
    Text(usize),
    /// A list of at most `items` strings, each of at most `each` bytes.
    List { items: usize, each: usize },
    /// A string-to-string dict of at most `entries` entries, keys of at most `key` bytes and
    /// values of at most `value` bytes.
    Dict {
        entries: usize,
        key: usize,
        value: usize,
    },
}

/// The bound of every argument of every method of [`METHODS`], by method and argument name.
pub const ARGUMENT_BOUNDS: &[(&str, &str, Bound)] = &[
    ("AddBoard", "port", Bound::Text(PORT_MAX)),
    ("RemoveBoard", "board", Bound::Text(BOARD_PATH_MAX)),
    ("SetPosition", "fen", Bound::Text(FEN_MAX)),
    (
        "SetTags",
        "tags",
        Bound::Dict {
            entries: TAGS_MAX,
            key: TAG_NAME_MAX,
            value: TAG_VALUE_MAX,
        },
    ),
    ("SetRules", "rules", Bound::Text(WORD_MAX)),
    ("AcceptClaim", "player", Bound::Text(WORD_MAX)),
    ("AcceptClaim", "kind", Bound::Text(WORD_MAX)),
    ("AcceptClaim", "detail", Bound::Text(DETAIL_MAX)),
    ("Adjudicate", "result", Bound::Text(WORD_MAX)),
    ("Adjudicate", "reason", Bound::Text(REASON_MAX)),
    (
        "ResolveGap",
        "moves",
        Bound::List {
            items: MOVES_MAX,
            each: UCI_MAX,
        },
    ),
    ("RejectClaim", "player", Bound::Text(WORD_MAX)),
    ("RejectClaim", "kind", Bound::Text(WORD_MAX)),
    ("RejectClaim", "detail", Bound::Text(DETAIL_MAX)),
    ("ShowClockMessage", "text", Bound::Text(CLOCK_TEXT_MAX)),
];

/// The error a call of `method` with an argument over its bound gets: the one the contract
/// gives the method for a bad argument — `InvalidFen` for `SetPosition`, `ClaimNotAvailable`
/// for `AcceptClaim` (no claim in `Claims` is that long), `InvalidArgument` for the others.
pub fn over_bound_error(method: &str) -> ErrorName {
    match method {
        "SetPosition" => ErrorName::InvalidFen,
        "AcceptClaim" => ErrorName::ClaimNotAvailable,
        _ => ErrorName::InvalidArgument,
    }
}

/// The bounds of `method`'s arguments in order, with their names; `None` for a name that is
/// not one of the contract's methods.
pub fn bounds_of(method: &str) -> Option<Vec<(&'static str, Bound)>> {
    let m = METHODS.iter().find(|m| m.name == method)?;
    m.inputs
        .iter()
        .map(|(arg, _)| {
            ARGUMENT_BOUNDS
                .iter()
                .find(|(mm, a, _)| *mm == method && a == arg)
                .map(|(_, a, b)| (*a, *b))
        })
        .collect()
}

/// Why an argument is over its bound: a sentence naming the method, the argument, its size
/// and the bound, never its content (a key is named by an [`excerpt`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Oversized(pub String);

impl std::fmt::Display for Oversized {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A string argument `arg` of `method`, `len` bytes long, against `max`.
pub fn check_text(method: &str, arg: &str, len: usize, max: usize) -> Result<(), Oversized> {
    check_item(method, format_args!("the {arg}"), len, max)
}

/// The number of entries of a list or dict argument (`count`) against `max`.
pub fn check_count(method: &str, arg: &str, count: usize, max: usize) -> Result<(), Oversized> {
    if count <= max {
        return Ok(());
    }
    Err(Oversized(format!(
        "{method}: at most {max} {arg} are accepted, not {count}"
    )))
}

/// One string inside an argument (`what`: "move 3 of the moves", "the value of `White`"),
/// `len` bytes long, against `max`.
pub fn check_item(
    method: &str,
    what: std::fmt::Arguments<'_>,
    len: usize,
    max: usize,
) -> Result<(), Oversized> {
    if len <= max {
        return Ok(());
    }
    Err(Oversized(format!(
        "{method}: {what} is longer than {max} bytes ({len} bytes); at most {max} are accepted"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A method added to the contract without bounds for its arguments fails here.
    #[test]
    fn every_argument_of_every_method_has_a_bound() {
        for m in METHODS {
            let bounds = bounds_of(m.name)
                .unwrap_or_else(|| panic!("{}: an argument without a bound", m.name));
            assert_eq!(bounds.len(), m.inputs.len(), "{}", m.name);
            for ((name, bound), (arg, sig)) in bounds.iter().zip(m.inputs) {
                assert_eq!(name, arg);
                let fits = matches!(
                    (bound, *sig),
                    (Bound::Text(_), "s" | "o")
                        | (Bound::List { .. }, "as")
                        | (Bound::Dict { .. }, "a{ss}")
                );
                assert!(fits, "{}.{arg}: {bound:?} for {sig}", m.name);
            }
        }
        for (method, arg, _) in ARGUMENT_BOUNDS {
            assert!(
                METHODS
                    .iter()
                    .any(|m| m.name == *method && m.inputs.iter().any(|(a, _)| a == arg)),
                "{method}.{arg} is no argument of the contract"
            );
        }
        assert!(bounds_of("Nope").is_none());
        // The error is the one the contract gives each method for a bad argument.
        assert_eq!(over_bound_error("SetPosition"), ErrorName::InvalidFen);
        assert_eq!(
            over_bound_error("AcceptClaim"),
            ErrorName::ClaimNotAvailable
        );
        assert_eq!(over_bound_error("RejectClaim"), ErrorName::InvalidArgument);
    }

    #[test]
    fn a_refusal_names_sizes_not_content() {
        let e = check_text("ShowClockMessage", "text", 40 << 20, CLOCK_TEXT_MAX).unwrap_err();
        assert_eq!(
            e.to_string(),
            "ShowClockMessage: the text is longer than 64 bytes (41943040 bytes); at most 64 \
             are accepted"
        );
        assert!(check_text("SetRules", "rules", WORD_MAX, WORD_MAX).is_ok());
        assert!(check_count("ResolveGap", "moves", MOVES_MAX + 1, MOVES_MAX).is_err());
        let e = check_item("SetTags", format_args!("the value of `White`"), 2000, 1024);
        assert!(
            e.unwrap_err()
                .0
                .contains("the value of `White` is longer than 1024 bytes")
        );
        let e = check_count("SetTags", "tags", 65, TAGS_MAX).unwrap_err();
        assert_eq!(e.0, "SetTags: at most 64 tags are accepted, not 65");
    }
}
