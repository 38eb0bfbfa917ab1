//! `set_limit` racing weighted claims and drains, on the plain and the keyed limiter: scripts
//! of threads in one window (the manual clock stands still), and the check of what they saw
//! (`docs/rules.md`: Changing the limit).
//!
//! A permit does not say which limit its decision read, but it says what that limit left
//! (`remaining`), and the scripts' limits lie far enough apart that, with the units a permit
//! took, its remaining count names the limit. Where it could name two, the
//! checks hold if one reading of every permit satisfies them all. The checks, per key:
//!
//! - no unit counted twice: every permit took the units `[used before, used after)` of its
//!   window's count, and no two permits' units overlap;
//! - no window grants more units than the largest limit in force during it;
//! - in the order of the count, the decisions read the limits in the order they were set: a
//!   claim that stacks on one that saw a new limit saw it too (so once a claim has seen a
//!   lowered limit, none after it takes the count above it);
//! - the calls, the drains and the limit changes have an order in which the rules
//!   (`fixed-window-spec`'s [`Count`]) give every outcome seen and the count left at the end
//!   (read by raising the limit to [`PROBE`] and asking for zero permits).

use core::fmt;
use core::time::Duration;
use std::collections::BTreeMap;
use std::sync::Arc;

use fixed_window::{Clock, Instant, KeyedRateLimiter, ManualClock, RateLimiter, Settings};
use fixed_window_broken::{KeyedPlantedBug, Packed, PlantedKeyedLimiter, PlantedLimiter};
use fixed_window_spec::{Count, Decision, Grid};

use crate::planted::PlantedBug;
use crate::sync::thread;

/// The limit the check raises the limiter to after the race, to read each key's count as
/// `PROBE − remaining`: above any count the scripts can reach, and within the planted
/// limiter's packed word.
pub const PROBE: u32 = 200;

/// The windows' length: the clock never moves, so the scripts run in one window.
const PERIOD: Duration = Duration::from_secs(1);

/// The limiter a limit-change script runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitTarget {
    /// Core's `RateLimiter` (every step on key 0).
    Core,
    /// Core's `KeyedRateLimiter`.
    Keyed,
    /// The catalogue's plain limiter with one planted bug (every step on key 0).
    Planted(PlantedBug),
    /// The catalogue's keyed limiter with one planted bug.
    PlantedKeyed(KeyedPlantedBug),
}

/// One step of a thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitStep {
    /// `try_acquire_n(n)` on `key`.
    Acquire {
        /// The key (0 on a plain limiter).
        key: u64,
        /// Permits asked for.
        n: u32,
    },
    /// `drain` on `key`.
    Drain {
        /// The key (0 on a plain limiter).
        key: u64,
    },
    /// `set_limit(limit)`.
    SetLimit(u32),
}

/// What a step saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// A permit, with what its window had left after it.
    Permitted {
        /// `remaining()` of the permit.
        remaining: u32,
    },
    /// No permit: the window full, or `n` above the limit (the rules let a call whose `n`
    /// the limit was lowered under between the two find its window full instead).
    Refused,
    /// A drain, or a limit change, done.
    Done,
}

/// Threads racing on one limiter in one window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitScript {
    /// The limit the limiter is built with.
    pub limit: u32,
    /// One list of steps per thread. At most one thread changes the limit, and every limit
    /// in the script is different, so the limits in force follow one another in one order.
    pub threads: Vec<Vec<LimitStep>>,
}

impl LimitScript {
    /// Two claims of two permits on key 0 while the limit is lowered from 12 to 2: if one
    /// claims under 2, the other must find the window full, or have claimed first under 12.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_models::limit_change::LimitScript;
    ///
    /// assert_eq!(LimitScript::lowered_under_claims().limits(), [12, 2]);
    /// ```
    pub fn lowered_under_claims() -> LimitScript {
        LimitScript {
            limit: 12,
            threads: vec![
                vec![LimitStep::Acquire { key: 0, n: 2 }],
                vec![LimitStep::Acquire { key: 0, n: 2 }],
                vec![LimitStep::SetLimit(2)],
            ],
        }
    }

