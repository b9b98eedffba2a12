//! Where the editions of the Laws (`fide-2023`, `fide-2005`) and the rule sets (standard,
//! rapid, blitz) decide differently: one method per decision, each an exhaustive `match` with
//! no `_ =>` over the edition, so a third edition fails to compile at every decision here,
//! and the arbiter asks these methods instead of comparing words. The list of decisions is
//! in ARCHITECTURE.md ("Invariants").
//!
//! A decision that depends on the edition alone is a method on [`Edition`]; one that depends
//! on the rule set too is a method on [`Laws`], the pair.

use crate::vocab::{Edition, Rules};

/// Five minutes on a clock (2005 rapid, English Rapidplay: the illegal-move threshold).
const FIVE_MINUTES_MS: u64 = 300_000;

/// The Laws a game is played under: the edition and the rule set (from [`super::ArbiterConfig`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Laws {
    pub edition: Edition,
    pub rules: Rules,
}

impl Edition {
    /// 7.5.3 (2023): pressing the clock without making a move is an illegal move (2005 has
    /// no such article: the press is nothing).
    pub fn press_without_move_is_illegal(self) -> bool {
        match self {
            Edition::Fide2023 => true,
            Edition::Fide2005 => false,
        }
    }

    /// 7.5.2 (2023): a pawn left unexchanged on the last rank stands as a queen (and is an
    /// illegal move); 2005 knows no such move: the placement is only illegal.
    pub fn unexchanged_promotion_stands(self) -> bool {
        match self {
            Edition::Fide2023 => true,
            Edition::Fide2005 => false,
        }
    }

    /// 5.1.2 (2023): a resignation is scored a draw when the winner cannot mate by any
    /// series of legal moves; 2005 scores every resignation as a loss.
    pub fn resignation_needs_a_mate(self) -> bool {
        match self {
            Edition::Fide2023 => true,
            Edition::Fide2005 => false,
        }
    }

    /// 9.6.1 and 9.6.2 (2023): fivefold repetition and 75 moves end the game by themselves;
    /// 2005 has only the players' claims.
    pub fn ends_by_seventyfive_and_fivefold(self) -> bool {
        match self {
            Edition::Fide2023 => true,
            Edition::Fide2005 => false,
        }
    }

    /// 9.5b (2005): an incorrect draw claim costs the claimant time too (half of his
    /// remaining time, up to three minutes); 2023 only gives the opponent time.
    pub fn incorrect_claim_costs_the_claimant(self) -> bool {
        match self {
            Edition::Fide2023 => false,
            Edition::Fide2005 => true,
        }
    }

    /// Whether a quickplay finish may be claimed at all: 2005 10.2 always; 2023 only where
    /// Guidelines III apply (`guidelines_iii`).
    pub fn quickplay_finish_allowed(self, guidelines_iii: bool) -> bool {
        match self {
            Edition::Fide2023 => guidelines_iii,
            Edition::Fide2005 => true,
        }
    }
}

impl Laws {
    /// Does the `count`th completed illegal move of a player lose the game, the clocks
    /// showing `times` (White's, Black's) when it was completed? 2023 7.5.5 (A.3 in rapid
    /// and blitz): the second; 2005 7.4: the third; 2005 blitz C.3: the first; 2005 rapid
    /// (English Rapidplay): the first when either clock showed less than five minutes.
    pub fn illegal_move_loses(self, count: u32, times: Option<(u64, u64)>) -> bool {
        match (self.edition, self.rules) {
            (Edition::Fide2023, Rules::Standard | Rules::Rapid | Rules::Blitz) => count >= 2,
            (Edition::Fide2005, Rules::Standard) => count >= 3,
            (Edition::Fide2005, Rules::Blitz) => true,
            (Edition::Fide2005, Rules::Rapid) => {
                times.is_some_and(|(w, b)| w < FIVE_MINUTES_MS || b < FIVE_MINUTES_MS)
            }
        }
    }

    /// The time the opponent gets for an illegal move that does not lose: 2023 7.5.5 two
    /// minutes, one minute in rapid and blitz (A.3); 2005 7.4 two minutes.
    pub fn illegal_move_bonus_ms(self) -> u64 {
        match (self.edition, self.rules) {
            (Edition::Fide2023, Rules::Standard) => 120_000,
            (Edition::Fide2023, Rules::Rapid | Rules::Blitz) => 60_000,
            (Edition::Fide2005, Rules::Standard | Rules::Rapid | Rules::Blitz) => 120_000,
        }
    }

