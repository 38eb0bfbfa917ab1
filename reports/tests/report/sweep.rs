//! The sweep's recommendation: a change of default only on clear evidence.

use fixed_window::Backoff;
use fixed_window_reports::{BenchResults, Measurement, Sweep};

/// A sweep where every (spins, threads, median, half-width of the interval) is given.
fn sweep(cells: &[(&str, &str, f64, f64)]) -> Sweep {
    let mut results = BenchResults::default();
    for &(spins, threads, ns, half) in cells {
        results.insert(Measurement {
            group: "backoff-sweep".into(),
            function: spins.into(),
            parameter: Some(threads.into()),
            median_ns: ns,
            interval_ns: (ns - half, ns + half),
            elements: Some(threads.parse().expect("a thread count")),
        });
    }
    Sweep::from_results(&results)
}

fn default_name() -> String {
    format!("spin-{}", Backoff::SPIN_LIMIT)
}

#[test]
fn a_setting_clearly_faster_everywhere_replaces_the_default() {
    let default = default_name();
    let sweep = sweep(&[
        (&default, "2", 100.0, 5.0),
        (&default, "4", 200.0, 5.0),
        ("spin-max", "2", 60.0, 5.0),
        ("spin-max", "4", 120.0, 5.0),
    ]);
    let recommendation = sweep.recommend().expect("a recommendation");
    assert_eq!(recommendation.best, None);
    assert_eq!(recommendation.faster_at, [2, 4]);
    assert!(recommendation.change_default());
}

#[test]
fn a_faster_median_within_the_noise_keeps_the_default() {
    let default = default_name();
    let sweep = sweep(&[
        (&default, "2", 100.0, 30.0),
        (&default, "4", 200.0, 60.0),
        ("spin-0", "2", 80.0, 30.0),
        ("spin-0", "4", 160.0, 60.0),
    ]);
    let recommendation = sweep.recommend().expect("a recommendation");
    assert_eq!(recommendation.best, Some(0));
    assert!(recommendation.faster_at.is_empty());
    assert!(!recommendation.change_default());
}

#[test]
fn a_setting_slower_somewhere_keeps_the_default() {
    let default = default_name();
    let sweep = sweep(&[
        (&default, "2", 100.0, 1.0),
        (&default, "4", 100.0, 1.0),
        (&default, "8", 100.0, 1.0),
        ("spin-1", "2", 10.0, 1.0),
        ("spin-1", "4", 10.0, 1.0),
        ("spin-1", "8", 150.0, 1.0),
    ]);
    let recommendation = sweep.recommend().expect("a recommendation");
    assert_eq!(recommendation.best, Some(1));
    assert_eq!(recommendation.slower_at, [8]);
    assert!(!recommendation.change_default());
}