    /// A claim of three permits and a drain on key 0 while the limit is raised from 2 to 12:
    /// the claim is refused under 2; under 12 it takes three units, unless a drain under 12
    /// came first.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_models::limit_change::LimitScript;
    ///
    /// assert_eq!(LimitScript::raised_under_a_drain().limits(), [2, 12]);
    /// ```
    pub fn raised_under_a_drain() -> LimitScript {
        LimitScript {
            limit: 2,
            threads: vec![
                vec![LimitStep::Acquire { key: 0, n: 3 }],
                vec![LimitStep::Drain { key: 0 }],
                vec![LimitStep::SetLimit(12)],
            ],
        }
    }

    /// [`LimitScript::lowered_under_claims`] on two keys: the two claims on key 0, a claim on
    /// key 1 beside them, and the limit lowered for every key.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_models::limit_change::LimitScript;
    ///
    /// assert_eq!(LimitScript::keyed_lowered_under_claims().keys(), [0, 1]);
    /// ```
    pub fn keyed_lowered_under_claims() -> LimitScript {
        LimitScript {
            limit: 12,
            threads: vec![
                vec![LimitStep::Acquire { key: 0, n: 2 }],
                vec![
                    LimitStep::Acquire { key: 0, n: 2 },
                    LimitStep::Acquire { key: 1, n: 2 },
                ],
                vec![LimitStep::SetLimit(2)],
            ],
        }
    }

    /// For shuttle: three callers claiming one, two and three permits, one of them draining
    /// after its claims, on `keys` keys (1 for the plain limiter), while a fourth thread
    /// lowers the limit from 16 to 3 and raises it to 9.
    ///
    /// # Panics
    ///
    /// If `keys` is 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_models::limit_change::LimitScript;
    ///
    /// assert_eq!(LimitScript::stress(2).limits(), [16, 3, 9]);
    /// ```
    pub fn stress(keys: u64) -> LimitScript {
        assert!(keys > 0, "a script needs a key");
        let key = |i: u64| i % keys;
        LimitScript {
            limit: 16,
            threads: vec![
                vec![
                    LimitStep::Acquire { key: key(0), n: 1 },
                    LimitStep::Acquire { key: key(1), n: 2 },
                ],
                vec![
                    LimitStep::Acquire { key: key(1), n: 2 },
                    LimitStep::Acquire { key: key(0), n: 1 },
                ],
                vec![
                    LimitStep::Acquire { key: key(0), n: 3 },
                    LimitStep::Drain { key: key(0) },
                ],
                vec![LimitStep::SetLimit(3), LimitStep::SetLimit(9)],
            ],
        }
    }

    /// The limits in force one after another: the first, then each `SetLimit` in order.
    ///
    /// # Panics
    ///
    /// If two threads change the limit, or a limit comes twice.
    pub fn limits(&self) -> Vec<u32> {
        let setters = self
            .threads
            .iter()
            .filter(|steps| steps.iter().any(|s| matches!(s, LimitStep::SetLimit(_))))
            .count();
        assert!(setters <= 1, "one thread at most changes the limit");
        let mut limits = vec![self.limit];
        for step in self.threads.iter().flatten() {
            if let LimitStep::SetLimit(limit) = *step {
                assert!(!limits.contains(&limit), "limit {limit} set twice");
                limits.push(limit);
            }
        }
        limits
    }

    /// The keys the steps use, in order.
    pub fn keys(&self) -> Vec<u64> {
        let mut keys: Vec<u64> = self
            .threads
            .iter()
            .flatten()
            .filter_map(|step| match *step {
                LimitStep::Acquire { key, .. } | LimitStep::Drain { key } => Some(key),
                LimitStep::SetLimit(_) => None,
            })
            .collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    }
}

/// What a run saw: each thread's steps' outcomes, and each key's count at the end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Played {
    /// Per thread, what each of its steps saw.
    pub seen: Vec<Vec<Seen>>,
    /// Per key, the count read after the race (`None`: the key granted no zero-permit call
    /// even under [`PROBE`], so its count passed it).
    pub counts: BTreeMap<u64, Option<u32>>,
}

/// A limiter under a limit-change script.
enum Subject {
    Core(RateLimiter<ManualClock>),
    // Boxed: under the models' cfgs the keyed limiter's stand-in table makes it the largest.
    Keyed(Box<KeyedRateLimiter<u64, ManualClock>>),
    Planted(PlantedLimiter<Packed, ManualClock>),
    PlantedKeyed(PlantedKeyedLimiter<ManualClock>),
}

