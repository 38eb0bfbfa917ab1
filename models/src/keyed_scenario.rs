//! Scripts of racing threads on a keyed limiter and a manual clock, shared by the loom and
//! shuttle suites, and the assertion every run of them makes: each key's history, judged as a
//! plain limiter's, by the same checkers.

use core::time::Duration;
use std::sync::Arc;

use fixed_window::{Clock, Instant, ManualClock};

use crate::config::Config;
use crate::history::{History, Recorder};
use crate::keyed::{KeyedSubject, OneKey};
use crate::keyed_target::KeyedTarget;
use crate::outcome::Kind;
use crate::scenario::Checker;
use crate::subject::Events;
use crate::sync::thread;

/// One step of a keyed script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyedStep {
    /// Perform an operation on a key (recorded in that key's history).
    Do(u8, Kind),
    /// Sweep: remove the keys whose window has ended (not recorded).
    Sweep,
    /// Move the clock forward.
    Advance(Duration),
    /// Set the clock (scripts only move it forward).
    Set(Instant),
}

/// What runs: steps on the main thread before the others start, the racing threads, and steps
/// on the main thread after they all finish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyedScript {
    /// The configuration every key shares; the clock starts at its origin.
    pub config: Config,
    /// How many keys the steps use (keys are `0..keys`).
    pub keys: u8,
    /// Steps before the race.
    pub before: Vec<KeyedStep>,
    /// One list of steps per racing thread.
    pub threads: Vec<Vec<KeyedStep>>,
    /// Steps after the race.
    pub after: Vec<KeyedStep>,
}

impl KeyedScript {
    /// The removal-versus-claim race on one key: limit 1 per 10 ns. Key 0 takes its permit in
    /// window 0; at 10 (window 1), one thread calls key 0 while another calls key 1, and
    /// whichever takes the new window's sweep reclaims key 0's ended word as the other may be
    /// claiming from it; then key 0 is called once more, and must be rejected if the race
    /// granted it window 1's permit.
    ///
    /// # Examples
    ///
    /// ```
    /// let script = fixed_window_models::KeyedScript::reclaim_race();
    /// assert_eq!((script.keys, script.threads.len()), (2, 2));
    /// ```
    pub fn reclaim_race() -> KeyedScript {
        KeyedScript {
            config: config(1, 10, 0),
            keys: 2,
            before: vec![
                KeyedStep::Do(0, Kind::TryAcquire),
                KeyedStep::Set(Instant::from_nanos(10)),
            ],
            threads: vec![
                vec![KeyedStep::Do(0, Kind::TryAcquire)],
                vec![KeyedStep::Do(1, Kind::TryAcquire)],
            ],
            after: vec![KeyedStep::Do(0, Kind::TryAcquire)],
        }
    }

    /// The same race with a third thread sweeping on demand (`shrink`) while the two call.
    ///
    /// # Examples
    ///
    /// ```
    /// let script = fixed_window_models::KeyedScript::reclaim_race_with_sweeper();
    /// assert_eq!(script.threads.len(), 3);
    /// ```
    pub fn reclaim_race_with_sweeper() -> KeyedScript {
        let mut script = KeyedScript::reclaim_race();
        script.threads.push(vec![KeyedStep::Sweep]);
        script
    }

    /// A key re-created after a reclaim, by a caller whose reading predates it: limit 1 per
    /// 10 ns, key 0 unused. One thread calls key 0 at 0; another calls it too, moves the clock
    /// to 10 and sweeps; then key 0 is called once more, at 10. The first caller may find the
    /// key absent at 0 and add it only after the other added it, took window 0's permit and had
    /// it reclaimed at 10; its permit must then count in window 1 (so the last call is
    /// rejected), not in window 0 again (which would leave window 1 a permit too many).
    ///
    /// # Examples
    ///
    /// ```
    /// let script = fixed_window_models::KeyedScript::reinsert_race();
    /// assert_eq!(script.threads.len(), 2);
    /// ```
    pub fn reinsert_race() -> KeyedScript {
        KeyedScript {
            config: config(1, 10, 0),
            keys: 1,
            before: Vec::new(),
            threads: vec![
                vec![KeyedStep::Do(0, Kind::TryAcquire)],
                vec![
                    KeyedStep::Do(0, Kind::TryAcquire),
                    KeyedStep::Advance(Duration::from_nanos(10)),
                    KeyedStep::Sweep,
                ],
            ],
            after: vec![KeyedStep::Do(0, Kind::TryAcquire)],
        }
    }

