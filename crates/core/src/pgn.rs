//! PGN reading for the simulator, the LiveChess bridge's tournaments and the tests, with `pgn-reader` (shakmaty's companion):
//! tag pairs, the main line's SAN moves, its comments and the result (variations and NAGs
//! skipped); the moves are replayed with shakmaty.

use std::ops::ControlFlow;

use shakmaty::fen::Fen;
use shakmaty::san::San;
use shakmaty::{CastlingMode, Chess, Move, Position as _};

/// Why a game of a PGN file cannot be played: a bad FEN tag or a move that is not legal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PgnError(String);

/// One game of a PGN file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PgnGame {
    pub tags: Vec<(String, String)>,
    /// Main-line moves in SAN, as written.
    pub sans: Vec<String>,
    /// The game-termination marker (`1-0`, `0-1`, `1/2-1/2`, `*`), if present.
    pub result: Option<String>,
    /// The main line's comments, each with the number of moves before it.
    pub comments: Vec<(usize, String)>,
}

impl PgnGame {
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The position the game starts from (the FEN tag, else the standard start).
    pub fn start_position(&self) -> Result<Chess, PgnError> {
        match self.tag("FEN") {
            Some(fen) => {
                let parsed: Fen = fen
                    .parse()
                    .map_err(|e| PgnError(format!("bad FEN tag {fen:?}: {e}")))?;
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
                    .map_err(|e| PgnError(format!("illegal FEN tag position {fen:?}: {e}")))
            }
            None => Ok(Chess::default()),
        }
    }

    /// The moves, checked for legality from the start position.
    pub fn moves(&self) -> Result<Vec<Move>, PgnError> {
        let mut pos = self.start_position()?;
        let mut out = Vec::with_capacity(self.sans.len());
        for (ply, text) in self.sans.iter().enumerate() {
            let san: San = text
                .parse()
                .map_err(|e| PgnError(format!("ply {}: cannot read SAN {text:?}: {e}", ply + 1)))?;
            let mv = san
                .to_move(&pos)
                .map_err(|e| PgnError(format!("ply {}: {text} is not legal here: {e}", ply + 1)))?;
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

/// Parse every game of a PGN text. A text that is not PGN at all yields no games.
pub fn parse_games(text: &str) -> Vec<PgnGame> {
    let mut reader = pgn_reader::Reader::new(std::io::Cursor::new(text.as_bytes()));
    let mut games = Vec::new();
    // Reading from memory cannot fail with an I/O error.
    while let Ok(Some(game)) = reader.read_game(&mut Collect) {
        if !game.tags.is_empty() || !game.sans.is_empty() {
            games.push(game);
        }
    }
    games
}

/// The `pgn-reader` visitor that collects a [`PgnGame`].
struct Collect;

impl pgn_reader::Visitor for Collect {
    type Tags = Vec<(String, String)>;
    type Movetext = PgnGame;
    type Output = PgnGame;

    fn begin_tags(&mut self) -> ControlFlow<PgnGame, Self::Tags> {
        ControlFlow::Continue(Vec::new())
    }

    fn tag(
        &mut self,
        tags: &mut Self::Tags,
        name: &[u8],
        value: pgn_reader::RawTag<'_>,
    ) -> ControlFlow<PgnGame> {
        tags.push((
            String::from_utf8_lossy(name).into_owned(),
            value.decode_utf8_lossy().into_owned(),
        ));
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Self::Tags) -> ControlFlow<PgnGame, PgnGame> {
        ControlFlow::Continue(PgnGame {
            tags,
            ..PgnGame::default()
        })
    }

    fn san(&mut self, game: &mut PgnGame, san: pgn_reader::SanPlus) -> ControlFlow<PgnGame> {
        game.sans.push(san.to_string());
        ControlFlow::Continue(())
    }

    fn comment(
        &mut self,
        game: &mut PgnGame,
        comment: pgn_reader::RawComment<'_>,
    ) -> ControlFlow<PgnGame> {
        let text = String::from_utf8_lossy(comment.as_bytes())
            .trim()
            .to_owned();
        game.comments.push((game.sans.len(), text));
        ControlFlow::Continue(())
    }

    fn begin_variation(&mut self, _game: &mut PgnGame) -> ControlFlow<PgnGame, pgn_reader::Skip> {
        ControlFlow::Continue(pgn_reader::Skip(true))
    }

    fn outcome(
        &mut self,
        game: &mut PgnGame,
        outcome: pgn_reader::Outcome,
    ) -> ControlFlow<PgnGame> {
        game.result = Some(outcome.to_string());
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, game: PgnGame) -> PgnGame {
        game
    }
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
    fn main_line_comments_keep_their_place() {
        let text =
            "[Event \"C\"]\n\n{start} 1. e4 { [%clk 0:03:00] } (1. d4 {no}) e5 {x} 1/2-1/2\n";
        let games = parse_games(text);
        assert_eq!(games.len(), 1);
        assert_eq!(
            games[0].comments,
            [
                (0, "start".to_string()),
                (1, "[%clk 0:03:00]".to_string()),
                (2, "x".to_string())
            ]
        );
        assert_eq!(games[0].result.as_deref(), Some("1/2-1/2"));
        assert!(parse_games("").is_empty());
    }

    #[test]
    fn illegal_move_is_an_error_naming_the_ply() {
        let games = parse_games("1. e4 e5 2. Ke3 *");
        let err = games[0].moves().unwrap_err().to_string();
        assert!(err.contains("ply 3"), "{err}");
    }

    #[test]
    fn whole_corpus_reads() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/data/corpus/twic1599.pgn"
        );
        let text = std::fs::read_to_string(path).expect("the shared corpus");
        let games = parse_games(&text);
        assert_eq!(games.len(), 1110);
        for g in &games {
            g.moves().unwrap_or_else(|e| panic!("{}: {e}", g.title()));
        }
    }
}
