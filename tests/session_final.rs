//! Only what was really played reaches a broadcast: the `Pgn` property carries final moves
//! only (contract section 2) while `MovePlayed` stays fast; an operator takeback is never
//! undone by the board; an illegal move that stands loses no move.

use eboard_core::board::{Orientation, Placement};
use eboard_core::session::{Command, Event, Input, SessionConfig};
use eboard_core::tracker::{DWELL_MS, FINAL_STILL_MS, SCAN_LAG_MS};
use shakmaty::{Piece, Square};

mod session_support;

use session_support::{Clocked as Rig, without_comments};

fn sq(name: &str) -> Square {
    name.parse().unwrap()
}

impl Rig {
    /// Board "b1" with the start position and the clock reporting.
    fn started() -> Rig {
        let mut rig = Rig::new(
            SessionConfig {
                name: "b1".into(),
                ..SessionConfig::default()
            },
            Orientation::Normal,
        );
        rig.clock();
        rig.dump(&Placement::start());
        rig
    }

    /// The press 300 ms on.
    fn press_clock(&mut self) {
        self.now += 300;
        self.press();
    }

    fn square(&mut self, square: &str, piece: Option<char>) -> Vec<Event> {
        self.now += 60;
        let content = piece.map(|c| Piece::from_char(c).unwrap());
        self.field(sq(square), content)
    }

    fn lift(&mut self, square: &str) -> Vec<Event> {
        self.square(square, None)
    }

    fn place(&mut self, square: &str, piece: char) -> Vec<Event> {
        self.square(square, Some(piece))
    }

    /// A move by lift + place, the press, and the press window passing.
    fn play(&mut self, from: &str, to: &str, piece: char) {
        self.lift(from);
        self.place(to, piece);
        self.press_clock();
        self.wait(SCAN_LAG_MS + 1);
    }

    fn pgn(&self) -> String {
        self.session.view().pgn.clone()
    }
}

/// The movetext of every PGN game in `pgn`, comments and clock stamps removed.
fn movetext(pgn: &str) -> Vec<String> {
    let mut out = Vec::new();
    for game in pgn.split("\n\n[").map(|g| g.trim()) {
        let body: String = game
            .lines()
            .filter(|l| !l.starts_with('[') && !l.ends_with("\"]"))
            .collect::<Vec<_>>()
            .join(" ");
        out.push(without_comments(&body));
    }
    out
}

#[test]
fn move_played_is_fast_and_the_pgn_waits_for_the_press() {
    let mut rig = Rig::started();
    rig.lift("g1");
    let ev = rig.place("f3", 'N');
    assert!(
        ev.iter()
            .any(|e| matches!(e, Event::MovePlayed { san, .. } if san == "Nf3"))
    );
    assert_eq!(rig.session.view().moves, ["Nf3"]);
    assert!(!rig.pgn().contains("Nf3"), "not final yet: {}", rig.pgn());
    assert_eq!(rig.session.pending_plies(), 1);
    rig.press_clock();
    assert!(
        !rig.pgn().contains("Nf3"),
        "the scan may still be behind the press"
    );
    let wake = rig.session.next_wakeup().expect("the press window ends");
    rig.now = wake;
    rig.feed(Input::Tick);
    assert!(rig.pgn().contains("1. Nf3"), "{}", rig.pgn());
}

#[test]
fn the_pgn_takes_a_move_at_the_opponents_touch_or_after_two_still_seconds() {
    let mut rig = Rig::started();
    rig.lift("g1");
    rig.place("f3", 'N');
    rig.lift("d7");
    assert!(
        rig.pgn().contains("1. Nf3"),
        "opponent's touch: {}",
        rig.pgn()
    );
    rig.place("d5", 'p');
    assert!(!rig.pgn().contains("d5"));
    rig.wait(FINAL_STILL_MS - 1);
    assert!(!rig.pgn().contains("d5"));
    assert_eq!(rig.session.next_wakeup(), Some(rig.now + 1));
    rig.wait(1);
    assert_eq!(movetext(&rig.pgn()), ["1. Nf3 d5 *"], "{}", rig.pgn());
}

#[test]
fn a_held_move_reaches_move_played_at_the_dwell_and_a_correction_never_reaches_the_pgn() {
    let mut rig = Rig::started();
    rig.lift("a2");
    rig.place("a3", 'P');
    assert!(rig.played().is_empty(), "a2-a3 may go on to a4: held");
    assert_eq!(rig.session.next_wakeup(), Some(rig.now + DWELL_MS));
    rig.wait(DWELL_MS);
    assert_eq!(rig.played(), ["a3"]);
    assert!(!rig.pgn().contains("a3"));
    // The pawn goes on after all: corrected before it was ever final.
    rig.lift("a3");
    rig.place("a4", 'P');
    rig.wait(DWELL_MS);
    assert_eq!(rig.played(), ["a4"]);
    assert!(!rig.pgn().contains("a3") && !rig.pgn().contains("a4"));
    rig.press_clock();
    rig.wait(SCAN_LAG_MS + 1);
    assert!(rig.pgn().contains("1. a4"), "{}", rig.pgn());
    assert!(!rig.pgn().contains("a3"));
}

