//! Operator commands on the arbiter: accepting claims (and applying their consequences by
//! rules and edition), adjudication, rules and tags.

use shakmaty::Color;

use super::{Arbiter, Ruling, color_name, ordinal, unwinnable, win_for};
use crate::event::{Event, RecordFact};
use crate::game::Penalty;
use crate::vocab::{ClaimKind, CommandError, GameResult, Player, Rules, Termination};

impl Arbiter {
    // ----- commands ---------------------------------------------------------------------

    /// `AcceptClaim`: applies a claim listed in [`Arbiter::claims`].
    pub fn accept_claim(
        &mut self,
        player: Player,
        kind: ClaimKind,
        detail: &str,
    ) -> Result<Vec<Ruling>, CommandError> {
        let available = self
            .claims()
            .iter()
            .any(|(p, k, d)| *p == player && *k == kind && d == detail);
        if !available {
            return Err(CommandError::ClaimNotAvailable(format!(
                "{player} has no `{kind}` claim{} right now; the Claims property lists the \
                 claims that can be accepted",
                if detail.is_empty() {
                    String::new()
                } else {
                    format!(" with `{}`", crate::vocab::excerpt(detail))
                }
            )));
        }
        let claimant = Color::from(player);
        let mut ev = vec![Ruling::Publish(Event::Record(RecordFact::ClaimAccepted {
            player,
            kind,
            detail: detail.into(),
        }))];
        let what = match detail {
            "" => kind.spoken(),
            d => format!("{} with the intended move {d}", kind.spoken()),
        };
        self.game
            .add_decision(format!("{} claims {what}: accepted", player.capitalised()));
        match kind {
            ClaimKind::ThreefoldRepetition | ClaimKind::FiftyMoves | ClaimKind::QuickplayFinish => {
                self.end(GameResult::Draw, Termination::Claim, &mut ev);
            }
            ClaimKind::WinOnTime => {
                if unwinnable::cannot_mate(self.position(), claimant) {
                    self.end(GameResult::Draw, Termination::FlagFallDraw, &mut ev);
                } else {
                    self.end(win_for(claimant), Termination::TimeForfeit, &mut ev);
                }
            }
            ClaimKind::IllegalMove => self.apply_illegal_claim(claimant, &mut ev),
        }
        Ok(ev)
    }

    pub(super) fn apply_illegal_claim(&mut self, claimant: Color, ev: &mut Vec<Ruling>) {
        let Some(w) = self.window.take() else {
            return;
        };
        let laws = self.cfg.laws();
        if laws.illegal_move_loses(w.count, w.times) {
            if unwinnable::cannot_mate(self.position(), claimant) {
                self.end(GameResult::Draw, Termination::IllegalMove, ev);
            } else {
                self.end(win_for(claimant), Termination::IllegalMove, ev);
            }
            return;
        }
        let ms = laws.illegal_move_bonus_ms();
        let reason = format!(
            "{} illegal move by {} (7.5.5)",
            ordinal(w.count),
            color_name(w.offender)
        );
        self.game.add_penalty(Penalty {
            beneficiary: claimant.into(),
            ms,
            reason: reason.clone(),
        });
        ev.push(Ruling::penalty(claimant.into(), ms, &reason));
    }

    /// `Adjudicate`: the arbiter's result. A reason that mentions a resignation is scored a
    /// draw under `fide-2023` when the winner cannot mate (5.1.2).
    pub fn adjudicate(
        &mut self,
        result: GameResult,
        reason: &str,
    ) -> Result<Vec<Ruling>, CommandError> {
        let Some(winner) = result.winner() else {
            return Err(CommandError::InvalidArgument(format!(
                "`{result}` is not a result; use 1-0, 0-1 or 1/2-1/2"
            )));
        };
        if reason.contains(['\n', '\r']) {
            return Err(CommandError::InvalidArgument(
                "the reason must be a single line".into(),
            ));
        }
        // The reason goes into the PGN like a tag's value: the same bounds (a `"` is fine in
        // a comment).
        if let Some(fault) = crate::game::text_fault(reason) {
            return Err(CommandError::InvalidArgument(format!(
                "the reason {}",
                fault.describe()
            )));
        }
        let mut result = result;
        let resignation = reason.to_ascii_lowercase().contains("resign");
        if let Some(w) = winner
            && resignation
            && self.cfg.edition.resignation_needs_a_mate()
            && unwinnable::cannot_mate(self.position(), w.into())
        {
            result = GameResult::Draw;
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
        self.game.set_result(GameResult::Ongoing, None);
        self.end(result, Termination::Adjudication, &mut ev);
        Ok(ev)
    }

    /// `SetRules`.
    pub fn set_rules(&mut self, rules: Rules) {
        self.cfg.rules = rules;
    }

    /// `SetTags`: replaces the game's tags (the caller has refused the record's own,
    /// `game::RECORD_TAGS`, among those it was given).
    pub fn set_tags(&mut self, tags: Vec<(String, String)>) -> Result<(), CommandError> {
        crate::game::validate_tag_list(&tags).map_err(CommandError::InvalidArgument)?;
        self.game.tags = tags;
        Ok(())
    }
}
