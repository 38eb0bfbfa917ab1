//! What the fault tests drive: the production limiter, or a client with a planted bug, and what
//! a caller observes of one attempt.

use fixed_window::RateLimiterError;
use fixed_window_models::shared::Reply;
use fixed_window_redis::{Decision, SharedError, SharedPermit, SharedRateLimiter};

use crate::planted::PlantedClient;

/// What one caller observed of one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Observed {
    /// A counted permit.
    Permitted { remaining: u32 },
    /// A rejection; `retry_after` in microseconds.
    Rejected { retry_after: u64 },
    /// The server could not decide: fail closed.
    Unavailable { may_have_counted: bool },
    /// The server could not decide: fail open, an uncounted permit.
    FailedOpen { may_have_counted: bool },
    /// The caller died before it learned the outcome.
    Crashed,
}

impl Observed {
    /// From the production limiter's answer.
    pub fn from_result(result: &Result<SharedPermit, SharedError>) -> Result<Observed, String> {
        Ok(match result {
            Ok(permit) => match (permit.failed_open(), permit.remaining()) {
                (Some(cause), _) => Observed::FailedOpen {
                    may_have_counted: cause.may_have_counted(),
                },
                (None, Some(remaining)) => Observed::Permitted { remaining },
                (None, None) => {
                    return Err(format!(
                        "a permit neither counted nor failed open: {permit:?}"
                    ));
                }
            },
            Err(SharedError::Limited(RateLimiterError::Rejected { retry_after, .. })) => {
                Observed::Rejected {
                    retry_after: u64::try_from(retry_after.as_micros()).unwrap_or(u64::MAX),
                }
            }
            Err(SharedError::Unavailable { cause, .. }) => Observed::Unavailable {
                may_have_counted: cause.may_have_counted(),
            },
            Err(other) => return Err(format!("an error no fault explains: {other}")),
        })
    }

    /// From a planted client's decision.
    pub fn from_decision(decision: &Decision) -> Observed {
        match decision {
            Decision::Permitted { remaining, .. } => Observed::Permitted {
                remaining: *remaining,
            },
            Decision::Rejected { retry_after, .. } => Observed::Rejected {
                retry_after: u64::try_from(retry_after.as_micros()).unwrap_or(u64::MAX),
            },
            Decision::FailedOpen(cause) => Observed::FailedOpen {
                may_have_counted: cause.may_have_counted(),
            },
            Decision::Unavailable(cause) => Observed::Unavailable {
                may_have_counted: cause.may_have_counted(),
            },
            // A planted client never waits and asks for one permit; a conflict or a changed
            // limit is nothing the planted bugs provoke.
            Decision::Wait { .. }
            | Decision::Conflict(_)
            | Decision::LimitChanged { .. }
            | Decision::TooMany { .. } => Observed::Unavailable {
                may_have_counted: true,
            },
        }
    }

    /// The history's reply: `exact` says whether a rejection's `retry_after` is the server's
    /// (no local memory of full windows).
    pub fn reply(self, exact: bool) -> Reply {
        match self {
            Observed::Permitted { remaining } => Reply::Permitted { remaining },
            Observed::Rejected { retry_after } => Reply::Rejected {
                retry_after: exact.then_some(retry_after),
            },
            Observed::Unavailable { may_have_counted }
            | Observed::FailedOpen { may_have_counted } => {
                if may_have_counted {
                    Reply::Lost
                } else {
                    Reply::NotCounted
                }
            }
            Observed::Crashed => Reply::Lost,
        }
    }
}

/// One replica: the production limiter, or a planted client (boxed: it holds its protocol
/// inline, the limiter behind a pointer).
pub enum Replica {
    Limiter(SharedRateLimiter),
    Planted(Box<PlantedClient>),
}

impl Replica {
    /// The shared origin it registered or adopted.
    pub fn origin(&self) -> Option<u64> {
        match self {
            Replica::Limiter(limiter) => limiter.origin(),
            Replica::Planted(planted) => Some(planted.origin()),
        }
    }

    /// One attempt on `key`; `crash` makes the caller die before it learns the outcome.
    pub async fn attempt(&self, key: &str, crash: bool) -> Result<Observed, String> {
        match self {
            Replica::Limiter(limiter) => {
                let result = limiter.try_acquire_async(key).await;
                if crash {
                    return Ok(Observed::Crashed);
                }
                Observed::from_result(&result)
            }
            Replica::Planted(planted) => Ok(planted.attempt(key, crash).await),
        }
    }
}
