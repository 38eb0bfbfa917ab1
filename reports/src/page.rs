//! The HTML page: every section drawn from whatever inputs exist.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use html_escape::encode_text as esc;

use crate::bench_results::{BenchResults, Measurement};
use crate::cas_retries::CasRetries;
use crate::charts::{self, Series, Svg};
use crate::inputs::Inputs;
use crate::sim_summary::SimSummary;
use crate::sim_trace::Trace;
use crate::sweep::{NOISE, Sweep, label};
use crate::targets;

/// The rendered report: the page, with its charts inline, and each chart as its own file.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The page.
    pub html: String,
    /// (file name, SVG) of each chart drawn.
    pub charts: Vec<(String, Svg)>,
    /// Inputs missing and charts that could not be drawn, one sentence each (also on the page).
    pub missing: Vec<String>,
}

impl Report {
    /// Writes `index.html` and the charts' SVG files into `dir`, creating it.
    ///
    /// # Errors
    ///
    /// If the directory or a file cannot be written.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        fs::create_dir_all(dir)?;
        fs::write(dir.join("index.html"), &self.html)?;
        for (name, svg) in &self.charts {
            fs::write(dir.join(name), svg)?;
        }
        Ok(())
    }
}

/// The groups shown in the single-thread table, with what each measures.
const SINGLE_GROUPS: [(&str, &str); 4] = [
    ("permit", "a try_acquire that succeeds"),
    ("rejection", "a try_acquire on a used-up window"),
    (
        "advance",
        "a call that opens the next window (manual clock moved each call)",
    ),
    ("call", "call(op) against the bare operation"),
];

const THREAD_GROUPS: [(&str, &str); 2] = [
    (
        "contention-permit",
        "threads taking permits from one limiter",
    ),
    (
        "contention-rejection",
        "threads hitting one used-up limiter",
    ),
];

struct Builder {
    body: String,
    report: Report,
}

impl Builder {
    fn chart(&mut self, file: &str, drawn: Result<Svg, charts::ChartError>) {
        match drawn {
            Ok(svg) => {
                let _ = write!(
                    self.body,
                    "<figure>{svg}<figcaption><a href=\"{file}\">{file}</a></figcaption></figure>"
                );
                self.report.charts.push((file.to_owned(), svg));
            }
            Err(err) => self.missing(&format!("{file}: {err}")),
        }
    }

    fn missing(&mut self, line: &str) {
        let _ = write!(self.body, "<p class=\"missing\">Missing: {}</p>", esc(line));
        self.report.missing.push(line.to_owned());
    }
}

/// Renders the report from `inputs`: sections whose input is missing say so.
///
/// # Examples
///
/// With nothing measured, the page still renders and names what is missing.
///
/// ```
/// use fixed_window_reports::{Inputs, render};
///
/// let report = render(&Inputs { missing: vec!["no benchmarks".into()], ..Inputs::default() });
/// assert!(report.html.contains("no benchmarks"));
/// assert!(report.charts.is_empty());
/// ```
pub fn render(inputs: &Inputs) -> Report {
    let mut b = Builder {
        body: String::new(),
        report: Report::default(),
    };
    b.body
        .push_str("<h1>fixed-window: benchmarks and simulation</h1>");
    if inputs.missing.is_empty() {
        b.body.push_str("<p>Every input was found.</p>");
    } else {
        b.body.push_str("<h2>Missing inputs</h2><ul>");
        for line in &inputs.missing {
            let _ = write!(b.body, "<li class=\"missing\">{}</li>", esc(line));
            b.report.missing.push(line.clone());
        }
        b.body.push_str("</ul>");
    }
    match &inputs.bench {
        Some(results) => bench_sections(&mut b, results, inputs.cas_retries.as_ref()),
        None => b.body.push_str("<h2>Benchmarks</h2><p class=\"missing\">No benchmark results: run <code>cargo xtask bench</code>.</p>"),
    }
    b.body.push_str("<h2>Simulator</h2>");
    simulator_throughput_section(&mut b, inputs.bench.as_ref());
    match &inputs.summary {
        Some(summary) => summary_section(&mut b, summary),
        None => b.body.push_str(
            "<p class=\"missing\">No simulator summary: run <code>cargo xtask simulate</code>.</p>",
        ),
    }
    match &inputs.trace {
        Some(trace) => trace_section(&mut b, trace),
        None => b.body.push_str(
            "<p class=\"missing\">No simulator trace: run <code>cargo xtask simulate</code>.</p>",
        ),
    }
    b.report.html = format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>fixed-window report</title><style>{STYLE}</style></head><body>{}</body></html>\n",
        b.body
    );
    b.report
}

