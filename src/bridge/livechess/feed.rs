//! One `eboardevent` feed: what a subscribed client is sent as the board changes. Pure.
//!
//! The first message carries the whole state; later ones are sent only when something the
//! feed shows changed, and leave out `board` and `clock` when those are as last sent
//! (contract section 8, as LiveChess does). Because each message is computed from the
//! board's current properties against what this feed last sent, a burst of changes seen
//! late (a slow client, a lagging notification) collapses into one correct message, and a
//! correction (`MoveRetracted` + `MovePlayed`) simply sends the corrected `san` list.

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

/// The state of one feed.
#[derive(Debug, Clone, Default)]
pub struct Feed {
    sent: Option<Sent>,
}

impl Feed {
    /// The EVENT to send for the board as it is now, or `None` when nothing it shows changed
    /// since the last one.
    pub fn next(&mut self, props: &BoardProps, flipped: bool, now_ms: u64) -> Option<Value> {
        let now = Sent {
            serialnr: objects::serialnr(props).to_owned(),
            flipped,
            board: objects::placement(props).to_owned(),
            clock: objects::clock_reading(props),
            start: objects::start_fen(props).to_owned(),
            san: props.moves.clone(),
            matched: props.in_sync,
        };
        let last = self.sent.as_ref();
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
        event.insert("start".into(), json!(now.start));
        event.insert("san".into(), json!(now.san));
        event.insert("match".into(), json!(now.matched));
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
        assert_eq!(
            keys(&clock_only),
            ["clock", "flipped", "match", "san", "serialnr", "start"]
        );
        assert_eq!(clock_only["clock"]["black"], 7188);
        assert_eq!(clock_only["clock"]["time"], 4);
        // A lifted piece shows in `board`; the moves stay.
        b.placement = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKB1R".into();
        b.in_sync = false;
        let lifted = feed.next(&b, false, 5).expect("lifted");
        assert_eq!(
            keys(&lifted),
            ["board", "flipped", "match", "san", "serialnr", "start"]
        );
        assert_eq!(lifted["match"], false);
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
        assert_eq!(flipped["flipped"], true);
    }
}
