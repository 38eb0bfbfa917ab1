//! `--limiter shared`: the shared limiter's sweep and replay, with the same flags as the
//! in-process limiter's.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use fixed_window_sim::shared::{
    SharedCut, SharedFailure, SharedPlantedBug, SharedScenario, SharedSummary, SharedSweep,
    check_shared, run_shared, sweep_shared, write_shared_trace,
};
use fixed_window_sim::{DETERMINISM, Invariant, ScenarioId};

use crate::summary_file::{self, Head};
use crate::{passes_coverage, progress_bar, unix_seconds};

/// The flags, as read for the shared limiter.
#[derive(Debug)]
pub(crate) struct Options<'a> {
    pub(crate) seed: u64,
    pub(crate) scenarios: u64,
    pub(crate) shard: (u64, u64),
    pub(crate) replay: Option<&'a ScenarioId>,
    pub(crate) cut: SharedCut,
    pub(crate) trace: Option<&'a Path>,
    pub(crate) check_determinism: bool,
    pub(crate) threads: usize,
    pub(crate) planted: Option<SharedPlantedBug>,
    pub(crate) out_dir: Option<PathBuf>,
    /// Fail, naming them, if a feature of the summary's `coverage` was reached by no scenario.
    pub(crate) require_coverage: bool,
}

/// The command that reruns this sweep's limiter, for replay lines.
fn command_line(planted: Option<SharedPlantedBug>) -> String {
    let mut command = "cargo xtask simulate --limiter shared".to_owned();
    if let Some(planted) = planted {
        command.push_str(" --planted ");
        command.push_str(planted.name());
    }
    command
}

fn default_out_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("target"), |root| root.join("target"))
        .join("sim-shared")
}

