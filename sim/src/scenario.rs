//! A scenario: a limiter configuration, a clock model and a workload, all drawn from one
//! seed, swarm style: each seed picks its own mix of workloads, clocks and entry points, so a
//! sweep covers combinations no one wrote down.

use core::num::NonZeroU128;
use core::time::Duration;

use fixed_window::Origin;
use fixed_window_spec::Grid;
use rand::distr::Bernoulli;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::clock_model::{ClockKind, ClockModel, Segment};
use crate::keyed::Population;
use crate::record::{CallKind, OpKind};

mod cuts;
mod flood;
mod id;
mod key_limits;
mod limit_changes;
mod origin;
mod peeks;
pub(crate) use self::peeks::{Peeks, mix};
mod weights;

pub use self::cuts::Cuts;
pub(crate) use self::flood::KEYED_ONE_IN as KEYED_FLOOD_ONE_IN;
use self::flood::{Flood, PLAIN_ONE_IN as PLAIN_FLOOD_ONE_IN};
pub use self::id::{ParseIdError, ScenarioId};
pub(crate) use self::key_limits::draw as draw_key_limits;
pub use self::key_limits::{KeyLimitChange, KeyLimits};
pub use self::limit_changes::LimitChange;
pub(crate) use self::weights::draw as draw_weights;

/// The limiter's configuration in a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Config {
    /// Permits per window, at least 1.
    pub limit: u32,
    /// The window's length, at least one nanosecond.
    pub period: Duration,
    /// How long a call may wait for a later window.
    pub max_wait: Duration,
}

/// One simulated caller: when it arrives, how it calls, and what may happen to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CallerSpec {
    /// Virtual time of arrival.
    pub arrival: u64,
    /// The entry point it uses.
    pub kind: CallKind,
    /// What its operation does.
    pub op: OpKind,
    /// Virtual time at which it is interrupted, if it is.
    pub interrupt_at: Option<u64>,
    /// Virtual time at which its future is dropped, if it is (asynchronous callers only).
    pub cancel_at: Option<u64>,
    /// The key it calls for: 0 for the plain limiter; drawn from the scenario's
    /// [`Population`] for a keyed one.
    pub key: u64,
    /// The permits it asks for: 1 but for weighted attempts (`try_acquire_n`,
    /// `acquire_n_async`), which may ask for 0 up to one more than the limit; 0 for a drain.
    pub weight: u32,
}

/// A listener that panics on every `every`-th event it is told of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PanickingListener {
    /// It panics on the event it is told of `every`-th, `2 * every`-th, and so on (at least
    /// 1).
    pub every: u64,
    /// Whether it is subscribed before the listener that records events.
    pub before_recorder: bool,
}

/// The arrival patterns a scenario may mix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pattern {
    /// Arrivals at a fixed interval.
    Steady,
    /// Arrivals with exponential gaps.
    Poisson,
    /// Bursts just before, at and just after window boundaries.
    BoundaryBurst,
    /// Many callers arriving in a full window, all waiting for the next one to open.
    Herd,
    /// Long idle gaps of thousands of periods plus a fraction between groups of arrivals.
    IdleGaps,
    /// Rare, and alone in its scenario: a limit above 65,535 and somewhat more callers, all
    /// arriving in one window (one seed in 10,000 in a plain sweep, one in 500 in a keyed one).
    Flood,
}

