//! The shared limiter on the command line: its summary's table and counters (faults among
//! them), its replay with `--cut`, and the shrunk scenario a failure prints.

use std::path::Path;

use fixed_window_sim::shared::{
    SharedCut, SharedPlantedBug, SharedScenario, SharedTarget, check_shared, run_shared,
    write_shared_trace,
};
use fixed_window_sim::{Failure, Provenance, ScenarioId, Summary, Sweep};
use serde_json::{Map, Value, json};

use crate::console::{Console, per_second, write_trace_file};

impl Console for SharedTarget {
    fn out_dir(self) -> &'static str {
        "sim-shared"
    }

    #[allow(clippy::cast_precision_loss)]
    fn print_summary(self, summary: &Summary<SharedTarget>, wall: f64, threads: usize) {
        let limiter = self.planted.map_or_else(
            || "the real shared limiter".to_owned(),
            |p| format!("planted bug {p}"),
        );
        println!(
            "fixed-window shared-limiter simulation, seed {}, {limiter}",
            summary.seed
        );
        let counts = &summary.counts;
        let rows = [
            ("scenarios", summary.scenarios),
            ("  healthy", counts.healthy),
            ("client processes", counts.processes),
            ("simulated calls", summary.calls),
            ("permits", summary.permits),
            ("fail-open permits", counts.failed_open),
            ("rejections", summary.rejections),
            ("  local", counts.local_rejections),
            ("unavailable", counts.unavailable),
            ("waits", summary.waits),
            ("scripts run", counts.scripts),
            ("events", summary.events),
        ];
        for (name, value) in rows {
            println!("  {name:<20} {value:>14}");
        }
        println!(
            "  simulated time       {:>14.3} s",
            summary.simulated_ns as f64 / 1e9
        );
        println!("  wall time            {wall:>14.2} s on {threads} threads");
        println!(
            "  calls per second     {:>14.0}",
            per_second(summary.calls, wall)
        );
        println!("  faults injected");
        for (name, count) in &counts.faults {
            println!("    {name:<24} {count:>10}");
        }
        println!("  coverage (scenarios exercising each feature)");
        for (name, count) in summary.coverage.counts() {
            println!("    {name:<36} {count:>10}");
        }
        println!("  violations (scenarios breaking each rule)");
        for (name, count) in &summary.violations {
            println!("    {name:<24} {count:>10}");
        }
    }

    fn summary_fields(self, summary: &Summary<SharedTarget>) -> Map<String, Value> {
        let counts = &summary.counts;
        let fields = json!({
            "healthy": counts.healthy,
            "processes": counts.processes,
            "failed_open": counts.failed_open,
            "local_rejections": counts.local_rejections,
            "unavailable": counts.unavailable,
            "scripts": counts.scripts,
            "faults": counts.faults,
        });
        match fields {
            Value::Object(fields) => fields,
            _ => Map::new(),
        }
    }

    /// The trace of the first failing scenario, else of the sweep's first, headed by the
    /// sweep's provenance.
    fn write_representative(
        self,
        config: &Sweep<SharedTarget>,
        summary: &Summary<SharedTarget>,
        path: &Path,
        provenance: &Provenance,
    ) -> Result<Option<ScenarioId>, String> {
        let id = summary
            .failures
            .first()
            .map_or_else(|| config.scenario(0), |f| f.id.clone());
        write_scenario_trace(
            path,
            &id,
            &SharedCut::default(),
            self.planted,
            Some(provenance),
        )?;
        Ok(Some(id))
    }

    fn print_shrunk(self, failure: &Failure<(ScenarioId, SharedCut)>, command: &str) {
        let Some((id, cut)) = &failure.shrunk else {
            return;
        };
        let small = cut.scenario(id);
        println!(
            "  shrunk to {} processes, {} callers, {} planned faults{}: {command} --replay {id}{}",
            small.processes.len(),
            small.callers.len(),
            small.faults.planned.len(),
            if small.faults.request_loss_ppm + small.faults.reply_loss_ppm == 0 {
                ", no loss"
            } else {
                ""
            },
            if cut.is_empty() {
                String::new()
            } else {
                format!(" --cut {cut}")
            }
        );
    }

    fn replay(
        self,
        id: &ScenarioId,
        cut: &SharedCut,
        trace: Option<&Path>,
        command: &str,
    ) -> Result<bool, String> {
        if !id.cuts.is_empty() {
            return Err(format!(
                "scenario {id}: cuts after `/` apply to the plain and keyed limiters; a shared scenario's are given with --cut"
            ));
        }
        let scenario = cut.scenario(id);
        let run = run_shared(&scenario, self.planted);
        let violations = check_shared(&scenario, &run);
        println!(
            "scenario {id}{}: limit {} per {} µs, {} processes, {} keys ({:?}), {} callers, {}",
            if cut.is_empty() {
                String::new()
            } else {
                format!(" cut {cut}")
            },
            scenario.limit,
            scenario.period_us,
            scenario.processes.len(),
            scenario.keys.len(),
            scenario.key_mode,
            scenario.callers.len(),
            conditions(&scenario)
        );
        let stats = run.stats;
        println!(
            "{} calls, {} permits, {} fail-open permits, {} rejections ({} local), {} unavailable, {} waits, {} scripts run, trace hash {:016x}",
            stats.calls,
            stats.permits,
            stats.failed_open,
            stats.rejections,
            stats.local_rejections,
            stats.unavailable,
            stats.waits,
            stats.scripts,
            run.trace_hash()
        );
        if let Some(path) = trace {
            write_scenario_trace(path, id, cut, self.planted, None)?;
            println!("trace written to {}", path.display());
        }
        for violation in &violations {
            println!("VIOLATION {violation}");
        }
        if !violations.is_empty() {
            let cut = if cut.is_empty() {
                String::new()
            } else {
                format!(" --cut {cut}")
            };
            println!("replay: {command} --replay {id}{cut}");
        }
        Ok(violations.is_empty())
    }
}

/// A scenario's faults and slow links, or "healthy".
fn conditions(scenario: &SharedScenario) -> String {
    let slow: Vec<usize> = (0..scenario.processes.len())
        .filter(|&p| scenario.processes[p].slow_link())
        .collect();
    let mut parts = Vec::new();
    if !scenario.faults.healthy() {
        parts.push(format!(
            "faults: request loss {} ppm, reply loss {} ppm, {:?}",
            scenario.faults.request_loss_ppm,
            scenario.faults.reply_loss_ppm,
            scenario.faults.planned
        ));
    }
    if !slow.is_empty() {
        parts.push(format!(
            "links slower than their timeout: processes {slow:?}"
        ));
    }
    if parts.is_empty() {
        "healthy".to_owned()
    } else {
        parts.join("; ")
    }
}

/// Runs scenario `id`, cut as `cut`, again and writes its trace, headed by the sweep it
/// belongs to (a replay's has none).
fn write_scenario_trace(
    path: &Path,
    id: &ScenarioId,
    cut: &SharedCut,
    planted: Option<SharedPlantedBug>,
    sweep: Option<&Provenance>,
) -> Result<(), String> {
    let scenario = cut.scenario(id);
    let run = run_shared(&scenario, planted);
    write_trace_file(path, sweep, |out| {
        write_shared_trace(out, &scenario, &run, planted.map(SharedPlantedBug::name))
    })
}