impl Subject {
    fn new(target: LimitTarget, limit: u32, clock: ManualClock) -> Subject {
        let settings =
            || Settings::new("limits", limit, PERIOD).expect("a script's limit is positive");
        match target {
            LimitTarget::Core => Subject::Core(
                RateLimiter::of("limits", limit, PERIOD)
                    .expect("a script's limit is positive")
                    .with_clock(clock),
            ),
            LimitTarget::Keyed => Subject::Keyed(Box::new(
                KeyedRateLimiter::of("limits", limit, PERIOD)
                    .expect("a script's limit is positive")
                    .with_clock(clock),
            )),
            LimitTarget::Planted(bug) => {
                Subject::Planted(PlantedLimiter::new(bug, settings(), clock))
            }
            LimitTarget::PlantedKeyed(bug) => {
                Subject::PlantedKeyed(PlantedKeyedLimiter::new(bug, settings(), clock))
            }
        }
    }

    fn keyed(&self) -> bool {
        matches!(self, Subject::Keyed(_) | Subject::PlantedKeyed(_))
    }

    fn step(&self, step: LimitStep) -> Seen {
        let granted = |remaining: Option<u32>| match remaining {
            Some(remaining) => Seen::Permitted { remaining },
            None => Seen::Refused,
        };
        match (self, step) {
            (_, LimitStep::SetLimit(limit)) => {
                let set = match self {
                    Subject::Core(l) => l.set_limit(limit),
                    Subject::Keyed(l) => l.set_limit(limit),
                    Subject::Planted(l) => l.set_limit(limit),
                    Subject::PlantedKeyed(l) => l.set_limit(limit),
                };
                set.expect("a script's limits are positive and small");
                Seen::Done
            }
            (Subject::Core(l), LimitStep::Acquire { n, .. }) => {
                granted(l.try_acquire_n(n).ok().map(|p| p.remaining()))
            }
            (Subject::Keyed(l), LimitStep::Acquire { key, n }) => {
                granted(l.try_acquire_n(&key, n).ok().map(|p| p.remaining()))
            }
            (Subject::Planted(l), LimitStep::Acquire { n, .. }) => {
                granted(l.try_acquire_n(n).ok().map(|g| g.remaining))
            }
            (Subject::PlantedKeyed(l), LimitStep::Acquire { key, n }) => {
                granted(l.try_acquire_n(key, n).ok().map(|g| g.remaining))
            }
            (Subject::Core(l), LimitStep::Drain { .. }) => {
                l.drain();
                Seen::Done
            }
            (Subject::Keyed(l), LimitStep::Drain { key }) => {
                l.drain(&key);
                Seen::Done
            }
            (Subject::Planted(l), LimitStep::Drain { .. }) => {
                l.drain();
                Seen::Done
            }
            (Subject::PlantedKeyed(l), LimitStep::Drain { key }) => {
                l.drain(key);
                Seen::Done
            }
        }
    }
}

/// Runs `script` on `target`: its threads race (the checker's threads under loom or shuttle),
/// then the limit is raised to [`PROBE`] and each key's count read.
///
/// # Panics
///
/// If a plain target is given a key other than 0, or a thread panics.
pub fn play(target: LimitTarget, script: &LimitScript) -> Played {
    let clock = ManualClock::new();
    let subject = Arc::new(Subject::new(target, script.limit, clock.clone()));
    assert!(
        subject.keyed() || script.keys().iter().all(|&key| key == 0),
        "a plain limiter has key 0 alone"
    );
    let handles: Vec<_> = script
        .threads
        .iter()
        .map(|steps| {
            let (steps, subject) = (steps.clone(), Arc::clone(&subject));
            thread::spawn(move || steps.iter().map(|&step| subject.step(step)).collect())
        })
        .collect();
    let seen = handles
        .into_iter()
        .map(|handle| handle.join().expect("a model thread panicked"))
        .collect();
    subject.step(LimitStep::SetLimit(PROBE));
    let counts = script
        .keys()
        .into_iter()
        .map(|key| {
            let read = match subject.step(LimitStep::Acquire { key, n: 0 }) {
                Seen::Permitted { remaining } => Some(PROBE - remaining),
                _ => None,
            };
            (key, read)
        })
        .collect();
    // The clock stood still: every step ran in the first window.
    debug_assert_eq!(clock.now(), Instant::ZERO);
    Played { seen, counts }
}

/// A violation of the rules of changing the limit, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitViolation(String);

impl fmt::Display for LimitViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "violation: {}", self.0)
    }
}

