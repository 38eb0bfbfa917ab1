//! The trace's digests of replies, decisions, outcomes and events.

use fixed_window::{RateLimiterError, RateLimiterEvent};
use fixed_window_redis::{Config, Decision, SharedError, SharedEvent};

use crate::shared::engine::Reply;
use crate::shared::record::{DecisionDigest, EventDigest, ReplyDigest, SharedOutcome};

pub(super) fn digest(reply: &Reply) -> ReplyDigest {
    match reply {
        Reply::Error(message) => ReplyDigest::Error {
            noscript: message.starts_with("NOSCRIPT"),
        },
        // A `limits` call's live limits' text is left out: the oracle follows them itself.
        other => match other.integers_and_text() {
            Ok((values, _)) => digest_values(&values),
            Err(_) => ReplyDigest::Other,
        },
    }
}

pub(super) fn digest_values(values: &[i64]) -> ReplyDigest {
    match *values {
        [a, b, c, d] => ReplyDigest::Four {
            values: [a, b, c, d],
        },
        [a, b] => ReplyDigest::Two { values: [a, b] },
        _ => ReplyDigest::Other,
    }
}

pub(super) fn decision_digest(decision: &Decision) -> DecisionDigest {
    match decision {
        Decision::Permitted { remaining, .. } => DecisionDigest::Permitted {
            remaining: *remaining,
        },
        Decision::Wait { until } => DecisionDigest::Wait {
            until: u128::from(until.as_nanos()),
        },
        Decision::Rejected { retry_after, local } => DecisionDigest::Rejected {
            retry_after: retry_after.as_nanos(),
            local: *local,
        },
        Decision::FailedOpen(cause) => DecisionDigest::FailedOpen {
            may_have_counted: cause.may_have_counted(),
        },
        Decision::Unavailable(cause) => DecisionDigest::Unavailable {
            may_have_counted: cause.may_have_counted(),
        },
        Decision::Conflict(_) => DecisionDigest::Conflict,
        Decision::LimitChanged { limit } => DecisionDigest::LimitChanged { limit: *limit },
        Decision::TooMany { limit, .. } => DecisionDigest::TooMany { limit: *limit },
    }
}

/// The outcome of `result`, by a process configured with `config` whose limit in force is
/// `limit` (what its errors report).
pub(super) fn outcome(
    result: &Result<fixed_window_redis::SharedPermit, SharedError>,
    config: &Config,
    limit_in_force: u32,
) -> SharedOutcome {
    match result {
        Ok(permit) => SharedOutcome::Permitted {
            remaining: if permit.failed_open().is_some() {
                None
            } else {
                permit.remaining()
            },
        },
        Err(SharedError::Limited(RateLimiterError::Rejected {
            name,
            limit,
            period,
            max_wait,
            retry_after,
        })) => SharedOutcome::Rejected {
            retry_after: retry_after.as_nanos(),
            fields_match: *name == config.name()
                && *limit == limit_in_force
                && *period == config.period()
                && *max_wait == config.max_wait(),
        },
        // A weight a lowering passed while the call waited, refused at its next attempt.
        Err(SharedError::Limited(RateLimiterError::TooMany { name, limit, .. }))
            if *name == config.name() && *limit == limit_in_force =>
        {
            SharedOutcome::TooMany
        }
        Err(SharedError::Unavailable { .. }) => SharedOutcome::Unavailable,
        Err(SharedError::Conflict(_)) => SharedOutcome::Conflict,
        Err(_) => SharedOutcome::OtherError,
    }
}

pub(super) fn event_digest(event: Option<&SharedEvent>) -> EventDigest {
    match event {
        Some(SharedEvent::Limiter(RateLimiterEvent::Permitted { remaining, .. })) => {
            EventDigest::Permitted {
                remaining: *remaining,
            }
        }
        Some(SharedEvent::Limiter(RateLimiterEvent::Rejected { retry_after, .. })) => {
            EventDigest::Rejected {
                retry_after: retry_after.as_nanos(),
            }
        }
        Some(SharedEvent::Unavailable { failed_open, .. }) => EventDigest::Unavailable {
            failed_open: *failed_open,
        },
        // None, or an event kind this simulator does not know.
        _ => EventDigest::None,
    }
}
