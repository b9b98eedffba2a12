//! One `eboardevent` feed: what a subscribed client is sent as the board changes. Pure.
//!
//! The first message carries the whole state; later ones are sent only when something the
//! feed shows changed, and carry, besides `serialnr` and `flipped`, only what changed
//! (contract section 8). Above all `san` goes out only when the moves changed: simple
//! connectors written against LiveChess take the last SAN of every list they receive as the
//! newest move, and a list repeated on a clock tick would be played again — for the other
//! side when the move is legal for it too (`O-O` after `O-O`).
//!
//! Because each message is computed from the board's current properties against what this
//! feed last sent, a burst of changes seen late (a slow client, a lagging notification)
//! collapses into one correct message, and a correction (`MoveRetracted` + `MovePlayed`)
//! simply sends the corrected `san` list.
//!
//! After `setup` the next message carries the whole state again, but only once the board
//! shows the restarted game: until then a clock tick must not carry the old game's list to a
//! client that has just reset its own to `[]`.

use serde_json::{Map, Value, json};

use crate::bridge::livechess::objects::{self, ClockReading};
use crate::client::BoardProps;

/// What the feed last sent.
#[derive(Debug, Clone, PartialEq)]
struct Sent {
    serialnr: String,
    flipped: bool,
    board: String,
    clock: ClockReading,
    start: String,
    san: Vec<String>,
    matched: bool,
}

impl Sent {
    fn of(props: &BoardProps, flipped: bool) -> Sent {
        Sent {
            serialnr: objects::serialnr(props).to_owned(),
            flipped,
            board: objects::placement(props).to_owned(),
            clock: objects::clock_reading(props),
            start: objects::start_fen(props).to_owned(),
            san: props.moves.clone(),
            matched: props.in_sync,
        }
    }
}

/// The game a `setup` was asked on: its start and moves as they stood. The board shows the
/// restarted game once its moves are empty or its start or moves differ from these.
#[derive(Debug, Clone, PartialEq)]
struct SetupAsked {
    start: String,
    san: Vec<String>,
}

/// The state of one feed.
#[derive(Debug, Clone, Default)]
pub struct Feed {
    sent: Option<Sent>,
    setup: Option<SetupAsked>,
}

impl Feed {
    /// A `setup` on this feed's board was accepted while the board stood as `props`: the
    /// first message showing the restarted game carries the whole state.
    pub fn setup(&mut self, props: &BoardProps) {
        self.setup = Some(SetupAsked {
            start: objects::start_fen(props).to_owned(),
            san: props.moves.clone(),
        });
    }

    /// The EVENTs to send for the board as it is now: [`Feed::next`], preceded by one
    /// message per move when several were played since the last message (notifications seen
    /// late collapse), so that a client taking the last SAN of each list as the newest move
    /// still sees every move.
    pub fn messages(&mut self, props: &BoardProps, flipped: bool, now_ms: u64) -> Vec<Value> {
        let mut out = Vec::new();
        if self.setup.is_none()
            && let Some(sent) = self.sent.as_mut()
            && sent.start == objects::start_fen(props)
            && props.moves.len() > sent.san.len() + 1
            && props.moves.starts_with(&sent.san)
        {
            for n in sent.san.len() + 1..props.moves.len() {
                out.push(json!({
                    "serialnr": objects::serialnr(props),
                    "flipped": flipped,
                    "san": &props.moves[..n],
                }));
            }
            sent.san = props.moves[..props.moves.len() - 1].to_vec();
        }
        out.extend(self.next(props, flipped, now_ms));
        out
    }

