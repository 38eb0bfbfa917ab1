//! A simulator scenario's permits: per window against the limit, and their instants around
//! window boundaries.

use plotters::prelude::*;

use super::{ChartError, SIZE, Svg, draw_legend};
use crate::sim_trace::{Scenario, window_index};

/// How many consecutive windows the per-window chart shows, from the first with a permit.
pub const WINDOWS_SHOWN: u64 = 60;

/// How many windows the boundary chart spans.
pub const BOUNDARY_WINDOWS: u64 = 4;

/// Permits in each of the scenario's first [`WINDOWS_SHOWN`] windows (counted from the first
/// with a permit, empty ones included), with the limit drawn across: no bar may cross it, and
/// a window after an idle one starts from zero like any other (nothing carries over).
///
/// # Errors
///
/// If plotters cannot draw the chart.
pub fn permits_per_window(scenario: &Scenario) -> Result<Svg, ChartError> {
    let counts = scenario.permits_per_window();
    let first = counts.first().map_or(0, |&(index, _)| index);
    let shown: Vec<(u64, u32)> = counts
        .into_iter()
        .filter(|&(index, _)| index - first < WINDOWS_SHOWN)
        .map(|(index, count)| (index - first, count))
        .collect();
    let y_max = shown
        .iter()
        .map(|&(_, c)| c)
        .max()
        .unwrap_or(0)
        .max(scenario.limit);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!(
                    "permits per window, scenario {} (limit {}, period {} ns)",
                    scenario.id, scenario.limit, scenario.period_ns
                ),
                ("sans-serif", 16),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(0.0..WINDOWS_SHOWN as f64, 0u32..y_max + y_max / 10 + 1)?;
        chart
            .configure_mesh()
            .x_desc(format!("window (index − {first})"))
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_desc("permits")
            .draw()?;
        chart.draw_series(shown.iter().map(|&(index, count)| {
            let colour = if count > scenario.limit {
                RED
            } else {
                RGBColor(33, 102, 172)
            };
            let x = index as f64;
            Rectangle::new([(x + 0.1, 0), (x + 0.9, count)], colour.filled())
        }))?;
        chart
            .draw_series(LineSeries::new(
                [
                    (0.0, scenario.limit),
                    (WINDOWS_SHOWN as f64, scenario.limit),
                ],
                RED.stroke_width(2),
            ))?
            .label("limit")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], RED.stroke_width(2)));
        draw_legend(&mut chart, SeriesLabelPosition::MiddleRight)?;
        root.present()?;
    }
    Ok(svg)
}

/// Each permit's instant (in periods since the first permit's window opened) against its rank
/// within its window, over [`BOUNDARY_WINDOWS`] windows, with the boundaries drawn: a window
/// filled at its end and the next filled at its start put up to twice the limit close
/// together, which the fixed-window rule allows.
///
/// # Errors
///
/// If plotters cannot draw the chart.
pub fn permits_near_boundaries(scenario: &Scenario) -> Result<Svg, ChartError> {
    let grid = scenario.grid();
    let Some(&first_at) = scenario.permits.iter().min() else {
        return Err(ChartError("the scenario has no permits".to_owned()));
    };
    let first_window = window_index(&grid, first_at);
    let first_start = grid.start(u128::from(first_window));
    let mut rank = std::collections::BTreeMap::<u64, u32>::new();
    let mut points = Vec::new();
    let mut sorted = scenario.permits.clone();
    sorted.sort_unstable();
    for at in sorted {
        let index = window_index(&grid, at);
        if index - first_window >= BOUNDARY_WINDOWS {
            break;
        }
        let r = rank.entry(index).or_default();
        *r += 1;
        let x = (u128::from(at) - first_start) as f64 / grid.period() as f64;
        points.push((x, *r));
    }
    let y_max = scenario
        .limit
        .max(rank.values().copied().max().unwrap_or(0));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        let x_end = BOUNDARY_WINDOWS as f64;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!(
                    "permit instants around window boundaries, scenario {}",
                    scenario.id
                ),
                ("sans-serif", 16),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(0.0..x_end, 0u32..y_max + y_max / 10 + 1)?;
        chart
            .configure_mesh()
            .x_desc("time, in periods since the first permit's window opened")
            .y_desc("permit number within its window")
            .draw()?;
        for boundary in 0..=BOUNDARY_WINDOWS {
            let x = boundary as f64;
            chart.draw_series(LineSeries::new(
                [(x, 0), (x, y_max + y_max / 10 + 1)],
                BLACK.mix(0.4),
            ))?;
        }
        chart
            .draw_series(LineSeries::new(
                [(0.0, scenario.limit), (x_end, scenario.limit)],
                RED,
            ))?
            .label("limit")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], RED));
        chart
            .draw_series(
                points
                    .iter()
                    .map(|&p| Circle::new(p, 2, RGBColor(33, 102, 172).filled())),
            )?
            .label("permit")
            .legend(|(x, y)| Circle::new((x + 9, y), 3, RGBColor(33, 102, 172).filled()));
        draw_legend(&mut chart, SeriesLabelPosition::MiddleRight)?;
        root.present()?;
    }
    Ok(svg)
}