/// A limiter configuration, a clock model and a workload.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Scenario {
    /// The id that reproduces this scenario.
    pub id: ScenarioId,
    /// The limiter's configuration.
    pub config: Config,
    /// The clock's readings over virtual time; the limiter is created at virtual time 0, so
    /// its origin is the reading there.
    pub clock: ClockModel,
    /// The callers, in order of arrival.
    pub callers: Vec<CallerSpec>,
    /// Listeners that panic, besides the one that records events.
    pub panicking_listeners: Vec<PanickingListener>,
    /// The arrival patterns mixed in.
    pub patterns: Vec<Pattern>,
    /// The keys the callers were drawn over, for a keyed limiter; `None` for the plain one,
    /// whose callers all share its one window.
    pub keys: Option<Population>,
    /// Where the limiter's windows are aligned: its creation (`Origin::Creation`), a drawn
    /// instant (`Origin::At`) or whole periods of Unix time (`Origin::UnixEpoch`).
    pub origin_choice: Origin,
    /// The Unix time, in nanoseconds since 1970, that the clock's reading at virtual time 0
    /// stands for ([`Clock::unix_time`](fixed_window::Clock::unix_time)): what an
    /// `Origin::UnixEpoch` limiter matches its first reading with.
    pub unix_time: u64,
    /// The limit changes made while the callers run, in order of virtual time.
    pub limit_changes: Vec<LimitChange>,
    /// The limits of their own some keys have, for a keyed limiter: none for the plain one.
    pub key_limits: KeyLimits,
}

/// Scenarios larger than this many callers are not drawn; it keeps a sweep's memory flat.
const MOST_CALLERS: usize = 600;
/// Blocking callers each run on a coroutine with a stack of its own (kept for later calls,
/// but mapped anew when a run needs more at once than were kept), so a scenario has at most
/// this many.
const MOST_BLOCKING: usize = 64;
const NANOS_PER_YEAR: u64 = 365 * 24 * 3600 * 1_000_000_000;

impl Scenario {
    /// The scenario `id` names: the one its seed draws, keeping only the listed callers.
    ///
    /// # Examples
    ///
    /// The same seed always draws the same scenario.
    ///
    /// ```
    /// use fixed_window_sim::{Scenario, ScenarioId};
    ///
    /// let a = Scenario::generate(&ScenarioId::seed(7));
    /// assert_eq!(a, Scenario::generate(&ScenarioId::seed(7)));
    /// assert!(a.config.limit >= 1);
    /// ```
    pub fn generate(id: &ScenarioId) -> Scenario {
        let mut scenario = Scenario::draw(id.seed, PLAIN_FLOOD_ONE_IN);
        scenario.draw_weights();
        scenario.keep(id)
    }

    /// Draws the callers' weights and drains, but for a flood, which is drawn to fill one
    /// window with single permits.
    pub(crate) fn draw_weights(&mut self) {
        if self.patterns != [Pattern::Flood] {
            draw_weights(&mut self.callers, self.id.seed, self.config.limit);
        }
    }

