//! `fixed-window-sim merge`: the summaries of a sweep's shards, run apart (on as many
//! machines), put back together into the summary of the whole sweep.
//!
//! Summaries are grouped by limiter (and planted bug); each group must be every shard of
//! one sweep, once. Counts add up, the largest figures stay the largest, the failures are
//! listed in scenario order: the merged summary is the one the unsharded sweep writes, but
//! for wall time and which failures were shrunk (each shard shrinks its own first few).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use fixed_window_sim::coverage_failure;
use serde_json::{Map, Value, json};

/// Flags of `merge`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The shards' `summary.json` files, of one or more limiters, in any order.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Where to write each limiter's merged summary, as `LIMITER.json` (or
    /// `LIMITER-PLANTED.json`); default `target/sim/merged`.
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,
    /// Fail (exit 1), naming them, if a feature of a merged summary's `coverage` was reached by
    /// no scenario of its sweep.
    #[arg(long)]
    require_coverage: bool,
}

/// A summary read, with the file it came from.
type Read = (PathBuf, Map<String, Value>);

/// Failures whose replay line a merge prints; the merged summary lists them all.
const REPLAYS_PRINTED: usize = 10;

/// The head fields every shard of one sweep shares (`shard.count` aside).
const SAME: [&str; 5] = [
    "limiter",
    "planted",
    "seed",
    "sweep_scenarios",
    "check_determinism",
];

/// Merges the summaries `args` names and writes one per limiter; whether none reports a
/// violation.
///
/// # Errors
///
/// A file that cannot be read or is not a shard's summary; summaries of one limiter that are
/// not every shard of one sweep exactly once; a merged summary that cannot be written.
pub(crate) fn run(args: &Args) -> Result<bool, String> {
    let mut groups: BTreeMap<String, Vec<Read>> = BTreeMap::new();
    for path in &args.files {
        let summary = read(path)?;
        let name = match summary.get("planted").and_then(Value::as_str) {
            Some(planted) => format!("{}-{planted}", text(&summary, "limiter")),
            None => text(&summary, "limiter"),
        };
        groups
            .entry(name)
            .or_default()
            .push((path.clone(), summary));
    }
    let out_dir = args.out_dir.clone().unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .map_or_else(|| PathBuf::from("target"), |root| root.join("target"))
            .join("sim")
            .join("merged")
    });
    let mut clean = true;
    for (name, shards) in groups {
        let merged = merge(shards).map_err(|error| format!("{name}: {error}"))?;
        let violations: u64 = merged
            .get("violations")
            .and_then(Value::as_object)
            .map_or(0, |counts| counts.values().filter_map(Value::as_u64).sum());
        let failures = merged
            .get("failures")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        clean &= violations == 0 && failures == 0;
        fs::create_dir_all(&out_dir)
            .map_err(|error| format!("cannot create {}: {error}", out_dir.display()))?;
        let path = out_dir.join(format!("{name}.json"));
        fs::write(&path, format!("{:#}\n", Value::Object(merged.clone())))
            .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
        println!(
            "{name}: seed {}, {} shards, {} scenarios, {} calls, {violations} violations, {failures} failing scenarios: {}",
            merged.get("seed").unwrap_or(&Value::Null),
            merged.get("merged_from").unwrap_or(&Value::Null),
            merged.get("scenarios").unwrap_or(&Value::Null),
            merged.get("calls").unwrap_or(&Value::Null),
            path.display()
        );
        let replays = merged
            .get("failures")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|failure| failure.get("replay").and_then(Value::as_str));
        for replay in replays.take(REPLAYS_PRINTED) {
            println!("  replay: {replay}");
        }
        if failures > REPLAYS_PRINTED {
            println!(
                "  … and {} more replay lines in {}",
                failures - REPLAYS_PRINTED,
                path.display()
            );
        }
        if args.require_coverage
            && let Some(line) = coverage_failure(&uncovered(&merged))
        {
            println!("{name}: {line}");
            clean = false;
        }
    }
    Ok(clean)
}

