//! A grid through any boundary, before the timeline's start or after it, numbered from any
//! reading: every instant from the reading on lies in the window `[b, b + period)` of the
//! boundary `b` at or before it, worked out here in signed arithmetic from the definition.

use core::num::NonZeroU128;

use fixed_window_spec::Grid;

/// The window holding `t` on the grid through `boundary` (signed), by the definition.
fn window(boundary: i128, period: i128, t: i128) -> (i128, i128) {
    let start = boundary + (t - boundary).div_euclid(period) * period;
    (start, start + period)
}

#[test]
fn every_reading_lies_in_the_window_of_the_boundary_before_it() {
    for period in [1u32, 2, 3, 7, 10] {
        let p = NonZeroU128::new(period.into()).unwrap();
        for boundary in -25i128..25 {
            for reading in 0u32..25 {
                let grid = if boundary < 0 {
                    Grid::through(boundary.unsigned_abs(), true, p, reading.into())
                } else {
                    Grid::through(boundary.unsigned_abs(), false, p, reading.into())
                };
                for t in reading..40 {
                    let (start, end) = window(boundary, period.into(), t.into());
                    let index = grid.index_of(t.into());
                    let shown = (grid.start(index), grid.end(index));
                    let expected = (
                        u128::try_from(start.max(0)).unwrap(),
                        Some(u128::try_from(end).unwrap()),
                    );
                    assert_eq!(shown, expected, "{boundary} {period} {reading} {t}");
                    assert_eq!(
                        grid.on_boundary(t.into()),
                        i128::from(t) == start,
                        "{boundary} {period} {reading} {t}"
                    );
                }
                // The window holding the reading is window 0.
                assert_eq!(grid.index_of(reading.into()), 0);
            }
        }
    }
}

#[test]
fn unix_time_boundaries_before_a_young_timeline_end_the_first_window_on_the_grid() {
    let s = 1_000_000_000u128;
    let second = NonZeroU128::new(s).unwrap();
    // Built at reading 0.1 s, 0.507 s into a second of Unix time: the first window ends at
    // reading 0.593 s, 0.493 s later.
    let grid = Grid::unix(s / 10, second, 1_800_000_000 * s + 507 * s / 1_000);
    assert_eq!(grid.end(0), Some(593 * s / 1_000));
    // Processes of any age agree: each boundary is a whole second of Unix time.
    for age in [0, 1, 506_999_999, 507_000_000, 507_000_001, 5_000_000_000] {
        let unix = 1_800_000_000 * s + 507 * s / 1_000;
        let grid = Grid::unix(age, second, unix);
        let end = grid.end(0).unwrap();
        assert_eq!((unix - age + end) % s, 0, "age {age}");
        assert_eq!(end - age, 493 * s / 1_000, "age {age}");
    }
}
