//! The trace format: every line the simulator writes reads back as a [`TraceLine`] and
//! writes again to the same bytes.

use fixed_window_sim::{Scenario, ScenarioId, Target, TraceLine, run, write_trace};

#[test]
fn every_written_line_reads_back_and_writes_again_to_the_same_bytes() {
    let mut kinds = std::collections::BTreeSet::new();
    for seed in 0..60 {
        let scenario = Scenario::generate(&ScenarioId::seed(seed));
        let trace = run(&scenario, Target::Real).unwrap();
        let mut out = Vec::new();
        write_trace(&mut out, &scenario, &trace).unwrap();
        let text = String::from_utf8(out).unwrap();
        for line in text.lines() {
            let read: TraceLine = serde_json::from_str(line).unwrap_or_else(|error| {
                panic!("seed {seed}: {error} in {line}");
            });
            assert_ne!(read, TraceLine::Unknown, "seed {seed}: {line}");
            assert_eq!(serde_json::to_string(&read).unwrap(), line, "seed {seed}");
            kinds.insert(line.split('"').nth(3).unwrap_or_default().to_owned());
        }
    }
    // Every type of line was written at least once.
    let expected = [
        "call",
        "drained",
        "interrupt",
        "limit_set",
        "op",
        "peeked",
        "permitted",
        "rejected",
        "scenario",
        "sleep",
    ];
    assert_eq!(kinds.into_iter().collect::<Vec<_>>(), expected);
}

#[test]
fn a_line_of_an_unknown_type_reads_as_unknown_and_a_known_one_lacking_a_field_does_not_read() {
    let unknown: TraceLine = serde_json::from_str(r#"{"type":"tick","at":4}"#).unwrap();
    assert_eq!(unknown, TraceLine::Unknown);
    assert!(serde_json::to_string(&unknown).is_err());
    assert!(serde_json::from_str::<TraceLine>(r#"{"type":"permitted","at":1}"#).is_err());
}

#[test]
fn a_keyed_trace_gives_each_call_and_event_its_key_and_after_each_event_the_keys_held() {
    let mut held_lines = 0;
    for seed in 0..20 {
        let scenario = Target::Keyed.scenario(&ScenarioId::seed(seed));
        if scenario.callers.len() > 5_000 {
            continue;
        }
        let trace = run(&scenario, Target::Keyed).unwrap();
        let mut out = Vec::new();
        write_trace(&mut out, &scenario, &trace).unwrap();
        let text = String::from_utf8(out).unwrap();
        for line in text.lines() {
            let read: TraceLine = serde_json::from_str(line).unwrap();
            assert_eq!(serde_json::to_string(&read).unwrap(), line, "seed {seed}");
            let keyed = match read {
                TraceLine::Scenario {
                    population, keys, ..
                } => population.is_some() && keys.is_some(),
                TraceLine::Permitted { key, .. }
                | TraceLine::Rejected { key, .. }
                | TraceLine::Call { key, .. } => key.is_some(),
                TraceLine::Held { caller, .. } => {
                    held_lines += 1;
                    caller.is_some()
                }
                _ => true,
            };
            assert!(keyed, "seed {seed}: {line}");
        }
    }
    assert!(held_lines > 0);
}

#[test]
fn a_plain_trace_has_no_keys() {
    let scenario = Scenario::generate(&ScenarioId::seed(1));
    let mut out = Vec::new();
    write_trace(&mut out, &scenario, &run(&scenario, Target::Real).unwrap()).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(!text.contains("\"key\""), "{text}");
    assert!(!text.contains("\"held\""));
    assert!(!text.contains("\"population\""));
}
