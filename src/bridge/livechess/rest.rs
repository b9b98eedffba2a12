//! LiveChess's REST views (contract section 8) of the boards as they are now: one
//! tournament (the boards' `Event`), its rounds from the `Round` tags (`<round>.<board>`, as
//! `eboardctl pairings` sets them), each round's pairings, and each pairing's game. Pure.
//!
//! The hall holds each board's current game only, so a round lists the boards whose current
//! game belongs to it. UUIDs are name-based (version 5), so they are the same on every run and
//! on every host for the same event, round and board.

use serde_json::{Value, json};
use uuid::Uuid;

use crate::bridge::livechess::objects;
use crate::client::BoardProps;
use eboard_core::pgn::parse_games;
use eboard_core::tracker::chess960::back_rank_of;

/// The Chess960 start number of the standard position (how lichess reads "standard chess").
pub const STANDARD_START_NUMBER: u32 = 518;

/// The tag pairs of a PGN's tag section, as written.
pub fn tags(pgn: &str) -> Vec<(&str, &str)> {
    pgn.lines()
        .map(str::trim)
        .take_while(|line| line.starts_with('['))
        .filter_map(|line| {
            let inner = line.strip_prefix('[')?.strip_suffix(']')?;
            let (name, value) = inner.split_once(' ')?;
            let value = value.trim().strip_prefix('"')?.strip_suffix('"')?;
            Some((name, value))
        })
        .collect()
}

fn tag<'a>(tags: &[(&str, &'a str)], name: &str) -> Option<&'a str> {
    tags.iter()
        .find(|(k, _)| *k == name)
        .map(|(_, v)| *v)
        .filter(|v| !v.is_empty() && *v != "?" && *v != "-")
}

/// A board's place in a round: from its `Round` tag `<round>.<board>` (or `<round>`, then
/// its table number).
fn round_of(props: &BoardProps) -> Option<(u32, u32)> {
    let t = tags(&props.pgn);
    let round = tag(&t, "Round")?;
    match round.split_once('.') {
        Some((r, b)) => Some((r.parse().ok()?, b.parse().ok()?)),
        None => Some((round.parse().ok()?, props.number)),
    }
}

/// The boards of the hall, in table order, with what the views need.
pub struct Tournament<'a> {
    boards: Vec<&'a BoardProps>,
    event: String,
    uuid: Uuid,
}

