//! Hostile calls: every method of both interfaces called with a wrong signature (an extra
//! argument, a missing one, a wrong type, its arguments wrapped in one struct) is refused with
//! `org.freedesktop.DBus.Error.InvalidArgs` and changes nothing.
//!
//! The methods and their input signatures are read from the shipped introspection XML, so a
//! method added there is attacked too. The calls are raw (`Connection::call_method` with a
//! body built from the signature); the same builder makes a correct call of each signature
//! first, which must get past the check, so a broken builder cannot make the test pass.
//! The board has one move played, so a `TakeBack` that slipped through would show.

mod common;

use std::collections::HashMap;
use std::str::FromStr;

use common::events::{Ev, Event, Events};
use common::proxies;
use common::rig::{SimRig, moves};
use common::{WAIT, within};
use zbus::wire::StructureBuilder;
use zbus::{ObjectPath, Signature, Structure, Variant as Value};

const BUS_NAME: &str = "org.eboardd.Bridge1";
const MANAGER_PATH: &str = "/org/eboardd/Bridge1";
const INVALID_ARGS: &str = "org.freedesktop.DBus.Error.InvalidArgs";

/// The D-Bus name and message of a failed call (zbus turns the `org.freedesktop.DBus` names
/// into `Error::FDO`, the others into `Error::MethodError`).
fn dbus_error(e: &zbus::Error) -> (String, String) {
    use zbus::DBusError as _;
    match e {
        zbus::Error::FDO(fdo) => (
            fdo.name().to_string(),
            fdo.description().unwrap_or("").into(),
        ),
        zbus::Error::MethodError(name, message, _) => {
            (name.to_string(), message.clone().unwrap_or_default())
        }
        other => (format!("not a method error: {other}"), String::new()),
    }
}

/// `(interface, object path, shipped XML file)`; the board's path is filled in per test.
fn interfaces(board_path: &str) -> [(&'static str, String, &'static str); 2] {
    [
        (
            "org.eboardd.Bridge1",
            MANAGER_PATH.to_owned(),
            include_str!("../dbus/org.eboardd.Bridge1.xml"),
        ),
        (
            "org.eboardd.Bridge1.Board",
            board_path.to_owned(),
            include_str!("../dbus/org.eboardd.Bridge1.Board.xml"),
        ),
    ]
}

/// Each method of `iface` in the XML with its input argument types, in order.
fn methods(xml: &str, iface: &str) -> Vec<(String, Vec<String>)> {
    let members = common::xml::interface_members(xml, iface)
        .unwrap_or_else(|| panic!("{iface} is not in its XML file"));
    members
        .iter()
        .filter_map(|m| m.strip_prefix("method "))
        .map(|m| {
            let (name, args) = m.split_once('(').expect("method(args)");
            let inputs = args
                .trim_end_matches(')')
                .split(", ")
                .filter_map(|a| a.strip_prefix("in "))
                .map(|a| a.rsplit(' ').next().expect("in name type").to_owned())
                .collect();
            (name.to_owned(), inputs)
        })
        .collect()
}

/// A value of D-Bus type `ty` (the types the contract's methods take, `u` for a wrong one, and
/// a struct of those).
fn value_of(ty: &str, board_path: &str) -> Value<'static> {
    match ty {
        s if s.starts_with('(') => {
            let Ok(Signature::Structure(fields)) = Signature::from_str(s) else {
                panic!("{s} is not a struct signature")
            };
            let fields: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
            Value::from(body(&fields, board_path).expect("a struct has fields"))
        }
        "s" => Value::from("hostile"),
        "u" => Value::from(7u32),
        "as" => Value::from(vec!["e7e5".to_owned()]),
        "a{ss}" => Value::from(HashMap::from([("Event".to_owned(), "x".to_owned())])),
        "o" => Value::from(ObjectPath::try_from(board_path.to_owned()).expect("path")),
        other => panic!("no test value for type {other}: add one"),
    }
}

/// The body of a call with arguments of `types`.
fn body(types: &[String], board_path: &str) -> Option<Structure<'static>> {
    if types.is_empty() {
        return None;
    }
    let builder = types.iter().fold(StructureBuilder::new(), |b, ty| {
        b.append_field(value_of(ty, board_path))
    });
    Some(builder.build().expect("a structure"))
}

async fn call(
    conn: &zbus::Connection,
    path: &str,
    iface: &str,
    method: &str,
    types: &[String],
    board_path: &str,
) -> zbus::Result<zbus::Message> {
    let call = async {
        match body(types, board_path) {
            Some(body) => {
                conn.call_method(Some(BUS_NAME), path, Some(iface), method, &body)
                    .await
            }
            None => {
                conn.call_method(Some(BUS_NAME), path, Some(iface), method, &())
                    .await
            }
        }
    };
    within(WAIT, method, call).await
}

/// How the calls with the arguments wrapped in one struct are named.
const WRAPPED: &str = "its arguments wrapped in one struct";

/// The wrong signatures tried for a method taking `inputs`.
fn wrong_signatures(inputs: &[String]) -> Vec<(&'static str, Vec<String>)> {
    let mut wrong = Vec::new();
    let mut extra = inputs.to_vec();
    extra.push("s".into());
    wrong.push(("an extra string", extra));
    let mut extra_type = inputs.to_vec();
    extra_type.push("u".into());
    wrong.push(("an extra number", extra_type));
    if !inputs.is_empty() {
        wrong.push((
            "the last argument missing",
            inputs[..inputs.len() - 1].to_vec(),
        ));
        let mut retyped = inputs.to_vec();
        retyped[0] = if inputs[0] == "u" { "s" } else { "u" }.into();
        wrong.push(("a number for the first argument", retyped));
        // zbus reads `(ss)` and `ss` the same way and the bodies are the same bytes: only the
        // signature string in the header tells them apart.
        wrong.push((WRAPPED, vec![format!("({})", inputs.concat())]));
    }
    wrong
}

