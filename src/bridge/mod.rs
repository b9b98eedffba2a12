//! The bridges: thin adapters from the client model ([`crate::client`]) to what cannot speak
//! D-Bus. [`web`] serves pages, JSON, Server-Sent Events and PGN over HTTP.

pub mod web;
