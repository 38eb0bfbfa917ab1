//! The rules (`docs/rules.md`) that every history must keep, checked directly on the history.
//!
//! An operation's effect happens somewhere between its invocation and its return, so each
//! permit is placed in a range of windows: from the window of its own clock reading (or of the
//! invocation, if later) to the window of the return. The checks hold for every placement the
//! history allows and flag only what no placement can explain; [`crate::linearizability`] is the
//! exact check.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use core::time::Duration;

use fixed_window::Instant;

use crate::config::Config;
use crate::history::{History, Record};
use crate::outcome::{Event, Outcome};
use crate::violation::Violation;

/// Checks every rule on `history`: operations run exactly when permitted; `remaining` below the
/// limit (no carry-over); `retry_after` positive and within reach of the window; at most `limit`
/// permits in any window; every rejection explained by a full window (no permit lost), and for
/// a waiting call by a next window past its deadline; events equal to outcomes.
///
/// # Errors
///
/// The first rule the history breaks.
///
/// # Examples
///
/// Two permits in one window of limit 1 break the first rule.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::Instant;
/// use fixed_window_models::{Config, Event, History, Kind, Outcome, Record, invariants};
///
/// let config = Config::new(Instant::ZERO, 1, Duration::from_nanos(10), Duration::ZERO);
/// let permit = |order: u64| Record {
///     kind: Kind::TryAcquire,
///     invoked: order,
///     returned: order + 1,
///     started: Instant::from_nanos(1),
///     ended: Instant::from_nanos(1),
///     outcome: Outcome::Permitted { at: Some(Instant::from_nanos(1)), remaining: Some(0) },
///     ran: true,
/// };
/// let event = Event::Permitted { at: Instant::from_nanos(1), remaining: 0 };
/// let history = History { config, records: vec![permit(0), permit(2)], events: vec![event, event] };
/// assert!(invariants::check(&history).is_err());
/// ```
pub fn check(history: &History) -> Result<(), Violation> {
    for record in &history.records {
        runs_when_permitted(record)?;
        remaining_below_limit(&history.config, record)?;
        retry_after_in_reach(&history.config, record)?;
    }
    let permits = permit_windows(history);
    at_most_limit_per_window(&history.config, &permits)?;
    rejections_explained(history, &permits)?;
    events_match_outcomes(history)
}

fn runs_when_permitted(record: &Record) -> Result<(), Violation> {
    if record.ran == record.outcome.is_permitted() {
        Ok(())
    } else {
        Err(Violation::new(format!(
            "an operation ran without a permit or a permit did not run it: {record:?}"
        )))
    }
}

fn remaining_below_limit(config: &Config, record: &Record) -> Result<(), Violation> {
    match record.outcome {
        Outcome::Permitted {
            remaining: Some(remaining),
            ..
        } if remaining >= config.limit => Err(Violation::new(format!(
            "a permit left {remaining} remaining, limit {}: permits carried over: {record:?}",
            config.limit
        ))),
        _ => Ok(()),
    }
}

fn retry_after_in_reach(config: &Config, record: &Record) -> Result<(), Violation> {
    let Outcome::Rejected { retry_after } = record.outcome else {
        return Ok(());
    };
    if retry_after.is_zero() {
        return Err(Violation::new(format!(
            "a rejection said to retry after zero: the next window was already open: {record:?}"
        )));
    }
    // The estimate is measured from the limiter's reading, taken after the invocation, to the
    // end of a window that can be no later than the one holding the return.
    let latest_end = config.window_end(config.window_of(record.ended));
    if let Some(end) = latest_end
        && retry_after > end.saturating_duration_since(record.started)
    {
        return Err(Violation::new(format!(
            "a rejection's retry_after {retry_after:?} reaches past the end of any window it \
             could have seen: {record:?}"
        )));
    }
    Ok(())
}

/// The earliest and latest window each permit can belong to.
fn permit_windows(history: &History) -> Vec<(u64, u64)> {
    let config = &history.config;
    history
        .records
        .iter()
        .filter_map(|record| match record.outcome {
            Outcome::Permitted { at, .. } => {
                let earliest = at.map_or(record.started, |at| at.max(record.started));
                Some((config.window_of(earliest), config.window_of(record.ended)))
            }
            _ => None,
        })
        .collect()
}

