//! The operator's commands (D-Bus methods) applied to the session.

use super::*;

impl Session {
    pub(super) fn on_command(
        &mut self,
        command: Command,
        now: Millis,
        out: &mut Vec<Event>,
    ) -> Result<(), CommandError> {
        match command {
            Command::NewGame => {
                let tracked = self.tracker.new_game();
                self.start_game(Chess::default(), out);
                self.apply_tracker(without_game_start(tracked), now, out);
                self.with_recovery(|r, s| r.handle_new_root(s, now, out));
            }
            Command::SetPosition(fen) => {
                let chess960 = self.config.variant == Variant::Chess960;
                let position = parse_fen_in(&fen, chess960).map_err(|reason| {
                    CommandError::InvalidFen(format!("not a playable FEN: {reason}"))
                })?;
                let tracked = self.tracker.set_position(position.clone());
                self.start_game(position, out);
                self.apply_tracker(without_game_start(tracked), now, out);
                self.with_recovery(|r, s| r.handle_new_root(s, now, out));
            }
            Command::SetTags(tags) => self.merge_tags(tags, out)?,
            Command::SetRules(rules) => {
                self.arbiter.set_rules(rules);
                out.push(Event::Record(RecordFact::Rules {
                    rules,
                    edition: self.arbiter.config().edition,
                }));
            }
            Command::TakeBack => {
                let ply = self.arbiter.game().ply_count();
                let ruled = self.arbiter.take_back()?;
                // The board shows the old position until the players restore it: the
                // tracker follows the record, and InSync says what the board still shows.
                let _ = self.tracker.take_back(1);
                if self.tracker.position() != self.arbiter.position() {
                    let _ = self.tracker.set_position(self.arbiter.position().clone());
                }
                self.standing_illegal = None;
                out.push(Event::MoveRetracted {
                    ply: ply as u32,
                    fen: self.arbiter.fen(),
                });
                self.apply_arbiter(ruled, out);
                self.with_recovery(|r, s| r.handle_took_back(s, now, out));
            }
            Command::AcceptClaim {
                player,
                kind,
                detail,
            } => {
                let was_finished = self.arbiter.is_finished();
                let ruled = self.arbiter.accept_claim(player, kind, &detail)?;
                self.apply_arbiter(ruled, out);
                // A claim by an intended move (9.2 b, 9.3 b) plays it in the record.
                self.follow_record_on_board(was_finished);
            }
            Command::Adjudicate { result, reason } => {
                let ruled = self.arbiter.adjudicate(result, &reason)?;
                self.apply_arbiter(ruled, out);
            }
            Command::ResolveGap(moves) => {
                self.with_recovery(|r, s| r.handle_resolve(s, &moves, now, out))?
            }
            Command::ShowClockMessage(_) => {
                return Err(CommandError::NoClock(
                    "this board has no serial link to show a clock message on".into(),
                ));
            }
            Command::RejectClaim {
                player,
                kind,
                detail,
            } => {
                let ruled = self.arbiter.reject_claim(player, kind, &detail)?;
                self.apply_arbiter(ruled, out);
            }
        }
        Ok(())
    }

    /// `SetTags`, and the date of a game that begins: new values replace old ones of the same
    /// name, other tags stay; the merged tags are the game's and the next game's, journalled.
    pub(super) fn merge_tags(
        &mut self,
        tags: Vec<(String, String)>,
        out: &mut Vec<Event>,
    ) -> Result<(), CommandError> {
        // Never one of the record's own tags (PlyCount, Termination, FEN…).
        crate::game::validate_tags(&tags).map_err(CommandError::InvalidArgument)?;
        let mut merged = self.arbiter.game().tags.clone();
        for (name, value) in tags {
            match merged.iter_mut().find(|(n, _)| *n == name) {
                Some(slot) => slot.1 = value,
                None => merged.push((name, value)),
            }
        }
        self.arbiter.set_tags(merged.clone())?;
        self.config.tags = merged.clone();
        out.push(Event::Record(RecordFact::Tags { tags: merged }));
        Ok(())
    }
}
