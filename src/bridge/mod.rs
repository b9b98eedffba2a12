//! The bridges: thin adapters from the client model ([`crate::client`]) to what cannot speak
//! D-Bus, each a client of the daemon that can crash and restart without touching it.
//! [`web`] serves pages, JSON, Server-Sent Events and PGN over HTTP; [`relay`] republishes a
//! rig's boards on an MQTT broker; [`broadcast`] pushes a round's games to a lichess
//! broadcast; [`livechess`] speaks DGT LiveChess's local API for the board connectors of
//! lichess and chess.com and LiveChess tools.

pub mod broadcast;
pub mod livechess;
pub mod relay;
pub mod web;
