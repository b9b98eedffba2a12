//! Move reconstruction: sensed placements over time -> moves, takebacks, illegal placements.
//!
//! A DGT board reports the piece on each square, one change at a time, while people lift,
//! slide, drop, capture in any order and adjust pieces. The [`Tracker`] turns that stream into
//! exactly the moves played:
//!
//! - After every change it asks which legal continuation of the game has exactly the sensed
//!   board, in this order: the position itself; one ply (a move); a correction of the
//!   provisional move (below); a takeback of one ply; a correction followed by the reply;
//!   two plies (a quick reply read together with the move, or moves made while nothing was
//!   read); a takeback of several plies (only once the board has settled: a piece dragged
//!   through a repeated position passes over earlier boards of the game). Two plies are accepted only when exactly one
//!   sequence fits: nothing is guessed, the board stays out of sync until it disambiguates.
//! - A move is published as soon as the board shows it, unless the same hand may still be
//!   moving on ([`hold`]: a slider or pawn whose line goes on, a castling half, a piece set
//!   beside a victim). Such a move is *held* — not published, the board out of sync — until
//!   the next change (which is read afresh), the clock press or the opponent's touch (which
//!   publish it at once), or [`DWELL_MS`] of an unchanged board ([`Tracker::on_tick`];
//!   [`Tracker::next_wakeup`] says when; a change that comes after the dwell finds the move
//!   published first, so the record never depends on how often the caller ticks).
//! - The last move stays *provisional* until it is final: the press window closed
//!   ([`SCAN_LAG_MS`] after the clock was pressed with the board showing it: a clock message
//!   can overtake the last field update of the move it ends), the opponent touched the board,
//!   the board stood still for [`FINAL_STILL_MS`], or the opponent's move was published. A
//!   move published by the dwell (or by the opponent's touch while it was held) may still be
//!   moving on, so the opponent's touch alone does not make it final. While it is
//!   provisional, a board that shows a different move by the same player from the same
//!   position replaces it (retract + play, counted in [`Tracker::corrections`]): a piece set
//!   down for longer than the dwell and moved on ends where it is finally released.
//!   [`Tracker::pending_plies`] tells broadcast outputs what is not final yet.
//! - Explanations that only empty squares (a recapture on the same square by the same kind
//!   of piece, read as one board) look like pieces in hand: they wait until the board has
//!   stood still for [`ILLEGAL_SETTLE_MS`] ([`Tracker::on_tick`]).
//! - A board returned to an earlier position of this game retracts the moves since then.
//!   The start position set up again is a new game (unless it merely takes back the game's
//!   only move); set up on a board turned round, it is always a new game.
//! - Anything else is a move in progress or an illegal placement. Pieces in hand (squares
//!   emptied, part of a legal move made, a pawn on the last rank before its promotion piece,
//!   a captured piece touching a square next to the capture) never count as illegal; any
//!   other unexplained placement is reported once it has stood still for
//!   [`ILLEGAL_SETTLE_MS`] (checked on [`Tracker::on_tick`], and no earlier than
//!   [`SCAN_LAG_MS`] after a clock press), with a description for the arbiter. Whether the
//!   clock was pressed with pieces still in hand is for the caller to judge from
//!   [`Tracker::in_sync`].
//!
//! - After an operator takeback, a board still showing the move taken back does not bring it
//!   back: only once the board has shown the position before it is that move a move again.
//!
//! - A quick reply read together with the rest of a slide ("e7-e6-e5 while White already
//!   plays Nf3") and "move, reply, the first piece moved on again" leave the same boards.
//!   Held moves avoid the question in nearly every case (e6 is not published while the pawn
//!   may go on); where it remains (e6 stood longer than the dwell), neither story is picked:
//!   the board stays out of sync, with no illegal report, until the next move fits exactly
//!   one of them.
//!
//! Orientation: with [`OrientationSetting::Auto`] the board's orientation is learnt from the
//! start position (either way round), or from a board matching the game position.
//!
//! Pure: no I/O and no clock reads; time comes in as milliseconds.

pub mod chess960;
mod describe;
pub mod gesture;
pub mod hold;
mod readings;
mod search;
pub mod sequences;

/// The standard-chess position of a FEN the unit tests write out (they panic on a bad one).
#[cfg(test)]
fn test_position(fen: &str) -> Chess {
    fen.parse::<shakmaty::fen::Fen>()
        .expect("a FEN")
        .into_position(shakmaty::CastlingMode::Standard)
        .expect("a legal position")
}

use shakmaty::{Bitboard, Board, Chess, Color, FromSetup, Move, Position, Setup};

