//! Keyed scenarios: a plain scenario's configuration, clock and callers, with keys drawn for
//! its callers (swarm style: each seed picks its own population), and for some a long run of
//! keys each seen a few times and never again.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::clock_model::ClockKind;
use crate::record::{CallKind, OpKind};
use crate::scenario::{
    CallerSpec, KEYED_FLOOD_ONE_IN, Pattern, Scenario, ScenarioId, draw_key_limits, period_nanos,
};

/// How a keyed scenario's callers are spread over keys.
///
/// Keys are numbered from 0, densely: the hot keys first, then a run's keys in order.
///
/// # Examples
///
/// ```
/// use fixed_window_sim::{Population, Scenario, ScenarioId};
///
/// let scenario = Scenario::generate_keyed(&ScenarioId::seed(4));
/// let population = scenario.keys.expect("a keyed scenario draws its keys");
/// let keys = population.keys();
/// assert!(scenario.callers.iter().all(|caller| caller.key < keys));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Population {
    /// Every caller on one key: the keyed limiter must behave as the plain one.
    Hot,
    /// The callers drawn over a few keys, evenly or skewed towards the first.
    Few {
        /// How many keys (2 to 8).
        keys: u64,
        /// Whether low keys are drawn more often (log-uniformly) than high ones.
        skewed: bool,
    },
    /// The callers drawn over a few hot keys, plus a long run of keys each called `calls`
    /// times, arriving steadily over many windows, and never seen again: the keys the table
    /// must let go of. Runs reach a million keys and more, as the event budget allows.
    Many {
        /// How many hot keys the scenario's own callers use (1 to 4).
        hot: u64,
        /// How many keys the run has, after the hot ones.
        distinct: u64,
        /// Calls per key of the run (1 to 3).
        calls: u64,
        /// Whether a key's calls are spread over the whole run (each key's first call, then
        /// each key's second, ...) rather than one after another.
        spread: bool,
    },
}

impl Population {
    /// How many keys the scenario uses: every caller's key is below it.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_sim::Population;
    ///
    /// let many = Population::Many { hot: 2, distinct: 1_000, calls: 3, spread: false };
    /// assert_eq!((Population::Hot.keys(), many.keys()), (1, 1_002));
    /// ```
    pub fn keys(self) -> u64 {
        match self {
            Population::Hot => 1,
            Population::Few { keys, .. } => keys,
            Population::Many { hot, distinct, .. } => hot + distinct,
        }
    }

    /// A short name for reports: `hot`, `few` or `many`.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_sim::Population;
    ///
    /// assert_eq!(Population::Few { keys: 3, skewed: true }.name(), "few");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Population::Hot => "hot",
            Population::Few { .. } => "few",
            Population::Many { .. } => "many",
        }
    }
}

/// The draws of a keyed scenario's keys come from their own stream of the seed's generator, so
/// the rest of the scenario is the plain one of the same seed.
const KEYS_STREAM: u64 = 1;

/// A run has at least this many keys, so that its windows see the sweeping's 64 calls.
const SHORTEST_RUN: u64 = 64;

/// Runs of millions of keys are drawn only for windows up to this long (one hour), so that
/// the run's steady rate passes through hundreds of them within the timeline.
const LONGEST_MILLIONS_PERIOD: u64 = 3_600 * 1_000_000_000;

impl Scenario {
    /// The keyed scenario `id` names: the plain scenario of its seed (configuration, clock,
    /// callers, listeners), with each caller's key drawn from a [`Population`] the seed picks,
    /// plus, for [`Population::Many`], the run's callers; keeping only the listed callers.
    ///
    /// # Examples
    ///
    /// The same seed always draws the same keys.
    ///
    /// ```
    /// use fixed_window_sim::{Scenario, ScenarioId};
    ///
    /// let id = ScenarioId::seed(11);
    /// let keyed = Scenario::generate_keyed(&id);
    /// assert_eq!(keyed, Scenario::generate_keyed(&id));
    /// assert_eq!(keyed.config, Scenario::generate(&id).config);
    /// ```
    pub fn generate_keyed(id: &ScenarioId) -> Scenario {
        let mut scenario = Scenario::draw(id.seed, KEYED_FLOOD_ONE_IN);
        let mut rng = ChaCha8Rng::seed_from_u64(id.seed);
        rng.set_stream(KEYS_STREAM);
        // A flood is for one key: its window is what it is drawn to fill.
        let population = if scenario.patterns == [Pattern::Flood] {
            Population::Hot
        } else {
            pick_population(&mut rng, &scenario)
        };
        for caller in &mut scenario.callers {
            caller.key = pick_key(&mut rng, population);
        }
        if let Population::Many {
            hot,
            distinct,
            calls,
            spread,
        } = population
        {
            let start = scenario
                .callers
                .iter()
                .map(|caller| caller.arrival)
                .max()
                .unwrap_or(0);
            let run = Run {
                first_key: hot,
                distinct,
                calls,
                spread,
            };
            scenario.callers.extend(run.callers(
                &mut rng,
                run_start(start),
                period_nanos(scenario.config.period),
            ));
            // Stable: callers of one instant keep their order.
            scenario.callers.sort_by_key(|caller| caller.arrival);
        }
        scenario.draw_weights();
        if scenario.patterns != [Pattern::Flood] {
            let keys = scenario.callers.iter().map(|caller| caller.key + 1).max();
            let span = scenario.callers.last().map_or(0, |caller| caller.arrival);
            scenario.key_limits =
                draw_key_limits(id.seed, scenario.config.limit, keys.unwrap_or(0), span);
        }
        scenario.keys = Some(population);
        scenario.keep(id)
    }
}

