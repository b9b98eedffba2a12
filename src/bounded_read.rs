//! Reading a file someone named — a configuration, a capture, a pairings file, a PGN — within a
//! bound. A path may be anything: `/dev/zero` or `/dev/urandom` never end, and a file of
//! gigabytes would be read into memory whole. Each kind of file has a documented bound (see
//! the README's "Limits") far above any real one; past it the read stops and the caller gets
//! a named error, never a hang on an endless stream or a process eating the machine's memory.

use std::fmt;
use std::io::Read as _;
use std::path::Path;

/// A kind of file and the most bytes read of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileBound {
    /// What the file is, for the message ("configuration").
    pub what: &'static str,
    /// The most bytes read.
    pub max: u64,
}

/// eboardd's and eboardctl's `--config`: the configuration of 200 boards is under 100 KB.
pub const CONFIG: FileBound = FileBound {
    what: "configuration file",
    max: 1 << 20,
};
/// `eboardctl decode` and `replay`: a day's recording of one board is a few megabytes.
pub const CAPTURE: FileBound = FileBound {
    what: "capture",
    max: 64 << 20,
};
/// `eboardctl simulate --pgn`: a collection of tens of thousands of games.
pub const PGN: FileBound = FileBound {
    what: "PGN file",
    max: 64 << 20,
};
/// `eboardctl pairings`: a TRF of a 2,000-player open over 15 rounds is well under a megabyte.
pub const PAIRINGS: FileBound = FileBound {
    what: "pairings file",
    max: 8 << 20,
};

/// `--token-file`, `--password-file`: one line of a secret; a real one is under 1 KB.
pub const SECRET: FileBound = FileBound {
    what: "token or password file",
    max: 64 << 10,
};
/// `--ca`: a PEM bundle; the whole of a system's CA store is about 200 KB.
pub const CERTIFICATES: FileBound = FileBound {
    what: "certificate file",
    max: 4 << 20,
};
/// A running broadcast's state file (its round, its pid): a few hundred bytes.
pub const BROADCAST_STATE: FileBound = FileBound {
    what: "broadcast state file",
    max: 64 << 10,
};

/// Why a bounded read failed.
#[derive(Debug)]
pub enum ReadError {
    /// The file could not be opened or read.
    Io(std::io::Error),
    /// It holds more than its bound (or never ends).
    TooLarge(FileBound),
    /// It is not UTF-8 text; `line` is where the first bad byte is (from 1).
    NotUtf8 { line: usize },
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "cannot read it: {e}"),
            ReadError::TooLarge(bound) => write!(
                f,
                "larger than {}, which no {} is (or it never ends); not read",
                size(bound.max),
                bound.what
            ),
            ReadError::NotUtf8 { line } => {
                write!(f, "line {line}: not UTF-8 text (save the file as UTF-8)")
            }
        }
    }
}

impl std::error::Error for ReadError {}

/// `n` bytes for a person: whole MiB or KiB.
fn size(n: u64) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} bytes")
    }
}

/// The bytes of `path`, at most `bound.max` of them.
pub fn read_bytes(path: &Path, bound: FileBound) -> Result<Vec<u8>, ReadError> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(bound.max + 1).read_to_end(&mut bytes))
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > bound.max {
        return Err(ReadError::TooLarge(bound));
    }
    Ok(bytes)
}

/// The UTF-8 text of `path`, at most `bound.max` bytes of it.
pub fn read_text(path: &Path, bound: FileBound) -> Result<String, ReadError> {
    String::from_utf8(read_bytes(path, bound)?).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        ReadError::NotUtf8 {
            line: good.iter().filter(|&&b| b == b'\n').count() + 1,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_file_is_cut_at_its_bound_and_named() {
        let small = FileBound {
            what: "test file",
            max: 4096,
        };
        let e = read_text(Path::new("/dev/zero"), small).unwrap_err();
        assert_eq!(
            e.to_string(),
            "larger than 4 KiB, which no test file is (or it never ends); not read"
        );
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"a\nb\xff").unwrap();
        assert_eq!(
            read_text(&file, small).unwrap_err().to_string(),
            "line 2: not UTF-8 text (save the file as UTF-8)"
        );
        std::fs::write(&file, "ok").unwrap();
        assert_eq!(read_text(&file, small).unwrap(), "ok");
        assert!(matches!(
            read_text(&dir.path().join("none"), small),
            Err(ReadError::Io(_))
        ));
        assert_eq!(size(CONFIG.max), "1 MiB");
    }
}