const STYLE: &str = "body{font-family:sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#222}\
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}\
th:first-child,td:first-child{text-align:left}.met{color:#1a7f37}.miss{color:#c62828;font-weight:bold}\
.missing{color:#8a5a00}figure{margin:1em 0}figcaption{font-size:.8em;color:#666}.best{font-weight:bold;background:#e6f4ea}";

fn ns(value: f64) -> String {
    if value < 10.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.1}")
    }
}

fn bench_sections(b: &mut Builder, results: &BenchResults, retries: Option<&CasRetries>) {
    b.body.push_str("<h2>Targets (ratios within one run)</h2><p>Single-threaded figures are CPU time, contention figures wall time.</p><table><tr><th>comparison</th><th>ours ns</th><th>peer ns</th><th>ratio</th><th>target</th><th>verdict</th></tr>");
    for checked in targets::check(results) {
        let target = checked.target;
        let (ours, peer, ratio, verdict) = match (checked.medians, checked.ratio(), checked.met()) {
            (Some((o, p)), Some(r), None) => {
                (ns(o), ns(p), format!("{r:.2}×"), "reference".to_owned())
            }
            (Some((o, p)), Some(r), Some(met)) => {
                let verdict = if met {
                    "<span class=\"met\">met</span>".to_owned()
                } else {
                    format!(
                        "<span class=\"miss\">missed by {:.0} %</span>",
                        (r / target.limit - 1.0) * 100.0
                    )
                };
                (ns(o), ns(p), format!("{r:.2}×"), verdict)
            }
            _ => (
                "–".into(),
                "–".into(),
                "–".into(),
                "<span class=\"missing\">not measured</span>".into(),
            ),
        };
        let _ = write!(
            b.body,
            "<tr><td>{}</td><td>{ours}</td><td>{peer}</td><td>{ratio}</td><td>{}</td><td>{verdict}</td></tr>",
            esc(target.what),
            if target.is_target {
                format!("≤ {:.1}×", target.limit)
            } else {
                "–".to_owned()
            }
        );
    }
    b.body.push_str("</table>");

    b.body.push_str("<h2>Single-threaded operations</h2><p>Median ns per operation, in the benchmark thread's CPU time (on a shared machine, wall time would mostly measure the other load). <code>system</code>: our <code>SystemClock</code> (the TSC through quanta); <code>std</code>: ours on std's <code>Instant</code>; <code>default</code>: governor's quanta clock; <code>manual</code>/<code>fake</code>: clocks that only move when told.</p><table><tr><th>group</th><th>limiter-clock</th><th>median ns</th></tr>");
    for (group, about) in SINGLE_GROUPS {
        let rows: Vec<&Measurement> = results.group(group).collect();
        if rows.is_empty() {
            let _ = write!(
                b.body,
                "<tr><td>{group}</td><td colspan=\"2\" class=\"missing\">not measured</td></tr>"
            );
        }
        for m in rows {
            let _ = write!(
                b.body,
                "<tr><td title=\"{}\">{}</td><td>{}</td><td>{}</td></tr>",
                esc(about),
                esc(group),
                esc(&m.function),
                ns(m.median_ns)
            );
        }
    }
    b.body.push_str("</table>");

    b.body.push_str("<h2>Contention</h2><p>Each thread makes one attempt per round; ns per attempt is the time of one round, throughput counts every thread's attempts. The machine measured has two cores, so 4 and 8 threads are oversubscribed.</p>");
    for (group, about) in THREAD_GROUPS {
        let series = thread_series(results, group, |m| m.median_ns);
        if series.is_empty() {
            b.missing(&format!("{group}: not measured"));
            continue;
        }
        b.chart(
            &format!("{group}-ns.svg"),
            charts::lines(
                &format!("ns per attempt: {about}"),
                "threads",
                "ns per attempt",
                &series,
            ),
        );
        let throughput = thread_series(results, group, Measurement::per_second);
        b.chart(
            &format!("{group}-throughput.svg"),
            charts::lines(
                &format!("throughput: {about}"),
                "threads",
                "attempts per second",
                &throughput,
            ),
        );
    }
    retries_section(b, retries);
    sweep_section(b, &Sweep::from_results(results));
}

