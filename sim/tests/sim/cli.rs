//! The command line: bad input gets a clear error and exit code 2, never a panic.

use std::process::{Command, Output};

use crate::simulator;

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The command ended with exit code 2 and an error naming `says`.
fn assert_refused(output: &Output, says: &str) {
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(output).contains(says), "{}", stderr(output));
}

#[test]
fn a_shard_beyond_the_count_is_refused() {
    let output = simulator(&["--shard", "3/2"]);
    assert_refused(&output, "expected I/N");
}

#[test]
fn a_sweep_of_no_scenarios_is_refused() {
    let output = simulator(&["--scenarios", "0"]);
    assert_refused(&output, "--scenarios");
}

#[test]
fn a_malformed_replay_id_is_refused() {
    let output = simulator(&["--replay", "12:9-1"]);
    assert_refused(&output, "invalid scenario id");
}

#[test]
fn an_unknown_planted_bug_is_refused() {
    let output = simulator(&["--planted", "typo"]);
    assert_refused(&output, "lost-update");
    // The flag's former name still reads the same value.
    let output = simulator(&["--broken", "typo"]);
    assert_refused(&output, "--planted: unknown planted bug `typo`");
}

#[test]
fn a_bad_seed_variable_is_refused() {
    let output = Command::new(env!("CARGO_BIN_EXE_fixed-window-sim"))
        .args(["--scenarios", "1"])
        .env("FIXED_WINDOW_SEED", "soon")
        .output()
        .unwrap();
    assert_refused(&output, "FIXED_WINDOW_SEED");
}

#[test]
fn a_replay_of_a_planted_limiter_fails_and_prints_its_replay_line() {
    let passing = simulator(&["--replay", "5"]);
    assert_eq!(passing.status.code(), Some(0), "{}", stderr(&passing));
    let dir = std::env::temp_dir().join(format!("fixed-window-sim-cli-{}", std::process::id()));
    let trace = dir.join("trace.jsonl");
    let failing = simulator(&[
        "--planted",
        "overflow-panic",
        "--replay",
        "9142165771736259302",
        "--trace",
        trace.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&failing.stdout);
    assert_eq!(failing.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("--replay 9142165771736259302"), "{stdout}");
    let written = std::fs::read_to_string(&trace).unwrap();
    assert!(written.starts_with(r#"{"callers":"#) || written.contains(r#""type":"scenario""#));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_small_sweep_writes_its_summary_and_trace() {
    let dir = std::env::temp_dir().join(format!("fixed-window-sim-sweep-{}", std::process::id()));
    let output = simulator(&[
        "--scenarios",
        "20",
        "--threads",
        "2",
        "--out-dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["scenarios"], 20);
    assert_eq!(summary["violations"]["window_limit"], 0);
    let trace = std::fs::read_to_string(dir.join("trace.jsonl")).unwrap();
    assert!(trace.lines().count() > 1);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn an_unknown_planted_bug_of_the_shared_limiter_is_refused() {
    let output = simulator(&["--limiter", "shared", "--planted", "typo"]);
    assert_refused(&output, "two-commands");
}

#[test]
fn a_shared_sweep_lists_its_faults_and_rules_and_a_planted_bug_fails_it() {
    let dir = std::env::temp_dir().join(format!("fixed-window-sim-shared-{}", std::process::id()));
    let output = simulator(&[
        "--limiter",
        "shared",
        "--scenarios",
        "40",
        "--check-determinism",
        "--out-dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    for line in ["failover", "client_crash", "double_count", "determinism"] {
        assert!(stdout.contains(line), "{line}: {stdout}");
    }
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["limiter"], "shared");
    assert_eq!(summary["scenarios"], 40);
    assert_eq!(summary["violations"]["window_limit"], 0);
    assert!(summary["faults"]["request_lost"].is_u64());
    assert_eq!(summary["sweep"]["limiter"], "shared");
    assert_eq!(summary["sweep"]["scenarios"], 40);
    // As the plain trace does, the sweep's trace opens with the sweep that wrote it: the
    // same provenance as the summary's.
    let trace = std::fs::read_to_string(dir.join("trace.jsonl")).unwrap();
    let mut lines = trace.lines();
    let sweep: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(sweep["type"], "sweep", "{trace}");
    for field in [
        "seed",
        "scenarios",
        "shard",
        "limiter",
        "command",
        "started",
    ] {
        assert_eq!(sweep[field], summary["sweep"][field], "{field}");
    }
    let scenario = lines.next().unwrap();
    assert!(
        scenario.starts_with(r#"{"type":"shared_scenario""#),
        "{trace}"
    );

    let planted = simulator(&[
        "--limiter",
        "shared",
        "--planted",
        "retry-lost-reply",
        "--scenarios",
        "300",
        "--out-dir",
        dir.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&planted.stdout);
    assert_eq!(planted.status.code(), Some(1), "{stdout}");
    let replay = stdout
        .lines()
        .find_map(|line| line.trim().strip_prefix("replay: cargo xtask simulate "))
        .unwrap_or_else(|| panic!("no replay line: {stdout}"));
    assert!(replay.starts_with("--limiter shared --planted retry-lost-reply --replay "));
    let id = replay.rsplit(' ').next().unwrap();
    let again = simulator(&[
        "--limiter",
        "shared",
        "--planted",
        "retry-lost-reply",
        "--replay",
        id,
    ]);
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stdout).contains("VIOLATION"));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_keyed_planted_bug_without_the_keyed_limiter_is_refused_and_named() {
    let output = simulator(&["--planted", "shared-count"]);
    assert_refused(&output, "--limiter keyed");
}

#[test]
fn an_unknown_keyed_planted_bug_is_refused() {
    let output = simulator(&["--limiter", "keyed", "--planted", "typo"]);
    assert_refused(&output, "never-reclaims");
}

#[test]
fn a_keyed_replay_of_a_planted_keyed_limiter_fails_and_prints_its_replay_line() {
    let args = ["--limiter", "keyed", "--planted", "never-reclaims"];
    let id = (0..200)
        .find(|seed| {
            let seed = seed.to_string();
            let output = simulator(&[&args[..], &["--replay", &seed]].concat());
            output.status.code() == Some(1)
        })
        .expect("a seed whose keyed scenario catches a limiter that never reclaims");
    let output = simulator(&[&args[..], &["--replay", &id.to_string()]].concat());
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("VIOLATION memory"), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "cargo xtask simulate --limiter keyed --planted never-reclaims --replay {id}"
        )),
        "{stdout}"
    );
}