#[test]
fn a_finished_game_shows_its_last_move() {
    // Fool's mate: the mating move is final with the game's end, pressed or not.
    let mut rig = Rig::started();
    rig.play("f2", "f3", 'P');
    rig.play("e7", "e5", 'p');
    rig.play("g2", "g4", 'P');
    rig.lift("d8");
    rig.place("h4", 'q');
    rig.wait(DWELL_MS);
    assert_eq!(rig.session.view().state, "finished");
    assert!(rig.pgn().contains("Qh4#"), "{}", rig.pgn());
}

#[test]
fn an_operator_takeback_is_never_undone_by_the_board() {
    let mut rig = Rig::started();
    rig.play("e2", "e4", 'P');
    rig.play("e7", "e5", 'p');
    rig.play("g1", "f3", 'N');
    rig.feed(Input::Command(Command::TakeBack));
    assert_eq!(rig.session.view().moves, ["e4", "e5"]);
    assert!(!rig.session.view().in_sync, "the board still shows Nf3");
    // Black touches a piece and puts it back; White adjusts the knight on f3: Nf3 is not
    // re-added by itself.
    rig.lift("b8");
    rig.place("b8", 'n');
    rig.lift("f3");
    rig.place("f3", 'N');
    rig.wait(3_000);
    assert_eq!(rig.session.view().moves, ["e4", "e5"]);
    assert!(!rig.pgn().contains("Nf3"));
    // The knight goes back: the board shows the position before the move, in sync.
    rig.lift("f3");
    rig.place("g1", 'N');
    assert!(rig.session.view().in_sync);
    assert_eq!(rig.session.view().moves, ["e4", "e5"]);
    // And the same move played again now is a move.
    rig.lift("g1");
    rig.place("f3", 'N');
    assert_eq!(rig.session.view().moves, ["e4", "e5", "Nf3"]);
}

#[test]
fn an_illegal_move_that_stands_loses_no_move() {
    // 1. e4 e5 2. Nf3 Nc6, then White puts the king e1-e3 and presses; Black does not claim
    // and replies 3...d6, then 4. Bc4 Bg4.
    let mut rig = Rig::started();
    rig.play("e2", "e4", 'P');
    rig.play("e7", "e5", 'p');
    rig.play("g1", "f3", 'N');
    rig.play("b8", "c6", 'n');
    rig.lift("e1");
    rig.place("e3", 'K');
    rig.wait(1_000);
    rig.press_clock();
    assert!(
        rig.events
            .iter()
            .any(|e| matches!(e, Event::IllegalMoveCompleted { player, .. } if player == "white"))
    );
    rig.play("d7", "d6", 'p');
    rig.play("f1", "c4", 'B');
    rig.play("c8", "g4", 'b');
    rig.wait(FINAL_STILL_MS);
    let pgn = rig.pgn();
    let games = movetext(&pgn);
    assert_eq!(games.len(), 2, "{pgn}");
    assert_eq!(games[0], "1. e4 e5 2. Nf3 Nc6 *", "{pgn}");
    assert_eq!(games[1], "3... d6 4. Bc4 Bg4 *", "{pgn}");
    // The continuation starts from the board the illegal move left, Black to move.
    assert!(
        pgn.contains("[FEN \"r1bqkbnr/pppp1ppp/2n5/4p3/4P3/4KN2/PPPP1PPP/RNBQ1B1R b kq - 0 3\"]"),
        "{pgn}"
    );
    assert_eq!(rig.played(), ["e4", "e5", "Nf3", "Nc6", "d6", "Bc4", "Bg4"]);
    // The comments read as sentences: each ends with a full stop before the next begins.
    let flat = pgn.replace('\n', " ");
    assert!(
        flat.contains("Illegal move stood: "),
        "the note names what happened: {pgn}"
    );
    for comment in flat.split('{').skip(1) {
        let text = comment.split('}').next().unwrap_or("");
        let text = text
            .trim_start_matches(|c| c != ']')
            .trim_start_matches(']')
            .trim();
        if text.is_empty() {
            continue;
        }
        assert!(
            text.ends_with('.'),
            "comment `{text}` does not end a sentence: {pgn}"
        );
        assert!(
            text.chars()
                .next()
                .is_some_and(|c| c.is_uppercase() || c.is_ascii_digit()),
            "comment `{text}` does not begin one: {pgn}"
        );
        for (i, _) in text.match_indices(' ') {
            // A capital letter after a space follows a sentence's end (or is a name / move).
            let before = &text[..i];
            let after = &text[i + 1..];
            if after.starts_with("Illegal") || after.starts_with("The game") {
                assert!(before.ends_with('.'), "run-on comment `{text}`");
            }
        }
    }
}
