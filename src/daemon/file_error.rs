//! The error of a failed operation on one of the daemon's files: which kind of file, its
//! path, what was being done and the OS error — written once for the journal, the PGN
//! files, the round folders and the serial recordings.
//!
//! The kind is a type parameter (a marker implementing [`FileKind`]), so each store keeps
//! an error type of its own (`JournalError`, `PgnFileError`, ...) that says which file failed
//! in signatures and messages, while the type and its message are written once.

use std::fmt::Debug;
use std::io;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

/// A kind of file the daemon writes, named in its error messages.
pub trait FileKind: Debug {
    /// How the message names the file, e.g. `game journal`.
    const NAME: &'static str;
}

/// Declares the marker of a kind of file (`$kind`, named `$name` in messages) and the error
/// type of its failures (`$error`, a [`FileError`] of that kind), documented by `$doc`.
macro_rules! file_kind {
    ($(#[$doc:meta])* $error:ident, $kind:ident, $name:literal) => {
        #[doc = concat!("A ", $name, ", as [`FileError`](super::file_error::FileError) names it.")]
        #[derive(Debug)]
        pub struct $kind;
        impl super::file_error::FileKind for $kind {
            const NAME: &'static str = $name;
        }
        $(#[$doc])*
        pub type $error = super::file_error::FileError<$kind>;
    };
}
pub(crate) use file_kind;

/// A failed operation on a file of kind `K`: "`<kind> <path>: cannot <action>: <error>`".
#[derive(Debug, thiserror::Error)]
#[error("{} {}: cannot {action}: {source}", K::NAME, path.display())]
pub struct FileError<K: FileKind> {
    pub path: PathBuf,
    pub action: &'static str,
    #[source]
    pub source: io::Error,
    kind: PhantomData<K>,
}

impl<K: FileKind> FileError<K> {
    pub fn new(path: PathBuf, action: &'static str, source: io::Error) -> Self {
        FileError {
            path,
            action,
            source,
            kind: PhantomData,
        }
    }

    /// For `map_err`: the I/O error of `action` on `path`.
    pub fn at<'a>(path: &'a Path, action: &'static str) -> impl FnOnce(io::Error) -> Self + 'a {
        move |source| Self::new(path.to_path_buf(), action, source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Example;
    impl FileKind for Example {
        const NAME: &'static str = "example file";
    }

    #[test]
    fn the_message_names_the_kind_the_file_the_action_and_the_cause() {
        let e = FileError::<Example>::at(Path::new("/x/y"), "write to it")(io::Error::from(
            io::ErrorKind::PermissionDenied,
        ));
        assert_eq!(
            e.to_string(),
            "example file /x/y: cannot write to it: permission denied"
        );
        assert_eq!(e.action, "write to it");
        assert_eq!(e.source.kind(), io::ErrorKind::PermissionDenied);
    }
}
