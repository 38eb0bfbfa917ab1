//! The catalogue: one [`PlantedBug`] per classic way to get a fixed window wrong.

use core::fmt;
use core::str::FromStr;

/// The one bug planted in a [`PlantedLimiter`](crate::PlantedLimiter). Apart from it, each is a
/// correct fixed-window limiter, so a checker that flags one has found the bug.
///
/// Not every checker can exercise every bug: [`PlantedBug::races_only`] says which need two callers
/// between a read of the state and its write, and [`PlantedBug::extremes_only`] which need instants
/// or waits near the end of the timeline. A checker that cannot produce those skips them.
///
/// # Examples
///
/// Each planted bug has a name for command lines.
///
/// ```
/// use fixed_window_broken::PlantedBug;
///
/// assert_eq!(PlantedBug::CarryOver.name(), "carry-over");
/// assert_eq!("lost-update".parse(), Ok(PlantedBug::LostUpdate));
/// assert!(PlantedBug::ALL.iter().all(|bug| bug.name().parse() == Ok(*bug)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PlantedBug {
    /// A new window inherits the permits the previous one left unused (up to a whole limit).
    CarryOver,
    /// The window ends one nanosecond late: at exactly the boundary the old window is still in
    /// effect.
    BoundaryOffByOne,
    /// A new window starts at the caller's reading instead of on the grid of whole periods.
    AdvanceFromNow,
    /// The last permit of every window is refused.
    FalseRejection,
    /// A call waits for a window that opens up to one period past its deadline.
    DeadlineOvershoot,
    /// The deadline and the next window's start are computed with arithmetic that panics on
    /// overflow. Shows only near the end of the timeline ([`PlantedBug::extremes_only`]).
    OverflowPanic,
    /// Claims with a read and then a plain write instead of a compare-and-set, so two racing
    /// callers can both take the last permit. Shows only under a race ([`PlantedBug::races_only`]).
    LostUpdate,
    /// Checks that the count is below the limit, then increments it with a separate add: under
    /// a race the count passes the limit, and so do the permits. Shows only under a race.
    Overcount,
    /// A caller that loses the compare-and-set race is rejected instead of trying again, though
    /// the window may still have permits. Shows only under a race.
    GiveUpOnLostRace,
    /// A weighted claim of `n` permits counts one. Shows only to a checker that asks for more
    /// than one permit at once ([`PlantedBug::weighted_or_drained_only`]).
    WeightCountedAsOne,
    /// A drain leaves one permit in its window. Shows only to a checker that drains.
    DrainLeavesOne,
    /// Windows aligned to Unix time (`Origin::UnixEpoch`) start at the boundary after the
    /// clock's reading instead of the one at or before it: one period late. Shows only to a
    /// checker that builds limiters so aligned ([`PlantedBug::unix_epoch_only`]).
    EpochOffByOnePeriod,
    /// Windows aligned to Unix time in a young process, whose clock's timeline started after
    /// the boundary before the reading, start at the next boundary instead, the readings
    /// before it counted in a first window that ends a period after it: up to two periods
    /// long, on another grid than older processes' until it ends. Shows only to a checker that
    /// builds limiters so aligned in a process that young ([`PlantedBug::unix_epoch_only`]).
    EpochNextBoundaryWhenYoung,
    /// Each attempt reads the limit before the state instead of after it, so a claim decided
    /// under the limit as it was can land on a count that claims under a limit set since have
    /// raised: after a lowering, the window passes the lowered limit that an earlier claim in
    /// it already saw. Shows only to a checker that changes the limit while callers claim
    /// ([`PlantedBug::limit_change_only`]), and then only under a race.
    LimitReadBeforeWord,
    /// A limit change (`set_limit`) closes the current window's count as a past window's: the
    /// window grants the new limit afresh, on top of what it had granted. Shows only to a
    /// checker that changes the limit ([`PlantedBug::limit_change_only`]).
    LimitChangeAppliedToPastWindow,
    /// A peek answers from the stored window even once it has ended: the permits of a window
    /// past, and a negative time to its end taken as none. Shows only to a checker that
    /// peeks ([`PlantedBug::peek_only`]).
    PeekFromStaleWindow,
}

impl PlantedBug {
    /// Every planted bug.
    pub const ALL: [PlantedBug; 16] = [
        PlantedBug::CarryOver,
        PlantedBug::BoundaryOffByOne,
        PlantedBug::AdvanceFromNow,
        PlantedBug::FalseRejection,
        PlantedBug::DeadlineOvershoot,
        PlantedBug::OverflowPanic,
        PlantedBug::LostUpdate,
        PlantedBug::Overcount,
        PlantedBug::GiveUpOnLostRace,
        PlantedBug::WeightCountedAsOne,
        PlantedBug::DrainLeavesOne,
        PlantedBug::EpochOffByOnePeriod,
        PlantedBug::EpochNextBoundaryWhenYoung,
        PlantedBug::LimitReadBeforeWord,
        PlantedBug::LimitChangeAppliedToPastWindow,
        PlantedBug::PeekFromStaleWindow,
    ];

