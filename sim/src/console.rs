//! The command line's sweep and replay, one path for every family of limiters: what differs
//! between them (the summary's table and counters, a replay's description, which trace to
//! write) is each family's [`Console`].

use std::fs::{self, File};
use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};

use fixed_window_sim::shared::SharedCut;
use fixed_window_sim::{
    Coverage, Failure, Family, Provenance, ScenarioId, Summary, Sweep, coverage_failure, sweep,
};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{Map, Value};

use crate::Shard;
use crate::summary_file;

mod plain;
mod shared;

/// How the command line shows a family's sweeps and replays.
pub(crate) trait Console: Family {
    /// Where its sweeps write `summary.json` and `trace.jsonl` unless told, under the
    /// workspace's `target`; the report and `cargo xtask` read them there.
    fn out_dir(self) -> &'static str;

    /// Prints the summary's table of counts.
    fn print_summary(self, summary: &Summary<Self>, wall: f64, threads: usize);

    /// The summary file's fields only this family writes.
    fn summary_fields(self, summary: &Summary<Self>) -> Map<String, Value>;

    /// Writes the trace of the sweep's representative scenario to `path`, headed by
    /// `provenance` (see [`write_trace_file`]); which scenario it was, if any.
    ///
    /// # Errors
    ///
    /// What could not be written.
    fn write_representative(
        self,
        config: &Sweep<Self>,
        summary: &Summary<Self>,
        path: &Path,
        provenance: &Provenance,
    ) -> Result<Option<ScenarioId>, String>;

    /// Prints what else replays `failure` than its replay line, if anything.
    fn print_shrunk(self, _failure: &Failure<Self::Shrunk>, _command: &str) {}

    /// Replays scenario `id` (cut as `cut`, for a family whose shrink cuts more than callers),
    /// printing what it was and what broke, writing its trace to `trace` if given; whether it
    /// passed.
    ///
    /// # Errors
    ///
    /// A scenario that cannot be replayed, or a trace that cannot be written.
    fn replay(
        self,
        id: &ScenarioId,
        cut: &SharedCut,
        trace: Option<&Path>,
        command: &str,
    ) -> Result<bool, String>;
}

/// The flags, as every family reads them.
#[derive(Debug)]
pub(crate) struct Options<'a> {
    pub(crate) seed: u64,
    pub(crate) scenarios: u64,
    pub(crate) shard: Shard,
    pub(crate) replay: Option<&'a ScenarioId>,
    pub(crate) cut: SharedCut,
    pub(crate) trace: Option<&'a Path>,
    pub(crate) check_determinism: bool,
    pub(crate) threads: usize,
    pub(crate) out_dir: Option<PathBuf>,
    /// Fail, naming them, if a feature of the summary's `coverage` was reached by no scenario.
    pub(crate) require_coverage: bool,
}

/// Sweeps or replays `target`'s limiter as `options` say: whether everything passed, or
/// what could not be done.
pub(crate) fn execute<F: Console>(options: &Options<'_>, target: F) -> Result<bool, String> {
    let command = target.command();
    if let Some(id) = options.replay {
        return target.replay(id, &options.cut, options.trace, &command);
    }
    let config = Sweep {
        seed: options.seed,
        scenarios: options.scenarios,
        shard: (options.shard.index, options.shard.count.get()),
        threads: options.threads,
        target,
        check_determinism: options.check_determinism,
    };
    let out_dir = options
        .out_dir
        .clone()
        .unwrap_or_else(|| target_dir().join(target.out_dir()));
    let bar = progress_bar(options.shard.scenarios_of(config.scenarios));
    let provenance = config.provenance(&command, provenance_name(target), unix_seconds());
    let started = std::time::Instant::now();
    let summary = sweep(&config, |n| bar.inc(n));
    let wall = started.elapsed().as_secs_f64();
    bar.finish_and_clear();
    target.print_summary(&summary, wall, options.threads);
    summary_file::write(
        &out_dir,
        summary_object(&config, &summary, &provenance, &command, wall),
    )?;
    let trace_path = options
        .trace
        .map_or_else(|| out_dir.join("trace.jsonl"), Path::to_path_buf);
    if let Some(id) = target.write_representative(&config, &summary, &trace_path, &provenance)? {
        eprintln!("trace of scenario {id} written to {}", trace_path.display());
    }
    for failure in &summary.failures {
        println!("FAIL scenario {}: {}", failure.id, failure.first());
        println!("  replay: {command} --replay {}", target.replay_id(failure));
        target.print_shrunk(failure, &command);
    }
    let covered = passes_coverage(options.require_coverage, &summary.coverage);
    Ok(summary.failures.is_empty() && covered)
}

/// A sweep's `summary.json`: the head and counts every family writes, then the family's own.
fn summary_object<F: Console>(
    config: &Sweep<F>,
    summary: &Summary<F>,
    provenance: &Provenance,
    command: &str,
    wall: f64,
) -> Map<String, Value> {
    let mut object = summary_file::object(config, summary, provenance, command, wall);
    object.extend(config.target.summary_fields(summary));
    object
}

