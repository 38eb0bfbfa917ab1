//! The keyed catalogue: one [`KeyedFlaw`] per way to get a keyed limiter's reclamation or its
//! per-key counts wrong.

use core::fmt;
use core::str::FromStr;

/// The one fault a [`BrokenKeyed`](crate::BrokenKeyed) limiter has. Apart from it, each is a
/// correct keyed limiter that reclaims ended keys on the schedule `fixed-window` documents, so
/// a checker that flags one has found the flaw.
///
/// # Examples
///
/// Each flaw has a name for command lines.
///
/// ```
/// use fixed_window_broken::KeyedFlaw;
///
/// assert_eq!(KeyedFlaw::SharedCount.name(), "shared-count");
/// assert_eq!("reclaim-live".parse(), Ok(KeyedFlaw::ReclaimLive));
/// assert!(KeyedFlaw::ALL.iter().all(|flaw| flaw.name().parse() == Ok(*flaw)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KeyedFlaw {
    /// A sweep takes a key whose window has not ended (the sweep's own window counts as
    /// ended), so the key's next call re-creates it empty and is granted a whole limit more in
    /// the same window.
    ReclaimLive,
    /// A sweep removes a key it found ended without marking its state as reclaimed, so a
    /// caller that read that state just before still claims from it: the claim is lost with
    /// the removed state, and the key, re-created empty, grants a whole limit more in the same
    /// window. Shows only under a race ([`KeyedFlaw::races_only`]).
    ClaimLostToRemoval,
    /// One window count shared by all keys: a key is refused because others used its permits.
    SharedCount,
    /// Ended keys are never reclaimed: memory grows with every key ever seen.
    NeverReclaims,
}

impl KeyedFlaw {
    /// Every keyed flaw.
    pub const ALL: [KeyedFlaw; 4] = [
        KeyedFlaw::ReclaimLive,
        KeyedFlaw::ClaimLostToRemoval,
        KeyedFlaw::SharedCount,
        KeyedFlaw::NeverReclaims,
    ];

    /// The flaw's name on a command line, in kebab case.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_broken::KeyedFlaw;
    ///
    /// assert_eq!(KeyedFlaw::ClaimLostToRemoval.name(), "claim-lost-to-removal");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            KeyedFlaw::ReclaimLive => "reclaim-live",
            KeyedFlaw::ClaimLostToRemoval => "claim-lost-to-removal",
            KeyedFlaw::SharedCount => "shared-count",
            KeyedFlaw::NeverReclaims => "never-reclaims",
        }
    }

    /// Whether the flaw shows only when a sweep runs between a caller's read of a key's state
    /// and its claim. The asynchronous path yields there for such a flaw, so that one
    /// executor on one thread (the simulator's) interleaves its callers in the gap.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_broken::KeyedFlaw;
    ///
    /// assert!(KeyedFlaw::ClaimLostToRemoval.races_only());
    /// assert!(!KeyedFlaw::ReclaimLive.races_only());
    /// ```
    pub fn races_only(self) -> bool {
        self == KeyedFlaw::ClaimLostToRemoval
    }
}

impl fmt::Display for KeyedFlaw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is no [`KeyedFlaw`]'s; its message lists the names there are.
///
/// # Examples
///
/// ```
/// use fixed_window_broken::KeyedFlaw;
///
/// let error = "typo".parse::<KeyedFlaw>().unwrap_err();
/// assert!(error.to_string().contains("shared-count"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownKeyedFlaw(String);

impl fmt::Display for UnknownKeyedFlaw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown keyed flaw `{}`; one of: ", self.0)?;
        for (i, flaw) in KeyedFlaw::ALL.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(flaw.name())?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownKeyedFlaw {}

impl FromStr for KeyedFlaw {
    type Err = UnknownKeyedFlaw;

    fn from_str(s: &str) -> Result<KeyedFlaw, UnknownKeyedFlaw> {
        KeyedFlaw::ALL
            .into_iter()
            .find(|flaw| flaw.name() == s)
            .ok_or_else(|| UnknownKeyedFlaw(s.to_owned()))
    }
}
