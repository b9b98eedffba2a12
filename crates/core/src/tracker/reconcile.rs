//! Re-deriving the game from the readings after every change: which legal continuation of
//! the game the sensed board shows (a move, a correction, a takeback, two plies), a new game
//! set up on the board, the orientation learnt, and the recovery from the last final
//! position when the board cannot be explained live (see the module documentation of
//! [`super`] for the order in which stories are tried).

use super::*;

impl Tracker {
    pub(super) fn changed(&mut self, now: Millis) -> Vec<TrackerEvent> {
        let mut ev = Vec::new();
        // What the dwell decided before this change, as a tick at its end would have.
        self.dwell_out(now, &mut ev);
        self.settle_final(now);
        self.last_change = now;
        self.settled_checked = false;
        self.undecided.clear();
        let turned = self.update_orientation();
        if turned {
            self.readings.restart(self.sensed.clone());
        } else {
            self.readings.push(self.sensed.clone());
        }
        if self.new_game_on_board(turned, &mut ev) {
            return ev;
        }
        self.end_hold_or_make_final(&mut ev);
        self.reconcile(now, &mut ev);
        self.advance_anchor();
        ev
    }

    /// The board shows the game with every move but the provisional one final: that
    /// position is the new anchor, and the readings before it are forgotten.
    pub(super) fn advance_anchor(&mut self) {
        if !self.in_sync || self.held.is_some() || self.ambiguous.is_some() {
            return;
        }
        let a = self.positions.len() - 1 - self.pending_plies();
        if a > self.anchor {
            self.anchor = a;
            self.readings.keep_from(self.reached[a]);
        }
    }

    /// Whether the readings show the record's moves since the anchor being made (see
    /// [`readings::Readings::witness`]); true when they cannot tell (readings lost).
    pub(super) fn record_witnessed(&self) -> bool {
        let anchor = self.anchor.min(self.positions.len() - 1);
        !self.readings.complete()
            || self.moves.len() <= anchor + 1
            || self
                .readings
                .witness(&self.positions[anchor], &self.moves[anchor..])
    }

    /// [`Tracker::recover`] at a change. A record the readings show being made is only
    /// extended there, never rewritten: a board it does not explain is a hand still moving
    /// as often as another game (a rook slid over f6 to g6, answered by ...Bf6, then touched
    /// on g6, is not Rf6 Bxf6; a bishop slid back over f6 on its way g5-e7 is not a game
    /// two plies shorter); the next piece set down, or the settled board, decides.
    pub(super) fn recover_live(&mut self, ev: &mut Vec<TrackerEvent>) -> bool {
        let rewrite = !self.record_witnessed();
        self.recover(Reach::Live, rewrite, ev)
    }

    /// The board cannot be explained from the game: re-derive the moves since the last
    /// final position (the anchor) from the readings themselves. The legal sequences from the
    /// anchor to the board that the readings show being made, at most `reach`'s extra plies more
    /// than the record holds since it, of the shortest length and one ply longer (no clock
    /// says whose turn it is), are searched ([`readings::Readings::witnessed_sequences`]);
    /// when there is exactly one, it is the game. Moves of the record since
    /// the anchor that it does not hold are retracted as corrections. Nothing is picked when
    /// no sequence or several are witnessed (then the board waits: a still board, the
    /// arbiter); nor when `rewrite` is off and the story would retract a move; nor when it
    /// would retract a final move for a board that is the record's position with pieces
    /// lifted (see [`Tracker::pieces_in_hand`]). Returns whether the game now matches the
    /// board.
    pub(super) fn recover(
        &mut self,
        reach: Reach,
        rewrite: bool,
        ev: &mut Vec<TrackerEvent>,
    ) -> bool {
        let extra = reach.extra_plies();
        if self.taken_back.is_some() || self.orientation.is_none() {
            return false;
        }
        // Two stories the tracker holds open wait for the next move (see [`Ambiguous`]); play
        // that went on by more than one move settles them too.
        if let Some(amb) = self.ambiguous {
            return self.recover_ambiguous(amb, extra, ev);
        }
        let n = self.positions.len();
        let anchor = self.anchor.min(n - 1);
        let from = &self.positions[anchor];
        let plies = n - 1 - anchor + extra;
        let mut stories = self.readings.fitting_sequences(from, &self.sensed, plies);
        // Several: a story that leaves a reading unexplained (a pawn seen where none of its
        // positions has one, off any line a piece travelled) is not the game, and of the
        // others the one that explains the readings with the fewest allowances is, if only
        // one does.
        if stories.len() > 1 {
            let fits: Vec<Option<usize>> = stories
                .iter()
                .map(|s| self.readings.misfit(from, s))
                .collect();
            if let Some(best) = fits.iter().flatten().min().copied() {
                let at_best: Vec<usize> = (0..stories.len())
                    .filter(|&i| fits[i] == Some(best))
                    .collect();
                if let [i] = at_best.as_slice() {
                    stories = vec![stories.swap_remove(*i)];
                }
            }
        }
        if stories.len() > 1 {
            self.undecided = stories
                .iter()
                .map(|s| [&self.moves[..anchor], s.as_slice()].concat())
                .collect();
        }
        let chosen = match stories.as_slice() {
            [one] => one.clone(),
            // Readings were lost: only a board one sequence reaches is taken.
            [] if !self.readings.complete() => match sequences::explain(from, &self.sensed, None) {
                sequences::Outcome::Unique(s) if s.len() <= plies => s,
                _ => return false,
            },
            _ => return false,
        };
        // A capture that may still be on its way waits for the next change or a still board
        // (see [`hold::capture_passing_over`]).
        if reach == Reach::Live && self.readings.last_capture_may_go_on(from, &chosen) {
            return false;
        }
        let common = self.moves[anchor..]
            .iter()
            .zip(&chosen)
            .take_while(|(a, b)| a == b)
            .count();
        if !rewrite && self.moves.len() > anchor + common {
            return false;
        }
        // A final move is not taken back for a board that is the record's own position with
        // pieces lifted: that is a hand holding a piece (a queen held in the air over Qh5
        // ...Bg4 is not Qg4 Bxg4, though the queen passed over g4). The board waits for the
        // piece to land; a story it then still needs is taken then.
        if anchor + common < self.moves.len() - self.pending_plies() && self.pieces_in_hand() {
            return false;
        }
        while self.moves.len() > anchor + common {
            self.retract(true, ev);
        }
        for &m in &chosen[common..] {
            self.play(m, ev);
        }
        self.held = None;
        self.ambiguous = None;
        self.undecided.clear();
        true
    }

