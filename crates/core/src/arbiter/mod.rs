//! The Laws of Chess on top of moves and the clock: clock model, illegal-move lifecycle,
//! claims, automatic ends and results, for both editions the contract knows (`fide-2023`,
//! `fide-2005`) and the three rule sets (standard, rapid, blitz).
//!
//! [`Arbiter`] is pure: the session feeds it what the move tracker reports (a legal move, a
//! retraction, an illegal placement standing before the press, its correction), every clock
//! reading and the operator's commands, each with the current time in milliseconds, and
//! publishes the [`Ruling`]s it returns. The accessors give the contract properties
//! (`Claims`, `Result`, `Termination`, `IllegalMoves`, `PendingIllegal`, clock times...).
//!
//! # Decisions the Laws leave to the implementation
//!
//! * **Illegal moves are claims.** A completed illegal move (the clock pressed with an
//!   illegal placement standing, 7.5.3 a press with no move, or 7.5.2 a pawn left unchanged
//!   on the last rank) is counted and announced at once (`IllegalMoveCompleted`), and the
//!   opponent gets the `illegal-move` claim until he makes his own move. Its consequences —
//!   extra time, loss, or draw when the claimant cannot mate — are applied when the claim is
//!   accepted (`AcceptClaim`), by the editions table of the contract. A board cannot see
//!   hands and its sensors can misread, so the human arbiter confirms before a game is lost.
//! * **The illegal position that stands.** If the opponent moves on without claiming, the
//!   illegal move stands (A.5.2). The tracker then re-reads the board; the session calls
//!   [`Arbiter::illegal_move_stands`] with the position on the board, and the record opens a
//!   new segment from that position (see [`crate::game`]): the PGN holds one readable game
//!   per segment instead of a move no reader would accept. Repetition history restarts there.
//! * **Restoring the position** after an illegal move is the same occurrence of it, not a new
//!   one: the repetition history is not touched.
//! * **Flag falls** are read from the clock (flag bit, or the running display reaching zero,
//!   or a silent clock whose time must be over, a US delay counted). In `fide-2023` and in
//!   2005 standard play the game ends at once; in 2005 rapid/blitz the fall only opens the
//!   `win-on-time` claim. Both flags in the same reading (order unknown) is
//!   `both-flags-fallen`.
//! * **The control of a period but the last is judged here**, not left to the clock: a
//!   FIDE-mode clock adds the next period when a player's time runs out (steady flag), whether
//!   or not he made his moves. The arbiter compares his completed moves with the moves due
//!   (see the `control` module); short of them is a flag fall in that period, with all it brings.
//! * **Resignations** are recorded with `Adjudicate(result, reason)`; a reason containing
//!   "resign" under `fide-2023` is scored a draw when the winner cannot mate (5.1.2).
//! * **Late tracker reports.** The board reports a move when the pieces settle, which can be
//!   a little after the clock press; a press with no move to complete waits two seconds for
//!   one before it counts as a press without a move (7.5.3, `fide-2023` only).
//! * A **paused clock** never ends the game.
//!
//! # Wiring (for the session)
//!
//! | input | call |
//! |---|---|
//! | tracker `MovePlayed{mv, ..}` | [`Arbiter::on_move`] (SAN/UCI are recomputed here) |
//! | tracker `MoveRetracted` | [`Arbiter::on_retract`] |
//! | tracker `IllegalPlacement{turn, description}` | [`Arbiter::on_illegal_placement`] |
//! | tracker `IllegalPlacementCleared` | [`Arbiter::on_illegal_cleared`] |
//! | `BoardInput::Clock` | [`Arbiter::on_clock`] |
//! | `Input::Tick` | [`Arbiter::tick`] |
//! | `AcceptClaim`, `Adjudicate`, `TakeBack`, `SetRules`, `SetTags` | [`Arbiter::accept_claim`], [`Arbiter::adjudicate`], [`Arbiter::take_back`], [`Arbiter::set_rules`], [`Arbiter::set_tags`] |
//! | `NewGame`, `SetPosition` | [`Arbiter::new_game`] |
//!
//! Each returns [`Ruling`]s in the one event vocabulary ([`crate::event::Event`]): the
//! contract signals `IllegalMoveCompleted`, `FlagFell` and `GameEnded` and the record facts
//! (accepted claims, penalties) to publish as they are, and [`Ruling::PromotionStands`],
//! which tells the tracker that the position now includes that move (7.5.2).

