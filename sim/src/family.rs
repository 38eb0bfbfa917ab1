//! A limiter family: the plain and keyed limiters (a [`Target`](crate::Target)) or the shared
//! one (a [`SharedTarget`](crate::shared::SharedTarget)), as one sweep drives them all. The
//! family draws, runs and judges a scenario and shrinks a failing one; the sweep does the
//! rest (threads, shards, the rules each scenario broke, the failures and their replay lines).

pub(crate) mod plain;

use std::fmt::Debug;
use std::ops::AddAssign;

use crate::oracle::{Invariant, Violation};
use crate::scenario::ScenarioId;
use crate::summary::{Failure, Summary};

/// What a sweep learnt of one scenario it ran and judged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Judged {
    /// What the oracle reported.
    pub violations: Vec<Violation>,
    /// Whether a second run's trace differed from the first (determinism checking on).
    pub nondeterministic: bool,
}

/// A scenario a sweep could not judge: no trace came out of it for the oracle to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unjudged {
    /// The rule its failure counts under.
    pub rule: Invariant,
    /// The message of the panic that escaped, if one did.
    pub panic: Option<String>,
}

/// A family of limiters one sweep drives alike; a value of it also names the subject, the
/// real limiter or a planted one.
pub trait Family: Copy + Debug + Send + Sync {
    /// The counts a summary keeps for this family alone, beside those every family keeps.
    type Counts: Debug + Clone + Default + Send + AddAssign;
    /// What a shrink of a failing scenario found: the smaller scenario to replay.
    type Shrunk: Debug + Clone + Send;

    /// The rules its oracle judges, in report order: the checks a summary lists.
    const RULES: &'static [Invariant];
    /// The rule a scenario that could not be judged breaks.
    const UNJUDGED: Invariant;
    /// The features its coverage counts.
    const FEATURES: &'static [&'static str];
    /// Failures past this many are reported without shrinking, to keep a bad sweep short.
    const MOST_SHRUNK: usize;

    /// The counts of a sweep before its first scenario, listing at zero what its summary
    /// names whether it happened or not.
    fn no_counts() -> Self::Counts {
        Self::Counts::default()
    }

    /// The name `--limiter` takes and a summary's `limiter` gives: `plain`, `keyed`, `shared`.
    fn limiter(self) -> &'static str;

    /// The planted bug driven, by name, or `None` for the real limiter.
    fn planted(self) -> Option<&'static str>;

    /// Draws scenario `id`, runs it (twice if `check_determinism`, comparing the traces) and
    /// judges it, adding its counts, coverage and checks to `local`; the rules it broke are
    /// counted by the caller.
    ///
    /// # Errors
    ///
    /// A scenario without a trace to judge.
    fn judge(
        self,
        id: &ScenarioId,
        check_determinism: bool,
        local: &mut Summary<Self>,
    ) -> Result<Judged, Unjudged>;

    /// A smaller scenario than `id` that still breaks `rule`.
    fn shrink(self, id: &ScenarioId, rule: Invariant) -> Self::Shrunk;

    /// What follows `--replay` in the line that replays `failure`.
    fn replay_id(self, failure: &Failure<Self::Shrunk>) -> String;

    /// The command that runs this family's subject, to which a replay line adds `--replay`.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_sim::{Family, PlantedBug, Target};
    ///
    /// assert_eq!(Target::Real.command(), "cargo xtask simulate");
    /// assert_eq!(Target::Keyed.command(), "cargo xtask simulate --limiter keyed");
    /// assert_eq!(
    ///     Target::Planted(PlantedBug::CarryOver).command(),
    ///     "cargo xtask simulate --planted carry-over"
    /// );
    /// ```
    fn command(self) -> String {
        let mut command = "cargo xtask simulate".to_owned();
        if self.limiter() != "plain" {
            command.push_str(" --limiter ");
            command.push_str(self.limiter());
        }
        if let Some(planted) = self.planted() {
            command.push_str(" --planted ");
            command.push_str(planted);
        }
        command
    }
}
