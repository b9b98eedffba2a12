//! Sensed placement (64 squares, as the board reports them) and board orientation.
