//! How long the linearizability checker takes on a history of 1,000 operations recorded from
//! four real threads on core (and the invariants, for comparison).

#[cfg(not(any(fixed_window_loom, fixed_window_shuttle)))]
fn checkers(c: &mut criterion::Criterion) {
    use fixed_window_models::{Target, invariants, linearizability, record_on_wall_clock};

    let history = record_on_wall_clock(Target::Core, 4, 250);
    let mut group = c.benchmark_group("check_1000_ops");
    group.bench_function("linearizability", |b| {
        b.iter(|| linearizability::check(&history));
    });
    group.bench_function("invariants", |b| b.iter(|| invariants::check(&history)));
    group.finish();
}

#[cfg(not(any(fixed_window_loom, fixed_window_shuttle)))]
criterion::criterion_group!(benches, checkers);
#[cfg(not(any(fixed_window_loom, fixed_window_shuttle)))]
criterion::criterion_main!(benches);

/// The checkers are benchmarked in the normal build only.
#[cfg(any(fixed_window_loom, fixed_window_shuttle))]
fn main() {}
