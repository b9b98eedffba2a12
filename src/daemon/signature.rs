//! Method calls with a wrong signature are refused before they reach the interface.
//!
//! zbus deserializes a method's arguments from the message body and answers `InvalidArgs`
//! when they do not fit, but it reads only as many values as the method takes: `TakeBack`
//! with an extra string argument was accepted and took the move back. [`Checked`] wraps an
//! interface and compares the body signature of every call of one of its methods with the
//! method's own input signature, taken once from the interface's introspection (so it comes
//! from the method definitions themselves and cannot drift from them). A mismatch (extra or
//! missing arguments, wrong types, the arguments wrapped in one struct) gets
//! `org.freedesktop.DBus.Error.InvalidArgs` naming both signatures, and the method does not
//! run. Everything else (properties, introspection, unknown members) is the wrapped
//! interface's.
//!
//! The comparison is of signature *strings*, not of zbus's parsed [`Signature`]: zbus parses
//! a body signature `sss` (three arguments) into a structure of three strings, and `(sss)`
//! (one struct argument holding them) into the same value, and both bodies are the same bytes,
//! so a parsed comparison lets the struct form through. The string is read from the message's
//! header fields as they came over the wire ([`body_signature`]).
//!
//! A call with the right signature then has its arguments measured against the contract's
//! bounds ([`super::bounds`]); one over its bound gets the contract's error for the method
//! (`contract::limits::over_bound_error`: `InvalidArgument`, `InvalidFen` for `SetPosition`,
//! `ClaimNotAvailable` for `AcceptClaim`) and the method does not run either.

use std::collections::HashMap;
use std::fmt::Write;
use std::ops::{Deref, DerefMut};
use std::str::FromStr;

use zbus::message::Header;
use zbus::names::{InterfaceName, MemberName};
use zbus::object_server::{DispatchResult, Interface, SignalEmitter};
use zbus::{BoxDBusError, Connection, Message, ObjectServer, OwnedVariant, Signature, fdo};

/// An interface whose methods only run when called with their exact input signature.
pub struct Checked<I> {
    inner: I,
    /// Method name → its input signature, as the string a caller must send.
    inputs: HashMap<String, String>,
}

impl<I: Interface> Checked<I> {
    pub fn new(inner: I) -> Self {
        let mut xml = String::new();
        inner.introspect_to_writer(&mut xml, 0);
        let inputs = input_signatures(&xml);
        Checked { inner, inputs }
    }

    /// The refusal of a call of one of the methods whose body signature is not its inputs;
    /// `None` lets the call through to the wrapped interface.
    fn refused<'call>(
        &self,
        connection: &'call Connection,
        msg: &'call Message,
        name: &MemberName<'_>,
    ) -> Option<DispatchResult<'call>> {
        let expected = self.inputs.get(name.as_str())?;
        let got = body_signature(msg.data());
        if got == Some(expected.as_bytes()) {
            // The right arguments; each within the contract's bounds, or refused here.
            let too_big = super::bounds::oversized(name.as_str(), msg)?;
            tracing::info!("refused {name}: {too_big}");
            let error = super::dbus::BridgeError::named(
                eboard_core::contract::limits::over_bound_error(name.as_str()),
                too_big.0,
            );
            return Some(DispatchResult::new_async(connection, msg, async move {
                Err::<(), _>(error)
            }));
        }
        let got = got.map_or("an unreadable header".into(), String::from_utf8_lossy);
        let error = fdo::Error::InvalidArgs(format!("{name} takes ({expected}), not ({got})"));
        Some(DispatchResult::new_async(connection, msg, async move {
            Err::<(), _>(error)
        }))
    }
}