/// Whether the permits can be placed in their windows with at most `limit` per window:
/// earliest-deadline-first placement, window by window, which finds a placement whenever one
/// exists.
fn at_most_limit_per_window(config: &Config, permits: &[(u64, u64)]) -> Result<(), Violation> {
    let mut by_earliest = permits.to_vec();
    by_earliest.sort_unstable();
    let mut next = 0;
    let mut open = BinaryHeap::new();
    let mut window = 0;
    while next < by_earliest.len() || !open.is_empty() {
        if open.is_empty() {
            window = window.max(by_earliest[next].0);
        }
        while next < by_earliest.len() && by_earliest[next].0 <= window {
            open.push(Reverse(by_earliest[next].1));
            next += 1;
        }
        for _ in 0..config.limit {
            match open.pop() {
                Some(Reverse(latest)) if latest < window => {
                    return Err(Violation::new(format!(
                        "more than {} permits in one window: no placement of the permits \
                         granted by window {latest} keeps every window within the limit",
                        config.limit
                    )));
                }
                Some(_) => {}
                None => break,
            }
        }
        window += 1;
    }
    Ok(())
}

/// Windows further apart than this in one operation are not examined one by one; such an
/// operation (a thread descheduled for thousands of periods) is taken as explained.
const WIDEST_SPAN: u64 = 4096;

fn rejections_explained(history: &History, permits: &[(u64, u64)]) -> Result<(), Violation> {
    let config = &history.config;
    for record in &history.records {
        if !matches!(record.outcome, Outcome::Rejected { .. }) {
            continue;
        }
        let (first, last) = (
            config.window_of(record.started),
            config.window_of(record.ended),
        );
        if last - first > WIDEST_SPAN {
            continue;
        }
        let deadline = record.started.saturating_add(config.max_wait_duration());
        let explained = (first..=last).any(|window| {
            let full = permits
                .iter()
                .filter(|&&(earliest, latest)| earliest <= window && window <= latest)
                .count()
                >= config.limit as usize;
            let past_deadline = !record.kind.waits()
                || config.window_end(window).is_none_or(|next| next > deadline);
            full && past_deadline
        });
        if !explained {
            return Err(Violation::new(format!(
                "a permit was lost: a call was rejected while no window it spanned was full{}: \
                 {record:?}",
                if record.kind.waits() {
                    " with its next window past the deadline"
                } else {
                    ""
                }
            )));
        }
    }
    Ok(())
}

fn events_match_outcomes(history: &History) -> Result<(), Violation> {
    let mut permitted_events = HashMap::<(Instant, u32), usize>::new();
    let mut rejected_events = HashMap::<Duration, usize>::new();
    for event in &history.events {
        match *event {
            Event::Permitted { at, remaining } => {
                *permitted_events.entry((at, remaining)).or_default() += 1;
            }
            Event::Rejected { retry_after, .. } => {
                *rejected_events.entry(retry_after).or_default() += 1;
            }
        }
    }
    let permits = history
        .records
        .iter()
        .filter(|record| record.outcome.is_permitted())
        .count();
    let event_permits: usize = permitted_events.values().sum();
    if permits != event_permits {
        return Err(Violation::new(format!(
            "{permits} permits granted but {event_permits} Permitted events emitted"
        )));
    }
    for record in &history.records {
        match record.outcome {
            Outcome::Permitted {
                at: Some(at),
                remaining: Some(remaining),
            } => take_one(&mut permitted_events, &(at, remaining), record)?,
            Outcome::Rejected { retry_after } => {
                take_one(&mut rejected_events, &retry_after, record)?;
            }
            _ => {}
        }
    }
    match rejected_events.values().sum::<usize>() {
        0 => Ok(()),
        extra => Err(Violation::new(format!(
            "{extra} Rejected events without a rejected call"
        ))),
    }
}

fn take_one<K: Eq + core::hash::Hash>(
    counts: &mut HashMap<K, usize>,
    key: &K,
    record: &Record,
) -> Result<(), Violation> {
    match counts.get_mut(key) {
        Some(count) if *count > 0 => {
            *count -= 1;
            Ok(())
        }
        _ => Err(Violation::new(format!(
            "no event matches the outcome of {record:?}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Config {
        Config::new(Instant::ZERO, 2, Duration::from_nanos(10), Duration::ZERO)
    }

    #[test]
    fn permits_spread_over_their_ranges_fit() {
        // Three permits that could each be in window 0 or 1 fit two windows of two.
        assert!(at_most_limit_per_window(&config(), &[(0, 1), (0, 1), (0, 1)]).is_ok());
    }

    #[test]
    fn permits_pinned_to_one_window_do_not_fit() {
        let pinned = [(0, 1), (1, 1), (1, 1), (1, 1)];
        assert!(at_most_limit_per_window(&config(), &pinned).is_err());
    }
}