/// The subject's name in a sweep's provenance: `real`, `keyed`, or a planted bug's.
fn provenance_name(target: impl Family) -> &'static str {
    target.planted().unwrap_or(match target.limiter() {
        "plain" => "real",
        other => other,
    })
}

/// Whether a sweep passes the coverage gate: always unless `required`; if not, it prints the
/// features no scenario reached.
fn passes_coverage(required: bool, coverage: &Coverage) -> bool {
    let uncovered = required
        .then(|| coverage_failure(&coverage.missing()))
        .flatten();
    if let Some(line) = &uncovered {
        println!("{line}");
    }
    uncovered.is_none()
}

/// The workspace's `target` directory.
fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("target"), |root| root.join("target"))
}

fn progress_bar(length: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::with_draw_target(Some(length), ProgressDrawTarget::hidden());
    }
    let bar = ProgressBar::new(length);
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} scenarios ({per_sec}, eta {eta})",
    ) {
        bar.set_style(style);
    }
    bar
}

/// Seconds since the Unix epoch now: when a sweep started, for its summary and trace.
fn unix_seconds() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// Per second of `wall`.
#[allow(clippy::cast_precision_loss)]
pub(crate) fn per_second(count: u64, wall: f64) -> f64 {
    if wall > 0.0 { count as f64 / wall } else { 0.0 }
}

/// Writes a trace file at `path`: the `{"type":"sweep",…}` line of `sweep` first if it is a
/// sweep's representative trace (a replay's has none), then what `write` writes. Every
/// family's trace file opens this way, so that a reader can tell whether a trace and a
/// summary come from the same sweep.
///
/// # Errors
///
/// What could not be created or written, naming the file.
fn write_trace_file(
    path: &Path,
    sweep: Option<&Provenance>,
    write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
) -> Result<(), String> {
    write_file(path, |out| {
        if let Some(sweep) = sweep {
            writeln!(
                out,
                "{}",
                sweep.trace_line().map_err(std::io::Error::other)?
            )?;
        }
        write(out)
    })
}

/// Creates `path` (and its directory) and lets `write` fill it.
///
/// # Errors
///
/// What could not be created or written, naming the file.
fn write_file(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
) -> Result<(), String> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent)
            .map_err(|error| format!("cannot create {}: {error}", parent.display()))?;
    }
    let file =
        File::create(path).map_err(|error| format!("cannot write {}: {error}", path.display()))?;
    let mut out = BufWriter::new(file);
    write(&mut out)
        .and_then(|()| out.flush())
        .map_err(|error| format!("cannot write {}: {error}", path.display()))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use fixed_window_sim::shared::SharedTarget;
    use fixed_window_sim::{Sweep, Target, sweep};
    use serde_json::Value;

    use super::{Console, provenance_name, summary_object};

    /// The fields every summary opens with, whatever its limiter: `merge` and the report
    /// read them by these names.
    const HEAD: [&str; 7] = [
        "limiter",
        "planted",
        "seed",
        "sweep_scenarios",
        "shard",
        "check_determinism",
        "sweep",
    ];

    /// The summary a two-scenario sweep of `target` writes: which of [`HEAD`] it has, and
    /// the fields of its `sweep` object.
    fn head(target: impl Console) -> (BTreeSet<String>, BTreeSet<String>, Value) {
        let config = Sweep {
            seed: 7,
            scenarios: 2,
            shard: (0, 1),
            threads: 1,
            target,
            check_determinism: false,
        };
        let command = target.command();
        let provenance = config.provenance(&command, provenance_name(target), 0);
        let summary = sweep(&config, |_| {});
        let object = summary_object(&config, &summary, &provenance, &command, 1.0);
        let head = object
            .keys()
            .filter(|key| HEAD.contains(&key.as_str()))
            .cloned()
            .collect();
        let sweep = object.get("sweep").cloned().unwrap_or(Value::Null);
        let fields = sweep
            .as_object()
            .map(|fields| fields.keys().cloned().collect())
            .unwrap_or_default();
        (head, fields, sweep)
    }

    #[test]
    fn every_limiters_summary_opens_with_the_same_head_and_provenance() {
        let (plain_head, plain_sweep, plain) = head(Target::Real);
        let (shared_head, shared_sweep, shared) = head(SharedTarget { planted: None });
        let all: BTreeSet<String> = HEAD.iter().map(|&key| key.to_owned()).collect();
        assert_eq!(plain_head, all);
        assert_eq!(shared_head, all);
        assert_eq!(shared_sweep, plain_sweep);
        // Every field of a `Provenance`, the trace's first line's among them.
        for field in [
            "seed",
            "scenarios",
            "shard",
            "limiter",
            "command",
            "started",
        ] {
            assert!(shared_sweep.contains(field), "{field}: {shared}");
        }
        assert_eq!(
            (&plain["limiter"], &shared["limiter"]),
            (&"real".into(), &"shared".into())
        );
        assert_eq!(shared["seed"], 7);
        assert_eq!(shared["scenarios"], 2);
    }
}
