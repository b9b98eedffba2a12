//! What a decoder has seen and thrown away: counted where bytes are framed
//! (`decoder`) and where payloads are parsed (`codec`, `ee_moves`). A module of its own so
//! the payload parsers and the framer use it without importing each other.

/// What the decoder has seen and thrown away since it was created.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct DecoderStats {
    /// Bytes pushed in.
    pub bytes_in: u64,
    /// Messages delivered.
    pub messages: u64,
    /// Bytes of the frames of delivered messages.
    pub message_bytes: u64,
    /// Bytes that are not part of any delivered message (garbage, unknown ids, dropped frames).
    pub skipped_bytes: u64,
    /// Frames started with a known id and then discarded: the sum of `truncated_frames`,
    /// `bad_lengths` and `bad_payloads`.
    pub dropped_frames: u64,
    /// Frames cut short by a byte with bit 7 set in their header or payload.
    pub truncated_frames: u64,
    /// Frames whose length is impossible for their id.
    pub bad_lengths: u64,
    /// Complete frames with impossible content (see [`BadPayload`](super::BadPayload)).
    pub bad_payloads: u64,
    /// Of `bad_payloads`, whole clock frames whose digits are impossible (a clock reading
    /// garbled on the clock's cable): no board message is in them (see [`Self::lost_frames`]).
    pub bad_clock_times: u64,
    /// Bytes with bit 7 set that are not a known message id.
    pub unknown_ids: u64,
    /// Piece codes 0x0D–0x0F (magic pieces) or undefined, delivered as an empty field.
    pub unknown_piece_codes: u64,
    /// Bytes inside EEPROM logs that did not form a tag.
    pub ee_skipped_bytes: u64,
    /// Clock readings with the "no clock" bit whose impossible times were delivered as zero.
    pub zeroed_clock_times: u64,
    /// Bytes of a board's text (serial numbers, trademark) that are not printable ASCII
    /// (a NUL, an escape, any control byte), delivered as `?`.
    pub unprintable_text_bytes: u64,
}

impl DecoderStats {
    /// Frames whose loss may have hidden a board message (a `LineLoss`): every dropped frame
    /// but a whole clock frame with impossible digits, which stood for nothing but one clock
    /// reading (the clock's next one comes within a second).
    pub fn lost_frames(&self) -> u64 {
        self.dropped_frames - self.bad_clock_times
    }
}
