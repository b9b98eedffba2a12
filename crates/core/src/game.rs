//! The game record (moves with SAN/UCI and clock stamps, tags, result, termination,
//! penalties, arbiter decisions) and its PGN export.
//!
//! One source of truth: the `Moves` and `Pgn` properties and the PGN files are views of a
//! [`Game`]. It is plain data (serde), so the daemon can journal it or rebuild it.
//!
//! **Segments.** A game normally has one segment: a start position and the moves from it.
//! When an illegal move *stands* (the opponent moved on without claiming, A.5.2), the game
//! continues from a position that no legal move sequence reaches, which PGN cannot express
//! inside one game (`SetUp`/`FEN` exist only in the tag section, and other readers would
//! reject a move that is illegal where it stands). The record then closes the segment with a
//! comment saying what happened and opens a new one from the position on the board. The PGN
//! text holds one PGN game per segment, each readable on its own by any PGN reader: the
//! earlier ones have result `*` and a closing comment `{Game continues in the next record
//! ...}`; the last one carries the real result. All segments share the tags.

mod date;
mod pgn_text;
#[cfg(test)]
mod reference;

use serde::{Deserialize, Serialize};

pub use date::PgnDate;
pub use pgn_text::PgnText;

use crate::clock_tags::ClockTags;
use crate::vocab::{GameResult, Player, Termination};

/// The FEN of the standard start position.
pub const START_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// One move of the record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveRecord {
    pub san: String,
    pub uci: String,
    /// Both clocks when the move was made (before the press), if a clock is known.
    pub white_ms: Option<u64>,
    pub black_ms: Option<u64>,
    /// The mover's remaining time after pressing (increment included), if seen.
    pub clk_ms: Option<u64>,
    /// Comments placed after the move (illegal moves, penalties, claims, decisions).
    pub comments: Vec<String>,
}

/// A start position and the legal moves played from it (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Segment {
    pub start_fen: String,
    /// Comments before the first move.
    pub intro: Vec<String>,
    pub moves: Vec<MoveRecord>,
}

/// A time penalty or bonus given by the arbiter rules (7.5.5, 9.5.3, ...).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Penalty {
    /// The player who receives the time.
    pub beneficiary: Player,
    pub ms: u64,
    pub reason: String,
}

/// The whole game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Game {
    /// Tags other than Result, SetUp and FEN, in the order given.
    pub tags: Vec<(String, String)>,
    pub segments: Vec<Segment>,
    pub result: GameResult,
    /// Why the game ended; none while playing (written as an empty string).
    #[serde(with = "crate::vocab::termination_serde::word")]
    pub termination: Option<Termination>,
    pub penalties: Vec<Penalty>,
    /// Arbiter decisions and accepted claims, in order, as sentences.
    pub decisions: Vec<String>,
    /// Completed illegal moves (white, black).
    #[serde(default)]
    pub illegal_moves: (u32, u32),
}

const ROSTER: [&str; 7] = ["Event", "Site", "Date", "Round", "White", "Black", "Result"];

fn roster_default(tag: &str) -> &'static str {
    match tag {
        "Date" => "????.??.??",
        "Result" => "*",
        _ => "?",
    }
}

/// PGN `Termination` tag value for a contract termination.
fn pgn_termination(t: Option<Termination>) -> &'static str {
    let Some(t) = t else {
        return "unterminated";
    };
    match t {
        Termination::TimeForfeit | Termination::FlagFallDraw | Termination::BothFlagsFallen => {
            "time forfeit"
        }
        Termination::IllegalMove => "rules infraction",
        Termination::Adjudication => "adjudication",
        Termination::Checkmate
        | Termination::Stalemate
        | Termination::DeadPosition
        | Termination::FivefoldRepetition
        | Termination::SeventyfiveMoves
        | Termination::Claim
        | Termination::ResultGesture => "normal",
    }
}

/// Whether `name` is a PGN tag name: a letter, then letters, digits or `_`.
pub fn is_tag_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

