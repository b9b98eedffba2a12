//! The PGN text of a game, kept between renders: what is written once is not written again.
//!
//! A board's view renders the text several times per move (the move while it is not final,
//! its becoming final, its press's clock stamp, a change of the clock tags), each time the
//! whole game. [`PgnText`] keeps, per segment, the movetext of its introduction and of every
//! move but the last one shown, already wrapped, with what it was written from; a render
//! writes the tag section afresh, copies that movetext, and writes only the moves it does not
//! hold yet and the last move (which may carry the comments of the moves left out and the
//! game's ending) with the result.
//!
//! **Never stale.** A move's text depends only on its own record, its place in the segment
//! (from the segment's start FEN) and whether the move before it had comments; the wrapping
//! of what follows it only on the length of the line it ends. So the kept text is reused
//! for exactly as many moves as are equal, field by field, to the ones it was written from
//! (a move taken back, replaced, re-stamped or commented on is cut back to the move before
//! it), and all of it is written again when the segment's start or introduction differs.
//! The text is byte for byte the one written from scratch (`Game::pgn_with_clock` is this
//! writer with nothing kept; a property test holds both to the former renderer over random
//! edits of corpus games).
//!
//! **No allocation per token.** Tokens are written into one reused buffer and cut into the
//! wrapper's words as slices of it.

use std::fmt::Write as _;

use super::{
    Game, MoveRecord, RECORD_TAGS, ROSTER, START_FEN, Segment, fen_turn_and_number,
    pgn_termination, roster_default,
};
use crate::clock_tags::ClockTags;
use crate::vocab::GameResult;

/// Movetext lines are at most this long (PGN export format).
const LINE_WIDTH: usize = 79;

/// A game's PGN text writer that keeps what it wrote (see the module doc).
#[derive(Debug, Clone, Default)]
pub struct PgnText {
    segments: Vec<SegmentText>,
    /// The token being written (reused: no allocation per token).
    token: String,
}

/// One segment's movetext kept: its introduction and its first moves, wrapped.
#[derive(Debug, Clone, Default)]
struct SegmentText {
    /// What the text was written from: the segment's start, its introduction...
    start_fen: String,
    intro: Vec<String>,
    /// ... and the moves written, as they were.
    moves: Vec<MoveRecord>,
    /// From the start FEN: whether White moves first, and the first move's number.
    white_first: bool,
    first_number: u64,
    /// The introduction's and the moves' tokens, wrapped (no final newline).
    body: String,
    /// Where the body ended after the introduction (`marks[0]`) and after each move.
    marks: Vec<Mark>,
}

/// A point of the body: its length there and the length of its last line.
#[derive(Debug, Clone, Copy)]
struct Mark {
    len: usize,
    line: usize,
}

impl PgnText {
    /// Writes `game`'s text into `out` (replacing what it holds), the current segment's last
    /// `pending` moves left out, with the clock tags `clock` in the current game's tags: the
    /// text `Game::pgn_final_with_clock` gives, written from what this writer kept.
    pub fn write(
        &mut self,
        out: &mut String,
        game: &Game,
        pending: usize,
        clock: Option<&ClockTags>,
    ) {
        out.clear();
        let n = game.segments.len();
        self.segments.truncate(n);
        self.segments.resize_with(n, SegmentText::default);
        for (i, (seg, kept)) in game.segments.iter().zip(&mut self.segments).enumerate() {
            if i > 0 {
                out.push('\n');
            }
            let last = i + 1 == n;
            let result = if last {
                game.result
            } else {
                GameResult::Ongoing
            };
            let shown = if last {
                seg.moves.len().saturating_sub(pending)
            } else {
                seg.moves.len()
            };
            write_tags(out, game, seg, result, last, clock.filter(|_| last));
            // Everything but the last move shown is kept; the last one is written each time.
            kept.update(seg, shown.saturating_sub(1), &mut self.token);
            out.push_str(&kept.body);
            let mut wrap = Wrap {
                out,
                line: kept.marks.last().map_or(0, |m| m.line),
            };
            let ending = game.termination.filter(|_| last).map(|t| t.as_str());
            let tok = &mut self.token;
            // The comments of the moves left out go on the last move shown, else after the
            // introduction, as `Game::pop_move` would have moved them.
            let left_out = seg.moves.get(shown..).unwrap_or_default();
            let carried = left_out.iter().flat_map(|m| &m.comments);
            match shown.checked_sub(1) {
                None => {
                    for c in carried {
                        wrap.comment_token(tok, c);
                    }
                    if let Some(t) = ending {
                        tok.clear();
                        tok.push('{');
                        push_clean(tok, t);
                        tok.push('}');
                        wrap.token(tok);
                    }
                }
                Some(j) => kept.write_move(&mut wrap, tok, seg, j, carried, ending),
            }
            wrap.token(result.as_str());
            out.push('\n');
        }
    }
}

