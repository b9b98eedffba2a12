//! Operator commands on the arbiter: accepting claims (and applying their consequences by
//! rules and edition), adjudication, rules and tags.

use shakmaty::Color;

use super::{
    Arbiter, ArbiterEvent, capitalise, color_name, ordinal, parse_color, unwinnable, win_for,
};
use crate::game::Penalty;
use crate::vocab::{CommandError, Edition, Rules};

impl Arbiter {
    // ----- commands ---------------------------------------------------------------------

    /// `AcceptClaim`: applies a claim listed in [`Arbiter::claims`].
    pub fn accept_claim(
        &mut self,
        player: &str,
        kind: &str,
        detail: &str,
    ) -> Result<Vec<ArbiterEvent>, CommandError> {
        let available = self
            .claims()
            .iter()
            .any(|(p, k, d)| p == player && k == kind && d == detail);
        if !available {
            return Err(CommandError::ClaimNotAvailable(format!(
                "{player} has no `{kind}` claim{} right now; the Claims property lists the \
                 claims that can be accepted",
                if detail.is_empty() {
                    String::new()
                } else {
                    format!(" with `{detail}`")
                }
            )));
        }
        let claimant = parse_color(player).ok_or_else(|| {
            CommandError::InvalidArgument(format!("`{player}` is not white or black"))
        })?;
        let mut ev = vec![ArbiterEvent::ClaimAccepted {
            player: player.into(),
            kind: kind.into(),
            detail: detail.into(),
        }];
        let what = match (kind, detail) {
            (k, "") => k.replace('-', " "),
            (k, d) => format!("{} with the intended move {d}", k.replace('-', " ")),
        };
        self.game
            .add_decision(format!("{} claims {what}: accepted", capitalise(player)));
        match kind {
            "threefold-repetition" | "fifty-moves" | "quickplay-finish" => {
                self.end("1/2-1/2", "claim", &mut ev);
            }
            "win-on-time" => {
                if unwinnable::cannot_mate(self.position(), claimant) {
                    self.end("1/2-1/2", "flag-fall-draw", &mut ev);
                } else {
                    self.end(win_for(claimant), "time-forfeit", &mut ev);
                }
            }
            "illegal-move" => self.apply_illegal_claim(claimant, &mut ev),
            _ => {}
        }
        Ok(ev)
    }

    pub(super) fn apply_illegal_claim(&mut self, claimant: Color, ev: &mut Vec<ArbiterEvent>) {
        let Some(w) = self.window.take() else {
            return;
        };
        let standard_penalty = 120_000;
        let loses = match (self.cfg.edition, self.cfg.rules) {
            (Edition::Fide2023, _) => w.count >= 2,
            (Edition::Fide2005, Rules::Standard) => w.count >= 3,
            (Edition::Fide2005, Rules::Blitz) => true,
            (Edition::Fide2005, Rules::Rapid) => {
                w.times.is_some_and(|(wt, bt)| wt < 300_000 || bt < 300_000)
            }
        };
        if loses {
            if unwinnable::cannot_mate(self.position(), claimant) {
                self.end("1/2-1/2", "illegal-move", ev);
            } else {
                self.end(win_for(claimant), "illegal-move", ev);
            }
            return;
        }
        let ms = match (self.cfg.edition, self.cfg.rules) {
            (Edition::Fide2023, Rules::Standard) | (Edition::Fide2005, _) => standard_penalty,
            (Edition::Fide2023, _) => 60_000,
        };
        let reason = format!(
            "{} illegal move by {} (7.5.5)",
            ordinal(w.count),
            color_name(w.offender)
        );
        self.game.add_penalty(Penalty {
            beneficiary: color_name(claimant).into(),
            ms,
            reason: reason.clone(),
        });
        ev.push(ArbiterEvent::Penalty {
            beneficiary: color_name(claimant).into(),
            ms,
            reason,
        });
    }

    /// `Adjudicate`: the arbiter's result. A reason that mentions a resignation is scored a
    /// draw under `fide-2023` when the winner cannot mate (5.1.2).
    pub fn adjudicate(
        &mut self,
        result: &str,
        reason: &str,
    ) -> Result<Vec<ArbiterEvent>, CommandError> {
        let winner = match result {
            "1-0" => Some(Color::White),
            "0-1" => Some(Color::Black),
            "1/2-1/2" => None,
            other => {
                return Err(CommandError::InvalidArgument(format!(
                    "`{other}` is not a result; use 1-0, 0-1 or 1/2-1/2"
                )));
            }
        };
        if reason.contains(['\n', '\r']) {
            return Err(CommandError::InvalidArgument(
                "the reason must be a single line".into(),
            ));
        }
        let mut result = result;
        let resignation = reason.to_ascii_lowercase().contains("resign");
        if let Some(w) = winner
            && resignation
            && self.cfg.edition == Edition::Fide2023
            && unwinnable::cannot_mate(self.position(), w)
        {
            result = "1/2-1/2";
        }
        let mut ev = Vec::new();
        self.game.add_decision(format!(
            "Adjudicated {result}{}",
            if reason.is_empty() {
                String::new()
            } else {
                format!(": {reason}")
            }
        ));
        // An adjudication may also correct a finished game.
        self.game.set_result("*", "");
        self.end(result, "adjudication", &mut ev);
        Ok(ev)
    }

    /// `SetRules`.
    pub fn set_rules(&mut self, rules: Rules) {
        self.cfg.rules = rules;
    }

    /// `SetRules` from its contract string.
    pub fn set_rules_str(&mut self, rules: &str) -> Result<(), CommandError> {
        let r = match rules {
            "standard" => Rules::Standard,
            "rapid" => Rules::Rapid,
            "blitz" => Rules::Blitz,
            other => {
                return Err(CommandError::InvalidArgument(format!(
                    "`{other}` is not a rule set; use standard, rapid or blitz"
                )));
            }
        };
        self.set_rules(r);
        Ok(())
    }

    /// `SetTags`: replaces the game's tags (Result, SetUp and FEN are the record's own).
    pub fn set_tags(&mut self, tags: Vec<(String, String)>) -> Result<(), CommandError> {
        crate::game::validate_tags(&tags).map_err(CommandError::InvalidArgument)?;
        self.game.tags = tags;
        Ok(())
    }
}
