//! Just enough PGN reading for the simulator: tag pairs and the main line's SAN moves
//! (comments, variations, NAGs and move numbers skipped), replayed with shakmaty.

use anyhow::Context as _;
use shakmaty::fen::Fen;
use shakmaty::san::San;
use shakmaty::{CastlingMode, Chess, Move, Position as _};

/// One game of a PGN file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PgnGame {
    pub tags: Vec<(String, String)>,
    /// Main-line moves in SAN, as written.
    pub sans: Vec<String>,
    /// The game-termination marker (`1-0`, `0-1`, `1/2-1/2`, `*`), if present.
    pub result: Option<String>,
}

impl PgnGame {
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The position the game starts from (the FEN tag, else the standard start).
    pub fn start_position(&self) -> anyhow::Result<Chess> {
        match self.tag("FEN") {
            Some(fen) => {
                let parsed: Fen = fen
                    .parse()
                    .with_context(|| format!("bad FEN tag {fen:?}"))?;
                // Chess960 games (lichess exports them so) name the variant.
                let mode = if self
                    .tag("Variant")
                    .is_some_and(|v| v.to_ascii_lowercase().starts_with("chess960"))
                {
                    CastlingMode::Chess960
                } else {
                    CastlingMode::Standard
                };
                parsed
                    .into_position(mode)
                    .with_context(|| format!("illegal FEN tag position {fen:?}"))
            }
            None => Ok(Chess::default()),
        }
    }

    /// The moves, checked for legality from the start position.
    pub fn moves(&self) -> anyhow::Result<Vec<Move>> {
        let mut pos = self.start_position()?;
        let mut out = Vec::with_capacity(self.sans.len());
        for (ply, text) in self.sans.iter().enumerate() {
            let san: San = text
                .parse()
                .with_context(|| format!("ply {}: cannot read SAN {text:?}", ply + 1))?;
            let mv = san
                .to_move(&pos)
                .with_context(|| format!("ply {}: {text} is not legal here", ply + 1))?;
            pos.play_unchecked(mv);
            out.push(mv);
        }
        Ok(out)
    }

    /// A one-line description: "White – Black, Event Round".
    pub fn title(&self) -> String {
        format!(
            "{} – {}, {} {}",
            self.tag("White").unwrap_or("?"),
            self.tag("Black").unwrap_or("?"),
            self.tag("Event").unwrap_or("?"),
            self.tag("Round").unwrap_or("")
        )
        .trim_end()
        .to_owned()
    }
}

/// Parse every game of a PGN text.
pub fn parse_games(text: &str) -> Vec<PgnGame> {
    let mut games = Vec::new();
    let mut game = PgnGame::default();
    let mut in_moves = false;
    let lines = text.lines();
    let mut movetext = String::new();
    let flush = |game: &mut PgnGame, movetext: &mut String, games: &mut Vec<PgnGame>| {
        read_movetext(movetext, game);
        movetext.clear();
        if !game.tags.is_empty() || !game.sans.is_empty() {
            games.push(std::mem::take(game));
        }
    };
    for line in lines {
        let trimmed = line.trim();
        if trimmed.starts_with('[') && !movetext_open(&movetext) {
            if in_moves {
                flush(&mut game, &mut movetext, &mut games);
                in_moves = false;
            }
            if let Some(tag) = read_tag(trimmed) {
                game.tags.push(tag);
            }
            continue;
        }
        if trimmed.starts_with('%') {
            continue;
        }
        if !trimmed.is_empty() {
            in_moves = true;
            movetext.push_str(line);
            movetext.push('\n');
        }
    }
    flush(&mut game, &mut movetext, &mut games);
    games
}

/// A comment or variation still open at the end of the text read so far.
fn movetext_open(text: &str) -> bool {
    let mut brace = false;
    let mut depth = 0i32;
    for c in text.chars() {
        match c {
            '{' if !brace => brace = true,
            '}' if brace => brace = false,
            '(' if !brace => depth += 1,
            ')' if !brace => depth -= 1,
            _ => {}
        }
    }
    brace || depth > 0
}

fn read_tag(line: &str) -> Option<(String, String)> {
    let inner = line.strip_prefix('[')?.trim_end().strip_suffix(']')?;
    let (name, rest) = inner.split_once(char::is_whitespace)?;
    let value = rest.trim().strip_prefix('"')?.strip_suffix('"')?;
    Some((
        name.to_owned(),
        value.replace("\\\"", "\"").replace("\\\\", "\\"),
    ))
}

fn read_movetext(text: &str, game: &mut PgnGame) {
    let mut depth = 0usize;
    let mut chars = text.chars().peekable();
    let mut token = String::new();
    let finish = |token: &mut String, depth: usize, game: &mut PgnGame| {
        if depth == 0 && !token.is_empty() {
            let is_result = matches!(token.as_str(), "1-0" | "0-1" | "1/2-1/2" | "*");
            let t = if is_result {
                token.as_str()
            } else {
                token.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.')
            };
            match t {
                "" => {}
                "1-0" | "0-1" | "1/2-1/2" | "*" => game.result = Some(t.to_owned()),
                _ if t.starts_with('$') => {}
                _ => {
                    let t = t.trim_end_matches(['!', '?']);
                    if !t.is_empty() {
                        game.sans.push(t.to_owned());
                    }
                }
            }
        }
        token.clear();
    };
    while let Some(c) = chars.next() {
        match c {
            '{' => {
                finish(&mut token, depth, game);
                for c in chars.by_ref() {
                    if c == '}' {
                        break;
                    }
                }
            }
            ';' => {
                finish(&mut token, depth, game);
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '(' => {
                finish(&mut token, depth, game);
                depth += 1;
            }
            ')' => {
                finish(&mut token, depth, game);
                depth = depth.saturating_sub(1);
            }
            c if c.is_whitespace() => finish(&mut token, depth, game),
            c => {
                // "1.e4" and "1...e5": a move number glued to its move.
                if c == '.'
                    && chars
                        .peek()
                        .is_some_and(|n| !n.is_ascii_digit() && *n != '.')
                {
                    token.push(c);
                    finish(&mut token, depth, game);
                } else {
                    token.push(c);
                }
            }
        }
    }
    finish(&mut token, depth, game);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_tags_moves_and_skips_annotations() {
        let text = "[Event \"Test\"]\n[White \"A\"]\n\n1. e4 {best by test} e5 2.Nf3 (2. f4 exf4) Nc6!? $1\n3. Bb5 a6 1-0\n\n[Event \"Two\"]\n\n1. d4 *\n";
        let games = parse_games(text);
        assert_eq!(games.len(), 2);
        assert_eq!(games[0].sans, ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6"]);
        assert_eq!(games[0].result.as_deref(), Some("1-0"));
        assert_eq!(games[0].tag("White"), Some("A"));
        assert_eq!(games[0].moves().unwrap().len(), 6);
        assert_eq!(games[1].sans, ["d4"]);
    }

    #[test]
    fn illegal_move_is_an_error_naming_the_ply() {
        let games = parse_games("1. e4 e5 2. Ke3 *");
        let err = games[0].moves().unwrap_err().to_string();
        assert!(err.contains("ply 3"), "{err}");
    }

    #[test]
    fn whole_corpus_reads() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus/twic1599.pgn");
        let text = std::fs::read_to_string(path).expect("the shared corpus");
        let games = parse_games(&text);
        assert_eq!(games.len(), 1110);
        for g in &games {
            g.moves().unwrap_or_else(|e| panic!("{}: {e}", g.title()));
        }
    }
}