pub use crate::board::{Orientation, Placement};
use crate::protocol::FieldContent;
use crate::vocab::{Millis, OrientationSetting, Variant};
use search::{TwoPly, after, diff, find_move, find_two_ply};

/// Squares whose contents differ between two boards (for the gap search, and the squares the
/// simulators' hands touch for a move).
pub use search::diff as search_diff;

/// How long a clock press may run ahead of the board's last field update (one full scan).
pub const SCAN_LAG_MS: Millis = 250;
/// How long an unexplained placement must stand still before it is reported as illegal.
pub const ILLEGAL_SETTLE_MS: Millis = 600;
/// A move the board has shown, unchanged, for this long is final (contract section 2).
pub const FINAL_STILL_MS: Millis = 2_000;
pub use hold::DWELL_MS;
/// A board explained from the readings at a piece's placement may be this many plies
/// beyond the record (a quick reply answered at once)...
const LIVE_EXTRA_PLIES: usize = 3;
/// ...and a settled board, before anyone is accused, as many as a gap.
const SETTLED_EXTRA_PLIES: usize = sequences::MAX_PLIES;

/// A move the board shows while the hand may still be moving on (see [`hold`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Held {
    mv: Move,
    /// When the board began to show it.
    since: Millis,
}

/// What the tracker reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrackerEvent {
    /// The standard start position was set up (either orientation): a new game begins.
    GameStarted { orientation: Orientation },
    /// A legal move was made on the board. Only the move: the session's arbiter writes its
    /// SAN and UCI into the record, once, from the position it was played in.
    MovePlayed { mv: Move },
    /// The last move was taken back. `correction` is set when the tracker itself replaces a
    /// provisional move that turned out to be part of a longer one (a [`TrackerEvent::MovePlayed`]
    /// follows); otherwise the players took it back on the board.
    MoveRetracted { mv: Move, correction: bool },
    /// A placement no legal move explains has settled while `turn` is to move.
    IllegalPlacement { turn: Color, description: String },
    /// The reported illegal placement is gone: the board matches the game again.
    IllegalPlacementCleared,
    /// Whether the sensed placement equals the game position's placement.
    InSync(bool),
}

/// Operator takeback of more plies than the tracker knows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "cannot take back {requested} plies: only {available} known since the game's start position"
)]
pub struct TakeBackError {
    pub requested: usize,
    pub available: usize,
}

/// The sensed placement cannot be a chess position.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the board cannot be adopted as the game position: {0}")]
pub struct AdoptError(pub String);

/// The move-reconstruction state machine of one board.
#[derive(Debug, Clone)]
pub struct Tracker {
    setting: OrientationSetting,
    /// Known orientation (`None`: auto and not yet learnt; the board is read as normal).
    orientation: Option<Orientation>,
    /// The sensed board in chess squares, read with `orientation` (normal while unknown).
    sensed: Board,
    have_board: bool,
    /// The last change came in a whole-board reading: several squares at once, in no order
    /// the readings can show.
    read_whole: bool,
    /// Positions of this game, `positions[0]` being where it started (start or set position).
    positions: Vec<Chess>,
    moves: Vec<Move>,
    /// The last move may still be corrected by its player.
    provisional: bool,
    /// When set, the correction window closes at this time (after a clock press).
    window_until: Option<Millis>,
    last_press: Option<Millis>,
    last_change: Millis,
    /// The settled placement has been examined (cleared by any change or press).
    settled_checked: bool,
    in_sync: bool,
    illegal: Option<(Color, String)>,
    corrections: u32,
    /// The start position was announced for this (fresh) game in this orientation.
    announced: Option<Orientation>,
    /// Which start positions begin a game (standard, or any of Chess960's).
    variant: Variant,
    /// A move shown but not yet published (see [`hold`]).
    held: Option<Held>,
    /// How long a held move waits on an unchanged board ([`DWELL_MS`] by default).
    dwell: Millis,
    /// The provisional move could still have been moving on when it was published (the dwell
    /// ran out, or the opponent touched the board while it was held): the opponent's touch
    /// does not make it final, only the press, a still board or the opponent's move do.
    unsettled: bool,
    /// A move the operator took back while the board still showed it: it is not played again
    /// by itself before the board has shown the position before it.
    taken_back: Option<Move>,
    /// Two stories explain the board: the provisional move replaced and answered (`short`,
    /// from the position before it), or answered and then moved on (`long`, from the
    /// position). Nothing is picked until the next move tells them apart.
    ambiguous: Option<Ambiguous>,
    /// Several stories the readings witness equally well for the board as it stands (whole
    /// lines from the root): legal play explains the board, so nobody is accused; they stay
    /// open until the board changes (or the arbiter picks one).
    undecided: Vec<Vec<Move>>,
    /// Every board read since the last final position (see [`readings`]).
    readings: readings::Readings,
    /// For each of `positions`, the reading on which it was entered.
    reached: Vec<u64>,
    /// The last final position the board was seen in (an index into `positions`): what the
    /// board cannot be explained from live is re-derived from here ([`Tracker::recover`]).
    anchor: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ambiguous {
    short: (Move, Move),
    long: (Move, Move),
}

impl Tracker {
    /// A tracker for a game now at `position`.
    pub fn new(position: Chess, setting: OrientationSetting) -> Tracker {
        let orientation = match setting {
            OrientationSetting::Normal => Some(Orientation::Normal),
            OrientationSetting::Reversed => Some(Orientation::Reversed),
            OrientationSetting::Auto => None,
        };
        Tracker {
            setting,
            orientation,
            sensed: Board::empty(),
            have_board: false,
            read_whole: false,
            positions: vec![position],
            moves: Vec::new(),
            provisional: false,
            window_until: None,
            last_press: None,
            last_change: 0,
            settled_checked: false,
            in_sync: false,
            illegal: None,
            corrections: 0,
            announced: None,
            variant: Variant::Standard,
            held: None,
            dwell: DWELL_MS,
            unsettled: false,
            taken_back: None,
            ambiguous: None,
            undecided: Vec::new(),
            readings: readings::Readings::default(),
            reached: vec![0],
            anchor: 0,
        }
    }

