//! The keys callers limit by: which ones can name a Redis counter.

use core::fmt;

/// The longest key, in bytes. Redis accepts far longer keys, but every attempt sends the key,
/// and a key this long is a caller's bug (a whole request body, say) rather than an identity.
pub const MAX_KEY_LEN: usize = 1_024;

/// A key that cannot name a counter.
///
/// # Examples
///
/// ```
/// use fixed_window_redis::{KeyError, check_key};
///
/// assert_eq!(check_key(""), Err(KeyError::Empty));
/// assert_eq!(check_key("client-7"), Ok(()));
/// assert_eq!(KeyError::Empty.to_string(), "the key must not be empty");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KeyError {
    /// The key was empty.
    Empty,
    /// The key was longer than [`MAX_KEY_LEN`] bytes.
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyError::Empty => f.write_str("the key must not be empty"),
            KeyError::TooLong { len } => {
                write!(f, "the key must be at most {MAX_KEY_LEN} bytes, got {len}")
            }
        }
    }
}

impl std::error::Error for KeyError {}

/// Whether `key` can name a counter: not empty and at most [`MAX_KEY_LEN`] bytes. Any text
/// is otherwise fine: Redis keys are binary-safe, and the limiter's prefix comes first, so a
/// key cannot reach another limiter's counters or change the hash tag.
///
/// # Errors
///
/// [`KeyError`] saying what is wrong.
///
/// # Examples
///
/// ```
/// use fixed_window_redis::{KeyError, MAX_KEY_LEN, check_key};
///
/// assert_eq!(check_key(&"k".repeat(MAX_KEY_LEN + 1)), Err(KeyError::TooLong { len: MAX_KEY_LEN + 1 }));
/// assert_eq!(check_key("{another}:key"), Ok(()));
/// ```
pub fn check_key(key: &str) -> Result<(), KeyError> {
    if key.is_empty() {
        Err(KeyError::Empty)
    } else if key.len() > MAX_KEY_LEN {
        Err(KeyError::TooLong { len: key.len() })
    } else {
        Ok(())
    }
}
