//! The lichess token of `eboardctl broadcast`: read from a file that only its owner may read
//! (systemd's `LoadCredential=` gives one) or from `$LICHESS_TOKEN`, and kept in a type that
//! never shows it — `Debug` and `Display` print a placeholder — so no message or log line
//! can carry it by accident.

use std::fmt;
use std::path::Path;

/// A secret token.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(<hidden>)")
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<hidden>")
    }
}

/// Why no token could be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("--token-file {path}: {why}")]
    File { path: String, why: String },
    #[error(
        "--token-file {path} can be read by {who} (mode {mode:03o}): the token would not be a \
         secret; make it the owner's alone with `chmod 600 {path}`"
    )]
    Readable {
        path: String,
        who: &'static str,
        mode: u32,
    },
    #[error("$LICHESS_TOKEN is empty")]
    EmptyEnv,
    #[error(
        "no token: give --token-file FILE (a token with the study:write scope, made at \
         https://lichess.org/account/oauth/token) or set $LICHESS_TOKEN"
    )]
    Missing,
}

impl Token {
    /// `text` (a server's answer) with the token and every `Bearer` credential taken out: a
    /// proxy that echoes the request's headers must not make the broadcaster print them.
    pub fn redact(&self, text: &str) -> String {
        let mut out = if self.0.is_empty() {
            text.to_owned()
        } else {
            text.replace(&self.0, "<hidden>")
        };
        let mut from = 0;
        while let Some(at) = out[from..]
            .find("Bearer ")
            .map(|i| from + i + "Bearer ".len())
        {
            let end = out[at..]
                .find(|c: char| c.is_whitespace() || c == '"' || c == ',')
                .map_or(out.len(), |i| at + i);
            out.replace_range(at..end, "<hidden>");
            from = at + "<hidden>".len();
        }
        out
    }

    /// The token, for the one place that sends it (the `Authorization` header).
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// From `--token-file` when given, else `$LICHESS_TOKEN` (the value of the variable,
    /// passed in).
    pub fn load(file: Option<&Path>, env: Option<String>) -> Result<Token, TokenError> {
        match (file, env) {
            (Some(path), _) => Token::from_file(path),
            (None, Some(v)) => Token::parse(&v).ok_or(TokenError::EmptyEnv),
            (None, None) => Err(TokenError::Missing),
        }
    }

    /// The first line of a file only its owner can read.
    pub fn from_file(path: &Path) -> Result<Token, TokenError> {
        use std::os::unix::fs::PermissionsExt;
        let shown = path.display().to_string();
        let err = |why: String| TokenError::File {
            path: shown.clone(),
            why,
        };
        let meta = std::fs::metadata(path).map_err(|e| err(e.to_string()))?;
        if !meta.is_file() {
            return Err(err("not a regular file".into()));
        }
        let mode = meta.permissions().mode() & 0o777;
        let who = match (mode & 0o070 != 0, mode & 0o007 != 0) {
            (_, true) => Some("everyone"),
            (true, false) => Some("its group"),
            (false, false) => None,
        };
        if let Some(who) = who {
            return Err(TokenError::Readable {
                path: shown,
                who,
                mode,
            });
        }
        let text = crate::bounded_read::read_text(path, crate::bounded_read::SECRET)
            .map_err(|e| err(e.to_string()))?;
        Token::parse(&text).ok_or_else(|| err("holds no token (its first line is empty)".into()))
    }

    /// The first line, trimmed; `None` when empty. A token is one printable word.
    fn parse(text: &str) -> Option<Token> {
        let t = text.lines().next().unwrap_or("").trim();
        (!t.is_empty() && t.chars().all(|c| c.is_ascii_graphic())).then(|| Token(t.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn redacted_from_what_a_server_echoes() {
        let t = Token("lip_secret123".into());
        assert_eq!(
            t.redact("authorization: Bearer lip_secret123\nx-echo: lip_secret123, Bearer other\"}"),
            "authorization: Bearer <hidden>\nx-echo: <hidden>, Bearer <hidden>\"}"
        );
        assert_eq!(t.redact("nothing here"), "nothing here");
    }

    #[test]
    fn from_a_private_file_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "lip_secret123\n").unwrap();
        for (mode, who) in [
            (0o644, "everyone"),
            (0o640, "its group"),
            (0o604, "everyone"),
        ] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            let e = Token::from_file(&path).unwrap_err();
            assert!(
                matches!(e, TokenError::Readable { who: w, .. } if w == who),
                "{e}"
            );
            assert!(e.to_string().contains("chmod 600") && !e.to_string().contains("secret123"));
        }
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let t = Token::from_file(&path).unwrap();
        assert_eq!(t.expose(), "lip_secret123");
        assert!(!format!("{t:?} {t}").contains("secret"));
        std::fs::write(&path, "\n").unwrap();
        assert!(
            Token::from_file(&path)
                .unwrap_err()
                .to_string()
                .contains("no token")
        );
        assert!(matches!(
            Token::from_file(&dir.path().join("none")),
            Err(TokenError::File { .. })
        ));
        // A private file of gigabytes (a wrong path) is not read into memory.
        let big = std::fs::File::create(&path).unwrap();
        big.set_len(1 << 30).unwrap();
        let e = Token::from_file(&path).unwrap_err().to_string();
        assert!(e.contains("never ends") && e.contains("token"), "{e}");
    }

    #[test]
    fn from_the_environment() {
        assert_eq!(
            Token::load(None, Some(" lip_x ".into())).unwrap().expose(),
            "lip_x"
        );
        assert_eq!(
            Token::load(None, Some("".into())),
            Err(TokenError::EmptyEnv)
        );
        assert_eq!(Token::load(None, None), Err(TokenError::Missing));
    }
}