fn retries_section(b: &mut Builder, counts: Option<&CasRetries>) {
    b.body.push_str("<h3>CAS retries per attempt</h3>");
    let Some(counts) = counts else {
        b.missing("CAS retries per attempt: no counts (see the missing inputs above)");
        return;
    };
    let _ = write!(
        b.body,
        "<p>Ours only, with <code>Backoff::new({})</code>, counted by the limiter itself (feature <code>stats</code>): every compare-and-set lost to another caller and retried. Neither peer keeps such a count (the mutex has no compare-and-set to lose).</p><table><tr><th>threads</th><th>attempts</th><th>retries</th><th>retries per attempt</th></tr>",
        counts.backoff_spins
    );
    for p in &counts.points {
        let _ = write!(
            b.body,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>",
            p.threads, p.attempts, p.retries
        );
        match counts.per_attempt().iter().find(|(t, _)| *t == p.threads) {
            Some((_, ratio)) => {
                let _ = write!(b.body, "{ratio:.4}</td></tr>");
            }
            None => b.body.push_str("–</td></tr>"),
        }
    }
    b.body.push_str("</table>");
    let series = [Series {
        name: format!("ours (Backoff::new({}))", counts.backoff_spins),
        points: counts
            .per_attempt()
            .into_iter()
            .map(|(threads, ratio)| (f64::from(threads), ratio))
            .collect(),
    }];
    b.chart(
        "cas-retries.svg",
        charts::lines(
            "CAS retries per attempt",
            "threads",
            "retries per attempt",
            &series,
        ),
    );
}

