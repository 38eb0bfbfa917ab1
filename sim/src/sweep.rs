//! A sweep: many seeded scenarios of one family's limiter, spread over threads, checked by
//! the oracle and summed up.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::family::{Family, Judged, Unjudged};
use crate::oracle::Invariant;
use crate::scenario::ScenarioId;
use crate::simulation::Target;
use crate::summary::{DETERMINISM, Failure, Summary};

/// What to sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sweep<F = Target> {
    /// The sweep's seed; each scenario's seed derives from it and the scenario's index.
    pub seed: u64,
    /// How many scenarios the whole sweep has (over all shards).
    pub scenarios: u64,
    /// This shard's number and the number of shards: scenario `i` belongs to shard `i % n`.
    pub shard: (u64, u64),
    /// Worker threads.
    pub threads: usize,
    /// The limiter to drive: its family, and the real one or a planted one.
    pub target: F,
    /// Whether to run every scenario twice and compare trace hashes.
    pub check_determinism: bool,
}

impl Sweep {
    /// The seed of `cargo xtask simulate` when none is given, whatever the limiter.
    pub const DEFAULT_SEED: u64 = 0x5EED;
}

impl<F> Sweep<F> {
    /// The id of the sweep's scenario number `index` (whatever the family: a seed names the
    /// scenario each family draws from it).
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

/// The id of scenario `index` of the sweep seeded `seed`, whatever the family.
fn scenario_id(seed: u64, index: u64) -> ScenarioId {
    ScenarioId::seed(split_mix(seed ^ split_mix(index)))
}

/// Runs `one` on each scenario of `shard` (`I/N`: the indices below `scenarios` that are `I`
/// modulo `N`) on `threads` threads, each keeping its own `S`, and calls `progress` after each
/// scenario; returns every thread's `S` and the failures found, in scenario order.
fn across_threads<S: Default + Send, F: Send>(
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
pub fn sweep<F: Family>(config: &Sweep<F>, progress: impl Fn(u64) + Sync) -> Summary<F> {
    let mut summary = Summary::new(config.seed);
    let (parts, found) = across_threads(
        config.scenarios,
        config.shard,
        config.threads,
        |index, local: &mut Summary<F>| one(config, index, local),
        progress,
    );
    for part in parts {
        summary.add(part);
    }
    summary.failures = found
        .into_iter()
        .enumerate()
        .map(|(i, mut failure)| {
            if i < F::MOST_SHRUNK
                && let Some(first) = failure.violations.first()
            {
                failure.shrunk = Some(config.target.shrink(&failure.id, first.invariant));
            }
            failure
        })
        .collect();
    summary
}

/// Runs scenario `index`, adding its counts to `local`; the failure if it broke a rule.
fn one<F: Family>(
    config: &Sweep<F>,
    index: u64,
    local: &mut Summary<F>,
) -> Option<Failure<F::Shrunk>> {
    let id = config.scenario(index);
    local.scenarios += 1;
    let Judged {
        violations,
        nondeterministic,
    } = match config.target.judge(&id, config.check_determinism, local) {
        Ok(judged) => judged,
        Err(Unjudged { rule, panic }) => {
            *local.violations.entry(rule.name()).or_insert(0) += 1;
            return Some(Failure {
                index,
                id,
                violations: Vec::new(),
                nondeterministic: false,
                panic,
                shrunk: None,
            });
        }
    };
    if violations.is_empty() && !nondeterministic {
        return None;
    }
    let mut broken: Vec<Invariant> = violations.iter().map(|v| v.invariant).collect();
    broken.sort_unstable();
    broken.dedup();
    for invariant in broken {
        *local.violations.entry(invariant.name()).or_insert(0) += 1;
    }
    if nondeterministic {
        *local.violations.entry(DETERMINISM).or_insert(0) += 1;
    }
    Some(Failure {
        index,
        id,
        violations,
        nondeterministic,
        panic: None,
        shrunk: None,
    })
}