impl<'a> Tournament<'a> {
    /// The tournament of these boards (in table order): its name is the `Event` of the first
    /// board that has one.
    pub fn new(boards: Vec<&'a BoardProps>) -> Tournament<'a> {
        let event = boards
            .iter()
            .find_map(|b| tag(&tags(&b.pgn), "Event").map(str::to_owned))
            .unwrap_or_else(|| "eboardd".to_owned());
        let uuid = Uuid::new_v5(
            &Uuid::NAMESPACE_URL,
            format!("eboardd:event:{event}").as_bytes(),
        );
        Tournament {
            boards,
            event,
            uuid,
        }
    }

    pub fn uuid(&self) -> String {
        self.uuid.to_string()
    }

    /// The highest round in the boards' `Round` tags; 1 when none has one (every board is
    /// then in round 1 by its table number).
    pub fn rounds(&self) -> u32 {
        self.boards
            .iter()
            .filter_map(|b| round_of(b))
            .map(|(r, _)| r)
            .max()
            .unwrap_or(1)
    }

    fn tagged(&self) -> bool {
        self.boards.iter().any(|b| round_of(b).is_some())
    }

    /// The board's (round, pairing number) in this tournament.
    fn place(&self, props: &BoardProps) -> Option<(u32, u32)> {
        if self.tagged() {
            round_of(props)
        } else if props.number > 0 {
            Some((1, props.number))
        } else {
            None
        }
    }

    fn pairing_uuid(&self, round: u32, nr: u32) -> Uuid {
        Uuid::new_v5(&self.uuid, format!("round {round} board {nr}").as_bytes())
    }

    /// `/tournaments`.
    pub fn list(&self) -> Value {
        json!([{"uuid": self.uuid(), "description": self.event, "rounds": self.rounds()}])
    }

    /// `/tournament/<uuid>`.
    pub fn tournament(&self) -> Value {
        let site = self
            .boards
            .iter()
            .find_map(|b| tag(&tags(&b.pgn), "Site").map(str::to_owned));
        let tables = self.boards.iter().map(|b| b.number).max().unwrap_or(0) as usize;
        let mut eboards = vec![String::new(); tables];
        for b in &self.boards {
            if b.number > 0 {
                eboards[b.number as usize - 1] = objects::serialnr(b).to_owned();
            }
        }
        json!({
            "uuid": self.uuid(),
            "name": self.event,
            "description": self.event,
            "location": site,
            "country": Value::Null,
            "rounds": self.rounds(),
            "eboards": eboards,
        })
    }

    /// `/round/<uuid>/<index>`: round `index + 1`, `None` past the last.
    pub fn round(&self, index: u32) -> Option<Value> {
        let nr = index.checked_add(1)?;
        if nr > self.rounds() {
            return None;
        }
        let mut games: Vec<(u32, &BoardProps)> = self
            .boards
            .iter()
            .filter_map(|b| match self.place(b) {
                Some((r, n)) if r == nr => Some((n, *b)),
                _ => None,
            })
            .collect();
        games.sort_by_key(|(n, _)| *n);
        let date = games
            .iter()
            .find_map(|(_, b)| tag(&tags(&b.pgn), "Date").map(str::to_owned));
        let pairings: Vec<Value> = games
            .iter()
            .map(|(n, b)| {
                let t = tags(&b.pgn);
                json!({
                    "nr": n,
                    "uuid": self.pairing_uuid(nr, *n).to_string(),
                    "white": player(&t, "White"),
                    "black": player(&t, "Black"),
                    "live": b.state == "playing",
                    "result": result(&b.result),
                })
            })
            .collect();
        Some(json!({"nr": nr, "date": date, "pairings": pairings}))
    }

    /// `/game/<pairing uuid>`, `None` for a pairing no board plays now.
    pub fn game(&self, pairing: &str, now_ms: u64) -> Option<Value> {
        let wanted: Uuid = pairing.parse().ok()?;
        let props = self.boards.iter().find(|b| {
            self.place(b)
                .is_some_and(|(r, n)| self.pairing_uuid(r, n) == wanted)
        })?;
        Some(game(props, now_ms))
    }
}

/// PLAYER `{"fname", "mname", "lname", "title", "federation", "gender", "fideid"}` from the
/// tags of `side` (`White` as "Last, First"; `WhiteTitle`, `WhiteFed`, `WhiteFideId`).
pub fn player(tags: &[(&str, &str)], side: &str) -> Value {
    let (fname, lname) = match tag(tags, side) {
        None => (None, None),
        Some(name) => match name.split_once(',') {
            Some((last, first)) => (Some(first.trim()), Some(last.trim())),
            None => (None, Some(name.trim())),
        },
    };
    let of = |suffix: &str| tag(tags, &format!("{side}{suffix}"));
    json!({
        "fname": fname.filter(|s| !s.is_empty()),
        "mname": Value::Null,
        "lname": lname,
        "title": of("Title"),
        "federation": of("Fed"),
        "gender": Value::Null,
        "fideid": of("FideId"),
    })
}

/// A PGN result as LiveChess writes it: `WHITEWIN`, `BLACKWIN`, `DRAW`, or `null` while
/// playing.
pub fn result(pgn_result: &str) -> Value {
    match pgn_result {
        "1-0" => json!("WHITEWIN"),
        "0-1" => json!("BLACKWIN"),
        "1/2-1/2" => json!("DRAW"),
        _ => Value::Null,
    }
}

/// The Chess960 start number of a FEN's position (518 for the standard start, and for any
/// position that is not a Chess960 start).
pub fn start_number(fen: &str) -> u32 {
    let rank1: Vec<char> = fen
        .split(' ')
        .next()
        .and_then(|placement| placement.rsplit('/').next())
        .unwrap_or("")
        .chars()
        .collect();
    (0..960u32)
        .find(|&n| {
            back_rank_of(n as usize)
                .iter()
                .map(char::to_ascii_uppercase)
                .eq(rank1.iter().copied())
        })
        .unwrap_or(STANDARD_START_NUMBER)
}

/// Seconds left in a `[%clk h:mm:ss]` comment.
fn clk_seconds(comment: &str) -> Option<u64> {
    let rest = comment.split("[%clk ").nth(1)?;
    let time = rest.split(']').next()?.trim();
    let mut secs = 0u64;
    for part in time.split(':') {
        let whole = part.split('.').next()?;
        secs = secs * 60 + whole.parse::<u64>().ok()?;
    }
    Some(secs)
}

/// A game's CLOCK from its clock tags (the broadcast PGN's `WhiteClock`, `BlackClock`,
/// `ReferenceTime`): the latest reading the daemon published, `time` the instant of that
/// reading (`now_ms` for a stopped clock, whose times hold now); `null` without the tags (no
/// clock, or none read since the daemon started).
fn game_clock(game: &eboard_core::pgn::PgnGame, now_ms: u64) -> Value {
    let Some(tags) = eboard_core::clock_tags::read_tags(|name| game.tag(name)) else {
        return Value::Null;
    };
    let (run, time) = match tags.reference {
        Some((color, at)) => (Some(color == shakmaty::Color::White), at),
        None => (None, now_ms),
    };
    objects::clock_json(
        Some((tags.white_ms / 1000, tags.black_ms / 1000, run)),
        time,
    )
}

/// The game view `{"chess960", "result", "comment", "clock", "moves"}` of a board: its
/// `Pgn`, so final moves only; each move "SAN seconds" with the mover's time from `%clk`
/// (only the SAN when the game has no clock).
pub fn game(props: &BoardProps, now_ms: u64) -> Value {
    let games = parse_games(&props.pgn);
    let clock = games.last().map_or(Value::Null, |g| game_clock(g, now_ms));
    let parsed = games.into_iter().next().unwrap_or_default();
    let moves: Vec<String> = parsed
        .sans
        .iter()
        .enumerate()
        .map(|(i, san)| {
            let clk = parsed
                .comments
                .iter()
                .find(|(after, _)| *after == i + 1)
                .and_then(|(_, c)| clk_seconds(c));
            match clk {
                Some(s) => format!("{san} {s}"),
                None => san.clone(),
            }
        })
        .collect();
    let chess960 = if props.variant == "chess960" {
        start_number(objects::start_fen(props))
    } else {
        STANDARD_START_NUMBER
    };
    json!({
        "chess960": chess960,
        "result": result(&props.result),
        "comment": objects::comment(props),
        "clock": clock,
        "moves": moves,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bridge::livechess::objects::tests::board;

    fn tagged(number: u32, round: &str, white: &str) -> BoardProps {
        let mut b = board();
        b.number = number;
        b.serial_number = format!("s{number}");
        b.pgn = format!(
            "[Event \"City Open\"]\n[Site \"Bern\"]\n[Date \"2026.12.01\"]\n[Round \"{round}\"]\n\
             [White \"{white}\"]\n[Black \"Solo\"]\n[WhiteFed \"NOR\"]\n[WhiteTitle \"GM\"]\n\
             [WhiteFideId \"1503014\"]\n[Result \"*\"]\n\n\
             1. e4 {{[%clk 1:30:00]}} e5 {{[%clk 1:29:58]}} *\n"
        );
        b
    }

    #[test]
    fn players_come_from_the_tags() {
        let b = tagged(1, "2.1", "Carlsen, Magnus");
        let p = player(&tags(&b.pgn), "White");
        assert_eq!(
            p,
            json!({"fname": "Magnus", "mname": null, "lname": "Carlsen", "title": "GM",
                   "federation": "NOR", "gender": null, "fideid": "1503014"})
        );
        let q = player(&tags(&b.pgn), "Black");
        assert_eq!(q["lname"], "Solo");
        assert_eq!(q["fname"], Value::Null);
    }

    #[test]
    fn rounds_count_from_the_tags_and_the_index_from_zero() {
        let (a, b) = (tagged(1, "3.1", "A, a"), tagged(2, "3.2", "B, b"));
        let t = Tournament::new(vec![&a, &b]);
        assert_eq!(t.rounds(), 3);
        assert_eq!(t.list()[0]["description"], "City Open");
        let tour = t.tournament();
        assert_eq!(tour["eboards"], json!(["s1", "s2"]));
        assert_eq!(tour["location"], "Bern");
        let round = t.round(2).expect("round 3");
        assert_eq!(round["nr"], 3);
        assert_eq!(round["date"], "2026.12.01");
        assert_eq!(round["pairings"].as_array().unwrap().len(), 2);
        assert_eq!(round["pairings"][1]["nr"], 2);
        assert_eq!(round["pairings"][0]["live"], true);
        assert_eq!(t.round(0).unwrap()["pairings"], json!([]));
        assert_eq!(t.round(3), None);
        let uuid = round["pairings"][0]["uuid"].as_str().unwrap();
        let game = t.game(uuid, 1).expect("the game");
        assert_eq!(game["moves"], json!(["e4 5400", "e5 5398"]));
        assert_eq!(game["chess960"], 518);
        assert_eq!(t.game("00000000-0000-0000-0000-000000000000", 1), None);
        assert_eq!(t.game("not a uuid", 1), None);
        // The same event gives the same uuid.
        assert_eq!(Tournament::new(vec![&b]).uuid(), t.uuid());
    }

    #[test]
    fn a_game_s_clock_is_the_reading_its_clock_tags_give() {
        let mut b = board();
        let tags = "[Event \"?\"]\n[WhiteClock \"1:30:05\"]\n[BlackClock \"0:59:58\"]\n";
        b.pgn = format!("{tags}[ReferenceTime \"B/2026-12-04T18:52:47.862Z\"]\n\n1. e4 *\n");
        let clock = game(&b, 7)["clock"].clone();
        assert_eq!(
            clock,
            json!({"white": 5405, "black": 3598, "run": false, "time": 1_796_410_367_862u64})
        );
        b.pgn = format!("{tags}\n1. e4 *\n");
        let stopped = game(&b, 7)["clock"].clone();
        assert_eq!(
            stopped,
            json!({"white": 5405, "black": 3598, "run": null, "time": 7})
        );
        b.pgn = "[Event \"?\"]\n\n1. e4 *\n".into();
        assert_eq!(game(&b, 7)["clock"], Value::Null);
    }

    #[test]
    fn untagged_boards_are_round_one_by_table_number() {
        let mut a = board();
        a.pgn = "[Event \"?\"]\n\n*\n".into();
        let t = Tournament::new(vec![&a]);
        assert_eq!(t.rounds(), 1);
        assert_eq!(t.list()[0]["description"], "eboardd");
        assert_eq!(t.round(0).unwrap()["pairings"][0]["nr"], 1);
    }

    #[test]
    fn results_and_start_numbers() {
        assert_eq!(result("1-0"), "WHITEWIN");
        assert_eq!(result("0-1"), "BLACKWIN");
        assert_eq!(result("1/2-1/2"), "DRAW");
        assert_eq!(result("*"), Value::Null);
        assert_eq!(start_number(objects::START_FEN), 518);
        assert_eq!(
            start_number("bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w HFhf - 0 1"),
            0
        );
        assert_eq!(clk_seconds("[%clk 0:01:05.5]"), Some(65));
    }
}