    /// The whole scenario `seed` draws, a flood if it floods when one seed in
    /// `flood_one_in` does.
    pub(crate) fn draw(seed: u64, flood_one_in: u64) -> Scenario {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let clock_kind = pick_clock_kind(&mut rng);
        let mut config = pick_config(&mut rng, clock_kind);
        let period = period_nanos(config.period);
        let clock = pick_clock(&mut rng, clock_kind, period);
        let mut patterns = pick_patterns(&mut rng);
        let arrivals = if let Some(flood) = Flood::draw(seed, flood_one_in) {
            config.limit = flood.limit;
            patterns = vec![Pattern::Flood];
            flood.arrivals(period)
        } else {
            let mut arrivals = Vec::new();
            for &pattern in &patterns {
                arrivals.extend(pick_arrivals(&mut rng, pattern, &config, clock_kind));
            }
            arrivals.truncate(MOST_CALLERS);
            #[expect(
                clippy::stable_sort_primitive,
                reason = "each pattern but bursts at boundaries draws its arrivals in order, runs \
                          the stable sort merges where the unstable one partitions them; equal \
                          times are indistinguishable, so the order is the same"
            )]
            arrivals.sort();
            arrivals
        };
        let callers = pick_callers(&mut rng, &arrivals, period);
        let mut panicking_listeners: Vec<PanickingListener> = (0..pick_listener_count(&mut rng))
            .map(|_| PanickingListener {
                // Each panic unwinds, which costs microseconds (a hundred simulated calls),
                // while one panic exercises the containment as well as many: a few dozen
                // in a run of hundreds of events.
                every: rng.random_range(8..=256),
                before_recorder: rng.random_bool(0.5),
            })
            .collect();
        if patterns == [Pattern::Flood] {
            // Thousands of panics would cost a flood more than its calls.
            panicking_listeners.clear();
        }
        let (origin_choice, unix_time, age_zero) = origin::draw(seed, clock.reading(0), period);
        // A process of age zero builds its limiter at its clock's first reading. Near the end
        // of time a clock stays as drawn: that is what it is there for.
        let clock = if age_zero && clock.kind() != ClockKind::NearMax {
            clock.younger(clock.reading(0))
        } else {
            clock
        };
        // Near the end of time and over centuries of one-nanosecond periods a clock reads
        // exact nanoseconds: those clocks test the arithmetic at its extremes.
        let clock = match clock.kind() {
            ClockKind::NearMax | ClockKind::Centuries => clock,
            _ => clock.with_tick(crate::resolution::draw(seed, period)),
        };
        let limit_changes = if patterns == [Pattern::Flood] {
            Vec::new()
        } else {
            let span = callers.last().map_or(0, |caller| caller.arrival);
            limit_changes::draw(seed, config.limit, span)
        };
        Scenario {
            id: ScenarioId::seed(seed),
            config,
            clock,
            callers,
            panicking_listeners,
            origin_choice,
            unix_time,
            limit_changes,
            key_limits: KeyLimits::default(),
            patterns,
            keys: None,
        }
    }

    /// This scenario under `id`, keeping only the callers `id` lists.
    pub(crate) fn keep(mut self, id: &ScenarioId) -> Scenario {
        if let Some(kept) = &id.kept {
            self.callers = kept
                .iter()
                .filter_map(|&i| self.callers.get(i as usize).copied())
                .collect();
        }
        id.cuts.apply(&mut self);
        self.id = id.clone();
        self
    }

    /// The limiter's grid by the rules ([`Grid::through`], [`Grid::unix`]), numbered from the
    /// window holding the clock's reading at virtual time 0, when it is built: through the
    /// instant drawn for it, through whole periods of Unix time, or else from that reading;
    /// `None` for a zero period.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Instant, Origin};
    /// use fixed_window_sim::{ClockModel, Scenario, ScenarioId};
    ///
    /// let mut scenario = Scenario::generate(&ScenarioId::seed(7));
    /// scenario.config.period = Duration::from_nanos(100);
    /// scenario.clock = ClockModel::ordinary(1_000);
    /// scenario.origin_choice = Origin::At(Instant::from_nanos(5));
    /// let grid = scenario.grid().expect("a positive period");
    /// assert_eq!((grid.start(0), grid.end(0)), (905, Some(1_005)));
    /// scenario.origin_choice = Origin::Creation;
    /// assert_eq!(scenario.grid().map(|grid| grid.start(0)), Some(1_000));
    /// // Unix time 1,234,567 at reading 1,000: the boundary before it is at reading 933.
    /// scenario.origin_choice = Origin::UnixEpoch;
    /// scenario.unix_time = 1_234_567;
    /// assert_eq!(scenario.grid().map(|grid| grid.start(0)), Some(933));
    /// // At reading 10, that boundary is before the timeline's start: the first window is
    /// // cut to [0, 43).
    /// scenario.clock = ClockModel::ordinary(10);
    /// let grid = scenario.grid().expect("a positive period");
    /// assert_eq!((grid.start(0), grid.end(0)), (0, Some(43)));
    /// ```
    pub fn grid(&self) -> Option<Grid> {
        let reading = u128::from(self.clock.reading(0));
        let period = NonZeroU128::new(self.config.period.as_nanos())?;
        Some(match self.origin_choice {
            Origin::At(at) => Grid::through(u128::from(at.as_nanos()), false, period, reading),
            Origin::UnixEpoch => Grid::unix(reading, period, u128::from(self.unix_time)),
            _ => Grid::new(reading, period),
        })
    }

    /// Where the window the limiter is built in starts ([`Scenario::grid`]'s window 0), the
    /// timeline's start if it began before it: what a trace and the console show as its
    /// origin.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window::Origin;
    /// use fixed_window_sim::{ClockModel, Scenario, ScenarioId};
    ///
    /// let mut scenario = Scenario::generate(&ScenarioId::seed(7));
    /// scenario.clock = ClockModel::ordinary(1_000);
    /// scenario.origin_choice = Origin::Creation;
    /// assert_eq!(scenario.origin(), 1_000);
    /// ```
    pub fn origin(&self) -> u64 {
        self.grid()
            .and_then(|grid| u64::try_from(grid.start(0)).ok())
            .unwrap_or_else(|| self.clock.reading(0))
    }
}

