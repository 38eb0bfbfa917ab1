//! Core on real threads and the system clock: a history of a thousand operations must be
//! linearizable and keep the invariants.

use fixed_window_models::{Outcome, Target, invariants, linearizability, record_on_wall_clock};

#[test]
fn core_on_real_threads_is_linearizable() {
    let history = record_on_wall_clock(Target::Core, 4, 250);
    assert_eq!(history.records.len(), 1000);
    let rejected = history
        .records
        .iter()
        .filter(|record| matches!(record.outcome, Outcome::Rejected { .. }))
        .count();
    // The run is built to fill windows: a history without rejections would test little.
    assert!(rejected > 0, "no call was rejected");
    assert_eq!(invariants::check(&history), Ok(()));
    assert_eq!(linearizability::check(&history), Ok(()));
}
