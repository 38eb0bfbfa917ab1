//! The performance targets: ratios of ours to a peer, each computed within one run, their
//! median over the runs, and a verdict only where the runs can bear one.

use crate::bench_results::BenchResults;
use crate::bench_runs::BenchRuns;
use crate::spread::Spread;

/// Full runs a ratio needs before the page gives it a verdict: one run of a contention bench
/// on a shared machine decides nothing. `cargo xtask bench` makes this many by default.
pub const RUNS_FOR_VERDICT: u32 = 3;

/// A benchmark, as criterion names it: (group, function, parameter).
pub type BenchId = (&'static str, &'static str, Option<&'static str>);

/// One target: ours over a peer, at most `limit`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Target {
    /// What is compared, in words.
    pub what: &'static str,
    /// Our benchmark.
    pub ours: BenchId,
    /// The peer's benchmark.
    pub peer: BenchId,
    /// The largest acceptable ratio ours / peer.
    pub limit: f64,
    /// Whether this is a target; a comparison shown for reference only gets no verdict.
    pub is_target: bool,
}

/// The targets the benchmarks are held to, and comparisons shown for reference.
pub const TARGETS: [Target; 10] = [
    Target {
        what: "permit path, default clock, vs governor check()",
        ours: ("permit", "ours-system", None),
        peer: ("permit", "governor-default", None),
        limit: 1.0,
        is_target: true,
    },
    Target {
        what: "permit path, manual clock vs governor's fake clock",
        ours: ("permit", "ours-manual", None),
        peer: ("permit", "governor-fake", None),
        limit: 1.3,
        is_target: true,
    },
    Target {
        what: "rejection path, default clock, vs governor's denial",
        ours: ("rejection", "ours-system", None),
        peer: ("rejection", "governor-default", None),
        limit: 1.0,
        is_target: true,
    },
    Target {
        what: "rejection path, manual clock vs governor's fake clock",
        ours: ("rejection", "ours-manual", None),
        peer: ("rejection", "governor-fake", None),
        limit: 1.5,
        is_target: true,
    },
    Target {
        what: "2 threads on a used-up window, vs governor",
        ours: ("contention-rejection", "ours-system", Some("2")),
        peer: ("contention-rejection", "governor-default", Some("2")),
        limit: 1.0,
        is_target: true,
    },
    Target {
        what: "8 threads on a used-up window, vs governor",
        ours: ("contention-rejection", "ours-system", Some("8")),
        peer: ("contention-rejection", "governor-default", Some("8")),
        limit: 1.0,
        is_target: true,
    },
    Target {
        what: "2 threads taking permits, vs governor",
        ours: ("contention-permit", "ours-system", Some("2")),
        peer: ("contention-permit", "governor-default", Some("2")),
        limit: 0.6,
        is_target: true,
    },
    Target {
        what: "8 threads taking permits, vs governor",
        ours: ("contention-permit", "ours-system", Some("8")),
        peer: ("contention-permit", "governor-default", Some("8")),
        limit: 0.6,
        is_target: true,
    },
    Target {
        what: "2 threads taking permits, vs the mutex window",
        ours: ("contention-permit", "ours-system", Some("2")),
        peer: ("contention-permit", "mutex-system", Some("2")),
        limit: 0.5,
        is_target: true,
    },
    Target {
        what: "permit path on std's Instant vs on SystemClock (reference: what the TSC saves)",
        ours: ("permit", "ours-std", None),
        peer: ("permit", "ours-system", None),
        limit: 1.0,
        is_target: false,
    },
];

/// criterion's id of a benchmark: `group/function`, then `/parameter` if it has one.
///
/// # Examples
///
/// ```
/// use fixed_window_reports::targets::full_id;
///
/// assert_eq!(full_id(("contention-permit", "ours-system", Some("2"))), "contention-permit/ours-system/2");
/// ```
pub fn full_id((group, function, parameter): BenchId) -> String {
    match parameter {
        Some(parameter) => format!("{group}/{function}/{parameter}"),
        None => format!("{group}/{function}"),
    }
}

/// The ids of every benchmark a target reads, each once, in the targets' order.
pub fn bench_ids() -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for target in &TARGETS {
        for id in [full_id(target.ours), full_id(target.peer)] {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    ids
}

/// A criterion filter (a regular expression) that selects exactly `ids`.
///
/// # Examples
///
/// ```
/// use fixed_window_reports::targets::filter;
///
/// assert_eq!(filter(["permit/ours-system", "a.b"]), r"^(permit/ours\-system|a\.b)$");
/// ```
pub fn filter<'a>(ids: impl IntoIterator<Item = &'a str>) -> String {
    /// The characters the `regex` crate (criterion's) treats as syntax.
    const META: &str = r"\.+*?()|[]{}^$#&-~";
    let escaped: Vec<String> = ids
        .into_iter()
        .map(|id| {
            id.chars()
                .flat_map(|c| META.contains(c).then_some('\\').into_iter().chain([c]))
                .collect()
        })
        .collect();
    format!("^({})$", escaped.join("|"))
}