    /// Many callers on two keys: `callers` threads mixing `try_acquire`, `call` and waiting
    /// `acquire` (two operations each, on keys by turn), limit 2 per 10 ns, max wait 10 ns,
    /// while one thread moves the clock 5 ns at a time across six windows' boundaries and
    /// another sweeps three times.
    ///
    /// # Examples
    ///
    /// ```
    /// let script = fixed_window_models::KeyedScript::stress(6);
    /// assert_eq!(script.threads.len(), 8);
    /// ```
    pub fn stress(callers: usize) -> KeyedScript {
        let kinds = [Kind::TryAcquire, Kind::Call, Kind::Acquire];
        let mut threads: Vec<Vec<KeyedStep>> = (0..callers)
            .map(|i| {
                let key = u8::try_from(i % 2).unwrap_or(0);
                vec![
                    KeyedStep::Do(key, kinds[i % kinds.len()]),
                    KeyedStep::Do(key, kinds[(i + 1) % kinds.len()]),
                ]
            })
            .collect();
        threads.push(vec![KeyedStep::Advance(Duration::from_nanos(5)); 6]);
        threads.push(vec![KeyedStep::Sweep; 3]);
        KeyedScript {
            config: config(2, 10, 10),
            keys: 2,
            before: Vec::new(),
            threads,
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

/// Runs `script` against `target`; returns each key's history (key `k`'s at index `k`) and the
/// number of keys the limiter held at the end.
///
/// # Panics
///
/// If a racing thread panics.
pub fn play_keyed(target: KeyedTarget, script: &KeyedScript) -> (Vec<History>, usize) {
    let clock = ManualClock::starting_at(script.config.origin);
    let recorders: Arc<Vec<Recorder>> = Arc::new(
        (0..script.keys)
            .map(|_| Recorder::new(script.config))
            .collect(),
    );
    let events: Vec<Events> = recorders
        .iter()
        .map(|recorder| recorder.events().clone())
        .collect();
    let limiter: Arc<dyn KeyedSubject> =
        Arc::from(target.build(&script.config, clock.clone(), &events));
    run(&script.before, &clock, &*limiter, &recorders);
    let handles: Vec<_> = script
        .threads
        .iter()
        .map(|steps| {
            let (steps, clock) = (steps.clone(), clock.clone());
            let (limiter, recorders) = (Arc::clone(&limiter), Arc::clone(&recorders));
            thread::spawn(move || run(&steps, &clock, &*limiter, &recorders))
        })
        .collect();
    for handle in handles {
        handle.join().expect("a model thread panicked");
    }
    run(&script.after, &clock, &*limiter, &recorders);
    let histories = recorders.iter().map(Recorder::finish).collect();
    (histories, limiter.len())
}

fn run(
    steps: &[KeyedStep],
    clock: &ManualClock,
    limiter: &dyn KeyedSubject,
    recorders: &[Recorder],
) {
    for step in steps {
        match *step {
            KeyedStep::Do(key, kind) => {
                let recorder = &recorders[usize::from(key)];
                recorder.perform(clock as &dyn Clock, &OneKey::new(limiter, key), kind);
            }
            KeyedStep::Sweep => limiter.sweep(),
            KeyedStep::Advance(d) => clock.advance(d),
            KeyedStep::Set(t) => clock.set(t),
        }
    }
}

/// Plays `script` against `target` and panics, with the violation, the key and its history, if
/// any of `checkers` rejects a key's history, or if the limiter ends holding more keys than the
/// script uses: the panic is what loom and shuttle report as a failing schedule.
///
/// # Panics
///
/// On a violation.
pub fn play_and_check_keyed(target: KeyedTarget, script: &KeyedScript, checkers: &[Checker]) {
    let (histories, held) = play_keyed(target, script);
    for (key, history) in histories.iter().enumerate() {
        for checker in checkers {
            if let Err(violation) = checker.check(history) {
                panic!("{violation}\nchecker: {checker:?}\nkey: {key}\nhistory: {history:#?}");
            }
        }
    }
    assert!(
        held <= usize::from(script.keys),
        "violation: the limiter holds {held} keys, more than the {} used",
        script.keys
    );
}