impl SegmentText {
    /// Makes the kept text that of `seg`'s introduction and first `k` moves, keeping what
    /// still matches the record.
    fn update(&mut self, seg: &Segment, k: usize, tok: &mut String) {
        if self.marks.is_empty() || self.start_fen != seg.start_fen || self.intro != seg.intro {
            self.start_fen.clone_from(&seg.start_fen);
            self.intro.clone_from(&seg.intro);
            (self.white_first, self.first_number) = fen_turn_and_number(&seg.start_fen);
            self.moves.clear();
            self.marks.clear();
            self.body.clear();
            let mut wrap = Wrap {
                out: &mut self.body,
                line: 0,
            };
            for c in &seg.intro {
                wrap.comment_token(tok, c);
            }
            let line = wrap.line;
            self.marks.push(Mark {
                len: self.body.len(),
                line,
            });
        }
        let k = k.min(seg.moves.len());
        let same = self
            .moves
            .iter()
            .zip(&seg.moves[..k])
            .take_while(|(kept, now)| kept == now)
            .count();
        self.moves.truncate(same);
        self.marks.truncate(same + 1);
        self.body.truncate(self.marks[same].len);
        for j in same..k {
            let mut body = std::mem::take(&mut self.body);
            let mut wrap = Wrap {
                out: &mut body,
                line: self.marks[j].line,
            };
            self.write_move(&mut wrap, tok, seg, j, std::iter::empty(), None);
            let line = wrap.line;
            self.body = body;
            self.marks.push(Mark {
                len: self.body.len(),
                line,
            });
            self.moves.push(seg.moves[j].clone());
        }
    }

    /// Writes move `j` of `seg`: its number when due, its SAN, and its comment (the clock,
    /// its comments, then `carried`, then the game's `ending` if given).
    fn write_move<'a>(
        &self,
        wrap: &mut Wrap<'_>,
        tok: &mut String,
        seg: &'a Segment,
        j: usize,
        carried: impl Iterator<Item = &'a String> + Clone,
        ending: Option<&str>,
    ) {
        let m = &seg.moves[j];
        let white = self.white_first == (j % 2 == 0);
        // The black moves before this one, each of which counted the number on.
        let black_before = if self.white_first {
            j / 2
        } else {
            j.div_ceil(2)
        };
        let number = self.first_number.saturating_add(black_before as u64);
        // A number after a move with a comment, and on every White move.
        let need_number = j == 0 || !seg.moves[j - 1].comments.is_empty();
        tok.clear();
        if white {
            let _ = write!(tok, "{number}.");
            wrap.token(tok);
        } else if need_number {
            let _ = write!(tok, "{number}...");
            wrap.token(tok);
        }
        wrap.token(&m.san);
        // One comment per move, `%clk` first (readers take the first comment after a move as
        // its comment); the parts joined by a space, as many as there are.
        let commented = !m.comments.is_empty() || carried.clone().next().is_some();
        tok.clear();
        tok.push('{');
        let mut parts = 0;
        let mut part = |tok: &mut String| {
            if parts > 0 {
                tok.push(' ');
            }
            parts += 1;
        };
        if let Some(ms) = m.clk_ms.or(if white { m.white_ms } else { m.black_ms }) {
            part(tok);
            let s = ms / 1000;
            let _ = write!(
                tok,
                "[%clk {}:{:02}:{:02}]",
                s / 3600,
                (s / 60) % 60,
                s % 60
            );
        }
        for c in m.comments.iter().chain(carried) {
            part(tok);
            push_sentence(tok, c);
        }
        if let Some(t) = ending {
            part(tok);
            // A bare word after the clock (`checkmate`), a sentence after sentences.
            if commented {
                push_sentence(tok, &format!("termination: {t}"));
            } else {
                push_clean(tok, t);
            }
        }
        if parts > 0 {
            tok.push('}');
            wrap.token(tok);
        }
    }
}

