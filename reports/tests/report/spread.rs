//! The median over runs and its spread, and ratios paired within each run.

use fixed_window_reports::targets::{self, Verdict};
use fixed_window_reports::{Mode, Spread};

use crate::fixtures;

#[test]
fn the_median_of_an_odd_count_is_the_middle_figure() {
    let spread = Spread::of(&[3.0, 1.0, 2.0]).expect("a spread");
    assert_eq!(
        spread,
        Spread {
            median: 2.0,
            min: 1.0,
            max: 3.0,
            runs: 3
        }
    );
}

#[test]
fn the_median_of_an_even_count_is_the_mean_of_the_two_middle_figures() {
    let spread = Spread::of(&[4.0, 1.0, 3.0, 2.0]).expect("a spread");
    assert_eq!(
        spread,
        Spread {
            median: 2.5,
            min: 1.0,
            max: 4.0,
            runs: 4
        }
    );
}

#[test]
fn figures_that_are_not_numbers_are_left_out_and_none_gives_no_spread() {
    let spread = Spread::of(&[f64::NAN, 5.0, f64::INFINITY]).expect("a spread");
    assert_eq!(
        spread,
        Spread {
            median: 5.0,
            min: 5.0,
            max: 5.0,
            runs: 1
        }
    );
    assert_eq!(Spread::of(&[]), None);
    assert_eq!(Spread::of(&[f64::NAN]), None);
}

#[test]
fn each_ratio_pairs_ours_and_the_peers_figure_of_the_same_run() {
    // Ratios 2.0, 0.5, 1.5: their median is 1.5. Pairing medians across runs (20 / 20) would
    // say 1.0, a figure no run measured.
    let runs = fixtures::permit_runs(Mode::Full, &[(10.0, 5.0), (20.0, 40.0), (30.0, 20.0)]);
    let permit = &targets::check(&runs)[0];
    assert_eq!(permit.ratios(), [2.0, 0.5, 1.5]);
    let ratio = permit.ratio().expect("a ratio");
    assert_eq!(
        (ratio.median, ratio.min, ratio.max, ratio.runs),
        (1.5, 0.5, 2.0, 3)
    );
    assert_eq!(permit.verdict, Verdict::Missed { by: 0.5 });
}

#[test]
fn a_run_missing_one_side_adds_no_ratio() {
    let mut runs = fixtures::permit_runs(Mode::Full, &[(9.0, 10.0), (9.0, 10.0), (9.0, 10.0)]);
    runs.runs[2].results = fixed_window_reports::BenchResults::default();
    let permit = &targets::check(&runs)[0];
    assert_eq!(permit.ratios().len(), 2);
    assert_eq!(permit.verdict, Verdict::TooFewRuns { runs: 2 });
}

#[test]
fn the_median_decides_and_the_runs_above_the_target_are_counted() {
    let runs = fixtures::permit_runs(Mode::Full, &[(9.0, 10.0), (9.5, 10.0), (11.0, 10.0)]);
    let permit = &targets::check(&runs)[0];
    assert_eq!(permit.verdict, Verdict::Met { runs_over: 1 });
    assert_eq!(permit.met(), Some(true));
}
