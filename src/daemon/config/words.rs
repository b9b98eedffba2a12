//! The configuration's words and small values: rules, edition, variant, display and
//! orientation settings, directories, table numbers and PGN tags — each checked with a
//! message that lists what is accepted. Where the value is found (file, line, key or flag) is
//! added by the caller.

use std::path::PathBuf;

use eboard_core::game::{self, TAG_NAME_MAX, TagValueFault};
use eboard_core::vocab::UnknownWord;

/// A valid PGN tag name ([`game::is_tag_name`]), at most [`TAG_NAME_MAX`] bytes long, and not
/// one of the tags the game record writes itself ([`game::RECORD_TAGS`]: a configured
/// `PlyCount` or `Termination` would contradict every game in progress).
pub(super) fn validate_tag_name(name: &str) -> Result<(), String> {
    if let Some(fault) = game::record_tag_fault(name) {
        Err(fault)
    } else if game::is_tag_name(name) && name.len() <= TAG_NAME_MAX {
        Ok(())
    } else {
        Err(format!(
            "\"{}\" is not a PGN tag name (a letter followed by letters, digits or `_`, at \
             most {TAG_NAME_MAX} bytes)",
            game::shown(name)
        ))
    }
}

/// A valid PGN tag value for the contract ([`game::tag_value_fault`]): one line of at most
/// [`game::TAG_VALUE_MAX`] bytes, no `"`, no control character.
pub(super) fn validate_tag_value(value: &str) -> Result<(), String> {
    match game::tag_value_fault(value) {
        Some(TagValueFault::Newline) => Err("a tag value must not contain a newline".into()),
        Some(TagValueFault::Quote) => Err("a tag value must not contain `\"`".into()),
        Some(fault) => Err(format!("a tag value {}", fault.describe())),
        None => Ok(()),
    }
}

pub(super) fn parse_dir(dir: &str) -> Result<PathBuf, String> {
    if dir.is_empty() {
        Err("the directory must not be empty".into())
    } else {
        Ok(PathBuf::from(dir))
    }
}

/// A table number: a whole number from 1 up (0 means "none" on the bus, so it is not one).
pub(super) fn parse_number(n: i64) -> Result<u32, String> {
    match u32::try_from(n) {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "table number {n} is out of range; expected a whole number from 1 to {}",
            u32::MAX
        )),
    }
}

/// One of the contract's words (`rules`, `edition`, `variant`, …), with the error naming the
/// accepted words.
pub(super) fn parse_word<T: std::str::FromStr<Err = UnknownWord>>(s: &str) -> Result<T, String> {
    s.parse().map_err(|e: UnknownWord| e.to_string())
}
