//! How a call ends when the limiter does not permit it: the outcome its error or its panic
//! makes, as the trace records it.

use std::any::Any;

use fixed_window::RateLimiterError;

use crate::record::Outcome;
use crate::scenario::Config;
use crate::simulation::LIMITER_NAME;
use crate::subject::SimulatedPanic;

/// How a call of `weight` permits that failed with `error` ended.
pub(super) fn failure(error: &RateLimiterError, config: &Config, weight: u32) -> Outcome {
    match *error {
        RateLimiterError::Rejected {
            name,
            limit,
            period,
            max_wait,
            retry_after,
        } => Outcome::Rejected {
            retry_after: retry_after.as_nanos(),
            fields_match: name == LIMITER_NAME
                && period == config.period
                && max_wait == config.max_wait,
            limit,
        },
        RateLimiterError::TooMany {
            name,
            limit,
            requested,
        } => Outcome::TooMany {
            fields_match: name == LIMITER_NAME && requested == weight,
            limit,
        },
        RateLimiterError::Interrupted { .. } => Outcome::Interrupted,
        // A new kind of failure the oracle does not know: report it as an escaped panic so it
        // is looked at.
        _ => Outcome::Panicked { simulated: false },
    }
}

/// A panic's outcome, and its message unless it was a [`SimulatedPanic`].
pub(super) fn describe(payload: &(dyn Any + Send)) -> (Outcome, Option<String>) {
    let simulated = payload.is::<SimulatedPanic>();
    let message = (!simulated).then(|| {
        payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic whose payload is not a string".to_owned())
    });
    (Outcome::Panicked { simulated }, message)
}
