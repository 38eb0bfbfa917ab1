//! The discrete-event loop: one scenario, one subject, one trace.
//!
//! The loop (`Simulation`, in `event_loop`) owns the scenario, the subject and each caller's call in flight;
//! what the subject's calls reach (virtual time and the clock's reading, whose turn it is,
//! timers, the trace, the coroutine pool) is the simulation [`World`], which the run enters.
//!
//! Events wait in a queue ordered by virtual time, then order of scheduling; nothing is read from
//! the real clock, the environment or a hash map's order, so the same scenario always gives
//! the same trace.
//!
//! Asynchronous callers are futures polled by this loop with a no-op waker: the only things
//! that can make them pending are the virtual clock's sleeps (whose timers are events) and a
//! plain yield (re-polled at the same instant, after the events already due).
//!
//! Blocking callers (`call_interruptible`) each run on a stack of their own, a coroutine the
//! loop resumes on its own thread: the limiter's real blocking path runs unchanged, and when
//! it sleeps, the virtual clock registers a timer and suspends the coroutine until the loop
//! fires or interrupts that timer. Their sleeps are therefore events like any other, and the
//! run stays deterministic (and as cheap as a context switch in user space) while driving the
//! limiter's real blocking path.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use fixed_window::{ConfigError, RateLimiter};

use crate::keyed::{KeyedSubject, PlantedKeyed};
use crate::planted::{Planted, PlantedBug};
use crate::record::Record;
use crate::scenario::{Scenario, ScenarioId};
use crate::subject::{SimulatedPanic, silence_simulated_panics};
use crate::virtual_clock::VirtualClock;
use crate::world::World;
use fixed_window_broken::KeyedPlantedBug;

mod event_loop;

use self::event_loop::drive;

/// The name of every simulated limiter.
pub const LIMITER_NAME: &str = "simulated";

/// A run that takes more events than this is stopped and its unfinished calls reported.
pub const EVENT_BUDGET: u64 = 5_000_000;

/// Which limiter a run drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// `fixed_window::RateLimiter`, the limiter itself.
    Real,
    /// A planted limiter, to show that the oracle catches its planted bug.
    Planted(PlantedBug),
    /// `fixed_window::KeyedRateLimiter`, on keyed scenarios.
    Keyed,
    /// A planted keyed limiter, on keyed scenarios.
    PlantedKeyed(KeyedPlantedBug),
}

impl Target {
    /// Whether the target is a keyed limiter, run on keyed scenarios.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_sim::{KeyedPlantedBug, Target};
    ///
    /// assert!(Target::PlantedKeyed(KeyedPlantedBug::ReclaimLive).is_keyed());
    /// assert!(!Target::Real.is_keyed());
    /// ```
    pub fn is_keyed(self) -> bool {
        matches!(self, Target::Keyed | Target::PlantedKeyed(_))
    }

    /// The scenario `id` names for this target: [`Scenario::generate_keyed`] for a keyed
    /// limiter, [`Scenario::generate`] otherwise.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_sim::{ScenarioId, Target};
    ///
    /// let id = ScenarioId::seed(5);
    /// assert!(Target::Keyed.scenario(&id).keys.is_some());
    /// assert!(Target::Real.scenario(&id).keys.is_none());
    /// ```
    pub fn scenario(self, id: &ScenarioId) -> Scenario {
        if self.is_keyed() {
            Scenario::generate_keyed(id)
        } else {
            Scenario::generate(id)
        }
    }

    /// The target's name, as a sweep's provenance gives it: `real`, `keyed`, or a bug's
    /// name.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_sim::{KeyedPlantedBug, Target};
    ///
    /// assert_eq!(Target::PlantedKeyed(KeyedPlantedBug::SharedCount).name(), "shared-count");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Target::Real => "real",
            Target::Planted(bug) => bug.name(),
            Target::Keyed => "keyed",
            Target::PlantedKeyed(bug) => bug.name(),
        }
    }
}

/// Counts of one run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Calls that started.
    pub calls: u64,
    /// Calls that got a permit.
    pub permits: u64,
    /// Calls that were rejected.
    pub rejections: u64,
    /// Sleeps begun (a call may sleep more than once).
    pub waits: u64,
    /// Calls that failed with `Interrupted`.
    pub interrupts: u64,
    /// Events processed.
    pub events: u64,
    /// Virtual time at the end of the run, in nanoseconds.
    pub simulated_ns: u64,
}

/// The result of running one scenario: plain data.
#[derive(Debug, Clone)]
pub struct Run {
    /// Everything that happened, in order.
    pub records: Vec<Record>,
    /// Counts.
    pub stats: Stats,
    /// Whether the run stopped because it used up [`EVENT_BUDGET`].
    pub out_of_budget: bool,
    /// The messages of panics that escaped a call (other than [`SimulatedPanic`]), by caller.
    pub panics: Vec<(u32, String)>,
}