    /// Which chess the board plays: a Chess960 board starts a game on any of the 960 start
    /// positions (in shakmaty's Chess960 castling mode).
    pub fn set_variant(&mut self, variant: Variant) {
        self.variant = variant;
    }

    /// The start position of the variant that `board` shows, if any.
    fn start_of(&self, board: &Board) -> Option<Chess> {
        match self.variant {
            Variant::Standard => (*board == Board::new()).then(Chess::default),
            Variant::Chess960 => chess960::start_position(board),
        }
    }

    /// Use `dwell` ms instead of [`DWELL_MS`] for held moves (0: publish at once).
    pub fn with_dwell(mut self, dwell: Millis) -> Tracker {
        self.dwell = dwell;
        self
    }

    /// How many of the last moves are not final yet (0 or 1): the mover may still correct it.
    /// Broadcast outputs leave these out (contract section 2).
    pub fn pending_plies(&self) -> usize {
        usize::from(self.provisional && !self.moves.is_empty())
    }

    /// The move the board shows but the tracker holds back, if any.
    pub fn held(&self) -> Option<Move> {
        self.held.map(|h| h.mv)
    }

    /// Make the last move final now (the game ended on it).
    pub fn make_final(&mut self) {
        self.provisional = false;
        self.window_until = None;
        self.unsettled = false;
    }

    /// When the tracker next needs [`Tracker::on_tick`] if nothing else happens: a held move's
    /// dwell, the end of the press window, the still board that makes a move final, or an
    /// unexplained placement settling. `None`: nothing is waiting on time.
    pub fn next_wakeup(&self) -> Option<Millis> {
        let mut next: Option<Millis> = None;
        let mut at = |t: Millis| next = Some(next.map_or(t, |n: Millis| n.min(t)));
        if let Some(h) = self.held {
            at(h.since.saturating_add(self.dwell));
        }
        if self.provisional {
            match self.window_until {
                Some(w) => at(w.saturating_add(1)),
                None if self.in_sync && self.held.is_none() => {
                    at(self.last_change.saturating_add(FINAL_STILL_MS))
                }
                None => {}
            }
        }
        if !self.in_sync
            && self.have_board
            && !self.settled_checked
            && self.held.is_none()
            && self.ambiguous.is_none()
        {
            let mut t = self.last_change.saturating_add(ILLEGAL_SETTLE_MS);
            if let Some(p) = self.last_press {
                t = t.max(p.saturating_add(SCAN_LAG_MS));
            }
            at(t);
        }
        next
    }

    /// The validated game position.
    pub fn position(&self) -> &Chess {
        // `positions` always holds at least the root position.
        &self.positions[self.positions.len() - 1]
    }

    /// The games the board cannot yet tell apart, each the whole game from
    /// [`Tracker::root`]: two stories held open (a move and its reply, or a slide finished
    /// and the reply read together: see [`Ambiguous`]), or several the readings witness
    /// equally for a settled board. The next move, or the arbiter, decides.
    pub fn open_stories(&self) -> Option<Vec<Vec<Move>>> {
        let Some(amb) = self.ambiguous else {
            return (!self.undecided.is_empty()).then(|| self.undecided.clone());
        };
        let n = self.moves.len();
        let mut short = self.moves[..n.checked_sub(1)?].to_vec();
        short.extend([amb.short.0, amb.short.1]);
        let mut long = self.moves.clone();
        long.extend([amb.long.0, amb.long.1]);
        Some(vec![short, long])
    }

