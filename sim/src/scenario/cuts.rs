//! What a shrink takes out of a seed's scenario besides callers: the limit lowered, the
//! clock's moves, the drawn origin, the weights and drains, the limit changes. Written after
//! the kept callers in a scenario id (`SEED:KEPT/limit=2,steady,creation,single,fixed`), so one
//! line replays the shrunk scenario exactly.

use core::fmt;

use fixed_window::Origin;

use super::Scenario;
use crate::clock_model::ClockModel;
use crate::record::CallKind;

/// The simplifications applied to a scenario after its draw; the default applies none.
///
/// # Examples
///
/// ```
/// use fixed_window_sim::{Cuts, Scenario, ScenarioId};
///
/// let id: ScenarioId = "42:0-3/limit=1,steady".parse()?;
/// assert_eq!(id.cuts, Cuts { limit: Some(1), steady_clock: true, ..Cuts::default() });
/// assert_eq!(id.to_string(), "42:0-3/limit=1,steady");
/// assert_eq!(Scenario::generate(&id).config.limit, 1);
/// # Ok::<(), fixed_window_sim::ParseIdError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "each cut is one named yes-or-no simplification, as the replay line writes it"
)]
pub struct Cuts {
    /// The limit, lowered to this if it was higher.
    pub limit: Option<u32>,
    /// The clock's jumps, steps back and stops dropped: it reads its first reading plus the
    /// virtual time.
    pub steady_clock: bool,
    /// The drawn origin dropped: the limiter aligns its windows to its creation.
    pub creation_origin: bool,
    /// Every caller takes one permit: weights dropped, drains made single attempts.
    pub single_permits: bool,
    /// The limit never changes: the scenario's limit changes, and its keys', dropped.
    pub fixed_limit: bool,
}

impl Cuts {
    /// Whether these cut nothing.
    pub fn is_empty(&self) -> bool {
        *self == Cuts::default()
    }

    /// Applies these to `scenario`.
    pub(crate) fn apply(&self, scenario: &mut Scenario) {
        if let Some(limit) = self.limit {
            scenario.config.limit = scenario.config.limit.min(limit.max(1));
        }
        if self.steady_clock {
            scenario.clock =
                ClockModel::ordinary(scenario.clock.reading(0)).with_tick(scenario.clock.tick());
        }
        if self.creation_origin {
            scenario.origin_choice = Origin::Creation;
        }
        if self.fixed_limit {
            scenario.limit_changes.clear();
            scenario.key_limits.changes.clear();
        }
        if self.single_permits {
            for caller in &mut scenario.callers {
                if caller.kind == CallKind::Drain {
                    caller.kind = CallKind::TryAcquire;
                }
                caller.weight = 1;
            }
        }
    }

    /// Reads the part of a scenario id after `/`.
    pub(crate) fn parse(text: &str) -> Option<Cuts> {
        let mut cuts = Cuts::default();
        for part in text.split(',') {
            match part {
                "steady" => cuts.steady_clock = true,
                "creation" => cuts.creation_origin = true,
                "single" => cuts.single_permits = true,
                "fixed" => cuts.fixed_limit = true,
                _ => cuts.limit = Some(part.strip_prefix("limit=")?.parse().ok()?),
            }
        }
        Some(cuts)
    }
}

impl fmt::Display for Cuts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let limit = self.limit.map(|limit| format!("limit={limit}"));
        let parts = [
            limit.as_deref(),
            self.steady_clock.then_some("steady"),
            self.creation_origin.then_some("creation"),
            self.single_permits.then_some("single"),
            self.fixed_limit.then_some("fixed"),
        ];
        let mut first = true;
        for part in parts.into_iter().flatten() {
            if !first {
                f.write_str(",")?;
            }
            first = false;
            f.write_str(part)?;
        }
        Ok(())
    }
}
