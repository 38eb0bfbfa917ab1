//! A sweep split over processes with `--shard I/N` and put back together by `merge` counts
//! exactly what the unsharded sweep counts; a merge holding a violation fails, and shards
//! that are not one sweep's are refused.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::{scratch, simulator};

/// Shards a sweep is split into.
const SHARDS: u64 = 4;

/// The fields that must come out of a merge exactly as the unsharded sweep writes them (the
/// rest are wall time and when the sweep started).
const EXACT: [&str; 13] = [
    "limiter",
    "seed",
    "sweep_scenarios",
    "scenarios",
    "calls",
    "permits",
    "rejections",
    "waits",
    "events",
    "simulated_ns",
    "checks",
    "coverage",
    "violations",
];

fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("the summary was written");
    serde_json::from_str(&text).expect("the summary is JSON")
}

/// Runs `sweep` whole and as `SHARDS` processes, merges the shards into `dir/merged`; the
/// unsharded summary, the merged one and the merge's output.
fn whole_and_merged(dir: &Path, sweep: &[&str]) -> (Value, Value, Output) {
    let whole = dir.join("whole");
    let output = simulator(&[sweep, &["--out-dir", whole.to_str().unwrap()]].concat());
    assert!(output.status.code().is_some(), "{output:?}");
    let mut files = Vec::new();
    for index in 0..SHARDS {
        let out = dir.join(format!("shard-{index}"));
        let shard = format!("{index}/{SHARDS}");
        let output = simulator(
            &[
                sweep,
                &["--shard", &shard, "--out-dir", out.to_str().unwrap()],
            ]
            .concat(),
        );
        assert!(output.status.code().is_some(), "{output:?}");
        files.push(out.join("summary.json").to_str().unwrap().to_owned());
    }
    let merged = dir.join("merged");
    let mut merge = vec!["merge", "--out-dir", merged.to_str().unwrap()];
    merge.extend(files.iter().map(String::as_str));
    let output = simulator(&merge);
    let whole = read(&whole.join("summary.json"));
    // A merged summary is named after its limiter, and its planted bug if any.
    let name = match whole["planted"].as_str() {
        Some(planted) => format!("{}-{planted}", whole["limiter"].as_str().unwrap()),
        None => whole["limiter"].as_str().unwrap().to_owned(),
    };
    let merged = read(&merged.join(format!("{name}.json")));
    (whole, merged, output)
}

/// The merged summary says what the unsharded one says, field for field, and lists the
/// same failing scenarios.
fn assert_same_counts(whole: &Value, merged: &Value) {
    for field in EXACT {
        assert_eq!(merged[field], whole[field], "{field}");
    }
    let indices = |summary: &Value| -> Vec<Value> {
        summary["failures"]
            .as_array()
            .unwrap()
            .iter()
            .map(|failure| failure["index"].clone())
            .collect()
    };
    assert_eq!(indices(merged), indices(whole));
    assert_eq!(
        merged["shard"],
        serde_json::json!({ "index": 0, "count": 1 })
    );
    assert_eq!(merged["merged_from"], SHARDS);
    // Every limiter's summary names its sweep the same way; merged, it names the whole sweep.
    for field in ["seed", "scenarios", "shard", "limiter", "command"] {
        assert_eq!(
            merged["sweep"][field], whole["sweep"][field],
            "sweep.{field}"
        );
    }
}

#[test]
fn four_shards_of_the_plain_sweep_merge_into_the_whole_sweep() {
    let dir = scratch("shards-plain");
    let (whole, merged, output) = whole_and_merged(&dir, &["--seed", "11", "--scenarios", "300"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_same_counts(&whole, &merged);
    assert!(whole["calls"].as_u64().unwrap() > 10_000);
    assert!(whole["checks"]["window_limit"].as_u64().unwrap() > 0);
}

#[test]
fn four_shards_of_the_shared_sweep_merge_into_the_whole_sweep() {
    let dir = scratch("shards-shared");
    let sweep = ["--limiter", "shared", "--seed", "11", "--scenarios", "200"];
    let (whole, merged, output) = whole_and_merged(&dir, &sweep);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_same_counts(&whole, &merged);
    assert_eq!(merged["faults"], whole["faults"]);
    assert!(whole["checks"]["double_count"].as_u64().unwrap() > 0);
}

#[test]
fn four_shards_of_the_keyed_sweep_merge_into_the_whole_sweep() {
    let dir = scratch("shards-keyed");
    let sweep = ["--limiter", "keyed", "--seed", "11", "--scenarios", "120"];
    let (whole, merged, output) = whole_and_merged(&dir, &sweep);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_same_counts(&whole, &merged);
    for field in ["drawn", "most_in_a_scenario", "populations", "held_checked"] {
        assert_eq!(merged["keys"][field], whole["keys"][field], "keys.{field}");
    }
}

#[test]
fn a_merge_holding_a_violation_fails_with_its_replay_lines() {
    let dir = scratch("shards-planted");
    let sweep = [
        "--planted",
        "lost-update",
        "--seed",
        "11",
        "--scenarios",
        "40",
    ];
    let (whole, merged, output) = whole_and_merged(&dir, &sweep);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_same_counts(&whole, &merged);
    assert!(merged["violations"]["window_limit"].as_u64().unwrap() > 0);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("replay: cargo xtask simulate --planted lost-update --replay"),
        "{stdout}"
    );
}

#[test]
fn shards_that_are_not_one_sweeps_are_refused() {
    let dir = scratch("shards-misfit");
    let mut files = Vec::new();
    for (seed, shard) in [("1", "0/2"), ("1", "1/2"), ("2", "1/2"), ("1", "0/3")] {
        let out = dir.join(format!("{seed}-{}", shard.replace('/', "-")));
        let output = simulator(&[
            "--seed",
            seed,
            "--scenarios",
            "4",
            "--shard",
            shard,
            "--out-dir",
            out.to_str().unwrap(),
        ]);
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        files.push(out.join("summary.json").to_str().unwrap().to_owned());
    }
    let out = dir.join("merged");
    let merge = |chosen: &[usize]| {
        let mut args = vec!["merge", "--out-dir", out.to_str().unwrap()];
        args.extend(chosen.iter().map(|&i| files[i].as_str()));
        simulator(&args)
    };
    for (chosen, says) in [
        (&[0, 2][..], "not shards of one sweep: seed 1 against 2"),
        (&[0, 0][..], "shard 0/2 given twice"),
        (&[0][..], "1 of 2 shards given; missing 1/2"),
        (&[0, 1, 3][..], "one sweep is split one way"),
    ] {
        let output = merge(chosen);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{chosen:?}: {stderr}");
        assert!(stderr.contains(says), "{chosen:?}: {stderr}");
    }
    assert!(merge(&[0, 1]).status.success());
    std::fs::write(dir.join("not.json"), "[1, 2]").unwrap();
    let output = simulator(&["merge", dir.join("not.json").to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("is not a JSON object"));
}