    /// The position the tracker was given (or the last new game's): [`Tracker::moves`] and
    /// [`Tracker::open_stories`] lead from it.
    pub fn root(&self) -> &Chess {
        &self.positions[0]
    }

    /// When the board last changed.
    pub fn last_change(&self) -> Millis {
        self.last_change
    }

    /// The arbiter chose one of the [`Tracker::open_stories`] (the whole line from
    /// [`Tracker::root`]): the record becomes it, final (its moves the record does not share
    /// are retracted as corrections).
    pub fn take_story(&mut self, line: &[Move]) -> Vec<TrackerEvent> {
        let mut ev = Vec::new();
        let common = self
            .moves
            .iter()
            .zip(line)
            .take_while(|(a, b)| a == b)
            .count();
        while self.moves.len() > common {
            self.retract(true, &mut ev);
        }
        for &m in &line[common..] {
            self.play(m, &mut ev);
        }
        self.held = None;
        self.ambiguous = None;
        self.undecided.clear();
        self.make_final();
        let sync = *self.position().board() == self.sensed;
        self.set_sync(sync, &mut ev);
        self.advance_anchor();
        ev
    }

    /// The moves made since the position the tracker was given (or the last new game).
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// The position before the last move, if the tracker knows one (gap recovery anchors the
    /// board's memory on it).
    pub fn previous_position(&self) -> Option<&Chess> {
        self.positions
            .len()
            .checked_sub(2)
            .map(|i| &self.positions[i])
    }

    /// Take the board's orientation as known (gap recovery read it from a whole board that
    /// only fits the game the other way round).
    pub fn learn_orientation(&mut self, orientation: Orientation) {
        if self.setting == OrientationSetting::Auto {
            self.orientation = Some(orientation);
        }
    }

    /// What the sensors see now, orientation corrected.
    pub fn placement(&self) -> Placement {
        Placement::from_board(&self.sensed)
    }

    /// Whether the sensed placement equals the game position's placement.
    pub fn in_sync(&self) -> bool {
        self.in_sync
    }

    /// The board orientation, once known.
    pub fn orientation(&self) -> Option<Orientation> {
        self.orientation
    }

    /// How many provisional moves were replaced or taken back before they became final.
    pub fn corrections(&self) -> u32 {
        self.corrections
    }

    /// The illegal placement currently reported: who is to move and its description.
    pub fn illegal(&self) -> Option<(Color, &str)> {
        self.illegal.as_ref().map(|(c, d)| (*c, d.as_str()))
    }

    /// A full board dump (64 fields in wire order).
    pub fn on_board_dump(&mut self, fields: &[FieldContent; 64], now: Millis) -> Vec<TrackerEvent> {
        self.have_board = true;
        self.read_whole = true;
        let o = self.orientation.unwrap_or(Orientation::Normal);
        self.sensed = Placement::from_wire(fields, o).to_board();
        self.changed(now)
    }

    /// One field changed (wire index 0..=63; anything else is ignored).
    pub fn on_field_update(
        &mut self,
        field: u8,
        content: FieldContent,
        now: Millis,
    ) -> Vec<TrackerEvent> {
        let o = self.orientation.unwrap_or(Orientation::Normal);
        let Some(sq) = o.square_of_field(field) else {
            return Vec::new();
        };
        if self.sensed.piece_at(sq) == content {
            return Vec::new();
        }
        match content {
            Some(piece) => self.sensed.set_piece_at(sq, piece),
            None => self.sensed.discard_piece_at(sq),
        }
        if !self.have_board {
            // Without a dump the other squares are unknown: nothing can be concluded yet.
            return Vec::new();
        }
        self.read_whole = false;
        self.changed(now)
    }

    /// The clock lever changed: the mover says the move is done. The last move becomes final
    /// ([`SCAN_LAG_MS`] later, in case the press overtook its last field update).
    pub fn on_clock_press(&mut self, now: Millis) -> Vec<TrackerEvent> {
        self.settle_final(now);
        let mut ev = Vec::new();
        // The press ends a hold at once: the mover says the move is done.
        if let Some(h) = self.held.take() {
            self.play(h.mv, &mut ev);
            self.set_sync(true, &mut ev);
        }
        self.last_press = Some(now);
        self.settled_checked = false;
        // Only a move the board shows is made final: a press while the board is still out of
        // sync (a castling finishing while the opponent already lifts a piece) leaves the
        // window open until the reply is published.
        if self.provisional && self.window_until.is_none() && self.in_sync {
            self.window_until = Some(now.saturating_add(SCAN_LAG_MS));
        }
        // A board in sync at a press is the last final position seen: a hand that is
        // mid-move at every change (pieces set down before their squares are emptied) is in
        // sync only here, and recovery must never reach back past moves pressed as final.
        self.advance_anchor();
        ev
    }