/// The features a merged summary's `coverage` counts at zero; a summary without `coverage`
/// (written by an older simulator) has reached none that can be told.
fn uncovered(merged: &Map<String, Value>) -> Vec<String> {
    match merged.get("coverage") {
        Some(Value::Object(counts)) => counts
            .iter()
            .filter(|(_, count)| count.as_u64() == Some(0))
            .map(|(name, _)| name.clone())
            .collect(),
        _ => vec!["any feature (the summaries count no `coverage`)".to_owned()],
    }
}

fn read(path: &Path) -> Result<Map<String, Value>, String> {
    let text = fs::read_to_string(path)
        .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
    let Ok(Value::Object(summary)) = serde_json::from_str(&text) else {
        return Err(format!("{} is not a JSON object", path.display()));
    };
    for field in SAME.iter().chain(&["shard", "scenarios"]) {
        if !summary.contains_key(*field) {
            return Err(format!(
                "{} is not a shard's summary: it has no `{field}` (written by an older simulator?)",
                path.display()
            ));
        }
    }
    if shard(&summary).is_none() {
        return Err(format!(
            "{}: `shard` is not {{\"index\": I, \"count\": N}} with I < N",
            path.display()
        ));
    }
    Ok(summary)
}

fn text(summary: &Map<String, Value>, field: &str) -> String {
    match summary.get(field) {
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// A summary's shard, `(index, count)`, if well formed.
fn shard(summary: &Map<String, Value>) -> Option<(u64, u64)> {
    let shard = summary.get("shard")?;
    let index = shard.get("index")?.as_u64()?;
    let count = shard.get("count")?.as_u64()?;
    (index < count).then_some((index, count))
}

/// The summary of the whole sweep whose shards `shards` are.
fn merge(mut shards: Vec<Read>) -> Result<Map<String, Value>, String> {
    shards.sort_by_key(|(_, summary)| shard(summary));
    let (first_path, first) = &shards[0];
    let count = shard(first).map_or(1, |(_, count)| count);
    for (path, summary) in &shards {
        for field in SAME {
            if summary.get(field) != first.get(field) {
                return Err(format!(
                    "{} and {} are not shards of one sweep: {field} {} against {}",
                    first_path.display(),
                    path.display(),
                    first.get(field).unwrap_or(&Value::Null),
                    summary.get(field).unwrap_or(&Value::Null)
                ));
            }
        }
    }
    let mut seen: BTreeMap<u64, &Path> = BTreeMap::new();
    for (path, summary) in &shards {
        let (index, of) = shard(summary).unwrap_or((0, 1));
        if of != count {
            return Err(format!(
                "{} is shard {index}/{of}, {} shard 0/{count}: one sweep is split one way",
                path.display(),
                first_path.display()
            ));
        }
        if let Some(before) = seen.insert(index, path) {
            return Err(format!(
                "shard {index}/{count} given twice: {} and {}",
                before.display(),
                path.display()
            ));
        }
    }
    // Each index is below `count` and seen once: all are there if there are `count`.
    if u64::try_from(seen.len()) != Ok(count) {
        let missing: Vec<String> = (0..count)
            .filter(|i| !seen.contains_key(i))
            .take(8)
            .map(|i| format!("{i}/{count}"))
            .collect();
        return Err(format!(
            "{} of {count} shards given; missing {}{}",
            seen.len(),
            missing.join(", "),
            if u64::try_from(seen.len() + missing.len()) == Ok(count) {
                ""
            } else {
                ", …"
            }
        ));
    }
    let mut merged = first.clone();
    for (path, summary) in &shards[1..] {
        add(&mut merged, summary).map_err(|error| format!("{}: {error}", path.display()))?;
    }
    finish(&mut merged, count);
    Ok(merged)
}

/// Adds one shard's counts to `merged`.
fn add(merged: &mut Map<String, Value>, summary: &Map<String, Value>) -> Result<(), String> {
    for (field, value) in summary {
        let Some(mine) = merged.get_mut(field) else {
            merged.insert(field.clone(), value.clone());
            continue;
        };
        match (field.as_str(), mine, value) {
            (
                "limiter" | "planted" | "seed" | "sweep_scenarios" | "check_determinism" | "shard"
                | "sweep" | "calls_per_second",
                _,
                _,
            ) => {}
            ("keys", Value::Object(mine), Value::Object(theirs)) => add_keys(mine, theirs)?,
            ("failures", Value::Array(mine), Value::Array(theirs)) => {
                mine.extend(theirs.iter().cloned());
            }
            ("simulated_ns", Value::String(mine), Value::String(theirs)) => {
                let sum = mine
                    .parse::<u128>()
                    .ok()
                    .zip(theirs.parse::<u128>().ok())
                    .and_then(|(a, b)| a.checked_add(b))
                    .ok_or_else(|| format!("simulated_ns `{theirs}` is not a count"))?;
                *mine = sum.to_string();
            }
            ("wall_seconds", mine, theirs) => {
                *mine = json!(mine.as_f64().unwrap_or(0.0) + theirs.as_f64().unwrap_or(0.0));
            }
            (_, Value::Object(mine), Value::Object(theirs)) => add_counts(mine, theirs, field)?,
            (_, mine @ Value::Number(_), theirs @ Value::Number(_)) => {
                *mine = sum(mine, theirs, field)?;
            }
            _ => {}
        }
    }
    Ok(())
}

fn sum(a: &Value, b: &Value, field: &str) -> Result<Value, String> {
    a.as_u64()
        .zip(b.as_u64())
        .and_then(|(a, b)| a.checked_add(b))
        .map(Value::from)
        .ok_or_else(|| format!("`{field}` is not a count, or the sum overflows: {a} and {b}"))
}

/// Adds counts by name (`violations`, `checks`, `faults`, `coverage`, a keyed sweep's
/// populations).
fn add_counts(
    mine: &mut Map<String, Value>,
    theirs: &Map<String, Value>,
    field: &str,
) -> Result<(), String> {
    for (name, count) in theirs {
        let total = match mine.get(name) {
            Some(before) => sum(before, count, &format!("{field}.{name}"))?,
            None => count.clone(),
        };
        mine.insert(name.clone(), total);
    }
    Ok(())
}

/// A keyed sweep's `keys`: sums, and the largest figures (the most keys held with the bound
/// then, taken together).
fn add_keys(mine: &mut Map<String, Value>, theirs: &Map<String, Value>) -> Result<(), String> {
    let of = |object: &Map<String, Value>, field: &str| {
        object.get(field).and_then(Value::as_u64).unwrap_or(0)
    };
    for field in ["drawn", "held_checked", "held_at_bound"] {
        let total = sum(&json!(of(mine, field)), &json!(of(theirs, field)), field)?;
        mine.insert(field.to_owned(), total);
    }
    for field in ["most_in_a_scenario", "largest_bound"] {
        let most = of(mine, field).max(of(theirs, field));
        mine.insert(field.to_owned(), json!(most));
    }
    if of(theirs, "most_held") > of(mine, "most_held") {
        mine.insert("most_held".to_owned(), json!(of(theirs, "most_held")));
        mine.insert("bound_then".to_owned(), json!(of(theirs, "bound_then")));
    }
    if let (Some(Value::Object(populations)), Some(Value::Object(more))) =
        (mine.get_mut("populations"), theirs.get("populations"))
    {
        add_counts(populations, more, "populations")?;
    }
    Ok(())
}

/// Makes the sum of `count` shards the summary of their whole sweep.
fn finish(merged: &mut Map<String, Value>, count: u64) {
    merged.insert("shard".to_owned(), json!({ "index": 0, "count": 1 }));
    merged.insert("merged_from".to_owned(), json!(count));
    // A rate per machine's wall time means nothing once machines are added up.
    merged.remove("calls_per_second");
    if let Some(Value::Array(failures)) = merged.get_mut("failures") {
        failures.sort_by_key(|failure| failure.get("index").and_then(Value::as_u64));
    }
    if let Some(Value::Object(sweep)) = merged.get_mut("sweep") {
        sweep.insert("shard".to_owned(), json!("0/1"));
        if let Some(Value::String(command)) = sweep.get_mut("command") {
            let whole: Vec<&str> = command.split(" --shard ").collect();
            let rest = whole
                .get(1)
                .and_then(|tail| tail.split_once(' '))
                .map_or("", |(_, rest)| rest);
            *command = match whole.first() {
                Some(head) if rest.is_empty() => (*head).to_owned(),
                Some(head) => format!("{head} {rest}"),
                None => command.clone(),
            };
        }
    }
}