/// The body signature of a D-Bus message as its header carries it (empty when the header has
/// no signature field, which is how a call without arguments comes), or `None` when the header
/// cannot be read as the D-Bus specification lays it out.
///
/// zbus checked the header before the message got here, and keeps only the parsed signature,
/// so this walks the header fields once more: `a(yv)` from byte 12, each field 8-aligned, a
/// code byte, the one-type signature of its variant, then the value. The types are those zbus
/// accepts in a header (it refuses any other field): `o`/`s` (a `u32` length, the bytes, a 0),
/// `u`, and `g` (a byte length, the bytes, a 0).
fn body_signature(message: &[u8]) -> Option<&[u8]> {
    const SIGNATURE_FIELD: u8 = 8;
    let u32_at = |at: usize| -> Option<usize> {
        let bytes: [u8; 4] = message.get(at..at + 4)?.try_into().ok()?;
        let value = match message.first()? {
            b'l' => u32::from_le_bytes(bytes),
            b'B' => u32::from_be_bytes(bytes),
            _ => return None,
        };
        usize::try_from(value).ok()
    };
    let end = 16usize.checked_add(u32_at(12)?)?;
    let mut at = 16;
    while at < end {
        at = at.next_multiple_of(8);
        let [code, 1, ty, 0] = *message.get(at..at + 4)? else {
            return None;
        };
        at += 4;
        match ty {
            b'g' => {
                let len = usize::from(*message.get(at)?);
                let value = message.get(at + 1..at + 1 + len)?;
                if code == SIGNATURE_FIELD {
                    return Some(value);
                }
                at += len + 2;
            }
            b's' | b'o' => at += u32_at(at)? + 5, // 4-aligned already: a field starts 8-aligned
            b'u' => at += 4,
            _ => return None,
        }
    }
    Some(b"")
}

/// The input signature of each method in introspection XML as zbus writes it (one element a
/// line: `<method name="X">`, `<arg name="a" type="s" direction="in"/>`, `</method>`).
fn input_signatures(xml: &str) -> HashMap<String, String> {
    let attribute = |line: &str, key: &str| -> Option<String> {
        let start = line.find(&format!("{key}=\""))? + key.len() + 2;
        let len = line[start..].find('"')?;
        Some(line[start..start + len].to_owned())
    };
    let mut inputs = HashMap::new();
    let mut method: Option<(String, String)> = None;
    for line in xml.lines().map(str::trim) {
        if line.starts_with("<method ") {
            method = attribute(line, "name").map(|name| (name, String::new()));
        } else if line.starts_with("</method>") {
            if let Some((name, types)) = method.take() {
                if let Err(e) = Signature::from_str(&types) {
                    panic!("method {name}: zbus wrote the input signature {types:?}: {e}")
                }
                inputs.insert(name, types);
            }
        } else if line.starts_with("<arg ")
            && attribute(line, "direction").as_deref() == Some("in")
            && let Some((_, types)) = method.as_mut()
            && let Some(ty) = attribute(line, "type")
        {
            types.push_str(&ty);
        }
    }
    inputs
}

impl<I> Deref for Checked<I> {
    type Target = I;
    fn deref(&self) -> &I {
        &self.inner
    }
}

impl<I> DerefMut for Checked<I> {
    fn deref_mut(&mut self) -> &mut I {
        &mut self.inner
    }
}

