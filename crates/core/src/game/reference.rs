//! The PGN renderer as it was before the text was kept between renders ([`super::PgnText`]):
//! the whole game written token by token, each token a string, wrapped from a word list. Kept
//! for the tests only, as the reference the kept text must equal byte for byte.

use super::*;

/// The text of `game` with the current segment's last `pending` moves left out.
pub(super) fn pgn_with_clock(game: &Game, pending: usize, clock: Option<&ClockTags>) -> String {
    let mut out = String::new();
    let n = game.segments.len();
    for (i, seg) in game.segments.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let last = i + 1 == n;
        let result = if last {
            game.result
        } else {
            GameResult::Ongoing
        };
        let clock = clock.filter(|_| last);
        let shown = if last {
            seg.moves.len().saturating_sub(pending)
        } else {
            seg.moves.len()
        };
        write_segment(game, &mut out, seg, shown, result, last, clock);
    }
    out
}

fn escape_tag(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace(['\n', '\r'], " ")
}

fn clean_comment(c: &str) -> String {
    c.replace('}', ")").replace(['\n', '\r'], " ")
}

fn sentence(c: &str) -> String {
    let c = clean_comment(c.trim());
    let mut chars = c.chars();
    let mut out: String = match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => return c,
    };
    if !out.ends_with(['.', '!', '?']) {
        out.push('.');
    }
    out
}

fn write_segment(
    game: &Game,
    out: &mut String,
    seg: &Segment,
    shown: usize,
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
        out.push_str(&format!("[{tag} \"{}\"]\n", escape_tag(v)));
    }
    for (k, v) in &game.tags {
        if ROSTER.contains(&k.as_str()) || (RECORD_TAGS.contains(&k.as_str()) && k != "Variant") {
            continue;
        }
        out.push_str(&format!("[{k} \"{}\"]\n", escape_tag(v)));
    }
    let chess960 = game
        .tag_value("Variant")
        .is_some_and(|v| v.eq_ignore_ascii_case("chess960"));
    if seg.start_fen != START_FEN || chess960 {
        out.push_str("[SetUp \"1\"]\n");
        out.push_str(&format!("[FEN \"{}\"]\n", escape_tag(&seg.start_fen)));
    }
    if let Some(clock) = clock {
        out.push_str(&clock_lines(clock));
    }
    let term = if last {
        pgn_termination(game.termination)
    } else {
        "unterminated"
    };
    out.push_str(&format!("[Termination \"{}\"]\n\n", escape_tag(term)));

    let (moves, left_out) = seg.moves.split_at(shown.min(seg.moves.len()));
    let carried: Vec<&String> = left_out.iter().flat_map(|m| &m.comments).collect();
    let carried_by = |i: Option<usize>| -> &[&String] {
        if i == moves.len().checked_sub(1) {
            &carried
        } else {
            &[]
        }
    };
    let mut tokens: Vec<String> = Vec::new();
    for c in seg.intro.iter().chain(carried_by(None).iter().copied()) {
        tokens.push(format!("{{{}}}", sentence(c)));
    }
    let (mut white, mut number) = fen_turn_and_number(&seg.start_fen);
    let mut need_number = true;
    let ending = game.termination.filter(|_| last).map(|t| t.as_str());
    let last_move = moves.len().checked_sub(1);
    for (i, m) in moves.iter().enumerate() {
        let carried = carried_by(Some(i));
        let commented = !m.comments.is_empty() || !carried.is_empty();
        if white {
            tokens.push(format!("{number}."));
        } else if need_number {
            tokens.push(format!("{number}..."));
        }
        tokens.push(m.san.clone());
        let clk_ms = m.clk_ms.or(if white { m.white_ms } else { m.black_ms });
        let mut comment = Vec::new();
        if let Some(ms) = clk_ms {
            comment.push(format!("[%clk {}]", clk(ms)));
        }
        comment.extend(
            m.comments
                .iter()
                .chain(carried.iter().copied())
                .map(|c| sentence(c)),
        );
        if let Some(t) = ending.filter(|_| Some(i) == last_move) {
            if !commented {
                comment.push(clean_comment(t));
            } else {
                comment.push(sentence(&format!("termination: {t}")));
            }
        }
        need_number = commented;
        if !comment.is_empty() {
            tokens.push(format!("{{{}}}", comment.join(" ")));
        }
        if !white {
            number = number.saturating_add(1);
        }
        white = !white;
    }
    if let Some(t) = ending.filter(|_| last_move.is_none()) {
        tokens.push(format!("{{{}}}", clean_comment(t)));
    }
    tokens.push(result.to_string());
    wrap_tokens(out, &tokens);
}

fn wrap_tokens(out: &mut String, tokens: &[String]) {
    let mut line_len = 0usize;
    for t in tokens {
        let mut words: Vec<String> = Vec::new();
        for w in t.split(' ') {
            match words.last_mut() {
                Some(prev) if prev.ends_with("[%clk") => {
                    prev.push(' ');
                    prev.push_str(w);
                }
                _ => words.push(w.to_string()),
            }
        }
        for word in words {
            if line_len > 0 && line_len + 1 + word.len() > 79 {
                out.push('\n');
                line_len = 0;
            } else if line_len > 0 {
                out.push(' ');
                line_len += 1;
            }
            out.push_str(&word);
            line_len += word.len();
        }
    }
    out.push('\n');
}

/// The clock tag lines as `ClockTags::lines` wrote them.
fn clock_lines(tags: &ClockTags) -> String {
    use crate::clock_tags::{hms, iso_utc_millis};
    let mut out = format!(
        "[WhiteClock \"{}\"]\n[BlackClock \"{}\"]\n",
        hms(tags.white_ms),
        hms(tags.black_ms)
    );
    if let Some((color, unix_ms)) = tags.reference {
        let side = match color {
            shakmaty::Color::White => 'W',
            shakmaty::Color::Black => 'B',
        };
        out.push_str(&format!(
            "[ReferenceTime \"{side}/{}\"]\n",
            iso_utc_millis(unix_ms)
        ));
    }
    out
}
