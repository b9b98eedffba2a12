//! Method arguments over the contract's bounds (`contract::limits`) are refused before the
//! method runs, with `org.eboardd.Bridge1.Error.InvalidArgument` naming the argument, its size
//! and its bound — never its content. An error that echoed a 40 MB argument would be larger
//! than the bus carries, and the bus answers an oversized message by dropping the sender: the
//! daemon, with every board it serves.
//!
//! [`signature::Checked`](super::signature::Checked) calls [`oversized`] for every call of a
//! contract method once its signature has been checked, so one gate covers both interfaces and
//! every method; what passes it is small enough to be logged, journaled and quoted.

use std::collections::HashMap;

use zbus::Message;
use zbus::ObjectPath;

use eboard_core::contract::limits::{self, Bound, Oversized, check_count, check_item, check_text};

/// An argument as the bounds see it: its strings, borrowed from the message.
enum Argument<'m> {
    Text(&'m str),
    List(Vec<&'m str>),
    Dict(Vec<(&'m str, &'m str)>),
}

/// Why the call `msg` of the contract method `method` cannot be taken: an argument over its
/// bound. `None` when every argument fits, for a method the contract does not have, and for a
/// body that does not read as the method's arguments (the signature check answers that).
pub fn oversized(method: &str, msg: &Message) -> Option<Oversized> {
    let bounds = limits::bounds_of(method)?;
    if bounds.is_empty() {
        return None;
    }
    let body = msg.body();
    let signature: String = eboard_core::contract::METHODS
        .iter()
        .find(|m| m.name == method)?
        .inputs
        .iter()
        .map(|(_, t)| *t)
        .collect();
    // The contract's argument shapes; the strings stay in the message (no copy of a big one).
    let path: ObjectPath<'_>;
    let args: Vec<Argument<'_>> = match signature.as_str() {
        "s" => vec![Argument::Text(body.deserialize::<&str>().ok()?)],
        "o" => {
            path = body.deserialize::<ObjectPath<'_>>().ok()?;
            vec![Argument::Text(path.as_str())]
        }
        "ss" => {
            let (a, b) = body.deserialize::<(&str, &str)>().ok()?;
            vec![Argument::Text(a), Argument::Text(b)]
        }
        "sss" => {
            let (a, b, c) = body.deserialize::<(&str, &str, &str)>().ok()?;
            vec![Argument::Text(a), Argument::Text(b), Argument::Text(c)]
        }
        "as" => vec![Argument::List(body.deserialize::<Vec<&str>>().ok()?)],
        "a{ss}" => vec![Argument::Dict(
            body.deserialize::<HashMap<&str, &str>>()
                .ok()?
                .into_iter()
                .collect(),
        )],
        other => {
            tracing::warn!(
                method,
                signature = other,
                "no bounds check for this signature"
            );
            return None;
        }
    };
    bounds
        .iter()
        .zip(&args)
        .find_map(|(&(name, bound), arg)| check(method, name, bound, arg).err())
}

/// One argument against its bound.
fn check(method: &str, name: &str, bound: Bound, arg: &Argument<'_>) -> Result<(), Oversized> {
    match (bound, arg) {
        (Bound::Text(max), Argument::Text(s)) => check_text(method, name, s.len(), max),
        (Bound::List { items, each }, Argument::List(list)) => {
            check_count(method, name, list.len(), items)?;
            list.iter().enumerate().try_for_each(|(i, s)| {
                check_item(
                    method,
                    format_args!("item {} of the {name}", i + 1),
                    s.len(),
                    each,
                )
            })
        }
        (
            Bound::Dict {
                entries,
                key,
                value,
            },
            Argument::Dict(dict),
        ) => {
            check_count(method, name, dict.len(), entries)?;
            // In key order, so the same call is always refused for the same entry.
            let mut dict = dict.clone();
            dict.sort_unstable();
            dict.iter().try_for_each(|(k, v)| {
                let shown = limits::excerpt(k);
                check_item(
                    method,
                    format_args!("`{shown}` is not a PGN tag name: it"),
                    k.len(),
                    key,
                )?;
                check_item(
                    method,
                    format_args!("the value of `{shown}`"),
                    v.len(),
                    value,
                )
            })
        }
        // The table and the shapes above are checked against each other by the contract's
        // tests; a mismatch lets the call through to the method's own checks.
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call<B>(member: &str, body: &B) -> Message
    where
        B: serde::Serialize + zbus::zvariant::DynamicType,
    {
        Message::method_call("/org/eboardd/Bridge1/Board/b", member)
            .interface("org.eboardd.Bridge1.Board")
            .build(body)
            .expect("a method call")
    }

    #[test]
    fn every_shape_is_bounded_and_the_refusal_names_no_content() {
        let big = "Q".repeat(100_000);
        let refused = [
            oversized("ShowClockMessage", &call("ShowClockMessage", &(&big,))),
            oversized("SetRules", &call("SetRules", &(&big,))),
            oversized("Adjudicate", &call("Adjudicate", &("1-0", &big))),
            oversized("AcceptClaim", &call("AcceptClaim", &("white", "x", &big))),
            oversized("RejectClaim", &call("RejectClaim", &(&big, "x", ""))),
            oversized("ResolveGap", &call("ResolveGap", &(vec!["e2e4", &big],))),
            oversized(
                "ResolveGap",
                &call("ResolveGap", &(vec!["e2e4"; limits::MOVES_MAX + 1],)),
            ),
            oversized(
                "SetTags",
                &call("SetTags", &(HashMap::from([("White", big.as_str())]),)),
            ),
            oversized(
                "SetTags",
                &call("SetTags", &(HashMap::from([(big.as_str(), "x")]),)),
            ),
            oversized("AddBoard", &call("AddBoard", &(&big,))),
        ];
        for r in refused {
            let r = r.expect("refused");
            assert!(
                r.0.len() < 300
                    && !r.0.contains(
                        "QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ"
                    ),
                "{r}"
            );
        }
        let path = ObjectPath::try_from(format!("/org/eboardd/Bridge1/Board/{}", "b".repeat(300)))
            .unwrap();
        assert!(oversized("RemoveBoard", &call("RemoveBoard", &(path,))).is_some());
        // What fits goes through.
        assert!(oversized("Adjudicate", &call("Adjudicate", &("1-0", "resigned"))).is_none());
        assert!(
            oversized(
                "SetTags",
                &call("SetTags", &(HashMap::from([("White", "A")]),))
            )
            .is_none()
        );
        assert!(oversized("NewGame", &call("NewGame", &())).is_none());
        assert!(oversized("ResolveGap", &call("ResolveGap", &(Vec::<&str>::new(),))).is_none());
    }
}