    /// Learn or switch the orientation (auto setting) when the start position shows up.
    /// Returns whether a known orientation was switched.
    pub(super) fn update_orientation(&mut self) -> bool {
        if self.setting != OrientationSetting::Auto || self.sensed.occupied().count() != 32 {
            return false;
        }
        if self.start_of(&self.sensed).is_some() {
            self.orientation.get_or_insert(Orientation::Normal);
            return false;
        }
        let mut turned = self.sensed.clone();
        turned.rotate_180();
        if self.start_of(&turned).is_none() {
            return false;
        }
        let switched = self.orientation.is_some();
        self.orientation = Some(self.orientation.unwrap_or_default().flipped());
        self.sensed = turned;
        switched
    }

    /// The start position on the board begins a new game, except when it only takes back
    /// the game's single move (that is a takeback before the reply), is already announced, or
    /// is a legal move of the game (1. Nf3 Nf6 2. Ng1 Ng8 repeats the start position: that is
    /// play, and a repetition claim may follow). A board turned round to the start position
    /// is always a new game.
    pub(super) fn new_game_on_board(&mut self, turned: bool, ev: &mut Vec<TrackerEvent>) -> bool {
        let Some(start) = self.start_of(&self.sensed) else {
            return false;
        };
        let o = self.orientation.unwrap_or_default();
        let root_is_start = self.positions[0] == start;
        let fresh = self.moves.is_empty() && root_is_start;
        let retracts_only_move = self.moves.len() == 1 && root_is_start;
        let pos = self.position();
        let reached_by_move = pos
            .legal_moves()
            .iter()
            .any(|m| after(pos, *m).board() == &self.sensed);
        if !turned
            && (retracts_only_move || reached_by_move || (fresh && self.announced == Some(o)))
        {
            return false;
        }
        self.reset(start);
        self.announced = Some(o);
        ev.push(TrackerEvent::GameStarted { orientation: o });
        self.set_sync(true, ev);
        true
    }

    /// Explain the sensed board from the game, most likely explanation first.
    pub(super) fn reconcile(&mut self, now: Millis, ev: &mut Vec<TrackerEvent>) {
        if self.explain(now, false, ev) {
            // The live reading chose a story of several plies the readings do not show (a
            // slide and a quick reply read as a move, a reply and the piece moved on): the
            // one they show, if only one, is the game.
            if !self.record_witnessed() {
                self.recover(Reach::Live, true, ev);
            }
            if self.orientation.is_none() {
                self.orientation = Some(Orientation::Normal);
            }
            self.set_sync(true, ev);
            return;
        }
        if self.held.is_some() {
            self.set_sync(false, ev);
            return;
        }
        // A board no live explanation fits: the readings since the last final position may
        // tell (a quick reply captured on the square the move landed on; a capture read as
        // one update, then the capturer's square emptied).
        if self.recover_live(ev) {
            self.set_sync(true, ev);
            return;
        }
        if self.ambiguous.is_some() {
            self.set_sync(false, ev);
            return;
        }
        if self.orientation.is_none() && self.try_reversed(now, ev) {
            return;
        }
        self.set_sync(false, ev);
    }