/// The tag section of a segment's PGN game, ending with its blank line.
fn write_tags(
    out: &mut String,
    game: &Game,
    seg: &Segment,
    result: GameResult,
    last: bool,
    clock: Option<&ClockTags>,
) {
    for tag in ROSTER {
        let v = if tag == "Result" {
            result.as_str()
        } else {
            game.tag_value(tag).unwrap_or(roster_default(tag))
        };
        push_tag(out, tag, v);
    }
    for (k, v) in &game.tags {
        // The record's own tags are written from the game; one found among the tags (a
        // journal from before they were refused) is not taken. `Variant` is the board's,
        // put there from its setting when the game starts.
        if ROSTER.contains(&k.as_str()) || (RECORD_TAGS.contains(&k.as_str()) && k != "Variant") {
            continue;
        }
        push_tag(out, k, v);
    }
    // A Chess960 game always says where it started, the standard arrangement included.
    let chess960 = game
        .tag_value("Variant")
        .is_some_and(|v| v.eq_ignore_ascii_case("chess960"));
    if seg.start_fen != START_FEN || chess960 {
        out.push_str("[SetUp \"1\"]\n");
        push_tag(out, "FEN", &seg.start_fen);
    }
    if let Some(clock) = clock {
        clock.write_lines(out);
    }
    let term = if last {
        pgn_termination(game.termination)
    } else {
        "unterminated"
    };
    push_tag(out, "Termination", term);
    out.push('\n');
}

/// `[name "value"]` and a newline, the value escaped (`\` and `"` with a backslash, line
/// breaks as spaces).
fn push_tag(out: &mut String, name: &str, value: &str) {
    out.push('[');
    out.push_str(name);
    out.push_str(" \"");
    if value.contains(['\\', '"', '\n', '\r']) {
        for c in value.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '"' => out.push_str("\\\""),
                '\n' | '\r' => out.push(' '),
                c => out.push(c),
            }
        }
    } else {
        out.push_str(value);
    }
    out.push_str("\"]\n");
}

/// A comment's character as a comment may hold it: a `}` would end the comment early, and
/// line breaks make lines hard to wrap.
fn clean_char(c: char) -> char {
    match c {
        '}' => ')',
        '\n' | '\r' => ' ',
        c => c,
    }
}

/// `c` cleaned ([`clean_char`]).
fn push_clean(out: &mut String, c: &str) {
    out.extend(c.chars().map(clean_char));
}

/// A comment as a sentence: trimmed, cleaned, a capital first letter and a full stop at the
/// end unless it ends with one already (nothing for a blank comment).
fn push_sentence(out: &mut String, c: &str) {
    let mut chars = c.trim().chars().map(clean_char);
    let Some(first) = chars.next() else {
        return;
    };
    out.extend(first.to_uppercase());
    out.extend(chars);
    if !out.ends_with(['.', '!', '?']) {
        out.push('.');
    }
}

/// Lines of words at most [`LINE_WIDTH`] long, as a greedy wrapper writes them: a word on
/// the line if it fits, else on the next.
struct Wrap<'a> {
    out: &'a mut String,
    /// The length of the line being written (0: at its start).
    line: usize,
}

impl Wrap<'_> {
    /// A `{comment}` token of one sentence.
    fn comment_token(&mut self, tok: &mut String, c: &str) {
        tok.clear();
        tok.push('{');
        push_sentence(tok, c);
        tok.push('}');
        self.token(tok);
    }

    /// A token, cut into words at its spaces: a comment breaks only between words, and never
    /// inside a `[%clk h:mm:ss]` command (some readers match it on one line).
    fn token(&mut self, t: &str) {
        let mut word: Option<(usize, usize)> = None;
        let mut at = 0;
        for piece in t.split(' ') {
            let (start, end) = (at, at + piece.len());
            at = end + 1;
            word = match word {
                Some((from, to)) if t[from..to].ends_with("[%clk") => Some((from, end)),
                Some((from, to)) => {
                    self.word(&t[from..to]);
                    Some((start, end))
                }
                None => Some((start, end)),
            };
        }
        if let Some((from, to)) = word {
            self.word(&t[from..to]);
        }
    }

    fn word(&mut self, word: &str) {
        if self.line > 0 && self.line + 1 + word.len() > LINE_WIDTH {
            self.out.push('\n');
            self.line = 0;
        } else if self.line > 0 {
            self.out.push(' ');
            self.line += 1;
        }
        self.out.push_str(word);
        self.line += word.len();
    }
}