// The contract's bounds on tags, written down with every method's in `contract::limits`.
pub use crate::contract::limits::{TAG_NAME_MAX, TAG_VALUE_MAX, TAGS_MAX};

/// Why a string cannot be a tag value under the contract's rule (one line of at most
/// [`TAG_VALUE_MAX`] bytes, no `"`, no control character).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagValueFault {
    /// Longer than [`TAG_VALUE_MAX`] bytes.
    TooLong,
    /// It has a `\n` or `\r`.
    Newline,
    /// It has a `"`.
    Quote,
    /// It has another control character (a tab, an escape, a NUL…), which PGN strings may not
    /// hold and which would steer a terminal showing the tag.
    Control,
}

impl TagValueFault {
    /// What is wrong, as the end of a sentence that starts with the tag's name: "White
    /// {fault}".
    pub fn describe(self) -> String {
        match self {
            TagValueFault::TooLong => format!("is longer than {TAG_VALUE_MAX} bytes"),
            TagValueFault::Newline => "contains a line break".into(),
            TagValueFault::Quote => "contains a double quote, which PGN cannot hold".into(),
            TagValueFault::Control => {
                "contains a control character (tab, escape, NUL…), which PGN cannot hold".into()
            }
        }
    }
}

/// The contract's rule for tag values: `None` if `value` is one line of at most
/// [`TAG_VALUE_MAX`] bytes without `"` or control characters.
pub fn tag_value_fault(value: &str) -> Option<TagValueFault> {
    match text_fault(value) {
        Some(TagValueFault::Control) | None if value.contains('"') => Some(TagValueFault::Quote),
        fault => fault,
    }
}

/// The rule for a line of text that goes into a PGN (a tag value, an adjudication's reason):
/// `None` if `value` is one line of at most [`TAG_VALUE_MAX`] bytes without control
/// characters. Never [`TagValueFault::Quote`].
pub fn text_fault(value: &str) -> Option<TagValueFault> {
    if value.len() > TAG_VALUE_MAX {
        Some(TagValueFault::TooLong)
    } else if value.contains(['\n', '\r']) {
        Some(TagValueFault::Newline)
    } else if value.chars().any(char::is_control) {
        Some(TagValueFault::Control)
    } else {
        None
    }
}

/// `text` for an error message: an excerpt of at most [`crate::vocab::EXCERPT_CHARS`]
/// characters, control characters escaped, so that a refused megabyte or escape sequence is
/// not sent back or printed as it is.
pub fn shown(text: &str) -> String {
    crate::vocab::excerpt(text)
}

/// The tags the game record writes itself, from the game and the board's settings: the result
/// and how the game ended, the number of half-moves, where it started (`SetUp`, `FEN`), the
/// variant (from the board's `variant`), and the clock tags of the broadcast outputs. A
/// configuration's `tags`, a pairings file or `SetTags` naming one is refused: a value given
/// from outside (a `PlyCount` of 0, a `Termination` of "normal") would contradict the game in
/// progress.
pub const RECORD_TAGS: [&str; 9] = [
    "Result",
    "Termination",
    "PlyCount",
    "SetUp",
    "FEN",
    "Variant",
    "WhiteClock",
    "BlackClock",
    "ReferenceTime",
];

/// Why the tag `name` cannot be given from outside (configuration, `SetTags`): it is one of
/// [`RECORD_TAGS`]. `None` for every other name.
pub fn record_tag_fault(name: &str) -> Option<String> {
    RECORD_TAGS.contains(&name).then(|| {
        format!(
            "{name} is a tag the game record writes itself (its own tags: {}), so it cannot \
             be set{}",
            RECORD_TAGS.join(", "),
            if name == "Variant" {
                "; set the board's variant instead"
            } else {
                ""
            }
        )
    })
}

