//! Serde for an optional [`Termination`] as the journal has always written it: the word, or
//! an empty string while the game is on.

use serde::{Deserialize, Deserializer, Serializer};

use super::Termination;

/// `Option<Termination>` as a string (`""`: none). Use with `#[serde(with = ...)]`.
pub mod word {
    use super::*;

    pub fn serialize<S: Serializer>(t: &Option<Termination>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(t.map_or("", Termination::as_str))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Termination>, D::Error> {
        let s = std::borrow::Cow::<str>::deserialize(d)?;
        if s.is_empty() {
            Ok(None)
        } else {
            s.parse().map(Some).map_err(serde::de::Error::custom)
        }
    }
}

/// A change of `Option<Termination>` in a patch: absent (no change) or the new value as
/// [`word`] writes it. Use with `#[serde(default, skip_serializing_if = "Option::is_none",
/// with = ...)]`.
pub mod change {
    use super::*;

    pub fn serialize<S: Serializer>(
        t: &Option<Option<Termination>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match t {
            Some(t) => word::serialize(t, s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Option<Termination>>, D::Error> {
        word::deserialize(d).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Rec {
        #[serde(with = "word")]
        t: Option<Termination>,
        #[serde(default, skip_serializing_if = "Option::is_none", with = "change")]
        c: Option<Option<Termination>>,
    }

    #[test]
    fn none_is_the_empty_string_and_a_change_may_be_absent() {
        let r = Rec { t: None, c: None };
        assert_eq!(serde_json::to_string(&r).unwrap(), r#"{"t":""}"#);
        let r = Rec {
            t: Some(Termination::Checkmate),
            c: Some(None),
        };
        let j = serde_json::to_string(&r).unwrap();
        assert_eq!(j, r#"{"t":"checkmate","c":""}"#);
        assert_eq!(serde_json::from_str::<Rec>(&j).unwrap(), r);
        assert_eq!(
            serde_json::from_str::<Rec>(r#"{"t":"","c":"claim"}"#).unwrap(),
            Rec {
                t: None,
                c: Some(Some(Termination::Claim))
            }
        );
        assert!(serde_json::from_str::<Rec>(r#"{"t":"resigned"}"#).is_err());
    }
}
