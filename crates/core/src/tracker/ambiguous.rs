//! Two plies that two stories explain equally: a quick reply read with the rest of a slide
//! ("e7-e6-e5 while White plays Nf3") and "move, reply, the first piece moved on again" leave
//! the same boards. Neither story is picked until a later board fits only one.

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Ambiguous {
    pub(super) short: (Move, Move),
    pub(super) long: (Move, Move),
}

impl Tracker {
    /// With two stories open (see [`Ambiguous`]), play went on by several moves (a quick
    /// reply again): the readings show the moves beyond exactly one of the stories, and only
    /// one sequence of them (see [`readings::Readings::witnessed_sequences`]): that story,
    /// then those moves.
    pub(super) fn recover_ambiguous(
        &mut self,
        amb: Ambiguous,
        extra: usize,
        ev: &mut Vec<TrackerEvent>,
    ) -> bool {
        let n = self.positions.len();
        let prev = &self.positions[n - 2];
        let short_end = after(&after(prev, amb.short.0), amb.short.1);
        let long_end = after(&after(self.position(), amb.long.0), amb.long.1);
        let on_short = self
            .readings
            .witnessed_sequences(&short_end, &self.sensed, extra);
        let on_long = self
            .readings
            .witnessed_sequences(&long_end, &self.sensed, extra);
        match (on_short.as_slice(), on_long.as_slice()) {
            ([beyond], []) => {
                self.ambiguous = None;
                self.retract(true, ev);
                self.play(amb.short.0, ev);
                self.play(amb.short.1, ev);
                for &m in beyond {
                    self.play(m, ev);
                }
                true
            }
            ([], [beyond]) => {
                self.ambiguous = None;
                self.play(amb.long.0, ev);
                self.play(amb.long.1, ev);
                for &m in beyond {
                    self.play(m, ev);
                }
                true
            }
            _ => false,
        }
    }

    /// With two stories open (see [`Ambiguous`]): the board one move beyond them, or the
    /// long story's reply and its first piece moved on elsewhere, settles it when only one
    /// such story fits every reading, or is shown being made, or of those shown being made
    /// fits every reading at its time; or else when the board is one move beyond exactly one
    /// of the two. Anything else keeps waiting.
    pub(super) fn resolve_ambiguous(
        &mut self,
        amb: Ambiguous,
        now: Millis,
        ev: &mut Vec<TrackerEvent>,
    ) -> bool {
        let n = self.positions.len();
        let prev = self.positions[n - 2].clone();
        let last = self.moves[n - 2];
        let short_end = after(&after(&prev, amb.short.0), amb.short.1);
        let long_end = after(&after(self.position(), amb.long.0), amb.long.1);
        // Each story one move further, from the position before the provisional move.
        let by_short =
            find_move(&short_end, &self.sensed).map(|m| vec![amb.short.0, amb.short.1, m]);
        let by_long =
            find_move(&long_end, &self.sensed).map(|m| vec![last, amb.long.0, amb.long.1, m]);
        // Or neither: the long story's reply, then its first piece moved on elsewhere, as
        // the readings show and no other sequence from the record does (a rook seen on a6,
        // the reply, then the rook slid back over a5 to a4).
        let direct = match self
            .readings
            .witnessed_sequences(self.position(), &self.sensed, 3)
            .as_slice()
        {
            [d] if d.len() == 2 && d[0] == amb.long.0 && d[1] != amb.long.1 => {
                Some(vec![last, d[0], d[1]])
            }
            _ => None,
        };
        // A story that leaves a reading unexplained is not the game (Ra5 Qb7 Ra4 never puts
        // the rook on a6, where it was seen); of the rest, one alone is taken. Otherwise the
        // board one move beyond exactly one of the two stories settles it.
        // The readings go back to the anchor: each story is told from there.
        let anchor = self.anchor.min(n - 2);
        let told = |s: &Vec<Move>| {
            let mut story = self.moves[anchor..n - 2].to_vec();
            story.extend_from_slice(s);
            story
        };
        let from = &self.positions[anchor];
        let all: Vec<&Vec<Move>> = [&by_short, &by_long, &direct]
            .into_iter()
            .flatten()
            .collect();
        let fitting: Vec<&Vec<Move>> = all
            .iter()
            .copied()
            .filter(|s| self.readings.misfit(from, &told(s)).is_some())
            .collect();
        // Several fit (a repetition shows the rook on a6 in both): the one the readings show
        // being made, move after move, if only one.
        let candidates = if fitting.is_empty() { &all } else { &fitting };
        let witnessed: Vec<&Vec<Move>> = candidates
            .iter()
            .copied()
            .filter(|s| self.readings.witness(from, &told(s)))
            .collect();
        // Several witnessed (a rook shuffled through a repetition, set down on each square
        // on the way): the one whose every reading fits it at the time it was read.
        let in_time: Vec<&Vec<Move>> = if witnessed.len() > 1 {
            witnessed
                .iter()
                .copied()
                .filter(|s| self.readings.fits_in_time(from, &told(s)))
                .collect()
        } else {
            Vec::new()
        };
        let chosen = match (
            fitting.as_slice(),
            witnessed.as_slice(),
            in_time.as_slice(),
            &by_short,
            &by_long,
        ) {
            ([one], ..) | (_, [one], ..) | (_, _, [one], ..) => (*one).clone(),
            (_, _, _, Some(s), None) => s.clone(),
            (_, _, _, None, Some(l)) => l.clone(),
            _ => return false,
        };
        self.ambiguous = None;
        if chosen[0] != last {
            self.retract(true, ev);
            self.play(chosen[0], ev);
        }
        let (on, between) = chosen[1..]
            .split_last()
            .expect("a story has two moves more");
        for &m in between {
            self.play(m, ev);
        }
        self.play_or_hold(*on, now, ev)
    }
}
