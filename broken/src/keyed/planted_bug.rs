//! The keyed catalogue: one [`KeyedPlantedBug`] per way to get a keyed limiter's reclamation or its
//! per-key counts wrong.

use core::fmt;
use core::str::FromStr;

/// The one bug planted in a [`PlantedKeyedLimiter`](crate::PlantedKeyedLimiter). Apart from it,
/// each is a correct keyed limiter that reclaims ended keys on the schedule `fixed-window`
/// documents, so a checker that flags one has found the bug.
///
/// # Examples
///
/// Each planted bug has a name for command lines.
///
/// ```
/// use fixed_window_broken::KeyedPlantedBug;
///
/// assert_eq!(KeyedPlantedBug::SharedCount.name(), "shared-count");
/// assert_eq!("reclaim-live".parse(), Ok(KeyedPlantedBug::ReclaimLive));
/// assert!(KeyedPlantedBug::ALL.iter().all(|bug| bug.name().parse() == Ok(*bug)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KeyedPlantedBug {
    /// A sweep takes a key whose window has not ended (the sweep's own window counts as
    /// ended), so the key's next call re-creates it empty and is granted a whole limit more in
    /// the same window.
    ReclaimLive,
    /// A sweep removes a key it found ended without marking its state as reclaimed, so a
    /// caller that read that state just before still claims from it: the claim is lost with
    /// the removed state, and the key, re-created empty, grants a whole limit more in the same
    /// window. Shows only under a race ([`KeyedPlantedBug::races_only`]).
    ClaimLostToRemoval,
    /// One window count shared by all keys: a key is refused because others used its permits.
    SharedCount,
    /// Ended keys are never reclaimed: memory grows with every key ever seen.
    NeverReclaims,
    /// Each attempt reads the limit before the key's count instead of after it, so a claim
    /// decided under the limit as it was can land on a count that claims under a limit set
    /// since have raised: after a lowering, the key's window passes the lowered limit that an
    /// earlier claim in it already saw. Shows only to a checker that changes the limit while
    /// callers claim ([`KeyedPlantedBug::limit_change_only`]), and then only under a race.
    LimitReadBeforeWord,
    /// A key given a limit of its own is decided by the limiter's limit all the same. Shows
    /// only to a checker that gives keys limits of their own.
    DefaultLimitForOwnKey,
}

impl KeyedPlantedBug {
    /// Every keyed planted bug.
    pub const ALL: [KeyedPlantedBug; 6] = [
        KeyedPlantedBug::ReclaimLive,
        KeyedPlantedBug::ClaimLostToRemoval,
        KeyedPlantedBug::SharedCount,
        KeyedPlantedBug::NeverReclaims,
        KeyedPlantedBug::LimitReadBeforeWord,
        KeyedPlantedBug::DefaultLimitForOwnKey,
    ];

    /// The planted bug's name on a command line, in kebab case.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_broken::KeyedPlantedBug;
    ///
    /// assert_eq!(KeyedPlantedBug::ClaimLostToRemoval.name(), "claim-lost-to-removal");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            KeyedPlantedBug::ReclaimLive => "reclaim-live",
            KeyedPlantedBug::ClaimLostToRemoval => "claim-lost-to-removal",
            KeyedPlantedBug::SharedCount => "shared-count",
            KeyedPlantedBug::NeverReclaims => "never-reclaims",
            KeyedPlantedBug::LimitReadBeforeWord => "limit-read-before-word",
            KeyedPlantedBug::DefaultLimitForOwnKey => "default-limit-for-own-key",
        }
    }

    /// Whether the bug shows only when a sweep runs between a caller's read of a key's state
    /// and its claim. The asynchronous path yields there for such a bug, so that one
    /// executor on one thread (the simulator's) interleaves its callers in the gap.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_broken::KeyedPlantedBug;
    ///
    /// assert!(KeyedPlantedBug::ClaimLostToRemoval.races_only());
    /// assert!(!KeyedPlantedBug::ReclaimLive.races_only());
    /// ```
    pub fn races_only(self) -> bool {
        self == KeyedPlantedBug::ClaimLostToRemoval
    }

    /// Whether the bug shows only when the limit changes
    /// ([`PlantedKeyedLimiter::set_limit`](crate::PlantedKeyedLimiter::set_limit)) while
    /// callers claim: a checker that never changes it behaves as with a correct limiter.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_broken::KeyedPlantedBug;
    ///
    /// assert!(KeyedPlantedBug::LimitReadBeforeWord.limit_change_only());
    /// assert!(!KeyedPlantedBug::ReclaimLive.limit_change_only());
    /// ```
    pub fn limit_change_only(self) -> bool {
        self == KeyedPlantedBug::LimitReadBeforeWord
    }
}

impl fmt::Display for KeyedPlantedBug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is no [`KeyedPlantedBug`]'s; its message lists the names there are.
///
/// # Examples
///
/// ```
/// use fixed_window_broken::KeyedPlantedBug;
///
/// let error = "typo".parse::<KeyedPlantedBug>().unwrap_err();
/// assert!(error.to_string().contains("shared-count"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownKeyedPlantedBug(String);

impl fmt::Display for UnknownKeyedPlantedBug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown keyed planted bug `{}`; one of: ", self.0)?;
        for (i, bug) in KeyedPlantedBug::ALL.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(bug.name())?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownKeyedPlantedBug {}

impl FromStr for KeyedPlantedBug {
    type Err = UnknownKeyedPlantedBug;

    fn from_str(s: &str) -> Result<KeyedPlantedBug, UnknownKeyedPlantedBug> {
        KeyedPlantedBug::ALL
            .into_iter()
            .find(|bug| bug.name() == s)
            .ok_or_else(|| UnknownKeyedPlantedBug(s.to_owned()))
    }
}