pub mod claims;
pub mod clock;
mod commands;
mod config;
mod control;
mod counter;
mod ends;
mod fen;
mod gesture;
pub mod laws;
mod lifecycle;
mod rejected;
pub mod timecontrol;
pub mod unwinnable;

pub use config::ArbiterConfig;
pub use ends::{automatic_end_of, unexchanged_promotion};

use shakmaty::san::SanPlus;
use shakmaty::{Chess, Color, Move, Position};

use crate::event::{Event, RecordFact};
use crate::game::{Game, MoveRecord};
use crate::vocab::{ClaimKind, CommandError, GameResult, Millis, Player, Termination};
use claims::{History, PositionClaims, position_claims, uci_in};
use clock::ClockModel;
pub use fen::{FEN_MAX, FEN_NUMBER_MAX, fen_of, parse_fen, parse_fen_in};

/// How long a clock press may wait for the tracker's late report of the move it completes.
pub const PRESS_GRACE_MS: Millis = 2_000;
/// A press read this soon after the opponent's reply was reported is the first mover's
/// (the reply was made the moment he pressed, and the board's scan sent it first): it
/// teaches the clock's sides as his.
pub const OVERTAKEN_MS: Millis = 250;
/// How long after a press the tracker reports its move at most when the press was not seen
/// (it then waits for the board to dwell, and a press may run a scan ahead of the board): a
/// move reported this soon after a fresh clock reading may have its press in that reading.
pub const UNSEEN_PRESS_REPORT_MS: Millis = crate::tracker::DWELL_MS + crate::tracker::SCAN_LAG_MS;

/// What the arbiter rules, in the one event vocabulary: events the session publishes as
/// they are, and the one ruling it must act on first.
#[derive(Debug, Clone, PartialEq)]
pub enum Ruling {
    /// A contract signal (`IllegalMoveCompleted`, `FlagFell`, `GameEnded`) or a record fact
    /// (an accepted claim, a penalty's added time), published as it is.
    Publish(Event),
    /// 7.5.2: a pawn left on the last rank stands as a queen; the tracker must take this
    /// move as played (the session publishes it as `MovePlayed`).
    PromotionStands { san: String, uci: String },
}

impl Ruling {
    /// `ms` of time added to `beneficiary`'s clock for `reason` (the clock reading follows).
    fn penalty(beneficiary: Player, ms: u64, reason: &str) -> Ruling {
        Ruling::Publish(Event::Record(RecordFact::Penalty {
            player: beneficiary,
            description: format!("{} s: {reason}", ms / 1000),
        }))
    }
}

/// Contract name of a colour (the vocabulary's `Player` word).
pub fn color_name(c: Color) -> &'static str {
    Player::from(c).as_str()
}

fn win_for(c: Color) -> GameResult {
    GameResult::win_for(c.into())
}

fn ordinal(n: u32) -> String {
    match n {
        1 => "1st".into(),
        2 => "2nd".into(),
        3 => "3rd".into(),
        n => format!("{n}th"),
    }
}

fn idx(c: Color) -> usize {
    match c {
        Color::White => 0,
        Color::Black => 1,
    }
}

/// An illegal placement standing on the board before the press.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pending {
    player: Color,
    description: String,
    /// 7.5.2: the promotion-to-queen move whose placement this is, but for the pawn.
    queen_move: Option<Move>,
}

/// A completed illegal move whose claim window is open.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Window {
    offender: Color,
    count: u32,
    description: String,
    /// Both clocks at completion (2005 rapid: the five-minute test).
    times: Option<(u64, u64)>,
}

