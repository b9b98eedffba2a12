//! Method calls with a wrong signature are refused before they reach the interface.
//!
//! zbus deserializes a method's arguments from the message body and answers `InvalidArgs`
//! when they do not fit, but it reads only as many values as the method takes: `TakeBack`
//! with an extra string argument was accepted and took the move back. [`Checked`] wraps an
//! interface and compares the body signature of every call of one of its methods with the
//! method's own input signature, taken once from the interface's introspection (so it comes
//! from the method definitions themselves and cannot drift from them). A mismatch (extra or
//! missing arguments, wrong types) gets `org.freedesktop.DBus.Error.InvalidArgs` naming both
//! signatures, and the method does not run. Everything else (properties, introspection,
//! unknown members) is the wrapped interface's.
//!
//! One case cannot be told apart: zbus reads a body signature `(sss)` (one struct holding the
//! arguments) into the same `Signature` as `sss`, and both bodies are the same bytes, so such
//! a call runs as if made with the arguments themselves.

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
    /// Method name → its input signature.
    inputs: HashMap<String, Signature>,
}

impl<I: Interface> Checked<I> {
    pub fn new(inner: I) -> Self {
        let mut xml = String::new();
        inner.introspect_to_writer(&mut xml, 0);
        let inputs = input_signatures(&xml);
        Checked { inner, inputs }
    }

    /// `InvalidArgs` for a call of one of the methods whose body does not match its inputs.
    fn refusal(&self, msg: &Message, name: &MemberName<'_>) -> Option<fdo::Error> {
        let expected = self.inputs.get(name.as_str())?;
        let body = msg.body();
        let got = body.signature();
        (got != expected).then(|| {
            fdo::Error::InvalidArgs(format!(
                "{name} takes ({}), not ({})",
                expected.to_string_no_parens(),
                got.to_string_no_parens()
            ))
        })
    }

    fn refuse<'call>(
        connection: &'call Connection,
        msg: &'call Message,
        error: fdo::Error,
    ) -> DispatchResult<'call> {
        DispatchResult::new_async(connection, msg, async move { Err::<(), _>(error) })
    }
}

/// The input signature of each method in introspection XML as zbus writes it (one element a
/// line: `<method name="X">`, `<arg name="a" type="s" direction="in"/>`, `</method>`).
fn input_signatures(xml: &str) -> HashMap<String, Signature> {
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
                let signature = Signature::from_str(&types).unwrap_or_else(|e| {
                    panic!("method {name}: zbus wrote the input signature {types:?}: {e}")
                });
                inputs.insert(name, signature);
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
        match self.refusal(msg, &name) {
            Some(error) => Self::refuse(connection, msg, error),
            None => self.inner.call(server, connection, msg, name),
        }
    }

    fn call_mut<'call>(
        &'call mut self,
        server: &'call ObjectServer,
        connection: &'call Connection,
        msg: &'call Message,
        name: MemberName<'call>,
    ) -> DispatchResult<'call> {
        match self.refusal(msg, &name) {
            Some(error) => Self::refuse(connection, msg, error),
            None => self.inner.call_mut(server, connection, msg, name),
        }
    }

    fn introspect_to_writer(&self, writer: &mut dyn Write, level: usize) {
        self.inner.introspect_to_writer(writer, level)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(inputs["TakeBack"], Signature::Unit);
        assert_eq!(inputs["SetTags"], Signature::from_str("a{ss}").unwrap());
        assert_eq!(inputs["AcceptClaim"], Signature::from_str("ss").unwrap());
        assert_ne!(inputs["AcceptClaim"], Signature::from_str("sss").unwrap());
    }
}
