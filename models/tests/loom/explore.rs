//! Running a model under loom with a preemption bound.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The preemption bound when `LOOM_MAX_PREEMPTIONS` is not set.
///
/// Why 3: every race these models target needs at most two preemptions to show. A lost claim
/// (load-then-store, check-then-increment) needs one caller preempted between its read and its
/// write, and the planted-bug tests fail at bound 0 and pass from bound 1 on; the window
/// advance racing a claim needs the claimer preempted between its clock reading and its
/// compare-and-set, and once more to let the mover run. Bound 3 leaves one preemption of
/// margin at about 15,000 executions for each three-thread model (about a second in release);
/// bound 4 takes them to about 112,000 (about nine seconds each) for no race these scripts can
/// express. Crossbeam bounds its loom CI the same way, for the same reason: the state space
/// grows exponentially with the bound. Deeper runs set `LOOM_MAX_PREEMPTIONS`.
pub const DEFAULT_PREEMPTION_BOUND: usize = 3;

/// Explores `test` exhaustively within the preemption bound; returns the number of executions.
pub fn model(test: impl Fn() + Sync + Send + 'static) -> usize {
    let executions = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&executions);
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(DEFAULT_PREEMPTION_BOUND);
    }
    builder.check(move || {
        counter.fetch_add(1, Ordering::Relaxed);
        test();
    });
    executions.load(Ordering::Relaxed)
}
