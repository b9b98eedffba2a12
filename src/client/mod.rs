//! The client side of the D-Bus contract: one model of "the boards as seen on the bus", shared
//! by the bridges (`eboardctl serve`, `eboardctl relay`) and anything else that follows a hall.
//!
//! [`props`] is the typed read of one board's properties ([`BoardProps`]) that eboardctl's
//! `status`, `list` and `watch` show; names and types are the contract table's.
//! [`hall`] is the model itself — pure: a stream of [`HallUpdate`]s applied to a [`Hall`].
//! [`source`] turns the local bus into that stream ([`watch_bus`]); other sources (an MQTT
//! broker fed by the relays of a hall: [`mqtt`]) produce the same updates, so the consumers do not care
//! where the boards come from.

pub mod bus;
pub mod error;
pub mod event;
pub mod hall;
pub mod mqtt;
pub mod props;
pub mod source;

pub use hall::{Hall, HallUpdate, Props, table_order};
pub use props::{BoardProps, Claim, IllegalCounts};
pub use source::watch_bus;

/// The last path segment of a board's object path: its id.
pub fn board_id(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}
