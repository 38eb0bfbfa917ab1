//! What a model does to a limiter and what comes back: operations, outcomes, events.

use core::time::Duration;

use fixed_window::Instant;

/// The kind of operation a model thread performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `try_acquire`: never waits.
    TryAcquire,
    /// `acquire`: may wait up to `max_wait` for a later window.
    Acquire,
    /// `call(op)`: acquire (waiting as `acquire` does), then run `op`.
    Call,
}

impl Kind {
    /// Whether the operation may wait for a later window.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_models::Kind;
    ///
    /// assert!(!Kind::TryAcquire.waits());
    /// assert!(Kind::Call.waits());
    /// ```
    pub fn waits(self) -> bool {
        !matches!(self, Kind::TryAcquire)
    }
}

/// How an operation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// A permit was granted.
    Permitted {
        /// The limiter's clock reading when it claimed the permit, where the API reports it.
        at: Option<Instant>,
        /// Permits left in the window, where the API reports it.
        remaining: Option<u32>,
    },
    /// No permit within the wait allowed.
    Rejected {
        /// The estimated wait the limiter reported.
        retry_after: Duration,
    },
    /// The wait was interrupted.
    Interrupted,
}

impl Outcome {
    /// Whether a permit was granted.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_models::Outcome;
    ///
    /// assert!(Outcome::Permitted { at: None, remaining: None }.is_permitted());
    /// assert!(!Outcome::Interrupted.is_permitted());
    /// ```
    pub fn is_permitted(&self) -> bool {
        matches!(self, Outcome::Permitted { .. })
    }
}

/// An event a limiter emitted to its listener, as the models record it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Event {
    /// A permit was granted at `at` with `remaining` left.
    Permitted {
        /// The reading the permit was claimed at.
        at: Instant,
        /// Permits left in the window.
        remaining: u32,
    },
    /// A call was rejected at `at`.
    Rejected {
        /// The reading the call was rejected at.
        at: Instant,
        /// The estimated wait.
        retry_after: Duration,
    },
}
