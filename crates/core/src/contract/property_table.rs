//! The `board_properties!` macro: the board's D-Bus properties declared once, as a list of
//! `"Name": "signature" => field: Type`, and everything that must follow each of them
//! generated from that list, so that a property added, removed or retyped cannot be forgotten
//! in one place:
//!
//! - the struct [`BoardProps`](super::props::BoardProps), one field per property, serialised
//!   under the D-Bus name;
//! - the contract's table [`BOARD_PROPERTIES`](super::BOARD_PROPERTIES) (name and signature,
//!   in the list's order, which is the order a `PropertiesChanged` names them in);
//! - reading a property from its JSON form (`BoardProps::apply`, what clients do);
//! - a property's value as the contract types it (`BoardProps::wire_value`, what the daemon
//!   serves and `property_value` is), and the properties that differ between two values with
//!   their new values (`BoardProps::changes`, each field compared with its own `==`: what a
//!   `PropertiesChanged` carries);
//! - every string the properties hold (`BoardProps::texts`, for the check on what leaves the
//!   daemon).
//!
//! What a field's *type* means on the bus (its D-Bus signature, its value, the strings it holds)
//! is the type's [`PropertyType`](super::props::PropertyType) implementation, written once per
//! type; the macro checks at compile time that the signature declared for a property is its
//! type's, so the table and the struct cannot disagree.
//!
//! A `macro_rules!` rather than a derive: the core stays free of proc-macro crates, and the
//! list reads like the contract's table.

/// Declares the board's properties; see the module documentation. Used once, in
/// [`super::props`].
macro_rules! board_properties {
    (
        $(#[$struct_meta:meta])*
        pub struct $props:ident;
        $(
            $(#[$meta:meta])*
            $name:literal : $signature:literal => $field:ident : $ty:ty,
        )+
    ) => {
        $(#[$struct_meta])*
        #[derive(Debug, PartialEq, Default, serde::Serialize)]
        pub struct $props {
            $(
                $(#[$meta])*
                #[serde(rename = $name)]
                pub $field: $ty,
            )+
        }

        impl Clone for $props {
            fn clone(&self) -> Self {
                $props {
                    $( $field: self.$field.clone(), )+
                }
            }

            /// Field by field into the memory `self` already holds: a board announces a
            /// change several times a second (each clock reading), and a fresh copy of the
            /// whole view each time would allocate the PGN text, every move of the `Moves`
            /// list and every other string again.
            fn clone_from(&mut self, source: &Self) {
                $( self.$field.clone_from(&source.$field); )+
            }
        }

        /// Every board property, in the contract's order (which is also the order in which a
        /// `PropertiesChanged` names them).
        pub const BOARD_PROPERTIES: &[$crate::contract::Property] = &[
            $(
                $crate::contract::Property {
                    interface: $crate::contract::BOARD_INTERFACE,
                    name: $name,
                    signature: $signature,
                    constant: false,
                },
            )+
        ];

        // The signature declared for each property is its Rust type's: checked while compiling.
        const _: () = {
            $(
                assert!(
                    $crate::contract::props::same_text(
                        $signature,
                        <$ty as $crate::contract::props::PropertyType>::SIGNATURE,
                    ),
                    concat!("the field of ", $name, " is not of D-Bus type ", $signature),
                );
            )+
        };

        impl $props {
            /// Sets one property from its JSON form. Returns false when the name is unknown or
            /// the value does not have the field's type (the property is then left as it was).
            pub fn apply(&mut self, name: &str, value: &serde_json::Value) -> bool {
                match name {
                    $( $name => $crate::contract::props::set_from_json(&mut self.$field, value), )+
                    // Outside text from the bus: a newer daemon may have more; the hall keeps
                    // them as JSON, this struct does not.
                    _ => false,
                }
            }

            /// The value of the property `name` as the contract types it; `None` for a name
            /// that is not a board property.
            pub fn wire_value(&self, name: &str) -> Option<$crate::contract::props::WireValue<'_>> {
                use $crate::contract::props::PropertyType;
                match name {
                    $( $name => Some(self.$field.wire()), )+
                    _ => None,
                }
            }

            /// The properties whose values differ in `new`, with their new values, in the
            /// table's order: what one `PropertiesChanged` from `self` to `new` carries. Each
            /// field is compared with its own `==` (never by building its D-Bus value: that
            /// would copy the whole PGN on every clock tick).
            pub fn changes<'a>(
                &self,
                new: &'a $props,
            ) -> Vec<(&'static str, $crate::contract::props::WireValue<'a>)> {
                use $crate::contract::props::PropertyType;
                let mut changed = Vec::new();
                $(
                    if self.$field != new.$field {
                        changed.push(($name, new.$field.wire()));
                    }
                )+
                changed
            }

            /// Every string the properties hold (the `s` properties, each move, each claim's
            /// three fields), for checks on text that leaves the daemon (see
            /// `daemon::dbus::sendable`).
            pub fn texts(&self) -> impl Iterator<Item = &String> {
                use $crate::contract::props::PropertyType;
                std::iter::empty() $( .chain(self.$field.texts()) )+
            }

            /// [`Self::texts`], to change them in place.
            pub fn texts_mut(&mut self) -> impl Iterator<Item = &mut String> {
                use $crate::contract::props::PropertyType;
                std::iter::empty() $( .chain(self.$field.texts_mut()) )+
            }
        }
    };
}