/// A period in nanoseconds, clamped to `u64::MAX` (no second window fits the timeline then).
pub(crate) fn period_nanos(period: Duration) -> u64 {
    u64::try_from(period.as_nanos()).unwrap_or(u64::MAX)
}

fn pick_clock_kind(rng: &mut ChaCha8Rng) -> ClockKind {
    match rng.random_range(0..100) {
        0..40 => ClockKind::Ordinary,
        40..52 => ClockKind::NearMax,
        52..60 => ClockKind::Centuries,
        60..72 => ClockKind::JumpsForward,
        72..86 => ClockKind::StepsBackward,
        _ => ClockKind::StandsStill,
    }
}

fn pick_config(rng: &mut ChaCha8Rng, clock: ClockKind) -> Config {
    let limit = match rng.random_range(0..100) {
        0..20 => 1,
        20..55 => rng.random_range(2..=10),
        55..85 => rng.random_range(11..=1_000),
        85..95 => rng.random_range(1_001..=1_000_000),
        _ => u32::MAX - rng.random_range(0..10),
    };
    let period = if clock == ClockKind::Centuries {
        Duration::from_nanos(1)
    } else {
        match rng.random_range(0..100) {
            0..10 => Duration::from_nanos(1),
            10..30 => Duration::from_nanos(rng.random_range(2..=1_000)),
            30..60 => Duration::from_nanos(rng.random_range(1_000..=1_000_000_000)),
            60..85 => Duration::from_secs(rng.random_range(1..=86_400)),
            85..97 => Duration::from_secs(rng.random_range(1..=100) * 365 * 86_400),
            _ => Duration::MAX,
        }
    };
    let periods = |rng: &mut ChaCha8Rng, low: u32, high: u32| {
        period.saturating_mul(rng.random_range(low..=high))
    };
    let max_wait = match rng.random_range(0..100) {
        0..25 => Duration::ZERO,
        25..40 => {
            Duration::from_nanos(rng.random_range(0..=period_nanos(period).saturating_sub(1)))
        }
        40..65 => periods(rng, 1, 5),
        65..75 => periods(rng, 5, 1_000),
        75..90 => Duration::MAX,
        90..95 => Duration::from_nanos(u64::MAX),
        _ => Duration::from_secs(rng.random_range(1..=u64::MAX / 2)),
    };
    Config {
        limit,
        period,
        max_wait,
    }
}

fn pick_clock(rng: &mut ChaCha8Rng, kind: ClockKind, period: u64) -> ClockModel {
    let start = rng.random_range(0..=1_u64 << 40);
    let linear = |from, base| Segment {
        from,
        base,
        frozen: false,
    };
    let frozen = |from, base| Segment {
        from,
        base,
        frozen: true,
    };
    // Clock changes land among the arrivals, which mostly fall within some tens of periods.
    let span = period.saturating_mul(40).max(40);
    let mut times: Vec<u64> = (0..rng.random_range(1..=4))
        .map(|_| rng.random_range(1..=span))
        .collect();
    times.sort_unstable();
    let segments = match kind {
        ClockKind::Ordinary | ClockKind::Centuries => vec![linear(0, start)],
        ClockKind::NearMax => {
            let before = u128::from(period) * rng.random_range(0..=4_u128)
                + u128::from(rng.random_range(0..period));
            let start = u64::MAX - u64::try_from(before).unwrap_or(u64::MAX);
            vec![linear(0, start)]
        }
        ClockKind::JumpsForward => {
            let mut segments = vec![linear(0, start)];
            let reading_at = |segments: &Vec<Segment>, t: u64| {
                ClockModel::new(kind, segments.clone()).reading(t)
            };
            for &t in &times {
                let jump = match rng.random_range(0..3) {
                    0 => period.saturating_mul(rng.random_range(2..=1_000_000)),
                    1 => rng.random_range(1_u64 << 40..=1_u64 << 62),
                    _ => u64::MAX / 2,
                };
                let base = reading_at(&segments, t).saturating_add(jump);
                segments.push(linear(t, base));
            }
            segments
        }
        ClockKind::StepsBackward => {
            let mut segments = vec![linear(0, start)];
            for &t in &times {
                let now = ClockModel::new(kind, segments.clone()).reading(t);
                let step = match rng.random_range(0..3) {
                    0 => rng.random_range(1..=period.saturating_mul(3).max(1)),
                    1 => rng.random_range(1..=1_000),
                    _ => now,
                };
                segments.push(linear(t, now.saturating_sub(step)));
            }
            segments
        }
        ClockKind::StandsStill => {
            if rng.random_bool(0.3) {
                vec![frozen(0, start)]
            } else {
                let mut segments = vec![linear(0, start)];
                for (i, &t) in times.iter().enumerate() {
                    let now = ClockModel::new(kind, segments.clone()).reading(t);
                    segments.push(if i % 2 == 0 {
                        frozen(t, now)
                    } else {
                        linear(t, now)
                    });
                }
                segments
            }
        }
    };
    ClockModel::new(kind, segments)
}

