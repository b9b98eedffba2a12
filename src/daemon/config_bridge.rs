//! Turns the parsed configuration file into [`Settings`].
//!
//! The file format itself (TOML, with errors naming the file, line and key) is
//! [`super::config`]'s business; this module only maps its typed result onto what the
//! daemon runs with.

use std::path::Path;

use crate::session::Rules;

use super::settings::{Settings, SettingsError};

/// Read and check the configuration file at `path`.
pub fn load(path: &Path) -> Result<Settings, SettingsError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        SettingsError(format!(
            "{}: cannot read the configuration: {e}",
            path.display()
        ))
    })?;
    let _ = text;
    Err(SettingsError(format!(
        "{}: configuration files are not supported by this build yet",
        path.display()
    )))
}

/// `--rules`: the default for boards whose configuration does not set rules.
pub fn apply_default_rules(settings: &mut Settings, rules: Rules) {
    settings.defaults.rules = rules;
}
