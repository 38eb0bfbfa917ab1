//! The `Backoff` sweep: ns per attempt for each spin setting and thread count, and the setting
//! it recommends.

use std::collections::BTreeMap;

use crate::bench_results::BenchResults;

/// The criterion group the sweep is written to.
pub const GROUP: &str = "backoff-sweep";

/// Settings closer than this to the best one (as a ratio of their scores) are treated as
/// equal: differences that small are within the run-to-run noise of a shared machine.
pub const NOISE: f64 = 1.05;

/// A measured cell of the sweep: the median and its confidence interval, in ns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cell {
    /// The median ns per attempt.
    pub median: f64,
    /// The 95 % confidence interval of the median.
    pub interval: (f64, f64),
}

/// One spin setting: retries that spin before the first yield (`None`: never yield).
pub type Spins = Option<u32>;

/// The sweep's grid: ns per attempt for each (spin setting, thread count) measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sweep {
    /// Spin settings, ascending, "never yield" last.
    pub spins: Vec<Spins>,
    /// Thread counts, ascending.
    pub threads: Vec<u32>,
    /// ns per attempt by (spins, threads).
    pub cells: BTreeMap<(SpinsKey, u32), Cell>,
}

/// A spin setting as a sortable key: `u64::MAX` is "never yield".
pub type SpinsKey = u64;

fn key(spins: Spins) -> SpinsKey {
    spins.map_or(u64::MAX, u64::from)
}

/// The setting's label as the benchmarks name it.
pub fn label(spins: Spins) -> String {
    spins.map_or_else(|| "never yield".to_owned(), |n| n.to_string())
}

/// The recommendation drawn from a sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct Recommendation {
    /// The setting with the lowest score.
    pub best: Spins,
    /// Each setting's score: the geometric mean, over thread counts, of its time relative to
    /// the fastest setting at that thread count (1.0 = fastest everywhere).
    pub scores: Vec<(Spins, f64)>,
    /// The current default's score, if it was measured.
    pub default_score: Option<f64>,
    /// Thread counts at which the best setting is faster than the default with the two
    /// confidence intervals apart.
    pub faster_at: Vec<u32>,
    /// Thread counts at which the best setting is slower than the default, intervals apart.
    pub slower_at: Vec<u32>,
    /// Thread counts at which both the best setting and the default were measured.
    pub compared: usize,
}

impl Recommendation {
    /// The best setting's score.
    pub fn best_score(&self) -> f64 {
        self.scores
            .iter()
            .find(|(spins, _)| *spins == self.best)
            .map_or(1.0, |(_, score)| *score)
    }

    /// Whether the data says the default should change: the best setting's score beats the
    /// default's by more than the noise margin, it is faster with confidence intervals apart
    /// at at least half the thread counts, and slower (intervals apart) at none.
    pub fn change_default(&self) -> bool {
        self.default_score
            .is_some_and(|default| default > self.best_score() * NOISE)
            && self.slower_at.is_empty()
            && !self.faster_at.is_empty()
            && self.faster_at.len() * 2 >= self.compared
    }
}

impl Sweep {
    /// The sweep's results found in `results` (functions named `spin-<n>` or `spin-max`, with
    /// a thread count as parameter).
    pub fn from_results(results: &BenchResults) -> Sweep {
        let mut sweep = Sweep::default();
        for m in results.group(GROUP) {
            let spins = match m.function.strip_prefix("spin-") {
                Some("max") => None,
                Some(n) => match n.parse() {
                    Ok(n) => Some(n),
                    Err(_) => continue,
                },
                None => continue,
            };
            let Some(threads) = m.parameter.as_deref().and_then(|p| p.parse().ok()) else {
                continue;
            };
            if !sweep.spins.contains(&spins) {
                sweep.spins.push(spins);
            }
            if !sweep.threads.contains(&threads) {
                sweep.threads.push(threads);
            }
            sweep.cells.insert(
                (key(spins), threads),
                Cell {
                    median: m.median_ns,
                    interval: m.interval_ns,
                },
            );
        }
        sweep.spins.sort_by_key(|&s| key(s));
        sweep.threads.sort_unstable();
        sweep
    }

    /// ns per attempt for `spins` at `threads`, if measured.
    pub fn get(&self, spins: Spins, threads: u32) -> Option<f64> {
        self.cell(spins, threads).map(|c| c.median)
    }

    /// The measured cell for `spins` at `threads`.
    pub fn cell(&self, spins: Spins, threads: u32) -> Option<Cell> {
        self.cells.get(&(key(spins), threads)).copied()
    }

    /// The fastest ns per attempt at `threads`.
    pub fn best_at(&self, threads: u32) -> Option<f64> {
        self.spins
            .iter()
            .filter_map(|&s| self.get(s, threads))
            .min_by(f64::total_cmp)
    }

    /// The setting to recommend, scored on every thread count it was measured at; `None` if
    /// the sweep is empty. Settings missing a thread count that others have are not scored.
    ///
    /// # Examples
    ///
    /// Spinning twice is fastest at both thread counts, so it is recommended.
    ///
    /// ```
    /// use fixed_window_reports::{BenchResults, Measurement, Sweep};
    ///
    /// let mut results = BenchResults::default();
    /// for (spins, threads, ns) in [("spin-0", "2", 90.0), ("spin-2", "2", 60.0), ("spin-0", "4", 200.0), ("spin-2", "4", 150.0)] {
    ///     results.insert(Measurement {
    ///         group: "backoff-sweep".into(),
    ///         function: spins.into(),
    ///         parameter: Some(threads.into()),
    ///         median_ns: ns,
    ///         interval_ns: (ns, ns),
    ///         elements: None,
    ///     });
    /// }
    /// let recommendation = Sweep::from_results(&results).recommend().unwrap();
    /// assert_eq!(recommendation.best, Some(2));
    /// ```
    pub fn recommend(&self) -> Option<Recommendation> {
        let mut scores = Vec::new();
        for &spins in &self.spins {
            let ratios: Option<Vec<f64>> = self
                .threads
                .iter()
                .map(|&t| Some(self.get(spins, t)? / self.best_at(t)?))
                .collect();
            let Some(ratios) = ratios.filter(|r| !r.is_empty()) else {
                continue;
            };
            // Thread counts are a handful: exact in f64.
            #[allow(clippy::cast_precision_loss)]
            let n = ratios.len() as f64;
            let score = (ratios.iter().map(|r| r.ln()).sum::<f64>() / n).exp();
            scores.push((spins, score));
        }
        let best = scores
            .iter()
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|&(spins, _)| spins)?;
        let default = Some(fixed_window::Backoff::SPIN_LIMIT);
        let default_score = scores
            .iter()
            .find(|(spins, _)| *spins == default)
            .map(|&(_, score)| score);
        let (mut faster_at, mut slower_at, mut compared) = (Vec::new(), Vec::new(), 0);
        for &threads in &self.threads {
            let (Some(b), Some(d)) = (self.cell(best, threads), self.cell(default, threads)) else {
                continue;
            };
            compared += 1;
            if b.interval.1 < d.interval.0 {
                faster_at.push(threads);
            } else if b.interval.0 > d.interval.1 {
                slower_at.push(threads);
            }
        }
        Some(Recommendation {
            best,
            scores,
            default_score,
            faster_at,
            slower_at,
            compared,
        })
    }
}