#[async_trait::async_trait]
impl<I: Interface> Interface for Checked<I> {
    fn name() -> InterfaceName<'static> {
        I::name()
    }

    fn spawn_tasks_for_methods(&self) -> bool {
        self.inner.spawn_tasks_for_methods()
    }

    async fn get(
        &self,
        property_name: &str,
        server: &ObjectServer,
        connection: &Connection,
        header: Option<&Header<'_>>,
        emitter: &SignalEmitter<'_>,
    ) -> Option<Result<OwnedVariant, BoxDBusError>> {
        self.inner
            .get(property_name, server, connection, header, emitter)
            .await
    }

    async fn get_all(
        &self,
        server: &ObjectServer,
        connection: &Connection,
        header: Option<&Header<'_>>,
        emitter: &SignalEmitter<'_>,
    ) -> fdo::Result<HashMap<String, OwnedVariant>> {
        self.inner
            .get_all(server, connection, header, emitter)
            .await
    }

    fn set<'call>(
        &'call self,
        property_name: &'call str,
        value: &'call zbus::Variant<'_>,
        server: &'call ObjectServer,
        connection: &'call Connection,
        header: Option<&'call Header<'_>>,
        emitter: &'call SignalEmitter<'_>,
    ) -> DispatchResult<'call> {
        self.inner
            .set(property_name, value, server, connection, header, emitter)
    }

    async fn set_mut(
        &mut self,
        property_name: &str,
        value: &zbus::Variant<'_>,
        server: &ObjectServer,
        connection: &Connection,
        header: Option<&Header<'_>>,
        emitter: &SignalEmitter<'_>,
    ) -> Option<Result<(), BoxDBusError>> {
        self.inner
            .set_mut(property_name, value, server, connection, header, emitter)
            .await
    }

    fn call<'call>(
        &'call self,
        server: &'call ObjectServer,
        connection: &'call Connection,
        msg: &'call Message,
        name: MemberName<'call>,
    ) -> DispatchResult<'call> {
        self.refused(connection, msg, &name)
            .unwrap_or_else(|| self.inner.call(server, connection, msg, name))
    }

    fn call_mut<'call>(
        &'call mut self,
        server: &'call ObjectServer,
        connection: &'call Connection,
        msg: &'call Message,
        name: MemberName<'call>,
    ) -> DispatchResult<'call> {
        self.refused(connection, msg, &name)
            .unwrap_or_else(|| self.inner.call_mut(server, connection, msg, name))
    }

    fn introspect_to_writer(&self, writer: &mut dyn Write, level: usize) {
        self.inner.introspect_to_writer(writer, level)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zbus::wire::Endian;

    #[test]
    fn input_signatures_are_read_from_zbus_introspection() {
        let xml = r#"<interface name="org.example.I">
  <method name="TakeBack">
  </method>
  <method name="SetTags">
    <arg name="tags" type="a{ss}" direction="in"/>
  </method>
  <method name="AcceptClaim">
    <arg name="player" type="s" direction="in"/>
    <arg name="kind" type="s" direction="in"/>
    <arg type="b" direction="out"/>
  </method>
  <signal name="MovePlayed">
    <arg name="ply" type="u"/>
  </signal>
  <property name="Moves" type="as" access="read"/>
</interface>"#;
        let inputs = input_signatures(xml);
        assert_eq!(inputs.len(), 3, "{inputs:?}");
        assert_eq!(inputs["TakeBack"], "");
        assert_eq!(inputs["SetTags"], "a{ss}");
        assert_eq!(inputs["AcceptClaim"], "ss");
    }

    /// A method call to a board's path with `body`, in either byte order.
    fn call_with<B>(endian: Endian, body: &B) -> Message
    where
        B: serde::Serialize + zbus::wire::DynamicType,
    {
        Message::method_call("/org/eboardd/Bridge1/Board/b_1", "AcceptClaim")
            .interface("org.eboardd.Bridge1.Board")
            .destination("org.eboardd.Bridge1")
            .endian(endian)
            .build(body)
            .expect("a method call")
    }

    #[test]
    fn the_body_signature_is_read_as_sent_so_a_struct_of_the_arguments_differs() {
        for endian in [Endian::Little, Endian::Big] {
            let read = |msg: Message| body_signature(msg.data()).map(<[u8]>::to_vec);
            assert_eq!(read(call_with(endian, &())), Some(b"".to_vec()));
            assert_eq!(read(call_with(endian, &("white",))), Some(b"s".to_vec()));
            let args = call_with(endian, &("white", "threefold"));
            let wrapped = call_with(endian, &(("white", "threefold"),));
            // What zbus makes of the two is the same; the strings on the wire are not.
            assert_eq!(args.body().signature(), wrapped.body().signature());
            assert_eq!(read(args), Some(b"ss".to_vec()), "{endian:?}");
            assert_eq!(read(wrapped), Some(b"(ss)".to_vec()), "{endian:?}");
            let nested = call_with(endian, &(HashMap::from([("Event", "x")]), 7u32, "o"));
            assert_eq!(read(nested), Some(b"a{ss}us".to_vec()), "{endian:?}");
        }
    }

    #[test]
    fn a_header_that_cannot_be_read_gives_no_signature() {
        let msg = call_with(Endian::Little, &("white", "threefold"));
        let bytes = msg.data().to_vec();
        assert_eq!(body_signature(&bytes[..20]), None, "cut short");
        let mut bad_endian = bytes.clone();
        bad_endian[0] = b'x';
        assert_eq!(body_signature(&bad_endian), None);
        let mut unknown_type = bytes;
        unknown_type[18] = b'v'; // the first field's variant type
        assert_eq!(body_signature(&unknown_type), None);
    }
}