/// The arbiter of one board (see the module documentation).
#[derive(Debug, Clone)]
pub struct Arbiter {
    cfg: ArbiterConfig,
    /// Positions of the current segment, start first; the last one is the current position.
    positions: Vec<Chess>,
    history: History,
    clock: ClockModel,
    game: Game,
    illegal: [u32; 2],
    pending: Option<Pending>,
    window: Option<Window>,
    /// The player who made a move and has not pressed yet.
    awaiting_press: Option<Color>,
    /// A player whose move was answered before his press was read (the reply made the moment
    /// he pressed, read in the same scan of the board), and when the reply was: his press
    /// still completes his move.
    overtaken: Option<(Color, Millis)>,
    /// When the last move was reported, and when a press last completed nothing: such a
    /// press around a move's report (before it, within [`PRESS_GRACE_MS`], or after it) may
    /// have been that move's, so its mover is not taken as overtaken.
    reported_at: Millis,
    /// That press, and whose it was when the clock's sides were known (else it may have been
    /// anyone's).
    stray_press: Option<(Millis, Option<Color>)>,
    /// A press that completed nothing yet (waiting for a late move report).
    unexplained_press: Option<(Color, Millis)>,
    /// The board shows more than one story of the moves made (the tracker's open stories):
    /// a press that completed nothing waits for the story, however long past its grace.
    moves_undecided: bool,
    /// When a fresh clock reading (the lever unknown before it) came with no move awaiting
    /// its press: the press of a move reported just after it may be in it, unseen.
    fresh_reading_at: Option<Millis>,
    /// A mover's press may be hidden in a fresh reading while the clock's sides are unknown:
    /// until the next press is read, no press teaches the sides.
    press_maybe_hidden: bool,
    completed_moves: [u32; 2],
    /// Plies made in this game (to learn the clock side from the first press).
    plies: u32,
    position_claims: PositionClaims,
    /// 9.5.3: after an incorrect claim with an intended move, the claimant must make that move.
    intended: Option<rejected::Intended>,
    /// A period end waiting for its verdict (see [`control`]).
    control_check: Option<control::ControlCheck>,
    /// Players found short of a period's moves: their flag fell in that period.
    overstepped: [bool; 2],
    /// The clock's move counter, when it ends the periods ([`counter`]).
    counter: counter::CounterWatch,
}

impl Arbiter {
    /// A new game from `start` with the given tags.
    pub fn new(cfg: ArbiterConfig, start: Chess, tags: Vec<(String, String)>) -> Self {
        let clock = ClockModel::new(cfg.white_display);
        let mut a = Arbiter {
            cfg,
            positions: Vec::new(),
            history: History::default(),
            clock,
            game: Game::new(crate::game::START_FEN, Vec::new()),
            illegal: [0, 0],
            pending: None,
            window: None,
            awaiting_press: None,
            overtaken: None,
            reported_at: 0,
            stray_press: None,
            unexplained_press: None,
            moves_undecided: false,
            fresh_reading_at: None,
            press_maybe_hidden: false,
            completed_moves: [0, 0],
            plies: 0,
            position_claims: PositionClaims::default(),
            intended: None,
            control_check: None,
            overstepped: [false, false],
            counter: counter::CounterWatch::default(),
        };
        // A finished set-up position shows in `result()`; `new_game` returns the event.
        let _ = a.new_game(start, tags);
        a
    }

    /// Starts a new game on the same board (the clock model and its learned side persist
    /// only when configured; `auto` learns again).
    /// Returns the `GameEnded` event when the set-up position is already over (mate,
    /// stalemate, dead position).
    pub fn new_game(&mut self, start: Chess, tags: Vec<(String, String)>) -> Vec<Ruling> {
        let fen = fen_of(&start);
        self.game = Game::new(&fen, tags);
        self.history = History::new(&start);
        self.positions = vec![start];
        self.clock.new_game(&self.cfg);
        self.illegal = [0, 0];
        self.pending = None;
        self.window = None;
        self.awaiting_press = None;
        self.overtaken = None;
        self.stray_press = None;
        self.unexplained_press = None;
        self.fresh_reading_at = None;
        self.press_maybe_hidden = false;
        self.completed_moves = [0, 0];
        self.plies = 0;
        self.intended = None;
        self.control_check = None;
        self.overstepped = [false, false];
        self.counter = counter::CounterWatch::default();
        self.refresh_claims();
        // A set-up position can already be over (mate, stalemate, dead).
        let mut ev = Vec::new();
        self.automatic_end_into(&mut ev);
        ev
    }

