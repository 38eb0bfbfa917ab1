//! The issue's performance targets, as ratios of two results of the same run.

use crate::bench_results::BenchResults;

/// One target: ours over a peer, at most `limit`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Target {
    /// What is compared, in words.
    pub what: &'static str,
    /// Our benchmark: (group, function, parameter).
    pub ours: (&'static str, &'static str, Option<&'static str>),
    /// The peer's benchmark.
    pub peer: (&'static str, &'static str, Option<&'static str>),
    /// The largest acceptable ratio ours / peer.
    pub limit: f64,
    /// Whether this is a target; a comparison shown for reference only gets no verdict.
    pub is_target: bool,
}

/// A target checked against results.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    /// The target.
    pub target: Target,
    /// Our median and the peer's, in nanoseconds, if both were measured.
    pub medians: Option<(f64, f64)>,
}

impl Checked {
    /// Ours over the peer, if both were measured.
    pub fn ratio(&self) -> Option<f64> {
        self.medians.map(|(ours, peer)| ours / peer)
    }

    /// Whether the target is met (`None` if not measured).
    pub fn met(&self) -> Option<bool> {
        self.ratio()
            .filter(|_| self.target.is_target)
            .map(|ratio| ratio <= self.target.limit)
    }
}

/// The targets the benchmarks are held to, and one comparison shown for reference.
pub const TARGETS: [Target; 5] = [
    Target {
        what: "permit path, default clock, vs governor check()",
        ours: ("permit", "ours-system", None),
        peer: ("permit", "governor-default", None),
        limit: 0.9,
        is_target: true,
    },
    Target {
        what: "rejection path, default clock, vs governor denial",
        ours: ("rejection", "ours-system", None),
        peer: ("rejection", "governor-default", None),
        limit: 1.0,
        is_target: true,
    },
    Target {
        what: "2 threads hammering, vs governor",
        ours: ("contention-permit", "ours-system", Some("2")),
        peer: ("contention-permit", "governor-default", Some("2")),
        limit: 0.8,
        is_target: true,
    },
    Target {
        what: "2 threads hammering, vs the mutex window",
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

fn median(
    results: &BenchResults,
    (group, function, parameter): (&str, &str, Option<&str>),
) -> Option<f64> {
    match parameter {
        Some(parameter) => results.get_with(group, function, parameter),
        None => results.get(group, function),
    }
    .map(|m| m.median_ns)
}

/// Checks every target against `results`.
///
/// # Examples
///
/// ```
/// use fixed_window_reports::{BenchResults, Measurement, targets};
///
/// let mut results = BenchResults::default();
/// for (function, ns) in [("ours-system", 9.0), ("governor-default", 10.0)] {
///     results.insert(Measurement {
///         group: "permit".into(),
///         function: function.into(),
///         parameter: None,
///         median_ns: ns,
///         interval_ns: (ns, ns),
///         elements: None,
///     });
/// }
/// let checked = targets::check(&results);
/// assert_eq!(checked[0].met(), Some(true));
/// assert_eq!(checked[1].met(), None);
/// ```
pub fn check(results: &BenchResults) -> Vec<Checked> {
    TARGETS
        .iter()
        .map(|&target| Checked {
            target,
            medians: median(results, target.ours).zip(median(results, target.peer)),
        })
        .collect()
}
