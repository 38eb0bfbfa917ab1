//! The targets read benchmarks by criterion's ids: each must still be defined by the
//! benchmarks, or a renamed one would silently become "not measured".

use std::fs;
use std::path::PathBuf;

use fixed_window_reports::targets::TARGETS;

/// The benchmarks' sources, all files together.
fn bench_sources() -> String {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../benches/benches");
    let mut text = String::new();
    for entry in fs::read_dir(&dir).expect("the benches directory") {
        let path = entry.expect("an entry").path();
        if path.extension().is_some_and(|e| e == "rs") {
            text.push_str(&fs::read_to_string(&path).expect("a source file"));
        }
    }
    text
}

#[test]
fn every_benchmark_a_target_reads_is_defined_by_the_benchmarks() {
    let sources = bench_sources();
    for target in &TARGETS {
        for (group, function, parameter) in [target.ours, target.peer] {
            assert!(
                sources.contains(&format!("benchmark_group(\"{group}\")")),
                "{}: no benchmark group `{group}` in benches/benches",
                target.what
            );
            assert!(
                sources.contains(&format!("\"{function}\"")),
                "{}: no benchmark `{function}` in benches/benches",
                target.what
            );
            if let Some(threads) = parameter {
                assert!(
                    sources.contains("THREADS") && sources.contains(threads),
                    "{}: no thread count {threads} in benches/benches",
                    target.what
                );
            }
        }
    }
}

#[test]
fn the_filter_of_the_targets_benchmarks_names_each_once() {
    let ids = fixed_window_reports::targets::bench_ids();
    assert!(ids.contains(&"contention-permit/mutex-system/2".to_owned()));
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), ids.len());
    let filter = fixed_window_reports::targets::filter(ids.iter().map(String::as_str));
    assert!(filter.starts_with("^(permit/ours\\-system|"), "{filter}");
    assert!(filter.ends_with(")$"), "{filter}");
}