fn pick_patterns(rng: &mut ChaCha8Rng) -> Vec<Pattern> {
    let all = [
        Pattern::Steady,
        Pattern::Poisson,
        Pattern::BoundaryBurst,
        Pattern::Herd,
        Pattern::IdleGaps,
    ];
    let mut patterns: Vec<Pattern> = all.into_iter().filter(|_| rng.random_bool(0.4)).collect();
    if patterns.is_empty() {
        patterns.push(all[rng.random_range(0..all.len())]);
    }
    patterns
}

/// Arrival times (virtual) of one pattern. The limiter's windows start at virtual times
/// `k · period` on a clock that moves with virtual time.
fn pick_arrivals(
    rng: &mut ChaCha8Rng,
    pattern: Pattern,
    config: &Config,
    clock: ClockKind,
) -> Vec<u64> {
    let period = period_nanos(config.period);
    let limit = u64::from(config.limit.min(200));
    let count = rng.random_range(1..=200_usize);
    let boundary = |k: u64| period.saturating_mul(k);
    match pattern {
        Pattern::Steady => {
            let interval = if clock == ClockKind::Centuries {
                rng.random_range(1..=NANOS_PER_YEAR)
            } else {
                (period / limit.max(1))
                    .max(1)
                    .saturating_mul(rng.random_range(1..=3))
            };
            let first = rng.random_range(0..=period.min(1 << 40));
            (0..count as u64)
                .map(|i| first.saturating_add(interval.saturating_mul(i)))
                .collect()
        }
        Pattern::Poisson => {
            let mean = if clock == ClockKind::Centuries {
                approximate(3 * NANOS_PER_YEAR)
            } else {
                approximate(period) / (approximate(limit) * rng.random_range(0.2..3.0))
            };
            let mut t = 0_u64;
            (0..count)
                .map(|_| {
                    let u: f64 = rng.random_range(f64::EPSILON..1.0);
                    // Saturating float-to-int conversion: a huge gap lands at the end of time.
                    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                    let gap = (-u.ln() * mean) as u64;
                    t = t.saturating_add(gap);
                    t
                })
                .collect()
        }
        Pattern::BoundaryBurst => {
            let mut arrivals = Vec::new();
            for _ in 0..rng.random_range(1..=4) {
                let at = boundary(rng.random_range(1..=8));
                let spread = rng.random_range(0..=3_u64);
                for _ in 0..rng.random_range(1..=limit * 2 + 1) {
                    let offset = rng.random_range(0..=spread);
                    arrivals.push(if rng.random_bool(0.5) {
                        at.saturating_sub(offset)
                    } else {
                        at.saturating_add(offset)
                    });
                }
            }
            arrivals
        }
        Pattern::Herd => {
            let k = rng.random_range(0..=6);
            let at = boundary(k).saturating_add(period / 2);
            (0..limit + count as u64).map(|_| at).collect()
        }
        // Drawn whole by `Flood`, never mixed with the others.
        Pattern::Flood => Vec::new(),
        Pattern::IdleGaps => {
            let mut arrivals = Vec::new();
            let mut t = 0_u64;
            for _ in 0..rng.random_range(1..=4) {
                for _ in 0..rng.random_range(1..=limit + 2) {
                    arrivals.push(t);
                    t = t.saturating_add(rng.random_range(0..=period / 4));
                }
                let gap = period
                    .saturating_mul(rng.random_range(1_000..=100_000))
                    .saturating_add(rng.random_range(0..period));
                t = t.saturating_add(gap);
            }
            arrivals
        }
    }
}

