//! The distribution of waits against each call's maximum wait.

use plotters::prelude::*;

use super::{ChartError, SIZE, Svg, draw_legend};
use crate::sim_trace::Call;

/// Width of one bar, as a fraction of `max_wait`.
const BIN: f64 = 0.05;

/// The bottom of the log-scaled count axis: below one, so a bar of one call shows.
const FLOOR: f64 = 0.5;

/// Bars past `max_wait` shown (a wait there is a violation).
const OVER_BINS: usize = 4;

/// A histogram of how long calls that could wait took, as a fraction of their own
/// `max_wait`, one series per outcome, with `max_wait` (1.0) drawn: no call may end past it.
///
/// # Errors
///
/// If plotters cannot draw the chart.
pub fn wait_histogram<'a>(calls: impl IntoIterator<Item = &'a Call>) -> Result<Svg, ChartError> {
    let bins = (1.0 / BIN).round();
    // `bins` is 20.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let bins = bins as usize + OVER_BINS;
    let outcomes = ["permitted", "rejected", "interrupted", "cancelled"];
    let mut counts = vec![vec![0u64; bins]; outcomes.len()];
    for call in calls {
        let Some(series) = outcomes.iter().position(|&o| o == call.outcome.name()) else {
            continue;
        };
        let fraction = call.waited_ns() as f64 / call.max_wait_ns as f64;
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let bin = ((fraction / BIN).floor() as usize).min(bins - 1);
        counts[series][bin] += 1;
    }
    let y_top = counts.iter().flatten().copied().max().unwrap_or(0).max(1) as f64 * 2.0;
    let colours = [
        RGBColor(33, 102, 172),
        RGBColor(230, 120, 20),
        RGBColor(150, 60, 160),
        RGBColor(110, 110, 110),
    ];
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        let x_end = bins as f64 * BIN;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                "time taken by calls that could wait, as a fraction of max_wait",
                ("sans-serif", 16),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..x_end, (FLOOR..y_top).log_scale())?;
        chart
            .configure_mesh()
            .x_desc("call duration / max_wait")
            .y_desc("calls (log scale)")
            .draw()?;
        let width = BIN / outcomes.len() as f64;
        for (series, name) in outcomes.iter().enumerate() {
            let colour = colours[series];
            let offset = series as f64 * width;
            chart
                .draw_series(
                    counts[series]
                        .iter()
                        .enumerate()
                        .filter(|&(_, &c)| c > 0)
                        .map(|(bin, &count)| {
                            let x = bin as f64 * BIN + offset;
                            let count = count as f64;
                            Rectangle::new([(x, FLOOR), (x + width, count)], colour.filled())
                        }),
                )?
                .label(*name)
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled())
                });
        }
        chart
            .draw_series(LineSeries::new(
                [(1.0, FLOOR), (1.0, y_top)],
                RED.stroke_width(2),
            ))?
            .label("max_wait")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], RED.stroke_width(2)));
        draw_legend(&mut chart, SeriesLabelPosition::MiddleRight)?;
        root.present()?;
    }
    Ok(svg)
}
