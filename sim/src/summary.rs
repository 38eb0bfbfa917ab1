//! A sweep's summary: the counts every family keeps, its own beside them, the rules broken
//! and the failing scenarios.

use std::collections::BTreeMap;

use crate::coverage::Coverage;
use crate::family::Family;
use crate::oracle::{Checks, Violation};
use crate::scenario::ScenarioId;
use crate::simulation::Target;

/// The invariant name under which a sweep counts scenarios whose two runs differed.
pub const DETERMINISM: &str = "determinism";

/// A scenario that broke a rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure<S = ScenarioId> {
    /// Its index in the sweep.
    pub index: u64,
    /// The scenario as drawn.
    pub id: ScenarioId,
    /// What the oracle reported on `id`.
    pub violations: Vec<Violation>,
    /// Whether its two runs differed (with determinism checking on).
    pub nondeterministic: bool,
    /// The message of a panic that escaped the run, which then had no trace to judge.
    pub panic: Option<String>,
    /// A smaller scenario that breaks the same rule, for the sweep's first few failures.
    pub shrunk: Option<S>,
}

impl<S> Failure<S> {
    /// What it broke first, as a sweep prints it.
    pub fn first(&self) -> String {
        if let Some(message) = &self.panic {
            format!("panic: {message}")
        } else {
            self.violations.first().map_or_else(
                || "trace differs between runs".to_owned(),
                ToString::to_string,
            )
        }
    }

    /// Everything it broke, as a summary file lists it.
    pub fn broken(&self) -> Vec<String> {
        let mut broken: Vec<String> = self.violations.iter().map(ToString::to_string).collect();
        if let Some(message) = &self.panic {
            broken.push(format!("{}: {message}", crate::Invariant::Panic));
        }
        if self.nondeterministic {
            broken.push(format!("{DETERMINISM}: trace differs between runs"));
        }
        broken
    }
}

/// Totals of a sweep of one family's limiter.
#[derive(Debug, Clone)]
pub struct Summary<F: Family = Target> {
    /// The sweep's seed.
    pub seed: u64,
    /// Scenarios run.
    pub scenarios: u64,
    /// Simulated calls.
    pub calls: u64,
    /// Calls that got a (counted) permit.
    pub permits: u64,
    /// Calls rejected.
    pub rejections: u64,
    /// Sleeps begun.
    pub waits: u64,
    /// Events the simulator processed.
    pub events: u64,
    /// Virtual time simulated, summed over scenarios, in nanoseconds.
    pub simulated_ns: u128,
    /// Scenarios that broke each rule, by name (every rule of the family listed, zero or not).
    pub violations: BTreeMap<&'static str, u64>,
    /// How many times the oracle checked each rule, over all scenarios.
    pub checks: Checks,
    /// Scenarios that exercised each of the family's features (every one listed).
    pub coverage: Coverage,
    /// The failing scenarios, in index order.
    pub failures: Vec<Failure<F::Shrunk>>,
    /// The counts only this family keeps.
    pub counts: F::Counts,
}

impl<F: Family> Summary<F> {
    /// A summary of no scenario yet, listing every rule and feature at zero, so that it names
    /// those no scenario broke or reached.
    pub fn new(seed: u64) -> Summary<F> {
        Summary {
            seed,
            violations: std::iter::once(DETERMINISM)
                .chain(F::RULES.iter().map(|rule| rule.name()))
                .chain(std::iter::once(F::UNJUDGED.name()))
                .map(|name| (name, 0))
                .collect(),
            coverage: Coverage::new(F::FEATURES),
            counts: F::no_counts(),
            ..Summary::default()
        }
    }

    /// Adds `other`'s counts to these (not its failures: the sweep gathers those in order).
    pub(crate) fn add(&mut self, other: Summary<F>) {
        self.scenarios += other.scenarios;
        self.calls += other.calls;
        self.permits += other.permits;
        self.rejections += other.rejections;
        self.waits += other.waits;
        self.events += other.events;
        self.simulated_ns += other.simulated_ns;
        for (name, count) in other.violations {
            *self.violations.entry(name).or_insert(0) += count;
        }
        self.checks.add(&other.checks);
        self.coverage.add(&other.coverage);
        self.counts += other.counts;
    }
}

impl<F: Family> Default for Summary<F> {
    fn default() -> Summary<F> {
        Summary {
            seed: 0,
            scenarios: 0,
            calls: 0,
            permits: 0,
            rejections: 0,
            waits: 0,
            events: 0,
            simulated_ns: 0,
            violations: BTreeMap::new(),
            checks: Checks::default(),
            coverage: Coverage::default(),
            failures: Vec::new(),
            counts: F::Counts::default(),
        }
    }
}
