//! The words of a game: who (player), how it stands (result), why it ended (termination)
//! and what may be claimed (claim kind) — contract section 2.

use shakmaty::Color;

words! {
    /// A player, by colour.
    pub enum Player ("player") {
        White = "white",
        Black = "black",
    }
}

impl Player {
    /// The other player.
    pub const fn other(self) -> Player {
        match self {
            Player::White => Player::Black,
            Player::Black => Player::White,
        }
    }

    /// `White` or `Black`, for the start of a sentence.
    pub const fn capitalised(self) -> &'static str {
        match self {
            Player::White => "White",
            Player::Black => "Black",
        }
    }
}

impl From<Color> for Player {
    fn from(c: Color) -> Player {
        match c {
            Color::White => Player::White,
            Color::Black => Player::Black,
        }
    }
}

impl From<Player> for Color {
    fn from(p: Player) -> Color {
        match p {
            Player::White => Color::White,
            Player::Black => Color::Black,
        }
    }
}

words! {
    /// A game's result (`Result` property, PGN result).
    #[derive(Default)]
    pub enum GameResult ("result") {
        /// Still playing (or unknown).
        #[default]
        Ongoing = "*",
        WhiteWins = "1-0",
        BlackWins = "0-1",
        Draw = "1/2-1/2",
    }
}

impl GameResult {
    /// A win for `p`.
    pub const fn win_for(p: Player) -> GameResult {
        match p {
            Player::White => GameResult::WhiteWins,
            Player::Black => GameResult::BlackWins,
        }
    }

    /// Whether the game is over.
    pub const fn is_finished(self) -> bool {
        match self {
            GameResult::Ongoing => false,
            GameResult::WhiteWins | GameResult::BlackWins | GameResult::Draw => true,
        }
    }

    /// The winner of a finished game (`Some(None)`: a draw; `None`: not finished).
    pub const fn winner(self) -> Option<Option<Player>> {
        match self {
            GameResult::Ongoing => None,
            GameResult::WhiteWins => Some(Some(Player::White)),
            GameResult::BlackWins => Some(Some(Player::Black)),
            GameResult::Draw => Some(None),
        }
    }
}

words! {
    /// Why a game ended (`Termination` property; empty while playing, which is `None` where
    /// a termination is optional).
    pub enum Termination ("termination") {
        Checkmate = "checkmate",
        Stalemate = "stalemate",
        DeadPosition = "dead-position",
        FivefoldRepetition = "fivefold-repetition",
        SeventyfiveMoves = "seventyfive-moves",
        TimeForfeit = "time-forfeit",
        /// The flag fell but the opponent cannot checkmate.
        FlagFallDraw = "flag-fall-draw",
        BothFlagsFallen = "both-flags-fallen",
        IllegalMove = "illegal-move",
        Claim = "claim",
        Adjudication = "adjudication",
        ResultGesture = "result-gesture",
    }
}

impl Termination {
    /// Whether the end follows from the position alone (mate, stalemate, dead position, the
    /// automatic repetition and move-count ends): taking the last move back reopens the game.
    /// Flags, claims and decisions do not depend on the last move.
    pub const fn by_position(self) -> bool {
        match self {
            Termination::Checkmate
            | Termination::Stalemate
            | Termination::DeadPosition
            | Termination::FivefoldRepetition
            | Termination::SeventyfiveMoves => true,
            Termination::TimeForfeit
            | Termination::FlagFallDraw
            | Termination::BothFlagsFallen
            | Termination::IllegalMove
            | Termination::Claim
            | Termination::Adjudication
            | Termination::ResultGesture => false,
        }
    }
}

words! {
    /// What a player may claim (`Claims` property, `AcceptClaim`, `RejectClaim`).
    pub enum ClaimKind ("claim kind") {
        ThreefoldRepetition = "threefold-repetition",
        FiftyMoves = "fifty-moves",
        IllegalMove = "illegal-move",
        WinOnTime = "win-on-time",
        QuickplayFinish = "quickplay-finish",
    }
}

impl ClaimKind {
    /// The kind in words (`threefold repetition`), for the record's sentences.
    pub fn spoken(self) -> String {
        self.as_str().replace('-', " ")
    }

    /// Whether 9.5 penalises an incorrect claim of this kind (`RejectClaim`).
    pub const fn rejectable(self) -> bool {
        match self {
            ClaimKind::ThreefoldRepetition | ClaimKind::FiftyMoves => true,
            ClaimKind::IllegalMove | ClaimKind::WinOnTime | ClaimKind::QuickplayFinish => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_strings_are_the_contracts() {
        assert_eq!(Player::WORDS, ["white", "black"]);
        assert_eq!(GameResult::WORDS, ["*", "1-0", "0-1", "1/2-1/2"]);
        assert_eq!(
            Termination::WORDS,
            [
                "checkmate",
                "stalemate",
                "dead-position",
                "fivefold-repetition",
                "seventyfive-moves",
                "time-forfeit",
                "flag-fall-draw",
                "both-flags-fallen",
                "illegal-move",
                "claim",
                "adjudication",
                "result-gesture",
            ]
        );
        assert_eq!(
            ClaimKind::WORDS,
            [
                "threefold-repetition",
                "fifty-moves",
                "illegal-move",
                "win-on-time",
                "quickplay-finish",
            ]
        );
    }

    #[test]
    fn words_round_trip_and_compare_with_strings() {
        for &t in Termination::ALL {
            assert_eq!(t.as_str().parse::<Termination>(), Ok(t));
            assert_eq!(serde_json::to_string(&t).unwrap(), format!("\"{t}\""));
            assert!(t == t.as_str());
        }
        for &r in GameResult::ALL {
            assert_eq!(r.to_string().parse::<GameResult>(), Ok(r));
        }
        for &k in ClaimKind::ALL {
            assert_eq!(
                serde_json::from_str::<ClaimKind>(&format!("\"{k}\"")).unwrap(),
                k
            );
        }
        assert_eq!(GameResult::WhiteWins, "1-0");
        assert!("0-1" == GameResult::BlackWins);
    }

    #[test]
    fn players_are_colours() {
        for c in [Color::White, Color::Black] {
            assert_eq!(Color::from(Player::from(c)), c);
            assert_eq!(Player::from(c).other(), Player::from(c.other()));
        }
        assert_eq!(GameResult::win_for(Player::Black), GameResult::BlackWins);
        assert_eq!(GameResult::Draw.winner(), Some(None));
        assert!(!GameResult::Ongoing.is_finished());
    }

    #[test]
    fn unknown_words_name_the_accepted_ones() {
        let e = "grey".parse::<Player>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown player \"grey\"; expected \"white\" or \"black\""
        );
        let e = "resign".parse::<ClaimKind>().unwrap_err();
        assert!(e.to_string().contains("\"quickplay-finish\""), "{e}");
        assert!("1-1".parse::<GameResult>().is_err());
        assert!("".parse::<Termination>().is_err());
    }

    #[test]
    fn only_position_ends_reopen_on_takeback() {
        let by_position: Vec<_> = Termination::ALL
            .iter()
            .filter(|t| t.by_position())
            .collect();
        assert_eq!(by_position.len(), 5);
        assert!(ClaimKind::FiftyMoves.rejectable() && !ClaimKind::WinOnTime.rejectable());
    }
}