/// Checks tags given from outside (`SetTags`): the rules of [`validate_tag_list`], and none of
/// the record's own tags ([`RECORD_TAGS`]).
pub fn validate_tags(tags: &[(String, String)]) -> Result<(), String> {
    validate_tag_list(tags)?;
    match tags.iter().find_map(|(k, _)| record_tag_fault(k)) {
        Some(fault) => Err(fault),
        None => Ok(()),
    }
}

/// Checks a game's whole tag list (what it is given merged with the tags it has, which may
/// hold the board's own `Variant`): PGN tag names ([`is_tag_name`], at most [`TAG_NAME_MAX`]
/// bytes), values by [`tag_value_fault`], at most [`TAGS_MAX`] of them.
pub fn validate_tag_list(tags: &[(String, String)]) -> Result<(), String> {
    if tags.len() > TAGS_MAX {
        return Err(format!(
            "a game carries at most {TAGS_MAX} tags; these would make {}",
            tags.len()
        ));
    }
    for (k, v) in tags {
        if !is_tag_name(k) || k.len() > TAG_NAME_MAX {
            return Err(format!(
                "`{}` is not a PGN tag name (a letter, then letters, digits or _; at most \
                 {TAG_NAME_MAX} bytes)",
                shown(k)
            ));
        }
        match tag_value_fault(v) {
            Some(TagValueFault::Newline | TagValueFault::Quote) => {
                return Err(format!("the value of {k} must be one line without `\"`"));
            }
            Some(fault) => return Err(format!("the value of {k} {}", fault.describe())),
            None => {}
        }
    }
    Ok(())
}