    /// Publish a held move now: the caller knows the move is complete (a move recovered after
    /// a gap, read from a board on which play has already gone on).
    pub fn release_held(&mut self) -> Vec<TrackerEvent> {
        let mut ev = Vec::new();
        if let Some(h) = self.held.take() {
            self.play(h.mv, &mut ev);
            self.set_sync(true, &mut ev);
        }
        self.advance_anchor();
        ev
    }

    /// Time passes with no board change (call it a few times a second): accepts explanations
    /// that wait for a settled board and reports an illegal placement that has settled.
    pub fn on_tick(&mut self, now: Millis) -> Vec<TrackerEvent> {
        let mut ev = Vec::new();
        self.settle_final(now);
        if self.dwell_out(now, &mut ev) {
            self.set_sync(true, &mut ev);
        }
        self.check_illegal(now, &mut ev);
        self.advance_anchor();
        ev
    }

    /// Publish a held move whose dwell has run out by `now`. Called on every tick and before
    /// every change: a change that comes after the dwell finds the move published, however
    /// seldom the caller ticks (the board told it: the move stood for the whole dwell).
    /// Returns whether it published one (the board showed it until the dwell's end).
    fn dwell_out(&mut self, now: Millis, ev: &mut Vec<TrackerEvent>) -> bool {
        let Some(h) = self
            .held
            .filter(|h| now >= h.since.saturating_add(self.dwell))
        else {
            return false;
        };
        // The hand rested long enough: publish, but an opponent's touch does not yet make it
        // final (the hand may still move on while the opponent starts his reply).
        self.held = None;
        self.play(h.mv, ev);
        self.unsettled = true;
        true
    }

    /// The operator set up a position (FEN): it becomes the root of a new game record.
    pub fn set_position(&mut self, position: Chess) -> Vec<TrackerEvent> {
        self.reset(position);
        self.announced = None;
        self.operator_refresh()
    }

    /// The operator started a new game from the standard start position.
    pub fn new_game(&mut self) -> Vec<TrackerEvent> {
        self.reset(Chess::default());
        self.announced = self.orientation;
        self.operator_refresh()
    }

    /// The operator took back `plies` half-moves.
    pub fn take_back(&mut self, plies: usize) -> Result<Vec<TrackerEvent>, TakeBackError> {
        if plies > self.moves.len() {
            return Err(TakeBackError {
                requested: plies,
                available: self.moves.len(),
            });
        }
        let mut last = None;
        for _ in 0..plies {
            last = self.moves.pop();
            self.positions.pop();
            self.reached.pop();
        }
        self.anchor = self.anchor.min(self.positions.len() - 1);
        self.provisional = false;
        self.window_until = None;
        self.held = None;
        self.ambiguous = None;
        self.undecided.clear();
        // Until the board shows the position before it, a board still showing the move taken
        // back must not bring it back.
        self.taken_back = last.filter(|_| plies == 1);
        Ok(self.operator_refresh())
    }

    /// Make the position whatever the board now shows, with `turn` to move (an illegal move
    /// stands and play continues). Castling rights survive only where king and rook are still
    /// on their squares; there is no en passant square.
    pub fn adopt_placement(&mut self, turn: Color) -> Result<Vec<TrackerEvent>, AdoptError> {
        self.adopt_board(self.sensed.clone(), turn)
    }

    /// Make `board` the position with `turn` to move (see [`Tracker::adopt_placement`]); the
    /// sensed board is then compared with it as usual.
    pub fn adopt_board(
        &mut self,
        board: Board,
        turn: Color,
    ) -> Result<Vec<TrackerEvent>, AdoptError> {
        let current = self.position();
        let mut castling_rights = Bitboard::EMPTY;
        for color in Color::ALL {
            for side in shakmaty::CastlingSide::ALL {
                if let Some(rook) = current.castles().rook(color, side) {
                    let king_home = current.board().king_of(color);
                    let rook_piece = shakmaty::Role::Rook.of(color);
                    if board.piece_at(rook) == Some(rook_piece)
                        && king_home.is_some_and(|k| {
                            board.piece_at(k) == Some(shakmaty::Role::King.of(color))
                                && k.rank() == color.backrank()
                        })
                    {
                        castling_rights.add(rook);
                    }
                }
            }
        }
        let setup = Setup {
            board,
            promoted: Bitboard::EMPTY,
            pockets: None,
            turn,
            castling_rights,
            ep_square: None,
            remaining_checks: None,
            halfmoves: 0,
            fullmoves: current.fullmoves(),
        };
        let position = Chess::from_setup(setup, current.castles().mode())
            .map_err(|e| AdoptError(e.to_string()))?;
        self.reset(position);
        Ok(self.operator_refresh())
    }

