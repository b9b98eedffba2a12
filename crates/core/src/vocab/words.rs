//! The machinery every word enum shares: the [`UnknownWord`] parse error and the `words!`
//! macro that gives an enum its contract strings, `Display`, `FromStr`, serde and
//! comparisons with `str`.

use std::fmt;

/// A string that is not one of a word's accepted spellings; says which words are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownWord {
    /// What was being parsed (`rules`, `player`, ...).
    pub what: &'static str,
    /// The string given, as an excerpt ([`super::excerpt`]): a refusal never carries more of
    /// it than that.
    pub word: String,
    /// Every accepted word, in the order the contract lists them.
    pub accepted: &'static [&'static str],
}

impl fmt::Display for UnknownWord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown {} \"{}\"; expected ", self.what, self.word)?;
        let n = self.accepted.len();
        for (i, w) in self.accepted.iter().enumerate() {
            if i > 0 {
                f.write_str(if i + 1 == n { " or " } else { ", " })?;
            }
            write!(f, "{w:?}")?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownWord {}

/// Defines a word enum: each variant with its one contract spelling.
macro_rules! words {
    (
        $(#[$meta:meta])*
        pub enum $name:ident ($what:literal) {
            $( $(#[$vmeta:meta])* $var:ident = $word:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $( $(#[$vmeta])* $var, )+
        }

        impl $name {
            /// Every word, in the contract's order.
            pub const ALL: &'static [$name] = &[$($name::$var),+];
            /// Every spelling, in the contract's order.
            pub const WORDS: &'static [&'static str] = &[$($word),+];

            /// The contract's spelling.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$var => $word,)+
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.pad(self.as_str())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::vocab::UnknownWord;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                $( if s == $word { return Ok($name::$var); } )+
                Err($crate::vocab::UnknownWord {
                    what: $what,
                    word: $crate::vocab::excerpt(s),
                    accepted: $name::WORDS,
                })
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.as_str() == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }

        impl PartialEq<$name> for &str {
            fn eq(&self, other: &$name) -> bool {
                *self == other.as_str()
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl ::serde::de::Visitor<'_> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        write!(f, "one of {:?}", $name::WORDS)
                    }
                    fn visit_str<E: ::serde::de::Error>(self, v: &str) -> Result<$name, E> {
                        v.parse().map_err(E::custom)
                    }
                }
                d.deserialize_str(V)
            }
        }
    };
}