/// `h:mm:ss` as `%clk` wants it (whole seconds, rounded down as clocks display them).
pub fn clk(ms: u64) -> String {
    let s = ms / 1000;
    format!("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60)
}

/// Side to move ("w"/"b") and fullmove number of a FEN, tolerating missing fields. The number
/// is a `u64` and counted on with `saturating_add`: a record never wraps, whatever FEN it was
/// given (a FEN's numbers are bounded where they enter, see `arbiter::parse_fen_in`).
fn fen_turn_and_number(fen: &str) -> (bool, u64) {
    let mut f = fen.split_whitespace();
    let white = f.nth(1).is_none_or(|s| s != "b");
    let number = fen
        .split_whitespace()
        .nth(5)
        .and_then(|n| n.parse().ok())
        .filter(|&n: &u64| n >= 1)
        .unwrap_or(1);
    (white, number)
}

impl Game {
    pub fn new(start_fen: &str, tags: Vec<(String, String)>) -> Self {
        Game {
            tags,
            segments: vec![Segment {
                start_fen: start_fen.to_string(),
                intro: Vec::new(),
                moves: Vec::new(),
            }],
            result: GameResult::Ongoing,
            termination: None,
            penalties: Vec::new(),
            decisions: Vec::new(),
            illegal_moves: (0, 0),
        }
    }

    fn current(&mut self) -> &mut Segment {
        if self.segments.is_empty() {
            self.segments.push(Segment {
                start_fen: START_FEN.into(),
                intro: Vec::new(),
                moves: Vec::new(),
            });
        }
        let last = self.segments.len() - 1;
        &mut self.segments[last]
    }

    /// The current segment's start FEN.
    pub fn start_fen(&self) -> &str {
        self.segments
            .last()
            .map_or(START_FEN, |s| s.start_fen.as_str())
    }

    /// Moves of the current segment (the ones the current position is reached by).
    pub fn current_moves(&self) -> &[MoveRecord] {
        self.segments.last().map_or(&[], |s| s.moves.as_slice())
    }

    /// Every move in SAN, all segments (the `Moves` property).
    pub fn san_moves(&self) -> Vec<String> {
        self.segments
            .iter()
            .flat_map(|s| s.moves.iter().map(|m| m.san.clone()))
            .collect()
    }

    /// Total plies recorded (all segments).
    pub fn ply_count(&self) -> usize {
        self.segments.iter().map(|s| s.moves.len()).sum()
    }

    pub fn push_move(&mut self, mv: MoveRecord) {
        self.current().moves.push(mv);
    }

    /// Removes the last move of the current segment; its comments move to the previous
    /// move (or the segment's intro) so penalties and decisions stay in the record.
    pub fn pop_move(&mut self) -> Option<MoveRecord> {
        let seg = self.current();
        let mut m = seg.moves.pop()?;
        let comments = std::mem::take(&mut m.comments);
        match seg.moves.last_mut() {
            Some(prev) => prev.comments.extend(comments),
            None => seg.intro.extend(comments),
        }
        Some(m)
    }

    /// Stamps the last move with the mover's time after the press.
    pub fn stamp_press(&mut self, clk_ms: u64) {
        if let Some(m) = self.current().moves.last_mut() {
            m.clk_ms = Some(clk_ms);
        }
    }

    /// Adds a comment at the current point of the game.
    pub fn comment(&mut self, text: impl Into<String>) {
        let text = text.into();
        let seg = self.current();
        match seg.moves.last_mut() {
            Some(m) => m.comments.push(text),
            None => seg.intro.push(text),
        }
    }

    /// Starts a new segment from `fen` (an illegal move stood; see the module doc).
    pub fn continue_from(&mut self, fen: &str, note: &str) {
        let note = note.trim().trim_end_matches('.');
        self.comment(format!(
            "{note}. The game continues in the next record, from FEN {fen}"
        ));
        self.segments.push(Segment {
            start_fen: fen.to_string(),
            intro: vec![format!("Continued after the previous record. {note}")],
            moves: Vec::new(),
        });
    }

    pub fn add_penalty(&mut self, p: Penalty) {
        self.comment(format!(
            "{}: {} s added to {}",
            p.reason,
            p.ms / 1000,
            p.beneficiary
        ));
        self.penalties.push(p);
    }

    pub fn add_decision(&mut self, text: impl Into<String>) {
        let text = text.into();
        self.comment(text.clone());
        self.decisions.push(text);
    }

    /// Sets the result and why (`None`: the game is open again).
    pub fn set_result(&mut self, result: GameResult, termination: Option<Termination>) {
        self.result = result;
        self.termination = termination;
    }

    fn tag_value(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The PGN text without the last `pending` moves (moves not final yet, contract section
    /// 2: broadcast outputs carry only final moves). Only the current segment's moves can be
    /// pending; their comments stay, on the move before.
    pub fn pgn_final(&self, pending: usize) -> String {
        self.pgn_final_with_clock(pending, None)
    }

    /// [`Game::pgn_final`] with the clock tags (see [`crate::clock_tags`]) in the current
    /// game's tags: the clock as it is now belongs to the game being played, not to the
    /// segments before it.
    pub fn pgn_final_with_clock(&self, pending: usize, clock: Option<&ClockTags>) -> String {
        self.pgn_with_clock(pending, clock)
    }

    /// The whole game as PGN text (one PGN game per segment, separated by a blank line),
    /// ending with a newline.
    pub fn pgn(&self) -> String {
        self.pgn_with_clock(0, None)
    }

    /// The text with the current segment's last `pending` moves left out, written from the
    /// record as it is (no copy of the game): the comments of the moves left out are written
    /// on the last move shown (or the segment's introduction), as [`Game::pop_move`] would
    /// have moved them. A view that renders the text again and again keeps a [`PgnText`]
    /// instead, which writes only what changed.
    fn pgn_with_clock(&self, pending: usize, clock: Option<&ClockTags>) -> String {
        let mut out = String::new();
        PgnText::default().write(&mut out, self, pending, clock);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mv(san: &str, uci: &str, w: u64, b: u64) -> MoveRecord {
        MoveRecord {
            san: san.into(),
            uci: uci.into(),
            white_ms: Some(w),
            black_ms: Some(b),
            clk_ms: None,
            comments: Vec::new(),
        }
    }

    /// What the text with moves left out was before it was written from the record in
    /// place: the game copied and its last moves taken off.
    fn popped_pgn(game: &Game, pending: usize) -> String {
        let mut shown = game.clone();
        for _ in 0..pending {
            if shown.current_moves().is_empty() {
                break;
            }
            shown.pop_move();
        }
        shown.pgn()
    }

    #[test]
    fn moves_left_out_read_as_if_taken_off_the_record() {
        let mut g = Game::new(START_FEN, Vec::new());
        g.comment("Before the first move");
        g.push_move(mv("e4", "e2e4", 179_000, 180_000));
        g.stamp_press(181_000);
        g.push_move(mv("e5", "e7e5", 181_000, 175_500));
        g.comment("Illegal move by White: Ke1-e3");
        g.push_move(mv("Nf3", "g1f3", 170_000, 177_000));
        g.continue_from("4k3/8/8/8/8/8/8/4K3 w - - 0 30", "An illegal move stood");
        for (san, uci) in [("Kd2", "e1d2"), ("Kd7", "e8d7"), ("Kc3", "d2c3")] {
            g.push_move(mv(san, uci, 60_000, 60_000));
        }
        g.comment("A decision on the pending move");
        g.push_move(mv("Kc7", "d7c7", 59_000, 58_000));
        g.comment("Another, on the last move");
        for result in [None, Some(Termination::Checkmate)] {
            if let Some(t) = result {
                g.set_result(GameResult::WhiteWins, Some(t));
            }
            for pending in 0..=6 {
                assert_eq!(
                    g.pgn_final(pending),
                    popped_pgn(&g, pending),
                    "{pending} pending"
                );
            }
        }
        // A game of one segment, no comments: the plain case.
        let mut plain = Game::new(START_FEN, Vec::new());
        for pending in 0..=2 {
            assert_eq!(plain.pgn_final(pending), popped_pgn(&plain, pending));
            plain.push_move(mv("e4", "e2e4", 179_000, 180_000));
        }
    }

    #[test]
    fn seven_tag_roster_clk_and_result() {
        let mut g = Game::new(START_FEN, vec![("White".into(), "A \"x\"".into())]);
        g.push_move(mv("e4", "e2e4", 179_000, 180_000));
        g.stamp_press(181_000);
        g.push_move(mv("e5", "e7e5", 181_000, 175_500));
        g.comment("Illegal move by White: Ke1-e3 {x}");
        g.push_move(mv("Nf3", "g1f3", 170_000, 177_000));
        g.set_result(GameResult::WhiteWins, Some(Termination::Checkmate));
        let pgn = g.pgn();
        assert!(pgn.starts_with("[Event \"?\"]\n[Site \"?\"]\n[Date \"????.??.??\"]\n"));
        assert!(pgn.contains("[White \"A \\\"x\\\"\"]"));
        assert!(pgn.contains("[Result \"1-0\"]"));
        assert!(!pgn.contains("SetUp"));
        assert!(pgn.lines().all(|l| l.len() <= 79));
        let flat = pgn.replace('\n', " ");
        assert!(
            flat.contains("1. e4 {[%clk 0:03:01]} e5 {[%clk 0:02:55] Illegal move by White: Ke1-e3 {x).} 2. Nf3 {[%clk 0:02:50] checkmate} 1-0"),
            "{pgn}"
        );
        assert!(pgn.trim_end().ends_with("1-0"));
    }

    #[test]
    fn one_comment_per_move_with_the_ending_after_the_clock() {
        let mut g = Game::new(START_FEN, Vec::new());
        g.push_move(mv("Nf3", "g1f3", 300_000, 300_000));
        g.stamp_press(291_000);
        g.comment("Black claims threefold repetition with the intended move f6g8: accepted");
        g.set_result(GameResult::Draw, Some(Termination::Claim));
        let flat = g.pgn().replace('\n', " ");
        assert!(
            flat.contains(
                "1. Nf3 {[%clk 0:04:51] Black claims threefold repetition with the intended \
                 move f6g8: accepted. Termination: claim.} 1/2-1/2"
            ),
            "{flat}"
        );
        assert!(!flat.contains("} {"), "{flat}");
        // No move: the ending stands alone.
        let mut empty = Game::new(START_FEN, Vec::new());
        empty.set_result(GameResult::WhiteWins, Some(Termination::Adjudication));
        assert!(
            empty.pgn().contains("{adjudication} 1-0"),
            "{}",
            empty.pgn()
        );
    }

    #[test]
    fn tag_name_and_value_rules() {
        assert!(is_tag_name("Event") && is_tag_name("My_Tag2"));
        assert!(!is_tag_name("") && !is_tag_name("2nd") && !is_tag_name("_x"));
        assert!(!is_tag_name("Bad Name") && !is_tag_name("Ölo"));
        assert_eq!(tag_value_fault("Open, round 1"), None);
        assert_eq!(tag_value_fault("a\rb"), Some(TagValueFault::Newline));
        assert_eq!(tag_value_fault("a\"b\nc"), Some(TagValueFault::Newline));
        assert_eq!(tag_value_fault("a\"b"), Some(TagValueFault::Quote));
        assert_eq!(tag_value_fault("a\u{1b}[2J"), Some(TagValueFault::Control));
        assert_eq!(tag_value_fault("a\tb"), Some(TagValueFault::Control));
        assert_eq!(tag_value_fault("a\u{0}b"), Some(TagValueFault::Control));
        assert_eq!(tag_value_fault(&"é".repeat(512)), None);
        assert_eq!(
            tag_value_fault(&"é".repeat(513)),
            Some(TagValueFault::TooLong)
        );
        assert_eq!(
            tag_value_fault(&"\"".repeat(2000)),
            Some(TagValueFault::TooLong)
        );
    }

    /// The record's own tags are refused from outside, and one found among a game's tags (a
    /// journal from before the refusal) is not written: the record writes its own.
    #[test]
    fn the_records_own_tags_are_never_taken() {
        for tag in RECORD_TAGS {
            let e = validate_tags(&[("Event".into(), "E".into()), (tag.into(), "0".into())]);
            assert!(e.unwrap_err().contains("writes itself"), "{tag}");
        }
        assert!(validate_tag_list(&[("Variant".into(), "Chess960".into())]).is_ok());
        let tags = vec![
            ("Event".to_string(), "E".to_string()),
            ("PlyCount".to_string(), "0".to_string()),
            ("Termination".to_string(), "normal".to_string()),
            ("WhiteClock".to_string(), "9:59:59".to_string()),
        ];
        let pgn = Game::new(START_FEN, tags).pgn();
        assert!(pgn.contains("[Event \"E\"]"), "{pgn}");
        assert!(
            !pgn.contains("PlyCount") && !pgn.contains("normal") && !pgn.contains("9:59:59"),
            "{pgn}"
        );
        assert!(pgn.contains("[Termination \"unterminated\"]"), "{pgn}");
    }

    #[test]
    fn shown_text_is_short_and_escaped() {
        assert_eq!(shown("Carlsen"), "Carlsen");
        assert_eq!(shown("a\u{1b}[2J\u{0}"), "a\\u{1b}[2J\\0");
        let long = shown(&"x".repeat(1 << 20));
        assert_eq!(long.chars().count(), 61);
        assert!(long.ends_with('…'));
    }

    /// A record never wraps its move numbers, whatever FEN it started from (the bound on a
    /// FEN's numbers is where it enters: `arbiter::parse_fen_in`).
    #[test]
    fn the_move_number_saturates_instead_of_wrapping() {
        let fen = "4k3/8/8/8/8/8/4P3/4K3 b - - 0 4294967295";
        let mut g = Game::new(fen, Vec::new());
        for (san, uci) in [
            ("Kd7", "e8d7"),
            ("e4", "e2e4"),
            ("Ke6", "d7e6"),
            ("e5", "e4e5"),
        ] {
            let mut m = mv(san, uci, 1, 1);
            m.white_ms = None;
            m.black_ms = None;
            g.push_move(m);
        }
        let flat = g.pgn().replace('\n', " ");
        assert!(
            flat.contains("4294967295... Kd7 4294967296. e4 Ke6 4294967297. e5"),
            "{flat}"
        );
        let huge = "4k3/8/8/8/8/8/4P3/4K3 b - - 0 18446744073709551615";
        let mut g = Game::new(huge, Vec::new());
        for (san, uci) in [("Kd7", "e8d7"), ("e4", "e2e4")] {
            g.push_move(mv(san, uci, 1, 1));
        }
        assert!(g.pgn().contains("18446744073709551615. e4"), "{}", g.pgn());
    }

    #[test]
    fn tag_validation() {
        assert!(validate_tags(&[("Event".into(), "Open".into())]).is_ok());
        assert!(validate_tags(&[("Bad Name".into(), "x".into())]).is_err());
        assert!(validate_tags(&[("White".into(), "a\"b".into())]).is_err());
        assert!(validate_tags(&[("White".into(), "a\nb".into())]).is_err());
        assert!(validate_tags(&[("Result".into(), "1-0".into())]).is_err());
        let too_many: Vec<(String, String)> = (0..=TAGS_MAX)
            .map(|i| (format!("Tag{i}"), "v".into()))
            .collect();
        let e = validate_tags(&too_many).unwrap_err();
        assert!(e.contains("at most 64 tags"), "{e}");
        assert!(validate_tags(&too_many[..TAGS_MAX]).is_ok());
        let long_name = format!("A{}", "b".repeat(TAG_NAME_MAX));
        assert!(validate_tags(&[(long_name, "v".into())]).is_err());
        let e = validate_tags(&[("White".into(), "x".repeat(TAG_VALUE_MAX + 1))]).unwrap_err();
        assert!(e.contains("longer than 1024 bytes") && e.len() < 100, "{e}");
    }

    #[test]
    fn setup_fen_and_black_first() {
        let fen = "4k3/8/8/8/8/8/4P3/4K3 b - - 0 7";
        let mut g = Game::new(fen, Vec::new());
        let mut m = mv("Kd7", "e8d7", 1, 1);
        m.white_ms = None;
        m.black_ms = None;
        g.push_move(m);
        let pgn = g.pgn();
        assert!(pgn.contains("[SetUp \"1\"]\n[FEN \"4k3/8/8/8/8/8/4P3/4K3 b - - 0 7\"]"));
        assert!(pgn.contains("7... Kd7 *"), "{pgn}");
    }

    #[test]
    fn pop_keeps_comments_and_segments_are_separate_games() {
        let mut g = Game::new(START_FEN, Vec::new());
        g.push_move(mv("e4", "e2e4", 1, 1));
        g.push_move(mv("e5", "e7e5", 1, 1));
        g.comment("penalty");
        assert!(g.pop_move().is_some());
        assert_eq!(g.current_moves()[0].comments, vec!["penalty".to_string()]);
        g.continue_from("4k3/8/8/8/8/8/8/4K3 w - - 0 1", "illegal move stood");
        g.set_result(GameResult::Draw, Some(Termination::DeadPosition));
        let pgn = g.pgn();
        assert_eq!(pgn.matches("[Event ").count(), 2);
        assert_eq!(pgn.matches("[Result \"*\"]").count(), 1);
        assert_eq!(pgn.matches("[Result \"1/2-1/2\"]").count(), 1);
        assert_eq!(g.san_moves(), vec!["e4".to_string()]);
        let back: Game =
            serde_json::from_str(&serde_json::to_string(&g).expect("ser")).expect("de");
        assert_eq!(back, g);
    }
}
