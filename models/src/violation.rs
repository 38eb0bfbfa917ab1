//! A checker's verdict against a history.

use core::fmt;

/// A rule (`docs/rules.md`) that a history breaks, said in one line.
///
/// # Examples
///
/// ```
/// use fixed_window_models::Violation;
///
/// let violation = Violation::new("3 permits in window 0, limit 2");
/// assert_eq!(violation.to_string(), "violation: 3 permits in window 0, limit 2");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    message: String,
}

impl Violation {
    /// A violation described by `message`.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(fixed_window_models::Violation::new("x").message(), "x");
    /// ```
    pub fn new(message: impl Into<String>) -> Violation {
        Violation {
            message: message.into(),
        }
    }

    /// What rule was broken, and where.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(fixed_window_models::Violation::new("y").message(), "y");
    /// ```
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "violation: {}", self.message)
    }
}

impl std::error::Error for Violation {}
