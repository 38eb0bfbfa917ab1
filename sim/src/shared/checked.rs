//! One shared scenario run and checked by the oracle, a panic in either caught and described:
//! what a sweep counts and what shrinking replays.

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::oracle::Verdict;
use crate::shared::oracle::verdict_shared;
use crate::shared::planted::SharedPlantedBug;
use crate::shared::run::{SharedRun, run_shared};
use crate::shared::scenario::SharedScenario;

/// A run and its check, with any panic caught and described.
pub(crate) fn run_checked(
    scenario: &SharedScenario,
    planted: Option<SharedPlantedBug>,
) -> Result<(SharedRun, Verdict), String> {
    catch_unwind(AssertUnwindSafe(|| {
        let run = run_shared(scenario, planted);
        let verdict = verdict_shared(scenario, &run);
        (run, verdict)
    }))
    .map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic whose payload is not a string".to_owned())
    })
}
