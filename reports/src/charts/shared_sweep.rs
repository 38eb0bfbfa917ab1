//! The shared limiter's simulated sweep: the faults it injected, per kind, and the scenarios
//! that broke each rule, side by side.

use plotters::prelude::*;

use super::{ChartError, SIZE, Svg};
use crate::sim_summary::SimSummary;

/// The bottom of the log-scaled count axis: below one, so a count of one shows.
const FLOOR: f64 = 0.5;

/// Two panels of horizontal bars from a shared sweep's `summary.json`: on the left the faults
/// injected per kind (log scale), on the right the scenarios breaking each rule (a rule never
/// broken has no bar, and its label says 0).
///
/// # Errors
///
/// If plotters cannot draw the chart.
///
/// # Examples
///
/// ```
/// use fixed_window_reports::SimSummary;
/// use fixed_window_reports::charts::shared_sweep;
///
/// let summary = SimSummary::parse(
///     r#"{"limiter": "shared", "faults": {"reply_lost": 120, "failover": 3}, "violations": {"window_limit": 0}}"#,
/// )?;
/// let svg = shared_sweep(&summary).map_err(|e| e.to_string())?;
/// assert!(svg.contains("reply_lost") && svg.contains("window_limit"));
/// # Ok::<(), String>(())
/// ```
pub fn shared_sweep(summary: &SimSummary) -> Result<Svg, ChartError> {
    let faults = summary.counts("faults");
    let violations = summary.violations.clone();
    let mut svg = String::new();
    {
        let (width, height) = SIZE;
        let root = SVGBackend::with_string(&mut svg, (width, height + 80)).into_drawing_area();
        root.fill(&WHITE)?;
        let root = root.titled(
            "shared-limiter simulation: faults injected and rules broken",
            ("sans-serif", 16),
        )?;
        let (left, right) = root.split_horizontally(width * 11 / 20);
        panel(
            &left,
            &faults,
            "faults injected (log scale)",
            RGBColor(33, 102, 172),
        )?;
        panel(
            &right,
            &violations,
            "scenarios breaking each rule",
            RGBColor(198, 40, 40),
        )?;
        root.present()?;
    }
    Ok(svg)
}

fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    counts: &[(String, u64)],
    description: &str,
    colour: RGBColor,
) -> Result<(), ChartError>
where
    DB::ErrorType: 'static,
{
    let rows = counts.len().max(1);
    let top = counts.iter().map(|(_, n)| *n).max().unwrap_or(0).max(1) as f64 * 3.0;
    let mut chart = ChartBuilder::on(area)
        .margin(8)
        .x_label_area_size(36)
        .y_label_area_size(170)
        .build_cartesian_2d((FLOOR..top).log_scale(), -0.5..rows as f64 - 0.5)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(rows)
        .y_label_formatter(&|y| {
            let row = y.round();
            counts
                .iter()
                .enumerate()
                .find(|(i, _)| (*i as f64 - row).abs() < f64::EPSILON)
                .map_or_else(String::new, |(_, (name, n))| format!("{name} ({n})"))
        })
        .x_desc(description)
        .x_label_formatter(&|x| super::lines::short(*x))
        .draw()?;
    chart.draw_series(counts.iter().enumerate().filter(|(_, (_, n))| *n > 0).map(
        |(row, (_, n))| {
            let y = row as f64;
            Rectangle::new([(FLOOR, y - 0.35), (*n as f64, y + 0.35)], colour.filled())
        },
    ))?;
    Ok(())
}
