//! The DGT e-board + clock serial wire format, sans-IO.
//!
//! - [`message`]: the typed board → host messages; [`ack`] reads and builds clock acks.
//! - [`decoder`]: [`Decoder`] turns byte chunks of any size into messages, resynchronising
//!   over garbage and counting what it skipped ([`DecoderStats`]).
//! - [`codec`]: the payload parser and [`Message::encode`], its exact inverse.
//! - [`command`]: every host → board command a daemon may send, encoded and parsed back.
//! - [`ee_moves`]: the EEPROM move log's tags.
//! - [`wire`]: ids, sizes, piece codes and BCD.
//!
//! No tokio, no files, no clock reads here.

pub mod ack;
pub mod clock_channel;
pub mod codec;
pub mod command;
pub mod decoder;
pub mod driver;
pub mod ee_moves;
pub mod input;
pub mod message;
mod stats;
pub mod wire;

pub use ack::ClockButton;
pub use codec::BadPayload;
pub use command::{
    AsciiBeep, ClockCommand, ClockText, Command, CommandDecoder, ParseError, RejectReason,
    RejectedCommand, RevelationText, RunSide, SetAndRun, XlDisplay, parse_command,
};
pub use decoder::Decoder;
pub use message::*;
pub use stats::DecoderStats;