    /// With the orientation still unknown, see whether the board read the other way round
    /// matches the game.
    pub(super) fn try_reversed(&mut self, now: Millis, ev: &mut Vec<TrackerEvent>) -> bool {
        let mut turned = self.sensed.clone();
        turned.rotate_180();
        let pos = self.position();
        if turned != *pos.board() && find_move(pos, &turned).is_none() {
            return false;
        }
        let normal = std::mem::replace(&mut self.sensed, turned);
        self.orientation = Some(Orientation::Reversed);
        if self.explain(now, false, ev) {
            self.set_sync(true, ev);
            true
        } else {
            self.sensed = normal;
            self.orientation = None;
            false
        }
    }

    /// Try every explanation; on success the game now matches the board.
    ///
    /// Two plies that only emptied squares (a recapture on the same square by the same kind
    /// of piece) look exactly like two pieces in hand, so they are accepted only once the
    /// board has `settled` (see [`Tracker::on_tick`]).
    pub(super) fn explain(
        &mut self,
        now: Millis,
        settled: bool,
        ev: &mut Vec<TrackerEvent>,
    ) -> bool {
        let pos = self.position();
        if *pos.board() == self.sensed {
            // The board shows the position before an operator's takeback: it may be played
            // again from now on.
            self.taken_back = None;
            self.ambiguous = None;
            return true;
        }
        if let Some(amb) = self.ambiguous {
            return self.resolve_ambiguous(amb, now, ev);
        }
        if let Some(m) = find_move(pos, &self.sensed) {
            if self.taken_back == Some(m) {
                return false;
            }
            return self.play_or_hold(m, now, ev);
        }
        let provisional = self.provisional_now(now) && !self.moves.is_empty();
        let n = self.positions.len();
        if provisional {
            let prev = &self.positions[n - 2];
            if let Some(m) = find_move(prev, &self.sensed) {
                self.retract(true, ev);
                return self.play_or_hold(m, now, ev);
            }
        }
        // A takeback to an earlier position of this game (most recent first). Taking a move
        // back always lifts a piece from a square it stands on now; a board that only gained
        // pieces on empty squares is a piece being set down before its old square empties.
        let pos_board = self.position().board();
        let lifted_some = (diff(pos_board, &self.sensed) & pos_board.occupied()).any();
        let takeback =
            if lifted_some && self.sensed.occupied().count() >= pos_board.occupied().count() {
                (0..n - 1)
                    .rev()
                    .find(|&k| *self.positions[k].board() == self.sensed)
            } else {
                None
            };
        if takeback.is_some_and(|k| k + 2 == n) {
            self.retract(false, ev);
            return true;
        }
        // A provisional move replaced and answered before the replacement was seen alone
        // (a slide finished and a quick reply read together). Tried before two plies ahead
        // of the provisional move: if both fit, the story with fewer moves wins (a pawn
        // pushed over e6 to e5 while the opponent already replies is not e6, reply, e6-e5).
        // Only when the replacing piece stands where it was released: if the reply captured on
        // that square, an opponent taking the provisional piece while the capturer rests on a
        // square it could have gone to looks the same (Ng4, then ...Bc8xg4 resting on f5,
        // against Nf5 Bxf5), and nothing is guessed.
        if provisional {
            let prev = &self.positions[n - 2];
            let last = self.moves.last().copied();
            if let TwoPly::One(a, b) = find_two_ply(prev, &self.sensed, last) {
                let placed = after(prev, a);
                let landed = diff(prev.board(), placed.board()) & placed.board().occupied();
                let visible = (diff(placed.board(), &self.sensed) & landed).is_empty();
                if visible && (settled || !self.readings.last_capture_may_go_on(prev, &[a, b])) {
                    // "Move, reply, the first piece moved on" leaves the same board: then
                    // nothing is picked, the board stays out of sync until the next move
                    // tells the stories apart.
                    if let TwoPly::One(c, d) = find_two_ply(self.position(), &self.sensed, None) {
                        self.ambiguous = Some(Ambiguous {
                            short: (a, b),
                            long: (c, d),
                        });
                        return false;
                    }
                    self.retract(true, ev);
                    self.play(a, ev);
                    return self.play_or_hold(b, now, ev);
                }
            }
        }
        // Two plies ahead. In a repetition the same board can also be an earlier position
        // with the same side to move: play going on is the likelier story than a takeback of
        // several plies.
        // The piece the provisional move just set down capturing what the opponent just moved
        // is as well read as that player moving it on with the opponent's piece in hand (rook
        // a1-c1-d1 while the queen is lifted is not ...Qd1 Rcxd1): nothing is guessed.
        // Only when that other story is a legal move: the capturer cannot have gone from where
        // it came to the capture square (Qf6-e7, ...Qb7-d7, Qe7xd7: no queen goes f6-d7).
        // Only two plies the readings show being made, or a settled board that is no reply
        // caught half-way: a held slide (Rd1-d4) answered by a capture whose piece is set
        // down on its way (...Rd8-d7-d4, the victim lifted first) once showed Rd7 Rxd7, a
        // white rook never seen on d7, and the record stopped behind it. The next piece set
        // down decides.
        // A settled board is taken without the readings' witness only when it is no pieces
        // in hand: however long it stands, a legal move partly made (Rf6xf7 with the victim
        // and then the rook lifted, the hand resting in the air) is as well read as two
        // plies that only emptied squares (Rxe6 fxe6, a rook never seen on e6), and a story
        // published then is taken back when the piece lands. Only the readings tell: the
        // move waits for them.
        let arrivals = diff(self.position().board(), &self.sensed) & self.sensed.occupied();
        if (!arrivals.is_empty() || settled)
            && let TwoPly::One(a, b) = find_two_ply(self.position(), &self.sensed, None)
            && !(provisional && self.moved_on_with_piece_in_hand(a, b))
            && (self.read_whole
                || self.two_plies_witnessed(a, b)
                || (settled && !self.in_progress(now)))
            && (settled
                || self.read_whole
                || !self
                    .readings
                    .last_capture_may_go_on(self.position(), &[a, b]))
        {
            self.play(a, ev);
            return self.play_or_hold(b, now, ev);
        }
        // A piece dragged through a repeated position passes over boards of this game too:
        // several plies back only once the board has settled.
        if let Some(k) = takeback.filter(|_| settled) {
            for _ in k..n - 1 {
                self.retract(false, ev);
            }
            return true;
        }
        false
    }

