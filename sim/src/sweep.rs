//! A sweep: many seeded scenarios, spread over threads, checked by the oracle and summed up.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::coverage::{Coverage, PLAIN_FEATURES, plain_features};
use crate::oracle::{Checks, Invariant, Memory, Violation, verdict};
use crate::scenario::ScenarioId;
use crate::shrink::shrink;
use crate::simulation::{Target, run};

/// The invariant name under which a sweep counts scenarios whose two runs differed.
pub const DETERMINISM: &str = "determinism";

/// Failures past this many are reported without shrinking, to keep a bad sweep short.
const MOST_SHRUNK: usize = 10;

/// What to sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sweep {
    /// The sweep's seed; each scenario's seed derives from it and the scenario's index.
    pub seed: u64,
    /// How many scenarios the whole sweep has (over all shards).
    pub scenarios: u64,
    /// This shard's number and the number of shards: scenario `i` belongs to shard `i % n`.
    pub shard: (u64, u64),
    /// Worker threads.
    pub threads: usize,
    /// The limiter to drive.
    pub target: Target,
    /// Whether to run every scenario twice and compare trace hashes.
    pub check_determinism: bool,
}

impl Sweep {
    /// The seed of `cargo xtask simulate` when none is given.
    pub const DEFAULT_SEED: u64 = 0x5EED;

    /// The id of the sweep's scenario number `index`.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_sim::{Sweep, Target};
    ///
    /// let sweep = Sweep {
    ///     seed: 1,
    ///     scenarios: 10,
    ///     shard: (0, 1),
    ///     threads: 1,
    ///     target: Target::Real,
    ///     check_determinism: false,
    /// };
    /// assert_ne!(sweep.scenario(0), sweep.scenario(1));
    /// ```
    pub fn scenario(&self, index: u64) -> ScenarioId {
        scenario_id(self.seed, index)
    }
}

impl Sweep {
    /// Which sweep this is, to be written into its summary and its trace: a reader can then
    /// tell whether the two come from the same sweep. `command` runs the simulator on the
    /// same limiter (`cargo xtask simulate`, with `--planted` for a planted one), `limiter`
    /// names it, and `started` is when the sweep began, in seconds since the Unix epoch.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_sim::{Sweep, Target};
    ///
    /// let sweep = Sweep { seed: 7, scenarios: 1, shard: (0, 1), threads: 2, target: Target::Real, check_determinism: false };
    /// let provenance = sweep.provenance("cargo xtask simulate", "real", 0);
    /// assert_eq!(provenance.command, "cargo xtask simulate --seed 7 --scenarios 1");
    /// assert_eq!(provenance.shard, "0/1");
    /// ```
    pub fn provenance(&self, command: &str, limiter: &str, started: u64) -> Provenance {
        let (shard, shards) = self.shard;
        let mut command = vec![
            command.to_owned(),
            format!("--seed {} --scenarios {}", self.seed, self.scenarios),
        ];
        if shards > 1 {
            command.push(format!("--shard {shard}/{shards}"));
        }
        if self.check_determinism {
            command.push("--check-determinism".to_owned());
        }
        Provenance {
            seed: self.seed,
            scenarios: self.scenarios,
            shard: format!("{shard}/{shards}"),
            limiter: limiter.to_owned(),
            command: command.join(" "),
            started,
        }
    }
}

/// Which sweep wrote a summary or a trace: its `sweep` object, and the trace's first line
/// (`{"type":"sweep",…}`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Provenance {
    /// The sweep's seed.
    pub seed: u64,
    /// Scenarios in the whole sweep.
    pub scenarios: u64,
    /// The shard run, as `I/N`.
    pub shard: String,
    /// The limiter driven: `real`, or the name of a planted one.
    pub limiter: String,
    /// A command that runs the same sweep.
    pub command: String,
    /// When the sweep started, in seconds since the Unix epoch.
    pub started: u64,
}

/// The id of scenario `index` of the sweep seeded `seed` (the shared limiter's sweep draws
/// its scenarios' seeds the same way).
pub(crate) fn scenario_id(seed: u64, index: u64) -> ScenarioId {
    ScenarioId::seed(split_mix(seed ^ split_mix(index)))
}