/// Whether everything passed, or what could not be done.
pub(crate) fn execute(options: &Options<'_>) -> Result<bool, String> {
    let command = command_line(options.planted);
    if let Some(id) = options.replay {
        return replay(id, options, &command);
    }
    let config = SharedSweep {
        seed: options.seed,
        scenarios: options.scenarios,
        shard: options.shard,
        threads: options.threads,
        planted: options.planted,
        check_determinism: options.check_determinism,
    };
    let mine = (0..config.scenarios)
        .filter(|k| k % config.shard.1 == config.shard.0)
        .count() as u64;
    let bar = progress_bar(mine);
    let started_at = unix_seconds();
    let started = std::time::Instant::now();
    let summary = sweep_shared(&config, |n| bar.inc(n));
    let wall = started.elapsed().as_secs_f64();
    bar.finish_and_clear();
    print_summary(&summary, options, wall);
    let out_dir = options.out_dir.clone().unwrap_or_else(default_out_dir);
    write_summary(&out_dir, &summary, options, wall, &command, started_at)?;
    // The trace of the first failing scenario, else of the sweep's first.
    let index = summary
        .failures
        .first()
        .map_or_else(|| config.scenario(0), |f| f.id.clone());
    let trace_path = options
        .trace
        .map_or_else(|| out_dir.join("trace.jsonl"), Path::to_path_buf);
    write_trace_file(&trace_path, &index, &SharedCut::default(), options.planted)?;
    eprintln!(
        "trace of scenario {index} written to {}",
        trace_path.display()
    );
    for failure in &summary.failures {
        let first = if let Some(message) = &failure.panic {
            format!("panic: {message}")
        } else {
            failure.violations.first().map_or_else(
                || "trace differs between runs".to_owned(),
                ToString::to_string,
            )
        };
        println!("FAIL scenario {}: {first}", failure.id);
        println!("  replay: {command} --replay {}", failure.id);
        if let Some((id, cut)) = &failure.shrunk {
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
    }
    let covered = passes_coverage(options.require_coverage, &summary.coverage);
    Ok(summary.failures.is_empty() && covered)
}

fn replay(id: &ScenarioId, options: &Options<'_>, command: &str) -> Result<bool, String> {
    if !id.cuts.is_empty() {
        return Err(format!(
            "scenario {id}: cuts after `/` apply to the plain and keyed limiters; a shared scenario's are given with --cut"
        ));
    }
    let scenario = options.cut.scenario(id);
    let run = run_shared(&scenario, options.planted);
    let violations = check_shared(&scenario, &run);
    println!(
        "scenario {id}{}: limit {} per {} µs, {} processes, {} keys ({:?}), {} callers, {}",
        if options.cut.is_empty() {
            String::new()
        } else {
            format!(" cut {}", options.cut)
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
    if let Some(path) = options.trace {
        write_trace_file(path, id, &options.cut, options.planted)?;
        println!("trace written to {}", path.display());
    }
    for violation in &violations {
        println!("VIOLATION {violation}");
    }
    if !violations.is_empty() {
        let cut = if options.cut.is_empty() {
            String::new()
        } else {
            format!(" --cut {}", options.cut)
        };
        println!("replay: {command} --replay {id}{cut}");
    }
    Ok(violations.is_empty())
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

fn write_trace_file(
    path: &Path,
    id: &ScenarioId,
    cut: &SharedCut,
    planted: Option<SharedPlantedBug>,
) -> Result<(), String> {
    let scenario = cut.scenario(id);
    let run = run_shared(&scenario, planted);
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent)
            .map_err(|error| format!("cannot create {}: {error}", parent.display()))?;
    }
    let file =
        File::create(path).map_err(|error| format!("cannot write {}: {error}", path.display()))?;
    let mut out = BufWriter::new(file);
    write_shared_trace(
        &mut out,
        &scenario,
        &run,
        planted.map(SharedPlantedBug::name),
    )
    .and_then(|()| out.flush())
    .map_err(|error| format!("cannot write {}: {error}", path.display()))
}

#[allow(clippy::cast_precision_loss)]
fn per_second(count: u64, wall: f64) -> f64 {
    if wall > 0.0 { count as f64 / wall } else { 0.0 }
}

#[allow(clippy::cast_precision_loss)]
fn print_summary(summary: &SharedSummary, options: &Options<'_>, wall: f64) {
    let limiter = options.planted.map_or_else(
        || "the real shared limiter".to_owned(),
        |p| format!("planted bug {p}"),
    );
    println!(
        "fixed-window shared-limiter simulation, seed {}, {limiter}",
        summary.seed
    );
    let rows = [
        ("scenarios", summary.scenarios),
        ("  healthy", summary.healthy),
        ("client processes", summary.processes),
        ("simulated calls", summary.calls),
        ("permits", summary.permits),
        ("fail-open permits", summary.failed_open),
        ("rejections", summary.rejections),
        ("  local", summary.local_rejections),
        ("unavailable", summary.unavailable),
        ("waits", summary.waits),
        ("scripts run", summary.scripts),
        ("events", summary.events),
    ];
    for (name, value) in rows {
        println!("  {name:<20} {value:>14}");
    }
    println!(
        "  simulated time       {:>14.3} s",
        summary.simulated_ns as f64 / 1e9
    );
    println!(
        "  wall time            {wall:>14.2} s on {} threads",
        options.threads
    );
    println!(
        "  calls per second     {:>14.0}",
        per_second(summary.calls, wall)
    );
    println!("  faults injected");
    for (name, count) in &summary.faults {
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

fn write_summary(
    dir: &Path,
    summary: &SharedSummary,
    options: &Options<'_>,
    wall: f64,
    command: &str,
    started: u64,
) -> Result<(), String> {
    let (shard, shards) = options.shard;
    let mut object = Head {
        limiter: "shared",
        planted: options.planted.map(SharedPlantedBug::name),
        seed: summary.seed,
        sweep_scenarios: options.scenarios,
        shard: options.shard,
        check_determinism: options.check_determinism,
    }
    .object();
    let failures: Vec<serde_json::Value> = summary
        .failures
        .iter()
        .map(|one| failure(one, command))
        .collect();
    let json = serde_json::json!({
        "scenarios": summary.scenarios,
        "healthy": summary.healthy,
        "processes": summary.processes,
        "calls": summary.calls,
        "permits": summary.permits,
        "failed_open": summary.failed_open,
        "rejections": summary.rejections,
        "local_rejections": summary.local_rejections,
        "unavailable": summary.unavailable,
        "waits": summary.waits,
        "scripts": summary.scripts,
        "events": summary.events,
        "faults": summary.faults,
        "coverage": summary.coverage.counts(),
        "checks": summary.checks.named(&Invariant::SHARED),
        "violations": summary.violations,
        "failures": failures,
        "simulated_ns": summary.simulated_ns.to_string(),
        "wall_seconds": wall,
        "calls_per_second": per_second(summary.calls, wall),
        "sweep": {
            "command": format!(
                "{command} --seed {} --scenarios {}{}{}",
                summary.seed,
                options.scenarios,
                if shards > 1 { format!(" --shard {shard}/{shards}") } else { String::new() },
                if options.check_determinism { " --check-determinism" } else { "" }
            ),
            "shard": format!("{shard}/{shards}"),
            "started": started,
        },
    });
    if let serde_json::Value::Object(fields) = json {
        object.extend(fields);
    }
    summary_file::write(dir, object)
}

/// A failing scenario as the summary lists it: what it broke, and the line that replays it.
fn failure(one: &SharedFailure, command: &str) -> serde_json::Value {
    let mut violations: Vec<String> = one.violations.iter().map(ToString::to_string).collect();
    if let Some(message) = &one.panic {
        violations.push(format!("{}: {message}", Invariant::Panic));
    }
    if one.nondeterministic {
        violations.push(format!("{DETERMINISM}: trace differs between runs"));
    }
    summary_file::failure(
        one.index,
        &one.id.to_string(),
        &violations,
        &format!("{command} --replay {}", one.id),
    )
}