fn thread_series(
    results: &BenchResults,
    group: &str,
    y: impl Fn(&Measurement) -> f64,
) -> Vec<Series> {
    let mut series: Vec<Series> = Vec::new();
    for m in results.group(group) {
        let Some(threads) = m.parameter.as_deref().and_then(|p| p.parse::<f64>().ok()) else {
            continue;
        };
        let point = (threads, y(m));
        match series.iter_mut().find(|s| s.name == m.function) {
            Some(s) => s.points.push(point),
            None => series.push(Series {
                name: m.function.clone(),
                points: vec![point],
            }),
        }
    }
    for s in &mut series {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    series
}

fn sweep_section(b: &mut Builder, sweep: &Sweep) {
    b.body.push_str("<h2>Backoff sweep</h2>");
    let Some(recommendation) = sweep.recommend() else {
        b.missing("backoff-sweep: not measured");
        return;
    };
    b.chart("backoff-sweep.svg", charts::sweep_heatmap(sweep));
    b.body.push_str("<table><tr><th>threads \\ spins</th>");
    for &spins in &sweep.spins {
        let _ = write!(b.body, "<th>{}</th>", label(spins));
    }
    b.body.push_str("</tr>");
    for &threads in &sweep.threads {
        let best = sweep.best_at(threads);
        let _ = write!(b.body, "<tr><td>{threads}</td>");
        for &spins in &sweep.spins {
            match sweep.get(spins, threads) {
                Some(v) if Some(v) == best => {
                    let _ = write!(b.body, "<td class=\"best\">{}</td>", ns(v));
                }
                Some(v) => {
                    let _ = write!(b.body, "<td>{}</td>", ns(v));
                }
                None => b.body.push_str("<td>–</td>"),
            }
        }
        b.body.push_str("</tr>");
    }
    b.body.push_str("<tr><td>score</td>");
    for &spins in &sweep.spins {
        match recommendation.scores.iter().find(|(s, _)| *s == spins) {
            Some((_, score)) => {
                let _ = write!(b.body, "<td>{score:.3}</td>");
            }
            None => b.body.push_str("<td>–</td>"),
        }
    }
    b.body.push_str("</tr></table>");
    let default = fixed_window::Backoff::SPIN_LIMIT;
    let threads_list = |list: &[u32]| {
        if list.is_empty() {
            "none".to_owned()
        } else {
            list.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    let verdict = if recommendation.best == Some(default) {
        format!("The data says: keep the default ({default} spins); it scores best.")
    } else if recommendation.change_default() {
        format!(
            "The data says: change the default from {default} to {} spins.",
            label(recommendation.best)
        )
    } else {
        format!(
            "The data says: keep the default ({default} spins); the best setting does not beat it clearly enough (by more than {:.0} % in score, with confidence intervals apart at half the thread counts or more and behind at none).",
            (NOISE - 1.0) * 100.0
        )
    };
    let _ = write!(
        b.body,
        "<p>Score: the geometric mean over thread counts of each setting's time relative to the fastest at that count (1 = fastest everywhere). Best <code>Backoff::new({})</code> (score {:.3}); the default <code>Backoff::SPIN_LIMIT</code> = {default} scores {}. The best is faster than the default, with 95 % confidence intervals apart, at {} threads, and slower at {}. <strong>{}</strong></p>",
        recommendation
            .best
            .map_or_else(|| "u32::MAX".to_owned(), |n| n.to_string()),
        recommendation.best_score(),
        recommendation
            .default_score
            .map_or_else(|| "(not measured)".to_owned(), |v| format!("{v:.3}")),
        threads_list(&recommendation.faster_at),
        threads_list(&recommendation.slower_at),
        esc(&verdict)
    );
}

/// The simulator's benchmarks (`sim/benches/throughput.rs`): function, parameter, what one
/// element is, and what the row measures.
const SIMULATOR_BENCHES: [(&str, &str, &str, &str); 4] = [
    (
        "run",
        "drawn",
        "calls",
        "the scenarios as the sweep draws them",
    ),
    (
        "run",
        "asynchronous",
        "calls",
        "every caller asynchronous, nothing panicking",
    ),
    (
        "run_events",
        "asynchronous",
        "events",
        "the same, in events",
    ),
    (
        "sweep",
        "drawn",
        "calls",
        "draw, run and check: a sweep's whole work",
    ),
];

/// Simulated calls per second per core the simulator should reach.
const SIMULATOR_TARGET: f64 = 5e6;

fn simulator_throughput_section(b: &mut Builder, results: Option<&BenchResults>) {
    b.body.push_str("<h3>Throughput</h3><p>The default sweep's first 1,000 scenarios, each drawn just before its run, in the benchmark thread's CPU time (<code>cargo bench -p fixed-window-sim --bench throughput</code>, part of <code>cargo xtask bench</code>). Target for runs: 5 M simulated calls per second per core.</p><table><tr><th>bench</th><th>what</th><th>median ms</th><th>per second, one core</th></tr>");
    for (function, parameter, unit, about) in SIMULATOR_BENCHES {
        let _ = write!(
            b.body,
            "<tr><td>{function}/{parameter}</td><td>{}</td>",
            esc(about)
        );
        match results.and_then(|results| results.get_with("simulator", function, parameter)) {
            Some(m) => {
                let rate = m.per_second();
                let verdict = match (function, unit) {
                    ("run", "calls") if rate >= SIMULATOR_TARGET => " class=\"met\"",
                    ("run", "calls") => " class=\"miss\"",
                    _ => "",
                };
                let _ = write!(
                    b.body,
                    "<td>{:.1}</td><td{verdict}>{:.2} M {unit}</td></tr>",
                    m.median_ns / 1e6,
                    rate / 1e6
                );
            }
            None => b
                .body
                .push_str("<td colspan=\"2\" class=\"missing\">not measured</td></tr>"),
        }
    }
    b.body.push_str("</table>");
}

fn summary_section(b: &mut Builder, summary: &SimSummary) {
    b.body
        .push_str("<table><tr><th>summary</th><th>value</th></tr>");
    for (key, value) in &summary.fields {
        let _ = write!(
            b.body,
            "<tr><td>{}</td><td>{}</td></tr>",
            esc(key),
            esc(value)
        );
    }
    for (invariant, count) in &summary.violations {
        let class = if *count == 0 { "met" } else { "miss" };
        let _ = write!(
            b.body,
            "<tr><td>violations: {}</td><td class=\"{class}\">{count}</td></tr>",
            esc(invariant)
        );
    }
    b.body.push_str("</table>");
}

fn trace_section(b: &mut Builder, trace: &Trace) {
    let _ = write!(
        b.body,
        "<p>Trace: {} scenarios; {} lines of other types skipped; {} lines unreadable.</p>",
        trace.scenarios.len(),
        trace.skipped_lines,
        trace.malformed_lines
    );
    match trace.busiest() {
        Some(scenario) => {
            let over: Vec<u64> = scenario
                .permits_per_window()
                .into_iter()
                .filter(|&(_, count)| count > scenario.limit)
                .map(|(index, _)| index)
                .collect();
            let _ = write!(
                b.body,
                "<p>Scenario {} (the one with the most permits): {} permits in {} windows; {} windows over the limit of {}{}.</p>",
                esc(&scenario.id),
                scenario.permits.len(),
                scenario.permits_per_window().len(),
                over.len(),
                scenario.limit,
                if over.is_empty() {
                    String::new()
                } else {
                    format!(" (first: window {})", over[0])
                }
            );
            b.chart(
                "permits-per-window.svg",
                charts::permits_per_window(scenario),
            );
            b.chart(
                "permits-near-boundaries.svg",
                charts::permits_near_boundaries(scenario),
            );
        }
        None => b.missing("permits per window: the trace has no scenario with permits"),
    }
    let waiting: Vec<_> = trace.waiting_calls().collect();
    if waiting.is_empty() {
        b.missing("wait times: the trace has no call with a non-zero max_wait");
    } else {
        let over = waiting
            .iter()
            .filter(|c| c.waited_ns() > c.max_wait_ns)
            .count();
        let _ = write!(
            b.body,
            "<p>{} calls could wait; {over} took longer than their max_wait.</p>",
            waiting.len()
        );
        b.chart(
            "wait-times.svg",
            charts::wait_histogram(waiting.iter().copied()),
        );
    }
}
