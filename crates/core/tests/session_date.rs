//! The session dates each game that begins with the day the shell says it is
//! (`Session::set_date`): the `Date` tag is the session's own, journalled with the game, and a
//! journal written when the daemon still dated games by a `SetTags` restores the same date.

use eboard_core::game::{Game, PgnDate, START_FEN};
use eboard_core::session::{
    Command, Event, Input, RecordFact, Session, SessionConfig, is_journalled,
};

fn config(tags: &[(&str, &str)]) -> SessionConfig {
    SessionConfig {
        name: "board_1".into(),
        tags: tags
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect(),
        ..SessionConfig::default()
    }
}

fn day(iso: &str) -> PgnDate {
    PgnDate::parse_iso(iso).unwrap()
}

fn date_of(session: &Session) -> Option<String> {
    tag(&session.game().tags, "Date")
}

fn tag(tags: &[(String, String)], name: &str) -> Option<String> {
    tags.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone())
}

/// The operator's command at `now`; its events.
fn command(session: &mut Session, command: Command, now: u64) -> Vec<Event> {
    session.handle(Input::Command(command), now).unwrap()
}

fn journal(events: &[Event]) -> Vec<Event> {
    events
        .iter()
        .filter(|e| is_journalled(e))
        .cloned()
        .collect()
}

#[test]
fn a_game_that_begins_is_dated_with_the_day_the_shell_said() {
    let mut s = Session::new(config(&[]));
    s.set_date(day("2026-12-05"));
    let events = command(&mut s, Command::NewGame, 1_000);
    assert!(matches!(events[0], Event::GameStarted { .. }), "{events:?}");
    assert_eq!(date_of(&s).as_deref(), Some("2026.12.05"));
    assert!(
        s.game().pgn().contains("[Date \"2026.12.05\"]"),
        "{}",
        s.game().pgn()
    );

    // The next day's game has the next day's date, the first keeps its own in the journal.
    s.set_date(day("2026-12-06"));
    let next = command(&mut s, Command::NewGame, 2_000);
    assert_eq!(date_of(&s).as_deref(), Some("2026.12.06"));
    let first = Session::restore(config(&[]), &journal(&events));
    assert_eq!(date_of(&first).as_deref(), Some("2026.12.05"));
    let all: Vec<Event> = events.into_iter().chain(next).collect();
    let restored = Session::restore(config(&[]), &journal(&all));
    assert_eq!(date_of(&restored).as_deref(), Some("2026.12.06"));
    assert_eq!(restored.game().pgn(), s.game().pgn());
}

#[test]
fn without_a_day_from_the_shell_the_date_stays_unknown() {
    let mut s = Session::new(config(&[]));
    command(&mut s, Command::NewGame, 1_000);
    assert_eq!(date_of(&s), None);
    assert!(
        s.game().pgn().contains("[Date \"????.??.??\"]"),
        "{}",
        s.game().pgn()
    );
}

#[test]
fn a_configured_date_dates_every_game() {
    let tags = [("Date", "2026.01.17"), ("Event", "Open")];
    let mut s = Session::new(config(&tags));
    s.set_date(day("2026-12-05"));
    let mut events = command(&mut s, Command::NewGame, 1_000);
    assert_eq!(date_of(&s).as_deref(), Some("2026.01.17"));
    events.extend(command(&mut s, Command::NewGame, 2_000));
    assert_eq!(date_of(&s).as_deref(), Some("2026.01.17"));
    assert_eq!(
        date_of(&Session::restore(config(&tags), &journal(&events))).as_deref(),
        Some("2026.01.17")
    );
}

#[test]
fn a_date_set_over_the_bus_holds_for_its_game_and_the_next_game_gets_the_day() {
    let mut s = Session::new(config(&[]));
    s.set_date(day("2026-12-05"));
    let mut events = command(&mut s, Command::NewGame, 1_000);
    let set = vec![("Date".to_string(), "2026.11.30".to_string())];
    events.extend(command(&mut s, Command::SetTags(set), 1_500));
    assert_eq!(date_of(&s).as_deref(), Some("2026.11.30"));
    assert_eq!(
        date_of(&Session::restore(config(&[]), &journal(&events))).as_deref(),
        Some("2026.11.30")
    );
    command(&mut s, Command::NewGame, 2_000);
    assert_eq!(date_of(&s).as_deref(), Some("2026.12.05"));
}

#[test]
fn a_journal_dated_by_set_tags_restores_its_date() {
    // What the daemon journalled before the session dated games: the game's start, its
    // snapshot without a date, then the tags record of the `SetTags` it sent with the day.
    let board = ("Board".to_string(), "board_1".to_string());
    let tags = vec![board.clone(), ("Date".into(), "2025.06.30".into())];
    let journal = vec![
        Event::GameStarted {
            fen: START_FEN.into(),
        },
        Event::Record(RecordFact::Snapshot {
            game: Game::new(START_FEN, vec![board]),
        }),
        Event::Record(RecordFact::Tags { tags }),
    ];
    let mut s = Session::restore(config(&[]), &journal);
    assert_eq!(date_of(&s).as_deref(), Some("2025.06.30"));
    // Restored, it is the same session: its next game takes the day it is given.
    s.set_date(day("2026-12-05"));
    command(&mut s, Command::NewGame, 1_000);
    assert_eq!(date_of(&s).as_deref(), Some("2026.12.05"));
}
