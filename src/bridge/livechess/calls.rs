//! The WebSocket call protocol (contract section 8): a text frame read into a typed
//! [`Call`], and the three envelopes of what is sent back (call answers, errors, feed
//! messages). Pure: the time is passed in.
//!
//! A frame that cannot be read is an [`CallError`] with the request's `id` when there is one
//! (`null` otherwise) and a sentence saying what is wrong; the connection stays open.

use serde_json::{Value, json};

/// The one feed LiveChess offers on a board.
pub const EBOARD_FEED: &str = "eboardevent";

/// What a client asked for.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// `eboards`: the boards.
    Eboards,
    /// `sources`: the ports the boards are on.
    Sources,
    /// `subscribe` feed `feed` to the board with this `serialnr`.
    Subscribe { feed: Value, serialnr: String },
    /// `unsubscribe` feed `feed`.
    Unsubscribe { feed: Value },
    /// `call` `setup` on feed `feed`'s board: restart its game from `fen`.
    Setup { feed: Value, fen: String },
    /// `call` `flip` on feed `feed`'s board: reversed (`true`) or normal.
    Flip { feed: Value, flip: bool },
}

/// A request with its id (echoed as the client sent it: a number stays the same number).
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub id: Value,
    pub request: Request,
}

/// A request that cannot be served, with the id to answer it under.
#[derive(Debug, Clone, PartialEq)]
pub struct CallError {
    pub id: Value,
    pub message: String,
}

impl CallError {
    pub fn new(id: &Value, message: impl Into<String>) -> CallError {
        CallError {
            id: id.clone(),
            message: message.into(),
        }
    }
}

/// Reads one text frame.
pub fn parse(text: &str) -> Result<Call, CallError> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| CallError::new(&Value::Null, format!("the request is not JSON: {e}")))?;
    let Some(obj) = value.as_object() else {
        return Err(CallError::new(
            &Value::Null,
            "a request is a JSON object {\"id\", \"call\", \"param\"}",
        ));
    };
    let id = obj.get("id").cloned().unwrap_or(Value::Null);
    if !(id.is_number() || id.is_string()) {
        return Err(CallError::new(&id, "the request has no \"id\" number"));
    }
    let call = obj
        .get("call")
        .and_then(Value::as_str)
        .ok_or_else(|| CallError::new(&id, "the request has no \"call\" name"))?;
    let param = obj.get("param").unwrap_or(&Value::Null);
    let request = match call {
        "eboards" => Request::Eboards,
        "sources" => Request::Sources,
        "subscribe" => subscribe(&id, param)?,
        "unsubscribe" => Request::Unsubscribe {
            feed: feed_id(&id, param)?,
        },
        "call" => method(&id, param)?,
        other => {
            return Err(CallError::new(
                &id,
                format!(
                    "unknown call {other:?}: the calls are eboards, sources, subscribe, \
                     unsubscribe and call"
                ),
            ));
        }
    };
    Ok(Call { id, request })
}

/// The feed id `param.id` (a number or a string, kept as sent).
fn feed_id(id: &Value, param: &Value) -> Result<Value, CallError> {
    match param.get("id") {
        Some(f) if f.is_number() || f.is_string() => Ok(f.clone()),
        _ => Err(CallError::new(id, "\"param\" needs the feed's \"id\"")),
    }
}

fn subscribe(id: &Value, param: &Value) -> Result<Request, CallError> {
    let feed_name = param.get("feed").and_then(Value::as_str).unwrap_or("");
    if feed_name != EBOARD_FEED {
        return Err(CallError::new(
            id,
            format!("unknown feed {feed_name:?}: the one feed is \"{EBOARD_FEED}\""),
        ));
    }
    let feed = feed_id(id, param)?;
    let serialnr = match param.get("param").and_then(|p| p.get("serialnr")) {
        Some(Value::String(s)) => s.clone(),
        // Some clients send the serial number as a number.
        Some(Value::Number(n)) => n.to_string(),
        _ => {
            return Err(CallError::new(
                id,
                "subscribe needs \"param\": {\"serialnr\": S} naming the board",
            ));
        }
    };
    Ok(Request::Subscribe { feed, serialnr })
}