/// Runs `one` on each scenario of `shard` (`I/N`: the indices below `scenarios` that are `I`
/// modulo `N`) on `threads` threads, each keeping its own `S`, and calls `progress` after each
/// scenario; returns every thread's `S` and the failures found, in scenario order. The plain
/// and the shared sweeps share it.
pub(crate) fn across_threads<S: Default + Send, F: Send>(
    scenarios: u64,
    (shard, shards): (u64, u64),
    threads: usize,
    one: impl Fn(u64, &mut S) -> Option<F> + Sync,
    progress: impl Fn(u64) + Sync,
) -> (Vec<S>, Vec<F>) {
    let shards = shards.max(1);
    let mine: Vec<u64> = (0..scenarios)
        .filter(|index| index % shards == shard)
        .collect();
    let next = AtomicU64::new(0);
    let parts = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| {
                let mut local = S::default();
                let mut found = Vec::new();
                loop {
                    let position = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&index) = usize::try_from(position).ok().and_then(|p| mine.get(p))
                    else {
                        break;
                    };
                    if let Some(failure) = one(index, &mut local) {
                        found.push((index, failure));
                    }
                    progress(1);
                }
                parts
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push((local, found));
            });
        }
    });
    let mut states = Vec::new();
    let mut failures = Vec::new();
    for (local, found) in parts
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
    {
        states.push(local);
        failures.extend(found);
    }
    failures.sort_by_key(|(index, _)| *index);
    (
        states,
        failures.into_iter().map(|(_, failure)| failure).collect(),
    )
}

/// `SplitMix64`'s finaliser: spreads nearby inputs over the whole range.
fn split_mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A scenario that broke a rule.
#[derive(Debug, Clone)]
pub struct Failure {
    /// Its index in the sweep.
    pub index: u64,
    /// The scenario as drawn.
    pub id: ScenarioId,
    /// A smaller scenario that breaks the same rule (or `id` itself).
    pub shrunk: ScenarioId,
    /// What the oracle reported on `id`.
    pub violations: Vec<Violation>,
    /// Whether its two runs differed (with determinism checking on).
    pub nondeterministic: bool,
}

/// Totals of a sweep.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// The sweep's seed.
    pub seed: u64,
    /// Scenarios run.
    pub scenarios: u64,
    /// Simulated calls.
    pub calls: u64,
    /// Calls that got a permit.
    pub permits: u64,
    /// Calls rejected.
    pub rejections: u64,
    /// Sleeps begun.
    pub waits: u64,
    /// Calls that failed with `Interrupted`.
    pub interrupts: u64,
    /// Events the simulator processed (arrivals, timers, interrupts, cancellations).
    pub events: u64,
    /// Scenarios that broke each invariant, by name (every invariant listed, zero or not).
    pub violations: BTreeMap<String, u64>,
    /// How many times the oracle checked each rule, over all scenarios.
    pub checks: Checks,
    /// Virtual time simulated, summed over scenarios, in nanoseconds.
    pub simulated_ns: u128,
    /// The failing scenarios, in index order.
    pub failures: Vec<Failure>,
    /// For a keyed limiter: keys drawn, summed over scenarios.
    pub keys: u64,
    /// For a keyed limiter: the most keys one scenario drew.
    pub most_keys: u64,
    /// For a keyed limiter: scenarios by population (`hot`, `few`, `many`).
    pub populations: BTreeMap<String, u64>,
    /// For a keyed limiter: the keys it held against the bound, over all scenarios.
    pub memory: Option<Memory>,
    /// Scenarios that exercised each of [`PLAIN_FEATURES`] (every one listed, zero or not).
    pub coverage: Coverage,
}

impl Summary {
    /// Adds `other`'s counts to these.
    fn add(&mut self, other: Summary) {
        self.scenarios += other.scenarios;
        self.calls += other.calls;
        self.permits += other.permits;
        self.rejections += other.rejections;
        self.waits += other.waits;
        self.interrupts += other.interrupts;
        self.events += other.events;
        self.simulated_ns += other.simulated_ns;
        self.checks.add(&other.checks);
        for (name, count) in other.violations {
            *self.violations.entry(name).or_insert(0) += count;
        }
        self.keys += other.keys;
        self.most_keys = self.most_keys.max(other.most_keys);
        for (name, count) in other.populations {
            *self.populations.entry(name).or_insert(0) += count;
        }
        if let Some(memory) = other.memory {
            self.memory.get_or_insert_default().add(&memory);
        }
        self.coverage.add(&other.coverage);
    }
}