/// One permit of positive weight, as the checks see it.
#[derive(Debug, Clone, Copy)]
struct Granted {
    n: u32,
    remaining: u32,
}

/// The units a permit took, `[start, end)` of its window's count, under the limit at
/// `position` in the script's [`LimitScript::limits`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stretch {
    start: u32,
    end: u32,
    position: usize,
}

/// The readings of a permit of `n` units that left `remaining`: for each limit in force that
/// could have left that, the units it took. A count above the limit is reached only through
/// a drain under a higher one, so with no drain on the key a permit ends at most at `units`,
/// the units the key's steps ask for in all; with one, at most at the largest limit.
fn explained_by(granted: Granted, limits: &[u32], units: u32, drained: bool) -> Vec<Stretch> {
    let top = if drained {
        units.max(limits.iter().copied().max().unwrap_or(0))
    } else {
        units
    };
    limits
        .iter()
        .enumerate()
        .filter_map(|(position, &limit)| {
            let end = limit.checked_sub(granted.remaining)?;
            (end >= granted.n && end <= top).then(|| Stretch {
                start: end - granted.n,
                end,
                position,
            })
        })
        .collect()
}

/// The first of the per-key rules one reading of the permits breaks, in words.
fn broken_rule(stretches: &mut [Stretch], limits: &[u32], key: u64) -> Option<String> {
    stretches.sort_unstable_by_key(|s| (s.start, s.end));
    for pair in stretches.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        if b.start < a.end {
            return Some(format!(
                "key {key}: two permits counted the same units: [{}, {}) under limit {} and \
                 [{}, {}) under limit {}",
                a.start, a.end, limits[a.position], b.start, b.end, limits[b.position]
            ));
        }
    }
    let granted: u32 = stretches.iter().map(|s| s.end - s.start).sum();
    let largest = limits.iter().copied().max().unwrap_or(0);
    if granted > largest {
        return Some(format!(
            "key {key}: {granted} units granted in one window; the largest limit in force \
             during it was {largest}"
        ));
    }
    for pair in stretches.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        if b.position < a.position {
            let (seen, read) = (limits[a.position], limits[b.position]);
            let what = if seen < read {
                format!(
                    "it took the count to {}, above the lowered limit {seen} that the claim \
                     before it had seen",
                    b.end
                )
            } else {
                format!("it read a limit older than the limit {seen} the claim before it had seen")
            };
            return Some(format!(
                "key {key}: a claim decided under limit {read} (units [{}, {})) stacked on \
                 one decided under limit {seen}, set after it (units [{}, {})): {what}",
                b.start, b.end, a.start, a.end
            ));
        }
    }
    None
}

/// The per-key rules on `played`, for some reading of every permit's limit.
fn check_key(script: &LimitScript, played: &Played, key: u64) -> Result<(), LimitViolation> {
    let limits = script.limits();
    let mut units = 0;
    let mut drained = false;
    let mut granted = Vec::new();
    for (steps, seen) in script.threads.iter().zip(&played.seen) {
        for (step, seen) in steps.iter().zip(seen) {
            match (*step, *seen) {
                (LimitStep::Acquire { key: k, n }, seen) if k == key => {
                    units += n;
                    if let (Seen::Permitted { remaining }, true) = (seen, n > 0) {
                        granted.push(Granted { n, remaining });
                    }
                }
                (LimitStep::Drain { key: k }, _) if k == key => drained = true,
                _ => {}
            }
        }
    }
    let mut readings: Vec<Vec<Stretch>> = vec![Vec::new()];
    for permit in &granted {
        let explained = explained_by(*permit, &limits, units, drained);
        if explained.is_empty() {
            return Err(LimitViolation(format!(
                "key {key}: a permit of {} units left {}, which no limit in force ({limits:?}) \
                 leaves",
                permit.n, permit.remaining
            )));
        }
        readings = readings
            .into_iter()
            .flat_map(|reading| {
                explained.iter().map(move |stretch| {
                    let mut reading = reading.clone();
                    reading.push(*stretch);
                    reading
                })
            })
            .collect();
    }
    let mut first = None;
    for mut reading in readings {
        match broken_rule(&mut reading, &limits, key) {
            None => return Ok(()),
            Some(broken) => {
                first.get_or_insert(broken);
            }
        }
    }
    Err(LimitViolation(first.unwrap_or_default()))
}

