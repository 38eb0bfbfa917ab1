//! Scripts of racing threads on a manual clock, shared by the loom and shuttle suites, and the
//! assertion every run of them makes.
//!
//! Under `--cfg fixed_window_loom` or `--cfg fixed_window_shuttle` the threads are the
//! checker's, and so is the manual clock's atomic (core builds it on the checker's
//! primitives), so moving the clock is a scheduling point like any claim. In the normal build
//! they are std threads, which the sequential scripts and the real-thread tests use.

use core::time::Duration;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use fixed_window::{Clock, Instant, ManualClock};

use crate::config::Config;
use crate::history::{History, Recorder};
use crate::outcome::Kind;
use crate::subject::Subject;
use crate::sync::thread;
use crate::target::Target;
use crate::violation::Violation;
use crate::{invariants, linearizability};

/// One step of a script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Perform an operation (recorded).
    Do(Kind),
    /// Move the clock forward.
    Advance(Duration),
    /// Set the clock (scripts only move it forward, or to where it already is).
    Set(Instant),
}

/// What runs: steps on the main thread before the others start, the racing threads, and
/// steps on the main thread after they all finish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Script {
    /// The limiter's configuration; the clock starts at its origin.
    pub config: Config,
    /// Steps before the race.
    pub before: Vec<Step>,
    /// One list of steps per racing thread.
    pub threads: Vec<Vec<Step>>,
    /// Steps after the race.
    pub after: Vec<Step>,
}

impl Script {
    /// `threads` callers racing for one permit each at the same instant, on a limiter of
    /// `limit` per `period` nanoseconds: the claim race.
    ///
    /// # Examples
    ///
    /// ```
    /// let script = fixed_window_models::scenario::Script::claim_race(3, 2, 10);
    /// assert_eq!(script.threads.len(), 3);
    /// ```
    pub fn claim_race(threads: usize, limit: u32, period: u64) -> Script {
        Script {
            config: config(limit, period, 0),
            before: Vec::new(),
            threads: vec![vec![Step::Do(Kind::TryAcquire)]; threads],
            after: Vec::new(),
        }
    }

    /// The window advance racing a claim: limit 2 per 10 ns, one permit taken at 0; one thread
    /// moves the clock into the next window at a point off the grid (15) while another claims;
    /// then three claims at 15, and one at 20 (the next window on the grid, which must be
    /// fresh).
    ///
    /// # Examples
    ///
    /// ```
    /// let script = fixed_window_models::scenario::Script::advance_race();
    /// assert_eq!(script.threads.len(), 2);
    /// ```
    pub fn advance_race() -> Script {
        let try_acquire = Step::Do(Kind::TryAcquire);
        Script {
            config: config(2, 10, 0),
            before: vec![try_acquire],
            threads: vec![
                vec![Step::Advance(Duration::from_nanos(15))],
                vec![try_acquire],
            ],
            after: vec![
                try_acquire,
                try_acquire,
                try_acquire,
                Step::Set(Instant::from_nanos(20)),
                try_acquire,
            ],
        }
    }

    /// A limiter built in a young process, whose first window began before its clock's
    /// timeline: limit 1 per 10 ns on the grid through 7, built at 3, so window 0 is [-3, 7),
    /// cut to [0, 7), and its permit is taken at 3. One thread moves the clock to the boundary
    /// at 7 while another claims; then two claims at 7 (window 1, one permit between the race
    /// and them) and one at 17 (window 2, fresh).
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window::Instant;
    ///
    /// let script = fixed_window_models::scenario::Script::young_first_window();
    /// assert_eq!(script.config.window_end(0), Some(Instant::from_nanos(7)));
    /// ```
    pub fn young_first_window() -> Script {
        let try_acquire = Step::Do(Kind::TryAcquire);
        Script {
            config: Config::new(
                Instant::from_nanos(3),
                1,
                Duration::from_nanos(10),
                Duration::ZERO,
            )
            .through(Instant::from_nanos(7)),
            before: vec![try_acquire],
            threads: vec![
                vec![Step::Advance(Duration::from_nanos(4))],
                vec![try_acquire],
            ],
            after: vec![
                try_acquire,
                try_acquire,
                Step::Set(Instant::from_nanos(17)),
                try_acquire,
            ],
        }
    }

    /// A waiter against a claimer at the boundary: limit 1 per 10 ns, max wait 10 ns, the
    /// permit of window 0 taken; one thread waits for the next window (its sleep moves the
    /// clock to exactly 10) while another claims.
    ///
    /// # Examples
    ///
    /// ```
    /// let script = fixed_window_models::scenario::Script::boundary_waiter();
    /// assert_eq!(script.config.max_wait, 10);
    /// ```
    pub fn boundary_waiter() -> Script {
        Script {
            config: config(1, 10, 10),
            before: vec![Step::Do(Kind::TryAcquire)],
            threads: vec![
                vec![Step::Do(Kind::Acquire)],
                vec![Step::Do(Kind::TryAcquire)],
            ],
            after: Vec::new(),
        }
    }

    /// Many callers: `callers` threads mixing `try_acquire`, `call` and waiting `acquire`
    /// (two operations each), limit 3 per 10 ns, max wait 10 ns, while one more thread moves
    /// the clock 5 ns at a time across six windows' worth of boundaries.
    ///
    /// # Examples
    ///
    /// ```
    /// let script = fixed_window_models::scenario::Script::stress(8);
    /// assert_eq!(script.threads.len(), 9);
    /// ```
    pub fn stress(callers: usize) -> Script {
        let kinds = [Kind::TryAcquire, Kind::Call, Kind::Acquire];
        let mut threads: Vec<Vec<Step>> = (0..callers)
            .map(|i| {
                vec![
                    Step::Do(kinds[i % kinds.len()]),
                    Step::Do(kinds[(i + 1) % kinds.len()]),
                ]
            })
            .collect();
        threads.push(vec![Step::Advance(Duration::from_nanos(5)); 6]);
        Script {
            config: config(3, 10, 10),
            before: Vec::new(),
            threads,
            after: Vec::new(),
        }
    }