/// Runs the sweep, calling `progress` after each scenario.
///
/// # Examples
///
/// ```
/// use fixed_window_sim::{Sweep, Target, sweep};
///
/// let summary = sweep(
///     &Sweep { seed: 9, scenarios: 4, shard: (0, 1), threads: 2, target: Target::Real, check_determinism: true },
///     |_| {},
/// );
/// assert_eq!(summary.scenarios, 4);
/// assert!(summary.failures.is_empty());
/// ```
pub fn sweep(config: &Sweep, progress: impl Fn(u64) + Sync) -> Summary {
    let mut summary = Summary {
        seed: config.seed,
        violations: std::iter::once(DETERMINISM)
            .chain(Invariant::ALL.iter().map(|invariant| invariant.name()))
            .map(|name| (name.to_owned(), 0))
            .collect(),
        coverage: Coverage::new(&PLAIN_FEATURES),
        ..Summary::default()
    };
    let (parts, found) = across_threads(
        config.scenarios,
        config.shard,
        config.threads,
        |index, local: &mut Summary| one(config, index, local),
        progress,
    );
    for part in parts {
        summary.add(part);
    }
    summary.failures = found
        .into_iter()
        .enumerate()
        .map(|(i, mut failure)| {
            if i < MOST_SHRUNK
                && let Some(first) = failure.violations.first()
            {
                failure.shrunk = shrink(&failure.id, config.target, first.invariant);
            }
            failure
        })
        .collect();
    summary
}

/// Runs scenario `index`, adding its counts to `local`; the failure if it broke a rule.
fn one(config: &Sweep, index: u64, local: &mut Summary) -> Option<Failure> {
    let id = config.scenario(index);
    let scenario = config.target.scenario(&id);
    local.scenarios += 1;
    if let Some(population) = scenario.keys {
        local.keys += population.keys();
        local.most_keys = local.most_keys.max(population.keys());
        *local
            .populations
            .entry(population.name().to_owned())
            .or_insert(0) += 1;
    }
    let Ok(trace) = run(&scenario, config.target) else {
        // Scenarios are drawn with valid configurations; one the limiter refused would be
        // a generator bug, reported as an event mismatch.
        *local
            .violations
            .entry(Invariant::Events.name().to_owned())
            .or_insert(0) += 1;
        return Some(Failure {
            index,
            shrunk: id.clone(),
            id,
            violations: Vec::new(),
            nondeterministic: false,
        });
    };
    let stats = trace.stats;
    local.calls += stats.calls;
    local.permits += stats.permits;
    local.rejections += stats.rejections;
    local.waits += stats.waits;
    local.interrupts += stats.interrupts;
    local.events += stats.events;
    local.simulated_ns += u128::from(stats.simulated_ns);
    local
        .coverage
        .hit_mask(&PLAIN_FEATURES, plain_features(&scenario, &trace));
    let verdict = verdict(&scenario, &trace);
    local.checks.add(&verdict.checks);
    if let Some(memory) = verdict.memory {
        local.memory.get_or_insert_default().add(&memory);
    }
    let violations = verdict.violations;
    // The first trace is let go before the second run: a run of millions of keys holds
    // hundreds of megabytes of records.
    let hash = config.check_determinism.then(|| trace.trace_hash());
    drop(trace);
    let nondeterministic = hash.is_some_and(|hash| {
        run(&scenario, config.target).map_or(true, |again| again.trace_hash() != hash)
    });
    if violations.is_empty() && !nondeterministic {
        return None;
    }
    let mut broken: Vec<Invariant> = violations.iter().map(|v| v.invariant).collect();
    broken.sort_unstable();
    broken.dedup();
    for invariant in broken {
        *local
            .violations
            .entry(invariant.name().to_owned())
            .or_insert(0) += 1;
    }
    if nondeterministic {
        *local.violations.entry(DETERMINISM.to_owned()).or_insert(0) += 1;
    }
    Some(Failure {
        index,
        shrunk: id.clone(),
        id,
        violations,
        nondeterministic,
    })
}
