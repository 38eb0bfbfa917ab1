//! A planted keyed limiter: the checkers must catch it.
//!
//! Written independently of core, on this crate's sync shim (so under loom or shuttle its
//! table's lock and its words' atomics are the checker's). Like core's keyed limiter it keeps
//! one state word per key, claimed by compare-and-set, and sweeps ended keys on the first call
//! of each new window and on demand; unlike core, its sweep removes a key whose word it *loaded*
//! as ended, without a compare-and-set from that exact word. A caller that found the word just
//! before the removal still claims from it, and that claim is lost with the word: the next
//! caller finds the key gone and re-creates it empty, in the same window.

use core::time::Duration;

use fixed_window::{Attempt, Clock, Instant, Interrupt};

use crate::config::Config;
use crate::keyed::KeyedSubject;
use crate::outcome::{Event, Outcome};
use crate::subject::Events;
use crate::sync::atomic::{AtomicU64, Ordering};
use crate::sync::{Arc, Mutex, hint};

/// The bug planted in a [`PlantedKeyed`] limiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyedPlantedBug {
    /// A sweep removes a key whose word it loaded as ended, without a compare-and-set: a claim
    /// made on the word in between is lost, and the key is re-created empty in the window the
    /// claim counted in.
    RecreateEmpty,
}

/// Bits of a word holding the used count; the window index takes the rest.
const USED_BITS: u32 = 20;
const USED_MASK: u64 = (1 << USED_BITS) - 1;

type Entries = Vec<(u8, Arc<AtomicU64>)>;

/// A keyed fixed-window limiter with one [`KeyedPlantedBug`].
pub struct PlantedKeyed<C> {
    bug: KeyedPlantedBug,
    limit: u64,
    period: u64,
    origin: u64,
    max_wait: Duration,
    clock: C,
    /// The events of key `k` go to `events[k]`.
    events: Vec<Events>,
    entries: Mutex<Entries>,
    /// The latest window a call has swept for.
    swept: AtomicU64,
}

impl<C: Clock> PlantedKeyed<C> {
    /// A keyed limiter with `bug`, `config`'s limit, period and max wait, whose grid starts at
    /// `clock.now()`, sending key `k`'s events to `events[k]`.
    ///
    /// # Panics
    ///
    /// If the limit is zero or at least 2^20: the packed words have no room for it.
    pub fn new(bug: KeyedPlantedBug, config: &Config, clock: C, events: Vec<Events>) -> Self {
        let limit = u64::from(config.limit);
        assert!(
            (1..USED_MASK).contains(&limit),
            "a planted keyed limiter needs 1 <= limit < 2^20"
        );
        let origin = clock.now().as_nanos();
        PlantedKeyed {
            bug,
            limit,
            period: config.period,
            origin,
            max_wait: config.max_wait_duration(),
            clock,
            events,
            entries: Mutex::new(Vec::new()),
            swept: AtomicU64::new(0),
        }
    }

    fn window_of(&self, now: Instant) -> u64 {
        now.as_nanos().saturating_sub(self.origin) / self.period
    }

    fn end(&self, window: u64) -> Instant {
        Instant::from_nanos(
            self.origin
                .saturating_add(window.saturating_add(1).saturating_mul(self.period)),
        )
    }

    fn entries(&self) -> impl core::ops::DerefMut<Target = Entries> + '_ {
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn lookup(&self, key: u8) -> Option<Arc<AtomicU64>> {
        self.entries()
            .iter()
            .find(|(stored, _)| *stored == key)
            .map(|(_, word)| Arc::clone(word))
    }

    fn insert(&self, key: u8, word: u64) -> bool {
        let mut entries = self.entries();
        if entries.iter().any(|(stored, _)| *stored == key) {
            return false;
        }
        entries.push((key, Arc::new(AtomicU64::new(word))));
        true
    }

    /// Removes the keys whose window is before `window`.
    fn sweep_before(&self, window: u64) {
        match self.bug {
            // The bug: the word is judged by a load and removed with its entry; nothing stops a
            // claim between the two.
            KeyedPlantedBug::RecreateEmpty => self
                .entries()
                .retain(|(_, word)| word.load(Ordering::SeqCst) >> USED_BITS >= window),
        }
    }