/// What the runs say of a target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    /// The median ratio is within the limit; `runs_over` runs were above it.
    Met {
        /// Runs whose ratio was above the limit.
        runs_over: usize,
    },
    /// The median ratio is above the limit, by this fraction of it (0.2 = 20 % over).
    Missed {
        /// How far above the limit, as a fraction of it.
        by: f64,
    },
    /// A comparison shown for reference.
    Reference,
    /// Neither run measured both benchmarks.
    NotMeasured,
    /// Some run was quick: smoke data, not a verdict.
    Smoke,
    /// Nobody recorded the results: ours and the peer's may come from different runs.
    Unrecorded,
    /// Fewer full runs than [`RUNS_FOR_VERDICT`].
    TooFewRuns {
        /// The runs there were.
        runs: usize,
    },
}

/// A target checked against every run.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    /// The target.
    pub target: Target,
    /// (ours, peer) medians in nanoseconds, for each run that measured both, in run order.
    pub per_run: Vec<(f64, f64)>,
    /// What the runs say.
    pub verdict: Verdict,
}

impl Checked {
    /// Ours over the peer in each run.
    pub fn ratios(&self) -> Vec<f64> {
        self.per_run
            .iter()
            .map(|&(ours, peer)| ours / peer)
            .collect()
    }

    /// The median ratio over the runs and its spread.
    pub fn ratio(&self) -> Option<Spread> {
        Spread::of(&self.ratios())
    }

    /// Our figures over the runs.
    pub fn ours(&self) -> Option<Spread> {
        Spread::of(&self.per_run.iter().map(|p| p.0).collect::<Vec<_>>())
    }

    /// The peer's figures over the runs.
    pub fn peer(&self) -> Option<Spread> {
        Spread::of(&self.per_run.iter().map(|p| p.1).collect::<Vec<_>>())
    }

    /// Whether the target is met (`None` if there is no verdict).
    pub fn met(&self) -> Option<bool> {
        match self.verdict {
            Verdict::Met { .. } => Some(true),
            Verdict::Missed { .. } => Some(false),
            _ => None,
        }
    }
}

fn median(results: &BenchResults, (group, function, parameter): BenchId) -> Option<f64> {
    match parameter {
        Some(parameter) => results.get_with(group, function, parameter),
        None => results.get(group, function),
    }
    .map(|m| m.median_ns)
}

/// Checks every target against `runs`: each run's ratio from that run's own two figures, the
/// verdict from their median, and none from quick, unrecorded or too few runs.
///
/// # Examples
///
/// Three full runs of the permit path, ours below governor's in each: met.
///
/// ```
/// use fixed_window_reports::{BenchResults, BenchRun, BenchRuns, Measurement, Mode, RunManifest, Scope, Source, targets};
///
/// let run = |n: u32, ours: f64| {
///     let mut results = BenchResults::default();
///     for (function, ns) in [("ours-system", ours), ("governor-default", 10.0)] {
///         results.insert(Measurement {
///             group: "permit".into(),
///             function: function.into(),
///             parameter: None,
///             median_ns: ns,
///             interval_ns: (ns, ns),
///             elements: None,
///         });
///     }
///     let manifest = RunManifest {
///         run: n, runs: 3, command: "cargo xtask bench".into(), mode: Mode::Full,
///         scope: Scope::Every, criterion_args: vec![], started: 0, finished: 0, cores: None,
///     };
///     BenchRun { manifest: Some(manifest), results, cas_retries: None }
/// };
/// let runs = BenchRuns {
///     runs: vec![run(1, 9.0), run(2, 9.5), run(3, 11.0)],
///     source: Source::Recorded("target/bench-runs".into()),
///     skipped: vec![],
/// };
/// let checked = targets::check(&runs);
/// assert_eq!(checked[0].ratio().unwrap().median, 0.95);
/// assert_eq!(checked[0].verdict, targets::Verdict::Met { runs_over: 1 });
/// assert_eq!(checked[1].verdict, targets::Verdict::NotMeasured);
/// ```
pub fn check(runs: &BenchRuns) -> Vec<Checked> {
    TARGETS
        .iter()
        .map(|&target| {
            let mut per_run = Vec::new();
            let mut quick = false;
            for run in &runs.runs {
                if let (Some(ours), Some(peer)) = (
                    median(&run.results, target.ours),
                    median(&run.results, target.peer),
                ) {
                    per_run.push((ours, peer));
                    quick |= run.is_quick();
                }
            }
            let checked = Checked {
                target,
                per_run,
                verdict: Verdict::NotMeasured,
            };
            let verdict = match checked.ratio() {
                None => Verdict::NotMeasured,
                Some(_) if !target.is_target => Verdict::Reference,
                Some(_) if quick => Verdict::Smoke,
                Some(_) if !runs.is_recorded() => Verdict::Unrecorded,
                Some(spread) if spread.runs < RUNS_FOR_VERDICT as usize => {
                    Verdict::TooFewRuns { runs: spread.runs }
                }
                Some(spread) if spread.median <= target.limit => Verdict::Met {
                    runs_over: checked
                        .ratios()
                        .iter()
                        .filter(|&&r| r > target.limit)
                        .count(),
                },
                Some(spread) => Verdict::Missed {
                    by: spread.median / target.limit - 1.0,
                },
            };
            Checked { verdict, ..checked }
        })
        .collect()
}