/// The sequential rules: the limit in force and each key's count, in the one window.
#[derive(Clone)]
struct Rules {
    grid: Grid,
    limit: u32,
    counts: BTreeMap<u64, Count>,
}

impl Rules {
    /// Applies `step`; whether the rules give what it saw.
    fn explains(&mut self, step: LimitStep, seen: Seen) -> bool {
        match step {
            LimitStep::SetLimit(limit) => {
                self.limit = limit;
                seen == Seen::Done
            }
            LimitStep::Drain { key } => {
                self.counts
                    .entry(key)
                    .or_default()
                    .drain(&self.grid, self.limit, 0);
                seen == Seen::Done
            }
            LimitStep::Acquire { key, n } => {
                let count = self.counts.entry(key).or_default();
                let decision = count.decide_n(&self.grid, self.limit, 0, 0, n);
                match decision {
                    Decision::Permit { remaining, .. } => {
                        count.apply_n(decision, n);
                        seen == Seen::Permitted { remaining }
                    }
                    _ => seen == Seen::Refused,
                }
            }
        }
    }
}

/// Whether some order of the threads' steps, each thread's in its own order, gives what each
/// saw and leaves the counts read at the end.
fn sequential(script: &LimitScript, played: &Played) -> bool {
    fn search(rules: &Rules, next: &mut [usize], script: &LimitScript, played: &Played) -> bool {
        let mut any = false;
        for thread in 0..script.threads.len() {
            let at = next[thread];
            let Some(&step) = script.threads[thread].get(at) else {
                continue;
            };
            any = true;
            let mut after = rules.clone();
            if !after.explains(step, played.seen[thread][at]) {
                continue;
            }
            next[thread] += 1;
            let found = search(&after, next, script, played);
            next[thread] -= 1;
            if found {
                return true;
            }
        }
        // Every step placed: the counts left must be those read.
        !any && played.counts.iter().all(|(key, read)| {
            let used = rules.counts.get(key).map_or(0, Count::used);
            *read == Some(used).filter(|&used| used <= PROBE)
        })
    }
    let rules = Rules {
        grid: Grid::checked(0, PERIOD.as_nanos()).expect("a positive period"),
        limit: script.limit,
        counts: BTreeMap::new(),
    };
    search(&rules, &mut vec![0; script.threads.len()], script, played)
}

/// Judges what a run of `script` saw.
///
/// # Errors
///
/// The first rule it breaks: per key, a permit no limit in force explains, units counted
/// twice, a window past the largest limit in force, or a claim decided under a limit older
/// than one a claim below it in the count had seen; then, over all keys, no order of the steps
/// that the rules explain.
///
/// # Examples
///
/// Under 12 then 2: a permit of two units under 12 (leaving 10), then one of two under 2
/// (leaving 0) would have needed the lowered window to hold four.
///
/// ```
/// use std::collections::BTreeMap;
/// use fixed_window_models::limit_change::{LimitScript, Played, Seen, check};
///
/// let script = LimitScript::lowered_under_claims();
/// let fine = Played {
///     seen: vec![vec![Seen::Permitted { remaining: 10 }], vec![Seen::Refused], vec![Seen::Done]],
///     counts: BTreeMap::from([(0, Some(2))]),
/// };
/// assert!(check(&script, &fine).is_ok());
/// let stacked = Played {
///     seen: vec![vec![Seen::Permitted { remaining: 8 }], vec![Seen::Permitted { remaining: 0 }], vec![Seen::Done]],
///     counts: BTreeMap::from([(0, Some(4))]),
/// };
/// assert!(check(&script, &stacked).unwrap_err().to_string().contains("above the lowered limit 2"));
/// ```
pub fn check(script: &LimitScript, played: &Played) -> Result<(), LimitViolation> {
    for key in script.keys() {
        check_key(script, played, key)?;
    }
    if sequential(script, played) {
        Ok(())
    } else {
        Err(LimitViolation(
            "no order of the steps gives what they saw and the counts left under the rules"
                .to_owned(),
        ))
    }
}

/// Plays `script` on `target` and panics with the violation, the script and what it saw if
/// [`check`] rejects it: the panic is what loom and shuttle report as a failing schedule.
///
/// # Panics
///
/// On a violation.
pub fn play_and_check(target: LimitTarget, script: &LimitScript) {
    let played = play(target, script);
    if let Err(violation) = check(script, &played) {
        panic!("{violation}\ntarget: {target:?}\nscript: {script:?}\nplayed: {played:?}");
    }
}