    /// The EVENT to send for the board as it is now, or `None` when nothing it shows changed
    /// since the last one.
    pub fn next(&mut self, props: &BoardProps, flipped: bool, now_ms: u64) -> Option<Value> {
        let now = Sent::of(props, flipped);
        let restarted = self
            .setup
            .as_ref()
            .is_some_and(|s| now.san.is_empty() || now.start != s.start || now.san != s.san);
        if restarted {
            self.setup = None;
        }
        let last = self.sent.as_ref().filter(|_| !restarted);
        if last == Some(&now) {
            return None;
        }
        let mut event = Map::new();
        event.insert("serialnr".into(), json!(now.serialnr));
        event.insert("flipped".into(), json!(now.flipped));
        if last.is_none_or(|l| l.board != now.board) {
            event.insert("board".into(), json!(now.board));
        }
        if last.is_none_or(|l| l.clock != now.clock) {
            event.insert("clock".into(), objects::clock_json(now.clock, now_ms));
        }
        let new_start = last.is_none_or(|l| l.start != now.start);
        if new_start {
            event.insert("start".into(), json!(now.start));
        }
        // A new start is a new game: its list goes with it, even when both are empty.
        if new_start || last.is_none_or(|l| l.san != now.san) {
            event.insert("san".into(), json!(now.san));
        }
        if last.is_none_or(|l| l.matched != now.matched) {
            event.insert("match".into(), json!(now.matched));
        }
        self.sent = Some(now);
        Some(Value::Object(event))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bridge::livechess::objects::tests::board;

    fn keys(v: &Value) -> Vec<&str> {
        let mut k: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        k.sort();
        k
    }

    #[test]
    fn first_message_is_whole_then_only_changes() {
        let mut feed = Feed::default();
        let mut b = board();
        let first = feed.next(&b, false, 1).expect("first");
        assert_eq!(
            keys(&first),
            [
                "board", "clock", "flipped", "match", "san", "serialnr", "start"
            ]
        );
        assert_eq!(first["san"], json!(["e4"]));
        assert_eq!(feed.next(&b, false, 2), None, "nothing changed");
        // Milliseconds within the same second do not make a new message.
        b.black_time_ms += 300;
        assert_eq!(feed.next(&b, false, 3), None);
        b.black_time_ms -= 1300 + 1000;
        let clock_only = feed.next(&b, false, 4).expect("clock ticked");
        assert_eq!(keys(&clock_only), ["clock", "flipped", "serialnr"]);
        assert_eq!(clock_only["clock"]["black"], 7188);
        assert_eq!(clock_only["clock"]["time"], 4);
        // A lifted piece shows in `board` and `match`; the moves stay, so `san` is left out.
        b.placement = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKB1R".into();
        b.in_sync = false;
        let lifted = feed.next(&b, false, 5).expect("lifted");
        assert_eq!(keys(&lifted), ["board", "flipped", "match", "serialnr"]);
        assert_eq!(lifted["match"], false);
        // A move: `san` with the new list.
        b.moves.push("e5".into());
        let moved = feed.next(&b, false, 6).expect("moved");
        assert_eq!(keys(&moved), ["flipped", "san", "serialnr"]);
        assert_eq!(moved["san"], json!(["e4", "e5"]));
    }

    #[test]
    fn a_clock_tick_after_a_move_both_sides_can_make_carries_no_list() {
        // After White's O-O, Black's O-O is legal too: a client taking the last SAN of each
        // list as new would play it again if a tick repeated the list.
        let mut feed = Feed::default();
        let mut b = board();
        b.moves = ["e4", "e5", "Nf3", "Nf6", "Bc4", "Bc5", "O-O"]
            .map(String::from)
            .to_vec();
        feed.next(&b, false, 0);
        for tick in 1..=5 {
            b.black_time_ms -= 1000;
            let m = feed.next(&b, false, tick).expect("tick");
            assert!(m.get("san").is_none(), "tick {tick}: {m}");
        }
    }

    #[test]
    fn moves_seen_together_go_out_one_list_each() {
        let mut feed = Feed::default();
        let mut b = board();
        feed.messages(&b, false, 0);
        b.moves = ["e4", "e5", "Nf3", "Nc6"].map(String::from).to_vec();
        b.black_time_ms -= 5000;
        let out = feed.messages(&b, false, 1);
        let lists: Vec<&Value> = out.iter().filter_map(|m| m.get("san")).collect();
        assert_eq!(
            lists,
            [
                &json!(["e4", "e5"]),
                &json!(["e4", "e5", "Nf3"]),
                &json!(["e4", "e5", "Nf3", "Nc6"])
            ]
        );
        assert_eq!(keys(&out[0]), ["flipped", "san", "serialnr"]);
        assert!(out[2].get("clock").is_some(), "the last one has the rest");
        assert!(feed.messages(&b, false, 2).is_empty());
        // A correction is one list, as is a new game.
        b.moves = ["e4", "c5", "Nf3", "d6"].map(String::from).to_vec();
        assert_eq!(feed.messages(&b, false, 3).len(), 1);
    }

    #[test]
    fn a_correction_sends_the_corrected_list() {
        let mut feed = Feed::default();
        let mut b = board();
        b.moves = vec!["e4".into(), "e5".into()];
        feed.next(&b, false, 0);
        b.moves = vec!["e4".into(), "e6".into()];
        let corrected = feed.next(&b, false, 1).expect("corrected");
        assert_eq!(corrected["san"], json!(["e4", "e6"]));
    }

    #[test]
    fn a_new_start_and_a_flip_are_sent() {
        let mut feed = Feed::default();
        let mut b = board();
        feed.next(&b, false, 0);
        let fen = "4k3/8/8/8/8/8/8/4K2R w K - 0 1";
        b.pgn = format!("[SetUp \"1\"]\n[FEN \"{fen}\"]\n\n*\n");
        b.moves.clear();
        let restarted = feed.next(&b, false, 1).expect("restarted");
        assert_eq!(restarted["start"], fen);
        assert_eq!(restarted["san"], json!([]));
        let flipped = feed.next(&b, true, 2).expect("flipped");
        assert_eq!(keys(&flipped), ["flipped", "serialnr"]);
        assert_eq!(flipped["flipped"], true);
    }

    #[test]
    fn after_setup_the_restarted_game_comes_whole_and_not_before() {
        let mut feed = Feed::default();
        let mut b = board();
        feed.next(&b, false, 0);
        feed.setup(&b);
        // The daemon's changes have not arrived: a tick carries the clock only.
        b.black_time_ms -= 1000;
        let tick = feed.next(&b, false, 1).expect("tick");
        assert_eq!(keys(&tick), ["clock", "flipped", "serialnr"]);
        // The restarted game: everything, although the start and the board are as before.
        b.moves.clear();
        b.black_time_ms -= 1000;
        let whole = feed.next(&b, false, 2).expect("restarted");
        assert_eq!(
            keys(&whole),
            [
                "board", "clock", "flipped", "match", "san", "serialnr", "start"
            ]
        );
        assert_eq!(whole["san"], json!([]));
        // Then diffs again.
        b.black_time_ms -= 1000;
        let tick = feed.next(&b, false, 3).expect("tick");
        assert_eq!(keys(&tick), ["clock", "flipped", "serialnr"]);
    }

    #[test]
    fn a_setup_that_changes_nothing_still_sends_the_whole_state() {
        let mut feed = Feed::default();
        let mut b = board();
        b.moves.clear();
        feed.next(&b, false, 0);
        feed.setup(&b);
        let whole = feed.next(&b, false, 1).expect("whole after setup");
        assert_eq!(whole["san"], json!([]));
        assert!(whole.get("start").is_some() && whole.get("match").is_some());
        assert_eq!(feed.next(&b, false, 2), None);
    }
}