impl Drop for Run {
    fn drop(&mut self) {
        World::keep_trace_memory(core::mem::take(&mut self.records));
    }
}

impl Run {
    /// A hash of the whole trace: equal runs have equal hashes.
    pub fn trace_hash(&self) -> u64 {
        let mut hasher = DefaultHasher::new();
        self.records.hash(&mut hasher);
        hasher.finish()
    }
}

/// Runs `scenario` against `target`.
///
/// # Errors
///
/// The limiter's [`ConfigError`] if the scenario's configuration is one it refuses.
///
/// # Examples
///
/// ```
/// use fixed_window_sim::{Scenario, ScenarioId, Target, run};
///
/// let scenario = Scenario::generate(&ScenarioId::seed(1));
/// let first = run(&scenario, Target::Real)?;
/// assert_eq!(first.trace_hash(), run(&scenario, Target::Real)?.trace_hash());
/// # Ok::<(), fixed_window::ConfigError>(())
/// ```
pub fn run(scenario: &Scenario, target: Target) -> Result<Run, ConfigError> {
    silence_simulated_panics();
    // A call leaves about four records (start, event, operation, finish) plus its sleeps,
    // which herds of waiters make several.
    let expected = scenario.callers.len() * 6;
    let (ended, records) = World::enter(scenario.clock.reading(0), expected, |world| {
        let clock = VirtualClock::new(&scenario.clock).with_unix_time(scenario.unix_time);
        Ok(match target {
            Target::Real => drive(world, scenario, &Arc::new(real_limiter(scenario, clock)?)),
            Target::Planted(bug) => drive(
                world,
                scenario,
                &Arc::new(Planted::new(bug, LIMITER_NAME, scenario, clock)?),
            ),
            Target::Keyed => drive(world, scenario, &KeyedSubject::new(scenario, clock)?),
            Target::PlantedKeyed(bug) => drive(
                world,
                scenario,
                &Arc::new(PlantedKeyed::new(bug, LIMITER_NAME, scenario, clock)?),
            ),
        })
    });
    let ended = ended?;
    Ok(Run {
        records,
        stats: ended.stats,
        out_of_budget: ended.out_of_budget,
        panics: ended.panics,
    })
}

fn real_limiter(
    scenario: &Scenario,
    clock: VirtualClock,
) -> Result<RateLimiter<VirtualClock>, ConfigError> {
    let config = &scenario.config;
    let mut builder = RateLimiter::builder(LIMITER_NAME, config.limit, config.period)?
        .max_wait(config.max_wait)
        .origin(scenario.origin_choice);
    for listener in scenario
        .panicking_listeners
        .iter()
        .filter(|l| l.before_recorder)
    {
        builder = builder.listener(panicking(listener.every));
    }
    builder = builder.listener(record_event);
    for listener in scenario
        .panicking_listeners
        .iter()
        .filter(|l| !l.before_recorder)
    {
        builder = builder.listener(panicking(listener.every));
    }
    // Built here, once: a creation origin is the clock's reading now (virtual time 0).
    Ok(builder.clock(clock).build())
}

/// Records `event`, emitted to the limiter's listeners, as the caller's whose turn it is.
pub(crate) fn record_event(event: &fixed_window::RateLimiterEvent) {
    World::with(|world| {
        let at = event.at().as_nanos();
        let caller = world.current();
        let record = match *event {
            fixed_window::RateLimiterEvent::Permitted { remaining, .. } => Record::Permitted {
                caller,
                at,
                remaining,
            },
            fixed_window::RateLimiterEvent::Rejected { retry_after, .. } => Record::Rejected {
                caller,
                at,
                retry_after: retry_after.as_nanos(),
            },
            _ => return,
        };
        world.record(record);
    });
}

/// A listener that panics on every `every`-th event it is told of.
pub(crate) fn panicking(
    every: u64,
) -> impl Fn(&fixed_window::RateLimiterEvent) + Send + Sync + 'static {
    // Events are emitted one at a time on the simulator's thread, so the count, and with it
    // which events panic, is the same on every run.
    let told = AtomicU64::new(0);
    move |_| {
        let count = told.load(Ordering::Relaxed) + 1;
        told.store(count, Ordering::Relaxed);
        if count.is_multiple_of(every.max(1)) {
            // Unwinds as `panic_any` would, without the panic hook, which stays quiet about
            // simulated panics anyway: fewer frames for the unwinder to walk.
            std::panic::resume_unwind(Box::new(SimulatedPanic));
        }
    }
}