    /// The planted bug's name on a command line, in kebab case.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_broken::PlantedBug;
    ///
    /// assert_eq!(PlantedBug::GiveUpOnLostRace.name(), "give-up-on-lost-race");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            PlantedBug::CarryOver => "carry-over",
            PlantedBug::BoundaryOffByOne => "boundary-off-by-one",
            PlantedBug::AdvanceFromNow => "advance-from-now",
            PlantedBug::FalseRejection => "false-rejection",
            PlantedBug::DeadlineOvershoot => "deadline-overshoot",
            PlantedBug::OverflowPanic => "overflow-panic",
            PlantedBug::LostUpdate => "lost-update",
            PlantedBug::Overcount => "overcount",
            PlantedBug::GiveUpOnLostRace => "give-up-on-lost-race",
            PlantedBug::WeightCountedAsOne => "weight-counted-as-one",
            PlantedBug::DrainLeavesOne => "drain-leaves-one",
            PlantedBug::EpochOffByOnePeriod => "epoch-off-by-one-period",
            PlantedBug::EpochNextBoundaryWhenYoung => "epoch-next-boundary-when-young",
            PlantedBug::LimitReadBeforeWord => "limit-read-before-word",
            PlantedBug::LimitChangeAppliedToPastWindow => "limit-change-applied-to-past-window",
            PlantedBug::PeekFromStaleWindow => "peek-from-stale-window",
        }
    }

    /// Whether the bug shows only when another caller runs between a caller's read of the
    /// state and its write: alone, such a limiter behaves. A checker that runs callers one at a
    /// time cannot see it and skips it; loom, shuttle and the simulator's asynchronous path
    /// (which yields between the read and the write for these bugs) can.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_broken::PlantedBug;
    ///
    /// assert!(PlantedBug::LostUpdate.races_only());
    /// assert!(!PlantedBug::CarryOver.races_only());
    /// ```
    pub fn races_only(self) -> bool {
        matches!(
            self,
            PlantedBug::LostUpdate | PlantedBug::Overcount | PlantedBug::GiveUpOnLostRace
        )
    }

    /// Whether the bug shows only with instants or waits near the end of the timeline
    /// (`Instant::MAX`, `Duration::MAX`): with small numbers such a limiter behaves. A checker
    /// whose scenarios stay far from the end (the models, whose packed state holds instants
    /// below 2^44 ns) cannot see it and skips it.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_broken::PlantedBug;
    ///
    /// assert!(PlantedBug::OverflowPanic.extremes_only());
    /// assert!(!PlantedBug::LostUpdate.extremes_only());
    /// ```
    pub fn extremes_only(self) -> bool {
        self == PlantedBug::OverflowPanic
    }

    /// Whether the bug shows only to calls for more than one permit at once
    /// ([`PlantedLimiter::try_acquire_n`](crate::PlantedLimiter::try_acquire_n)) or to drains
    /// ([`PlantedLimiter::drain`](crate::PlantedLimiter::drain)): a checker whose callers each
    /// take one permit behaves as with a correct limiter, and skips it.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_broken::PlantedBug;
    ///
    /// assert!(PlantedBug::DrainLeavesOne.weighted_or_drained_only());
    /// assert!(!PlantedBug::CarryOver.weighted_or_drained_only());
    /// ```
    pub fn weighted_or_drained_only(self) -> bool {
        matches!(
            self,
            PlantedBug::WeightCountedAsOne | PlantedBug::DrainLeavesOne
        )
    }

    /// Whether the bug shows only in a limiter whose windows are aligned to Unix time
    /// ([`PlantedLimiter::aligned_to_unix_time`](crate::PlantedLimiter::aligned_to_unix_time)):
    /// a checker that builds none behaves as with a correct limiter, and skips it.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_broken::PlantedBug;
    ///
    /// assert!(PlantedBug::EpochOffByOnePeriod.unix_epoch_only());
    /// assert!(PlantedBug::EpochNextBoundaryWhenYoung.unix_epoch_only());
    /// assert!(!PlantedBug::CarryOver.unix_epoch_only());
    /// ```
    pub fn unix_epoch_only(self) -> bool {
        matches!(
            self,
            PlantedBug::EpochOffByOnePeriod | PlantedBug::EpochNextBoundaryWhenYoung
        )
    }

    /// Whether the bug shows only when the limit changes
    /// ([`PlantedLimiter::set_limit`](crate::PlantedLimiter::set_limit)) while callers claim: a
    /// checker that never changes it behaves as with a correct limiter, and skips it.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_broken::PlantedBug;
    ///
    /// assert!(PlantedBug::LimitReadBeforeWord.limit_change_only());
    /// assert!(!PlantedBug::LostUpdate.limit_change_only());
    /// ```
    pub fn limit_change_only(self) -> bool {
        matches!(
            self,
            PlantedBug::LimitReadBeforeWord | PlantedBug::LimitChangeAppliedToPastWindow
        )
    }
}

impl PlantedBug {
    /// Whether the bug shows only to a peek
    /// ([`PlantedLimiter::peek`](crate::PlantedLimiter::peek)): a checker that never peeks
    /// behaves as with a correct limiter, and skips it.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_broken::PlantedBug;
    ///
    /// assert!(PlantedBug::PeekFromStaleWindow.peek_only());
    /// assert!(!PlantedBug::CarryOver.peek_only());
    /// ```
    pub fn peek_only(self) -> bool {
        self == PlantedBug::PeekFromStaleWindow
    }
}

impl fmt::Display for PlantedBug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is no [`PlantedBug`]'s; its message lists the names there are.
///
/// # Examples
///
/// ```
/// use fixed_window_broken::PlantedBug;
///
/// let error = "typo".parse::<PlantedBug>().unwrap_err();
/// assert!(error.to_string().contains("carry-over"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownPlantedBug(String);

impl fmt::Display for UnknownPlantedBug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown planted bug `{}`; one of: ", self.0)?;
        for (i, bug) in PlantedBug::ALL.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(bug.name())?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownPlantedBug {}

impl FromStr for PlantedBug {
    type Err = UnknownPlantedBug;

    fn from_str(s: &str) -> Result<PlantedBug, UnknownPlantedBug> {
        PlantedBug::ALL
            .into_iter()
            .find(|bug| bug.name() == s)
            .ok_or_else(|| UnknownPlantedBug(s.to_owned()))
    }
}
