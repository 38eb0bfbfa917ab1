//! The catalogue of faults: one [`Flaw`] per classic way to get a fixed window wrong.

use core::fmt;
use core::str::FromStr;

/// The one fault a [`Broken`](crate::Broken) limiter has. Apart from it, each is a correct
/// fixed-window limiter, so a checker that flags one has found the flaw.
///
/// Not every checker can exercise every flaw: [`Flaw::races_only`] says which need two callers
/// between a read of the state and its write, and [`Flaw::extremes_only`] which need instants or
/// waits near the end of the timeline. A checker that cannot produce those skips them.
///
/// # Examples
///
/// Each flaw has a name for command lines.
///
/// ```
/// use fixed_window_broken::Flaw;
///
/// assert_eq!(Flaw::CarryOver.name(), "carry-over");
/// assert_eq!("lost-update".parse(), Ok(Flaw::LostUpdate));
/// assert!(Flaw::ALL.iter().all(|flaw| flaw.name().parse() == Ok(*flaw)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Flaw {
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
    /// overflow. Shows only near the end of the timeline ([`Flaw::extremes_only`]).
    OverflowPanic,
    /// Claims with a read and then a plain write instead of a compare-and-set, so two racing
    /// callers can both take the last permit. Shows only under a race ([`Flaw::races_only`]).
    LostUpdate,
    /// Checks that the count is below the limit, then increments it with a separate add: under
    /// a race the count passes the limit, and so do the permits. Shows only under a race.
    Overcount,
    /// A caller that loses the compare-and-set race is rejected instead of trying again, though
    /// the window may still have permits. Shows only under a race.
    GiveUpOnLostRace,
}

impl Flaw {
    /// Every flaw.
    pub const ALL: [Flaw; 9] = [
        Flaw::CarryOver,
        Flaw::BoundaryOffByOne,
        Flaw::AdvanceFromNow,
        Flaw::FalseRejection,
        Flaw::DeadlineOvershoot,
        Flaw::OverflowPanic,
        Flaw::LostUpdate,
        Flaw::Overcount,
        Flaw::GiveUpOnLostRace,
    ];

    /// The flaw's name on a command line, in kebab case.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_broken::Flaw;
    ///
    /// assert_eq!(Flaw::GiveUpOnLostRace.name(), "give-up-on-lost-race");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Flaw::CarryOver => "carry-over",
            Flaw::BoundaryOffByOne => "boundary-off-by-one",
            Flaw::AdvanceFromNow => "advance-from-now",
            Flaw::FalseRejection => "false-rejection",
            Flaw::DeadlineOvershoot => "deadline-overshoot",
            Flaw::OverflowPanic => "overflow-panic",
            Flaw::LostUpdate => "lost-update",
            Flaw::Overcount => "overcount",
            Flaw::GiveUpOnLostRace => "give-up-on-lost-race",
        }
    }

    /// Whether the flaw shows only when another caller runs between a caller's read of the
    /// state and its write: alone, such a limiter behaves. A checker that runs callers one at a
    /// time cannot see it and skips it; loom, shuttle and the simulator's asynchronous path
    /// (which yields between the read and the write for these flaws) can.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_broken::Flaw;
    ///
    /// assert!(Flaw::LostUpdate.races_only());
    /// assert!(!Flaw::CarryOver.races_only());
    /// ```
    pub fn races_only(self) -> bool {
        matches!(
            self,
            Flaw::LostUpdate | Flaw::Overcount | Flaw::GiveUpOnLostRace
        )
    }

    /// Whether the flaw shows only with instants or waits near the end of the timeline
    /// (`Instant::MAX`, `Duration::MAX`): with small numbers such a limiter behaves. A checker
    /// whose scenarios stay far from the end (the models, whose packed state holds instants
    /// below 2^44 ns) cannot see it and skips it.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_broken::Flaw;
    ///
    /// assert!(Flaw::OverflowPanic.extremes_only());
    /// assert!(!Flaw::LostUpdate.extremes_only());
    /// ```
    pub fn extremes_only(self) -> bool {
        self == Flaw::OverflowPanic
    }
}

impl fmt::Display for Flaw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is no [`Flaw`]'s; its message lists the names there are.
///
/// # Examples
///
/// ```
/// use fixed_window_broken::Flaw;
///
/// let error = "typo".parse::<Flaw>().unwrap_err();
/// assert!(error.to_string().contains("carry-over"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownFlaw(String);

impl fmt::Display for UnknownFlaw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown flaw `{}`; one of: ", self.0)?;
        for (i, flaw) in Flaw::ALL.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(flaw.name())?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownFlaw {}

impl FromStr for Flaw {
    type Err = UnknownFlaw;

    fn from_str(s: &str) -> Result<Flaw, UnknownFlaw> {
        Flaw::ALL
            .into_iter()
            .find(|flaw| flaw.name() == s)
            .ok_or_else(|| UnknownFlaw(s.to_owned()))
    }
}