    /// The one legal move from the game position whose result the board shows now, if any.
    pub fn move_shown(&self) -> Option<Move> {
        find_move(self.position(), &self.sensed)
    }

    /// Play `m` (legal in the game position) as a move seen on the board.
    pub fn play_shown(&mut self, m: Move) -> Vec<TrackerEvent> {
        let mut ev = Vec::new();
        if self.position().is_legal(m) {
            self.held = None;
            self.play(m, &mut ev);
            let sync = self.sensed == *self.position().board();
            self.set_sync(sync, &mut ev);
        }
        ev
    }

    // ---- internals ----

    fn reset(&mut self, position: Chess) {
        self.positions.clear();
        self.positions.push(position);
        self.readings.restart(self.sensed.clone());
        self.reached = vec![self.readings.last_index()];
        self.anchor = 0;
        self.moves.clear();
        self.provisional = false;
        self.window_until = None;
        self.held = None;
        self.unsettled = false;
        self.taken_back = None;
        self.ambiguous = None;
        self.undecided.clear();
    }

    /// Make the provisional move final when its time has come: the press window closed, or
    /// the board has shown it unchanged for [`FINAL_STILL_MS`]. Called before each input is
    /// looked at, with the time of that input.
    fn settle_final(&mut self, now: Millis) {
        if !self.provisional {
            return;
        }
        let window_closed = self.window_until.is_some_and(|t| now > t);
        let still = self.in_sync
            && self.held.is_none()
            && now.saturating_sub(self.last_change) >= FINAL_STILL_MS;
        if window_closed || still {
            self.make_final();
        }
    }

    /// The board changed only where the side to move has pieces, and none of them now holds
    /// a piece of the last mover: the opponent of the last mover has touched the board (a
    /// piece of the mover set on an opponent's square is the mover capturing).
    fn opponent_touched(&self, shown: &Chess) -> bool {
        let changed = diff(shown.board(), &self.sensed);
        let theirs = shown.board().by_color(shown.turn());
        let mover = self.sensed.by_color(!shown.turn());
        changed.any() && (changed & !theirs).is_empty() && (changed & mover).is_empty()
    }

    /// Before a change is explained: a held move ends when the opponent touches the board
    /// (it is published; the hand may still be on its piece, so it stays correctable) and is
    /// dropped otherwise (the board is read afresh). A complete provisional move touched by
    /// the opponent is final.
    fn end_hold_or_make_final(&mut self, ev: &mut Vec<TrackerEvent>) {
        if let Some(h) = self.held.take() {
            let shown = after(self.position(), h.mv);
            // Lifting a piece that a continuation captures is the mover's hand, not the
            // opponent's.
            let victims = hold::continuations(self.position(), h.mv)
                .into_iter()
                .filter(|m| m.is_capture())
                .fold(Bitboard::EMPTY, |b, m| b | Bitboard::from(m.to()));
            if self.opponent_touched(&shown)
                && (diff(shown.board(), &self.sensed) & victims).is_empty()
            {
                self.play(h.mv, ev);
                self.unsettled = true;
            }
            return;
        }
        if self.provisional
            && !self.unsettled
            && self.window_until.is_none()
            && self.opponent_touched(self.position())
        {
            self.make_final();
        }
    }

    /// Publish `m`, or hold it when the hand may still be moving on. Returns whether it was
    /// published.
    fn play_or_hold(&mut self, m: Move, now: Millis, ev: &mut Vec<TrackerEvent>) -> bool {
        if self.dwell > 0 && hold::may_go_on(self.position(), m) {
            self.held = Some(Held { mv: m, since: now });
            false
        } else {
            self.play(m, ev);
            true
        }
    }

    /// After an operator change: only sync and illegal state follow; the board is re-read at
    /// its next change (a board still showing a taken-back move is then out of sync).
    fn operator_refresh(&mut self) -> Vec<TrackerEvent> {
        let mut ev = Vec::new();
        if self.illegal.take().is_some() {
            ev.push(TrackerEvent::IllegalPlacementCleared);
        }
        if self.have_board {
            let sync = self.sensed == *self.position().board();
            self.set_sync(sync, &mut ev);
        }
        ev
    }

    fn provisional_now(&self, now: Millis) -> bool {
        self.provisional && self.window_until.is_none_or(|t| now <= t)
    }

