//! A session rebuilt from its journal after a restart: the last game snapshot with the patches
//! after it, the last rules change, the tags and the clock side learnt, then a gap until the
//! board is read (whatever was played while eboardd was not running).

use super::*;

impl Session {
    /// Rebuild a session from its journalled events (oldest first): the last game snapshot
    /// with the patches after it, and the last rules change win. Events that cannot be
    /// applied are skipped (a patch that does not fit, and the patches after it until the
    /// next snapshot).
    pub fn restore(mut config: SessionConfig, journal: &[Event]) -> Self {
        // The last rules change is the session's configuration from the start.
        if let Some((rules, edition)) = journal.iter().rev().find_map(|e| match e {
            Event::Record(RecordFact::Rules { rules, edition }) => Some((*rules, *edition)),
            _ => None,
        }) {
            config.arbiter.rules = rules;
            config.arbiter.edition = edition;
        }
        let mut s = Session::new(config);
        let mut game = None;
        // The clock side learnt in this game (a new game learns it again).
        let mut side = None;
        // A patch did not fit: the record is as of the patch before, until a snapshot.
        let mut patch_failed = false;
        for event in journal {
            match event {
                Event::GameStarted { fen } => {
                    s.started = true;
                    side = None;
                    game = parse_fen_in(fen, s.config.variant == Variant::Chess960)
                        .ok()
                        .map(|pos| {
                            Game::new(
                                &fen_of(&pos),
                                game_tags(&s.config, s.arbiter.config().time_control.as_ref()),
                            )
                        });
                }
                Event::Record(RecordFact::Snapshot { game: g }) => {
                    s.started = true;
                    patch_failed = false;
                    game = Some(g.clone());
                }
                Event::Record(RecordFact::Patch { patch }) => {
                    if let Some(g) = game.as_mut().filter(|_| !patch_failed)
                        && let Err(e) = patch.apply(g)
                    {
                        s.report(Fact::PatchSkipped {
                            error: e.to_string(),
                        });
                        patch_failed = true;
                    }
                }
                Event::Record(RecordFact::ClockSide { white_display }) => {
                    side = Some(*white_display);
                }
                Event::Record(RecordFact::Tags { tags }) => {
                    s.config.tags = tags.clone();
                    if let Some(g) = game.as_mut() {
                        g.tags = tags.clone();
                    }
                }
                _ => {}
            }
        }
        if let Some(game) = game {
            match Arbiter::restore(s.arbiter.config().clone(), game) {
                Ok(arbiter) => {
                    s.tracker = Tracker::new(arbiter.position().clone(), s.config.orientation);
                    if s.identity.turns_itself() {
                        s.tracker.board_turns_itself();
                    }
                    s.tracker.set_variant(s.config.variant);
                    s.arbiter = arbiter;
                    if let Some(side) = side {
                        s.arbiter.restore_white_display(side);
                    }
                    s.journalled_side = s.arbiter.learned_white_display();
                }
                Err(reason) => {
                    s.report(Fact::RestoreFailed {
                        reason: reason.to_string(),
                    });
                    s.started = false;
                }
            }
        }
        s.journalled = RecordSignature::of(s.arbiter.game(), s.arbiter.position());
        // Whatever was played while eboardd was not running is a gap until the board is read.
        s.with_recovery(|r, s| r.handle_unread(s, Cause::NotRunning, None));
        s.refresh_view();
        s
    }
}
