//! One configuration: each board setting held once. The arbiter's settings travel inside the
//! session's configuration in the flat form the daemon always wrote, `SetRules` changes the
//! one place the rules are, and a restored session runs with the last journalled rules from
//! its first input, whether or not the journal holds a game.

use eboard_core::arbiter::ArbiterConfig;
use eboard_core::session::{Command, Event, Input, RecordFact, Session, SessionConfig};
use eboard_core::vocab::{ClockPeriods, Edition, Rules, WhiteDisplay};

/// A board's settings as the added-boards file of an earlier daemon holds them: one flat
/// object, the Laws' and clock's settings beside the name.
const FLAT: &str = r#"{"name":"a","port":"/dev/ttyACM0","rules":"rapid","edition":"fide-2005",
    "guidelines_iii":true,"white_display":"right","orientation":"auto",
    "time_control":"40/5400+30:1800+30","clock_periods":"moves","tags":[["Event","Open"]],
    "number":7,"variant":"standard"}"#;

#[test]
fn the_flat_settings_read_into_the_arbiters_part_and_are_written_flat_again() {
    let config: SessionConfig = serde_json::from_str(FLAT).expect("flat settings");
    assert_eq!(config.name, "a");
    assert_eq!(config.number, 7);
    assert_eq!(
        config.arbiter,
        ArbiterConfig {
            rules: Rules::Rapid,
            edition: Edition::Fide2005,
            guidelines_iii: true,
            white_display: WhiteDisplay::Right,
            time_control: Some("40/5400+30:1800+30".parse().unwrap()),
            clock_periods: ClockPeriods::Moves,
        }
    );
    let written: serde_json::Value = serde_json::to_value(&config).unwrap();
    let object = written.as_object().expect("an object");
    assert!(!object.contains_key("arbiter"), "no nesting: {written}");
    let before: serde_json::Value = serde_json::from_str(FLAT).unwrap();
    assert_eq!(written, before, "the same settings, the same form");
    // A file from before `clock_periods` existed: the default.
    let older = FLAT.replace(r#""clock_periods":"moves","#, "");
    let config: SessionConfig = serde_json::from_str(&older).expect("older settings");
    assert_eq!(config.arbiter.clock_periods, ClockPeriods::Time);
}

#[test]
fn set_rules_changes_what_the_session_and_its_view_run_with() {
    let mut session = Session::new(SessionConfig {
        name: "board".into(),
        ..SessionConfig::default()
    });
    let events = session
        .handle(Input::Command(Command::SetRules(Rules::Blitz)), 0)
        .unwrap();
    assert!(events.contains(&Event::Record(RecordFact::Rules {
        rules: Rules::Blitz,
        edition: Edition::Fide2023,
    })));
    assert_eq!(session.config().arbiter.rules, Rules::Blitz);
    assert_eq!(session.view().rules, "blitz");
}

/// With no game in the journal, the journalled rules still rule: the arbiter's (which
/// `config()` reads) as well as the view's.
#[test]
fn a_restored_session_runs_with_the_journalled_rules_even_without_a_game() {
    let config = SessionConfig {
        name: "board".into(),
        ..SessionConfig::default()
    };
    let journal = [Event::Record(RecordFact::Rules {
        rules: Rules::Rapid,
        edition: Edition::Fide2005,
    })];
    let restored = Session::restore(config, &journal);
    assert_eq!(restored.config().arbiter.rules, Rules::Rapid);
    assert_eq!(restored.config().arbiter.edition, Edition::Fide2005);
    assert_eq!(restored.view().rules, "rapid");
    assert_eq!(restored.view().edition, "fide-2005");
    // The name and the rest of the board's settings are as configured.
    assert_eq!(restored.config().name, "board");
}