/// Where a run starts: among the scenario's own callers, half way through their span.
fn run_start(last_arrival: u64) -> u64 {
    last_arrival / 2
}

fn pick_population(rng: &mut ChaCha8Rng, scenario: &Scenario) -> Population {
    match rng.random_range(0..100) {
        0..30 => Population::Hot,
        30..65 => Population::Few {
            keys: rng.random_range(2..=8),
            skewed: rng.random_bool(0.5),
        },
        _ => {
            let (distinct, calls) = match rng.random_range(0..1_000) {
                0..960 => (
                    log_uniform(rng, SHORTEST_RUN, 4_096),
                    rng.random_range(1..=3),
                ),
                960..994 => (log_uniform(rng, 4_096, 65_536), rng.random_range(1..=2)),
                // Millions of keys over time, each seen once, as the event budget allows; on
                // a clock whose windows keep passing, so that the run spans hundreds of them.
                _ if over_time(scenario) => (rng.random_range(1_000_000..=1_500_000), 1),
                _ => (log_uniform(rng, 4_096, 65_536), 1),
            };
            Population::Many {
                hot: rng.random_range(1..=4),
                distinct,
                calls,
                spread: rng.random_bool(0.3),
            }
        }
    }
}

/// Whether a run of millions of keys in `scenario` would pass through many windows: its clock
/// moves on with virtual time, far from the end of the timeline, and its windows are short.
fn over_time(scenario: &Scenario) -> bool {
    matches!(
        scenario.clock.kind(),
        ClockKind::Ordinary | ClockKind::JumpsForward | ClockKind::StepsBackward
    ) && period_nanos(scenario.config.period) <= LONGEST_MILLIONS_PERIOD
}

/// A number from `low` to `high` whose logarithm is uniform: small ones as often as large.
fn log_uniform(rng: &mut ChaCha8Rng, low: u64, high: u64) -> u64 {
    let (low, high) = (approximate(low).ln(), approximate(high).ln());
    let drawn = rng.random_range(low..high).exp();
    // Saturating float-to-int conversion of a number between the two bounds.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let drawn = drawn as u64;
    drawn
}

#[allow(clippy::cast_precision_loss)]
fn approximate(n: u64) -> f64 {
    n as f64
}

/// A key for one of the scenario's own callers.
fn pick_key(rng: &mut ChaCha8Rng, population: Population) -> u64 {
    match population {
        Population::Hot => 0,
        Population::Few {
            keys,
            skewed: false,
        } => rng.random_range(0..keys),
        Population::Few { keys, skewed: true } => log_uniform(rng, 1, keys + 1)
            .saturating_sub(1)
            .min(keys - 1),
        Population::Many { hot, .. } => rng.random_range(0..hot),
    }
}

/// A run of keys, each called a few times and never again.
struct Run {
    first_key: u64,
    distinct: u64,
    calls: u64,
    spread: bool,
}

impl Run {
    /// The run's callers from virtual time `start` on, at a steady rate drawn per scenario:
    /// from one call per window to thousands (at least 64 for a run of millions, whose
    /// windows then all see a whole round of sweeping).
    fn callers(&self, rng: &mut ChaCha8Rng, start: u64, period: u64) -> Vec<CallerSpec> {
        let fewest = if self.distinct >= 1_000_000 { 64 } else { 1 };
        let per_window = log_uniform(rng, fewest, 4_096).max(1);
        let interval = (period / per_window).max(1);
        let mut kinds = vec![CallKind::TryAcquire];
        if rng.random_bool(0.5) {
            kinds.push(CallKind::CallAsync);
        }
        if rng.random_bool(0.3) {
            kinds.push(CallKind::AcquireAsync);
        }
        let total = self.distinct * self.calls;
        (0..total)
            .map(|i| {
                let key = if self.spread {
                    i % self.distinct
                } else {
                    i / self.calls
                };
                CallerSpec {
                    arrival: start.saturating_add(interval.saturating_mul(i)),
                    kind: kinds[rng.random_range(0..kinds.len())],
                    op: OpKind::Succeeds,
                    interrupt_at: None,
                    cancel_at: None,
                    key: self.first_key + key,
                    weight: 1,
                }
            })
            .collect()
    }
}
