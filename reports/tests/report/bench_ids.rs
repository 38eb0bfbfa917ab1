//! The targets read benchmarks by criterion's ids, and counted figures by the names the
//! benches write: each must still be defined by the benchmarks, or a renamed one would silently
//! become "not measured".

use std::fs;
use std::path::{Path, PathBuf};

use fixed_window_reports::targets::{BenchId, Measure, TARGETS, bench_ids};
use fixed_window_reports::{KEYED_MEMORY, LIVE_WINDOW, REDIS_LATENCY};

/// `benches/`.
fn benches() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../benches")
}

/// Every `.rs` file directly in `dir`, all together.
fn sources_in(dir: &Path, keep: impl Fn(&str) -> bool) -> String {
    let mut text = String::new();
    for entry in fs::read_dir(dir).expect("a directory of sources") {
        let path = entry.expect("an entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.extension().is_some_and(|e| e == "rs") && keep(name) {
            text.push_str(&fs::read_to_string(&path).expect("a source file"));
        }
    }
    text
}

/// Each bench binary's sources: `keyed` (with `keyed/`), `redis`, `redis_cluster`, and
/// `limiters` (every other file of `benches/benches`, its modules).
fn binaries() -> [(&'static str, String); 4] {
    let dir = benches().join("benches");
    let own = ["keyed.rs", "redis.rs", "redis_cluster.rs"];
    let keyed =
        sources_in(&dir, |name| name == "keyed.rs") + &sources_in(&dir.join("keyed"), |_| true);
    let redis = sources_in(&dir, |name| name == "redis.rs");
    let cluster = sources_in(&dir, |name| name == "redis_cluster.rs");
    let limiters = sources_in(&dir, |name| !own.contains(&name));
    [
        ("keyed", keyed),
        ("redis", redis),
        ("redis_cluster", cluster),
        ("limiters", limiters),
    ]
}

/// Whether `sources` can name an id segment `part`: as a string literal, or as a number (with
/// a suffix such as `-keys` or `-tasks` written after a format placeholder) that one of the
/// sources' array literals holds.
fn produces(sources: &str, part: &str) -> bool {
    if sources.contains(&format!("\"{part}\"")) {
        return true;
    }
    let digits = part
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(part.len());
    let (number, suffix) = part.split_at(digits);
    if number.is_empty() || !(suffix.is_empty() || sources.contains(&format!("}}{suffix}\""))) {
        return false;
    }
    sources.split('[').skip(1).any(|rest| {
        rest.split(']').next().is_some_and(|items| {
            items
                .split(',')
                .any(|item| item.trim().replace('_', "") == number)
        })
    })
}

/// The binary whose sources define `id`'s group, after checking each part of `id` is named
/// there.
fn defined_by(id: BenchId, what: &str) -> &'static str {
    let (group, function, parameter) = id;
    let defining: Vec<(&'static str, String)> = binaries()
        .into_iter()
        .filter(|(_, sources)| sources.contains(&format!("benchmark_group(\"{group}\")")))
        .collect();
    let [(binary, sources)] = defining.as_slice() else {
        panic!(
            "{what}: group `{group}` is defined by {} bench binaries, not one",
            defining.len()
        );
    };
    for part in function.split('/').chain(parameter) {
        assert!(
            produces(sources, part),
            "{what}: `{part}` of {group}/{function} is not named by the {binary} bench"
        );
    }
    binary
}

#[test]
fn every_benchmark_a_target_reads_is_defined_by_the_benchmarks() {
    for target in &TARGETS {
        for id in target.measure.bench_ids() {
            defined_by(id, target.what);
        }
    }
}

#[test]
fn the_keyed_and_shared_targets_are_found_in_their_own_bench_binaries() {
    let binary = |what: &str| {
        let target = TARGETS
            .iter()
            .find(|t| t.what.starts_with(what))
            .expect(what);
        let ids = target.measure.bench_ids();
        defined_by(ids[0], target.what)
    };
    assert_eq!(binary("keyed: permit"), "keyed");
    assert_eq!(binary("keyed: 8 threads"), "keyed");
    assert_eq!(binary("shared: 16 tasks"), "redis");
    assert_eq!(binary("shared: p99"), "redis");
    assert_eq!(binary("shared on a Redis Cluster"), "redis_cluster");
    assert_eq!(binary("permit path, default clock"), "limiters");
}

#[test]
fn a_renamed_benchmark_part_is_not_taken_for_a_defined_one() {
    let [(_, keyed), (_, redis), _, _] = binaries();
    assert!(produces(&keyed, "ours-system"));
    assert!(produces(&keyed, "1000-keys"));
    assert!(produces(&keyed, "1000"));
    assert!(!produces(&keyed, "1001-keys"));
    assert!(!produces(&keyed, "1000-tasks"));
    assert!(produces(&redis, "16-tasks"));
    assert!(produces(&redis, "1-task"));
    assert!(!produces(&redis, "32-tasks"));
    assert!(!produces(&redis, "ours-system"));
}

#[test]
fn the_counted_figures_the_targets_read_are_written_under_those_names() {
    let redis = fs::read_to_string(benches().join("benches/redis.rs")).expect("the redis bench");
    for field in [
        "\"p50_ns\"",
        "\"p99_ns\"",
        "\"commands\"",
        "\"counted_attempts\"",
        REDIS_LATENCY,
    ] {
        assert!(redis.contains(field), "the redis bench writes no {field}");
    }
    let memory =
        fs::read_to_string(benches().join("examples/keyed_memory.rs")).expect("the example");
    for name in ["\"ours\"", &format!("\"{LIVE_WINDOW}\""), KEYED_MEMORY] {
        assert!(memory.contains(name), "keyed_memory writes no {name}");
    }
    assert!(
        TARGETS
            .iter()
            .any(|t| t.measure == Measure::MemoryAfterChurn)
    );
}

#[test]
fn the_filter_of_the_targets_benchmarks_names_each_once() {
    let ids = bench_ids();
    assert!(ids.contains(&"contention-permit/mutex-system/2".to_owned()));
    assert!(ids.contains(&"keyed-contention-permit/ours-system/1000-keys/8".to_owned()));
    assert!(ids.contains(&"redis-permit/shared/1-task".to_owned()));
    assert!(ids.contains(&"redis-rejection/round-trip/1-task".to_owned()));
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), ids.len());
    let filter = fixed_window_reports::targets::filter(ids.iter().map(String::as_str));
    assert!(filter.starts_with("^(permit/ours\\-system|"), "{filter}");
    assert!(filter.ends_with(")$"), "{filter}");
}