    /// Fewer callers than the limit: `callers` threads (`try_acquire` and `call`) on a limit of
    /// `callers + 2` per 10 ns while the clock moves across windows; every caller must get a
    /// permit.
    ///
    /// # Examples
    ///
    /// ```
    /// let script = fixed_window_models::scenario::Script::fewer_than_limit(6);
    /// assert_eq!(script.config.limit, 8);
    /// ```
    pub fn fewer_than_limit(callers: usize) -> Script {
        let kinds = [Kind::TryAcquire, Kind::Call];
        let mut threads: Vec<Vec<Step>> = (0..callers)
            .map(|i| vec![Step::Do(kinds[i % kinds.len()])])
            .collect();
        threads.push(vec![Step::Advance(Duration::from_nanos(5)); 3]);
        Script {
            config: config(u32::try_from(callers).unwrap_or(u32::MAX - 2) + 2, 10, 0),
            before: Vec::new(),
            threads,
            after: Vec::new(),
        }
    }

    /// One thread, no race: limit 2 per 10 ns, max wait 10 ns. A permit at 0 leaves one
    /// unused; three claims at 15 (a carried-over permit would grant the third); a claim at
    /// 20 (a window started at 15 would still be full); two at exactly 30 (a boundary taken
    /// as the old window's would reject the second); and a waiting call that sleeps to 40.
    ///
    /// # Examples
    ///
    /// ```
    /// let script = fixed_window_models::scenario::Script::sequential();
    /// assert!(script.threads.is_empty());
    /// ```
    pub fn sequential() -> Script {
        let try_acquire = Step::Do(Kind::TryAcquire);
        Script {
            config: config(2, 10, 10),
            before: vec![
                try_acquire,
                Step::Advance(Duration::from_nanos(15)),
                try_acquire,
                try_acquire,
                try_acquire,
                Step::Set(Instant::from_nanos(20)),
                try_acquire,
                Step::Set(Instant::from_nanos(30)),
                try_acquire,
                try_acquire,
                Step::Do(Kind::Acquire),
            ],
            threads: Vec::new(),
            after: Vec::new(),
        }
    }
}

fn config(limit: u32, period: u64, max_wait: u64) -> Config {
    Config::new(
        Instant::ZERO,
        limit,
        Duration::from_nanos(period),
        Duration::from_nanos(max_wait),
    )
}

/// Runs `script` against `target` and returns its history.
///
/// # Panics
///
/// If a racing thread panics.
pub fn play(target: Target, script: &Script) -> History {
    let clock = ManualClock::starting_at(script.config.origin);
    let recorder = Arc::new(Recorder::new(script.config));
    let limiter: Arc<dyn Subject> =
        Arc::from(target.build(&script.config, clock.clone(), recorder.events()));
    run(&script.before, &clock, &*limiter, &recorder);
    let handles: Vec<_> = script
        .threads
        .iter()
        .map(|steps| {
            let (steps, clock) = (steps.clone(), clock.clone());
            let (limiter, recorder) = (Arc::clone(&limiter), Arc::clone(&recorder));
            thread::spawn(move || run(&steps, &clock, &*limiter, &recorder))
        })
        .collect();
    for handle in handles {
        handle.join().expect("a model thread panicked");
    }
    run(&script.after, &clock, &*limiter, &recorder);
    recorder.finish()
}

fn run(steps: &[Step], clock: &ManualClock, limiter: &dyn Subject, recorder: &Recorder) {
    for step in steps {
        match *step {
            Step::Do(kind) => {
                recorder.perform(clock as &dyn Clock, limiter, kind);
            }
            Step::Advance(d) => clock.advance(d),
            Step::Set(t) => clock.set(t),
        }
    }
}

/// Which checker judges a history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checker {
    /// [`invariants::check`]: the rules (`docs/rules.md`), directly.
    Invariants,
    /// [`linearizability::check`]: an order consistent with real time and the specification.
    Linearizability,
}

impl Checker {
    /// Judges `history`.
    ///
    /// # Errors
    ///
    /// The checker's violation.
    pub fn check(self, history: &History) -> Result<(), Violation> {
        match self {
            Checker::Invariants => invariants::check(history),
            Checker::Linearizability => linearizability::check(history),
        }
    }
}

/// Plays `script` against `target` and panics, with the violation and the history, if any of
/// `checkers` rejects it: the panic is what loom and shuttle report as a failing schedule.
///
/// # Panics
///
/// On a violation.
pub fn play_and_check(target: Target, script: &Script, checkers: &[Checker]) {
    let history = play(target, script);
    for checker in checkers {
        if let Err(violation) = checker.check(&history) {
            panic!("{violation}\nchecker: {checker:?}\nhistory: {history:#?}");
        }
    }
}

/// Runs `model` (a whole loom or shuttle exploration) and returns the message of the violation
/// it reported, if any; a panic that is not a violation is passed on.
///
/// # Panics
///
/// If `model` panics with something other than a [`Violation`]'s message.
pub fn violation_found(model: impl FnOnce()) -> Option<String> {
    let payload = catch_unwind(AssertUnwindSafe(model)).err()?;
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()));
    match message {
        Some(message) if message.starts_with("violation:") => Some(message),
        _ => std::panic::resume_unwind(payload),
    }
}
