//! The plain and keyed limiters as a family: a [`Target`] names which, real or planted.

use std::collections::BTreeMap;
use std::ops::AddAssign;

use crate::coverage::{PLAIN_FEATURES, plain_features};
use crate::family::{Family, Judged, Unjudged};
use crate::oracle::{Invariant, Memory, verdict};
use crate::scenario::ScenarioId;
use crate::shrink::shrink;
use crate::simulation::{Target, run};
use crate::summary::{Failure, Summary};

/// The counts a sweep of the plain or the keyed limiter keeps beside every family's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlainCounts {
    /// Calls that failed with `Interrupted`.
    pub interrupts: u64,
    /// For a keyed limiter: keys drawn, summed over scenarios.
    pub keys: u64,
    /// For a keyed limiter: the most keys one scenario drew.
    pub most_keys: u64,
    /// For a keyed limiter: scenarios by population (`hot`, `few`, `many`).
    pub populations: BTreeMap<String, u64>,
    /// For a keyed limiter: the keys it held against the bound, over all scenarios.
    pub memory: Option<Memory>,
}

impl AddAssign for PlainCounts {
    fn add_assign(&mut self, other: PlainCounts) {
        self.interrupts += other.interrupts;
        self.keys += other.keys;
        self.most_keys = self.most_keys.max(other.most_keys);
        for (name, count) in other.populations {
            *self.populations.entry(name).or_insert(0) += count;
        }
        if let Some(memory) = other.memory {
            self.memory.get_or_insert_default().add(&memory);
        }
    }
}

impl Family for Target {
    type Counts = PlainCounts;
    type Shrunk = ScenarioId;

    const RULES: &'static [Invariant] = &Invariant::ALL;
    // Scenarios are drawn with valid configurations; one the limiter refused would be a
    // generator bug, reported as an event mismatch.
    const UNJUDGED: Invariant = Invariant::Events;
    const FEATURES: &'static [&'static str] = &PLAIN_FEATURES;
    const MOST_SHRUNK: usize = 10;

    fn limiter(self) -> &'static str {
        if self.is_keyed() { "keyed" } else { "plain" }
    }

    fn planted(self) -> Option<&'static str> {
        matches!(self, Target::Planted(_) | Target::PlantedKeyed(_)).then(|| self.name())
    }

    fn judge(
        self,
        id: &ScenarioId,
        check_determinism: bool,
        local: &mut Summary<Target>,
    ) -> Result<Judged, Unjudged> {
        let scenario = self.scenario(id);
        if let Some(population) = scenario.keys {
            let counts = &mut local.counts;
            counts.keys += population.keys();
            counts.most_keys = counts.most_keys.max(population.keys());
            *counts
                .populations
                .entry(population.name().to_owned())
                .or_insert(0) += 1;
        }
        let Ok(trace) = run(&scenario, self) else {
            return Err(Unjudged {
                rule: Self::UNJUDGED,
                panic: None,
            });
        };
        let stats = trace.stats;
        local.calls += stats.calls;
        local.permits += stats.permits;
        local.rejections += stats.rejections;
        local.waits += stats.waits;
        local.counts.interrupts += stats.interrupts;
        local.events += stats.events;
        local.simulated_ns += u128::from(stats.simulated_ns);
        local.coverage.hit_mask(
            &PLAIN_FEATURES,
            u64::from(plain_features(&scenario, &trace)),
        );
        let verdict = verdict(&scenario, &trace);
        local.checks.add(&verdict.checks);
        if let Some(memory) = verdict.memory {
            local.counts.memory.get_or_insert_default().add(&memory);
        }
        // The first trace is let go before the second run: a run of millions of keys holds
        // hundreds of megabytes of records.
        let hash = check_determinism.then(|| trace.trace_hash());
        drop(trace);
        let nondeterministic = hash.is_some_and(|hash| {
            run(&scenario, self).map_or(true, |again| again.trace_hash() != hash)
        });
        Ok(Judged {
            violations: verdict.violations,
            nondeterministic,
        })
    }

    fn shrink(self, id: &ScenarioId, rule: Invariant) -> ScenarioId {
        shrink(id, self, rule)
    }

    /// The shrunk scenario, if the failure was shrunk, else the scenario itself.
    fn replay_id(self, failure: &Failure) -> String {
        failure.shrunk.as_ref().unwrap_or(&failure.id).to_string()
    }
}