    /// Whether the readings show `a` then `b`, from the position now, being made (true when
    /// readings were lost and they cannot tell).
    pub(super) fn two_plies_witnessed(&self, a: Move, b: Move) -> bool {
        !self.readings.complete() || self.readings.witness(self.position(), &[a, b])
    }

    /// Whether the board that `a` then `b` leave (`b` by the piece the provisional move set
    /// down, capturing `a`'s piece where it landed) also reads as that piece moving on: the
    /// provisional move replaced by one from its origin to `b`'s square, with `a`'s piece
    /// lifted by the opponent.
    pub(super) fn moved_on_with_piece_in_hand(&self, a: Move, b: Move) -> bool {
        let (Some(last), Some(prev)) = (self.moves.last(), self.previous_position()) else {
            return false;
        };
        if b.from() != Some(last.to()) || !b.is_capture() || b.to() != a.to() {
            return false;
        }
        let Some(lifted) = a.from() else {
            return false;
        };
        prev.legal_moves().into_iter().any(|m| {
            if m.from() != last.from() || m.to() != b.to() || m.role() != last.role() {
                return false;
            }
            let mut board = after(prev, m).board().clone();
            board.discard_piece_at(lifted);
            board == self.sensed
        })
    }

    pub(super) fn play(&mut self, m: Move, ev: &mut Vec<TrackerEvent>) {
        let pos = self.position();
        let next = after(pos, m);
        self.positions.push(next);
        self.reached.push(self.readings.last_index());
        self.moves.push(m);
        self.provisional = true;
        self.unsettled = false;
        // A press that came before this move was seen belongs to the opponent's move (or, when
        // the clock overtook this move's last update, to this one: then the window simply
        // stays open until the next press or the reply, which costs nothing).
        self.window_until = None;
        self.announced = None;
        ev.push(TrackerEvent::MovePlayed { mv: m });
    }

    pub(super) fn retract(&mut self, correction: bool, ev: &mut Vec<TrackerEvent>) {
        let Some(mv) = self.moves.pop() else {
            return;
        };
        self.positions.pop();
        self.reached.pop();
        self.anchor = self.anchor.min(self.positions.len() - 1);
        if self.provisional {
            self.corrections += 1;
        }
        self.provisional = false;
        self.window_until = None;
        self.unsettled = false;
        ev.push(TrackerEvent::MoveRetracted { mv, correction });
    }

    pub(super) fn set_sync(&mut self, sync: bool, ev: &mut Vec<TrackerEvent>) {
        if sync && self.illegal.take().is_some() {
            ev.push(TrackerEvent::IllegalPlacementCleared);
        }
        if sync != self.in_sync {
            self.in_sync = sync;
            ev.push(TrackerEvent::InSync(sync));
        }
    }
}