    /// Rebuilds an arbiter from a saved game record (after a restart). Clock state comes
    /// back with the next clock reading; claim windows and pending placements are not
    /// restored.
    pub fn restore(cfg: ArbiterConfig, game: Game) -> Result<Self, String> {
        let seg = game
            .segments
            .last()
            .ok_or_else(|| "the saved game has no segment".to_string())?;
        let chess960 = game
            .tags
            .iter()
            .any(|(k, v)| k == "Variant" && v.eq_ignore_ascii_case("chess960"));
        let start = parse_fen_in(&seg.start_fen, chess960)?;
        let mut a = Arbiter::new(cfg, start, game.tags.clone());
        let mut pos = a.position().clone();
        for (i, m) in seg.moves.iter().enumerate() {
            let u: shakmaty::uci::UciMove = m
                .uci
                .parse()
                .map_err(|e| format!("saved move {} `{}` unreadable: {e}", i + 1, m.uci))?;
            let mv = u
                .to_move(&pos)
                .map_err(|e| format!("saved move {} `{}` illegal: {e}", i + 1, m.uci))?;
            pos.play_unchecked(mv);
            a.history.push(&pos);
            a.positions.push(pos.clone());
            a.completed_moves[idx(pos.turn().other())] += 1;
            a.plies += 1;
        }
        a.illegal = [game.illegal_moves.0, game.illegal_moves.1];
        a.counter = counter::CounterWatch::restart(0);
        a.game = game;
        a.refresh_claims();
        Ok(a)
    }

    // ----- accessors -------------------------------------------------------------------

    pub fn config(&self) -> &ArbiterConfig {
        &self.cfg
    }

    pub fn position(&self) -> &Chess {
        self.positions
            .last()
            .expect("positions always holds the start position")
    }

    pub fn fen(&self) -> String {
        fen_of(self.position())
    }

    pub fn game(&self) -> &Game {
        &self.game
    }

    pub fn result(&self) -> GameResult {
        self.game.result
    }

    /// Why the game ended; `None` while it is on.
    pub fn termination(&self) -> Option<Termination> {
        self.game.termination
    }

    pub fn is_finished(&self) -> bool {
        self.game.result.is_finished()
    }

    pub fn illegal_counts(&self) -> (u32, u32) {
        (self.illegal[0], self.illegal[1])
    }

    /// `PendingIllegal`: the description of the placement standing before the press.
    pub fn pending_illegal(&self) -> &str {
        self.pending.as_ref().map_or("", |p| p.description.as_str())
    }

    pub fn white_ms(&self) -> u64 {
        self.clock.time_ms(Color::White)
    }

    pub fn black_ms(&self) -> u64 {
        self.clock.time_ms(Color::Black)
    }

