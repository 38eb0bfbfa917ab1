//! The limiter under test, behind one small trait that the real [`RateLimiter`] and the planted
//! limiters both implement, so every checker runs unchanged against either.

use std::sync::{Arc, Mutex, PoisonError};

use fixed_window::{Clock, RateLimiter, RateLimiterError, RateLimiterEvent};

use crate::outcome::{Event, Outcome};

/// A limiter the checkers can drive: the three ways a caller asks for a permit.
pub trait Subject: Send + Sync {
    /// Takes a permit if the current window has one, never waiting.
    fn try_acquire(&self) -> Outcome;

    /// Takes a permit, waiting up to the configured max wait.
    fn acquire(&self) -> Outcome;

    /// Runs `op` if a permit is granted (waiting as [`acquire`](Subject::acquire) does).
    fn call(&self, op: &mut dyn FnMut()) -> Outcome;
}

/// Where a limiter's events are collected; clones share one log.
///
/// A plain std mutex on purpose: recording is instrumentation, not part of the model, and it
/// is never held across a point where loom or shuttle could switch threads.
#[derive(Debug, Clone, Default)]
pub struct Events {
    log: Arc<Mutex<Vec<Event>>>,
}

impl Events {
    /// An empty log.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(fixed_window_models::Events::new().take().is_empty());
    /// ```
    pub fn new() -> Events {
        Events::default()
    }

    /// Appends `event`.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    /// use fixed_window_models::{Event, Events};
    ///
    /// let events = Events::new();
    /// events.push(Event::Rejected { at: Instant::ZERO, retry_after: Duration::from_nanos(1) });
    /// assert_eq!(events.take().len(), 1);
    /// ```
    pub fn push(&self, event: Event) {
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(event);
    }

    /// Everything logged so far, leaving the log empty.
    ///
    /// # Examples
    ///
    /// See [`Events::push`].
    pub fn take(&self) -> Vec<Event> {
        std::mem::take(&mut *self.log.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// The model's copy of a core event; `None` for a kind of event added to core after this crate
/// was written, which the checks do not judge.
pub(crate) fn record(event: &RateLimiterEvent) -> Option<Event> {
    match *event {
        RateLimiterEvent::Permitted { at, remaining, .. } => {
            Some(Event::Permitted { at, remaining })
        }
        RateLimiterEvent::Rejected {
            at, retry_after, ..
        } => Some(Event::Rejected { at, retry_after }),
        _ => None,
    }
}

fn outcome<T>(result: &Result<T, RateLimiterError>, permitted: impl Fn(&T) -> Outcome) -> Outcome {
    match result {
        Ok(value) => permitted(value),
        Err(err) => err
            .retry_after()
            .map_or(Outcome::Interrupted, |retry_after| Outcome::Rejected {
                retry_after,
            }),
    }
}

impl<C: Clock> Subject for RateLimiter<C> {
    fn try_acquire(&self) -> Outcome {
        outcome(
            &RateLimiter::try_acquire(self).map_err(RateLimiterError::from),
            |permit| Outcome::Permitted {
                at: Some(permit.at()),
                remaining: Some(permit.remaining()),
            },
        )
    }

    fn acquire(&self) -> Outcome {
        outcome(&RateLimiter::acquire(self), |permit| Outcome::Permitted {
            at: Some(permit.at()),
            remaining: Some(permit.remaining()),
        })
    }

    fn call(&self, op: &mut dyn FnMut()) -> Outcome {
        outcome(&RateLimiter::call(self, op), |()| Outcome::Permitted {
            at: None,
            remaining: None,
        })
    }
}
