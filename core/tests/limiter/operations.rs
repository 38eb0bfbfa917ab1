//! The operation runs only with a permit, exactly once, and its outcome comes back as it is.

use core::time::Duration;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::support::{grant_count, limiter};

#[test]
fn the_operation_runs_exactly_once_per_permit() {
    let (limiter, _) = limiter(3, 100, 0);
    let runs = AtomicU32::new(0);
    let outcomes: Vec<bool> = (0..5)
        .map(|_| limiter.call(|| runs.fetch_add(1, Ordering::SeqCst)).is_ok())
        .collect();
    assert_eq!(outcomes, [true, true, true, false, false]);
    assert_eq!(runs.load(Ordering::SeqCst), 3);
}

#[test]
fn an_operation_error_is_returned_as_it_is_and_its_permit_stays_spent() {
    let (limiter, _) = limiter(1, 100, 0);
    let outcome = limiter.call(|| Err::<(), _>("backend down"));
    assert_eq!(outcome, Ok(Err("backend down")));
    assert_eq!(grant_count(&limiter, 1), 0);
}

#[test]
fn an_operation_panic_propagates_unchanged_and_its_permit_stays_spent() {
    let (limiter, clock) = limiter(1, 100, 0);
    let panic = catch_unwind(AssertUnwindSafe(|| {
        limiter.call(|| panic!("operation failure"))
    }))
    .unwrap_err();
    assert_eq!(panic.downcast_ref::<&str>(), Some(&"operation failure"));
    assert_eq!(grant_count(&limiter, 1), 0);
    clock.advance(Duration::from_nanos(100));
    assert_eq!(grant_count(&limiter, 2), 1);
}