/// What an observer sees of the game and the rig.
#[derive(Debug, PartialEq)]
struct Observed {
    fen: String,
    moves: Vec<String>,
    result: String,
    rules: String,
    pgn: String,
    boards: Vec<String>,
}

async fn observe(conn: &zbus::Connection, id: &str) -> Observed {
    let b = proxies::fresh(conn, id).await;
    let manager = zbus::fdo::ObjectManagerProxy::builder(conn)
        .destination(BUS_NAME)
        .path(MANAGER_PATH)
        .build()
        .await
        .expect("object manager");
    let mut boards: Vec<String> = manager
        .get_managed_objects()
        .await
        .expect("GetManagedObjects")
        .keys()
        .map(|p| p.to_string())
        .collect();
    boards.sort();
    Observed {
        fen: b.fen().await.expect("Fen"),
        moves: b.moves().await.expect("Moves"),
        result: b.result().await.expect("Result"),
        rules: b.rules().await.expect("Rules"),
        pgn: b.pgn().await.expect("Pgn"),
        boards,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_signatures_are_refused_with_invalid_args_and_change_nothing() {
    let rig = SimRig::start(&["sig.1"], &[]).await;
    let conn = rig.bus.client().await;
    let id = "sig_1";
    let board_path = format!("{MANAGER_PATH}/Board/{id}");
    let mut events = Events::start(&conn, id).await;
    rig.sims[0]
        .wait_for_update_mode(WAIT)
        .await
        .expect("the daemon puts the board in update mode");
    events.next_signal("GameStarted").await;
    rig.scenario(0, 3)
        .run(&[moves(&["e4"])])
        .await
        .expect("e4 played");
    events
        .wait_until("e4", |all| {
            all.iter()
                .any(|e| matches!(e, Ev::Signal(Event::MovePlayed { san, .. }) if san == "e4"))
        })
        .await;
    let before = observe(&conn, id).await;
    assert_eq!(before.moves, ["e4"], "{before:?}");

    let mut refused = 0;
    let (mut wrapped, mut taking_args) = (Vec::new(), Vec::new());
    for (iface, path, xml) in interfaces(&board_path) {
        let methods = methods(xml, iface);
        assert!(methods.len() >= 2, "{iface}: {methods:?}");
        taking_args.extend(
            methods
                .iter()
                .filter(|(_, i)| !i.is_empty())
                .map(|(m, _)| m.clone()),
        );
        for (method, inputs) in &methods {
            for (how, types) in wrong_signatures(inputs) {
                let what = format!("{iface}.{method} with {how} ({})", types.concat());
                let e = call(&conn, &path, iface, method, &types, &board_path)
                    .await
                    .expect_err(&format!("{what} was accepted"));
                let (name, answer) = dbus_error(&e);
                assert_eq!(name, INVALID_ARGS, "{what}: {e}");
                assert!(
                    answer.contains(&inputs.concat()) && answer.contains(method.as_str()),
                    "{what}: the answer names the method and its signature: {answer}"
                );
                refused += 1;
                if how == WRAPPED {
                    wrapped.push(method.clone());
                }
            }
        }
    }
    assert!(refused >= 35, "only {refused} wrong calls made");
    // Every method that takes arguments was called with them in a struct, those taking
    // several (where zbus alone would have let it through) among them.
    assert_eq!(taking_args, wrapped);
    for several in ["AcceptClaim", "RejectClaim", "Adjudicate"] {
        assert!(
            wrapped.iter().any(|m| m == several),
            "{several}: {wrapped:?}"
        );
    }

    // A method answers once it has done its work, so a call that slipped through would show
    // in the properties read now (uncached, from the daemon).
    let after = observe(&conn, id).await;
    assert_eq!(after, before, "a refused call changed the game");

    // The same body builder with the right signature gets past the check: the method's own
    // answer (success or a named error of the contract), never InvalidArgs.
    for (iface, path, xml) in interfaces(&board_path) {
        for (method, inputs) in methods(xml, iface) {
            if [
                "TakeBack",
                "NewGame",
                "RemoveBoard",
                "AddBoard",
                "ResolveGap",
            ]
            .contains(&method.as_str())
                || inputs.is_empty()
            {
                continue; // checked below, or would change the rig
            }
            let answer = call(&conn, &path, iface, &method, &inputs, &board_path).await;
            if let Err(e) = answer {
                let (name, _) = dbus_error(&e);
                assert!(
                    name.starts_with("org.eboardd.Bridge1.Error."),
                    "{method}({}) is refused only by the method: {e}",
                    inputs.concat()
                );
            }
        }
    }
    // The move is still there to take back, with the right (empty) signature.
    call(
        &conn,
        &board_path,
        "org.eboardd.Bridge1.Board",
        "TakeBack",
        &[],
        &board_path,
    )
    .await
    .expect("TakeBack with its own signature");
    events
        .wait_until("the takeback", |all| {
            all.iter()
                .any(|e| matches!(e, Ev::Signal(Event::MoveRetracted { ply: 1, .. })))
        })
        .await;
    let taken = proxies::fresh(&conn, id).await;
    assert!(taken.moves().await.expect("Moves").is_empty());
}