    /// The time the opponent gets for an incorrect draw claim, and the article that says
    /// so: 2023 9.5.3.2 two minutes, one in rapid and blitz (A.3); 2005 9.5b three minutes.
    pub fn incorrect_claim_bonus(self) -> (u64, &'static str) {
        match (self.edition, self.rules) {
            (Edition::Fide2023, Rules::Standard) => (120_000, "9.5.3.2"),
            (Edition::Fide2023, Rules::Rapid | Rules::Blitz) => (60_000, "9.5.3.2, A.3"),
            (Edition::Fide2005, Rules::Standard | Rules::Rapid | Rules::Blitz) => (180_000, "9.5b"),
        }
    }

    /// A flag fall only opens the opponent's `win-on-time` claim (2005 rapid and blitz,
    /// B5–B7: the arbiter does not call flags), instead of ending the game at once (2023
    /// 6.9 and A.5.5; 2005 standard play).
    pub fn flag_fall_is_claimed(self) -> bool {
        match (self.edition, self.rules) {
            (Edition::Fide2023, Rules::Standard | Rules::Rapid | Rules::Blitz) => false,
            (Edition::Fide2005, Rules::Standard) => false,
            (Edition::Fide2005, Rules::Rapid | Rules::Blitz) => true,
        }
    }

    /// Whether a quickplay finish (2005 10.2, 2023 Guidelines III) may be claimed under these
    /// Laws: never in blitz (2005: 10.2 does not apply to blitz; 2023 Guidelines III.2.2:
    /// standard or rapid only).
    pub fn quickplay_finish_allowed(self, guidelines_iii: bool) -> bool {
        let by_rules = match self.rules {
            Rules::Standard | Rules::Rapid => true,
            Rules::Blitz => false,
        };
        by_rules && self.edition.quickplay_finish_allowed(guidelines_iii)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn laws(edition: Edition, rules: Rules) -> Laws {
        Laws { edition, rules }
    }

    #[test]
    fn the_illegal_move_that_loses_by_edition_and_rules() {
        for rules in Rules::ALL.iter().copied() {
            let l = laws(Edition::Fide2023, rules);
            assert!(!l.illegal_move_loses(1, None) && l.illegal_move_loses(2, None));
        }
        let standard = laws(Edition::Fide2005, Rules::Standard);
        assert!(!standard.illegal_move_loses(2, None) && standard.illegal_move_loses(3, None));
        assert!(laws(Edition::Fide2005, Rules::Blitz).illegal_move_loses(1, None));
        let rapid = laws(Edition::Fide2005, Rules::Rapid);
        assert!(!rapid.illegal_move_loses(1, Some((300_000, 300_000))));
        assert!(rapid.illegal_move_loses(1, Some((299_999, 600_000))));
        assert!(
            !rapid.illegal_move_loses(5, None),
            "clocks unknown: no loss"
        );
    }

    #[test]
    fn bonuses_and_claims_by_edition_and_rules() {
        assert_eq!(
            laws(Edition::Fide2023, Rules::Blitz).illegal_move_bonus_ms(),
            60_000
        );
        assert_eq!(
            laws(Edition::Fide2005, Rules::Blitz).illegal_move_bonus_ms(),
            120_000
        );
        assert_eq!(
            laws(Edition::Fide2005, Rules::Rapid).incorrect_claim_bonus(),
            (180_000, "9.5b")
        );
        assert!(laws(Edition::Fide2005, Rules::Rapid).flag_fall_is_claimed());
        assert!(!laws(Edition::Fide2005, Rules::Standard).flag_fall_is_claimed());
        assert!(!laws(Edition::Fide2023, Rules::Blitz).flag_fall_is_claimed());
        assert!(!laws(Edition::Fide2005, Rules::Blitz).quickplay_finish_allowed(true));
        assert!(laws(Edition::Fide2005, Rules::Rapid).quickplay_finish_allowed(false));
        assert!(!laws(Edition::Fide2023, Rules::Standard).quickplay_finish_allowed(false));
        assert!(laws(Edition::Fide2023, Rules::Standard).quickplay_finish_allowed(true));
    }
}