fn method(id: &Value, param: &Value) -> Result<Request, CallError> {
    let feed = feed_id(id, param)?;
    let args = param.get("param").unwrap_or(&Value::Null);
    match param.get("method").and_then(Value::as_str).unwrap_or("") {
        "setup" => match args.get("fen").and_then(Value::as_str) {
            Some(fen) => Ok(Request::Setup {
                feed,
                fen: fen.to_owned(),
            }),
            None => Err(CallError::new(id, "setup needs \"param\": {\"fen\": FEN}")),
        },
        "flip" => match args.get("flip").and_then(Value::as_bool) {
            Some(flip) => Ok(Request::Flip { feed, flip }),
            None => Err(CallError::new(
                id,
                "flip needs \"param\": {\"flip\": true or false}",
            )),
        },
        other => Err(CallError::new(
            id,
            format!("unknown method {other:?}: the methods are setup and flip"),
        )),
    }
}

/// `{"response": "call", "id", "param", "time"}`.
pub fn answer(id: &Value, param: Value, now_ms: u64) -> Value {
    json!({"response": "call", "id": id, "param": param, "time": now_ms})
}

/// `{"response": "error", "id", "param": {"message"}, "time"}`.
pub fn error(err: &CallError, now_ms: u64) -> Value {
    json!({"response": "error", "id": err.id, "param": {"message": err.message}, "time": now_ms})
}

/// `{"response": "feed", "id": F, "param": EVENT, "time"}`.
pub fn feed(feed: &Value, event: Value, now_ms: u64) -> Value {
    json!({"response": "feed", "id": feed, "param": event, "time": now_ms})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lichess_handshake_parses() {
        assert_eq!(
            parse(r#"{"id":1,"call":"eboards"}"#),
            Ok(Call {
                id: json!(1),
                request: Request::Eboards
            })
        );
        assert_eq!(
            parse(
                r#"{"id":2,"call":"subscribe","param":{"feed":"eboardevent","id":1,"param":{"serialnr":"7425"}}}"#
            ),
            Ok(Call {
                id: json!(2),
                request: Request::Subscribe {
                    feed: json!(1),
                    serialnr: "7425".into()
                }
            })
        );
        let fen = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        assert_eq!(
            parse(&format!(
                r#"{{"id":3,"call":"call","param":{{"id":1,"method":"setup","param":{{"fen":"{fen}"}}}}}}"#
            ))
            .unwrap()
            .request,
            Request::Setup {
                feed: json!(1),
                fen: fen.into()
            }
        );
        assert_eq!(
            parse(
                r#"{"id":4,"call":"call","param":{"id":1,"method":"flip","param":{"flip":true}}}"#
            )
            .unwrap()
            .request,
            Request::Flip {
                feed: json!(1),
                flip: true
            }
        );
        assert_eq!(
            parse(r#"{"id":5,"call":"unsubscribe","param":{"id":1}}"#)
                .unwrap()
                .request,
            Request::Unsubscribe { feed: json!(1) }
        );
    }

    #[test]
    fn bad_requests_are_named_errors_with_their_id() {
        let cases = [
            ("not json", Value::Null, "not JSON"),
            ("[1]", Value::Null, "JSON object"),
            (r#"{"call":"eboards"}"#, Value::Null, "no \"id\""),
            (r#"{"id":7}"#, json!(7), "no \"call\""),
            (r#"{"id":7,"call":"dance"}"#, json!(7), "unknown call"),
            (
                r#"{"id":7,"call":"subscribe","param":{"feed":"x","id":1}}"#,
                json!(7),
                "unknown feed",
            ),
            (
                r#"{"id":7,"call":"subscribe","param":{"feed":"eboardevent","id":1}}"#,
                json!(7),
                "serialnr",
            ),
            (
                r#"{"id":7,"call":"call","param":{"id":1,"method":"erase"}}"#,
                json!(7),
                "unknown method",
            ),
            (
                r#"{"id":7,"call":"call","param":{"id":1,"method":"setup","param":{}}}"#,
                json!(7),
                "fen",
            ),
            (
                r#"{"id":7,"call":"call","param":{"method":"flip","param":{"flip":true}}}"#,
                json!(7),
                "feed's \"id\"",
            ),
        ];
        for (text, id, words) in cases {
            let err = parse(text).expect_err(text);
            assert_eq!(err.id, id, "{text}");
            assert!(err.message.contains(words), "{text}: {}", err.message);
        }
    }

    #[test]
    fn envelopes_have_the_contract_keys_and_echo_the_number() {
        let a = answer(&json!(1), Value::Null, 9);
        assert_eq!(
            a,
            json!({"response": "call", "id": 1, "param": null, "time": 9})
        );
        let e = error(&CallError::new(&json!(2.5), "no"), 9);
        assert_eq!(
            e,
            json!({"response": "error", "id": 2.5, "param": {"message": "no"}, "time": 9})
        );
        let f = feed(&json!(1), json!({}), 9);
        assert_eq!(
            f,
            json!({"response": "feed", "id": 1, "param": {}, "time": 9})
        );
    }
}