/// A float near `n`: mean gaps between arrivals need no more precision than that.
#[allow(clippy::cast_precision_loss)]
fn approximate(n: u64) -> f64 {
    n as f64
}

fn pick_callers(rng: &mut ChaCha8Rng, arrivals: &[u64], period: u64) -> Vec<CallerSpec> {
    // Swarm: each scenario enables its own subset of entry points and perturbations.
    let mut kinds = vec![CallKind::CallAsync];
    if rng.random_bool(0.6) {
        kinds.push(CallKind::AcquireAsync);
    }
    if rng.random_bool(0.5) {
        kinds.push(CallKind::TryAcquire);
    }
    let blocking_share = if rng.random_bool(0.25) {
        rng.random_range(0.02..0.5)
    } else {
        0.0
    };
    let fail = if rng.random_bool(0.5) {
        rng.random_range(0.0..0.3)
    } else {
        0.0
    };
    // Each panic unwinds, which costs microseconds: a few per run are enough.
    let panic = if rng.random_bool(0.3) {
        rng.random_range(0.0..0.02)
    } else {
        0.0
    };
    let interrupt = if rng.random_bool(0.4) {
        rng.random_range(0.0..0.3)
    } else {
        0.0
    };
    let cancel = if rng.random_bool(0.4) {
        rng.random_range(0.0..0.3)
    } else {
        0.0
    };
    // Each share as a `Bernoulli` made once: `random_bool(p)` makes one per draw, from the
    // float, then draws from it the same way, so the callers drawn are the same. Callgrind,
    // the default sweep's first 1,000 scenarios: the draw took 167 M instructions with those
    // conversions, 134 M without.
    let bernoulli = |p: f64| Bernoulli::new(p).expect("a share is a probability");
    let (blocking_share, panic, fail) =
        (bernoulli(blocking_share), bernoulli(panic), bernoulli(fail));
    let (interrupt, cancel) = (bernoulli(interrupt), bernoulli(cancel));
    let mut blocking = 0;
    let later = |rng: &mut ChaCha8Rng, arrival: u64, p: &Bernoulli| {
        rng.sample(p)
            .then(|| arrival.saturating_add(rng.random_range(0..=period.saturating_mul(3).max(1))))
    };
    let mut callers = Vec::with_capacity(arrivals.len());
    callers.extend(arrivals.iter().map(|&arrival| {
        let kind = if blocking < MOST_BLOCKING && rng.sample(blocking_share) {
            blocking += 1;
            CallKind::CallBlocking
        } else {
            kinds[rng.random_range(0..kinds.len())]
        };
        let op = if rng.sample(panic) {
            OpKind::Panics
        } else if rng.sample(fail) {
            OpKind::Fails
        } else {
            OpKind::Succeeds
        };
        let interrupt_at = later(rng, arrival, &interrupt);
        let cancel_at = if matches!(kind, CallKind::CallAsync | CallKind::AcquireAsync) {
            later(rng, arrival, &cancel)
        } else {
            None
        };
        CallerSpec {
            arrival,
            kind,
            op,
            interrupt_at,
            cancel_at,
            key: 0,
            weight: 1,
        }
    }));
    callers
}

fn pick_listener_count(rng: &mut ChaCha8Rng) -> usize {
    match rng.random_range(0..10) {
        0..6 => 0,
        6..9 => 1,
        _ => 2,
    }
}
