//! Live changes of one key's limit in the shared simulator: drawn, made through the product's
//! protocol, read back with the configuration, and judged; the oracle's check of the live
//! limits a process reads fails on a trace changed as a script storing them wrongly would.

use fixed_window_sim::shared::{SharedRecord, SharedScenario, check_shared, run_shared};
use fixed_window_sim::{Invariant, ScenarioId};

/// A change of a live limits' text read back: the text the trace records instead.
type Edit = fn(&str) -> Option<Box<str>>;

#[test]
fn live_limits_read_back_are_judged_and_a_wrong_text_is_caught() {
    // The first scenario whose processes read a live limit back after a change.
    let (scenario, run) = (0..2_000)
        .map(|seed| SharedScenario::generate(&ScenarioId::seed(seed)))
        .filter(|scenario| !scenario.key_live.is_empty())
        .map(|scenario| {
            let run = run_shared(&scenario, None);
            (scenario, run)
        })
        .find(|(_, run)| {
            run.records.iter().any(
                |record| matches!(record, SharedRecord::LiveLimitsRead { text: Some(text), .. } if !text.is_empty()),
            )
        })
        .expect("some scenario of the first 2,000 reads a live limit back");
    assert!(check_shared(&scenario, &run).is_empty());
    // Each text read back, with one more entry (a key the script should have replaced),
    // emptied, or absent (the live limits lost).
    let edits: [Edit; 3] = [
        |text| Some(format!("{text}1 1:x").into()),
        |_| Some("".into()),
        |_| None,
    ];
    for change in edits {
        let mut changed = run.clone();
        for record in &mut changed.records {
            if let SharedRecord::LiveLimitsRead { text, .. } = record
                && let Some(read) = text.as_deref().filter(|read| !read.is_empty())
            {
                *text = change(read);
            }
        }
        assert!(
            check_shared(&scenario, &changed)
                .iter()
                .any(|v| v.invariant == Invariant::Configuration
                    && (v.detail.contains("read the live limits")
                        || v.detail.contains("read no live limits"))),
            "a changed text went unnoticed"
        );
    }
}
