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
    numbering: Numbering,
    /// The introduction's and the moves' tokens, wrapped (no final newline).
    body: String,
    /// Where the body ended after the introduction (`marks[0]`) and after each move.
    marks: Vec<Mark>,
}

/// From a segment's start FEN: whether White moves first, and the first move's number.
#[derive(Debug, Clone, Copy, Default)]
struct Numbering {
    white_first: bool,
    first_number: u64,
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
                Some(j) => write_move(&mut wrap, tok, kept.numbering, seg, j, carried, ending),
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
            let (white_first, first_number) = fen_turn_and_number(&seg.start_fen);
            self.numbering = Numbering {
                white_first,
                first_number,
            };
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
            let mut wrap = Wrap {
                out: &mut self.body,
                line: self.marks[j].line,
            };
            write_move(
                &mut wrap,
                tok,
                self.numbering,
                seg,
                j,
                std::iter::empty(),
                None,
            );
            let line = wrap.line;
            self.marks.push(Mark {
                len: self.body.len(),
                line,
            });
            self.moves.push(seg.moves[j].clone());
        }
    }
}

/// Writes move `j` of `seg`: its number when due, its SAN, and its comment (the clock, its
/// comments, then `carried`, then the game's `ending` if given).
fn write_move<'a>(
    wrap: &mut Wrap<'_>,
    tok: &mut String,
    numbering: Numbering,
    seg: &'a Segment,
    j: usize,
    carried: impl Iterator<Item = &'a String> + Clone,
    ending: Option<&str>,
) {
    let m = &seg.moves[j];
    let white = numbering.white_first == j.is_multiple_of(2);
    // The black moves before this one, each of which counted the number on.
    let black_before = if numbering.white_first {
        j / 2
    } else {
        j.div_ceil(2)
    };
    let number = numbering.first_number.saturating_add(black_before as u64);
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

#[cfg(test)]
mod tests {
    //! The kept PGN text ([`PgnText`]) against the renderer it replaced (`game::reference`),
    //! byte for byte, after every edit of a record: corpus games played move by move and edited
    //! the ways the session and the arbiter edit a record (moves taken back, replaced, stamped,
    //! commented on, segments opened, results set and taken back, tags changed, a new game, the
    //! clock stamps of every move swapped) and some no session makes (a move deep in the game
    //! changed in place), each text rendered with 0 to 5 moves left out as pending and with or
    //! without the clock tags.

    use std::sync::LazyLock;

    use proptest::prelude::*;
    use shakmaty::fen::Fen;
    use shakmaty::san::SanPlus;
    use shakmaty::uci::UciMove;
    use shakmaty::{CastlingMode, Chess, Color, EnPassantMode, Position};

    use super::*;
    use crate::game::{Penalty, reference};
    use crate::pgn::{PgnGame, parse_games};
    use crate::vocab::Termination;

    static CORPUS: LazyLock<Vec<PgnGame>> = LazyLock::new(|| {
        parse_games(include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/data/corpus/twic1599.pgn"
        )))
    });

    const CHESS960_START: &str = "bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN w GEge - 0 1";
    const BLACK_TO_MOVE: &str =
        "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 3 117";

    /// One edit of the record.
    #[derive(Debug, Clone)]
    enum Op {
        /// The corpus game's next move, else a legal move chosen by the number.
        Push(usize, Clocks),
        /// A move taken back.
        Pop,
        /// The last move replaced by another legal move (a correction).
        Replace(usize, Clocks),
        Comment(String),
        Stamp(u64),
        Penalty(String, u64),
        Decision(String),
        /// An illegal move stood: a new segment from the position.
        Continue(String),
        Result(u8, u8),
        Tags(u8),
        /// A new game: the standard start (the corpus game again), a FEN with Black to move,
        /// a Chess960 start.
        Reset(u8),
        /// The clock's sides learnt: both clocks of every move swapped (as the arbiter does).
        SwapClocks,
        /// A move anywhere in the record changed in place (no session does this; the text must
        /// follow all the same).
        EditDeep(usize, u8, String),
    }

    /// The clocks of a pushed move.
    #[derive(Debug, Clone, Copy)]
    struct Clocks(Option<u64>, Option<u64>);

    fn comment_text() -> impl Strategy<Value = String> {
        prop_oneof![
            Just(String::new()),
            Just("  ".to_string()),
            Just("penalty".to_string()),
            Just("Illegal move by White: Ke1-e3 {x}".to_string()),
            Just("a}b\nc\rd".to_string()),
            Just("ßtraße ǆ".to_string()),
            Just("[%clk 0:00:01]".to_string()),
            Just("x [%clk [%clk y z".to_string()),
            Just("ends!".to_string()),
            Just("a  b   c".to_string()),
            Just(format!("{} end", "w".repeat(90))),
            "[ a-z}\\n\\[%:.!?]{0,120}",
            "\\PC{0,40}",
        ]
    }

    fn clocks() -> impl Strategy<Value = Clocks> {
        (
            proptest::option::weighted(0.8, 0u64..10_000_000),
            proptest::option::weighted(0.8, 0u64..10_000_000),
        )
            .prop_map(|(w, b)| Clocks(w, b))
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            12 => (any::<usize>(), clocks()).prop_map(|(n, c)| Op::Push(n, c)),
            3 => Just(Op::Pop),
            2 => (any::<usize>(), clocks()).prop_map(|(n, c)| Op::Replace(n, c)),
            2 => comment_text().prop_map(Op::Comment),
            3 => (0u64..40_000_000).prop_map(Op::Stamp),
            1 => (comment_text(), 0u64..600_000).prop_map(|(r, ms)| Op::Penalty(r, ms)),
            1 => comment_text().prop_map(Op::Decision),
            1 => comment_text().prop_map(Op::Continue),
            1 => (0u8..4, 0u8..12).prop_map(|(r, t)| Op::Result(r, t)),
            1 => (0u8..5).prop_map(Op::Tags),
            1 => (0u8..3).prop_map(Op::Reset),
            1 => Just(Op::SwapClocks),
            1 => (any::<usize>(), 0u8..5, comment_text()).prop_map(|(at, what, c)| Op::EditDeep(at, what, c)),
        ]
    }

    /// A render: the moves left out as pending and the clock tags.
    type Render = (usize, Option<ClockTags>);

    /// Renders drawn at random: 0 to 5 moves pending, the clock tags or none.
    fn render() -> impl Strategy<Value = Render> {
        (
            0usize..6,
            proptest::option::of((
                0u64..20_000_000,
                0u64..20_000_000,
                proptest::option::of((any::<bool>(), 0u64..4_000_000_000_000)),
            )),
        )
            .prop_map(|(pending, clock)| {
                let clock = clock.map(|(white_ms, black_ms, reference)| ClockTags {
                    white_ms,
                    black_ms,
                    reference: reference
                        .map(|(w, at)| (if w { Color::White } else { Color::Black }, at)),
                });
                (pending, clock)
            })
    }

    fn tag_set(n: u8) -> Vec<(String, String)> {
        let t = |k: &str, v: &str| (k.to_string(), v.to_string());
        match n {
            0 => Vec::new(),
            1 => vec![
                t("Event", "Open \"A\" \\ B"),
                t("White", "Carlsen, M"),
                t("Round", "3.1"),
            ],
            2 => vec![
                t("Variant", "Chess960"),
                t("Black", "x\ny"),
                t("Annotator", "me"),
            ],
            3 => vec![
                t("PlyCount", "0"),
                t("Termination", "normal"),
                t("WhiteClock", "1:00:00"),
            ],
            _ => vec![
                t("Event", "Late"),
                t("Variant", "chess960"),
                t("Site", "Hall"),
            ],
        }
    }

    /// A game as the session keeps it, with the position of its current segment.
    struct Play {
        game: Game,
        corpus: Vec<shakmaty::Move>,
        /// The current segment's positions: its start and after each of its moves.
        positions: Vec<Chess>,
        /// Whether the current segment follows the corpus game from its start.
        on_corpus_line: bool,
        mode: CastlingMode,
    }

    impl Play {
        fn new(corpus: Vec<shakmaty::Move>) -> Play {
            Play {
                game: Game::new(START_FEN, Vec::new()),
                corpus,
                positions: vec![Chess::default()],
                on_corpus_line: true,
                mode: CastlingMode::Standard,
            }
        }

        fn position(&self) -> &Chess {
            self.positions.last().expect("a position")
        }

        /// The corpus move at this point, else a legal move chosen by `n`.
        fn next_move(&self, n: usize) -> Option<shakmaty::Move> {
            let pos = self.position();
            let ply = self.positions.len() - 1;
            if self.on_corpus_line
                && let Some(m) = self.corpus.get(ply).filter(|m| pos.is_legal(**m))
            {
                return Some(*m);
            }
            let legal = pos.legal_moves();
            (!legal.is_empty()).then(|| legal[n % legal.len()])
        }

        fn push(&mut self, m: shakmaty::Move, c: Clocks) {
            let mut pos = self.position().clone();
            let san = SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string();
            self.game.push_move(MoveRecord {
                san,
                uci: UciMove::from_move(m, self.mode).to_string(),
                white_ms: c.0,
                black_ms: c.1,
                clk_ms: None,
                comments: Vec::new(),
            });
            self.positions.push(pos);
        }

        fn pop(&mut self) {
            if self.game.pop_move().is_some() {
                self.positions.pop();
            }
        }

        fn apply(&mut self, op: &Op) {
            match op {
                Op::Push(n, c) => {
                    if let Some(m) = self.next_move(*n) {
                        self.push(m, *c);
                    }
                }
                Op::Pop => self.pop(),
                Op::Replace(n, c) => {
                    if self.positions.len() > 1 {
                        self.pop();
                        self.on_corpus_line = false;
                        if let Some(m) = self.next_move(*n) {
                            self.push(m, *c);
                        }
                    }
                }
                Op::Comment(c) => self.game.comment(c.clone()),
                Op::Stamp(ms) => self.game.stamp_press(*ms),
                Op::Penalty(reason, ms) => self.game.add_penalty(Penalty {
                    beneficiary: crate::vocab::Player::Black,
                    ms: *ms,
                    reason: reason.clone(),
                }),
                Op::Decision(d) => self.game.add_decision(d.clone()),
                Op::Continue(note) => {
                    let fen = Fen::from_position(self.position(), EnPassantMode::Legal).to_string();
                    self.game.continue_from(&fen, note);
                    let pos = self.position().clone();
                    self.positions = vec![pos];
                    self.on_corpus_line = false;
                }
                Op::Result(r, t) => {
                    let result = [
                        GameResult::Ongoing,
                        GameResult::WhiteWins,
                        GameResult::BlackWins,
                        GameResult::Draw,
                    ][usize::from(*r)];
                    let termination = [
                        Termination::Checkmate,
                        Termination::Stalemate,
                        Termination::TimeForfeit,
                        Termination::IllegalMove,
                        Termination::Adjudication,
                        Termination::Claim,
                        Termination::ResultGesture,
                        Termination::DeadPosition,
                        Termination::BothFlagsFallen,
                    ]
                    .get(usize::from(*t))
                    .copied();
                    self.game.set_result(result, termination);
                }
                Op::Tags(n) => self.game.tags = tag_set(*n),
                Op::Reset(kind) => {
                    let tags = self.game.tags.clone();
                    let (fen, mode, pos) = match kind {
                        0 => (START_FEN, CastlingMode::Standard, Chess::default()),
                        1 => (
                            BLACK_TO_MOVE,
                            CastlingMode::Standard,
                            parse(BLACK_TO_MOVE, false),
                        ),
                        _ => (
                            CHESS960_START,
                            CastlingMode::Chess960,
                            parse(CHESS960_START, true),
                        ),
                    };
                    self.game = Game::new(fen, tags);
                    self.positions = vec![pos];
                    self.on_corpus_line = *kind == 0;
                    self.mode = mode;
                }
                Op::SwapClocks => {
                    for seg in &mut self.game.segments {
                        for m in &mut seg.moves {
                            std::mem::swap(&mut m.white_ms, &mut m.black_ms);
                        }
                    }
                }
                Op::EditDeep(at, what, c) => {
                    let plies = self.game.ply_count();
                    if plies == 0 {
                        return;
                    }
                    let mut at = at % plies;
                    let Some(seg) = self.game.segments.iter_mut().find(|s| {
                        let here = at < s.moves.len();
                        if !here {
                            at -= s.moves.len();
                        }
                        here
                    }) else {
                        return;
                    };
                    let m = &mut seg.moves[at];
                    match what {
                        0 => m.san.push('+'),
                        1 => m.comments.push(c.clone()),
                        2 => m.comments.clear(),
                        3 => m.clk_ms = Some(c.len() as u64 * 1_000),
                        _ => seg.intro.push(c.clone()),
                    }
                }
            }
        }
    }

    fn parse(fen: &str, chess960: bool) -> Chess {
        let mode = if chess960 {
            CastlingMode::Chess960
        } else {
            CastlingMode::Standard
        };
        fen.parse::<Fen>()
            .expect("a FEN")
            .into_position(mode)
            .expect("a legal position")
    }

    /// The kept text after every edit and every render, against the reference.
    fn check(corpus_game: usize, steps: &[(Op, Vec<Render>)]) {
        let games = &*CORPUS;
        let source = &games[corpus_game % games.len()];
        let mut play = Play::new(
            source
                .moves()
                .ok()
                .filter(|_| source.tag("FEN").is_none())
                .unwrap_or_default(),
        );
        let mut kept = PgnText::default();
        let mut text = String::new();
        for (i, (op, renders)) in steps.iter().enumerate() {
            play.apply(op);
            for (pending, clock) in renders {
                kept.write(&mut text, &play.game, *pending, clock.as_ref());
                let reference = reference::pgn_with_clock(&play.game, *pending, clock.as_ref());
                assert_eq!(
                    text, reference,
                    "step {i} ({op:?}), {pending} pending, clock {clock:?}"
                );
            }
        }
    }

    proptest! {
        // A fixed seed by default, so that CI runs the same cases every time and a failure is
        // reproducible; `PGN_TEXT_SEED=random` (or a number) explores further.
        #![proptest_config(ProptestConfig {
            cases: 96,
            rng_seed: match std::env::var("PGN_TEXT_SEED").as_deref() {
                Ok("random") => proptest::test_runner::RngSeed::Random,
                Ok(n) => proptest::test_runner::RngSeed::Fixed(
                    n.parse().expect("PGN_TEXT_SEED: a number or random"),
                ),
                Err(_) => proptest::test_runner::RngSeed::Fixed(1),
            },
            ..ProptestConfig::default()
        })]

        /// After every edit of a corpus game, each render of the kept text equals the reference.
        #[test]
        fn the_kept_text_is_the_text_written_afresh(
            corpus_game in any::<usize>(),
            steps in proptest::collection::vec(
                (op(), proptest::collection::vec(render(), 1..4)),
                1..160,
            ),
        ) {
            check(corpus_game, &steps);
        }
    }

    /// Whole corpus games, as the view renders a game move by move (the move pending, then
    /// final, then stamped), each text against the reference.
    #[test]
    fn corpus_games_move_by_move() {
        let tags = tag_set(1);
        for source in CORPUS.iter().step_by(37) {
            let Ok(moves) = source.moves() else { continue };
            if source.tag("FEN").is_some() {
                continue;
            }
            let mut play = Play::new(moves.clone());
            play.game.tags = tags.clone();
            let mut kept = PgnText::default();
            let mut text = String::new();
            for (ply, m) in moves.iter().enumerate() {
                let ms = 5_400_000 - 20_000 * ply as u64;
                play.push(*m, Clocks(Some(ms), Some(ms + 7_000)));
                for (pending, stamp) in [(1, false), (0, false), (0, true)] {
                    if stamp {
                        play.game.stamp_press(ms + 30_000);
                    }
                    kept.write(&mut text, &play.game, pending, None);
                    assert_eq!(text, reference::pgn_with_clock(&play.game, pending, None));
                }
            }
            play.game
                .set_result(GameResult::Draw, Some(Termination::Claim));
            kept.write(&mut text, &play.game, 0, None);
            assert_eq!(text, reference::pgn_with_clock(&play.game, 0, None));
        }
    }
}
