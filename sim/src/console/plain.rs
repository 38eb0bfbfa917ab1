//! The plain and keyed limiters on the command line: their summary's table and counters,
//! their replay, and the scenario whose trace the report charts.

use std::path::Path;

use fixed_window_sim::shared::SharedCut;
use fixed_window_sim::{
    ClockKind, Provenance, Run, Scenario, ScenarioId, Summary, Sweep, Target, run, verdict,
    write_trace,
};
use serde_json::{Map, Value, json};

use crate::console::{Console, per_second, write_trace_file};

impl Console for Target {
    /// `target/sim` for the plain limiter, where the report reads; `target/sim/keyed` for
    /// the keyed one.
    fn out_dir(self) -> &'static str {
        if self.is_keyed() { "sim/keyed" } else { "sim" }
    }

    fn print_summary(self, summary: &Summary, wall: f64, threads: usize) {
        let years = summary.simulated_ns / 1_000_000_000 / 3600 / 24 / 365;
        println!("fixed-window simulation, seed {}", summary.seed);
        println!("  scenarios          {:>16}", summary.scenarios);
        println!("  simulated calls    {:>16}", summary.calls);
        println!("  permits            {:>16}", summary.permits);
        println!("  rejections         {:>16}", summary.rejections);
        println!("  waits              {:>16}", summary.waits);
        println!("  interrupts         {:>16}", summary.counts.interrupts);
        println!("  events             {:>16}", summary.events);
        println!(
            "  simulated time     {:>16} ns (~{years} years)",
            summary.simulated_ns
        );
        println!("  wall time          {wall:>16.2} s on {threads} threads");
        println!(
            "  calls per second   {:>16.0}",
            per_second(summary.calls, wall)
        );
        let counts = &summary.counts;
        if let Some(memory) = &counts.memory {
            println!("  keys drawn         {:>16}", counts.keys);
            println!("  most in a scenario {:>16}", counts.most_keys);
            for (population, count) in &counts.populations {
                println!("  {population:<8} scenarios {count:>16}");
            }
            println!("  keys held, checked {:>16} times", memory.checked);
            println!(
                "  most keys held     {:>16} (bound then {})",
                memory.most_held, memory.bound_then
            );
            println!("  largest bound      {:>16}", memory.most_bound);
            println!("  held at the bound  {:>16} times", memory.at_bound);
        }
        println!("  coverage (scenarios exercising each feature)");
        for (name, count) in summary.coverage.counts() {
            println!("    {name:<26} {count:>10}");
        }
        println!("  violations (scenarios breaking each rule)");
        for (name, count) in &summary.violations {
            println!("    {name:<20} {count:>8}");
        }
    }

    fn summary_fields(self, summary: &Summary) -> Map<String, Value> {
        let counts = &summary.counts;
        let mut object = Map::new();
        object.insert("interrupts".to_owned(), json!(counts.interrupts));
        if let Some(memory) = &counts.memory {
            object.insert(
                "keys".to_owned(),
                json!({
                    "drawn": counts.keys,
                    "most_in_a_scenario": counts.most_keys,
                    "populations": counts.populations,
                    "held_checked": memory.checked,
                    "most_held": memory.most_held,
                    "bound_then": memory.bound_then,
                    "largest_bound": memory.most_bound,
                    "held_at_bound": memory.at_bound,
                }),
            );
        }
        object
    }

    fn write_representative(
        self,
        config: &Sweep,
        _summary: &Summary,
        path: &Path,
        provenance: &Provenance,
    ) -> Result<Option<ScenarioId>, String> {
        let Some((scenario, trace)) = representative(config) else {
            return Ok(None);
        };
        write_scenario_trace(path, &scenario, &trace, Some(provenance))?;
        Ok(Some(scenario.id))
    }

    fn replay(
        self,
        id: &ScenarioId,
        _cut: &SharedCut,
        trace_path: Option<&Path>,
        command: &str,
    ) -> Result<bool, String> {
        let scenario = self.scenario(id);
        let trace = run(&scenario, self).map_err(|error| format!("scenario {id}: {error}"))?;
        let verdict = verdict(&scenario, &trace);
        let violations = verdict.violations;
        let config = &scenario.config;
        println!(
            "scenario {id}: limit {}, period {:?}, max wait {:?}, clock {:?}, origin {}, {} callers, patterns {:?}",
            config.limit,
            config.period,
            config.max_wait,
            scenario.clock.kind(),
            scenario.origin(),
            scenario.callers.len(),
            scenario.patterns,
        );
        if let Some(population) = scenario.keys {
            println!("keys: {population:?}");
        }
        println!(
            "{} calls, {} permits, {} rejections, {} waits, {} interrupts, trace hash {:016x}",
            trace.stats.calls,
            trace.stats.permits,
            trace.stats.rejections,
            trace.stats.waits,
            trace.stats.interrupts,
            trace.trace_hash(),
        );
        if let Some(memory) = verdict.memory {
            println!(
                "keys held: at most {} (the bound then {}), the bound at most {}, checked after {} events",
                memory.most_held, memory.bound_then, memory.most_bound, memory.checked
            );
        }
        if let Some(path) = trace_path {
            write_scenario_trace(path, &scenario, &trace, None)?;
            println!("trace written to {}", path.display());
        }
        for violation in &violations {
            println!("VIOLATION {violation}");
        }
        for (caller, message) in &trace.panics {
            println!("PANIC caller {caller}: {message}");
        }
        if !violations.is_empty() {
            println!("replay: {command} --replay {id}");
        }
        Ok(violations.is_empty())
    }
}

/// A scenario worth charting: an ordinary clock, a limit above one, several windows and
/// waits. The first such among the sweep's (or shard's) own first scenarios, else the first
/// of them, so that the trace is of a scenario the summary counts.
fn representative(config: &Sweep) -> Option<(Scenario, Run)> {
    let (shard, shards) = config.shard;
    let mut fallback = None;
    let own = (0..config.scenarios).filter(|index| index % shards.max(1) == shard);
    for index in own.take(500) {
        let scenario = config.target.scenario(&config.scenario(index));
        let Ok(trace) = run(&scenario, config.target) else {
            continue;
        };
        let stats = trace.stats;
        let limit = u64::from(scenario.config.limit);
        // One limit throughout: the report draws it as a line over the permits per window.
        let good = scenario.clock.kind() == ClockKind::Ordinary
            && scenario.limit_changes.is_empty()
            && (2..=20).contains(&limit)
            && stats.waits >= 3
            && stats.permits >= 4 * limit
            && (20..=400).contains(&scenario.callers.len());
        if good {
            return Some((scenario, trace));
        }
        if fallback.is_none() {
            fallback = Some((scenario, trace));
        }
    }
    fallback
}

/// Writes the trace of `scenario`, headed by the sweep it belongs to (a replay's has none).
fn write_scenario_trace(
    path: &Path,
    scenario: &Scenario,
    trace: &Run,
    sweep: Option<&Provenance>,
) -> Result<(), String> {
    write_trace_file(path, sweep, |out| write_trace(out, scenario, trace))
}
