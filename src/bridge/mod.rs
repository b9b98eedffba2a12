//! The bridges: thin adapters from the client model ([`crate::client`]) to other protocols,
//! each a client of the daemon that can crash and restart without touching it.

pub mod relay;
