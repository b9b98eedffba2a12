//! The words a board is configured with and `SetRules` changes (contract section 3).

words! {
    /// Rules of play.
    #[derive(Default)]
    pub enum Rules ("rules") {
        #[default]
        Standard = "standard",
        Rapid = "rapid",
        Blitz = "blitz",
    }
}

words! {
    /// Which edition of the FIDE Laws applies.
    #[derive(Default)]
    pub enum Edition ("edition") {
        #[default]
        Fide2023 = "fide-2023",
        Fide2005 = "fide-2005",
    }
}

words! {
    /// Which half of the clock display (seen from its front) shows White's time.
    #[derive(Default)]
    pub enum WhiteDisplay ("white_display") {
        Left = "left",
        Right = "right",
        #[default]
        Auto = "auto",
    }
}

words! {
    /// Which chess the board plays (contract sections 2 and 3, `variant`).
    #[derive(Default)]
    pub enum Variant ("variant") {
        #[default]
        Standard = "standard",
        /// Fischer random: any of the 960 start positions; castling by Chess960 rules.
        Chess960 = "chess960",
    }
}

words! {
    /// How the clock moves to the next period of a time control (contract section 3,
    /// `clock_periods`): when a player's time of the period runs out (the DGT 3000's FIDE
    /// modes, DGT XL options 8, 9, 17, 18), or at the press its own move counter counts as
    /// the period's last move (DGT XL option 13, option 00 with move counts).
    #[derive(Default)]
    pub enum ClockPeriods ("clock_periods") {
        #[default]
        Time = "time",
        Moves = "moves",
    }
}

impl ClockPeriods {
    /// The clock adds each side's next period at the press its move counter counts as the
    /// period's last, each side on its own, not when a time runs out.
    pub fn by_counter(self) -> bool {
        match self {
            ClockPeriods::Time => false,
            ClockPeriods::Moves => true,
        }
    }
}

words! {
    /// Board orientation setting.
    #[derive(Default)]
    pub enum OrientationSetting ("orientation") {
        Normal = "normal",
        Reversed = "reversed",
        #[default]
        Auto = "auto",
    }
}

words! {
    /// Which protocol a board speaks (contract section 3, `protocol`).
    #[derive(Default)]
    pub enum ProtocolSetting ("protocol") {
        /// From the port's USB identity (an FTDI adapter: ChessLink), else DGT.
        #[default]
        Auto = "auto",
        Dgt = "dgt",
        ChessLink = "chesslink",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_round_trips_through_display_fromstr_and_serde() {
        fn check<T>(all: &[T])
        where
            T: Copy + PartialEq + std::fmt::Debug + std::fmt::Display,
            T: std::str::FromStr<Err = crate::vocab::UnknownWord>,
            T: serde::Serialize + serde::de::DeserializeOwned,
        {
            for &w in all {
                let s = w.to_string();
                assert_eq!(s.parse::<T>().unwrap(), w);
                assert_eq!(serde_json::to_string(&w).unwrap(), format!("\"{s}\""));
                assert_eq!(serde_json::from_str::<T>(&format!("\"{s}\"")).unwrap(), w);
            }
        }
        check(Rules::ALL);
        check(Edition::ALL);
        check(WhiteDisplay::ALL);
        check(Variant::ALL);
        check(OrientationSetting::ALL);
        check(ClockPeriods::ALL);
        check(ProtocolSetting::ALL);
    }

    #[test]
    fn the_strings_are_the_contracts() {
        assert_eq!(Rules::WORDS, ["standard", "rapid", "blitz"]);
        assert_eq!(Edition::WORDS, ["fide-2023", "fide-2005"]);
        assert_eq!(WhiteDisplay::WORDS, ["left", "right", "auto"]);
        assert_eq!(Variant::WORDS, ["standard", "chess960"]);
        assert_eq!(OrientationSetting::WORDS, ["normal", "reversed", "auto"]);
        assert_eq!(ClockPeriods::WORDS, ["time", "moves"]);
        assert_eq!(ProtocolSetting::WORDS, ["auto", "dgt", "chesslink"]);
        assert_eq!(ProtocolSetting::default(), ProtocolSetting::Auto);
        assert_eq!(ClockPeriods::default(), ClockPeriods::Time);
        assert_eq!(Rules::default(), Rules::Standard);
        assert_eq!(Edition::default(), Edition::Fide2023);
        assert_eq!(WhiteDisplay::default(), WhiteDisplay::Auto);
        assert_eq!(OrientationSetting::default(), OrientationSetting::Auto);
        assert_eq!(Variant::default(), Variant::Standard);
    }

    #[test]
    fn an_unknown_word_is_refused_with_the_accepted_ones() {
        let e = "bullet".parse::<Rules>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown rules \"bullet\"; expected \"standard\", \"rapid\" or \"blitz\""
        );
        let e = "FIDE-2023".parse::<Edition>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown edition \"FIDE-2023\"; expected \"fide-2023\" or \"fide-2005\""
        );
        assert!(serde_json::from_str::<Variant>("\"crazyhouse\"").is_err());
    }
}