    fn changed(&mut self, now: Millis) -> Vec<TrackerEvent> {
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
    fn advance_anchor(&mut self) {
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
    fn record_witnessed(&self) -> bool {
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
    fn recover_live(&mut self, ev: &mut Vec<TrackerEvent>) -> bool {
        let rewrite = !self.record_witnessed();
        self.recover(LIVE_EXTRA_PLIES, rewrite, ev)
    }

    /// The board cannot be explained from the game: re-derive the moves since the last
    /// final position (the anchor) from the readings themselves. The legal sequences from the
    /// anchor to the board that the readings show being made, at most `extra` plies more
    /// than the record holds since it, of the shortest length and one ply longer (no clock
    /// says whose turn it is), are searched ([`readings::Readings::witnessed_sequences`]);
    /// when there is exactly one, it is the game. Moves of the record since
    /// the anchor that it does not hold are retracted as corrections. Nothing is picked when
    /// no sequence or several are witnessed (then the board waits: a still board, the
    /// arbiter); nor when `rewrite` is off and the story would retract a move. Returns whether
    /// the game now matches the board.
    fn recover(&mut self, extra: usize, rewrite: bool, ev: &mut Vec<TrackerEvent>) -> bool {
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
        let common = self.moves[anchor..]
            .iter()
            .zip(&chosen)
            .take_while(|(a, b)| a == b)
            .count();
        if !rewrite && self.moves.len() > anchor + common {
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
    fn update_orientation(&mut self) -> bool {
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
    fn new_game_on_board(&mut self, turned: bool, ev: &mut Vec<TrackerEvent>) -> bool {
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
    fn reconcile(&mut self, now: Millis, ev: &mut Vec<TrackerEvent>) {
        if self.explain(now, false, ev) {
            // The live reading chose a story of several plies the readings do not show (a
            // slide and a quick reply read as a move, a reply and the piece moved on): the
            // one they show, if only one, is the game.
            if !self.record_witnessed() {
                self.recover(LIVE_EXTRA_PLIES, true, ev);
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
    fn try_reversed(&mut self, now: Millis, ev: &mut Vec<TrackerEvent>) -> bool {
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
    fn explain(&mut self, now: Millis, settled: bool, ev: &mut Vec<TrackerEvent>) -> bool {
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
                if visible {
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
        let arrivals = diff(self.position().board(), &self.sensed) & self.sensed.occupied();
        if (!arrivals.is_empty() || settled)
            && let TwoPly::One(a, b) = find_two_ply(self.position(), &self.sensed, None)
            && !(provisional && self.moved_on_with_piece_in_hand(a, b))
            && (self.read_whole
                || self.two_plies_witnessed(a, b)
                || (settled && !self.reply_in_progress()))
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
    fn two_plies_witnessed(&self, a: Move, b: Move) -> bool {
        !self.readings.complete() || self.readings.witness(self.position(), &[a, b])
    }

    /// Whether the board that `a` then `b` leave (`b` by the piece the provisional move set
    /// down, capturing `a`'s piece where it landed) also reads as that piece moving on: the
    /// provisional move replaced by one from its origin to `b`'s square, with `a`'s piece
    /// lifted by the opponent.
    fn moved_on_with_piece_in_hand(&self, a: Move, b: Move) -> bool {
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

    /// With two stories open (see [`Ambiguous`]), play went on by several moves (a quick
    /// reply again): the readings show the moves beyond exactly one of the stories, and only
    /// one sequence of them (see [`readings::Readings::witnessed_sequences`]): that story,
    /// then those moves.
    fn recover_ambiguous(
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
    /// such story fits every reading, or else when the board is one move beyond exactly one
    /// of the two. Anything else keeps waiting.
    fn resolve_ambiguous(
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
        let chosen = match (
            fitting.as_slice(),
            witnessed.as_slice(),
            &by_short,
            &by_long,
        ) {
            ([one], ..) | (_, [one], ..) => (*one).clone(),
            (_, _, Some(s), None) => s.clone(),
            (_, _, None, Some(l)) => l.clone(),
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

    fn play(&mut self, m: Move, ev: &mut Vec<TrackerEvent>) {
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

    fn retract(&mut self, correction: bool, ev: &mut Vec<TrackerEvent>) {
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

    fn set_sync(&mut self, sync: bool, ev: &mut Vec<TrackerEvent>) {
        if sync && self.illegal.take().is_some() {
            ev.push(TrackerEvent::IllegalPlacementCleared);
        }
        if sync != self.in_sync {
            self.in_sync = sync;
            ev.push(TrackerEvent::InSync(sync));
        }
    }

    /// Report the standing placement as illegal if it has settled and is not a move in
    /// progress (or the clock was pressed on it).
    fn check_illegal(&mut self, now: Millis, ev: &mut Vec<TrackerEvent>) {
        if self.in_sync || !self.have_board || self.held.is_some() || self.ambiguous.is_some() {
            return;
        }
        if now.saturating_sub(self.last_change) < ILLEGAL_SETTLE_MS || self.settled_checked {
            return;
        }
        // The press may have overtaken the update that completes the move: give the board
        // one scan to catch up before judging what it shows.
        if self
            .last_press
            .is_some_and(|p| now >= p && now - p < SCAN_LAG_MS)
        {
            return;
        }
        // The verdict on a settled placement does not change until the board or the clock does.
        self.settled_checked = true;
        if self.explain(now, true, ev) {
            self.set_sync(true, ev);
            return;
        }
        if self.held.is_some() {
            return;
        }
        // Before anyone is accused: the readings since the last final position, searched as
        // deep as a gap is.
        if self.recover(SETTLED_EXTRA_PLIES, true, ev) {
            self.set_sync(true, ev);
            return;
        }
        // Legal play the readings show explains the board, in several ways: no one is
        // accused; the stories are open (the session asks the arbiter about a still board).
        if self.in_progress(now) || !self.undecided.is_empty() {
            return;
        }
        let (turn, description) = self.describe_illegal(now);
        if self.illegal.as_ref() != Some(&(turn, description.clone())) {
            self.illegal = Some((turn, description.clone()));
            ev.push(TrackerEvent::IllegalPlacement { turn, description });
        }
    }

    /// Pieces in hand: every occupied square agrees with the position, or with a legal move
    /// partly made (from the position, or from the one before a provisional move), or the
    /// board is a reply caught half-way ([`Tracker::reply_in_progress`]).
    fn in_progress(&self, now: Millis) -> bool {
        let n = self.positions.len();
        let mut bases = vec![self.position()];
        if self.provisional_now(now) && n >= 2 {
            bases.push(&self.positions[n - 2]);
        }
        bases.into_iter().any(|base| self.partly_made(base)) || self.reply_in_progress()
    }

    /// A move the readings show being made, then the reply partly made: its victim in hand,
    /// its piece resting on the way (Bg2-d5, then ...Rd8xd5 with the bishop lifted and the
    /// rook set down on d7) is no placement to judge, nor a story of two plies to take.
    fn reply_in_progress(&self) -> bool {
        let pos = self.position();
        self.readings.complete()
            && pos
                .legal_moves()
                .into_iter()
                .filter(|&m| self.readings.witness(pos, &[m]))
                .any(|m| self.partly_made(&after(pos, m)))
    }

    /// Every occupied square agrees with `base`, or with a legal move from it partly made.
    fn partly_made(&self, base: &Chess) -> bool {
        // The piece the last move captured, touching an empty square next to the capture on
        // its way off the board (seen in real captures), is handling too.
        let mut touched = Bitboard::EMPTY;
        if let Some(&last) = self.moves.last()
            && let Some(role) = last.capture()
        {
            let victim = role.of(self.position().turn());
            let near =
                shakmaty::attacks::king_attacks(last.to()) & !self.position().board().occupied();
            touched = near & self.sensed.by_piece(victim);
        }
        // Every occupied square holds what `base` or `other` has there.
        let agree = |other: &Board| {
            let off_base = diff(base.board(), &self.sensed) & self.sensed.occupied() & !touched;
            (off_base & diff(other, &self.sensed)).is_empty()
        };
        agree(base.board())
            || base.legal_moves().into_iter().any(|m| {
                let mut made = after(base, m).board().clone();
                if m.is_promotion() {
                    // The pawn may stand on the last rank a moment before it is swapped.
                    made.set_piece_at(m.to(), shakmaty::Role::Pawn.of(base.turn()));
                    if agree(&made) {
                        return true;
                    }
                    made = after(base, m).board().clone();
                }
                agree(&made)
            })
    }

    fn describe_illegal(&self, now: Millis) -> (Color, String) {
        let n = self.positions.len();
        let pos = self.position();
        if self.provisional_now(now) && n >= 2 {
            // The last mover is still handling pieces: describe against their position.
            let prev = &self.positions[n - 2];
            if diff(pos.board(), &self.sensed).into_iter().all(|sq| {
                self.sensed.color_at(sq) != Some(pos.turn())
                    && pos.board().color_at(sq) != Some(pos.turn())
            }) {
                return (prev.turn(), describe::describe(prev, &self.sensed));
            }
        }
        (pos.turn(), describe::describe(pos, &self.sensed))
    }
}
