//! Why the core refused an operator command. The core knows nothing of D-Bus: the daemon's
//! D-Bus layer maps each reason to the contract's named error (one to one).

/// Why a command was refused; each variant carries a sentence a person can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    /// The position given is not a FEN of a legal position.
    #[error("{0}")]
    InvalidFen(String),
    /// An argument is not one the command accepts (or does not fit the game).
    #[error("{0}")]
    InvalidArgument(String),
    /// There is no move to take back.
    #[error("{0}")]
    NothingToTakeBack(String),
    /// The claim is not one available right now.
    #[error("{0}")]
    ClaimNotAvailable(String),
    /// The board is configured never to be written to.
    #[error("{0}")]
    ListenOnly(String),
    /// No clock answers through the board.
    #[error("{0}")]
    NoClock(String),
    /// The clock did not acknowledge, even twice.
    #[error("{0}")]
    ClockTimeout(String),
    /// Too many requests are already waiting (the clock's message queue is full).
    #[error("{0}")]
    Busy(String),
}
