//! A press that completed nothing while several stories of the moves made explain the board
//! (the tracker's open stories) is judged only once one story is: a move that story reports,
//! however late, completes it; a story without the presser's move leaves it a press without
//! a move (7.5.3). At bullet pace a reply and the opponent's next step can leave two move
//! orders on the board just as the replier presses (corpus game 878): charging him after the
//! grace accused a player whose move the board could not yet tell.

use eboard_core::arbiter::{Arbiter, ArbiterConfig, PRESS_GRACE_MS, Ruling};
use eboard_core::event::Event;
use eboard_core::vocab::WhiteDisplay;
use eboard_sim::feed::clock_reading;
use shakmaty::{Chess, Move, Position};

struct Table {
    arbiter: Arbiter,
    position: Chess,
    lever_left_down: bool,
    now: u64,
    accused: Vec<String>,
}

impl Table {
    /// White on the left display, his clock running.
    fn new() -> Table {
        let cfg = ArbiterConfig {
            white_display: WhiteDisplay::Left,
            ..ArbiterConfig::default()
        };
        let mut t = Table {
            arbiter: Arbiter::new(cfg, Chess::default(), Vec::new()),
            position: Chess::default(),
            lever_left_down: false,
            now: 1_000,
            accused: Vec::new(),
        };
        t.clock();
        t
    }

    fn keep(&mut self, rulings: Vec<Ruling>) {
        for r in rulings {
            if let Ruling::Publish(Event::IllegalMoveCompleted { description, .. }) = r {
                self.accused.push(description);
            }
        }
    }

    fn clock(&mut self) {
        let reading = clock_reading(300_000, 300_000, self.lever_left_down);
        let ruled = self.arbiter.on_clock(&reading, self.now);
        self.keep(ruled);
    }

    fn play(&mut self, uci: &str) {
        let m: Move = uci
            .parse::<shakmaty::uci::UciMove>()
            .unwrap()
            .to_move(&self.position)
            .unwrap();
        self.position.play_unchecked(m);
        self.now += 100;
        let ruled = self.arbiter.on_move(m, self.now);
        self.keep(ruled);
    }

    fn press(&mut self) {
        self.now += 100;
        self.lever_left_down = !self.lever_left_down;
        self.clock();
    }

    fn tick(&mut self, ms: u64) {
        self.now += ms;
        let ruled = self.arbiter.tick(self.now);
        self.keep(ruled);
    }

    /// After 1. e4 e5, each pressed, White presses with his move not reported, while two
    /// stories explain the board.
    fn undecided_press() -> Table {
        let mut t = Table::new();
        t.play("e2e4");
        t.press();
        t.play("e7e5");
        t.press();
        t.arbiter.set_moves_undecided(true);
        t.press();
        t
    }
}

#[test]
fn a_press_while_two_stories_explain_the_board_waits_for_the_story() {
    let mut t = Table::undecided_press();
    t.tick(PRESS_GRACE_MS + 100);
    t.tick(3_000);
    assert!(t.accused.is_empty(), "{:?}", t.accused);
    // The story is picked: it holds White's Nf3, reported long past the grace.
    t.play("g1f3");
    t.arbiter.set_moves_undecided(false);
    t.tick(PRESS_GRACE_MS + 100);
    assert!(t.accused.is_empty(), "{:?}", t.accused);
    // Nf3 was completed by that press: Black's move and press are what comes next.
    t.play("b8c6");
    t.press();
    t.tick(PRESS_GRACE_MS + 100);
    assert!(t.accused.is_empty(), "{:?}", t.accused);
}

#[test]
fn a_story_without_the_pressers_move_leaves_a_press_without_a_move() {
    let mut t = Table::undecided_press();
    t.tick(PRESS_GRACE_MS + 100);
    assert!(t.accused.is_empty(), "{:?}", t.accused);
    // The story is picked and holds no move of White's: the press made none.
    t.arbiter.set_moves_undecided(false);
    t.tick(100);
    assert_eq!(
        t.accused,
        ["clock pressed without making a move (7.5.3)"],
        "{:?}",
        t.accused
    );
}

#[test]
fn without_open_stories_the_grace_alone_decides() {
    let mut t = Table::new();
    t.play("e2e4");
    t.press();
    t.play("e7e5");
    t.press();
    t.press();
    t.tick(PRESS_GRACE_MS + 100);
    assert_eq!(t.accused.len(), 1, "{:?}", t.accused);
}
