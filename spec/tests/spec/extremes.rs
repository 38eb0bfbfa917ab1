//! Instants and periods at the ends of the timeline.

use core::time::Duration;

use fixed_window_spec::{Count, Decision, END_OF_TIME, Grid, NEVER, Rules, deadline};

#[test]
fn one_nanosecond_periods_number_every_instant() {
    let grid = Grid::checked(0, 1).expect("a positive period");
    assert_eq!(grid.index_of(END_OF_TIME), END_OF_TIME);
    assert_eq!(grid.end(END_OF_TIME - 1), Some(END_OF_TIME));
    assert_eq!(grid.end(END_OF_TIME), None);
}

#[test]
fn a_period_beyond_the_timeline_has_a_single_window() {
    let grid = Grid::checked(0, Duration::MAX.as_nanos()).expect("a positive period");
    assert_eq!(grid.index_of(END_OF_TIME), 0);
    assert_eq!(grid.end(0), None);
    // A period of exactly the timeline from the epoch does have a second window, at its end.
    let grid = Grid::checked(0, END_OF_TIME).expect("a positive period");
    assert_eq!(grid.end(0), Some(END_OF_TIME));
    assert_eq!(grid.index_of(END_OF_TIME), 1);
}

#[test]
fn the_last_window_rejects_with_the_longest_wait() {
    let rules = Rules::new(END_OF_TIME - 25, 1, 10, NEVER).expect("a valid configuration");
    let mut count = Count::new();
    let at = END_OF_TIME - 3;
    let first = rules.decide(&count, at, rules.deadline(at));
    assert_eq!(
        first,
        Decision::Permit {
            index: 2,
            remaining: 0
        }
    );
    count.apply(first);
    assert_eq!(
        rules.decide(&count, at, rules.deadline(at)),
        Decision::Reject { retry_after: NEVER }
    );
}

#[test]
fn deadlines_saturate_at_the_end_of_time() {
    assert_eq!(deadline(END_OF_TIME, 1), END_OF_TIME);
    assert_eq!(deadline(u128::MAX, u128::MAX), END_OF_TIME);
}

#[test]
fn a_reading_before_the_origin_counts_in_window_zero() {
    let rules = Rules::new(100, 1, 10, 0).expect("a valid configuration");
    let mut count = Count::new();
    count.apply(rules.decide(&count, 5, 5));
    assert_eq!(
        rules.decide(&count, 7, 7),
        Decision::Reject { retry_after: 103 }
    );
}
