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
//! - Two plies whose reply captures the first move's piece with a slider are not taken at a
//!   change when that piece was seen, after it landed, on a square further along the
//!   capturer's line where its move could have gone instead: the capture may still be on its
//!   way there ([`hold::capture_passing_over`]). The next change or a still board tells.
//! - A move is published as soon as the board shows it, unless the same hand may still be
//!   moving on ([`hold`]: a slider or pawn whose line goes on, a castling half, a piece set
//!   beside a victim). Such a move is *held* — not published, the board out of sync — until
//!   the next change (which is read afresh), the mover's clock press or the opponent's touch
//!   (which publish it at once), or [`DWELL_MS`] of an unchanged board ([`Tracker::on_tick`];
//!   [`Tracker::next_wakeup`] says when; a change that comes after the dwell finds the move
//!   published first, so the record never depends on how often the caller ticks).
//! - The last move stays *provisional* until it is final: the press window closed
//!   ([`SCAN_LAG_MS`] after its mover pressed the clock with the board showing it: a clock
//!   message can overtake the last field update of the move it ends; the opponent's press,
//!   read late, ends nothing of this move), the opponent touched the board,
//!   the board stood still for [`FINAL_STILL_MS`], or the opponent's move was published. A
//!   move published by the dwell (or by the opponent's touch while it was held) may still be
//!   moving on, so the opponent's touch alone does not make it final. While it is
//!   provisional, a board that shows a different move by the same player from the same
//!   position replaces it (retract + play, counted in [`Tracker::corrections`]): a piece set
//!   down for longer than the dwell and moved on ends where it is finally released.
//!   [`Tracker::pending_plies`] tells broadcast outputs what is not final yet.
//! - Explanations that only empty squares (a recapture on the same square by the same kind
//!   of piece, read as one board) look like pieces in hand: they wait until the board has
//!   stood still for [`ILLEGAL_SETTLE_MS`] ([`Tracker::on_tick`]), and even then a board that
//!   is a legal move partly made (a capture's victim and capturer both lifted, the hand
//!   resting in the air) is taken as two plies only when the readings show both being made
//!   (or came as a whole board): however long a hand rests, time is no evidence.
//! - A board returned to an earlier position of this game retracts the moves since then.
//!   The start position set up again is a new game (unless it merely takes back the game's
//!   only move); set up on a board turned round, it is always a new game.
//! - Anything else is a move in progress or an illegal placement. Pieces in hand (squares
//!   emptied, part of a legal move made, a pawn on the last rank before its promotion piece,
//!   a captured piece touching a square next to the capture) never count as illegal — a
//!   piece set down where a legal move goes is part of it only if that move's piece has left
//!   its square (on a still board no scan is on its way: the other bishop is no part); any
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

mod ambiguous;
pub mod chess960;
mod describe;
mod finality;
pub mod gesture;
pub mod hold;
mod illegal;
mod readings;
mod reconcile;
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
use crate::board_input::SquareContent;
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
/// When the board is re-derived from the readings (see `Tracker::recover`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    /// At a change, with the hand perhaps still moving: a few plies beyond the record, and
    /// no story whose last move may be a capture still on its way.
    Live,
    /// On a board that stood still, before anyone is accused: as deep as a gap.
    Settled,
}

impl Reach {
    /// How many plies beyond the record a story may go.
    fn extra_plies(self) -> usize {
        match self {
            // A quick reply answered at once.
            Reach::Live => 3,
            Reach::Settled => sequences::MAX_PLIES,
        }
    }
}

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

use ambiguous::Ambiguous;

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
    /// and the reply read together: see `ambiguous::Ambiguous`), or several the readings witness
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

    /// Whether several stories explain the board and none is picked yet (see
    /// [`Tracker::open_stories`]): which moves were made is not known, so neither is whether a
    /// press made one.
    pub fn stories_open(&self) -> bool {
        self.ambiguous.is_some() || !self.undecided.is_empty()
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

    /// The board turns its own reporting round (a Revelation II with firmware that does):
    /// what it reports is already the right way round, so with the auto setting the
    /// orientation is pinned to normal and never learnt or switched from a position again —
    /// a second turn would put Black's pieces on White's side. An orientation the operator
    /// set is left as it is.
    pub fn board_turns_itself(&mut self) {
        if self.setting != OrientationSetting::Auto {
            return;
        }
        self.setting = OrientationSetting::Normal;
        if self.orientation == Some(Orientation::Reversed) {
            self.sensed.rotate_180();
        }
        self.orientation = Some(Orientation::Normal);
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
    pub fn on_board_dump(
        &mut self,
        fields: &[SquareContent; 64],
        now: Millis,
    ) -> Vec<TrackerEvent> {
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
        content: SquareContent,
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
}
