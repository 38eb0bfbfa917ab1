//! A shared-limiter run as JSON Lines: a `shared_scenario` line, then one line per
//! [`SharedRecord`], each tagged with its `type`.

use std::io::{self, Write};

use serde::Serialize;

use crate::shared::limit_changes::LimitChange;
use crate::shared::run::SharedRun;
use crate::shared::scenario::SharedScenario;

/// The first line of a shared trace.
#[derive(Debug, Serialize)]
struct Header<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    id: String,
    limit: u32,
    period_us: u64,
    processes: usize,
    keys: usize,
    callers: usize,
    planted: Option<&'a str>,
    request_loss_ppm: u32,
    reply_loss_ppm: u32,
    planned_faults: usize,
    /// Whether the script reads the time key instead of `TIME`.
    time_key: bool,
    /// The fixed origin, if the processes are configured with one (µs on the server's clock).
    origin: Option<u64>,
    /// The processes configured apart.
    misconfigured: Vec<usize>,
    /// The processes whose link is slower than their timeout.
    slow_links: Vec<usize>,
    /// The changes of the limit the processes make.
    limit_changes: &'a [LimitChange],
}

/// Writes `run` of `scenario` (with the planted bug named `planted`, if any) to `out`.
///
/// # Errors
///
/// Any error writing to `out`.
///
/// # Examples
///
/// ```
/// use fixed_window_sim::ScenarioId;
/// use fixed_window_sim::shared::{SharedScenario, run_shared, write_shared_trace};
///
/// let scenario = SharedScenario::generate(&ScenarioId::seed(5));
/// let mut out = Vec::new();
/// write_shared_trace(&mut out, &scenario, &run_shared(&scenario, None), None)?;
/// let text = String::from_utf8(out)?;
/// assert!(text.starts_with(r#"{"type":"shared_scenario","id":"5","#));
/// assert!(text.lines().any(|line| line.starts_with(r#"{"type":"executed""#)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_shared_trace(
    out: &mut impl Write,
    scenario: &SharedScenario,
    run: &SharedRun,
    planted: Option<&str>,
) -> io::Result<()> {
    let header = Header {
        kind: "shared_scenario",
        id: scenario.id.to_string(),
        limit: scenario.limit,
        period_us: scenario.period_us,
        processes: scenario.processes.len(),
        keys: scenario.keys.len(),
        callers: scenario.callers.len(),
        planted,
        request_loss_ppm: scenario.faults.request_loss_ppm,
        reply_loss_ppm: scenario.faults.reply_loss_ppm,
        planned_faults: scenario.faults.planned.len(),
        time_key: scenario.time_key,
        origin: scenario.origin,
        misconfigured: (0..scenario.processes.len())
            .filter(|&p| scenario.processes[p].misconfigured.is_some())
            .collect(),
        slow_links: (0..scenario.processes.len())
            .filter(|&p| scenario.processes[p].slow_link())
            .collect(),
        limit_changes: &scenario.limit_changes,
    };
    serde_json::to_writer(&mut *out, &header)?;
    out.write_all(b"\n")?;
    for record in &run.records {
        serde_json::to_writer(&mut *out, record)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}
