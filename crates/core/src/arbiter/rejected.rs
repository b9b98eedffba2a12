//! Incorrect draw claims (9.5): `RejectClaim` records a repetition or fifty-move claim the
//! arbiter found incorrect, with the edition's penalty, and — for a claim made by writing an
//! intended move — holds the claimant to that move. Part of [`Arbiter`].
//!
//! Penalties, for the arbiter to set on the clock (the record says what to set):
//!
//! * `fide-2023` 9.5.3.2: the opponent gets two minutes; one minute in rapid and blitz (A.3).
//! * `fide-2005` 9.5b: the opponent gets three minutes, and the claimant loses half of his
//!   remaining time up to three minutes when he has more than two minutes; between one and
//!   two minutes his time is set to one minute; under one minute it is left alone.
//!
//! The intended move: 9.5.3.1 (2005: 9.5a) says it must be made. Another move by the claimant
//! is then an illegal move, completed when he presses the clock: it is counted and opens the
//! opponent's `illegal-move` claim like any other. The move itself stays in the record (it
//! is legal chess and stands on the board); the arbiter can take it back.

use shakmaty::{Color, Move, Position};

use super::claims::uci_in;
use super::{Arbiter, Ruling};
use crate::game::Penalty;
use crate::vocab::{ClaimKind, CommandError, Player};

/// The move a claimant must make after an incorrect claim, and whether he has made another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Intended {
    player: Color,
    uci: String,
    /// The other move he made instead (not yet completed by a press).
    wrong: Option<String>,
}

impl Arbiter {
    /// `RejectClaim`: a player's incorrect repetition or fifty-move claim (9.5).
    pub fn reject_claim(
        &mut self,
        player: Player,
        kind: ClaimKind,
        detail: &str,
    ) -> Result<Vec<Ruling>, CommandError> {
        let invalid = |m: String| Err(CommandError::InvalidArgument(m));
        let claimant = Color::from(player);
        if !kind.rejectable() {
            return invalid(format!(
                "`{kind}` is not a claim 9.5 penalises; an incorrect claim is a \
                 threefold-repetition or fifty-moves claim"
            ));
        }
        if self.is_finished() {
            return invalid("the game is over; there is no claim to reject".into());
        }
        if self.position().turn() != claimant {
            return invalid(format!(
                "{player} is not to move: a draw claim is made by the player to move (9.2, 9.3)"
            ));
        }
        if !detail.is_empty() {
            let legal = detail
                .parse::<shakmaty::uci::UciMove>()
                .ok()
                .and_then(|u| u.to_move(self.position()).ok());
            if legal.is_none() {
                return invalid(format!(
                    "`{}` is not a legal move (UCI) for {player} here; the detail is the \
                     intended move written with the claim, or empty",
                    crate::vocab::excerpt(detail)
                ));
            }
        }
        if self
            .claims()
            .iter()
            .any(|(p, k, d)| *p == player && *k == kind && d == detail)
        {
            return invalid(format!(
                "{player}'s {kind} claim{} is correct (it is in Claims): accept it with \
                 AcceptClaim",
                with_move(detail)
            ));
        }
        let opponent = claimant.other();
        let mut ev = Vec::new();
        self.game.add_decision(format!(
            "{} claims {}{}: incorrect (9.5)",
            player.capitalised(),
            kind.spoken(),
            with_move(detail)
        ));
        let (bonus, article) = self.cfg.laws().incorrect_claim_bonus();
        let reason = format!("incorrect {} claim by {player} ({article})", kind.spoken());
        self.game.add_penalty(Penalty {
            beneficiary: opponent.into(),
            ms: bonus,
            reason: reason.clone(),
        });
        ev.push(Ruling::penalty(opponent.into(), bonus, &reason));
        if self.cfg.edition.incorrect_claim_costs_the_claimant() {
            let note = match self.clock.known_time_ms(claimant) {
                Some(t) => match deduction_2005(t) {
                    0 => format!("{player} keeps his time (under one minute, 9.5b)"),
                    off => format!(
                        "{} s off {player}'s clock, leaving {} s (9.5b)",
                        off / 1000,
                        (t - off) / 1000
                    ),
                },
                None => {
                    format!("{player} loses half of his remaining time, up to three minutes (9.5b)")
                }
            };
            self.game.add_decision(note);
        }
        if !detail.is_empty() {
            self.game.add_decision(format!(
                "{} must now play the intended move {detail} (9.5.3.1)",
                player.capitalised()
            ));
            self.intended = Some(Intended {
                player: claimant,
                uci: detail.to_string(),
                wrong: None,
            });
        }
        Ok(ev)
    }

    /// The intended move a claimant must make, as UCI (`None`: no obligation).
    pub fn intended_move(&self) -> Option<(Color, &str)> {
        self.intended.as_ref().map(|i| (i.player, i.uci.as_str()))
    }

    /// A move by `mover` is about to enter the record: note whether it is the intended one.
    pub(super) fn note_intended(&mut self, mover: Color, mv: Move) {
        let made = uci_in(self.position(), mv);
        if let Some(i) = self.intended.as_mut()
            && i.player == mover
            && i.wrong.is_none()
        {
            if made == i.uci {
                self.intended = None;
            } else {
                i.wrong = Some(made);
            }
        }
    }

    /// The claimant pressed: a move other than the intended one is now a completed illegal
    /// move (9.5.3.1 with 7.5).
    pub(super) fn check_intended(&mut self, presser: Color, ev: &mut Vec<Ruling>) {
        let Some(i) = self
            .intended
            .take_if(|i| i.player == presser && i.wrong.is_some())
        else {
            return;
        };
        let wrong = i.wrong.unwrap_or_default();
        self.complete_illegal(
            presser,
            format!(
                "{wrong} instead of the intended move {} announced with an incorrect claim \
                 (9.5.3.1)",
                i.uci
            ),
            ev,
        );
    }

    /// The last move left the record before its press: the obligation comes back.
    pub(super) fn intended_retracted(&mut self) {
        let turn = self.position().turn();
        if let Some(i) = self.intended.as_mut()
            && turn == i.player
        {
            i.wrong = None;
        }
    }
}

/// 9.5b: what comes off the claimant's clock, given his remaining time.
fn deduction_2005(t: u64) -> u64 {
    if t > 120_000 {
        (t / 2).min(180_000)
    } else {
        // One to two minutes: set to one minute; under a minute: left alone.
        t.saturating_sub(60_000)
    }
}

fn with_move(detail: &str) -> String {
    if detail.is_empty() {
        String::new()
    } else {
        format!(" with the intended move {detail}")
    }
}

#[cfg(test)]
mod tests {
    use super::deduction_2005;

    #[test]
    fn the_2005_deduction() {
        assert_eq!(deduction_2005(600_000), 180_000);
        assert_eq!(deduction_2005(200_000), 100_000);
        assert_eq!(deduction_2005(90_000), 30_000);
        assert_eq!(deduction_2005(45_000), 0);
    }
}
