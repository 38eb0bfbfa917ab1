//! The same seed gives the same trace, bit for bit, whatever runs alongside.

use fixed_window_sim::{CallKind, Scenario, ScenarioId, Target, run};

#[test]
fn a_seed_replays_to_the_same_trace() {
    for seed in 0..40 {
        let scenario = Scenario::generate(&ScenarioId::seed(seed));
        let first = run(&scenario, Target::Real).unwrap();
        let second = run(&scenario, Target::Real).unwrap();
        assert_eq!(first.records, second.records, "seed {seed}");
        assert_eq!(first.trace_hash(), second.trace_hash());
        assert_eq!(first.stats, second.stats);
    }
}

#[test]
fn runs_with_blocking_callers_are_deterministic() {
    let with_blocking: Vec<Scenario> = (0..400)
        .map(|seed| Scenario::generate(&ScenarioId::seed(seed)))
        .filter(|s| s.callers.iter().any(|c| c.kind == CallKind::CallBlocking))
        .take(8)
        .collect();
    assert!(!with_blocking.is_empty());
    for scenario in &with_blocking {
        let hashes: Vec<u64> = (0..3)
            .map(|_| run(scenario, Target::Real).unwrap().trace_hash())
            .collect();
        assert!(
            hashes.windows(2).all(|pair| pair[0] == pair[1]),
            "{}",
            scenario.id
        );
    }
}

#[test]
fn different_seeds_draw_different_scenarios() {
    let a = Scenario::generate(&ScenarioId::seed(1));
    let b = Scenario::generate(&ScenarioId::seed(2));
    assert_ne!(a, b);
}

#[test]
fn shards_split_a_sweep_without_overlap_or_loss() {
    use fixed_window_sim::{Sweep, sweep};
    let whole = Sweep {
        seed: 77,
        scenarios: 30,
        shard: (0, 1),
        threads: 2,
        target: Target::Real,
        check_determinism: false,
    };
    let total = sweep(&whole, |_| {});
    let parts: Vec<_> = (0..3)
        .map(|i| {
            sweep(
                &Sweep {
                    shard: (i, 3),
                    ..whole
                },
                |_| {},
            )
        })
        .collect();
    assert_eq!(
        parts.iter().map(|p| p.scenarios).sum::<u64>(),
        total.scenarios
    );
    assert_eq!(parts.iter().map(|p| p.calls).sum::<u64>(), total.calls);
    assert_eq!(parts.iter().map(|p| p.permits).sum::<u64>(), total.permits);
}
