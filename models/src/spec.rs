//! The sequential specification of the limiter: what one operation may return, given the
//! permits granted before it, when operations take effect one at a time.
//!
//! Written from the rules (`docs/rules.md`) alone (with [`Config`]'s own window arithmetic),
//! never from core's code. Time is part of the state: an operation takes effect at an instant
//! `τ` within its clock readings, and instants never decrease along the sequence (the models'
//! clocks are monotonic).

use core::time::Duration;

use fixed_window::Instant;

use crate::config::Config;
use crate::history::Record;
use crate::outcome::Outcome;

/// The abstract state after a sequence of operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct State {
    /// The window in effect at `time`.
    pub window: u64,
    /// Permits granted in `window`.
    pub used: u32,
    /// When the last operation took effect.
    pub time: Instant,
}

impl State {
    /// The state of a new limiter: window 0, nothing used, at the origin.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    /// use fixed_window_models::{Config, spec::State};
    ///
    /// let config = Config::new(Instant::from_nanos(3), 1, Duration::from_nanos(10), Duration::ZERO);
    /// assert_eq!(State::initial(&config).time, Instant::from_nanos(3));
    /// ```
    pub fn initial(config: &Config) -> State {
        State {
            window: 0,
            used: 0,
            time: config.origin,
        }
    }
}

/// Permits that may fall in any of more windows than this are placed only in the first ones;
/// such an operation spans thousands of periods, which the models never produce.
const WIDEST_SPAN: u64 = 4096;

/// Every state `record` can lead to from `state`, if it takes effect next; empty if it cannot
/// take effect next.
///
/// - A permit takes effect at some `τ` no earlier than its invocation, its own reading and the
///   previous operation, and no later than its return; in the window of `τ` fewer than `limit`
///   permits were granted, and it reports `limit − used − 1` remaining.
/// - A rejection takes effect in the current window, which must be full. The limiter measured
///   `retry_after` from its own reading `r` to the window's end, so `r = end − retry_after` lies
///   between the invocation and `τ`. A waiting call is rejected only if the window's end lies
///   past its deadline (`max_wait` after a reading no earlier than its invocation).
///
/// # Examples
///
/// The second permit of a window of one cannot take effect.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::Instant;
/// use fixed_window_models::{Config, Kind, Outcome, Record, spec};
///
/// let config = Config::new(Instant::ZERO, 1, Duration::from_nanos(10), Duration::ZERO);
/// let permit = Record {
///     kind: Kind::TryAcquire,
///     invoked: 0,
///     returned: 1,
///     started: Instant::from_nanos(2),
///     ended: Instant::from_nanos(2),
///     outcome: Outcome::Permitted { at: Some(Instant::from_nanos(2)), remaining: Some(0) },
///     ran: true,
/// };
/// let after_one = spec::successors(&config, &spec::State::initial(&config), &permit);
/// assert_eq!(after_one.len(), 1);
/// assert!(spec::successors(&config, &after_one[0], &permit).is_empty());
/// ```
pub fn successors(config: &Config, state: &State, record: &Record) -> Vec<State> {
    match record.outcome {
        Outcome::Permitted { at, remaining } => permit(config, state, record, at, remaining),
        Outcome::Rejected { retry_after } => rejection(config, state, record, retry_after)
            .into_iter()
            .collect(),
        // An interrupted wait takes no permit and changes nothing.
        Outcome::Interrupted => vec![*state],
    }
}

fn permit(
    config: &Config,
    state: &State,
    record: &Record,
    at: Option<Instant>,
    remaining: Option<u32>,
) -> Vec<State> {
    let earliest = record
        .started
        .max(at.unwrap_or(record.started))
        .max(state.time);
    if earliest > record.ended {
        return Vec::new();
    }
    let first = config.window_of(earliest).max(state.window);
    let last = config
        .window_of(record.ended)
        .min(first.saturating_add(WIDEST_SPAN));
    (first..=last)
        .filter_map(|window| {
            let used = if window == state.window {
                state.used
            } else {
                0
            };
            let left = config.limit.checked_sub(used + 1)?;
            let start = config.window_start(window)?;
            remaining.is_none_or(|r| r == left).then_some(State {
                window,
                used: used + 1,
                time: earliest.max(start),
            })
        })
        .collect()
}

fn rejection(
    config: &Config,
    state: &State,
    record: &Record,
    retry_after: Duration,
) -> Option<State> {
    if state.used < config.limit {
        return None;
    }
    let end = config.window_end(state.window);
    if record.kind.waits() {
        let deadline = record.started.saturating_add(config.max_wait_duration());
        if end.is_some_and(|end| end <= deadline) {
            return None;
        }
    }
    let reading = match end {
        Some(end) => {
            let reading = end.as_nanos().checked_sub(nanos(retry_after))?;
            Instant::from_nanos(reading)
        }
        // No next window: the limiter says so with the longest wait there is.
        None if retry_after == Duration::MAX => record.started,
        None => return None,
    };
    let time = record.started.max(state.time).max(reading);
    let in_window = end.is_none_or(|end| time < end);
    (reading >= record.started && time <= record.ended && in_window)
        .then_some(State { time, ..*state })
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