    /// `ClockRunning`: `white`, `black` or `none`.
    pub fn clock_running(&self) -> &'static str {
        self.clock.running().map_or("none", color_name)
    }

    pub fn clock_connected(&self) -> bool {
        self.clock.connected()
    }

    pub fn clock(&self) -> &ClockModel {
        &self.clock
    }

    /// The claims available right now: (player, kind, detail).
    pub fn claims(&self) -> Vec<(Player, ClaimKind, String)> {
        let mut out = Vec::new();
        if self.is_finished() {
            return out;
        }
        let stm = Player::from(self.position().turn());
        let pc = &self.position_claims;
        if pc.threefold_now {
            out.push((stm, ClaimKind::ThreefoldRepetition, String::new()));
        }
        for &m in &pc.threefold_intended {
            out.push((
                stm,
                ClaimKind::ThreefoldRepetition,
                uci_in(self.position(), m),
            ));
        }
        if pc.fifty_now {
            out.push((stm, ClaimKind::FiftyMoves, String::new()));
        }
        for &m in &pc.fifty_intended {
            out.push((stm, ClaimKind::FiftyMoves, uci_in(self.position(), m)));
        }
        if let Some(w) = &self.window {
            out.push((
                w.offender.other().into(),
                ClaimKind::IllegalMove,
                w.description.clone(),
            ));
        }
        if self.cfg.laws().flag_fall_is_claimed() {
            for c in [Color::White, Color::Black] {
                if self.flag_down(c.other()) && !self.flag_down(c) {
                    out.push((c.into(), ClaimKind::WinOnTime, String::new()));
                }
            }
        }
        if self.quickplay_available() {
            out.push((stm, ClaimKind::QuickplayFinish, String::new()));
        }
        out
    }

    /// An increment or a delay: the configured control says; without one, an increase seen
    /// at a press.
    fn has_increment(&self) -> bool {
        match &self.cfg.time_control {
            Some(t) => t.has_bonus(),
            None => self.clock.observed_increment_ms().is_some_and(|i| i > 0),
        }
    }

    fn quickplay_available(&self) -> bool {
        let allowed = self
            .cfg
            .laws()
            .quickplay_finish_allowed(self.cfg.guidelines_iii);
        if !allowed || self.has_increment() {
            return false;
        }
        let stm = self.position().turn();
        matches!(self.clock.known_time_ms(stm), Some(t) if t > 0 && t < 120_000)
            && !self.flag_down(stm)
    }

    // ----- tracker inputs --------------------------------------------------------------

    /// A legal move was made on the board (tracker `MovePlayed`).
    pub fn on_move(&mut self, mv: Move, now: Millis) -> Vec<Ruling> {
        let mut ev = Vec::new();
        if self.is_finished() || !self.position().is_legal(mv) {
            return ev;
        }
        let mover = self.position().turn();
        if self.pending.as_ref().is_some_and(|p| p.player == mover) {
            self.pending = None;
        }
        // The claimant made his own move: his illegal-move claim window closes (A.5.2, C.3).
        if self.window.as_ref().is_some_and(|w| w.offender != mover) {
            self.window = None;
        }
        self.note_intended(mover, mv);
        let waiting = self
            .awaiting_press
            .filter(|&w| w != mover)
            // A press read since the waiting mover's report (or just before it, a late
            // report) may have been his, uncredited while the clock's sides were unknown; one
            // known to be his opponent's was not.
            .filter(|&w| {
                self.stray_press.is_none_or(|(at, presser)| {
                    at.saturating_add(PRESS_GRACE_MS) < self.reported_at
                        || presser.is_some_and(|c| c != w)
                })
            });
        self.record_move(mv);
        self.overtaken = waiting.map(|w| (w, now));
        self.reported_at = now;
        // A press seen just before this report completes it (late tracker report).
        match self.unexplained_press {
            Some((p, at))
                if p == mover
                    && (now.saturating_sub(at) <= PRESS_GRACE_MS || self.moves_undecided) =>
            {
                self.unexplained_press = None;
                // That press is explained now: it was this move's, so it is no stray press
                // that could be the next waiting mover's.
                self.stray_press = None;
                self.complete_move(mover);
                self.check_intended(mover, &mut ev);
            }
            _ => {}
        }
        // A fresh clock reading just before this report may hold its press.
        if let Some(at) = self.fresh_reading_at.take()
            && now.saturating_sub(at) <= UNSEEN_PRESS_REPORT_MS
            && self.awaiting_press == Some(mover)
        {
            self.press_maybe_unseen(mover, &mut ev);
        }
        self.settle_control_check(now, &mut ev);
        self.automatic_end_into(&mut ev);
        ev
    }

    fn record_move(&mut self, mv: Move) {
        let mut pos = self.position().clone();
        let mover = pos.turn();
        let uci = uci_in(&pos, mv);
        let san = SanPlus::from_move_and_play_unchecked(&mut pos, mv).to_string();
        let (w, b) = (
            self.clock.known_time_ms(Color::White),
            self.clock.known_time_ms(Color::Black),
        );
        self.game.push_move(MoveRecord {
            san,
            uci,
            white_ms: w,
            black_ms: b,
            clk_ms: None,
            comments: Vec::new(),
        });
        self.history.push(&pos);
        self.positions.push(pos);
        self.plies += 1;
        self.overtaken = None;
        self.awaiting_press = Some(mover);
        self.refresh_claims();
    }

    /// The last move was taken back on the board before the reply (tracker `MoveRetracted`).
    pub fn on_retract(&mut self, _now: Millis) -> Vec<Ruling> {
        let _ = self.undo_last();
        Vec::new()
    }

    /// `TakeBack`: removes the last move of the record.
    pub fn take_back(&mut self) -> Result<Vec<Ruling>, CommandError> {
        if self.undo_last() {
            Ok(Vec::new())
        } else {
            Err(CommandError::NothingToTakeBack(
                "there is no move to take back in this game".into(),
            ))
        }
    }

    fn undo_last(&mut self) -> bool {
        if self.positions.len() < 2 || self.game.pop_move().is_none() {
            return false;
        }
        let undone = self.positions.pop();
        self.history.pop();
        self.plies = self.plies.saturating_sub(1);
        if let Some(p) = undone {
            // The mover of the undone move is the side to move now.
            let mover = p.turn().other();
            if self.awaiting_press != Some(mover) {
                self.completed_moves[idx(mover)] =
                    self.completed_moves[idx(mover)].saturating_sub(1);
            }
        }
        self.awaiting_press = None;
        self.overtaken = None;
        self.pending = None;
        self.unexplained_press = None;
        self.intended_retracted();
        // A game ended by the position itself is reopened; a flag, a claim or a decision
        // does not depend on the last move and stands.
        if self.game.termination.is_some_and(Termination::by_position) {
            self.game.set_result(GameResult::Ongoing, None);
        }
        self.refresh_claims();
        true
    }

    /// An illegal placement settled on the board while `player` is to move, before the
    /// press (tracker `IllegalPlacement`). `queen_move` is the promotion-to-queen move when
    /// the placement is exactly that move's but with the pawn left on the last rank (7.5.2).
    pub fn on_illegal_placement(
        &mut self,
        player: Color,
        description: &str,
        queen_move: Option<Move>,
        now: Millis,
    ) -> Vec<Ruling> {
        let mut ev = Vec::new();
        if self.is_finished() {
            return ev;
        }
        self.pending = Some(Pending {
            player,
            description: description.to_string(),
            queen_move: queen_move.filter(|m| self.position().is_legal(*m)),
        });
        // The press may have been seen before the placement was reported.
        if let Some((p, at)) = self.unexplained_press
            && p == player
            && now.saturating_sub(at) <= PRESS_GRACE_MS
        {
            self.unexplained_press = None;
            self.complete_illegal_pending(player, &mut ev);
        }
        ev
    }

    /// The illegal placement was corrected before the press (tracker `IllegalPlacementCleared`):
    /// nothing is penalised (7.5.1, the move was not completed).
    pub fn on_illegal_cleared(&mut self, _now: Millis) -> Vec<Ruling> {
        self.pending = None;
        Vec::new()
    }

    /// An illegal move stood (its claim window closed) and the game goes on from the
    /// position now on the board; see the module documentation.
    pub fn illegal_move_stands(&mut self, board: Chess, description: &str) -> Vec<Ruling> {
        self.continue_segment(board, &format!("Illegal move stood: {description}"))
    }

    /// Moves made during a gap cannot be known: the game goes on from the board in a new
    /// segment with `note`, and nobody is accused of anything.
    pub fn continue_after_gap(&mut self, board: Chess, note: &str) -> Vec<Ruling> {
        self.continue_segment(board, note)
    }

    /// A comment at the current point of the record (a gap's story).
    pub fn note(&mut self, text: impl Into<String>) {
        self.game.comment(text);
    }

    /// A move recovered after a gap was completed by a press the board logged, with the
    /// mover's time then.
    pub fn recovered_press(&mut self, mover: Color, clk_ms: u64) {
        if self.awaiting_press == Some(mover) {
            self.awaiting_press = None;
            self.completed_moves[idx(mover)] += 1;
        }
        self.game.stamp_press(clk_ms);
    }

    /// A gap is over: a press seen before it is moot, and the clock's next reading is a fresh
    /// start (its lever may have moved any number of times meanwhile). The press of the last
    /// move the gap published is still awaited: that fresh reading decides it as at a
    /// connection ([`Self::press_maybe_unseen`]). Dropped here, a mover who had not pressed
    /// yet when the gap closed (his opponent's reply already on the board) pressed with his
    /// opponent to move in the record: a press without a move (7.5.3) for a legal game.
    pub fn after_gap(&mut self) {
        self.clock.forget_lever();
        self.unexplained_press = None;
        self.fresh_reading_at = None;
        self.overtaken = None;
    }

    fn continue_segment(&mut self, board: Chess, note: &str) -> Vec<Ruling> {
        let mut ev = Vec::new();
        if self.is_finished() {
            return ev;
        }
        let fen = fen_of(&board);
        self.game.continue_from(&fen, note);
        self.history = History::new(&board);
        self.positions = vec![board];
        self.window = None;
        self.pending = None;
        self.awaiting_press = None;
        self.overtaken = None;
        self.refresh_claims();
        self.automatic_end_into(&mut ev);
        ev
    }

    // ----- automatic ends ---------------------------------------------------------------

    /// The automatic end the current position calls for (see [`automatic_end_of`]).
    pub fn automatic_end(&self) -> Option<(GameResult, Termination)> {
        automatic_end_of(self.position(), &self.history, self.cfg.edition)
    }

    fn automatic_end_into(&mut self, ev: &mut Vec<Ruling>) {
        if self.is_finished() {
            return;
        }
        if let Some((r, t)) = self.automatic_end() {
            self.end(r, t, ev);
        }
    }

    fn refresh_claims(&mut self) {
        self.position_claims = position_claims(self.position(), &self.history);
    }

    /// The repetition and fifty-move claims of the current position, by the Laws alone.
    pub fn position_claims(&self) -> &PositionClaims {
        &self.position_claims
    }
}