    /// One acquire step for `key`, with the bug.
    fn attempt(&self, key: u8, now: Instant, deadline: Instant) -> Attempt {
        let window = self.window_of(now);
        if self.swept.fetch_max(window, Ordering::SeqCst) < window {
            self.sweep_before(window);
        }
        loop {
            let Some(word) = self.lookup(key) else {
                if self.insert(key, (window << USED_BITS) | 1) {
                    return Attempt::Permitted {
                        remaining: remaining(self.limit - 1),
                    };
                }
                continue;
            };
            let current = word.load(Ordering::SeqCst);
            let (stored, used) = (current >> USED_BITS, current & USED_MASK);
            let (index, used) = if now >= self.end(stored) {
                (window, 0)
            } else {
                (stored, used)
            };
            if used >= self.limit {
                let next = self.end(index);
                return if next <= deadline {
                    Attempt::Wait { until: next }
                } else {
                    Attempt::Rejected {
                        retry_after: next.saturating_duration_since(now),
                    }
                };
            }
            if word
                .compare_exchange(
                    current,
                    (index << USED_BITS) | (used + 1),
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                )
                .is_ok()
            {
                return Attempt::Permitted {
                    remaining: remaining(self.limit - used - 1),
                };
            }
            hint::spin_loop();
        }
    }

    /// Drives [`attempt`](PlantedKeyed::attempt) as core's waiting loop does, emitting events.
    fn acquire_until(&self, key: u8, waits: bool) -> Outcome {
        let mut now = self.clock.now();
        let deadline = if waits {
            now.saturating_add(self.max_wait)
        } else {
            now
        };
        let mut slept_from = None;
        let mut interrupt = None;
        loop {
            match self.attempt(key, now, deadline) {
                Attempt::Permitted { remaining } => {
                    self.emit(key, Event::Permitted { at: now, remaining });
                    return Outcome::Permitted {
                        at: Some(now),
                        remaining: Some(remaining),
                    };
                }
                Attempt::Rejected { retry_after } => return self.reject(key, now, retry_after),
                Attempt::Wait { until } => {
                    let stalled = slept_from.is_some_and(|before| now <= before);
                    if !waits || stalled {
                        return self.reject(key, now, until.saturating_duration_since(now));
                    }
                    if self
                        .clock
                        .sleep(
                            until.saturating_duration_since(now),
                            interrupt.get_or_insert_with(Interrupt::new),
                        )
                        .is_err()
                    {
                        return Outcome::Interrupted;
                    }
                    slept_from = Some(now);
                    now = self.clock.now();
                }
            }
        }
    }

    fn emit(&self, key: u8, event: Event) {
        if let Some(events) = self.events.get(usize::from(key)) {
            events.push(event);
        }
    }

    fn reject(&self, key: u8, now: Instant, retry_after: Duration) -> Outcome {
        self.emit(
            key,
            Event::Rejected {
                at: now,
                retry_after,
            },
        );
        Outcome::Rejected { retry_after }
    }
}

fn remaining(left: u64) -> u32 {
    u32::try_from(left).unwrap_or(u32::MAX)
}

impl<C: Clock> KeyedSubject for PlantedKeyed<C> {
    fn try_acquire(&self, key: u8) -> Outcome {
        self.acquire_until(key, false)
    }

    fn acquire(&self, key: u8) -> Outcome {
        self.acquire_until(key, true)
    }

    fn call(&self, key: u8, op: &mut dyn FnMut()) -> Outcome {
        let outcome = self.acquire_until(key, true);
        if outcome.is_permitted() {
            op();
        }
        outcome
    }

    fn sweep(&self) {
        let window = self.window_of(self.clock.now());
        self.swept.fetch_max(window, Ordering::SeqCst);
        self.sweep_before(window);
    }

    fn len(&self) -> usize {
        self.entries().len()
    }
}

impl<C> core::fmt::Debug for PlantedKeyed<C> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PlantedKeyed")
            .field("bug", &self.bug)
            .field("limit", &self.limit)
            .field("period", &self.period)
            .finish_non_exhaustive()
    }
}
